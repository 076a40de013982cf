/* cell.h — one cell of the decode matrix: C streams at one context, kept
 * running (each replaced as it ends) through a warm-up that lasts until the
 * readiness gate opens (gate.h) or the cell's warm-up timeout, then a
 * duration-mode window of duration_s — one run_execute (run/run.h) — and
 * the seed-004 figures of that window: client tokens by arrival, request
 * samples, the server's counters and the hardware's (docs/DECODE.md). */
#ifndef ANVIL_DECODE_CELL_H
#define ANVIL_DECODE_CELL_H

#include <stdbool.h>

#include "artifact/decode_matrix.h"
#include "decode/prefill.h"
#include "run/run.h"

struct decode_cell_cfg {
    const struct run_config *base;  /* the run flags (server, model, headers, telemetry, ...); not owned */
    long concurrency;               /* C */
    long context_tokens;            /* prompt + max_tokens of every request; 0 = a minimal prompt */
    long max_tokens;
    double duration_s;              /* the window */
    double warmup_timeout_s;        /* the longest warm-up before the window opens anyway */
    double ready_stable_s;          /* how long the gate's condition must hold */
    const char *metrics_url;        /* the server's /metrics; NULL = none (client criterion) */
    const struct curl_slist *metrics_headers;   /* sent with its scrapes: the run's headers when it is
                                                   on the base URL's origin, else NULL; not owned */
    double kv_budget_tokens;        /* the server's KV pool (startup discovery); NaN unknown */
    double accept_norm_ref_len;     /* accept_norm_tps = steps/s × this; 0 = off (written 0) */
    enum prefill_metric prefill_metric; /* the scout entry's headline */
    const char *bench_out;          /* the cell's benchmark/v1 artifact (the run's own) */
};

/* What a cell gave. */
struct decode_cell_result {
    enum run_status status;
    char error[1024];               /* when the run failed (secrets scrubbed) */
    bool measured;                  /* the window ran to its end: the cell counts */
    bool server_gone;               /* the server stopped answering */
    bool server_stalled;            /* no byte on any in-flight request for the stall timeout
                                       (error then says so: run_stalled_text) */
    bool interrupted;               /* a signal stopped the run */
    struct decode_cell cell;        /* the results[] cell (with ready_trace); owned; filled when measured */
    /* the cell's first request: the integrated prefill scout (prefill_scout_entry, validated by
       prefill_validate from the gate's scrapes around it: decode_gate_scout_report) */
    bool scout;                     /* it timed a prefill: scout_entry holds it */
    struct prefill_entry scout_entry;
    int64_t t_scout_first_token;    /* CLOCK_MONOTONIC */
    /* for the event log */
    bool calibrated;                /* the run calibrated its prompts (run_result's) */
    const char *calibration_source; /* "measured" or "cache" (static) */
    long calibration_words, calibration_tokens;
    int64_t t_first_send;           /* CLOCK_MONOTONIC: the cell's first request went out */
    int64_t t_ready;                /* CLOCK_MONOTONIC: window start */
    char ready_line[400];           /* "ready ..." or "warmup timeout ..." */
};

/* The prompt length of a cell's requests (run_config.input_len):
 * context − max_tokens (the request then holds the context in the KV cache
 * at its end); 0 — `anvil run`'s minimal prompt — for context 0 or one not
 * above max_tokens. */
long decode_prompt_len(long context_tokens, long max_tokens);

/* Runs the cell c describes into *out (decode_cell_result_free releases
 * it). Returns out->status. */
enum run_status decode_cell_run(const struct decode_cell_cfg *c, struct decode_cell_result *out);

/* The seed's engine steps and what follows from them (methodology,
 * acceptance_normalization): steps = drafts + max(0, out − (accepted +
 * drafts)); accept_len = out / steps; steps_per_s = aggregate_tps /
 * accept_len. NaN where an input is NaN or steps is 0. */
void decode_engine_steps(double out_tokens, double drafts, double accepted, double aggregate_tps,
                         double *steps, double *accept_len, double *steps_per_s);

/* The server's figures of a cell's window from obs's server summary into
 * *o (NaN, ARTIFACT_NONE where the server does not say; obs NULL: none):
 * generation throughput, utilization, acceptance, the counters' window
 * deltas — rounded to whole numbers once, here, before engine steps and
 * steps/s are derived from them (decode_engine_steps; output tokens the
 * server's, else o->client_output_tokens; steps/s needs o->aggregate_tps),
 * accept_norm_tps = steps/s × accept_norm_ref_len (0 when the length is 0)
 * and the running/queued request gauges. */
void decode_server_figures(const struct observe_report *obs, double accept_norm_ref_len, struct decode_cell *o);

/* Frees what *r owns (its cell and scout entry); safe on an emptied result. */
void decode_cell_result_free(struct decode_cell_result *r);

#endif
