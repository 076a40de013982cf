/* decode_matrix.h — the sustained-decode matrix (seed 004's shape:
 * concurrency × context cells measured in duration mode, no schema field)
 * as typed structs, and its one writer and one checked reader. `anvil
 * decode` (decode/) fills the structs; `anvil show` and `anvil report`
 * read them. Both directions walk the same field tables
 * (artifact/fields.h), so a key written is a key read: a missing or
 * mistyped field is an error naming the file and key path. Member names
 * are the seed's keys. Strings are owned (malloc'd); decode_matrix_free /
 * the *_free functions release them. Numbers NaN and whole numbers
 * ARTIFACT_NONE are written null: a figure the server or host does not
 * report is never made up. */
#ifndef ANVIL_ARTIFACT_DECODE_MATRIX_H
#define ANVIL_ARTIFACT_DECODE_MATRIX_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/fields.h"
#include "observe/observe.h"

struct secrets;

/* A copy of s (NULL stays NULL); NULL also when memory runs out. */
char *decode_text(const char *s);

/* Seed 004's hardware summary over a window (hardware_run_summary, each
 * cell's and prefill entry's hardware_summary). present false: no GPU
 * reading (a cell's is written null, a prefill entry's {}). */
struct decode_hw {
    bool present;
    double samples, duration_seconds, gpu_count;
    double cpu_util_avg_pct, cpu_temp_max_c;
    double gpu_util_avg_pct, gpu_util_max_pct, mem_util_avg_pct, mem_util_max_pct;
    double temp_avg_c, temp_max_c;
    double power_total_avg_w, power_total_max_w, power_limit_total_w;
    double vram_used_avg_mb, vram_used_max_mb, vram_total_mb, vram_used_avg_pct, vram_used_max_pct;
    double pcie_rx_avg_mb_s, pcie_rx_max_mb_s, pcie_tx_avg_mb_s, pcie_tx_max_mb_s;
};

/* obs's hardware run summary (observe's, over its window) into *out;
 * present false without obs, a hardware reading or a GPU. */
void decode_hw_of(const struct observe_report *obs, struct decode_hw *out);

/* One request of a cell (`results[].request_samples[]`), seconds. A request
 * still running when the window closed has completed false, latency and
 * e2e_output_tps_per_user 0 (the seed's convention) and its figures up to
 * its last token. */
struct decode_request_sample {
    double ttft;                    /* send → first content token */
    double time_to_second_token;    /* first → second output chunk */
    double latency;                 /* send → end of stream (0 when not completed) */
    double inter_token_latency_avg; /* (last token − first token) / (output_tokens − 1) */
    double chunk_inter_token_latency_avg;   /* mean gap between output chunks */
    long input_tokens, output_tokens;
    double output_tps_per_user;     /* (output_tokens − 1) / (last token − first token) */
    double e2e_output_tps_per_user; /* output_tokens / latency (0 when not completed) */
    bool completed;
};

/* avg, p50, p90, p99 of one figure over a cell's samples (NaN = none),
 * written as NAME_avg, NAME_p50, NAME_p90, NAME_p99. */
struct decode_stat4 {
    double avg, p50, p90, p99;
};

/* One observation of the readiness gate (`results[].ready_trace[]`). */
struct decode_gate_point {
    double t_s;                     /* since the cell's first send, s */
    double running_reqs, queue_reqs;    /* the server's; NaN without server metrics */
    long active_streams, decoding_streams;
    bool met;                       /* the gate's condition held */
};

/* Draft-position acceptance probabilities (server_spec_pos_accept). */
struct decode_pos_accept {
    int n;
    double v[SRV_MAX_POS];          /* NaN written null */
};

/* One `results` cell (benchmark_mode "duration"), or a `burst_results`
 * entry (benchmark_mode "burst": the keys up to num_errors, less
 * server_output_tokens). Seed 004's fields and units (seconds, tokens,
 * tokens/s). */
struct decode_cell {
    long concurrency, context_tokens;
    char *benchmark_mode;           /* "duration" or "burst" */
    long request_count_target;      /* requests a burst was to send; 0 in duration mode */
    long warmup_request_count;
    double measurement_seconds;     /* window start → last token counted in it */
    double measurement_wall_seconds;/* the window's length */
    long client_output_tokens;      /* tokens that arrived inside the window */
    long server_output_tokens;      /* the server's Δ generation tokens over the window, rounded
                                       once (ARTIFACT_NONE: not reported) */
    char *aggregate_source;         /* openai_continuous_usage, client_chunks, prometheus_fallback, ... */
    double aggregate_tps, per_request_avg_tps;
    struct decode_stat4 ttft, time_to_second_token, request_latency, inter_token_latency;
    struct decode_stat4 output_tps_per_user, e2e_output_tps_per_user, chunk_inter_token_latency;
    double input_seq_len_avg;
    struct decode_stat4 output_seq_len;
    long request_count, completed_request_count;
    struct decode_request_sample *request_samples;
    size_t n_request_samples;
    long total_tokens;
    double wall_time;               /* the cell from its first send to its last end, s */
    long num_completed, num_errors;
    /* duration cells only: the server's generation tok/s, utilization (share 0..1), draft
     * acceptance (share) and tokens per decode step; its counters over the window, rounded
     * once before anything is derived from them (ARTIFACT_NONE: not reported) */
    double server_gen_throughput, server_utilization, server_spec_accept_rate, server_spec_accept_length;
    long server_spec_drafts, server_spec_draft_tokens, server_spec_accepted_tokens;
    struct decode_pos_accept server_spec_pos_accept;
    double server_engine_steps, server_steps_per_s, server_accept_len_effective;
    double accept_norm_tps, accept_norm_ref_len;
    double avg_running_reqs, max_running_reqs;
    long effective_concurrency;
    double avg_queue_reqs, max_queue_reqs, queue_fraction;
    bool underfilled;               /* the server ran fewer requests than asked */
    bool warmup_timed_out;          /* the readiness gate never opened: measured anyway */
    double warmup_duration;         /* first send → window start, s */
    char *ready_reason, *timeout_reason;
    bool capacity_limited;          /* the KV pool could not hold the asked concurrency */
    char *capacity_reason;
    struct decode_hw hardware_summary;  /* over the window; written null when not present */
    struct decode_gate_point *ready_trace;
    size_t n_ready_trace;
    double window_start_monotonic_ns, window_end_monotonic_ns;
};

/* The server's side of a prefill entry (`server_validation`). Numbers
 * are 0 when not valid (the seed's convention), the reason in
 * invalid_reason. */
struct decode_prefill_check {
    char *method;
    double tok_per_sec, prefill_seconds;
    long prompt_tokens, request_prompt_tokens, cached_tokens;
    char *token_source;
    long samples;
    char *invalid_reason;
};

/* One `prefill` entry, keyed by its context in the file. Times in seconds,
 * rates in prompt tokens per second, 0 where nothing completed. */
struct decode_prefill {
    bool present;                   /* a cell file's scout: false = null */
    long context_tokens;            /* the key */
    double ttft_seconds, prefill_seconds, tok_per_sec, client_ttft_seconds, client_tok_per_sec;
    long prompt_tokens, samples;
    char *method;                   /* standalone, scout_only, integrated_scout */
    struct decode_prefill_check server_validation;
    struct decode_hw hardware_summary;  /* written {} when not present */
    long concurrent_streams;        /* a scout's: streams beside it; ARTIFACT_NONE = left out */
};

/* The `prefill` object: entries in order. */
struct decode_prefill_map {
    struct decode_prefill *v;
    size_t n;
};

/* {"<context>": {"<concurrency>": tok/s}} (summary_table,
 * burst_summary_table): one entry per cell, rows in order of first
 * appearance. */
struct decode_tps {
    long context_tokens, concurrency;
    double tps;
};
struct decode_tps_table {
    struct decode_tps *v;
    size_t n;
};

/* A list of whole numbers (concurrency_levels, context_lengths). */
struct decode_longs {
    long *v;
    size_t n;
};

/* A name → string object (env, runtime, expected). */
struct decode_strmap {
    char **key, **value;
    size_t n;
};

/* nvidia_p2p_override.mismatched: name → {runtime, expected}. */
struct decode_mismatch {
    char *name, *runtime, *expected;
};
struct decode_mismatches {
    struct decode_mismatch *v;
    size_t n;
};

struct decode_p2p {
    bool present;
    bool effective, configured;
    char *params_path;
    bool params_available;
    char *modprobe_path;
    bool modprobe_available;
    struct decode_strmap runtime, expected;
    char **missing;
    size_t n_missing;
    struct decode_mismatches mismatched;
    char *registry_dwords, *suggested_modprobe_line, *suggested_reload;
};

/* A check anvil does not run: {"status": "not_run", "reason": ...}. */
struct decode_not_run {
    bool present;
    char *status, *reason;
};

/* A program's run: {"cmd": [...], "returncode": N, "stdout", "stderr"};
 * returncode −1 when it could not run. */
struct decode_capture {
    bool present;
    char **cmd;
    size_t n_cmd;
    double returncode;              /* a number, not a whole: −1 is not "none" here */
    char *out, *err;                /* written "stdout", "stderr" */
};

/* startup_diagnostics.args: the command line's settings. */
struct decode_args {
    bool present;
    char *concurrency, *contexts;
    long max_tokens;
    double duration;
    long request_count;
    bool run_burst, standalone_prefill, prefill_only, skip_prefill;
    char *prefill_contexts, *prefill_metric;
    long prefill_samples, burst_requests_per_concurrency, dcp_size, kv_budget;
    double ready_stable_s, cell_warmup_timeout_s;
};

struct decode_diag {
    bool present;
    char *version, *server_url, *hostname, *uname;
    struct decode_args args;
    struct decode_strmap env;
    struct decode_p2p nvidia_p2p_override;
    struct decode_not_run p2pmark, amd_fabric;
    struct decode_capture nvidia_smi_query, nvidia_smi_topo;
};

struct decode_metadata {
    bool present;
    char *version, *engine, *model, *server, *timestamp, *decode_mode, *primary_decode_layer;
    double duration_per_test;       /* s */
    long request_count, warmup_request_count;
    bool run_burst;
    char *prefill_mode;
    bool standalone_prefill, prefill_only, skip_prefill;
    char *burst_e2e_status;
    long burst_request_count, burst_warmup_request_count, burst_requests_per_concurrency;
    double decode_warmup_seconds;
    long decode_warmup_context, decode_warmup_concurrency;
    double cell_warmup_timeout_seconds;
    char *cell_warmup_timeout_policy;
    double ready_stable_seconds;
    bool show_capacity_limited_values;
    long max_tokens;
    double temperature;             /* NaN = the server's default (null) */
    bool ignore_eos;
    double max_total_tokens;        /* the KV budget, tokens; NaN unknown */
    long dcp_size;
    bool metrics_available;
    char *metrics_warning;
    struct decode_longs concurrency_levels, context_lengths;
    bool startup_diagnostics_available, nvidia_p2p_override_effective;
    char *p2pmark_status, *amd_fabric_status;
    long cells_planned, cells_done;
    bool incomplete;
    char *incomplete_reason;        /* NULL (null) when complete */
};

/* One methodology entry; mode and status are left out when NULL. */
struct decode_method {
    bool present_obj;               /* the entry is there */
    char *name;
    bool present;
    char *mode, *status, *formula, *notes;
};

struct decode_methodology {
    bool present;
    struct decode_method prefill, sustained_decode, burst_e2e_decode, acceptance_normalization;
};

/* The whole artifact, in the file's key order. */
struct decode_matrix {
    struct decode_metadata metadata;
    struct decode_diag startup_diagnostics;
    struct decode_p2p nvidia_p2p_override;
    struct decode_not_run p2pmark, amd_fabric;
    struct decode_hw hardware_run_summary;      /* over every cell; null when none had a reading */
    char **event_log;
    size_t n_event_log;
    struct decode_prefill_map prefill;
    struct decode_cell *results;
    size_t n_results;
    struct decode_tps_table summary_table;      /* aggregate_tps of results */
    struct decode_cell *burst_results;
    size_t n_burst_results;
    struct decode_tps_table burst_summary_table;/* aggregate_tps of burst_results, 0 for none */
    struct decode_methodology methodology;
};

/* The tables (exposed for the round-trip tests and docs). */
extern const struct field_table decode_matrix_table, decode_cell_table, decode_burst_cell_table,
    decode_prefill_table, decode_prefill_check_table, decode_hw_table, decode_sample_table,
    decode_gate_point_table, decode_metadata_table, decode_diag_table, decode_args_table, decode_p2p_table,
    decode_not_run_table, decode_capture_table, decode_method_table, decode_methodology_table;

/* Whether j looks like a decode matrix: an object with a `metadata`
 * object holding `decode_mode` and a `results` array. */
bool decode_matrix_is(const cJSON *j);

/* Reads j into *out with the checked reader. Required: metadata (object)
 * with decode_mode (non-empty string), results (non-empty array) whose
 * cells have concurrency and context_tokens (whole numbers) and
 * aggregate_tps (number or null); every other field may be absent (older
 * files) but must have its type. prefill keys must be whole numbers.
 * Returns 0, or -1 with "NAME: key.path: what" in err (*out then empty). */
int decode_matrix_from_json(const cJSON *j, const char *name, struct decode_matrix *out, char *err,
                            size_t errlen);

/* The matrix as JSON (caller deletes; NULL when memory runs out). */
cJSON *decode_matrix_to_json(const struct decode_matrix *m);

/* Writes m to path (artifact_write_file: atomic), after checking that
 * decode_matrix_from_json reads what was built, with every string
 * credential in sec scrubbed first (NULL: none). Returns 0, or -1 with
 * the reason in err. */
int decode_matrix_write(const char *path, const struct decode_matrix *m, const struct secrets *sec, char *err,
                        size_t errlen);

/* Frees what *m owns and empties it. */
void decode_matrix_free(struct decode_matrix *m);

/* Fills m->summary_table from m->results (aggregate_tps, null for none)
 * and m->burst_summary_table from m->burst_results (0 for none, the
 * seed's). Returns 0, or -1 when memory runs out. */
int decode_matrix_summarize(struct decode_matrix *m);

/* ---- the pieces, for the run directory's caches and tests ---- */

/* What makes two runs' cells comparable (DIR/plan.json). Write-only:
 * strings and lists borrowed. */
struct decode_plan {
    char *server, *model;
    struct decode_longs concurrency_levels, context_lengths;
    double duration_per_test;
    long max_tokens;
};

/* Writes p to path, or checks that the plan there is p (a resumed run).
 * Returns 1 resuming, 0 new, -1 with err ("DIR holds a decode matrix of
 * another plan (...); this one is ...: use another --out-dir", or why the
 * file could not be written). */
int decode_plan_keep(const char *path, const char *dir, const struct decode_plan *p, char *err, size_t errlen);

/* A deep copy of the struct src of table t into dst (through the writer
 * and the reader: one definition of what it holds). Returns 0, or -1 out
 * of memory (dst then empty). */
int decode_struct_copy(const struct field_table *t, void *dst, const void *src);

/* One cell (or burst entry with burst true) as JSON. Caller deletes. */
cJSON *decode_cell_json(const struct decode_cell *c, bool burst);

/* One prefill entry as JSON (without its key). Caller deletes. */
cJSON *decode_prefill_json(const struct decode_prefill *e);

/* The prefill object of the n entries, keyed by context. Caller deletes. */
cJSON *decode_prefill_map_json(const struct decode_prefill *e, size_t n);

/* A decode cell file (DIR/cells/<name>.json): {"result": cell, "scout":
 * prefill entry or null}. decode_cell_file_write writes it atomically
 * (artifact_write_file's fallback on a full disk); decode_cell_file_read
 * reads path or its fallback (moved into place when it can be) with the
 * checked reader. Free with decode_cell_free / decode_prefill_free.
 * Return 0, or -1 with err (read: 1 when neither file is there). */
int decode_cell_file_write(const char *path, const struct decode_cell *c, const struct decode_prefill *scout,
                           char *err, size_t errlen);
int decode_cell_file_read(const char *path, struct decode_cell *c, struct decode_prefill *scout, char *err,
                          size_t errlen);

/* A cached prefill entry (DIR/prefill/...: the prefill object of one
 * entry) and a cached burst ({"burst_results": [cell], "burst_summary_table":
 * ...}). read returns 0, 1 when the file is not there, -1 with err when
 * it does not read. */
int decode_prefill_cache_write(const char *path, const struct decode_prefill *e, char *err, size_t errlen);
int decode_prefill_cache_read(const char *path, struct decode_prefill *e, char *err, size_t errlen);
int decode_burst_cache_write(const char *path, const struct decode_cell *c, char *err, size_t errlen);
int decode_burst_cache_read(const char *path, struct decode_cell *c, char *err, size_t errlen);

/* decode_struct_copy of a prefill entry, its key and presence kept.
 * Returns 0 or -1 out of memory. */
int decode_prefill_copy(struct decode_prefill *dst, const struct decode_prefill *src);

void decode_cell_free(struct decode_cell *c);
void decode_prefill_free(struct decode_prefill *e);
void decode_diag_free(struct decode_diag *d);
void decode_p2p_free(struct decode_p2p *p);
void decode_capture_free(struct decode_capture *c);

/* A cell with every number none (NaN, ARTIFACT_NONE), as the reader
 * leaves an absent one. */
void decode_cell_init(struct decode_cell *c);

/* Adds key → value to m (both copied). Returns 0 or -1 out of memory. */
int decode_strmap_set(struct decode_strmap *m, const char *key, const char *value);

/* value of key in m, or NULL. */
const char *decode_strmap_get(const struct decode_strmap *m, const char *key);

#endif
