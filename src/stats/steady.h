/* steady.h — steady state, detected from the per-request records and
 * stated (docs/METHODOLOGY.md, "Steady state"): the longest stretch of the
 * run where the load held its target — requests in flight for a closed
 * loop, completion rate for an open one — within STEADY_BAND, and the
 * headline figures over that stretch beside the whole run's. */
#ifndef ANVIL_STATS_STEADY_H
#define ANVIL_STATS_STEADY_H

#include <stdbool.h>

#include "stats/dist.h"
#include "stats/record.h"

/* The band around the target a step must hold: ±10 % of it. */
#define STEADY_BAND 0.10
/* A steady stretch shorter than this many seconds, or than this share of
 * the run, is not a steady state. */
#define STEADY_MIN_S 10.0
#define STEADY_MIN_SHARE 0.10
/* The grid the level is judged on: steps of this many seconds from the
 * run's first send. */
#define STEADY_STEP_S 0.5
/* Open loop: each step's completion rate is taken over the trailing window
 * of at least this many seconds, and long enough for this many planned
 * sends at the target rate (fewer cannot tell ±10 % from the number in
 * flight's own wobble). */
#define STEADY_RATE_WINDOW_S 5.0
#define STEADY_RATE_MIN_SENDS 50.0

/* What the level is. */
enum steady_basis {
    STEADY_NONE,            /* no target: every prompt at once, or not said */
    STEADY_IN_FLIGHT,       /* closed loop: requests in flight against --concurrency */
    STEADY_COMPLETION_RATE, /* open loop: completions against the plan's sends (--request-rate) */
};

/* The artifact's name of a basis: "none", "in_flight", "completion_rate". */
const char *steady_basis_name(enum steady_basis b);

struct steady_opts {
    enum steady_basis basis;
    double target;          /* requests in flight (closed loop) or requests/s (open loop) */
    double not_before_s;    /* seconds after the run's first send before which no step counts
                               (a ramp's end); 0 = none */
};

/* The opts of a run: a closed loop (request_rate infinite) with a cap of
 * concurrency > 0 is judged in flight, an open loop (finite rate) by its
 * completion rate; anything else has no target. */
struct steady_opts steady_opts_of(long concurrency, double request_rate);

/* A ramp's end as steady_opts.not_before_s: seconds from the first measured
 * send of recs[0..n) (the steady state's origin) to end_ns (CLOCK_MONOTONIC
 * ns, the requests' clock), 0 when the ramp ended before it. In duration
 * mode the ramp starts with the warm-up, so its end_s (after the measured
 * phase began) is not on this origin. */
double steady_not_before_s(const struct req_record *recs, int n, int64_t end_ns);

/* steady_not_before_s over the records of it, into *out, in one pass.
 * Returns 0, or -1 on the iterator's error (it->err). */
int steady_not_before_s_iter(struct rec_iter *it, int64_t end_ns, double *out);

/* Why no steady state was reached (static keys, as the artifact writes them). */
#define STEADY_NO_TARGET "no_target"              /* nothing to hold: no cap and no rate */
#define STEADY_NO_REQUESTS "no_requests"          /* no measured request was sent */
#define STEADY_NEVER "never_at_target"            /* no step held the band */
#define STEADY_TOO_SHORT "too_short"              /* the longest stretch was under STEADY_MIN_S */
#define STEADY_TOO_SMALL "too_small_share"        /* ... or under STEADY_MIN_SHARE of the run */

/* The reason key in words, for people ("" for NULL). */
const char *steady_reason_text(const char *reason);

struct steady_state {
    bool reached;
    const char *reason;     /* a STEADY_* key (static); NULL when reached */
    enum steady_basis basis;
    double target, band, not_before_s;  /* as judged: the opts' target, STEADY_BAND */
    double run_s;           /* the run: first measured send → last measured end, s */
    /* The longest stretch in the band (also when too short), s from the
     * run's first send; NaN when no step held it. */
    double start_s, end_s, length_s, share;
    double level;           /* mean in flight (requests) or completion rate (requests/s) over it */
    /* Over the stretch [start, end], when reached (else samples 0 and
     * NaN): completed requests whose start and end both lie inside it
     * (start ≤ t_start, t_end ≤ end), their TTFT, TPOT, per-chunk ITL and
     * E2E (ms) — the ITL's percentiles from a histogram when the stretch
     * holds over VCOL_EXACT_MAX gaps (itl.rel_error, stats/hist.h); output
     * tokens that arrived inside it (stats/tokens.h) per second; completed
     * requests that ended inside it (start < t_end ≤ end) per second. */
    int requests;
    struct dist ttft, tpot, itl, e2e;
    double output_throughput, request_throughput;
};

/* Detects the steady state of n records (warm-ups count for the number in
 * flight, not as measured requests) under o, percentiles by m, into *out.
 * Always fills *out (reached false with a reason when not). Returns 0, or
 * -1 when memory runs out. */
int steady_detect(const struct req_record *recs, int n, const struct steady_opts *o, enum pct_method m,
                  struct steady_state *out);

/* steady_detect over the records of it, in at most three passes (the span,
 * the level, the figures). Memory: the grid (a few bytes per 0.5 s step),
 * three doubles per record for the figures, and the ITL column (stats/hist.h).
 * Returns 0, or -1 when memory runs out or on the iterator's error (it->err). */
int steady_detect_iter(struct rec_iter *it, const struct steady_opts *o, enum pct_method m,
                       struct steady_state *out);

/* Whether a steady figure differs from the whole run's beyond noise: by
 * more than STEADY_NOISE of the whole run's (both finite). */
#define STEADY_NOISE 0.05
bool steady_differs(double whole, double steady);

#endif
