/* test_matrix.c — the matrix artifact: median/min/max on hand cases, rows
 * from round artifacts, numbering, status, and seed 003 as a specification:
 * its aggregates are reproduced exactly from its rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "artifact/fields.h"
#include "artifact/any.h"
#include "artifact/matrix.h"
#include "testutil.h"

/* ---- helpers ---- */

static cJSON *load(const char *path)
{
    size_t len;
    char *text = tu_read_file(path, &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    cr_assert(j, "%s is not JSON", path);
    return j;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert(v, "missing '%s'", k);
    return v;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    cr_assert(cJSON_IsNumber(v), "'%s' is not a number", k);
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    cr_assert(cJSON_IsString(v), "'%s' is not a string", k);
    return v->valuestring;
}

/* Structural equality with numbers compared with == (cJSON_Compare allows a
 * relative DBL_EPSILON between numbers, too loose for "exactly"). Object
 * keys must match in order. Writes the first difference's path into where. */
static bool exact_equal(const cJSON *a, const cJSON *b, char *where, size_t n)
{
    if ((a->type & 0xff) != (b->type & 0xff)) {
        snprintf(where, n, "type differs");
        return false;
    }
    if (cJSON_IsNumber(a) && a->valuedouble != b->valuedouble) {
        snprintf(where, n, "%.17g != %.17g", a->valuedouble, b->valuedouble);
        return false;
    }
    if (cJSON_IsString(a) && strcmp(a->valuestring, b->valuestring)) {
        snprintf(where, n, "'%s' != '%s'", a->valuestring, b->valuestring);
        return false;
    }
    if (!cJSON_IsArray(a) && !cJSON_IsObject(a))
        return true;
    const cJSON *x = a->child, *y = b->child;
    for (int i = 0; x && y; x = x->next, y = y->next, i++) {
        char sub[512];
        if ((x->string || y->string) && (!x->string || !y->string || strcmp(x->string, y->string))) {
            snprintf(where, n, "[%d]: key '%s' != '%s'", i, x->string ? x->string : "",
                     y->string ? y->string : "");
            return false;
        }
        if (!exact_equal(x, y, sub, sizeof sub)) {
            snprintf(where, n, "%s%s: %s", x->string ? "." : "", x->string ? x->string : "[]", sub);
            return false;
        }
    }
    if (x || y) {
        snprintf(where, n, "lengths differ");
        return false;
    }
    return true;
}

static void assert_exact(const cJSON *got, const cJSON *want, const char *what)
{
    char where[1024] = "";
    cr_assert(exact_equal(got, want, where, sizeof where), "%s differs at %s", what, where);
}

/* A small benchmark/v1 round artifact as `anvil run` writes it. */
static const char *round_text =
    "{\"schema\": \"anvil-serving.benchmark/v1\", \"model\": \"m\", \"engine\": \"vllm\","
    " \"gpu\": \"1x H100\", \"endpoint\": \"chat\", \"concurrency\": 2, \"requests\": 4,"
    " \"completed\": 4, \"failed\": 0, \"context_tokens\": 32, \"max_tokens\": 8,"
    " \"max_context_tokens\": 4096, \"wall_clock_ms\": 1234.5, \"incomplete\": false, \"not_sent\": 0,"
    " \"metrics\": {\"request_throughput\": 3.24, \"output_throughput\": 25.9,"
    "  \"total_token_throughput\": 129.6, \"output_tokens\": 32,"
    "  \"ttft_mean_ms\": 5.5, \"ttft_p50_ms\": 5.1, \"ttft_p95_ms\": 6.2, \"ttft_p99_ms\": 6.3,"
    "  \"tpot_mean_ms\": 2.1, \"tpot_p50_ms\": 2.0, \"tpot_p95_ms\": 2.2, \"tpot_p99_ms\": 2.3,"
    "  \"itl_mean_ms\": 2.05, \"itl_p50_ms\": 2.01, \"itl_p95_ms\": 2.5, \"itl_p99_ms\": 3.0,"
    "  \"e2e_mean_ms\": 20.1, \"e2e_p50_ms\": 20.0, \"e2e_p95_ms\": 21.0, \"e2e_p99_ms\": 22.0}}";

/* ---- the real API, as the tests below use it ---- */

/* A round artifact's `rows` entry: matrix_round_read, matrix_row_of, then
 * the row's table. NULL with err set. */
static cJSON *row_from_round(const cJSON *art, const char *sha256_hex, char *err, size_t errlen)
{
    struct benchmark b;
    struct matrix_row row;
    if (matrix_round_read(art, NULL, &b, err, errlen) != 0)
        return NULL;
    int rc = matrix_row_of(&b, sha256_hex, &row, err, errlen);
    benchmark_free(&b);
    if (rc)
        return NULL;
    cJSON *j = fields_to_json(&matrix_row_table, &row);
    matrix_row_free(&row);
    return j;
}

/* The row objects of a, read by the row table (repeat may be null). */
static int rows_read(const cJSON *a, struct matrix_row **v, size_t *n, char *err, size_t errlen)
{
    *n = (size_t)cJSON_GetArraySize(a);
    *v = calloc(*n + 1, sizeof **v);
    cr_assert(*v);
    struct jread r;
    jread_init(&r, NULL, err, errlen);
    for (size_t i = 0; i < *n && !r.failed; i++)
        fields_read(&r, cJSON_GetArrayItem(a, (int)i), &matrix_row_table, &(*v)[i]);
    return r.failed ? -1 : 0;
}

static void rows_free(struct matrix_row *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        matrix_row_free(&v[i]);
    free(v);
}

/* matrix_assemble of the row objects rows, meta (NULL: none) and the
 * strings of extra (NULL: none), written by matrix_to_json; NULL with err. */
static cJSON *build(const cJSON *rows, const struct matrix_meta *meta, const cJSON *extra, char *err,
                    size_t errlen)
{
    struct matrix_row *v;
    size_t n, k = 0;
    char *reasons[8];
    const cJSON *e;
    cJSON_ArrayForEach(e, extra)
        reasons[k++] = e->valuestring;
    struct matrix out;
    cJSON *doc = NULL;
    if (rows_read(rows, &v, &n, err, errlen) == 0
        && matrix_assemble(v, n, meta, reasons, k, &out, err, errlen) == 0) {
        doc = matrix_to_json(&out);
        matrix_free(&out);
    }
    rows_free(v, n);
    return doc;
}

/* matrix_aggregates_of the row objects rows, each written by its table. */
static cJSON *aggregates_of(const cJSON *rows, char *err, size_t errlen)
{
    struct matrix_row *v;
    size_t n, n_agg = 0;
    struct matrix_aggregate *agg = NULL;
    cJSON *out = NULL;
    if (rows_read(rows, &v, &n, err, errlen) == 0 && matrix_aggregates_of(v, n, &agg, &n_agg, err, errlen) == 0) {
        out = cJSON_CreateArray();
        for (size_t i = 0; i < n_agg; i++)
            cJSON_AddItemToArray(out, fields_to_json(&matrix_aggregate_table, &agg[i]));
    }
    matrix_aggregates_free(agg, n_agg);
    rows_free(v, n);
    return out;
}

/* A matrix file's text read by matrix_read and written by matrix_to_json. */
static cJSON *parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct matrix m;
    if (matrix_read(text, len, NULL, &m, err, errlen) != 0)
        return NULL;
    cJSON *doc = matrix_to_json(&m);
    matrix_free(&m);
    return doc;
}

static cJSON *round_art(void)
{
    cJSON *a = cJSON_Parse(round_text);
    cr_assert(a);
    return a;
}

static cJSON *row_of(const cJSON *art)
{
    char err[256] = "";
    cJSON *row = row_from_round(art, "ab", err, sizeof err);
    cr_assert(row, "%s", err);
    return row;
}

/* ---- median, min, max ---- */

Test(matrix, range_odd_count_is_the_middle_value)
{
    double v[] = {3.5, -1.25, 2.0, 10.0, 0.1};
    struct matrix_range r;
    cr_assert_eq(matrix_range_of(v, 5, &r), 0);
    cr_assert_eq(r.median, 2.0);
    cr_assert_eq(r.min, -1.25);
    cr_assert_eq(r.max, 10.0);
    cr_assert_eq(v[0], 3.5, "input is not reordered");
    cr_assert_eq(v[1], -1.25);
}

Test(matrix, range_even_count_is_the_mean_of_the_two_middle_values)
{
    double v[] = {4.0, 1.0, 3.0, 2.0};
    struct matrix_range r;
    cr_assert_eq(matrix_range_of(v, 4, &r), 0);
    cr_assert_eq(r.median, 2.5);
    cr_assert_eq(r.min, 1.0);
    cr_assert_eq(r.max, 4.0);
    double w[] = {0.2, 0.1};
    cr_assert_eq(matrix_range_of(w, 2, &r), 0);
    cr_assert_eq(r.median, (0.1 + 0.2) / 2, "(a + b) / 2 in double arithmetic");
}

Test(matrix, range_single_value_and_ties)
{
    double one[] = {7.25};
    struct matrix_range r;
    cr_assert_eq(matrix_range_of(one, 1, &r), 0);
    cr_assert(r.median == 7.25 && r.min == 7.25 && r.max == 7.25);
    double ties[] = {5, 5, 1, 5};
    cr_assert_eq(matrix_range_of(ties, 4, &r), 0);
    cr_assert(r.median == 5 && r.min == 1 && r.max == 5);
}

Test(matrix, range_of_nothing_is_an_error)
{
    struct matrix_range r = {42, 42, 42};
    cr_assert_eq(matrix_range_of(NULL, 0, &r), -1);
    cr_assert_eq(r.median, 42, "unchanged");
}

/* ---- seed 003 ---- */

Test(matrix, metric_names_are_seed003s)
{
    cJSON *seed = load("tests/data/seed-003.json");
    const cJSON *metrics = get(cJSON_GetArrayItem(get(seed, "aggregates"), 0), "metrics"), *m;
    int i = 0;
    cJSON_ArrayForEach(m, metrics) {
        cr_assert_lt(i, MATRIX_N_METRICS);
        cr_assert_str_eq(m->string, matrix_metric_names[i]);
        i++;
    }
    cr_assert_eq(i, MATRIX_N_METRICS);
    cJSON_Delete(seed);
}

/* The test the contract names: every aggregates entry (engine, case, token
 * counts, concurrency, rounds, completed, and every metric's median, min and
 * max) recomputed from the seed's rows equals the seed's, doubles with ==. */
Test(matrix, seed003_aggregates_reproduced_exactly_from_rows)
{
    cJSON *seed = load("tests/data/seed-003.json");
    const cJSON *want = get(seed, "aggregates");
    char err[256] = "";
    cJSON *got = aggregates_of(get(seed, "rows"), err, sizeof err);
    cr_assert(got, "%s", err);
    cr_assert_eq(cJSON_GetArraySize(got), 22);
    cr_assert_eq(cJSON_GetArraySize(got), cJSON_GetArraySize(want));
    int values = 0;
    for (int i = 0; i < cJSON_GetArraySize(want); i++) {
        const cJSON *g = cJSON_GetArrayItem(got, i), *w = cJSON_GetArrayItem(want, i), *wm;
        char what[128];
        snprintf(what, sizeof what, "aggregates[%d] (%s %s)", i, str(w, "engine"), str(w, "case_id"));
        assert_exact(g, w, what);
        cJSON_ArrayForEach(wm, get(w, "metrics"))
            values += 3;
    }
    cr_assert_eq(values, 22 * MATRIX_N_METRICS * 3, "every median, min and max compared");
    cJSON_Delete(got);
    cJSON_Delete(seed);
}

/* The whole document rebuilt from the seed's rows and description fields:
 * rows unchanged, the same aggregates, and the seed's status, counts and
 * statistics sentence; written and parsed back, nothing moves by a bit. */
Test(matrix, seed003_document_rebuilt_and_read_back)
{
    cJSON *seed = load("tests/data/seed-003.json");
    char err[256] = "", path[] = "/tmp/anvil-matrix-XXXXXX";
    char *seed_text = tu_read_file("tests/data/seed-003.json", &(size_t){0});
    struct matrix m;
    cr_assert_eq(matrix_read(seed_text, strlen(seed_text), "seed-003", &m, err, sizeof err), 0, "%s", err);
    free(seed_text);
    cJSON *doc = build(get(seed, "rows"), &m.meta, NULL, err, sizeof err);
    matrix_free(&m);
    cr_assert(doc, "%s", err);
    cr_assert_str_eq(str(doc, "schema"), MATRIX_SCHEMA);
    cr_assert_eq(cJSON_GetArraySize(get(doc, "status_reasons")), 0);
    const cJSON *k;
    cJSON_ArrayForEach(k, seed)
        assert_exact(get(doc, k->string), k, k->string);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(matrix_write_file(path, doc, err, sizeof err), 0, "%s", err);
    size_t len;
    char *text = tu_read_file(path, &len);
    cJSON *back = parse(text, len, err, sizeof err);
    cr_assert(back, "%s", err);
    assert_exact(back, doc, "the matrix read back");
    free(text);
    unlink(path);
    cJSON_Delete(back);
    cJSON_Delete(doc);
    cJSON_Delete(seed);
}

/* ---- rows from round artifacts ---- */

Test(matrix, row_maps_benchmark_fields_to_vllm_names)
{
    cJSON *art = round_art();
    cJSON *row = row_of(art);
    cr_assert_str_eq(str(row, "engine"), "vllm");
    cr_assert_str_eq(str(row, "case_id"), "run-32-8-c2");
    cr_assert(cJSON_IsNull(get(row, "repeat")), "numbered later, by order");
    cr_assert_eq(num(row, "input_tokens"), 32);
    cr_assert_eq(num(row, "output_tokens"), 8);
    cr_assert_eq(num(row, "concurrency"), 2);
    cr_assert_eq(num(row, "completed"), 4);
    cr_assert_eq(num(row, "failed"), 0);
    cr_assert_eq(num(row, "total_output_tokens"), 32);
    cr_assert_str_eq(str(row, "source_sha256"), "ab");
    cr_assert_eq(num(row, "duration"), 1234.5 / 1000);
    cr_assert_eq(num(row, "request_throughput"), 3.24);
    cr_assert_eq(num(row, "output_throughput"), 25.9);
    cr_assert_eq(num(row, "total_token_throughput"), 129.6);
    cr_assert_eq(num(row, "mean_ttft_ms"), 5.5);
    cr_assert_eq(num(row, "p95_tpot_ms"), 2.2);
    cr_assert_eq(num(row, "p50_itl_ms"), 2.01);
    cr_assert_eq(num(row, "p99_e2el_ms"), 22.0);
    cr_assert(cJSON_IsNull(get(row, "request_rate")), "a closed-loop round has no request rate");
    cr_assert_eq(cJSON_GetArraySize(row), 12 + MATRIX_N_METRICS,
                 "seed 003's 30 row fields, request_rate and outlasted_window");
    cr_assert(cJSON_IsFalse(get(row, "outlasted_window")), "not a duration-mode round");
    cJSON *seed = load("tests/data/seed-003.json");
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetArrayItem(get(seed, "rows"), 0))
        get(row, k->string);
    cJSON_Delete(seed);
    cJSON_Delete(row);
    cJSON_Delete(art);
}

Test(matrix, row_takes_target_case_and_round_from_sweep)
{
    cJSON *art = round_art();
    cJSON *sweep = cJSON_AddObjectToObject(art, "sweep");
    cJSON_AddStringToObject(sweep, "target", "vllm-tp2");
    cJSON_AddStringToObject(sweep, "case_id", "short-128-64-c1");
    cJSON_AddNumberToObject(sweep, "round", 3);
    cJSON *row = row_of(art);
    cr_assert_str_eq(str(row, "engine"), "vllm-tp2");
    cr_assert_str_eq(str(row, "case_id"), "short-128-64-c1");
    cr_assert_eq(num(row, "repeat"), 3);
    cJSON_Delete(row);
    cJSON_ReplaceItemInObject(sweep, "round", cJSON_CreateNumber(0));
    char err[256] = "";
    cr_assert_null(row_from_round(art, NULL, err, sizeof err));
    cr_assert(strstr(err, "sweep") && strstr(err, "round"), "%s", err);
    cJSON_Delete(art);
}

Test(matrix, row_missing_metrics_are_null_and_old_throughput_name_is_used)
{
    cJSON *art = round_art();
    cJSON *m = cJSON_GetObjectItem(art, "metrics");
    cJSON_DeleteItemFromObject(m, "itl_p99_ms");
    cJSON_DeleteItemFromObject(m, "output_throughput");
    cJSON_AddNumberToObject(m, "throughput_tok_s", 26.5);
    cJSON_ReplaceItemInObject(art, "wall_clock_ms", cJSON_CreateNull());
    cJSON *row = row_of(art);
    cr_assert(cJSON_IsNull(get(row, "p99_itl_ms")));
    cr_assert(cJSON_IsNull(get(row, "duration")));
    cr_assert_eq(num(row, "output_throughput"), 26.5);
    cJSON_Delete(row);
    cJSON_Delete(art);
}

/* A duration-mode round (issue 12's figures): 286.6 tok/s from completed
 * requests, 427 tok/s counted by arrival time inside the window. */
static cJSON *duration_art(long completed, double tokens_in_window)
{
    cJSON *art = round_art();
    cJSON_ReplaceItemInObject(art, "completed", cJSON_CreateNumber((double)completed));
    cJSON *m = cJSON_GetObjectItem(art, "metrics");
    cJSON_ReplaceItemInObject(m, "output_throughput", cJSON_CreateNumber(completed ? 286.6 : 0));
    cJSON *d = cJSON_AddObjectToObject(art, "duration_mode");
    cJSON_AddNumberToObject(d, "duration_s", 10);
    cJSON_AddNumberToObject(d, "warmup_s", 0);
    cJSON_AddNumberToObject(d, "window_s", 10);
    cJSON_AddNumberToObject(d, "tokens_in_window", tokens_in_window);
    cJSON_AddNumberToObject(d, "aggregate_tps", tokens_in_window / 10);
    cJSON_AddNumberToObject(d, "requests_started_in_window", 2);
    cJSON_AddNumberToObject(d, "incomplete_requests", 2 - completed);
    cJSON_AddNumberToObject(d, "warmup_requests", 0);
    return art;
}

/* Failed before: output_throughput was 286.6 (completed requests only), and a
 * round whose requests were all still running at the window's end made the
 * matrix FAIL with 0 tok/s. */
Test(matrix, duration_round_reports_the_window_throughput)
{
    cJSON *art = duration_art(1, 4270);
    cJSON *row = row_of(art);
    cr_assert_eq(num(row, "output_throughput"), 427.0, "the window's throughput, not the completed requests'");
    cr_assert(cJSON_IsFalse(get(row, "outlasted_window")));
    cJSON_Delete(row);
    cJSON_Delete(art);
}

Test(matrix, duration_round_with_nothing_completed_outlasted_the_window_not_failed)
{
    cJSON *art = duration_art(0, 1271);
    cJSON *rows = cJSON_CreateArray();
    cJSON *row = row_of(art);
    cr_assert_eq(num(row, "output_throughput"), 127.1);
    cr_assert(cJSON_IsTrue(get(row, "outlasted_window")));
    cJSON_AddItemToArray(rows, row);
    char err[256] = "";
    cJSON *doc = build(rows, NULL, NULL, err, sizeof err);
    cr_assert(doc, "%s", err);
    cr_assert_str_eq(str(doc, "status"), "PASS");
    cr_assert_eq(cJSON_GetArraySize(get(doc, "status_reasons")), 0);
    const cJSON *r0 = cJSON_GetArrayItem(get(doc, "rows"), 0);
    cr_assert(cJSON_IsTrue(get(r0, "outlasted_window")), "kept in the written row");
    const cJSON *tps = get(get(cJSON_GetArrayItem(get(doc, "aggregates"), 0), "metrics"), "output_throughput");
    cr_assert_eq(num(tps, "median"), 127.1);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON *back = parse(text, strlen(text), err, sizeof err);
    cr_assert(back, "%s", err);
    cr_assert(cJSON_IsTrue(get(cJSON_GetArrayItem(get(back, "rows"), 0), "outlasted_window")), "read back");
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(doc);
    cJSON_Delete(rows);
    cJSON_Delete(art);
}

Test(matrix, duration_round_whose_window_counted_nothing_still_fails)
{
    cJSON *art = duration_art(0, 0);
    cJSON *rows = cJSON_CreateArray();
    cJSON *row = row_of(art);
    cr_assert(cJSON_IsFalse(get(row, "outlasted_window")), "no token arrived: nothing outlasted the window");
    cJSON_AddItemToArray(rows, row);
    char err[256] = "";
    cJSON *doc = build(rows, NULL, NULL, err, sizeof err);
    cr_assert(doc, "%s", err);
    cr_assert_str_eq(str(doc, "status"), "FAIL");
    cr_assert(strstr(cJSON_GetArrayItem(get(doc, "status_reasons"), 0)->valuestring, "no request completed"));
    cJSON_Delete(doc);
    cJSON_Delete(rows);
    cJSON_Delete(art);
}

Test(matrix, row_rejects_what_is_not_a_round_artifact)
{
    struct { const char *key; const char *json; const char *want; } cases[] = {
        {"schema", "\"anvil-serving.matrix/v1\"", "schema"},
        {"completed", "\"4\"", "completed"},
        {"concurrency", "-1", "concurrency"},
        {"context_tokens", "32.5", "context_tokens"},
        {"metrics", "[]", "metrics"},
        {"engine", "\"\"", "engine"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *art = round_art();
        cJSON_ReplaceItemInObject(art, cases[i].key, cJSON_Parse(cases[i].json));
        char err[256] = "";
        cr_assert_null(row_from_round(art, NULL, err, sizeof err), "%s", cases[i].key);
        cr_assert(strstr(err, cases[i].want), "'%s' names %s", err, cases[i].want);
        cJSON_Delete(art);
    }
}

Test(matrix, incomplete_round_is_reported)
{
    cJSON *art = round_art();
    char why[128] = "", err[256] = "";
    struct benchmark b;
    cr_assert_eq(benchmark_from_json(art, NULL, &b, err, sizeof err), 0, "%s", err);
    cr_assert_not(matrix_round_cut(&b, why, sizeof why));
    benchmark_free(&b);
    cJSON_ReplaceItemInObject(art, "incomplete", cJSON_CreateTrue());
    cJSON_AddStringToObject(art, "incomplete_reason", "stopped by signal");
    cr_assert_eq(benchmark_from_json(art, NULL, &b, err, sizeof err), 0, "%s", err);
    cr_assert(matrix_round_cut(&b, why, sizeof why));
    cr_assert(strstr(why, "stopped by signal"), "%s", why);
    benchmark_free(&b);
    cJSON_Delete(art);
}

/* matrix_meta_of over two rounds read by benchmark_from_json. */
static void meta_of_two(const cJSON *a, const cJSON *b, struct matrix_meta *out)
{
    struct benchmark x, y;
    char err[256] = "";
    cr_assert_eq(benchmark_from_json(a, NULL, &x, err, sizeof err), 0, "%s", err);
    cr_assert_eq(benchmark_from_json(b, NULL, &y, err, sizeof err), 0, "%s", err);
    const struct benchmark *both[] = {&x, &y};
    cr_assert_eq(matrix_meta_of(both, 2, out), 0);
    benchmark_free(&x);
    benchmark_free(&y);
}

Test(matrix, meta_from_rounds_keeps_only_what_all_agree_on)
{
    cJSON *a = round_art(), *b = round_art();
    struct matrix_meta meta;
    meta_of_two(a, b, &meta);
    cr_assert_str_eq(meta.model, "m");
    cr_assert_str_eq(meta.hardware, "1x H100");
    cr_assert_eq(meta.context_window, 4096);
    cr_assert_null(meta.precision);
    cr_assert(isnan(meta.tensor_parallel_size));
    cr_assert(strstr(meta.scope, "chat completions"));
    matrix_meta_free(&meta);
    cJSON_ReplaceItemInObject(b, "gpu", cJSON_CreateString("1x A100"));
    meta_of_two(a, b, &meta);
    cr_assert_null(meta.hardware);
    cr_assert_str_eq(meta.model, "m");
    matrix_meta_free(&meta);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* ---- building ---- */

/* A row of engine e, case c, repeat r (0: null), with every metric = x. */
static cJSON *hand_row(const char *e, const char *c, int r, double x, int failed)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "engine", e);
    cJSON_AddStringToObject(row, "case_id", c);
    cJSON_AddItemToObject(row, "repeat", r ? cJSON_CreateNumber(r) : cJSON_CreateNull());
    cJSON_AddNumberToObject(row, "input_tokens", 128);
    cJSON_AddNumberToObject(row, "output_tokens", 64);
    cJSON_AddNumberToObject(row, "concurrency", 1);
    cJSON_AddNumberToObject(row, "completed", 10 - failed);
    cJSON_AddNumberToObject(row, "failed", failed);
    cJSON_AddNumberToObject(row, "total_output_tokens", 640);
    cJSON_AddNullToObject(row, "source_sha256");
    for (int i = 0; i < MATRIX_N_METRICS; i++)
        cJSON_AddNumberToObject(row, matrix_metric_names[i], x + i);
    return row;
}

Test(matrix, build_numbers_orders_and_aggregates)
{
    cJSON *rows = cJSON_CreateArray();
    cJSON_AddItemToArray(rows, hand_row("b", "x", 0, 1.0, 0));
    cJSON_AddItemToArray(rows, hand_row("a", "x", 0, 4.0, 0));
    cJSON_AddItemToArray(rows, hand_row("b", "x", 1, 3.0, 0));  /* takes round 1: the other gets 2 */
    cJSON_AddItemToArray(rows, hand_row("a", "x", 0, 2.0, 0));
    char err[256] = "";
    cJSON *doc = build(rows, NULL, NULL, err, sizeof err);
    cr_assert(doc, "%s", err);
    const cJSON *out = get(doc, "rows");
    const char *want_engine[] = {"b", "b", "a", "a"};
    const int want_repeat[] = {1, 2, 1, 2};
    const double want_x[] = {3.0, 1.0, 4.0, 2.0};
    for (int i = 0; i < 4; i++) {
        const cJSON *r = cJSON_GetArrayItem(out, i);
        cr_assert_str_eq(str(r, "engine"), want_engine[i]);
        cr_assert_eq(num(r, "repeat"), want_repeat[i]);
        cr_assert_eq(num(r, "duration"), want_x[i]);
    }
    const cJSON *agg = get(doc, "aggregates");
    cr_assert_eq(cJSON_GetArraySize(agg), 2);
    const cJSON *a = cJSON_GetArrayItem(agg, 1);
    cr_assert_str_eq(str(a, "engine"), "a");
    cr_assert_eq(num(a, "rounds"), 2);
    cr_assert_eq(num(a, "completed"), 20);
    const cJSON *p99 = get(get(a, "metrics"), "p99_e2el_ms");
    cr_assert_eq(num(p99, "median"), (4.0 + 19 + 2.0 + 19) / 2);
    cr_assert_eq(num(p99, "min"), 2.0 + 19);
    cr_assert_eq(num(p99, "max"), 4.0 + 19);
    cr_assert_str_eq(str(doc, "status"), "PASS");
    cr_assert_eq(num(doc, "counted_rounds"), 4);
    cr_assert_eq(num(doc, "counted_requests"), 40);
    cr_assert(strstr(str(doc, "statistics"), "across two rounds"), "%s", str(doc, "statistics"));
    cr_assert(cJSON_IsNull(get(doc, "model")));
    cJSON_Delete(doc);
    cJSON_Delete(rows);
}

Test(matrix, build_fails_with_reasons_on_failed_requests)
{
    cJSON *rows = cJSON_CreateArray();
    cJSON_AddItemToArray(rows, hand_row("a", "x", 1, 1.0, 0));
    cJSON_AddItemToArray(rows, hand_row("a", "x", 2, 1.0, 3));
    cJSON_AddItemToArray(rows, hand_row("a", "y", 1, 1.0, 10));
    cJSON *extra = cJSON_CreateArray();
    cJSON_AddItemToArray(extra, cJSON_CreateString("r.json: incomplete round (stopped by signal)"));
    char err[256] = "";
    cJSON *doc = build(rows, NULL, extra, err, sizeof err);
    cr_assert(doc, "%s", err);
    cr_assert_str_eq(str(doc, "status"), "FAIL");
    const cJSON *reasons = get(doc, "status_reasons");
    cr_assert_eq(cJSON_GetArraySize(reasons), 3);
    cr_assert(strstr(cJSON_GetArrayItem(reasons, 0)->valuestring, "incomplete"));
    cr_assert(strstr(cJSON_GetArrayItem(reasons, 1)->valuestring, "round 2: 3 of 10 requests failed"),
              "%s", cJSON_GetArrayItem(reasons, 1)->valuestring);
    cr_assert(strstr(cJSON_GetArrayItem(reasons, 2)->valuestring, "10 of 10"));
    cr_assert_eq(num(doc, "counted_requests"), 17);
    cr_assert(strstr(str(doc, "statistics"), "one to two rounds"), "%s", str(doc, "statistics"));
    cJSON_Delete(doc);
    cJSON_Delete(extra);
    cJSON_Delete(rows);
}

Test(matrix, build_rejects_duplicate_and_inconsistent_rounds)
{
    cJSON *rows = cJSON_CreateArray();
    cJSON_AddItemToArray(rows, hand_row("a", "x", 2, 1.0, 0));
    cJSON_AddItemToArray(rows, hand_row("a", "x", 2, 5.0, 0));
    char err[256] = "";
    cr_assert_null(build(rows, NULL, NULL, err, sizeof err));
    cr_assert(strstr(err, "round 2"), "%s", err);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(rows, 1), "repeat", cJSON_CreateNumber(1));
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(rows, 1), "concurrency", cJSON_CreateNumber(4));
    cr_assert_null(build(rows, NULL, NULL, err, sizeof err));
    cr_assert(strstr(err, "concurrency"), "%s", err);
    cJSON *empty = cJSON_CreateArray();
    cr_assert_null(build(empty, NULL, NULL, err, sizeof err));
    cJSON_Delete(empty);
    cJSON_Delete(rows);
}

Test(matrix, aggregate_of_a_metric_some_round_lacks_is_null)
{
    cJSON *rows = cJSON_CreateArray();
    cJSON_AddItemToArray(rows, hand_row("a", "x", 1, 1.0, 0));
    cJSON_AddItemToArray(rows, hand_row("a", "x", 2, 2.0, 0));
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(rows, 1), "p99_itl_ms", cJSON_CreateNull());
    char err[256] = "";
    cJSON *agg = aggregates_of(rows, err, sizeof err);
    cr_assert(agg, "%s", err);
    const cJSON *m = get(cJSON_GetArrayItem(agg, 0), "metrics");
    cr_assert(cJSON_IsNull(get(get(m, "p99_itl_ms"), "median")));
    cr_assert(cJSON_IsNull(get(get(m, "p99_itl_ms"), "max")));
    cr_assert_eq(num(get(m, "p95_itl_ms"), "median"), (1.0 + 14 + 2.0 + 14) / 2);
    cJSON_Delete(agg);
    cJSON_Delete(rows);
}

/* ---- reading back ---- */

Test(matrix, parse_rejects_what_is_not_a_matrix)
{
    const char *bad[] = {
        "nope", "[]", "{\"rows\": []}", "{\"schema\": \"anvil-serving.benchmark/v1\", \"rows\": [{}]}",
        "{\"rows\": [{\"engine\": \"a\", \"case_id\": \"x\", \"repeat\": 1}]}",
    };
    const char *want[] = {"JSON", "object", "rows", "schema", "input_tokens"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256] = "";
        cr_assert_null(parse(bad[i], strlen(bad[i]), err, sizeof err), "%s", bad[i]);
        cr_assert(strstr(err, want[i]), "'%s' for %s", err, bad[i]);
    }
}

Test(matrix, written_numbers_read_back_bit_for_bit)
{
    /* cJSON 1.7.15 prints this as 6.82560414549828, one ulp away */
    double v[] = {6.825604145498281, 0.1, 1e300, 5e-324, 7908, 17.868082894943655};
    cJSON *doc = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(doc, "v");
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
    char path[] = "/tmp/anvil-matrix-XXXXXX", err[256] = "";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(matrix_write_file(path, doc, err, sizeof err), 0, "%s", err);
    cJSON *back = load(path);
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        cr_assert_eq(cJSON_GetArrayItem(get(back, "v"), (int)i)->valuedouble, v[i], "%.17g", v[i]);
    char *text = tu_read_file(path, NULL);
    cr_assert(strstr(text, "7908") && !strstr(text, "7908.0"), "integers stay integers: %s", text);
    free(text);
    unlink(path);
    cJSON_Delete(back);
    cJSON_Delete(doc);
}

/* ---- the typed matrix ---- */

static char *dup_str(const char *s)
{
    return strdup(s);
}

/* Equal doubles, or both NaN (null). */
static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static int counter;

static double next_num(void)
{
    return ++counter + 0.5;
}

static void fill_row(struct matrix_row *r, int i)
{
    char e[16], c[16];
    snprintf(e, sizeof e, "e%d", i % 2);
    snprintf(c, sizeof c, "case%d", i / 2);
    *r = (struct matrix_row){.engine = dup_str(e), .case_id = dup_str(c), .repeat = 7 + i,
                             .input_tokens = 100 + i / 2, .output_tokens = 200 + i / 2,
                             .concurrency = 300 + i / 2, .has_request_rate = true, .request_rate = next_num(),
                             .completed = 400 + i, .failed = 0, .total_output_tokens = 600 + i,
                             .source_sha256 = dup_str("abc")};
    for (int m = 0; m < MATRIX_N_METRICS; m++)
        r->metric[m] = next_num();
}

static void same_row(const struct matrix_row *a, const struct matrix_row *b)
{
    cr_assert(same_text(a->engine, b->engine) && same_text(a->case_id, b->case_id));
    cr_assert_eq(a->repeat, b->repeat);
    cr_assert_eq(a->input_tokens, b->input_tokens);
    cr_assert_eq(a->output_tokens, b->output_tokens);
    cr_assert_eq(a->concurrency, b->concurrency);
    cr_assert_eq(a->has_request_rate, b->has_request_rate);
    cr_assert(same_double(a->request_rate, b->request_rate));
    cr_assert_eq(a->completed, b->completed);
    cr_assert_eq(a->failed, b->failed);
    cr_assert_eq(a->total_output_tokens, b->total_output_tokens);
    cr_assert(same_text(a->source_sha256, b->source_sha256));
    for (int m = 0; m < MATRIX_N_METRICS; m++)
        cr_assert(same_double(a->metric[m], b->metric[m]), "%s", matrix_metric_names[m]);
}

static void same_matrix(const struct matrix *a, const struct matrix *b)
{
    cr_assert(same_text(a->schema, b->schema) && same_text(a->status, b->status));
    cr_assert_eq(a->n_status_reasons, b->n_status_reasons);
    for (size_t i = 0; i < a->n_status_reasons; i++)
        cr_assert_str_eq(a->status_reasons[i], b->status_reasons[i]);
    cr_assert(same_text(a->meta.model, b->meta.model) && same_text(a->meta.precision, b->meta.precision)
              && same_text(a->meta.hardware, b->meta.hardware) && same_text(a->meta.scope, b->meta.scope));
    cr_assert(same_double(a->meta.context_window, b->meta.context_window));
    cr_assert(same_double(a->meta.max_running_requests, b->meta.max_running_requests));
    cr_assert(same_double(a->meta.tensor_parallel_size, b->meta.tensor_parallel_size));
    cr_assert_eq(a->counted_rounds, b->counted_rounds);
    cr_assert_eq(a->counted_requests, b->counted_requests);
    cr_assert(same_text(a->statistics, b->statistics));
    cr_assert_eq(a->n_rows, b->n_rows);
    for (size_t i = 0; i < a->n_rows; i++)
        same_row(&a->rows[i], &b->rows[i]);
    cr_assert_eq(a->n_aggregates, b->n_aggregates);
    for (size_t i = 0; i < a->n_aggregates; i++) {
        const struct matrix_aggregate *x = &a->aggregates[i], *y = &b->aggregates[i];
        cr_assert(same_text(x->engine, y->engine) && same_text(x->case_id, y->case_id));
        cr_assert(x->input_tokens == y->input_tokens && x->output_tokens == y->output_tokens
                  && x->concurrency == y->concurrency && x->rounds == y->rounds && x->completed == y->completed);
        for (int m = 0; m < MATRIX_N_METRICS; m++)
            cr_assert(same_double(x->metric[m].median, y->metric[m].median)
                      && same_double(x->metric[m].min, y->metric[m].min)
                      && same_double(x->metric[m].max, y->metric[m].max), "%s", matrix_metric_names[m]);
    }
    cr_assert_eq(a->provenance.present, b->provenance.present);
    cr_assert(same_text(a->provenance.host, b->provenance.host));
    cr_assert_eq(a->provenance.n_command_line, b->provenance.n_command_line);
    for (size_t i = 0; i < a->provenance.n_command_line; i++)
        cr_assert_str_eq(a->provenance.command_line[i], b->provenance.command_line[i]);
}

/* A matrix with a distinct value in every field (written, then read). */
Test(matrix, typed_read_after_write_is_the_identity_on_every_field)
{
    counter = 0;
    struct matrix a = {.schema = dup_str(MATRIX_SCHEMA), .status = dup_str("FAIL"), .n_status_reasons = 2,
                       .meta = {dup_str("m"), dup_str("BF16"), dup_str("8x H20"), next_num(), next_num(),
                                next_num(), dup_str("scope words")},
                       .counted_rounds = 4, .counted_requests = 1606, .statistics = dup_str("stats"),
                       .n_rows = 4, .n_aggregates = 1};
    a.status_reasons = calloc(2, sizeof *a.status_reasons);
    a.status_reasons[0] = dup_str("r0");
    a.status_reasons[1] = dup_str("r1");
    a.rows = calloc(4, sizeof *a.rows);
    for (int i = 0; i < 4; i++)
        fill_row(&a.rows[i], i);
    a.rows[1].has_request_rate = false;
    a.rows[1].request_rate = NAN;
    a.rows[2].request_rate = NAN;
    a.rows[3].source_sha256 = (free(a.rows[3].source_sha256), NULL);
    a.rows[3].total_output_tokens = ARTIFACT_NONE;
    a.rows[3].metric[MM_P99_ITL_MS] = NAN;
    a.aggregates = calloc(1, sizeof *a.aggregates);
    a.aggregates[0] = (struct matrix_aggregate){dup_str("e0"), dup_str("case0"), 1, 2, 3, 4, 5};
    for (int m = 0; m < MATRIX_N_METRICS; m++)
        a.aggregates[0].metric[m] = (struct matrix_range){next_num(), next_num(), next_num()};
    a.aggregates[0].metric[MM_P99_ITL_MS] = (struct matrix_range){NAN, NAN, NAN};
    cr_assert_eq(provenance_collect(&a.provenance, 2, (char *[]){"aggregate", "r.json", NULL}, false), 0);
    cJSON *j = matrix_to_json(&a);
    char *text = artifact_print(j), err[256];
    struct matrix b;
    cr_assert_eq(matrix_read(text, strlen(text), "m.json", &b, err, sizeof err), 0, "%s", err);
    same_matrix(&a, &b);
    cr_assert_str_eq(b.provenance.command_line[0], "anvil");
    cr_assert_str_eq(b.provenance.command_line[1], "aggregate");
    cr_assert_eq(b.provenance.cpu_cores, a.provenance.cpu_cores);
    free(text);
    cJSON_Delete(j);
    matrix_free(&a);
    matrix_free(&b);
}

Test(matrix, typed_reader_reads_seed003_with_its_values)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-003.json", &len), err[256];
    struct matrix m;
    cr_assert_eq(matrix_read(text, len, "seed-003.json", &m, err, sizeof err), 0, "%s", err);
    free(text);
    cr_assert_null(m.schema, "seed 003 has no schema");
    cr_assert_str_eq(m.status, "PASS");
    cr_assert_str_eq(m.meta.model, "MiniMax-M3");
    cr_assert_str_eq(m.meta.precision, "BF16");
    cr_assert_str_eq(m.meta.hardware, "8x NVIDIA H20-3e");
    cr_assert_eq(m.meta.context_window, 32768);
    cr_assert_eq(m.meta.max_running_requests, 32);
    cr_assert_eq(m.meta.tensor_parallel_size, 8);
    cr_assert(strstr(m.meta.scope, "via completions"), "%s", m.meta.scope);
    cr_assert_eq(m.counted_rounds, 66);
    cr_assert_eq(m.counted_requests, 7908);
    cr_assert(strstr(m.statistics, "across three rounds"));
    cr_assert_eq(m.n_rows, 66);
    const struct matrix_row *r = &m.rows[0];
    cr_assert_str_eq(r->engine, "sglang");
    cr_assert_str_eq(r->case_id, "short-128-64-c1");
    cr_assert(r->repeat == 1 && r->input_tokens == 128 && r->output_tokens == 64 && r->concurrency == 1);
    cr_assert(r->completed == 32 && r->failed == 0 && r->total_output_tokens == 2048);
    cr_assert_str_eq(r->source_sha256, "24b0e09353fc0138ae083368b1e92c0c7c88d68d96fb94c1e76d4135d77235d5");
    cr_assert_not(r->has_request_rate);
    cr_assert_eq(r->metric[MM_DURATION], 17.868082894943655);
    cr_assert_eq(r->metric[MM_P99_TTFT_MS], 138.45950222108516);
    cr_assert_eq(r->metric[MM_MEAN_TPOT_MS], 6.825604145498281);
    const struct matrix_row *last = &m.rows[65];
    cr_assert_str_eq(last->engine, "vllm");
    cr_assert_str_eq(last->case_id, "decode-128-1k-c8");
    cr_assert(last->repeat == 3 && last->output_tokens == 1024 && last->total_output_tokens == 32768);
    cr_assert_eq(last->metric[MM_P99_E2EL_MS], 16824.521794477478);
    cr_assert_eq(m.n_aggregates, 22);
    const struct matrix_aggregate *a = &m.aggregates[0];
    cr_assert_str_eq(a->case_id, "short-128-64-c1");
    cr_assert(a->rounds == 3 && a->completed == 96);
    cr_assert_eq(a->metric[MM_DURATION].median, 17.853870826307684);
    cr_assert_eq(a->metric[MM_DURATION].min, 17.8527393899858);
    cr_assert_eq(a->metric[MM_P99_TTFT_MS].max, 138.45950222108516);
    cr_assert_eq(m.aggregates[21].metric[MM_OUTPUT_THROUGHPUT].median, 488.879024359614);
    cr_assert_not(m.provenance.present);
    matrix_free(&m);
}

Test(matrix, typed_reader_names_the_file_and_key_of_a_bad_field)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-003.json", &len);
    cJSON *seed = cJSON_ParseWithLength(text, len);
    free(text);
    struct { const char *where, *key, *value, *want; } cases[] = {
        {"rows.3", "repeat", NULL, "m.json: rows[3].repeat: missing"},
        {"rows.0", "p95_itl_ms", "\"7\"", "m.json: rows[0].p95_itl_ms: expected a number, got a string"},
        {"", "context_window", "\"32k\"", "m.json: context_window: expected a number, got a string"},
        {"aggregates.2.metrics", "duration", "{}", "m.json: aggregates[2].metrics.duration.median: missing"},
        {"", "status_reasons", "[1]", "m.json: status_reasons[0]: expected a string, got a number"},
        {"", "schema", "\"anvil-serving.benchmark/v1\"", "m.json: schema: expected \"anvil-serving.matrix/v1\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *j = cJSON_Duplicate(seed, true);
        cJSON *o = j;
        char path[64];
        snprintf(path, sizeof path, "%s", cases[i].where);
        for (char *seg = strtok(path, "."); seg; seg = strtok(NULL, "."))
            o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(seg)) : cJSON_GetObjectItem(o, seg);
        if (cases[i].value) {
            if (cJSON_GetObjectItem(o, cases[i].key))
                cJSON_ReplaceItemInObject(o, cases[i].key, cJSON_Parse(cases[i].value));
            else
                cJSON_AddItemToObject(o, cases[i].key, cJSON_Parse(cases[i].value));
        } else {
            cJSON_DeleteItemFromObject(o, cases[i].key);
        }
        char err[256];
        struct matrix m;
        cr_assert_eq(matrix_from_json(j, "m.json", &m, err, sizeof err), -1, "case %zu", i);
        cr_assert(strstr(err, cases[i].want) == err, "case %zu: '%s'", i, err);
        cJSON_Delete(j);
    }
    cJSON_Delete(seed);
}

/* A round's case outside a sweep: a dataset round has no planned context
 * (it read "run-nan-..." in anvil compare before), an open loop adds its
 * rate, a sweep's own id wins. */
Test(matrix, case_id_of_dataset_open_loop_and_sweep_rounds)
{
    struct benchmark b = {.context_tokens = 32, .max_tokens = 8, .concurrency = 2, .request_rate = NAN};
    char id[64];
    cr_assert_str_eq(matrix_case_id(&b, id, sizeof id), "run-32-8-c2");
    b.context_tokens = NAN;
    cr_assert_str_eq(matrix_case_id(&b, id, sizeof id), "run-dataset-8-c2");
    b.request_rate = 8;
    b.concurrency = 0;
    cr_assert_str_eq(matrix_case_id(&b, id, sizeof id), "run-dataset-8-c0-r8");
    b.sweep = (struct bench_sweep){.present = true, .case_id = (char *)"short-32-8-c2"};
    cr_assert_str_eq(matrix_case_id(&b, id, sizeof id), "short-32-8-c2");
    char tiny[8];
    cr_assert_str_eq(matrix_case_id(&b, tiny, sizeof tiny), "short-3", "cut to fit");
}

/* The row table reads an unnumbered row (a round not yet placed), but a
 * matrix's rows are numbered: null there is named. */
Test(matrix, a_matrix_row_without_a_round_number_is_refused)
{
    cJSON *doc = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(doc, "rows");
    cJSON_AddItemToArray(rows, hand_row("a", "x", 1, 1.0, 0));
    cJSON_AddItemToArray(rows, hand_row("a", "x", 0, 2.0, 0));
    char *text = cJSON_PrintUnformatted(doc), err[256] = "";
    struct matrix m;
    cr_assert_eq(matrix_read(text, strlen(text), "m.json", &m, err, sizeof err), -1);
    cr_assert(strstr(err, "m.json: rows[1].repeat: expected a round number"), "%s", err);
    cJSON_DeleteItemFromArray(rows, 1);
    free(text);
    text = cJSON_PrintUnformatted(doc);
    cr_assert_eq(matrix_read(text, strlen(text), "m.json", &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(m.rows[0].repeat, 1);
    matrix_free(&m);
    free(text);
    cJSON_Delete(doc);
}

/* Load points compare as numbers, fractions too: c4 before c16, r1.25
 * before r1.5 and r10.25 before r10.5 (strverscmp put r1.5 first). */
Test(matrix, names_compare_as_their_numbers)
{
    const char *lo[] = {"c4", "run-16-4-c4", "run-16-4-r1.25", "run-16-4-r10.25", "r2", "a", "r1.5"};
    const char *hi[] = {"c16", "run-16-4-c16", "run-16-4-r1.5", "run-16-4-r10.5", "r10", "b", "r1.5x"};
    for (size_t i = 0; i < sizeof lo / sizeof lo[0]; i++) {
        cr_assert_lt(artifact_name_cmp(lo[i], hi[i]), 0, "%s < %s", lo[i], hi[i]);
        cr_assert_gt(artifact_name_cmp(hi[i], lo[i]), 0, "%s > %s", hi[i], lo[i]);
    }
    cr_assert_eq(artifact_name_cmp("r1.5", "r1.50"), 0);
    cr_assert_lt(artifact_name_cmp("round-1.json", "round-10.json"), 0);
}
