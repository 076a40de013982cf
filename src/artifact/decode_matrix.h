/* decode_matrix.h — reading a sustained-decode matrix (seed 004's shape:
 * concurrency × context cells measured in duration mode, no schema field).
 * anvil has no producer for it yet; this reader takes only the fields
 * `anvil show` and `anvil report` print, each checked (a missing or
 * mistyped one is an error naming the file and key path). */
#ifndef ANVIL_ARTIFACT_DECODE_MATRIX_H
#define ANVIL_ARTIFACT_DECODE_MATRIX_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

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

#endif
