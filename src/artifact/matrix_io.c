/* matrix_io.c — struct matrix to JSON and back, and the JSON forms of the
 * matrix functions. Each writer sits next to its reader, with the same keys
 * in the same order. */
#include "artifact/matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/fields.h"

#define OPT (JR_OPTIONAL | JR_NULLABLE)

_Static_assert(MM_P99_E2EL_MS + 1 == MATRIX_N_METRICS, "MATRIX_METRICS lists every metric");

/* ---- rows ---- */

/* The row that holds the member v of a matrix row (codecs get the member). */
#define ROW_OF(v, m) ((struct matrix_row *)((char *)(v) - offsetof(struct matrix_row, m)))

/* request_rate: open-loop rounds carry their load point (concurrency is
 * then the cap, 0 = none); seed 003's rows have no such key. The row's
 * member is has_request_rate; the number beside it is request_rate. */
static void rate_write(cJSON *o, const char *key, const void *v)
{
    const struct matrix_row *row = ROW_OF((void *)v, has_request_rate);
    if (row->has_request_rate)
        artifact_add_number(o, key, row->request_rate);
}

static void rate_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    struct matrix_row *row = ROW_OF(v, has_request_rate);
    row->has_request_rate = cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
    jread_number(r, o, key, flags, &row->request_rate);
}

static const struct field_codec rate_codec = {rate_write, rate_read, NULL};

/* outlasted_window: anvil's rows (those with request_rate, or where it is
 * true); older matrices call it capacity_limited. */
static void outlasted_write(cJSON *o, const char *key, const void *v)
{
    if (ROW_OF((void *)v, outlasted_window)->has_request_rate || *(const bool *)v)
        cJSON_AddBoolToObject(o, key, *(const bool *)v);
}

static void outlasted_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    const char *older = "capacity_limited";     /* its name before it was told apart from a KV limit */
    jread_bool(r, o, cJSON_GetObjectItemCaseSensitive(o, key) ? key : older, flags, v);
}

static const struct field_codec outlasted_codec = {outlasted_write, outlasted_read, NULL};

/* The metrics of a row, by enum matrix_metric: keys beside the row's own. */
#define METRIC_NUMBER(e, key, unit) {#key, FIELD_NUMBER, (e) * sizeof(double), 0, 0, unit, NULL, 0, 0, NULL, NULL},
static const struct field row_metric_rows[] = {MATRIX_METRICS(METRIC_NUMBER)};
typedef double matrix_metrics[MATRIX_N_METRICS];
static const struct field_table row_metrics_t = FIELD_TABLE_ALWAYS("metrics", matrix_metrics, row_metric_rows);

static const struct field row_rows[] = {
    F_STR(struct matrix_row, engine, JR_NONEMPTY),
    F_STR(struct matrix_row, case_id, JR_NONEMPTY),
    F_WHOLE_MIN(struct matrix_row, repeat, JR_NULLABLE, 0, NULL, 1),   /* null: not numbered yet */
    F_WHOLE(struct matrix_row, input_tokens, 0, "tokens"),
    F_WHOLE(struct matrix_row, output_tokens, 0, "tokens"),
    F_WHOLE(struct matrix_row, concurrency, 0, "requests"),
    F_KEYED("request_rate", FIELD_CUSTOM, struct matrix_row, has_request_rate, JR_OPTIONAL, 0, "req/s", NULL,
            &rate_codec),
    F_WHOLE(struct matrix_row, completed, 0, "requests"),
    F_WHOLE(struct matrix_row, failed, 0, "requests"),
    F_CUSTOM(struct matrix_row, outlasted_window, JR_OPTIONAL, &outlasted_codec),
    F_WHOLE(struct matrix_row, total_output_tokens, JR_NULLABLE, "tokens"),
    F_STR(struct matrix_row, source_sha256, JR_NULLABLE),
    F_KEYED("metrics", FIELD_OBJECT, struct matrix_row, metric, 0, FW_INLINE, NULL, &row_metrics_t, NULL),
};
const struct field_table matrix_row_table = FIELD_TABLE_ALWAYS("rows[]", struct matrix_row, row_rows);

/* ---- aggregates ---- */

static const struct field range_rows[] = {
    F_NUM(struct matrix_range, median, 0, NULL),
    F_NUM(struct matrix_range, min, 0, NULL),
    F_NUM(struct matrix_range, max, 0, NULL),
};
static const struct field_table range_t = FIELD_TABLE_ALWAYS("range", struct matrix_range, range_rows);

#define METRIC_RANGE(e, key, unit) \
    {#key, FIELD_OBJECT, (e) * sizeof(struct matrix_range), 0, 0, unit, NULL, 0, 0, &range_t, NULL},
static const struct field range_metric_rows[] = {MATRIX_METRICS(METRIC_RANGE)};
typedef struct matrix_range matrix_ranges[MATRIX_N_METRICS];
static const struct field_table ranges_t = FIELD_TABLE_ALWAYS("metrics", matrix_ranges, range_metric_rows);

static const struct field aggregate_rows[] = {
    F_STR(struct matrix_aggregate, engine, JR_NONEMPTY),
    F_STR(struct matrix_aggregate, case_id, JR_NONEMPTY),
    F_WHOLE(struct matrix_aggregate, input_tokens, 0, "tokens"),
    F_WHOLE(struct matrix_aggregate, output_tokens, 0, "tokens"),
    F_WHOLE(struct matrix_aggregate, concurrency, 0, "requests"),
    F_WHOLE_MIN(struct matrix_aggregate, rounds, 0, 0, "rounds", 1),
    F_WHOLE(struct matrix_aggregate, completed, 0, "requests"),
    F_KEYED("metrics", FIELD_OBJECT, struct matrix_aggregate, metric, 0, 0, NULL, &ranges_t, NULL),
};
const struct field_table matrix_aggregate_table = FIELD_TABLE_ALWAYS("aggregates[]", struct matrix_aggregate,
                                                                     aggregate_rows);

/* ---- the document ---- */

/* The description fields but scope, which follows statistics (seed 003's
 * place); each may be absent or null. */
static const struct field meta_rows[] = {
    F_STR(struct matrix_meta, model, OPT),
    F_STR(struct matrix_meta, precision, OPT),
    F_STR(struct matrix_meta, hardware, OPT),
    F_NUM(struct matrix_meta, context_window, OPT, "tokens"),
    F_NUM(struct matrix_meta, max_running_requests, OPT, "requests"),
    F_NUM(struct matrix_meta, tensor_parallel_size, OPT, "GPUs"),
};
static const struct field_table meta_t = FIELD_TABLE_ALWAYS("meta", struct matrix_meta, meta_rows);

static const struct field matrix_rows[] = {
    F_STR_W(struct matrix, schema, JR_OPTIONAL, FW_OMIT_NONE),
    F_STR(struct matrix, status, OPT),
    F_STRS(struct matrix, status_reasons, n_status_reasons, OPT),
    F_OBJ_W(struct matrix, meta, 0, FW_INLINE, &meta_t),
    F_WHOLE(struct matrix, counted_rounds, OPT, "rounds"),
    F_WHOLE(struct matrix, counted_requests, OPT, "requests"),
    F_STR(struct matrix, statistics, OPT),
    F_KEYED("scope", FIELD_STRING, struct matrix, meta.scope, OPT, 0, NULL, NULL, NULL),
    F_ARR(struct matrix, rows, n_rows, 0, &matrix_row_table),
    F_ARR(struct matrix, aggregates, n_aggregates, OPT, &matrix_aggregate_table),
    F_OBJ(struct matrix, provenance, JR_OPTIONAL, &provenance_table),
};
const struct field_table matrix_table = FIELD_TABLE_ALWAYS("matrix", struct matrix, matrix_rows);

cJSON *matrix_to_json(const struct matrix *m)
{
    return fields_to_json(&matrix_table, m);
}

int matrix_from_json(const cJSON *j, const char *name, struct matrix *out, char *err, size_t errlen)
{
    struct jread r;
    *out = (struct matrix){0};
    if (jread_document(&r, j, name, err, errlen) != 0)
        return -1;
    char *schema = NULL;    /* checked first: another artifact kind is named as such */
    if (jread_schema(&r, j, JR_OPTIONAL, MATRIX_SCHEMA, &schema) == 0)
        fields_read(&r, j, &matrix_table, out);
    free(schema);
    if (!r.failed && out->n_rows == 0)
        jread_fail(&r, "rows", "expected a non-empty array");
    for (size_t i = 0; i < out->n_rows && !r.failed; i++)
        if (out->rows[i].repeat == ARTIFACT_NONE) {
            size_t mark = jread_enter(&r, "rows");
            jread_enter_index(&r, (int)i);
            jread_fail(&r, "repeat", "expected a round number ≥ 1, got null (a matrix's rows are numbered)");
            jread_leave(&r, mark);
        }
    if (r.failed) {
        matrix_free(out);
        return -1;
    }
    return 0;
}

int matrix_read(const char *text, size_t len, const char *name, struct matrix *out, char *err,
                size_t errlen)
{
    *out = (struct matrix){0};
    cJSON *j = artifact_parse(text, len, name, err, errlen);
    int rc = j ? matrix_from_json(j, name, out, err, errlen) : -1;
    cJSON_Delete(j);
    return rc;
}

int matrix_write_file(const char *path, const cJSON *doc, char *err, size_t errlen)
{
    if (strcmp(path, "-") != 0)
        return artifact_write_file(path, doc, err, errlen);
    char *text = artifact_print(doc);
    int rc = text && puts(text) >= 0 && fflush(stdout) == 0 ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "cannot write the matrix to stdout");
    free(text);
    return rc;
}
