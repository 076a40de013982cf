/* prompt.h — synthetic prompts of a planned token length. Every prompt starts
 * with a prefix unique to (run salt, request) so that no request is served
 * from another's prefix cache; the filler after it is the same seeded word
 * sequence for every request, so every prompt has the same token count. */
#ifndef ANVIL_WORKLOAD_PROMPT_H
#define ANVIL_WORKLOAD_PROMPT_H

#include <stdint.h>

#include "core/buf.h"

/* Width of the zero-padded request index in a prompt's prefix: every
 * prompt of a run has the same length, and a body built for one request can
 * be turned into another's by rewriting these digits. */
#define PROMPT_INDEX_DIGITS 9

/* Appends the prompt of request `index` to out: "<salt hex>-<index>:" then
 * `words` filler words drawn from a fixed English vocabulary by `seed`.
 * salt is the per-run random value. Returns 0, or -1 when out is full. */
int prompt_build(struct buf *out, uint64_t salt, long index, long words, uint64_t seed);

/* A fresh random 64-bit value (from getrandom), for the per-run salt. */
uint64_t prompt_random_salt(void);

#endif
