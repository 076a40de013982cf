/* matrix.h — the matrix artifact, schema anvil-serving.matrix/v1 (seed 003's
 * shape; docs/MATRIX.md): one `rows` entry per target × case × round with
 * vLLM-style metric names, and `aggregates` holding the median, min and max
 * of each metric across the rounds of one target × case. struct matrix
 * holds every field; matrix_assemble builds one from rows, matrix_to_json
 * writes it and matrix_from_json reads it back (checked). The cJSON forms at
 * the end take and give JSON, through the same code. */
#ifndef ANVIL_ARTIFACT_MATRIX_H
#define ANVIL_ARTIFACT_MATRIX_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "artifact/provenance.h"

#define MATRIX_SCHEMA "anvil-serving.matrix/v1"

/* The numeric row metrics that `aggregates` summarizes, in seed 003's order:
 * duration (s), the three throughputs (requests/s, tokens/s) and
 * mean/p50/p95/p99 of ttft, tpot, itl and e2el (ms): X(enum, key, unit),
 * one line each; the enum, the names and the field-table rows come from it. */
#define MATRIX_METRICS(X) \
    X(MM_DURATION, duration, "s") X(MM_REQUEST_THROUGHPUT, request_throughput, "req/s") \
    X(MM_OUTPUT_THROUGHPUT, output_throughput, "tok/s") X(MM_TOTAL_TOKEN_THROUGHPUT, total_token_throughput, "tok/s") \
    X(MM_MEAN_TTFT_MS, mean_ttft_ms, "ms") X(MM_P50_TTFT_MS, p50_ttft_ms, "ms") \
    X(MM_P95_TTFT_MS, p95_ttft_ms, "ms") X(MM_P99_TTFT_MS, p99_ttft_ms, "ms") \
    X(MM_MEAN_TPOT_MS, mean_tpot_ms, "ms") X(MM_P50_TPOT_MS, p50_tpot_ms, "ms") \
    X(MM_P95_TPOT_MS, p95_tpot_ms, "ms") X(MM_P99_TPOT_MS, p99_tpot_ms, "ms") \
    X(MM_MEAN_ITL_MS, mean_itl_ms, "ms") X(MM_P50_ITL_MS, p50_itl_ms, "ms") \
    X(MM_P95_ITL_MS, p95_itl_ms, "ms") X(MM_P99_ITL_MS, p99_itl_ms, "ms") \
    X(MM_MEAN_E2EL_MS, mean_e2el_ms, "ms") X(MM_P50_E2EL_MS, p50_e2el_ms, "ms") \
    X(MM_P95_E2EL_MS, p95_e2el_ms, "ms") X(MM_P99_E2EL_MS, p99_e2el_ms, "ms")
#define MATRIX_METRIC_ENUM(e, key, unit) e,
enum matrix_metric { MATRIX_METRICS(MATRIX_METRIC_ENUM) };
#define MATRIX_N_METRICS 20
extern const char *const matrix_metric_names[MATRIX_N_METRICS];   /* by enum matrix_metric */

/* The top-level description fields a matrix carries besides its results, in
 * seed 003's order: model, precision, hardware, context_window,
 * max_running_requests, tensor_parallel_size, scope. */
#define MATRIX_N_META 7
extern const char *const matrix_meta_keys[MATRIX_N_META];

/* Median, minimum and maximum of one metric across rounds. */
struct matrix_range {
    double median, min, max;
};

/* Summarizes n values (n ≥ 1, none NaN; same unit in, same unit out). The
 * median of an even count is the mean of the two middle values,
 * (a + b) / 2; of an odd count the middle value itself, so it is always one
 * of the inputs bit for bit. v is not modified. Returns 0, or -1 when n is 0
 * or memory runs out (*out is then unchanged). */
int matrix_range_of(const double *v, size_t n, struct matrix_range *out);

/* ---- the artifact, field by field (strings owned; NULL / NaN /
 * ARTIFACT_NONE = null) ---- */

struct matrix_row {
    char *engine, *case_id;     /* non-empty */
    long repeat;                /* ≥ 1; ARTIFACT_NONE = null: not numbered yet */
    long input_tokens, output_tokens, concurrency;
    bool has_request_rate;      /* anvil's rows carry request_rate and outlasted_window; seed 003's do not */
    double request_rate;        /* requests/s of an open-loop round; NaN = null (closed loop) */
    bool outlasted_window;      /* matrix_round_outlasted_window: nothing completed, the window
                                   counted tokens; not a reason to FAIL */
    long completed, failed;
    long total_output_tokens;
    char *source_sha256;        /* hex SHA-256 of the round artifact's bytes */
    double metric[MATRIX_N_METRICS];    /* by enum matrix_metric */
};

struct matrix_aggregate {
    char *engine, *case_id;
    long input_tokens, output_tokens, concurrency, rounds, completed;
    struct matrix_range metric[MATRIX_N_METRICS];   /* all three NaN when a round lacks it */
};

/* The description fields (matrix_meta_keys). */
struct matrix_meta {
    char *model, *precision, *hardware;
    double context_window, max_running_requests, tensor_parallel_size;     /* tokens, requests, GPUs */
    char *scope;
};

struct matrix {
    char *schema;               /* MATRIX_SCHEMA; NULL when absent (seed 003) */
    char *status;               /* "PASS", "FAIL", "INCOMPLETE"; NULL when absent */
    char **status_reasons;      /* one sentence per reason for FAIL */
    size_t n_status_reasons;
    struct matrix_meta meta;
    long counted_rounds, counted_requests;
    char *statistics;
    struct matrix_row *rows;
    size_t n_rows;
    struct matrix_aggregate *aggregates;
    size_t n_aggregates;
    struct provenance provenance;
};

/* ---- from round artifacts ---- */

/* Reads a round artifact (parsed) into *out: "not a round artifact" unless
 * its schema is BENCHMARK_SCHEMA, then benchmark_from_json (name prefixes
 * its messages; may be NULL). Returns 0, or -1 with err set. */
int matrix_round_read(const cJSON *art, const char *name, struct benchmark *out, char *err,
                      size_t errlen);

/* The case a round measured, into buf (cap bytes, NUL-terminated, cut to
 * fit): the `sweep` case_id when anvil ran it inside a sweep, else
 * "run-<context_tokens>-<max_tokens>-c<concurrency>" ("dataset" for a
 * dataset round's unplanned context), with "-r<request rate>" for an open
 * loop: 8 req/s is not c=32's case. Returns buf. */
const char *matrix_case_id(const struct benchmark *b, char *buf, size_t cap);

/* One row from a round artifact whose file bytes have the SHA-256
 * sha256_hex (NULL writes null). engine, case_id and repeat come from the
 * artifact's `sweep` when present; else engine is the artifact's `engine`,
 * case_id matrix_case_id's and repeat none (matrix_assemble numbers it). A metric the artifact lacks is NaN;
 * output_throughput is matrix_round_output_tps (a duration-mode round's
 * window) and outlasted_window matrix_round_outlasted_window. Returns 0, or
 * -1 with a message in err when context_tokens is not a whole number (a
 * dataset round) or memory runs out. Release with matrix_row_free. */
int matrix_row_of(const struct benchmark *b, const char *sha256_hex, struct matrix_row *out,
                  char *err, size_t errlen);

/* A round's output throughput in tokens/s as a matrix row, a load-curve
 * point and the sweep's table report it. A duration-mode round's is its
 * window's, duration_mode.aggregate_tps: output tokens counted by arrival
 * time inside the window, whichever request they belong to, over the
 * window's length (docs/METHODOLOGY.md, duration mode); metrics.
 * output_throughput counts completed requests only, so it undercounts a
 * window (and is 0 when every request was still running at its end).
 * Otherwise metrics.output_throughput, else seed 001's throughput_tok_s.
 * NaN when the round has none. */
double matrix_round_output_tps(const struct benchmark *b);

/* Whether a round is capacity-limited: a duration-mode round in which no
 * request completed though the window counted output tokens (every request
 * was still running when the window closed: replies longer than the window,
 * or a server too loaded to finish one in it). Such a round is measured, not
 * failed: it does not make the matrix FAIL (docs/MATRIX.md). */
bool matrix_round_outlasted_window(const struct benchmark *b);

/* Whether a round was cut short (`incomplete`, or requests `not_sent`);
 * when so, writes why into why (a short phrase). Such a round makes the
 * matrix FAIL. */
bool matrix_round_cut(const struct benchmark *b, char *why, size_t whylen);

/* The description fields the rounds tell: model (`model`), hardware
 * (`gpu`), context_window (`max_context_tokens`) and scope (from
 * `endpoint`), each only when every round agrees, else none; precision,
 * max_running_requests and tensor_parallel_size none (no round records
 * them). Returns 0, or -1 when memory runs out (*out then empty). */
int matrix_meta_of(const struct benchmark *const *b, size_t n, struct matrix_meta *out);

/* ---- building ---- */

/* Builds the whole matrix into *out from copies of rows[0..n) (numbered
 * rows, or unnumbered ones that get the smallest round numbers their engine ×
 * case does not use yet, in input order), meta (copied; NULL: all none) and
 * reasons[0..n_reasons) (sentences that make the status FAIL, e.g.
 * incomplete rounds; copied first into status_reasons). Rows are ordered by
 * engine × case (in order of first appearance) and repeat; adds
 * `aggregates`, `status` (PASS only when no round has a failed request,
 * every round completed at least one request or outlasted the window, and
 * there is no reason),
 * `counted_rounds`, `counted_requests`, `statistics` and `schema`;
 * provenance stays empty (the caller sets it). Returns 0, or -1 with a
 * message in err when n is 0, two rows share engine, case_id and repeat, the
 * rounds of one case disagree on input_tokens, output_tokens or
 * concurrency, or memory runs out (*out then empty). */
int matrix_assemble(const struct matrix_row *rows, size_t n, const struct matrix_meta *meta,
                    char *const *reasons, size_t n_reasons, struct matrix *out, char *err,
                    size_t errlen);

/* One aggregate per engine × case of rows[0..n) (numbered), in order of
 * first appearance: engine, case_id, input_tokens, output_tokens,
 * concurrency, rounds, completed (sum over rounds) and the median, min and
 * max of every metric (all NaN when a round lacks it), into a new array
 * *out of *n_out (free with matrix_aggregates_free). Returns 0, or -1 with a
 * message in err when the rounds of one case disagree on input_tokens,
 * output_tokens or concurrency, or memory runs out. */
int matrix_aggregates_of(const struct matrix_row *rows, size_t n, struct matrix_aggregate **out,
                         size_t *n_out, char *err, size_t errlen);
void matrix_aggregates_free(struct matrix_aggregate *a, size_t n);

/* ---- writing and reading ---- */

/* The matrix document: schema, status, status_reasons, the description
 * fields, counted_rounds, counted_requests, statistics, scope, rows,
 * aggregates, provenance. Returns a new tree (caller deletes) or NULL. */
cJSON *matrix_to_json(const struct matrix *m);

/* Reads a matrix document into *out: a JSON object whose `schema`, when
 * present, is MATRIX_SCHEMA (seed 003 has none), with a non-empty `rows`
 * array of valid, numbered rows (every field but request_rate required);
 * every other field may be absent but must have its type. Returns 0, or -1
 * with "NAME: key.path: what" in err (*out then empty). */
int matrix_from_json(const cJSON *j, const char *name, struct matrix *out, char *err, size_t errlen);

/* Parses text (len bytes; need not be NUL-terminated) and reads it with
 * matrix_from_json. Returns 0, or -1 with err set (not JSON, invalid). */
int matrix_read(const char *text, size_t len, const char *name, struct matrix *out, char *err,
                size_t errlen);

/* Writes doc to path, or to stdout when path is "-", with every number
 * exact (artifact_print: a matrix must carry its rounds' numbers bit for
 * bit); a file is created through a temporary file renamed into place
 * (artifact_write_file). Returns 0, or -1 with a message in err. */
int matrix_write_file(const char *path, const cJSON *doc, char *err, size_t errlen);

/* Deep copies and frees. Copies return 0, or -1 when memory runs out (the
 * destination is then empty). Frees empty what they free. */
int matrix_row_copy(struct matrix_row *dst, const struct matrix_row *src);
void matrix_row_free(struct matrix_row *r);
int matrix_meta_copy(struct matrix_meta *dst, const struct matrix_meta *src);
void matrix_meta_free(struct matrix_meta *m);
void matrix_free(struct matrix *m);

/* The field tables of a matrix document, its rows and its aggregates
 * (matrix_to_json and matrix_from_json walk them). */
struct field_table;
extern const struct field_table matrix_table, matrix_row_table, matrix_aggregate_table;

#endif
