/* decode_matrix.h — reading a sustained-decode matrix (seed 004's shape:
 * concurrency × context cells measured in duration mode, no schema field).
 * `anvil decode` produces it (decode/); the writer's half below builds a
 * cell and a prefill entry from typed figures under the seed's names and
 * writes the whole file once it reads back. The reader takes only the
 * fields `anvil show` and `anvil report` print, each checked (a missing or
 * mistyped one is an error naming the file and key path). */
#ifndef ANVIL_ARTIFACT_DECODE_MATRIX_H
#define ANVIL_ARTIFACT_DECODE_MATRIX_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "observe/observe.h"

/* One `results` cell. Times are in seconds as in the file; NaN = null or
 * absent. */
struct decode_cell {
    long concurrency;           /* requests in flight asked for */
    long context_tokens;        /* prompt context of each request, tokens */
    double measurement_s;       /* the measured window, s */
    double aggregate_tps;       /* output tokens/s of the window over all requests */
    double per_request_avg_tps; /* output tokens/s per request, mean */
    double ttft_p50_s, ttft_p99_s;
    double itl_p50_s, itl_p99_s;        /* inter_token_latency_p50 / _p99 */
    double avg_running_reqs;    /* the server's running requests, mean (Prometheus) */
    double spec_accept_length;  /* server_spec_accept_length; NaN without speculative decoding */
    long completed, requests, errors;   /* completed_request_count, request_count, num_errors */
    bool underfilled;           /* the server ran fewer requests than asked */
    bool warmup_timed_out;      /* the readiness gate never opened: measured anyway */
    bool capacity_limited;      /* the KV pool could not hold the asked concurrency */
};

/* One `prefill` entry (keyed by context in the file). */
struct decode_prefill {
    long context_tokens;
    double ttft_s, tok_per_sec;
    long prompt_tokens;
    char *method;               /* NULL when absent */
};

struct decode_matrix {
    char *engine, *model, *server, *timestamp, *decode_mode;   /* metadata.*; NULL when absent */
    double duration_per_test_s; /* metadata.duration_per_test; NaN when absent */
    long max_tokens;            /* ARTIFACT_NONE when absent */
    struct decode_cell *cells;
    size_t n_cells;
    struct decode_prefill *prefill;
    size_t n_prefill;
};

/* Whether j looks like a decode matrix: an object with a `metadata`
 * object holding `decode_mode` and a `results` array. */
bool decode_matrix_is(const cJSON *j);

/* Reads j into *out. Required: metadata (object) with decode_mode (string),
 * results (non-empty array) whose cells have concurrency and
 * context_tokens (whole numbers), aggregate_tps (number or null),
 * underfilled and capacity_limited (booleans; absent reads as false);
 * every other field above may be absent but must have its type. prefill
 * (optional object) keys must be whole numbers. Returns 0, or -1 with
 * "NAME: key.path: what" in err (*out then empty). */
int decode_matrix_from_json(const cJSON *j, const char *name, struct decode_matrix *out, char *err,
                            size_t errlen);

/* Frees what *m owns and empties it. */
void decode_matrix_free(struct decode_matrix *m);

/* ---- writing (anvil decode) ---- */

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

/* avg, p50, p90, p99 of one figure over a cell's samples (NaN = none). */
struct decode_stat4 {
    double avg, p50, p90, p99;
};

/* One `results` cell as `anvil decode` writes it: seed 004's fields and
 * units (seconds, tokens, tokens/s). NaN numbers are written null: a figure
 * the server or host does not report is never made up. Strings borrowed. */
struct decode_cell_out {
    long concurrency, context_tokens;
    long warmup_request_count;
    double measurement_seconds;     /* window start → last token counted in it */
    double measurement_wall_seconds;/* the window's length */
    long client_output_tokens;      /* tokens that arrived inside the window */
    double server_output_tokens;    /* the server's Δ generation tokens over the window */
    const char *aggregate_source;   /* openai_continuous_usage, client_chunks, prometheus_fallback */
    double aggregate_tps, per_request_avg_tps;
    struct decode_stat4 ttft, time_to_second_token, request_latency, inter_token_latency;
    struct decode_stat4 output_tps_per_user, e2e_output_tps_per_user, chunk_inter_token_latency;
    struct decode_stat4 output_seq_len;
    double input_seq_len_avg;
    long request_count, completed_request_count, total_tokens, num_completed, num_errors;
    double wall_time;               /* the cell from its first send to its last end, s */
    /* the server's: generation tok/s, utilization (share 0..1), draft acceptance (share) and
     * tokens per decode step */
    double server_gen_throughput, server_utilization, server_spec_accept_rate, server_spec_accept_length;
    double server_spec_drafts, server_spec_draft_tokens, server_spec_accepted_tokens;
    int n_pos_accept;
    double pos_accept[SRV_MAX_POS];
    double server_engine_steps, server_steps_per_s, server_accept_len_effective;
    double accept_norm_tps, accept_norm_ref_len;
    double avg_running_reqs, max_running_reqs, avg_queue_reqs, max_queue_reqs, queue_fraction;
    long effective_concurrency;
    bool underfilled, warmup_timed_out, capacity_limited;
    double warmup_duration;         /* first send → window start, s */
    const char *ready_reason, *timeout_reason, *capacity_reason;
    const struct decode_request_sample *samples;
    size_t n_samples;
};

/* The cell as a `results[]` object, its hardware_summary from obs (seed
 * 004's hardware_run_summary over the cell's window; null without a GPU
 * reading or without obs). Caller deletes; NULL when memory runs out. */
cJSON *decode_cell_json(const struct decode_cell_out *c, const struct observe_report *obs);

/* Writes the decode matrix doc to path (artifact_write_file: atomic), after
 * checking that decode_matrix_from_json reads it. Returns 0, or -1 with the
 * reason in err. */
int decode_matrix_write(const char *path, const cJSON *doc, char *err, size_t errlen);

#endif
