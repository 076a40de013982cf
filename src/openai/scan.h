/* scan.h — the allocation-free fast path of chunk decoding: a strict JSON
 * scanner that reads only what timing needs from one stream event.
 *
 * It handles well-formed chunks as every server sends them and declines
 * anything unusual (escaped keys, "\u0000", lone surrogates, control
 * characters, deep nesting, error objects, non-objects), which chunk_decode
 * then hands to cJSON. Differential tests and a fuzz target check that both
 * paths decode every input alike (tests/unit/test_scan.c, fuzz/). */
#ifndef ANVIL_OPENAI_SCAN_H
#define ANVIL_OPENAI_SCAN_H

#include <stddef.h>

#include "openai/chunk.h"

/* Decodes data (len bytes, need not be NUL-terminated) into *out as
 * chunk_decode would. Returns 0 when it did, or -1 when the input must go to
 * cJSON (*out is then unspecified). Never allocates. */
int chunk_scan(const char *data, size_t len, struct chunk *out);

#endif
