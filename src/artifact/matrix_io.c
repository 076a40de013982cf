/* matrix_io.c — struct matrix to JSON and back, and the JSON forms of the
 * matrix functions. Each writer sits next to its reader, with the same keys
 * in the same order. */
#include "artifact/matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT (JR_OPTIONAL | JR_NULLABLE)

/* ---- rows ---- */

static cJSON *row_json(const struct matrix_row *r)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    artifact_add_string(j, "engine", r->engine);
    artifact_add_string(j, "case_id", r->case_id);
    artifact_add_whole(j, "repeat", r->repeat);
    artifact_add_whole(j, "input_tokens", r->input_tokens);
    artifact_add_whole(j, "output_tokens", r->output_tokens);
    artifact_add_whole(j, "concurrency", r->concurrency);
    if (r->has_request_rate)    /* open-loop rounds: their load point; concurrency is then the cap, 0 = none */
        artifact_add_number(j, "request_rate", r->request_rate);
    artifact_add_whole(j, "completed", r->completed);
    artifact_add_whole(j, "failed", r->failed);
    if (r->has_request_rate || r->outlasted_window)     /* anvil's rows (seed 003's have no such key) */
        cJSON_AddBoolToObject(j, "outlasted_window", r->outlasted_window);
    artifact_add_whole(j, "total_output_tokens", r->total_output_tokens);
    artifact_add_string(j, "source_sha256", r->source_sha256);
    for (int i = 0; i < MATRIX_N_METRICS; i++)
        artifact_add_number(j, matrix_metric_names[i], r->metric[i]);
    return j;
}

static void row_read(struct jread *r, const cJSON *j, bool allow_unnumbered, struct matrix_row *out)
{
    *out = (struct matrix_row){.repeat = ARTIFACT_NONE};
    if (!cJSON_IsObject(j)) {
        jread_fail(r, NULL, "expected an object");
        return;
    }
    jread_string(r, j, "engine", JR_NONEMPTY, &out->engine);
    jread_string(r, j, "case_id", JR_NONEMPTY, &out->case_id);
    jread_whole(r, j, "repeat", allow_unnumbered ? JR_NULLABLE : 0, 1, &out->repeat);
    jread_whole(r, j, "input_tokens", 0, 0, &out->input_tokens);
    jread_whole(r, j, "output_tokens", 0, 0, &out->output_tokens);
    jread_whole(r, j, "concurrency", 0, 0, &out->concurrency);
    out->has_request_rate = cJSON_GetObjectItemCaseSensitive(j, "request_rate") != NULL;
    jread_number(r, j, "request_rate", JR_OPTIONAL, &out->request_rate);
    jread_whole(r, j, "completed", 0, 0, &out->completed);
    jread_whole(r, j, "failed", 0, 0, &out->failed);
    jread_bool(r, j, "outlasted_window", JR_OPTIONAL, &out->outlasted_window);
    if (!cJSON_GetObjectItem(j, "outlasted_window"))    /* its name before it was told apart from a KV limit */
        jread_bool(r, j, "capacity_limited", JR_OPTIONAL, &out->outlasted_window);
    jread_whole(r, j, "total_output_tokens", JR_NULLABLE, 0, &out->total_output_tokens);
    jread_string(r, j, "source_sha256", JR_NULLABLE, &out->source_sha256);
    for (int i = 0; i < MATRIX_N_METRICS; i++)
        jread_number(r, j, matrix_metric_names[i], 0, &out->metric[i]);
    if (r->failed)
        matrix_row_free(out);
}

/* rows_read's state for jread_each: the rows being filled. */
struct rows {
    bool allow_unnumbered;
    struct matrix_row *v;
    size_t *n;
};

static void row_read_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct rows *rs = ctx;
    row_read(r, o, rs->allow_unnumbered, &rs->v[i]);
    if (!r->failed)
        (*rs->n)++;     /* row_read frees what a failed row holds */
}

/* The non-empty array at key of o, each element read by row_read into a
 * new array (*out, *n). */
static void rows_read(struct jread *r, const cJSON *o, const char *key, bool allow_unnumbered,
                      struct matrix_row **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const cJSON *a = jread_array(r, o, key, 0);
    if (a && cJSON_GetArraySize(a) == 0)
        jread_fail(r, key, "expected a non-empty array");
    if (!a || r->failed)
        return;
    *out = calloc((size_t)cJSON_GetArraySize(a), sizeof **out);
    if (!*out)
        jread_fail(r, key, "out of memory");
    struct rows rs = {allow_unnumbered, *out, n};
    jread_each(r, key, a, row_read_at, &rs);
}

/* ---- aggregates ---- */

static cJSON *aggregate_json(const struct matrix_aggregate *a)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    artifact_add_string(j, "engine", a->engine);
    artifact_add_string(j, "case_id", a->case_id);
    artifact_add_whole(j, "input_tokens", a->input_tokens);
    artifact_add_whole(j, "output_tokens", a->output_tokens);
    artifact_add_whole(j, "concurrency", a->concurrency);
    artifact_add_whole(j, "rounds", a->rounds);
    artifact_add_whole(j, "completed", a->completed);
    cJSON *m = cJSON_AddObjectToObject(j, "metrics");
    for (int i = 0; m && i < MATRIX_N_METRICS; i++) {
        cJSON *o = cJSON_AddObjectToObject(m, matrix_metric_names[i]);
        artifact_add_number(o, "median", a->metric[i].median);
        artifact_add_number(o, "min", a->metric[i].min);
        artifact_add_number(o, "max", a->metric[i].max);
    }
    return j;
}

static void aggregate_read(struct jread *r, const cJSON *j, struct matrix_aggregate *a)
{
    *a = (struct matrix_aggregate){0};
    jread_string(r, j, "engine", JR_NONEMPTY, &a->engine);
    jread_string(r, j, "case_id", JR_NONEMPTY, &a->case_id);
    jread_whole(r, j, "input_tokens", 0, 0, &a->input_tokens);
    jread_whole(r, j, "output_tokens", 0, 0, &a->output_tokens);
    jread_whole(r, j, "concurrency", 0, 0, &a->concurrency);
    jread_whole(r, j, "rounds", 0, 1, &a->rounds);
    jread_whole(r, j, "completed", 0, 0, &a->completed);
    const cJSON *m = jread_object(r, j, "metrics", 0);
    size_t mark = jread_enter(r, "metrics");
    for (int i = 0; m && i < MATRIX_N_METRICS; i++) {
        const cJSON *o = jread_object(r, m, matrix_metric_names[i], 0);
        size_t k = jread_enter(r, matrix_metric_names[i]);
        jread_number(r, o, "median", 0, &a->metric[i].median);
        jread_number(r, o, "min", 0, &a->metric[i].min);
        jread_number(r, o, "max", 0, &a->metric[i].max);
        jread_leave(r, k);
    }
    jread_leave(r, mark);
}

/* jread_each's reader of a matrix's aggregates (ctx: the matrix). */
static void aggregate_read_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct matrix *m = ctx;
    aggregate_read(r, o, &m->aggregates[i]);
    m->n_aggregates++;      /* counted even when it failed halfway: what it holds is freed */
}

static void aggregates_read(struct jread *r, const cJSON *o, struct matrix *m)
{
    const cJSON *a = jread_array(r, o, "aggregates", OPT);
    if (!a)
        return;
    m->aggregates = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *m->aggregates);
    if (!m->aggregates)
        jread_fail(r, "aggregates", "out of memory");
    jread_each(r, "aggregates", a, aggregate_read_at, m);
}

/* ---- description fields ---- */

static void meta_write(cJSON *o, const struct matrix_meta *m, bool with_scope)
{
    artifact_add_string(o, "model", m->model);
    artifact_add_string(o, "precision", m->precision);
    artifact_add_string(o, "hardware", m->hardware);
    artifact_add_number(o, "context_window", m->context_window);
    artifact_add_number(o, "max_running_requests", m->max_running_requests);
    artifact_add_number(o, "tensor_parallel_size", m->tensor_parallel_size);
    if (with_scope)
        artifact_add_string(o, "scope", m->scope);
}

/* Each description field may be absent or null. */
static void meta_read(struct jread *r, const cJSON *o, struct matrix_meta *m)
{
    jread_string(r, o, "model", OPT, &m->model);
    jread_string(r, o, "precision", OPT, &m->precision);
    jread_string(r, o, "hardware", OPT, &m->hardware);
    jread_number(r, o, "context_window", OPT, &m->context_window);
    jread_number(r, o, "max_running_requests", OPT, &m->max_running_requests);
    jread_number(r, o, "tensor_parallel_size", OPT, &m->tensor_parallel_size);
    jread_string(r, o, "scope", OPT, &m->scope);
}

/* ---- the document ---- */

static void add_array(cJSON *o, const char *key, size_t n, const void *v, size_t size,
                      cJSON *(*to_json)(const void *))
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, to_json((const char *)v + i * size));
}

static cJSON *row_json_any(const void *r)
{
    return row_json(r);
}

static cJSON *aggregate_json_any(const void *a)
{
    return aggregate_json(a);
}

cJSON *matrix_to_json(const struct matrix *m)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (m->schema)
        cJSON_AddStringToObject(o, "schema", m->schema);
    artifact_add_string(o, "status", m->status);
    cJSON_AddItemToObject(o, "status_reasons", artifact_string_array(m->status_reasons, m->n_status_reasons));
    meta_write(o, &m->meta, false);
    artifact_add_whole(o, "counted_rounds", m->counted_rounds);
    artifact_add_whole(o, "counted_requests", m->counted_requests);
    artifact_add_string(o, "statistics", m->statistics);
    artifact_add_string(o, "scope", m->meta.scope);     /* after statistics, where seed 003 has it */
    add_array(o, "rows", m->n_rows, m->rows, sizeof *m->rows, row_json_any);
    add_array(o, "aggregates", m->n_aggregates, m->aggregates, sizeof *m->aggregates, aggregate_json_any);
    provenance_write(o, &m->provenance);
    return o;
}

int matrix_from_json(const cJSON *j, const char *name, struct matrix *out, char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    *out = (struct matrix){0};
    if (!cJSON_IsObject(j)) {
        jread_fail(&r, NULL, "not a JSON object");
        return -1;
    }
    jread_schema(&r, j, JR_OPTIONAL, MATRIX_SCHEMA, &out->schema);
    rows_read(&r, j, "rows", false, &out->rows, &out->n_rows);
    jread_string(&r, j, "status", OPT, &out->status);
    jread_strings(&r, j, "status_reasons", OPT, &out->status_reasons, &out->n_status_reasons);
    meta_read(&r, j, &out->meta);
    jread_whole(&r, j, "counted_rounds", OPT, 0, &out->counted_rounds);
    jread_whole(&r, j, "counted_requests", OPT, 0, &out->counted_requests);
    jread_string(&r, j, "statistics", OPT, &out->statistics);
    aggregates_read(&r, j, out);
    provenance_read(&r, j, &out->provenance);
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

/* ---- the same in JSON ---- */

cJSON *matrix_row_from_round(const cJSON *art, const char *sha256_hex, char *err, size_t errlen)
{
    struct benchmark b;
    struct matrix_row row;
    if (matrix_round_read(art, NULL, &b, err, errlen) != 0)
        return NULL;
    int rc = matrix_row_of(&b, sha256_hex, &row, err, errlen);
    benchmark_free(&b);
    if (rc)
        return NULL;
    cJSON *j = row_json(&row);
    matrix_row_free(&row);
    if (!j)
        snprintf(err, errlen, "out of memory");
    return j;
}

bool matrix_round_incomplete(const cJSON *art, char *why, size_t whylen)
{
    struct benchmark b;
    char err[256];
    if (benchmark_from_json(art, NULL, &b, err, sizeof err) != 0)
        return false;
    bool cut = matrix_round_cut(&b, why, whylen);
    benchmark_free(&b);
    return cut;
}

int matrix_check_row(const cJSON *row, bool allow_unnumbered, char *err, size_t errlen)
{
    struct jread r;
    struct matrix_row out;
    jread_init(&r, NULL, err, errlen);
    row_read(&r, row, allow_unnumbered, &out);
    matrix_row_free(&out);
    return r.failed ? -1 : 0;
}

cJSON *matrix_meta_from_rounds(const cJSON *const *arts, size_t n)
{
    struct benchmark *b = calloc(n ? n : 1, sizeof *b);
    const struct benchmark **p = calloc(n ? n : 1, sizeof *p);
    size_t k = 0;
    char err[256];
    bool ok = b && p;
    for (; ok && k < n; k++) {
        ok = benchmark_from_json(arts[k], NULL, &b[k], err, sizeof err) == 0;
        p[k] = &b[k];
    }
    struct matrix_meta meta;
    cJSON *j = ok && matrix_meta_of(p, n, &meta) == 0 ? cJSON_CreateObject() : NULL;
    if (j) {
        meta_write(j, &meta, true);
        matrix_meta_free(&meta);
    } else if (ok) {
        matrix_meta_free(&meta);
    }
    for (size_t i = 0; b && i < k; i++)
        benchmark_free(&b[i]);
    free(b);
    free(p);
    return j;
}

/* Reads the row objects of rows (each checked; "row N: ..." names a bad
 * one) into a new array. */
static int rows_of_json(const cJSON *rows, struct matrix_row **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0) {
        snprintf(err, errlen, "no rows");
        return -1;
    }
    *out = calloc((size_t)cJSON_GetArraySize(rows), sizeof **out);
    if (!*out) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, rows) {
        char why[256];
        struct jread r;
        jread_init(&r, NULL, why, sizeof why);
        row_read(&r, e, true, &(*out)[*n]);
        if (r.failed) {
            snprintf(err, errlen, "row %zu: %s", *n, why);
            return -1;
        }
        (*n)++;
    }
    return 0;
}

/* The strings of the array a (NULL: none) into a new array. */
static int reasons_of_json(const cJSON *a, char ***v, size_t *n, char *err, size_t errlen)
{
    *v = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof **v);
    *n = 0;
    if (!*v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsString(e)) {
            snprintf(err, errlen, "extra reasons: [%zu] is not a string", *n);
            return -1;
        }
        if (!((*v)[*n] = strdup(e->valuestring))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        (*n)++;
    }
    return 0;
}

static void rows_free(struct matrix_row *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        matrix_row_free(&v[i]);
    free(v);
}

cJSON *matrix_build(const cJSON *rows, const cJSON *meta, const cJSON *extra_reasons, char *err,
                    size_t errlen)
{
    struct matrix_row *v;
    size_t n;
    struct matrix_meta m = {.context_window = NAN, .max_running_requests = NAN, .tensor_parallel_size = NAN};
    char **reasons = NULL;
    size_t n_reasons = 0;
    struct jread r;
    jread_init(&r, NULL, err, errlen);
    cJSON *doc = NULL;
    if (rows_of_json(rows, &v, &n, err, errlen) == 0) {
        if (meta)
            meta_read(&r, meta, &m);
        struct matrix out;
        if (!r.failed && reasons_of_json(extra_reasons, &reasons, &n_reasons, err, errlen) == 0
            && matrix_assemble(v, n, &m, reasons, n_reasons, &out, err, errlen) == 0) {
            doc = matrix_to_json(&out);
            matrix_free(&out);
            if (!doc)
                snprintf(err, errlen, "out of memory");
        }
    }
    rows_free(v, n);
    matrix_meta_free(&m);
    artifact_strings_free(reasons, n_reasons);
    return doc;
}

cJSON *matrix_aggregates(const cJSON *rows, char *err, size_t errlen)
{
    struct matrix_row *v;
    size_t n, n_agg = 0;
    struct matrix_aggregate *agg = NULL;
    cJSON *out = NULL;
    if (rows_of_json(rows, &v, &n, err, errlen) == 0
        && matrix_aggregates_of(v, n, &agg, &n_agg, err, errlen) == 0) {
        out = cJSON_CreateArray();
        for (size_t i = 0; out && i < n_agg; i++)
            cJSON_AddItemToArray(out, aggregate_json(&agg[i]));
        if (!out)
            snprintf(err, errlen, "out of memory");
    }
    matrix_aggregates_free(agg, n_agg);
    rows_free(v, n);
    return out;
}

cJSON *matrix_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct matrix m;
    if (matrix_read(text, len, NULL, &m, err, errlen) != 0)
        return NULL;
    cJSON *doc = matrix_to_json(&m);
    matrix_free(&m);
    if (!doc)
        snprintf(err, errlen, "out of memory");
    return doc;
}
