/* plan.h — the load plan: every request's place in the run, computed before
 * anything is sent (no I/O, no clock).
 *
 * A plan lists every request of the run in the order it is offered: the
 * warm-ups first (closed loop, unmeasured), then the measured requests. Each
 * entry carries its send time (open loop: due this long after the measured
 * phase starts; arrivals.h), the requests it must wait for (a conversation's
 * previous turn; an agent's sub-agents) and how long after they ended (think
 * time), and the loop that arms its arrival timer. The plan is then
 * split across the driver's threads so the offered process is the one a
 * single thread would send:
 *   - closed loop: `concurrency` slots, split as evenly as can be over the
 *     threads (their sum is the concurrency, so the cap is global by
 *     construction); a freed slot takes the next request of the plan,
 *     whichever thread it is on;
 *   - open loop: entry i's arrival timer is on thread i mod threads, so each
 *     thread wakes only for its own arrivals and every arrival time is the
 *     one the schedule gives; a cap (concurrency > 0) is counted globally
 *     (driver.c), so every thread can hold up to the whole cap.
 * A trace replay fills send_ns itself (plan_set_send_times).
 *
 * A ramp is part of the plan too, so it is the same over threads, shards
 * and ranks: an open-loop rate ramp (ramp.strategy) is the send times
 * themselves (arrivals_ramp_schedule); a closed-loop ramp (ramp.ramp_up_s)
 * gives stream k of C its start, k·S/(C − 1) after the measured phase
 * starts (stream_start_ns): until then only the streams started may hold a
 * request (driver.c counts them globally).
 *
 * The same split serves processes (ranks of an MPI run, or shards started
 * apart; plan_shard): shard I of N takes
 *   - closed loop: its share of the concurrency (as threads get theirs) and
 *     the measured requests whose slot, request i mod concurrency, is one
 *     of its own (so each shard's share of requests is its share of slots);
 *   - open loop: measured entry i when i mod N = I, with the send time the
 *     whole run's schedule gives it, and its share of a cap;
 *   - warm-ups: w mod N = I; a turn that follows another goes with it.
 * The union of the shards is the single-process plan, entry for entry. */
#ifndef ANVIL_LOAD_PLAN_H
#define ANVIL_LOAD_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/arrivals.h"

/* One request of the plan. */
struct plan_entry {
    int64_t send_ns;   /* open loop, measured: due this long (ns) after the measured phase starts; else 0 */
    long follows;      /* seq of the first request it is held back for until it ended, or -1 */
    int n_waits;       /* requests it is held back for until every one has ended (waits_for) */
    int64_t think_ns;  /* held this long after the last of them ended, ns (0 = none) */
    int thread;        /* open loop: the thread whose timer sends it when due; closed loop / warm-up: -1 (any) */
};

struct plan_cfg {
    int warmup;                 /* unmeasured requests, sent first, closed loop */
    int num_prompts;            /* measured requests (duration mode: the most that may be sent) */
    int concurrency;            /* closed loop: in flight, ≥ 1; open loop: cap, 0 = none */
    double request_rate;        /* requests/s; INFINITY = closed loop */
    double burstiness;          /* gamma shape of the gaps (arrivals.h) */
    uint64_t seed;              /* of the arrival schedule */
    bool fixed_span;            /* scale the schedule to span exactly (n − 1)/rate (arrivals.h); off in duration mode */
    int threads;                /* loops to split over, ≥ 1 */
    /* A rate ramp (strategy, open loop: instead of request_rate and
     * fixed_span) or, in the closed loop, streams started over ramp_up_s;
     * all zero = none. */
    struct load_ramp ramp;
    /* Closed loop: the caller's start of each of the concurrency streams,
     * ns after the measured phase starts (a shard's share of the whole
     * run's, plan_shard), instead of ramp.ramp_up_s's; NULL = none. */
    const int64_t *stream_start_ns;
    /* The request (seq) that request seq follows, or -1; NULL = none follows any. */
    long (*follows)(void *ud, long seq);
    /* Instead of follows, when set: the requests (seqs, each before seq)
     * request seq waits for until all have ended, written to out (at most
     * cap = PLAN_MAX_WAITS); returns their count (0 = none; above cap, the
     * plan is refused). Any number of
     * requests may wait for one (an agent's sub-agents wait for its turn). */
    int (*waits_for)(void *ud, long seq, long *out, int cap);
    /* How long request seq is held after the last request it waits for
     * ended, ns (think time); NULL = 0. Only requests that wait have one. */
    int64_t (*think_ns)(void *ud, long seq);
    void *ud;
};

struct load_plan {
    struct plan_entry *entries; /* n entries, by seq (warm-ups first); owned */
    long n;                     /* warmup + num_prompts */
    int warmup, num_prompts;
    bool open_loop;
    int threads;
    int concurrency;            /* as given */
    /* Slots (requests it may hold in flight) of each thread, threads
     * entries; owned. Closed loop: concurrency split evenly (sum =
     * concurrency, none empty). Open loop: the cap, or every request when
     * there is none (capped by the global count in the driver). */
    int *slots;
    /* Closed loop with a ramp: when each of the concurrency streams starts,
     * ns after the measured phase starts, never decreasing; owned; NULL =
     * all at once. */
    int64_t *stream_start_ns;
    bool any_follows;           /* some entry waits for another */
    /* Who waits for whom: the requests waiting for request s are
     * waiters[waiters_at[s] .. waiters_at[s + 1]) (n + 1 offsets); owned,
     * NULL when none waits. */
    long *waiters, *waiters_at;
};

/* Most requests one request may wait for. */
#define PLAN_MAX_WAITS 256

/* The start of stream k of `streams`, ns after the measured phase starts,
 * under a closed-loop ramp of ramp_up_s seconds: k·S/(streams − 1), the
 * first at 0 and the last at S (one stream starts at 0). */
int64_t plan_stream_start_ns(double ramp_up_s, int k, int streams);

/* When the ramp is over, seconds after the measured phase starts: a
 * closed-loop ramp's ramp_up_s (its last stream's start); a rate ramp's
 * last send of num_prompts (it spans the run), drawn as plan_build draws
 * it; NaN when there is no ramp or no schedule. */
double plan_ramp_end_s(const struct load_ramp *r, double burstiness, uint64_t seed, int num_prompts);

/* Builds the plan. Errors (message in err, errlen bytes): threads < 1, a
 * closed loop with concurrency < 1, rate or burstiness ≤ 0, a ramp the
 * arrivals refuse (arrivals_ramp_schedule), a negative ramp_up_s or one
 * in the open loop, a request that
 * follows (or waits for) itself, a later request or one outside the plan,
 * two requests following the same one (follows; waits_for allows it), a
 * request waiting for more than PLAN_MAX_WAITS, a negative think time, or
 * memory. Returns 0 or -1 (p left empty). */
int plan_build(const struct plan_cfg *c, struct load_plan *p, char *err, size_t errlen);

/* Replaces the measured requests' send times with the caller's (e.g. a
 * trace's), offsets_ns[0..num_prompts) ns after the measured phase starts;
 * they must not decrease. Makes the plan open loop. Returns 0, or -1 when a
 * time is negative or earlier than the one before. */
int plan_set_send_times(struct load_plan *p, const int64_t *offsets_ns);

/* The number of threads a run uses: `requested` when > 0, else `online`
 * (the online cores; < 1 counts as 1) but at most one per
 * PLAN_STREAMS_PER_THREAD streams; never more than the concurrency when it
 * caps the streams (concurrency > 0), nor than the requests. `streams` is
 * the expected requests in flight: the concurrency, or every request when
 * there is no cap. At least 1. */
int plan_threads(int requested, long online, int concurrency, long requests);

/* Streams per thread below which the default adds no thread: a loop is
 * nowhere near busy with fewer, and a thread costs a loop and a pool of
 * connections. */
#define PLAN_STREAMS_PER_THREAD 64

/* One shard's part of a plan (plan_shard). */
struct plan_shard {
    long *seqs;             /* the whole plan's seq of each of this shard's requests, in plan order
                               (its warm-ups first); owned */
    int warmup, num_prompts;/* of them: warm-ups, measured */
    int concurrency;        /* closed loop: its slots; open loop: its share of the cap (0 = none) */
    int64_t *send_ns;       /* open loop: num_prompts send times from the whole schedule (never
                               decreasing), else NULL; owned */
    int64_t *stream_start_ns;/* closed loop with a ramp: the start of each of its concurrency streams, ns
                               after the measured phase starts (its slots of the whole run's); else
                               NULL; owned */
    long *local;            /* for each seq of the whole plan, its place in seqs, or -1; owned */
    long n_total;           /* requests of the whole plan (local has this many) */
};

/* Splits the plan c describes (its threads taken as 1; send_ns, when not
 * NULL, the caller's schedule of c->num_prompts times, as
 * plan_set_send_times) into shard `index` of `count` (see the top of this
 * file). Errors (message in err): count < 1, index outside [0, count), a
 * closed loop or a cap with less concurrency than shards, plan_build's.
 * Returns 0 or -1 (*s empty). */
int plan_shard(const struct plan_cfg *c, const int64_t *send_ns, int index, int count,
               struct plan_shard *s, char *err, size_t errlen);

/* Frees the shard's arrays (s may be all zero). */
void plan_shard_free(struct plan_shard *s);

/* Frees the plan's arrays (p may be all zero). */
void plan_free(struct load_plan *p);

#endif
