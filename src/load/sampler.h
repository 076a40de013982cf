/* sampler.h — samplers on the measuring loop.
 *
 * A sampler takes samples of something beside the requests (the loop's own
 * lag, a server's /metrics, a GPU's counters) at the run's four phase
 * boundaries and every period_ns in between. The run owns a list of them in
 * a runner, which lives on the event loop that stamps tokens:
 *
 *   - an inline sampler (may_block false) is called on the loop itself, from
 *     a timer for periodic samples and synchronously at a boundary. Its hooks
 *     must be cheap (the event-loop lag probe is one): the loop stamps
 *     nothing while they run.
 *   - a blocking sampler (may_block true: a subprocess, a slow HTTP endpoint,
 *     NVML) runs on a thread of its own. It times its periodic samples itself;
 *     the loop forwards each boundary to it with the boundary's instant and
 *     never waits for it. Each result comes back through a locked queue and a
 *     wake-up of the loop, where collect takes it: samples go to the loop,
 *     never the reverse. Only the end of the run waits, boundedly, for the
 *     thread to finish; one that does not is left running and reported
 *     SAMPLER_STOP_TIMED_OUT, never waited for further.
 *
 * The phases, in the order every sampler sees them, each exactly once (the
 * driver's definitions are in driver.h and docs/METHODOLOGY.md, "Samplers"):
 *   before warm-up → window start → window end → after the last request.
 * Boundary instants never decrease: one given earlier than the boundary
 * before it is moved up to it.
 *
 * All times are CLOCK_MONOTONIC ns (core/clock.h), the clock of every token
 * stamp. Every call gets two: t_due, the instant the sample stands for (the
 * boundary's, or the periodic sample's slot on its grid), and t_taken, when
 * the hook was actually called. A boundary sample on a busy thread is taken
 * late but still attributed to its boundary; t_taken − t_due says how late. */
#ifndef ANVIL_LOAD_SAMPLER_H
#define ANVIL_LOAD_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

/* A phase boundary of the run, or SAMPLER_PERIODIC for a sample between two. */
enum sampler_phase {
    SAMPLER_BEFORE_WARMUP,  /* the run begins: before its first request (a warm-up, if any) is sent */
    SAMPLER_WINDOW_START,   /* the measurement window opens */
    SAMPLER_WINDOW_END,     /* the measurement window closes */
    SAMPLER_AFTER_LAST,     /* every request has ended: the load is off */
    SAMPLER_PERIODIC,       /* not a boundary: a periodic sample */
};

/* The boundaries, SAMPLER_BEFORE_WARMUP .. SAMPLER_AFTER_LAST. */
#define SAMPLER_N_BOUNDARIES 4

/* The phase's name as written in artifacts and messages: "before_warmup",
 * "window_start", "window_end", "after_last", "periodic" ("?" when out of
 * range). A static string. */
const char *sampler_phase_name(enum sampler_phase p);

/* What one hook call stands for. */
struct sampler_tick {
    enum sampler_phase phase;
    /* CLOCK_MONOTONIC ns. For a boundary, its instant; for a periodic
     * sample, its slot: start + k × period_ns. start's tick carries the
     * run's start, stop's the after-last instant. */
    int64_t t_due;
    /* When the hook was called (CLOCK_MONOTONIC ns), ≥ t_due. */
    int64_t t_taken;
    /* The run is ending because the server it measures stopped answering
     * (sampler_runner_hurry): a sampler that asks that server should
     * return NULL at once rather than wait for its own timeout. */
    bool hurry;
};

/* A sampler. The caller owns it and ud; both must outlive the run (and a
 * sampler reported SAMPLER_STOP_TIMED_OUT must keep ud valid for as long as
 * the process runs: its thread may still use it). start, sample and stop
 * run on the sampler's thread — the loop's when inline, its own when
 * may_block — one at a time. collect always runs on the loop's thread: for
 * a blocking sampler while its thread may be sampling, so what collect
 * touches in ud must not be touched by the other hooks (the result itself
 * is handed over). */
struct sampler {
    const char *name;       /* for reports, e.g. "loop_lag" (not owned) */
    /* Periodic samples every this many ns from the before-warm-up instant
     * (its slots) until the after-last boundary; 0 = boundaries only.
     * Slots are never taken in a burst: an inline sampler's timer is armed
     * for its next slot, and when the loop runs it late the sample is for
     * that slot (t_taken − t_due is the loop's lag) and the slots it ran
     * past are skipped; a blocking sampler takes the newest slot that has
     * come due and skips older ones its previous sample ran past. Skipped
     * slots are counted in the report. */
    int64_t period_ns;
    bool may_block;         /* run on a thread of its own (see above) */
    /* Called once before any sample, tick phase SAMPLER_BEFORE_WARMUP.
     * Returns 0, or -1: the sampler is then never sampled nor stopped and is
     * reported SAMPLER_START_FAILED. NULL = nothing to start. */
    int (*start)(void *ud, const struct sampler_tick *tick);
    /* Takes one sample: every boundary, then periodic ones, in order of
     * t_due (a periodic slot that came due before a boundary was forwarded
     * can precede it in call order while its t_due is later: attribute
     * samples by t_due). Returns a result for collect, or NULL for none.
     * Required. */
    void *(*sample)(void *ud, const struct sampler_tick *tick);
    /* Called once after the after-last sample, tick phase SAMPLER_AFTER_LAST.
     * NULL = nothing to stop. */
    void (*stop)(void *ud, const struct sampler_tick *tick);
    /* Takes ownership of a result sample returned, with the tick it was
     * taken for, on the loop's thread: at once for an inline sampler; for a
     * blocking one when the loop next runs, or at the end of the run.
     * NULL = results are not wanted (they are discarded). */
    void (*collect)(void *ud, const struct sampler_tick *tick, void *result);
    /* Frees a result that will never be collected (collect is NULL, or the
     * run ended before the thread returned it). Called on the thread that
     * took the sample or on the loop's. NULL = free(result). */
    void (*discard)(void *ud, void *result);
    void *ud;
};

/* How a sampler's run went. */
enum sampler_state {
    SAMPLER_NOT_STARTED,     /* the runner was never started */
    SAMPLER_RUNNING,         /* started, not stopped yet */
    SAMPLER_STOPPED,         /* its stop hook returned (a thread was joined) */
    SAMPLER_START_FAILED,    /* its start hook failed, or its thread could not be created */
    SAMPLER_STOP_TIMED_OUT,  /* still busy when the end of the run stopped waiting: left running */
};

/* The state's name for reports: "not_started", "running", "stopped",
 * "start_failed", "stop_timed_out" ("?" when out of range). */
const char *sampler_state_name(enum sampler_state s);

struct sampler_report {
    const char *name;           /* the sampler's name (not owned) */
    enum sampler_state state;
    long samples;               /* sample hook calls that returned */
    long periodic_skipped;      /* periodic slots not taken: the loop or the previous sample ran past them */
    long collected;             /* results handed to collect */
    long discarded;             /* results discarded: no collect, the run ended first, out of memory */
    int64_t max_late_ns;        /* the largest t_taken − t_due over its samples */
};

struct sampler_runner;

/* A runner for n samplers (the pointers are copied, not the samplers) on
 * base, the loop that stamps tokens (not owned; must outlive the runner).
 * base should have precise timers (EVENT_BASE_FLAG_PRECISE_TIMER, as the
 * driver's has): on libevent's default coarse clock timers fire up to a
 * jiffy early, and an inline periodic sample would precede its slot.
 * Nothing runs until sampler_runner_start. Returns NULL when memory or the
 * wake-up descriptor (eventfd) cannot be had, or a sampler has no sample
 * hook or a negative period. */
struct sampler_runner *sampler_runner_new(struct event_base *base, struct sampler *const *samplers, int n);

/* The before-warm-up boundary at t_ns: starts every sampler (inline ones
 * here, each blocking one on a new thread with every signal blocked, so
 * signals reach the loop), takes their before-warm-up samples and arms the
 * periodic ones. Call once, from the loop's thread. Returns 0, or -1 when
 * already started. A sampler that fails to start is only reported. */
int sampler_runner_start(struct sampler_runner *r, int64_t t_ns);

/* The boundary phase (SAMPLER_WINDOW_START or SAMPLER_WINDOW_END) at t_ns:
 * an inline sampler is sampled now, a blocking one is sent the boundary
 * (the loop waits at most for the thread's queue lock, held only around
 * bookkeeping). A boundary skipped before it is taken first, at the same
 * instant, so every sampler sees each boundary once and in order. Returns
 * 0, or -1 when the runner is not running, phase is not one of the two, or
 * phase has passed already (nothing is done). */
int sampler_runner_phase(struct sampler_runner *r, enum sampler_phase phase, int64_t t_ns);

/* The after-last boundary at t_ns and the end of sampling: takes an inline
 * sampler's periodic slot that came due by t_ns but whose timer never ran
 * (the loop was busy to the end: its lag, t_taken − t_due, is that stall),
 * then any boundary not yet taken (at t_ns), then the after-last samples, stops
 * every sampler, waits until wait_ns from now at most for the blocking ones
 * to finish (joined) and collects every result they returned. A sampler
 * whose thread is still busy then is left running (detached), reported
 * SAMPLER_STOP_TIMED_OUT; what it returns later is discarded. Returns how
 * many did not stop in time, or -1 when the runner was not running. */
int sampler_runner_stop(struct sampler_runner *r, int64_t t_ns, int64_t wait_ns);

/* The run's server stopped answering: from now on every sample's tick
 * (blocking samplers' boundaries and periodic slots not yet taken, inline
 * ones') has hurry set, so samplers that ask that server end at once and
 * the end of the run need not wait for their timeouts. Call from the
 * loop's thread while running, before the boundaries still to give. */
void sampler_runner_hurry(struct sampler_runner *r);

/* The report of sampler i (0-based, in the order given), valid until the
 * runner is freed; NULL when i is out of range. Final after
 * sampler_runner_stop; before it, a blocking sampler's counts are as of the
 * last results the loop collected. */
const struct sampler_report *sampler_runner_report(const struct sampler_runner *r, int i);

/* Frees the runner (stopping it first with no wait when it is still
 * running). NULL is allowed. */
void sampler_runner_free(struct sampler_runner *r);

#endif
