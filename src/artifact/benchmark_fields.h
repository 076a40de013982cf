/* benchmark_fields.h — the field tables of the benchmark/v1 artifact
 * (benchmark_io.c), for the tests and docs that walk every one of them. */
#ifndef ANVIL_ARTIFACT_BENCHMARK_FIELDS_H
#define ANVIL_ARTIFACT_BENCHMARK_FIELDS_H

#include <stddef.h>

#include "artifact/fields.h"

/* The document's top level (struct benchmark); its rows reach every
 * nested table. */
extern const struct field_table benchmark_fields;

/* Every table of the artifact, the top level first; *n gets how many.
 * Static storage: the caller neither frees nor changes them. */
const struct field_table *const *benchmark_field_tables(size_t *n);

#endif
