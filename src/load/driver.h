/* driver.h — the load driver: one libevent loop per thread.
 *
 * The load plan (plan.h) is computed before anything is sent and split over
 * `threads` loops, each on its own thread with its own curl multi handle,
 * slots and record buffer; records are merged by request index at the end.
 * Threads share one lock, taken per request (claim, headers, end), never
 * per event. The offered process is the one a single loop would send:
 * requests go out in plan order, open-loop arrival times are the
 * schedule's (each on the thread its plan entry names), and the concurrency
 * is counted over all threads. Signals, the progress line and cfg's
 * samplers are on thread 0's loop (the caller's thread); every loop has its
 * own lag probe.
 *
 * Closed loop (request_rate = INFINITY): exactly `concurrency` requests in
 * flight until every planned request has finished. Open loop: requests
 * become due on an arrival schedule (arrivals.h) and are sent when due, or
 * as soon as a slot frees when `concurrency` caps the requests in flight;
 * each keeps its scheduled time so client-side queueing is visible.
 * Warm-up requests run first, closed loop, unmeasured. Duration mode keeps
 * the load on for warmup_s + duration_s; requests sent before the window
 * opens are kept as warm-ups (their tokens inside the window count), and
 * requests still running when it closes are cut and marked `cut`. Ctrl-C /
 * SIGTERM stop new sends, give in-flight requests a grace period, then
 * cancel them. A server that stops answering ends the run: refused
 * connections (server_gone) stop new sends as a signal does; silence on
 * every in-flight request for stall_timeout_s (server_stalled) stops them
 * and fails what runs at once.
 *
 * Samplers (sampler.h) run on thread 0's loop: first the event-loop lag
 * probe (driver_result.loop_lag_ms; every other loop has one too), then
 * cfg's, in their order. The run's
 * phase boundaries, as the samplers get them (driver_result.phase_ns):
 *   before warm-up  the loop starts, after the pre-warm GETs, before any
 *                   request (warm-ups included) is sent;
 *   window start    duration mode: the window opens (start of the measured
 *                   phase + warmup_s, exactly driver_result.window_start);
 *                   else the first measured request is sent (its t_start,
 *                   after every warm-up has ended);
 *   window end      duration mode: the window closes (driver_result.window_end,
 *                   so the end of the run when it stopped early); else the
 *                   last measured request to end ended (its t_end);
 *   after last      every request has ended or been cut or cancelled: the
 *                   loop has stopped.
 * A boundary the run never reached (stopped by a signal during warm-up, no
 * measured request sent) is given at the after-last instant, so every
 * sampler sees all four, in order. */
#ifndef ANVIL_LOAD_DRIVER_H
#define ANVIL_LOAD_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "load/arrivals.h"
#include "load/live.h"
#include "load/sampler.h"
#include "net/http.h"
#include "stats/record.h"

/* What the readiness gate is shown at each poll (driver_cfg.window_ready). */
struct driver_gate {
    int64_t now;        /* CLOCK_MONOTONIC ns of the poll */
    int in_flight;      /* requests sent and not ended (warm-ups included) */
    int decoding;       /* of them, those whose first output token has arrived */
};

/* How often the readiness gate is polled during the warm-up: 50 ms. */
#define DRIVER_GATE_NS 50000000

struct driver_cfg {
    const char *url;                    /* full endpoint URL */
    const struct curl_slist *headers;   /* sent with every request; not owned */
    int concurrency;                    /* cap on requests in flight; ≥ 1, or 0 = none (open loop only) */
    double request_rate;                /* requests/s; INFINITY = closed loop */
    double burstiness;                  /* gamma shape of the gaps (1 = Poisson; INFINITY = constant) */
    uint64_t seed;                      /* of the arrival schedule */
    /* A staged ramp (load/plan.h): a rate ramp (strategy; open loop, with
     * request_rate INFINITY) or the closed loop's streams started over
     * ramp_up_s; all zero = none. */
    struct load_ramp ramp;
    /* Closed loop: each stream's start, ns after the measured phase starts
     * (concurrency of them: a shard's share, plan_shard), instead of
     * ramp.ramp_up_s's; NULL = none. Not owned. */
    const int64_t *stream_start_ns;
    int num_prompts;                    /* measured requests (duration mode: the most that may be sent) */
    double duration_s;                  /* duration mode: measure for this long, 0 = off */
    double warmup_s;                    /* duration mode: load applied before the window opens */
    int warmup;                         /* unmeasured requests sent first */
    long connect_timeout_ms, timeout_ms;   /* 0 = none */
    double idle_timeout_s;              /* fail a request silent for this long (no byte); 0 = none */
    /* End the run when requests are in flight and no byte has arrived on
     * any of them for this long, s (driver_result.server_stalled); 0 =
     * never. The silence counts only while requests are in flight: from the
     * newest byte of any request, or from when requests went in flight after
     * none were, summed over in-flight spans with no byte between (a request
     * that timed out, then the next one sent, keep counting). */
    double stall_timeout_s;
    const char *secret;                 /* e.g. the API key: scrubbed from failure messages; may be NULL */
    const struct secrets *secrets;      /* every credential (core/redact.h): scrubbed likewise; may be NULL */

    double grace_s;                     /* after a stop signal, how long in-flight requests may finish */
    bool progress;                      /* draw a progress line on stderr */
    /* When set, `concurrency` concurrent GETs of this URL open the
     * connections before anything is measured, so no measured request pays
     * for a TCP handshake the steady state would not. */
    const char *prewarm_url;
    /* The transport every request goes over: HTTP_TRANSPORT_NATIVE or
     * HTTP_TRANSPORT_CURL (http_transport_resolve; AUTO is taken as CURL). */
    enum http_transport transport;
    /* Body of request `seq` (0-based: warm-ups first, then measured): a
     * malloc'd string the driver frees, or NULL on failure; also its planned
     * prompt tokens (-1 unknown) and max_tokens, for the record. */
    char *(*make_body)(void *ud, long seq, long *planned_prompt_tokens, long *max_tokens);
    /* The request (seq) that request seq is held back for until it has
     * ended — a conversation's previous turn — or -1; NULL when none is.
     * At most one request may follow any request. */
    long (*follows)(void *ud, long seq);
    /* Instead of follows, when set (plan.h): the requests request seq waits
     * for until every one has ended — an agent's previous turn and the
     * sub-agents it spawned; a sub-agent's parent turn — any number of
     * requests may wait for one. Returns their count, written to out. */
    int (*waits_for)(void *ud, long seq, long *out, int cap);
    /* Think time: how long after the last request it waits for ended
     * request seq is sent, ns; NULL = 0. The record's t_scheduled is that
     * instant (or its arrival time, when later), so a late send shows. */
    int64_t (*think_ns)(void *ud, long seq);
    /* Called as each request ends (warm-ups too), e.g. to append it to a
     * log, on the thread of measuring loop `loop` (0 .. threads−1) that
     * carried it, outside the driver's lock: calls for one loop come one at
     * a time, calls for different loops may run at once. */
    void (*on_record)(void *ud, int loop, const struct req_record *r);
    /* Called once, under the driver's lock and before any measured request
     * has ended, with the t_start of the first request counted as measured
     * (duration mode: the first sent inside the window), e.g. the origin of
     * a time series; it must return at once and not call the driver. NULL =
     * none. */
    void (*on_first_send)(void *ud, int64_t t_start_ns);
    void *ud;
    /* Samplers to run on the measuring loop after the lag probe (not owned;
     * each must outlive driver_run); NULL / 0 = none. */
    struct sampler *const *samplers;
    int n_samplers;
    /* How long the end of the run waits for blocking samplers to stop, s;
     * 0 = DRIVER_SAMPLER_STOP_NS. One still busy then is left running and
     * reported SAMPLER_STOP_TIMED_OUT. */
    double sampler_stop_s;
    /* Measuring loops, one thread each; 0 = plan_threads's default (the
     * online cores, at most one per 64 streams); never more than the
     * concurrency or the requests. */
    int threads;
    /* Build every request body (make_body) before the run starts, so none is
     * built while others are timed (e.g. dataset bodies, built with cJSON);
     * in duration mode only the first ones (DRIVER_PREBUILD_DURATION_BYTES).
     * Otherwise bodies are built as requests are sent, on the sending thread:
     * make_body must then be safe to call from several threads at once (it
     * must be even with prebuild_bodies, for duration mode's later ones). */
    bool prebuild_bodies;
    bool keep_text;             /* streams keep their output text until usage comes (stream.keep_text):
                                   the server has a tokenizer to count it after the load */
    /* Each measured record is freed once on_record has returned, so the
     * run's memory does not grow with its requests (on_record keeps what it
     * needs: the run writes it to its journal); driver_result.records is
     * then NULL and n_records 0. */
    bool drop_records;
    /* A schedule of the caller's (e.g. a trace's): measured request i is due
     * send_ns[i] ns after the measured phase starts (num_prompts entries,
     * never decreasing; not owned), instead of the one request_rate and
     * burstiness draw; the run is then open loop, concurrency a cap (0 =
     * none). NULL = none. */
    const int64_t *send_ns;
    /* Duration mode with warmup_s > 0: the readiness gate. Polled on the
     * loop every DRIVER_GATE_NS during the warm-up; when it returns true the
     * window opens at that poll (and ends duration_s later), so warmup_s is
     * then the longest warm-up, after which the window opens anyway. Needs
     * one measuring loop (threads 1): the streams it counts are that loop's.
     * NULL = the window opens at warmup_s. */
    bool (*window_ready)(void *gate_ud, const struct driver_gate *g);
    void *gate_ud;
    /* The measured phase begins no earlier than this CLOCK_MONOTONIC instant
     * (ns): one agreed start for every rank or shard of a run spread over
     * processes (run.h, run_shard). Warm-ups run before it; until it comes
     * no measured request is sent and open-loop send times count from it.
     * 0 = as soon as the warm-ups have ended (a single process). */
    int64_t measure_at_ns;
    /* The run's live figures (load/live.h, --metrics-listen), updated by
     * every measuring loop as measured requests start, stream and end and
     * as the lag probes tick; not owned; NULL = none. */
    struct live_metrics *live;
    /* Send a W3C traceparent header (version 00, sampled) with every
     * request: a random trace id and span id per request, never zero, the
     * trace id written to its record (req_record.trace_id). Ids come from a
     * key drawn from the kernel per run and the request's seq, so no two
     * requests of a run share one and runs (or shards) do not collide. */
    bool traceparent;
};

struct driver_result {
    struct req_record *records;  /* num_prompts measured records, by request_index; owned;
                                    NULL with driver_cfg.drop_records */
    int n_records;               /* num_prompts; 0 with drop_records */
    long sent;                   /* measured requests sent (duration mode: warm-ups of the window too) */
    double achieved_rate;        /* measured sends per second: (sent − 1) / (last send − first send) */
    int64_t window_start, window_end;   /* duration mode: the measurement window (CLOCK_MONOTONIC ns) */
    double *loop_lag_ms;         /* owned: lateness of a 10 ms probe timer, one sample per tick (ms), every loop's (thread 0's first) */
    size_t n_loop_lag;
    int warmup_failed;           /* warm-up requests that failed */
    int stop_signal;             /* the signal that stopped the run, 0 when none */
    bool client_limit;           /* a request failed on this machine's own limit (FAIL_CLIENT): nothing more was sent */
    /* The server stopped answering: DRIVER_GONE_AFTER connections in a row
     * refused, after it had answered, with no reply between. Nothing more
     * was sent; requests in flight had the grace period to end. */
    struct server_gone {
        bool gone;
        int64_t first_failure_ns;   /* CLOCK_MONOTONIC: end of the streak's first failure */
        int connect_failures;       /* refused connections in the streak */
        int truncated;              /* streams cut by the server in the streak */
    } server_gone;
    /* The server stalled (driver_cfg.stall_timeout_s): nothing more was
     * sent, and the requests in flight were ended at once, failed
     * (FAIL_TIMEOUT, "server stalled: ..."): a stopped server would not
     * answer them in a grace period. */
    struct server_stalled {
        bool stalled;
        int64_t detected_ns;        /* CLOCK_MONOTONIC: when the run saw it */
        int64_t silent_ns;          /* the silence then (≥ stall_timeout_s) */
        long in_flight;             /* requests in flight then */
        double timeout_s;           /* driver_cfg.stall_timeout_s */
    } server_stalled;
    int prewarmed;               /* connections opened by the pre-warm GETs that succeeded */
    double cpu_user_s, cpu_sys_s;/* the client's CPU time (whole process) while requests ran */
    long stamps_kernel;          /* arrival times (headers, body pieces) from the kernel (net/rxstamp.h) */
    long stamps_clock;           /* arrival times from the client's clock (no kernel stamp for the read) */
    /* The phase boundaries given to the samplers (CLOCK_MONOTONIC ns),
     * indexed by enum sampler_phase (see the top of this file). */
    int64_t phase_ns[SAMPLER_N_BOUNDARIES];
    /* cfg's samplers' reports, in cfg's order (the lag probe's not
     * included); owned; NULL / 0 when cfg had none. */
    struct sampler_report *sampler_reports;
    int n_sampler_reports;
    int threads;                 /* measuring loops the run used */
    /* Per measuring loop, `threads` entries, thread 0 first (owned; NULL
     * when the run was not set up): the measured requests it carried and
     * where its lag samples are in loop_lag_ms (lag_first, n_lag). */
    struct driver_loop_stat {
        long requests;
        size_t lag_first, n_lag;
        long peak_events_per_s;     /* SSE events it read in its fullest 1-second bin (below) */
    } *per_loop;
    /* The fullest 1-second bin of any loop: SSE events (warm-ups' too) one
     * measuring loop read within one second of CLOCK_MONOTONIC (bins
     * [k s, (k+1) s), each read counted at its arrival stamp; the bin of
     * the run's last events is counted too, though cut short). */
    long peak_events_per_s;
    int64_t t_measure;           /* CLOCK_MONOTONIC start of the measured phase (0 = never began) */
};

/* Runs the plan. Records of requests never sent keep t_start == 0. Returns 0,
 * or -1 when the plan is refused (message on stderr) or a loop could not be
 * set up (nothing measured). on_record is called on the loop's own thread
 * without the driver's lock (see driver_cfg), and every call has returned
 * when driver_run returns; make_body and follows are called before sending
 * (follows) or from any thread (make_body, unless prebuild_bodies). */
int driver_run(const struct driver_cfg *cfg, struct driver_result *out);

/* Interval of the event-loop lag probe: a timer due every this many ns
 * whose lateness shows how busy the client's loop was. */
#define DRIVER_LAG_PROBE_NS 10000000

/* The most requests one loop sends before it reads what arrived: each send
 * costs 0.1–0.25 ms of the loop (curl, the request's write), so a batch
 * holds the loop a few ms, not seconds, when thousands are due at once. */
#define DRIVER_SEND_BATCH 32

/* How long the end of a run waits for blocking samplers to stop, unless
 * driver_cfg.sampler_stop_s says otherwise: 5 s. */
#define DRIVER_SAMPLER_STOP_NS 5000000000

/* Refused connections in a row (after the server had answered) that mean
 * the server is gone: one could be a blip, three with no reply between are
 * not (a killed server refuses every one within a millisecond). */
#define DRIVER_GONE_AFTER 3

/* Duration mode with prebuild_bodies: bodies are built before the run
 * until they hold this many bytes or took this long, ns (the plan's cap is
 * not what the window sends); later requests build theirs as they are
 * sent. */
#define DRIVER_PREBUILD_DURATION_BYTES ((size_t)64 << 20)
#define DRIVER_PREBUILD_DURATION_NS 1000000000LL

/* Frees the records, lag samples, per-loop figures and sampler reports. */
void driver_result_free(struct driver_result *r);

#endif
