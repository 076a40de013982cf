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

/* A staged ramp (vLLM's --ramp-up-strategy; anvil's --ramp-up-s). */
enum ramp_strategy { RAMP_NONE, RAMP_LINEAR, RAMP_EXPONENTIAL };

struct load_ramp {
    enum ramp_strategy strategy;    /* open loop: how the rate goes from start_rps to end_rps; RAMP_NONE = no rate ramp */
    double start_rps, end_rps;      /* requests/s at the first and the last request */
    double ramp_up_s;               /* closed loop: the streams start over this many seconds; 0 = all at once */
};

/* The rate (requests/s) at request i of n under the ramp, vLLM's
 * get_current_request_rate: with progress p = i / max(n − 1, 1), linear
 * start + (end − start)·p, exponential start·(end/start)^p. */
double arrivals_ramp_rate(const struct load_ramp *r, size_t i, size_t n);

/* Fills offsets_ns[0..n) with the ramp's due times after the start, ns:
 * the first at 0, then the gap before request i drawn at request i's rate
 * (arrivals_ramp_rate): a gamma with shape `burstiness` and mean 1/rate
 * (INFINITY: exactly 1/rate), as vLLM's get_request draws it. Unlike
 * arrivals_schedule the gaps are not rescaled (vLLM does not rescale a
 * ramp). vLLM's schedule shifted by its first gap, which it waits before
 * the first request and anvil does not. Deterministic for a seed (MT19937).
 * Returns 0, or -1 when the strategy is none, a rate the ramp reaches after
 * the first is ≤ 0, exponential starts at ≤ 0, burstiness ≤ 0, or memory
 * runs out. */
int arrivals_ramp_schedule(const struct load_ramp *r, double burstiness, uint64_t seed, int64_t *offsets_ns,
                           size_t n);

#endif
