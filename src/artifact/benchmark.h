/* benchmark.h — the one-cell artifact, schema anvil-serving.benchmark/v1
 * (every field of seed 001 with the same meaning, plus anvil's additions
 * under new names; docs/ARTIFACTS.md): struct benchmark holds every field,
 * benchmark_from_run fills it from a run, benchmark_to_json writes it and
 * benchmark_from_json reads it back (checked: a missing or mistyped field is
 * an error naming the file and the key). */
#ifndef ANVIL_ARTIFACT_BENCHMARK_H
#define ANVIL_ARTIFACT_BENCHMARK_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "artifact/json.h"
#include "artifact/provenance.h"
#include "openai/discover.h"
#include "stats/invariants.h"
#include "stats/record.h"
#include "stats/summary.h"
#include "workload/calibrate.h"
#include "workload/dataset.h"

#define BENCHMARK_SCHEMA "anvil-serving.benchmark/v1"
/* measurement_protocol, by load shape */
#define PROTOCOL_CLOSED "anvil-closed-loop/v1"
#define PROTOCOL_OPEN "anvil-open-loop/v1"
#define PROTOCOL_DURATION "anvil-duration/v1"

/* ---- what a run hands over ---- */

/* Where a run sits in a sweep (anvil sweep sets it); case_id NULL = none. */
struct sweep_place {
    const char *target;     /* the target's label */
    const char *case_id;    /* e.g. "short-128-64-c8" */
    long round;             /* 1-based */
};

/* A staged ramp (docs/ARTIFACTS.md "ramp"): a rate ramp (open loop) or
 * the closed loop's streams started in steps. */
struct bench_ramp {
    bool present;
    char *strategy;             /* "linear", "exponential" (rate ramps) or "streams" (--ramp-up-s); owned in
                                   struct benchmark, borrowed in bench_meta */
    double start_rps, end_rps;  /* rate ramps: req/s at the first and last measured request; NaN = null */
    double ramp_up_s;           /* streams: the last stream's start, s; NaN = null */
    double end_s;               /* when the ramp is over, s after the measured phase starts (a rate ramp:
                                   the last planned send, as it spans the run) */
    double end_ns;              /* the same instant, CLOCK_MONOTONIC ns (request_timings' clock); NaN = null */
};

/* What the run was: everything in the artifact that is not measured. */
struct bench_meta {
    const char *run_id, *started_at, *finished_at;  /* UTC ISO-8601 */
    const struct server_info *server;
    const char *engine_label;       /* overrides server->engine when set */
    const char *gpu_label;          /* free text, NULL when not given */
    const char *endpoint;           /* "chat" or "completions" */
    int concurrency, num_prompts, warmup;    /* concurrency 0 = no cap (open loop) */
    double request_rate, burstiness;        /* requests/s (INFINITY = closed loop); gamma shape */
    struct bench_ramp ramp;                 /* present false = none; a rate ramp makes the loop open */
    double achieved_rate;                   /* measured sends/s */
    struct slo slo;                         /* goodput bounds (NaN = unset) */
    long input_len, output_len;     /* planned tokens */
    bool ignore_eos;
    uint64_t seed;
    const char *calibration_method; /* "tokenize", "probe" or "none" */
    const struct calibration *calibration;  /* NULL when none */
    const char *calibration_source; /* "measured" or "cache" (--calibration-cache); NULL = neither */
    const char *calibration_cache, *calibration_cache_key;  /* the cache file and entry, or NULL */
    long shared_prefix_tokens;      /* tokens two measured prompts share at their start */
    const char *shared_prefix_method;   /* how that was measured, or why not; NULL: tokens not written */
    int prewarmed_connections;      /* connections opened before measuring */
    double client_cpu_user_s, client_cpu_sys_s; /* anvil's CPU time while requests ran */
    long stamps_kernel, stamps_clock;   /* how arrival times were taken (driver.h) */
    const char *transport;          /* "native" or "curl" (net/http.h), NULL = not known */
    int threads;                    /* measuring loops the run used; 0 = not known */
    const struct bench_thread *per_thread;  /* threads entries (borrowed), or NULL */
    bool peak_known;                /* peak_events_per_s was measured (not a recovered run's) */
    long peak_events_per_s;         /* SSE events in one measuring loop's fullest 1-second bin */
    double ceiling_events_per_s;    /* the client's last measured ceiling (run/ceiling.h); ≤ 0 or NaN = none */
    const char *ceiling_measured_at;    /* when it was measured (UTC ISO-8601), or NULL */
    bool incomplete;                /* the run was cut short */
    const char *incomplete_reason;  /* NULL when complete */
    struct sweep_place sweep;
    const char *dataset;            /* "jsonl:FILE"/"sharegpt:FILE", NULL for synthetic */
    const struct dataset *agentic;  /* agentic sessions as sent (entry = (warmup + request_index) mod n),
                                       or NULL */
    const char *agentic_source;
    const struct bench_images *images;  /* NULL = none */
    const struct bench_prefix_cache *prefix_cache;  /* strings borrowed; achieved_hit_rate and met
                                       are computed from the summary; NULL = none */
    const struct bench_trace *trace;/* a replayed trace (strings borrowed; measured_prefix_hit_rate and
                                       late_sends are computed from the records), or NULL */
    double input_range, output_range;   /* ratios */
    long shared_prefix_len;         /* tokens */
    double duration_s, warmup_s;    /* duration mode (0 = off) */
    double window_s;                /* the window's actual length (shorter when cut by a cap or signal) */
    int64_t window_start_ns, window_end_ns;     /* the window, CLOCK_MONOTONIC ns */
    double server_tokens_in_window; /* Δ of the server's generation counter over it; NaN unknown */
    bool cache_contaminated;        /* > 5% of prompt tokens cached though every prompt was unique */
    long journal_lines_lost;        /* journal lines whose write failed; -1 = no journal was written */
    long max_request_rows;          /* request_timings and failures list requests of request_index
                                       below this (--max-request-rows); <= 0 = every one */
    bool rows_streamed;             /* the rows are left out of the struct: the writer streams them
                                       (artifact_write_streamed), only counted here */
    bool server_gone;               /* the server stopped answering: */
    double gone_first_failure_s;    /* seconds after the run's start */
    long gone_connect_failures, gone_truncated;
    bool server_stalled;            /* no byte on any in-flight request for the stall timeout: */
    double stall_timeout_s;         /* the timeout, s */
    double stall_detected_s;        /* when the run saw it, seconds after the run's start */
    double stall_silent_s;          /* how long the server had been silent then, s */
    long stall_in_flight;           /* requests in flight then (ended, failed) */
    int argc;                       /* the command line as given to the command (argv[0] "run"), for */
    char *const *argv;              /* `provenance` (redacted when written); argc 0 = not recorded */
};

/* ---- the artifact, field by field ----
 * Conventions: strings are owned (NULL = null, or absent where the reader
 * allows it); numbers are doubles with NaN = null; whole numbers are longs
 * with ARTIFACT_NONE = absent or null; a block a seed-shaped file may lack
 * has `present`. Anvil writes every field; the reader requires only what a
 * round of a matrix needs (see benchmark_from_json). */

/* A name → count object, in file order (context_distribution,
 * failed_by_category, output_token_sources). */
struct bench_count {
    char *key;
    long count;
};

struct bench_counts {
    struct bench_count *v;
    size_t n;
};

/* Seed 001's serve_flags: how the server was started (anvil writes fixed
 * values: it does not start servers). */
struct bench_serve_flags {
    bool present;
    bool no_thinking, shared_prefix_burst;
    char *reasoning_effort, *thinking_mode;     /* NULL = null */
};

struct bench_slo {
    bool present;
    double ttft_ms, tpot_ms, e2el_ms;   /* NaN = not set */
};

/* One probe of the prompt-length search (struct calib_step). */
struct bench_calib_step {
    long filler_words;
    long tokens;                /* what the server counted; ARTIFACT_NONE = null (it refused the probe) */
    bool truncated;             /* counted, but cut by the server: not used (written only when true) */
};

/* The prompt-length search (struct calibration), keys of `calibration`
 * written only when it ran (present). */
struct bench_calib_search {
    bool present;
    long target_tokens, tolerance_tokens;   /* tokens */
    long filler_words;                      /* the chosen filler length, words */
    long measured_tokens;                   /* what the server counted for it, tokens */
    bool converged;
    struct bench_calib_step *steps;         /* owned, n_steps of them */
    size_t n_steps;
};

struct bench_calibration {
    bool present;
    char *method;               /* "tokenize", "probe", "none", "dataset" */
    struct bench_calib_search search;
    char *source;               /* "measured" or "cache"; NULL = null */
    char *cache_file, *cache_key;   /* --calibration-cache's file and entry; NULL = null */
    char *shared_prefix_method; /* how shared_prefix_tokens was measured, or why not; NULL = null */
};

/* The server stopped answering mid-run (present false: it did not). */
struct bench_server_gone {
    bool present;
    double first_failure_s;     /* the streak's first failure, seconds after the run's start */
    long connect_failures, truncated;
};

/* The server stalled: requests in flight and no byte on any of them for
 * the stall timeout (present false: it did not). */
struct bench_server_stalled {
    bool present;
    double stall_timeout_s;     /* --stall-timeout-s as the run used it, s */
    double detected_s;          /* when the run saw it, seconds after the run's start */
    double silent_s;            /* the server's silence then, s */
    long in_flight;             /* requests in flight then: ended as failed (timeout) */
};

/* null when not a duration-mode run (present false). */
struct bench_duration_mode {
    bool present;
    double duration_s, warmup_s, window_s;
    double tokens_in_window, aggregate_tps;     /* NaN = null */
    long requests_started_in_window, incomplete_requests, warmup_requests;
    double window_start_ns, window_end_ns;      /* the window on the client's CLOCK_MONOTONIC; NaN = null */
    char *token_source;         /* the weakest source any counted stream needed (stats/tokens.h); NULL = null */
    double server_tokens_in_window;             /* Δ of the server's generation counter; NaN = null */
};

/* steady_state (stats/steady.h): the longest stretch where the load held
 * its target, and the headline figures over it; absent in artifacts of
 * anvil before it (present false). NaN = null. */
struct bench_steady {
    bool present;
    bool reached;
    char *reason;               /* a STEADY_* key; NULL = null (reached) */
    char *basis;                /* "in_flight", "completion_rate" or "none" */
    double target;              /* requests in flight or requests/s, as basis says */
    double band;                /* ratio: ± this share of the target */
    double not_before_s;        /* no step counted before this (a ramp's end), s from the first send */
    double run_s;               /* the run: first measured send → last end */
    double start_s, end_s, length_s;    /* the longest stretch in the band, s from the first send */
    double share;               /* length_s / run_s */
    double level;               /* mean in flight or completion rate over the stretch */
    long requests;              /* completed requests whose start and end lie inside it */
    double ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, tpot_p99_ms, itl_p50_ms, itl_p99_ms, e2e_p50_ms,
           e2e_p99_ms;
    double output_throughput, request_throughput;  /* tokens/s, requests/s over the stretch */
};

/* A replayed trace (workload.trace; absent for other workloads). */
struct bench_trace {
    bool present;
    char *format;               /* "mooncake" or "azure" */
    long lines, requests;       /* requests in the file; replayed (the window, capped) */
    long block_tokens;          /* tokens per hash_ids block (512) */
    double speed, start_s;      /* the clock's scale; the window's start after the first request */
    double duration_s;          /* the window's length; NaN = null (to the end) */
    double span_s;              /* scaled time from the window's first request to its last */
    double theoretical_prefix_hit_rate; /* trace_theoretical_hit_rate: an unbounded cache, in order */
    double measured_prefix_hit_rate;    /* Σ cached_tokens / Σ prompt_tokens; NaN = null (not reported) */
    long late_sends;            /* measured requests sent more than late_send_threshold_ms after their time */
    double late_send_threshold_ms;
    double server_prefix_hit_rate;      /* from the server's counters over the load (run_delta); NaN = null */
    char *server_prefix_hit_rate_source;/* the counters (or gauge) it came from; NULL = null */
};

/* Prefix-cache control (workload.prefix_cache; absent when neither
 * --flush-cache nor --prefix-hit-rate was given). */
struct bench_prefix_cache {
    bool present;
    char *flush;                /* "flushed", "unsupported", "failed" (cache_flush_name) */
    char *flush_endpoint;       /* "/reset_prefix_cache", "/flush_cache"; NULL = null (none) */
    double target_hit_rate;     /* NaN = null (--flush-cache alone) */
    long groups, primed_requests;   /* prefixes; unmeasured requests that put them in the cache */
    long prefix_tokens;         /* tokens of each prefix, chat template included */
    double achieved_hit_rate;   /* Σ cached_tokens / Σ prompt_tokens of measured requests; NaN = null */
    double tolerance;           /* relative: met when |achieved − target| ≤ tolerance · target */
    bool met;
    double server_hit_rate;     /* from the server's counters over the load (run_delta); NaN = null */
    char *server_hit_rate_source;   /* the counters (or gauge) it came from; NULL = null */
    int server_met;             /* server_hit_rate within tolerance of the target: 1, 0; -1 = null */
};

/* One turn index of agentic sessions: means over the completed requests
 * of that turn (NaN = null: none). */
struct bench_agentic_turn {
    long turn, requests;
    double time_to_first_output_ms, ttft_ms, prompt_tokens, cached_tokens;
    double think_time_ms;           /* the think time planned before the turn */
    double gap_ms;                  /* measured: send − end of the last request it waited for */
    long sub_agent_requests;        /* completed sub-agent requests the turn spawned */
    double sub_agent_time_to_first_output_ms, sub_agent_prompt_tokens, sub_agent_cached_tokens;
};

/* Agentic sessions (workload.agentic; absent for other workloads). */
struct bench_agentic {
    bool present;
    char *source;               /* "file:PATH" or the generator's settings */
    long sessions, turns;       /* sessions and turns sent (the agents' requests) */
    long sub_agent_requests;    /* sub-agent requests sent */
    long sessions_completed;    /* sessions whose every turn completed */
    double session_wall_ms_mean, session_wall_ms_p50, session_wall_ms_max;  /* first send → last end */
    struct bench_agentic_turn *per_turn;    /* owned, by turn index */
    size_t n_per_turn;
};

/* Synthetic images (workload.images; absent without --images-per-request). */
struct bench_images {
    bool present;
    long per_request, width, height;    /* pixels */
    double tokens_per_image;            /* as the server counted them (calibration probes); NaN = null */
    char *format;                       /* "png" or "jpeg" (owned in struct benchmark; borrowed in
                                           bench_meta) */
};

struct bench_workload {
    bool present;
    char *dataset;              /* NULL = null (synthetic prompts) */
    double input_len_range, output_len_range;
    long shared_prefix_len;
    struct bench_trace trace;
    struct bench_prefix_cache prefix_cache;
    struct bench_agentic agentic;
    struct bench_images images;
};

/* null when the run is not a round of a sweep (present false). */
struct bench_sweep {
    bool present;
    char *target, *case_id;
    long round;
};

/* The event loop's lag probe (client.loop_lag_ms): ms, NaN = null (no sample). */
struct bench_loop_lag {
    double p50, p99, max;
    long samples;
};

/* A measuring thread's lag probe (client.per_thread[].loop_lag_ms). */
struct bench_thread_lag {
    double p99, max;            /* ms; NaN = null (no sample) */
    long samples;
};

/* client.arrival_stamps: how arrival times were taken (driver.h). */
struct bench_arrival_stamps {
    long kernel_rx, client_clock;
};

/* client.per_thread[i]: what measuring loop i carried and how late it ran. */
struct bench_thread {
    long requests;                      /* measured requests it sent */
    struct bench_thread_lag loop_lag_ms;    /* its lag probe */
};

struct bench_client {
    bool present;
    double cpu_user_s, cpu_sys_s;
    long sse_events;
    double cpu_us_per_event, cpu_utilization;   /* NaN = null */
    struct bench_loop_lag loop_lag_ms;
    double send_lateness_p99_ms;
    struct bench_arrival_stamps arrival_stamps;
    long threads;                   /* measuring loops; 0 = not recorded (older artifacts: null) */
    char *transport;                /* "native" or "curl"; NULL = not recorded (older artifacts, recovered runs) */
    struct bench_thread *per_thread;    /* owned; n_per_thread entries, NULL = not recorded */
    size_t n_per_thread;
    long peak_events_per_s_per_thread;  /* SSE events one measuring loop read in its fullest 1-second
                                           bin; ARTIFACT_NONE = null (not recorded) */
    double ceiling_events_per_s;        /* the last `anvil ceiling` of this machine; NaN = null (none) */
    double ceiling_share;               /* peak ÷ ceiling; NaN = null */
    char *ceiling_measured_at;          /* owned; NULL = null */
};

/* timing_methodology: definitions in words; NULL = the file has no such
 * entry (seed 001 has 9 of anvil's 15). */
struct bench_methodology {
    bool present;
    char *clock, *request_start, *ttft, *time_to_first_output, *e2e, *generation, *tpot,
         *mean_inter_token_latency, *decode, *effective_prefill, *output_tokens, *itl, *throughput,
         *distributions, *percentile_method;
};

/* The distributions of `metrics`, named as there (<name>_<stat>_ms for
 * times, <name>_<stat> otherwise; a distribution a file lacks reads as no
 * samples). mean_inter_token_latency is seed 001's alias of tpot (written
 * under "mean_inter_token_latency_ms_<stat>"). */
struct bench_dists {
    struct dist ttft, time_to_first_output, e2e, generation, tpot, mean_inter_token_latency,
                decode_tok_s, effective_prefill_tok_s, prompt_tokens;
    /* anvil's additions */
    struct dist visible_generation, output_tokens_per_request, itl, itl_per_token, tokens_per_chunk,
                time_to_headers, time_to_first_byte, time_to_first_event, time_to_second_output,
                generation_tps_per_user, send_lateness, scheduled_ttft, scheduled_e2e;
};

/* Energy over the window (artifact/observe.c): keys of `metrics` in
 * artifacts of runs that observed the hardware (present); NaN = null. */
struct bench_energy {
    bool present;
    double energy_j, output_tokens_per_joule, joules_per_output_token;
};

/* The invariant checks' counts (stats/invariants.h); absent in seed files. */
struct bench_invariants {
    bool present;
    struct invariants v;
};

struct bench_metrics {
    struct bench_dists dist;
    long content_chunks;
    double content_chunks_s;            /* seed 001's; null */
    long reasoning_chunks;
    long tool_call_chunks, tool_calls;  /* Σ over completed requests; 0 when no reply called a tool */
    struct bench_counts output_token_sources;   /* requests by source: "usage", "tokenize", "chunks" */
    long output_tokens, prompt_tokens;  /* Σ over completed requests */
    long prompt_token_samples;
    double prefix_cache_hit_avg, throughput_tok_s;
    double request_throughput, output_throughput, total_token_throughput, goodput_rps,
           aggregate_tps, peak_output_tps_1s;
    struct bench_energy energy;
};

/* One request_timings entry: a completed request. */
struct bench_timing {
    long content_chunks;
    double decode_tok_s, e2e_ms, effective_prefill_tok_s, generation_ms, mean_inter_token_latency_ms;
    char *output_token_source;          /* "usage", "tokenize" or "chunks" (stats/tokens.h) */
    long output_tokens;
    double planned_context_tokens, prompt_tokens;   /* NaN = null (dataset prompt; not reported) */
    long reasoning_chunks, request_index;
    double time_to_first_output_ms, tpot_ms, ttft_ms, visible_generation_ms;
    /* anvil's additions */
    double time_to_headers_ms, time_to_first_byte_ms, time_to_first_event_ms,
           time_to_second_output_ms, generation_tps_per_user, send_lateness_ms, scheduled_ttft_ms,
           scheduled_e2e_ms, e2e_output_tps_per_user;
    long output_chunks;
    long tool_call_chunks, tool_calls;  /* chunks with tool-call deltas; tool calls the reply opened */
    double cached_tokens;               /* NaN = null (not reported) */
    char *finish_reason;
    long max_tokens;
    double start_monotonic_ns;          /* client CLOCK_MONOTONIC at request start */
    bool first_output_merged;           /* ttft_ms is an upper bound (record.h); false when absent */
    char *trace_id;                     /* the traceparent's trace id sent (--traceparent); NULL = none */
};

/* One failures entry. */
struct bench_failure {
    long request_index;
    char *category;                     /* fail_kind_name */
    long http_status;                   /* ARTIFACT_NONE = null (no response) */
    char *phase;                        /* "response", "before_response", ... */
    char *message;
    double elapsed_ms;                  /* NaN = null */
    char *trace_id;                     /* as bench_timing's */
};

/* timeseries.rows[].server: the server's gauges in the row, the mean of
 * the server_metrics.series points whose midpoints fall in it (NaN: the
 * server has no such gauge); absent (null) when no point falls in it. */
struct bench_ts_server {
    bool present;
    double running_requests, waiting_requests, kv_cache_usage;
};

/* timeseries.rows[].gpu: every GPU at each hardware.series point in the
 * row — util_pct their mean, power_w and mem_used_mb their sum, temp_c the
 * hottest — then the mean over the row's points; null as above. */
struct bench_ts_gpu {
    bool present;
    double util_pct, power_w, temp_c, mem_used_mb;
};

/* One timeseries row (stats/timeseries.h, struct ts_point). */
struct bench_ts_row {
    double t_s;
    long started, completed, failed, cut, output_tokens, in_flight;
    double ttft_p50_ms, ttft_p99_ms, itl_p50_ms, itl_p99_ms;    /* NaN = null */
    long ttft_samples, itl_samples;
    struct bench_ts_server server;
    struct bench_ts_gpu gpu;
};

/* timeseries: the run over time (docs/ARTIFACTS.md; absent in artifacts of
 * older runs, merged shards and recovered journals). */
struct bench_timeseries {
    bool present;
    double interval_s, requested_interval_s, exact_from_s;
    double t0_monotonic_ns;             /* t_s = 0: the first measured send, CLOCK_MONOTONIC */
    long late_requests;
    struct bench_ts_row *rows;          /* owned */
    size_t n_rows;
};

struct benchmark {
    char *schema, *measurement_protocol, *run_id, *started_at, *finished_at;
    char *base_url, *model, *engine;
    char *gpu;                          /* NULL = null */
    long concurrency, requests, completed, failed;
    double context_tokens;              /* NaN = null (dataset prompts) */
    double context_tokens_measured;     /* mean usage.prompt_tokens; NaN = null (none reported) */
    struct bench_counts context_distribution;
    long context_seed;
    double max_context_tokens;          /* tokens one request may take; NaN = null (the server did not say) */
    char *max_context_source;           /* the field it was read from ("/props default_generation_settings.n_ctx",
                                           "/models max_model_len", ...); NULL = null */
    double max_input_tokens;            /* tokens a prompt alone may take (SGLang, TGI); NaN = null */
    long max_tokens;
    double wall_clock_ms;
    cJSON *manifest, *source_recipe, *tier;     /* seed 001's, kept as found; NULL = null */
    struct bench_serve_flags serve_flags;
    /* anvil's additions */
    char *endpoint, *engine_detected, *engine_version;
    long warmup_requests;
    double request_rate;                /* NaN = null: closed loop */
    double burstiness;                  /* NaN = null (closed loop), INFINITY = "inf" */
    double achieved_request_rate;
    char *load_mode;
    struct bench_slo slo;
    long good_requests;                 /* with SLOs; ARTIFACT_NONE: none set (then neither it */
    double good_request_share;          /* nor good_request_share is written) */
    long prewarmed_connections;
    bool ignore_eos;
    long not_sent;
    bool incomplete;
    char *incomplete_reason;
    long ignore_eos_violations;
    struct bench_invariants invariants;
    long prompt_token_mismatches, usage_over_max_tokens;
    bool cache_contaminated;
    long journal_lines_lost;            /* journal lines whose write failed (a full disk); ARTIFACT_NONE = null */
    long max_request_rows;              /* the rows' bound (--max-request-rows); ARTIFACT_NONE = none */
    long request_rows_left_out;         /* measured requests of request_index at or past it: in the
                                           journal, not listed; ARTIFACT_NONE = null (older artifacts) */
    double shared_prefix_tokens;        /* tokens two measured prompts share; NaN = null */
    struct bench_server_gone server_gone;
    struct bench_server_stalled server_stalled;
    struct bench_counts failed_by_category;
    struct bench_calibration calibration;
    struct bench_duration_mode duration_mode;
    struct bench_ramp ramp;
    struct bench_steady steady_state;
    struct bench_workload workload;
    struct bench_sweep sweep;
    struct bench_client client;
    bool client_bound;
    char *client_bound_reason;          /* why client_bound, in words ("" when not); NULL = absent (older) */
    long first_output_merged_requests;  /* completed requests with first_output_merged; ARTIFACT_NONE = absent */
    struct provenance provenance;
    struct bench_methodology timing_methodology;
    struct bench_metrics metrics;
    struct bench_timing *request_timings;
    size_t n_request_timings;
    struct bench_failure *failures;
    size_t n_failures;
    /* What the server and the hardware said over the window, written after
     * `failures` by artifact/observe.c (docs/ARTIFACTS.md): kept as found —
     * server_metrics and hardware objects, hardware_run_summary an object or
     * null — and written back as read; NULL = absent (artifacts of runs
     * before anvil observed them). observe_figures_of (artifact/observe.h)
     * reads the figures a sweep uses from them. */
    cJSON *server_metrics, *hardware, *hardware_run_summary;
    struct bench_timeseries timeseries; /* written after them by the run (artifact/timeseries.h) */
    /* A run spread over processes (MPI ranks or shards; docs/ARTIFACTS.md,
     * "ranks"), written last: kept as found once its shape is checked
     * (count, alignment, plan, missing and per_rank entries with rank,
     * host, pid, threads, requests and the clock offset fields); NULL =
     * absent (a single process). */
    cJSON *ranks;
};

/* ---- building, writing, reading ---- */

/* Fills *out from a run: meta, the n records (those never sent, warm-ups
 * and, in duration mode, requests cut at the window's end are left out of
 * request_timings and failures) and their summary; provenance from
 * meta->argc/argv and the host. Returns 0, or -1 when memory runs out
 * (*out is then empty). Release with benchmark_free. */
int benchmark_from_run(const struct bench_meta *meta, const struct req_record *recs, int n,
                       const struct run_summary *s, struct benchmark *out);

/* benchmark_from_run over records read one at a time (one pass over it;
 * an agentic run's records must be an array: rec_iter_array). Returns 0,
 * or -1 when memory runs out or it fails (it->err says why). */
int benchmark_from_iter(const struct bench_meta *meta, struct rec_iter *it, const struct run_summary *s,
                        struct benchmark *out);

/* Whether record r is one of the artifact's rows under meta's bound: a
 * measured request sent (not a warm-up, not cut at a window's end) of
 * request_index below max_request_rows. *measured (may be NULL) tells
 * whether it is measured at all (counted as left out when not a row). */
bool benchmark_row_of(const struct bench_meta *meta, const struct req_record *r, bool *measured);

/* The artifact's JSON: every field of b in seed 001's order with anvil's
 * additions after them. Returns a new tree the caller deletes, or NULL when
 * memory runs out. */
cJSON *benchmark_to_json(const struct benchmark *b);

/* Reads a benchmark/v1 artifact (parsed) into *out. Required: schema
 * (BENCHMARK_SCHEMA), engine, concurrency, completed, failed,
 * context_tokens (may be null), max_tokens and metrics; every other field
 * may be absent (seed 001 and older anvils lack anvil's additions; a
 * missing distribution reads as none) but must have its type when present.
 * Unknown keys are ignored. Returns 0, or -1 with "NAME: key.path: what" in
 * err (NAME omitted when NULL; *out is then empty). */
int benchmark_from_json(const cJSON *j, const char *name, struct benchmark *out, char *err,
                        size_t errlen);

/* Reads the artifact file at path through benchmark_from_json (messages
 * name path); sha_out, when not NULL, gets the SHA-256 (hex) of the bytes
 * read (SHA256_HEX_LEN + 1 bytes; "" when libcrypto fails). Returns 0, or -1
 * with err set (cannot read, not JSON, not a valid artifact). */
int benchmark_read_file(const char *path, struct benchmark *out, char *sha_out, char *err,
                        size_t errlen);

/* One request_timings or failures entry as JSON, as benchmark_to_json
 * writes it. Caller deletes; NULL when memory runs out. */
cJSON *benchmark_timing_json(const struct bench_timing *t);
cJSON *benchmark_failure_json(const struct bench_failure *f);

/* The `timeseries` object as benchmark_to_json writes it (after
 * hardware_run_summary, before ranks). Caller deletes; NULL when memory
 * runs out. */
cJSON *benchmark_timeseries_json(const struct bench_timeseries *t);

/* The calibration search c records (benchmark_from_run's inverse) in *out,
 * at most CALIB_MAX_STEPS steps. Returns out, or NULL when c has no search. */
const struct calibration *bench_calibration_search(const struct bench_calibration *c, struct calibration *out);

/* Frees everything *b owns and empties it (safe on an emptied one). */
void benchmark_free(struct benchmark *b);

/* Builds the artifact of a run (benchmark_from_run, then benchmark_to_json).
 * Returns a new cJSON tree the caller deletes, or NULL when memory runs out. */
cJSON *artifact_benchmark(const struct bench_meta *meta, const struct req_record *recs, int n,
                          const struct run_summary *s);

/* Adds one distribution to a metrics object under seed 001's names:
 * <base>_{mean,min,p25,p50,p75,p90,p95,p99,max}_ms when ms, else
 * <base>_<stat>; and <base>_samples. NaN values are written as null. */
void artifact_add_dist(cJSON *o, const char *base, bool ms, const struct dist *d);

/* One request_timings entry of a completed request (seed 001's fields plus
 * the TTFT decomposition and chunk counts), as a JSON object the caller
 * deletes (also the --requests-out line); NULL when memory runs out. */
cJSON *artifact_request_timing(const struct req_record *r);

/* One failures entry: request_index, category, http_status, phase, message,
 * elapsed_ms. Caller deletes; NULL when memory runs out. */
cJSON *artifact_failure(const struct req_record *r);

#endif
