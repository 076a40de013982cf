/* matrix.c — the anvil-serving.matrix/v1 artifact: rows from round
 * artifacts, aggregates across rounds, status, reading back. */
#include "artifact/matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/benchmark.h"

const char *const matrix_metric_names[MATRIX_N_METRICS] = {
    "duration", "request_throughput", "output_throughput", "total_token_throughput",
    "mean_ttft_ms", "p50_ttft_ms", "p95_ttft_ms", "p99_ttft_ms",
    "mean_tpot_ms", "p50_tpot_ms", "p95_tpot_ms", "p99_tpot_ms",
    "mean_itl_ms", "p50_itl_ms", "p95_itl_ms", "p99_itl_ms",
    "mean_e2el_ms", "p50_e2el_ms", "p95_e2el_ms", "p99_e2el_ms",
};

const char *const matrix_meta_keys[MATRIX_N_META] = {
    "model", "precision", "hardware", "context_window", "max_running_requests",
    "tensor_parallel_size", "scope",
};

/* The whole-number fields of a row besides repeat, in seed 003's order. */
static const char *const row_counts[] = {
    "input_tokens", "output_tokens", "concurrency", "completed", "failed",
};

/* ---- median, min, max ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int matrix_range_of(const double *v, size_t n, struct matrix_range *out)
{
    if (n == 0)
        return -1;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    out->min = s[0];
    out->max = s[n - 1];
    /* statistics.median / numpy.median: the middle value, or the mean of the
     * two middle ones — the form seed 003's medians were computed with */
    out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return 0;
}

/* ---- JSON field helpers ---- */

static const cJSON *field(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* A whole number ≥ min stored in o[k]. Returns 0, or -1 with err set. */
static int get_whole(const cJSON *o, const char *k, double min, double *out, char *err, size_t errlen)
{
    const cJSON *v = field(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble)
        || v->valuedouble < min) {
        snprintf(err, errlen, "'%s' %s a whole number ≥ %g", k, v ? "is not" : "is missing: want", min);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

static int get_string(const cJSON *o, const char *k, const char **out, char *err, size_t errlen)
{
    const cJSON *v = field(o, k);
    if (!cJSON_IsString(v) || !v->valuestring[0]) {
        snprintf(err, errlen, "'%s' %s a non-empty string", k, v ? "is not" : "is missing: want");
        return -1;
    }
    *out = v->valuestring;
    return 0;
}

/* Adds v (a finite number) or null. */
static void add_num_or_null(cJSON *o, const char *k, const cJSON *v)
{
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        cJSON_AddNumberToObject(o, k, v->valuedouble);
    else
        cJSON_AddNullToObject(o, k);
}

/* ---- a row from one round artifact ---- */

/* Who and what the round was: from `sweep` when anvil ran it inside a sweep,
 * else from the artifact's own fields. */
struct round_id {
    const char *engine, *case_id;   /* borrowed from the artifact, or case_buf */
    char case_buf[96];
    double repeat;      /* 0: to be numbered by order */
};

static int round_identity(const cJSON *art, const double cfg[3], struct round_id *id, char *err,
                          size_t errlen)
{
    const cJSON *sweep = field(art, "sweep");
    if (sweep && !cJSON_IsNull(sweep)) {
        char e[200];
        if (!cJSON_IsObject(sweep) || get_string(sweep, "target", &id->engine, e, sizeof e)
            || get_string(sweep, "case_id", &id->case_id, e, sizeof e)
            || get_whole(sweep, "round", 1, &id->repeat, e, sizeof e)) {
            snprintf(err, errlen, "'sweep': %s", cJSON_IsObject(sweep) ? e : "not an object");
            return -1;
        }
        return 0;
    }
    if (get_string(art, "engine", &id->engine, err, errlen))
        return -1;
    snprintf(id->case_buf, sizeof id->case_buf, "run-%.0f-%.0f-c%.0f", cfg[0], cfg[1], cfg[2]);
    id->case_id = id->case_buf;
    id->repeat = 0;
    return 0;
}

/* Row names of the latency metrics and the artifact's names for them. */
static void add_latencies(cJSON *row, const cJSON *m)
{
    static const char *const stats[] = {"mean", "p50", "p95", "p99"};
    static const char *const row_base[] = {"ttft", "tpot", "itl", "e2el"};
    static const char *const art_base[] = {"ttft", "tpot", "itl", "e2e"};
    for (int b = 0; b < 4; b++)
        for (int s = 0; s < 4; s++) {
            char rk[64], ak[64];
            snprintf(rk, sizeof rk, "%s_%s_ms", stats[s], row_base[b]);
            snprintf(ak, sizeof ak, "%s_%s_ms", art_base[b], stats[s]);
            add_num_or_null(row, rk, field(m, ak));
        }
}

static void add_throughputs(cJSON *row, const cJSON *art, const cJSON *m)
{
    const cJSON *wall = field(art, "wall_clock_ms");
    if (cJSON_IsNumber(wall) && isfinite(wall->valuedouble))
        cJSON_AddNumberToObject(row, "duration", wall->valuedouble / 1000);
    else
        cJSON_AddNullToObject(row, "duration");
    add_num_or_null(row, "request_throughput", field(m, "request_throughput"));
    const cJSON *out = field(m, "output_throughput");
    /* throughput_tok_s is the same figure under seed 001's name
     * (docs/METHODOLOGY.md); artifacts without the vLLM name still have it */
    add_num_or_null(row, "output_throughput", out ? out : field(m, "throughput_tok_s"));
    add_num_or_null(row, "total_token_throughput", field(m, "total_token_throughput"));
}

static void add_row_head(cJSON *row, const struct round_id *id, const double cfg[3],
                         const double done[2], const cJSON *art, const char *sha)
{
    const cJSON *m = field(art, "metrics");
    cJSON_AddStringToObject(row, "engine", id->engine);
    cJSON_AddStringToObject(row, "case_id", id->case_id);
    if (id->repeat > 0)
        cJSON_AddNumberToObject(row, "repeat", id->repeat);
    else
        cJSON_AddNullToObject(row, "repeat");
    cJSON_AddNumberToObject(row, "input_tokens", cfg[0]);
    cJSON_AddNumberToObject(row, "output_tokens", cfg[1]);
    cJSON_AddNumberToObject(row, "concurrency", cfg[2]);
    /* open-loop rounds: their load point (requests/s); concurrency is then the cap, 0 = none */
    add_num_or_null(row, "request_rate", field(art, "request_rate"));
    cJSON_AddNumberToObject(row, "completed", done[0]);
    cJSON_AddNumberToObject(row, "failed", done[1]);
    add_num_or_null(row, "total_output_tokens", field(m, "output_tokens"));
    if (sha)
        cJSON_AddStringToObject(row, "source_sha256", sha);
    else
        cJSON_AddNullToObject(row, "source_sha256");
}

cJSON *matrix_row_from_round(const cJSON *art, const char *sha256_hex, char *err, size_t errlen)
{
    const cJSON *schema = field(art, "schema");
    if (!cJSON_IsObject(art) || !cJSON_IsString(schema) || strcmp(schema->valuestring, BENCHMARK_SCHEMA)) {
        snprintf(err, errlen, "not a round artifact: 'schema' is not \"%s\"", BENCHMARK_SCHEMA);
        return NULL;
    }
    double cfg[3], done[2];     /* input, output tokens, concurrency; completed, failed */
    const cJSON *m = field(art, "metrics");
    if (get_whole(art, "context_tokens", 0, &cfg[0], err, errlen)
        || get_whole(art, "max_tokens", 0, &cfg[1], err, errlen)
        || get_whole(art, "concurrency", 0, &cfg[2], err, errlen)    /* 0: open loop, no cap */
        || get_whole(art, "completed", 0, &done[0], err, errlen)
        || get_whole(art, "failed", 0, &done[1], err, errlen))
        return NULL;
    if (!cJSON_IsObject(m)) {
        snprintf(err, errlen, "'metrics' %s an object", m ? "is not" : "is missing: want");
        return NULL;
    }
    struct round_id id;
    if (round_identity(art, cfg, &id, err, errlen))
        return NULL;
    cJSON *row = cJSON_CreateObject();
    if (!row) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    add_row_head(row, &id, cfg, done, art, sha256_hex);
    add_throughputs(row, art, m);
    add_latencies(row, m);
    return row;
}

bool matrix_round_incomplete(const cJSON *art, char *why, size_t whylen)
{
    const cJSON *inc = field(art, "incomplete"), *reason = field(art, "incomplete_reason");
    const cJSON *not_sent = field(art, "not_sent");
    if (cJSON_IsTrue(inc)) {
        snprintf(why, whylen, "incomplete round (%s)",
                 cJSON_IsString(reason) ? reason->valuestring : "no reason given");
        return true;
    }
    if (cJSON_IsNumber(not_sent) && not_sent->valuedouble > 0) {
        snprintf(why, whylen, "%.0f requests not sent", not_sent->valuedouble);
        return true;
    }
    return false;
}

/* ---- checking rows read back ---- */

static int check_metric(const cJSON *row, const char *k, char *err, size_t errlen)
{
    const cJSON *v = field(row, k);
    if (cJSON_IsNull(v) || (cJSON_IsNumber(v) && isfinite(v->valuedouble)))
        return 0;
    snprintf(err, errlen, "'%s' %s a number or null", k, v ? "is not" : "is missing: want");
    return -1;
}

int matrix_check_row(const cJSON *row, bool allow_unnumbered, char *err, size_t errlen)
{
    const char *s;
    double d;
    if (!cJSON_IsObject(row)) {
        snprintf(err, errlen, "not an object");
        return -1;
    }
    if (get_string(row, "engine", &s, err, errlen) || get_string(row, "case_id", &s, err, errlen))
        return -1;
    if (!(allow_unnumbered && cJSON_IsNull(field(row, "repeat")))
        && get_whole(row, "repeat", 1, &d, err, errlen))
        return -1;
    for (size_t i = 0; i < sizeof row_counts / sizeof *row_counts; i++)
        if (get_whole(row, row_counts[i], 0, &d, err, errlen))
            return -1;
    const cJSON *tot = field(row, "total_output_tokens"), *sha = field(row, "source_sha256");
    if (!cJSON_IsNull(tot) && get_whole(row, "total_output_tokens", 0, &d, err, errlen))
        return -1;
    if (!cJSON_IsNull(sha) && !cJSON_IsString(sha)) {
        snprintf(err, errlen, "'source_sha256' %s a string or null", sha ? "is not" : "is missing: want");
        return -1;
    }
    for (int i = 0; i < MATRIX_N_METRICS; i++)
        if (check_metric(row, matrix_metric_names[i], err, errlen))
            return -1;
    return 0;
}

/* ---- description fields from round artifacts ---- */

/* art[k] when every artifact holds an equal value, else NULL. */
static const cJSON *common_value(const cJSON *const *arts, size_t n, const char *k)
{
    const cJSON *first = n ? field(arts[0], k) : NULL;
    for (size_t i = 1; first && i < n; i++) {
        const cJSON *v = field(arts[i], k);
        if (!v || !cJSON_Compare(first, v, true))
            return NULL;
    }
    return first;
}

static void add_common(cJSON *meta, const char *key, const cJSON *v)
{
    if (v && (cJSON_IsString(v) || cJSON_IsNumber(v)))
        cJSON_AddItemToObject(meta, key, cJSON_Duplicate(v, false));
    else
        cJSON_AddNullToObject(meta, key);
}

cJSON *matrix_meta_from_rounds(const cJSON *const *arts, size_t n)
{
    cJSON *meta = cJSON_CreateObject();
    if (!meta)
        return NULL;
    add_common(meta, "model", common_value(arts, n, "model"));
    cJSON_AddNullToObject(meta, "precision");
    add_common(meta, "hardware", common_value(arts, n, "gpu"));
    add_common(meta, "context_window", common_value(arts, n, "max_context_tokens"));
    cJSON_AddNullToObject(meta, "max_running_requests");
    cJSON_AddNullToObject(meta, "tensor_parallel_size");
    const cJSON *ep = common_value(arts, n, "endpoint");
    if (cJSON_IsString(ep)) {
        /* what anvil run's workload is, in seed 003's words */
        char scope[256];
        snprintf(scope, sizeof scope,
                 "Fixed-length synthetic text via %s; excludes warmup requests and failed requests.",
                 strcmp(ep->valuestring, "chat") ? ep->valuestring : "chat completions");
        cJSON_AddStringToObject(meta, "scope", scope);
    } else {
        cJSON_AddNullToObject(meta, "scope");
    }
    return meta;
}

/* ---- numbering and ordering rows ---- */

static const char *str_of(const cJSON *row, const char *k)
{
    return field(row, k)->valuestring;
}

static double num_of(const cJSON *row, const char *k)
{
    return field(row, k)->valuedouble;
}

static bool same_case(const cJSON *a, const cJSON *b)
{
    return !strcmp(str_of(a, "engine"), str_of(b, "engine"))
        && !strcmp(str_of(a, "case_id"), str_of(b, "case_id"));
}

/* The index of the first row of v[0..n) in the same engine × case as row. */
static size_t case_index(cJSON *const *v, size_t n, const cJSON *row)
{
    for (size_t i = 0; i < n; i++)
        if (same_case(v[i], row))
            return i;
    return n;
}

static bool repeat_used(cJSON *const *v, size_t n, const cJSON *row, double r)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *rep = field(v[i], "repeat");
        if (cJSON_IsNumber(rep) && rep->valuedouble == r && same_case(v[i], row))
            return true;
    }
    return false;
}

/* Gives each unnumbered row the smallest round its case does not use. */
static void number_rows(cJSON *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!cJSON_IsNull(field(v[i], "repeat")))
            continue;
        double r = 1;
        while (repeat_used(v, n, v[i], r))
            r++;
        cJSON_ReplaceItemInObjectCaseSensitive(v[i], "repeat", cJSON_CreateNumber(r));
    }
}

struct keyed_row {
    cJSON *row;
    size_t group, pos;  /* first appearance of its case; input position */
    double repeat;
};

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed_row *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->repeat != y->repeat)
        return x->repeat < y->repeat ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Reorders rows in place by case (first appearance), then repeat, and fails
 * on a repeated (engine, case_id, repeat). */
static int order_rows(cJSON *rows, char *err, size_t errlen)
{
    size_t n = (size_t)cJSON_GetArraySize(rows);
    cJSON **v = malloc(n * sizeof *v);
    struct keyed_row *k = malloc(n * sizeof *k);
    int rc = v && k ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        v[i] = cJSON_DetachItemFromArray(rows, 0);
    if (!rc)
        number_rows(v, n);
    for (size_t i = 0; !rc && i < n; i++)
        k[i] = (struct keyed_row){v[i], case_index(v, n, v[i]), i, num_of(v[i], "repeat")};
    if (!rc)
        qsort(k, n, sizeof *k, cmp_keyed);
    for (size_t i = 0; !rc && i < n; i++) {
        if (i && k[i].group == k[i - 1].group && k[i].repeat == k[i - 1].repeat) {
            snprintf(err, errlen, "two rows are engine '%s', case '%s', round %.0f",
                     str_of(k[i].row, "engine"), str_of(k[i].row, "case_id"), k[i].repeat);
            rc = -1;
        }
    }
    for (size_t i = 0; v && k && i < n; i++)
        cJSON_AddItemToArray(rows, k[i].row);
    free(v);
    free(k);
    return rc;
}

/* ---- aggregates ---- */

/* Summarizes metric k over the rounds g[0..n): median/min/max, all null when
 * a round lacks it. */
static int add_metric_range(cJSON *metrics, const char *k, cJSON *const *g, size_t n)
{
    double *vals = malloc(n * sizeof *vals);
    if (!vals)
        return -1;
    size_t have = 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = field(g[i], k);
        if (cJSON_IsNumber(v))
            vals[have++] = v->valuedouble;
    }
    struct matrix_range r;
    bool all = have == n;
    int rc = all ? matrix_range_of(vals, n, &r) : 0;
    free(vals);
    if (rc)
        return -1;
    cJSON *o = cJSON_AddObjectToObject(metrics, k);
    const char *names[3] = {"median", "min", "max"};
    double rv[3] = {all ? r.median : 0, all ? r.min : 0, all ? r.max : 0};
    for (int i = 0; i < 3; i++) {
        if (all)
            cJSON_AddNumberToObject(o, names[i], rv[i]);
        else
            cJSON_AddNullToObject(o, names[i]);
    }
    return o ? 0 : -1;
}

/* One aggregates entry for the rounds g[0..n) of one case. */
static cJSON *aggregate_case(cJSON *const *g, size_t n, char *err, size_t errlen)
{
    static const char *const same[] = {"input_tokens", "output_tokens", "concurrency"};
    for (size_t i = 1; i < n; i++)
        for (int s = 0; s < 3; s++)
            if (num_of(g[i], same[s]) != num_of(g[0], same[s])) {
                snprintf(err, errlen, "engine '%s', case '%s': rounds disagree on %s (%g, %g)",
                         str_of(g[0], "engine"), str_of(g[0], "case_id"), same[s],
                         num_of(g[0], same[s]), num_of(g[i], same[s]));
                return NULL;
            }
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "engine", str_of(g[0], "engine"));
    cJSON_AddStringToObject(a, "case_id", str_of(g[0], "case_id"));
    for (int s = 0; s < 3; s++)
        cJSON_AddNumberToObject(a, same[s], num_of(g[0], same[s]));
    cJSON_AddNumberToObject(a, "rounds", (double)n);
    double completed = 0;
    for (size_t i = 0; i < n; i++)
        completed += num_of(g[i], "completed");
    cJSON_AddNumberToObject(a, "completed", completed);
    cJSON *metrics = cJSON_AddObjectToObject(a, "metrics");
    int rc = metrics ? 0 : -1;
    for (int i = 0; !rc && i < MATRIX_N_METRICS; i++)
        rc = add_metric_range(metrics, matrix_metric_names[i], g, n);
    if (rc) {
        snprintf(err, errlen, "out of memory");
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

/* Collects the rows of the case of rows[at] into g; returns how many. */
static size_t collect_case(cJSON *const *v, size_t n, size_t at, cJSON **g)
{
    size_t k = 0;
    for (size_t i = at; i < n; i++)
        if (same_case(v[i], v[at]))
            g[k++] = v[i];
    return k;
}

cJSON *matrix_aggregates(const cJSON *rows, char *err, size_t errlen)
{
    size_t n = (size_t)cJSON_GetArraySize(rows);
    cJSON **v = malloc((n ? n : 1) * sizeof *v), **g = malloc((n ? n : 1) * sizeof *g);
    cJSON *out = v && g ? cJSON_CreateArray() : NULL;
    if (!out)
        snprintf(err, errlen, "out of memory");
    size_t i = 0;
    for (cJSON *r = rows ? rows->child : NULL; out && r; r = r->next)
        v[i++] = r;
    for (i = 0; out && i < n; i++) {
        if (case_index(v, i, v[i]) < i)
            continue;   /* its case was aggregated at its first row */
        cJSON *a = aggregate_case(g, collect_case(v, n, i, g), err, errlen);
        if (!a) {
            cJSON_Delete(out);
            out = NULL;
        } else {
            cJSON_AddItemToArray(out, a);
        }
    }
    free(v);
    free(g);
    return out;
}

/* ---- the document ---- */

static const char *count_word(double n)
{
    static const char *const words[] = {"zero", "one", "two", "three", "four", "five", "six",
                                        "seven", "eight", "nine", "ten"};
    return n >= 0 && n <= 10 ? words[(int)n] : NULL;
}

/* "Each metric: median and range across three rounds. ..." as in seed 003;
 * "two to three rounds" when cases have different round counts. */
static void add_statistics(cJSON *doc, const cJSON *aggregates)
{
    double lo = INFINITY, hi = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, aggregates) {
        lo = fmin(lo, num_of(a, "rounds"));
        hi = fmax(hi, num_of(a, "rounds"));
    }
    char l[32], h[32], text[256];
    snprintf(l, sizeof l, "%s", count_word(lo) ? count_word(lo) : "");
    snprintf(h, sizeof h, "%s", count_word(hi) ? count_word(hi) : "");
    if (!l[0])
        snprintf(l, sizeof l, "%.0f", lo);
    if (!h[0])
        snprintf(h, sizeof h, "%.0f", hi);
    char range[80];
    snprintf(range, sizeof range, lo == hi ? "%s" : "%s to %s", l, h);
    snprintf(text, sizeof text, "Each metric: median and range across %s rounds. "
             "Round percentiles are not pooled percentiles.", range);
    cJSON_AddStringToObject(doc, "statistics", text);
}

/* Failed requests or no completed request in a round make the matrix FAIL. */
static void add_row_reasons(const cJSON *rows, cJSON *reasons)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        char why[512];
        double failed = num_of(r, "failed"), completed = num_of(r, "completed");
        if (failed > 0)
            snprintf(why, sizeof why, "engine '%s', case '%s', round %.0f: %.0f of %.0f requests failed",
                     str_of(r, "engine"), str_of(r, "case_id"), num_of(r, "repeat"), failed,
                     failed + completed);
        else if (completed == 0)
            snprintf(why, sizeof why, "engine '%s', case '%s', round %.0f: no request completed",
                     str_of(r, "engine"), str_of(r, "case_id"), num_of(r, "repeat"));
        else
            continue;
        cJSON_AddItemToArray(reasons, cJSON_CreateString(why));
    }
}

static void add_meta(cJSON *doc, const cJSON *meta)
{
    for (int i = 0; i < MATRIX_N_META; i++) {
        const cJSON *v = meta ? field(meta, matrix_meta_keys[i]) : NULL;
        cJSON_AddItemToObject(doc, matrix_meta_keys[i], v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
    }
}

static double sum_of(const cJSON *rows, const char *k)
{
    double s = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows)
        s += num_of(r, k);
    return s;
}

/* Copies rows, checks each and numbers and orders them. NULL with err set. */
static cJSON *prepare_rows(const cJSON *rows, char *err, size_t errlen)
{
    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0) {
        snprintf(err, errlen, "no rows");
        return NULL;
    }
    int i = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        char e[256];
        if (matrix_check_row(r, true, e, sizeof e)) {
            snprintf(err, errlen, "row %d: %s", i, e);
            return NULL;
        }
        i++;
    }
    cJSON *copy = cJSON_Duplicate(rows, true);
    if (!copy)
        snprintf(err, errlen, "out of memory");
    if (copy && order_rows(copy, err, errlen)) {
        cJSON_Delete(copy);
        return NULL;
    }
    return copy;
}

cJSON *matrix_build(const cJSON *rows, const cJSON *meta, const cJSON *extra_reasons, char *err,
                    size_t errlen)
{
    cJSON *ordered = prepare_rows(rows, err, errlen);
    cJSON *aggregates = ordered ? matrix_aggregates(ordered, err, errlen) : NULL;
    cJSON *doc = aggregates ? cJSON_CreateObject() : NULL;
    if (!doc) {
        cJSON_Delete(ordered);
        cJSON_Delete(aggregates);
        return NULL;
    }
    cJSON *reasons = extra_reasons ? cJSON_Duplicate(extra_reasons, true) : cJSON_CreateArray();
    add_row_reasons(ordered, reasons);
    cJSON_AddStringToObject(doc, "schema", MATRIX_SCHEMA);
    cJSON_AddStringToObject(doc, "status", cJSON_GetArraySize(reasons) ? "FAIL" : "PASS");
    cJSON_AddItemToObject(doc, "status_reasons", reasons);
    add_meta(doc, meta);
    cJSON_AddNumberToObject(doc, "counted_rounds", cJSON_GetArraySize(ordered));
    cJSON_AddNumberToObject(doc, "counted_requests", sum_of(ordered, "completed"));
    add_statistics(doc, aggregates);
    /* scope stays after statistics, where seed 003 has it */
    cJSON_AddItemToObject(doc, "scope", cJSON_DetachItemFromObjectCaseSensitive(doc, "scope"));
    cJSON_AddItemToObject(doc, "rows", ordered);
    cJSON_AddItemToObject(doc, "aggregates", aggregates);
    return doc;
}

cJSON *matrix_parse(const char *text, size_t len, char *err, size_t errlen)
{
    cJSON *doc = cJSON_ParseWithLength(text, len);
    const cJSON *schema = doc ? field(doc, "schema") : NULL;
    const cJSON *rows = doc ? field(doc, "rows") : NULL;
    if (!cJSON_IsObject(doc))
        snprintf(err, errlen, doc ? "not a JSON object" : "not valid JSON");
    else if (schema && !(cJSON_IsString(schema) && !strcmp(schema->valuestring, MATRIX_SCHEMA)))
        snprintf(err, errlen, "'schema' is not \"%s\"", MATRIX_SCHEMA);
    else if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0)
        snprintf(err, errlen, "'rows' %s a non-empty array", rows ? "is not" : "is missing: want");
    else {
        int i = 0;
        const cJSON *r;
        cJSON_ArrayForEach(r, rows) {
            char e[256];
            if (matrix_check_row(r, false, e, sizeof e)) {
                snprintf(err, errlen, "rows[%d]: %s", i, e);
                cJSON_Delete(doc);
                return NULL;
            }
            i++;
        }
        return doc;
    }
    cJSON_Delete(doc);
    return NULL;
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
