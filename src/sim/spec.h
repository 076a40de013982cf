/* spec.h — speculative decoding acceptance: how many of a step's draft
 * tokens the target model accepts, drawn reproducibly from a hash. */
#ifndef ANVIL_SIM_SPEC_H
#define ANVIL_SIM_SPEC_H

#include <stdint.h>

#include "sim/profile.h"

/* The number of the k (<= SIM_SPEC_MAX) draft tokens of one decode step
 * that are accepted: drafts are verified in order and the first rejection
 * ends the run (rejection sampling, as in vLLM). Draft position i is
 * accepted, given positions 0..i-1 were, with probability
 * accept[i] / accept[i-1] (accept[-1] = 1), so position i's unconditional
 * rate is accept[i] — what vLLM's per-position counters measure. The draw
 * for position i is a pure function of (key, step, i): same --seed, same
 * request, same step → same result. Returns 0..k. */
int sim_spec_accepted(const double accept[SIM_SPEC_MAX], int k, uint64_t key, uint64_t step);

#endif
