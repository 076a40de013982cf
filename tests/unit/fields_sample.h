/* fields_sample.h — round-trip tests generated from an artifact's field
 * table: every row filled with a value of its own, written, read back and
 * compared row by row, so a row the writer or the reader skips fails. */
#ifndef ANVIL_TESTS_FIELDS_SAMPLE_H
#define ANVIL_TESTS_FIELDS_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

#include "artifact/fields.h"

/* Fills every row of t in s (zeroed first) with a distinct value drawn
 * from seed: numbers seed + row + 0.25, whole numbers seed + row, strings
 * "sK", two strings, present objects, arrays of two elements; custom rows
 * are left as zero. Free with fields_free. */
void fields_sample_fill(const struct field_table *t, void *s, int seed);

/* Whether a and b hold the same value in every row of t but custom and
 * write-never rows (NaN equals NaN); when not, the first differing path is
 * written to why (cap bytes). */
bool fields_sample_equal(const struct field_table *t, const void *a, const void *b, char *why, size_t cap);

/* fill → fields_to_json → fields_read → equal, and the JSON written again
 * from what was read is the same JSON. Returns true, or false with why. */
bool fields_sample_round_trip(const struct field_table *t, char *why, size_t cap);

#endif
