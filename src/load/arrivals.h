/* arrivals.h — when each request of an open-loop run is due. */
#ifndef ANVIL_LOAD_ARRIVALS_H
#define ANVIL_LOAD_ARRIVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fills offsets_ns[0..n) with each request's due time after the start, in
 * ns: the first at 0, then gaps drawn from a gamma distribution with shape
 * `burstiness` and mean 1/rate seconds — vLLM's --request-rate/--burstiness
 * (burstiness 1 is a Poisson process; larger is smoother; INFINITY gives
 * constant gaps). With fixed_span the gaps are then scaled so that the n
 * arrivals span exactly (n − 1)/rate: the offered rate is the target, not a
 * sample of it (for burstiness 1, a Poisson process conditioned on its
 * count); duration mode, which sends for a time rather than a count, does
 * without. rate =
 * INFINITY puts every request at 0. Deterministic for a given seed (GSL's
 * MT19937 and gsl_ran_gamma). Returns 0, or -1 when rate ≤ 0, burstiness ≤ 0
 * or memory runs out. */
int arrivals_schedule(double rate, double burstiness, uint64_t seed, bool fixed_span,
                      int64_t *offsets_ns, size_t n);

#endif
