/* matrix.h — the matrix artifact, schema anvil-serving.matrix/v1 (seed 003's
 * shape; docs/MATRIX.md): one `rows` entry per target × case × round with
 * vLLM-style metric names, and `aggregates` holding the median, min and max
 * of each metric across the rounds of one target × case. */
#ifndef ANVIL_ARTIFACT_MATRIX_H
#define ANVIL_ARTIFACT_MATRIX_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define MATRIX_SCHEMA "anvil-serving.matrix/v1"

/* The numeric row metrics that `aggregates` summarizes, in seed 003's order:
 * duration (s), the three throughputs (requests/s, tokens/s) and
 * mean/p50/p95/p99 of ttft, tpot, itl and e2el (ms). */
#define MATRIX_N_METRICS 20
extern const char *const matrix_metric_names[MATRIX_N_METRICS];

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

/* Builds one `rows` entry from a round artifact (schema
 * anvil-serving.benchmark/v1, parsed) whose file bytes have the SHA-256
 * sha256_hex (64 hex digits; NULL writes null). engine, case_id and repeat
 * come from the artifact's optional `"sweep": {"target", "case_id",
 * "round"}`; without it engine is the artifact's `engine`, case_id is
 * "run-<context_tokens>-<max_tokens>-c<concurrency>" and repeat is null
 * (matrix_build numbers it). A metric the artifact lacks or holds as null
 * is null in the row. Returns a new object the caller deletes, or NULL with
 * a message in err when the artifact is not a benchmark/v1 artifact or a
 * required field (schema, engine, concurrency, context_tokens, max_tokens,
 * completed, failed, metrics) is missing or of the wrong type. */
cJSON *matrix_row_from_round(const cJSON *art, const char *sha256_hex, char *err, size_t errlen);

/* Says whether a round artifact was cut short (`incomplete` true, or
 * requests `not_sent`); when so, writes why into why (a short phrase). Such
 * a round makes the matrix FAIL. */
bool matrix_round_incomplete(const cJSON *art, char *why, size_t whylen);

/* Checks one `rows` entry as read back from a matrix file: engine and
 * case_id non-empty strings; repeat, input_tokens, output_tokens,
 * concurrency, completed, failed whole numbers (repeat ≥ 1, or null when
 * allow_unnumbered); total_output_tokens a whole number or null;
 * source_sha256 a string or null; every matrix metric a number or null.
 * Returns 0, or -1 with what is wrong in err. */
int matrix_check_row(const cJSON *row, bool allow_unnumbered, char *err, size_t errlen);

/* The description fields that round artifacts tell: model (`model`),
 * hardware (`gpu`), context_window (`max_context_tokens`) and scope (from
 * `endpoint`), each only when every artifact agrees, else null; precision,
 * max_running_requests and tensor_parallel_size are null (no round artifact
 * records them). Returns a new object with every matrix_meta_keys key (the
 * caller deletes), or NULL when memory runs out. */
cJSON *matrix_meta_from_rounds(const cJSON *const *arts, size_t n);

/* Builds the whole matrix document from rows (not modified: they are
 * copied), meta (an object whose matrix_meta_keys values are copied; a
 * missing key is written as null; meta may be NULL) and extra_reasons (an
 * array of strings that make the status FAIL, e.g. incomplete rounds; may be
 * NULL). Rows with a null repeat get the smallest round numbers their
 * engine × case does not use yet, in input order; rows are then ordered by
 * engine × case (in order of first appearance) and repeat. Adds
 * `aggregates`, `status` (PASS only when no round has a failed request, every
 * round completed at least one request and there is no extra reason),
 * `status_reasons`, `counted_rounds` (rows), `counted_requests` (completed
 * requests), `statistics` and `schema`. Returns a new document the caller
 * deletes, or NULL with a message in err when rows is empty, a row is
 * invalid (matrix_check_row), two rows share engine, case_id and repeat, the
 * rounds of one case disagree on input_tokens, output_tokens or concurrency,
 * or memory runs out. */
cJSON *matrix_build(const cJSON *rows, const cJSON *meta, const cJSON *extra_reasons, char *err,
                    size_t errlen);

/* Computes `aggregates` from numbered, ordered rows (as in a matrix
 * document): one entry per engine × case_id in order of first appearance,
 * with engine, case_id, input_tokens, output_tokens, concurrency, rounds,
 * completed (sum over rounds) and metrics.X.{median,min,max} for every
 * matrix metric X (all three null when any round lacks X). Returns a new
 * array the caller deletes, or NULL with a message in err when the rounds
 * of one case disagree on input_tokens, output_tokens or concurrency, or
 * memory runs out. Rows are assumed valid (matrix_check_row). */
cJSON *matrix_aggregates(const cJSON *rows, char *err, size_t errlen);

/* Writes doc to path, or to stdout when path is "-", with every number
 * exact (artifact_print: a matrix must carry its rounds' numbers bit for
 * bit); a file is created through a temporary file renamed into place
 * (artifact_write_file). Returns 0, or -1 with a message in err. */
int matrix_write_file(const char *path, const cJSON *doc, char *err, size_t errlen);

/* Parses a matrix file's text (len bytes; need not be NUL-terminated) and
 * checks it: a JSON object whose `schema`, when present, is
 * anvil-serving.matrix/v1 (seed 003 has none), with a non-empty `rows` array
 * of valid, numbered rows. Returns the document (caller deletes), or NULL
 * with what is wrong in err. */
cJSON *matrix_parse(const char *text, size_t len, char *err, size_t errlen);

#endif
