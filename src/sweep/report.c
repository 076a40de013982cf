/* report.c — matrix and load-curve artifacts of a sweep. */
#include "sweep/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/benchmark.h"
#include "artifact/matrix.h"
#include "core/file.h"
#include "core/sha256.h"
#include "stats/dist.h"

/* The parsed artifact of a job when it is complete, else NULL; sha256 of
 * its bytes into hex. */
static cJSON *load_round(const cJSON *job, char hex[SHA256_HEX_LEN + 1])
{
    const char *path = cJSON_GetObjectItemCaseSensitive(job, "artifact")->valuestring;
    size_t len;
    char *text = file_read_all(path, &len);
    cJSON *a = text ? cJSON_ParseWithLength(text, len) : NULL;
    if (!cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a, "incomplete"))) {  /* as sweep_round_done */
        cJSON_Delete(a);
        a = NULL;
    } else if (sha256_hex(text, len, hex) != 0) {
        hex[0] = '\0';
    }
    free(text);
    return a;
}

int sweep_write_matrix(const cJSON *plan, const char *dir, bool interrupted, char *status,
                       size_t cap, char *err, size_t errlen)
{
    cJSON *rows = cJSON_CreateArray(), *reasons = cJSON_CreateArray();
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(plan, "jobs"), *job;
    size_t n = (size_t)cJSON_GetArraySize(jobs), k = 0;
    const cJSON **arts = calloc(n ? n : 1, sizeof *arts);
    int rc = -1;
    cJSON_ArrayForEach(job, jobs) {
        char hex[SHA256_HEX_LEN + 1];
        cJSON *a = load_round(job, hex);
        if (!a) {
            char why[300];
            snprintf(why, sizeof why, "round %d of %s%s%s did not complete",
                     (int)cJSON_GetObjectItemCaseSensitive(job, "round")->valuedouble,
                     cJSON_GetObjectItemCaseSensitive(job, "target")->valuestring,
                     cJSON_GetObjectItemCaseSensitive(job, "target")->valuestring[0] ? " " : "",
                     cJSON_GetObjectItemCaseSensitive(job, "case_id")->valuestring);
            cJSON_AddItemToArray(reasons, cJSON_CreateString(why));
            continue;
        }
        cJSON *row = matrix_row_from_round(a, hex[0] ? hex : NULL, err, errlen);
        if (!row) {
            cJSON_Delete(a);
            goto out;
        }
        cJSON_AddItemToArray(rows, row);
        arts[k++] = a;
    }
    if (k == 0) {
        snprintf(err, errlen, "no round completed");
        goto out;
    }
    cJSON *meta = matrix_meta_from_rounds(arts, k);
    cJSON *doc = matrix_build(rows, meta, reasons, err, errlen);
    cJSON_Delete(meta);
    if (!doc)
        goto out;
    if (interrupted)
        cJSON_ReplaceItemInObjectCaseSensitive(doc, "status", cJSON_CreateString("INCOMPLETE"));
    snprintf(status, cap, "%s", cJSON_GetObjectItemCaseSensitive(doc, "status")->valuestring);
    char path[1100];
    snprintf(path, sizeof path, "%s/matrix.json", dir);
    rc = matrix_write_file(path, doc, err, errlen);
    cJSON_Delete(doc);
out:
    for (size_t i = 0; i < k; i++)
        cJSON_Delete((cJSON *)arts[i]);
    free(arts);
    cJSON_Delete(rows);
    cJSON_Delete(reasons);
    return rc;
}

/* ---- load curve ---- */

/* One group of the load curve: a target × workload shape × load point. */
struct point_key {
    char group[160];
    double x;
};

/* A case id without its load suffix ("-c8", "-r2"): what the points of one
 * curve share. Writes into out (cap bytes). */
static void shape_of(const char *case_id, char *out, size_t cap)
{
    const char *dash = strrchr(case_id, '-');
    bool load = dash && (dash[1] == 'c' || dash[1] == 'r') && dash[2] >= '0' && dash[2] <= '9';
    snprintf(out, cap, "%.*s", (int)(load ? (size_t)(dash - case_id) : strlen(case_id)), case_id);
}

static void key_of(const cJSON *a, const cJSON *job, bool several_shapes, bool mixed_loads,
                   struct point_key *k)
{
    const char *label = cJSON_GetObjectItemCaseSensitive(job, "target")->valuestring;
    if (!label[0])
        label = cJSON_GetObjectItemCaseSensitive(a, "engine")->valuestring;
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(a, "request_rate");
    k->x = cJSON_IsNumber(rate) ? rate->valuedouble
                                : cJSON_GetObjectItemCaseSensitive(a, "concurrency")->valuedouble;
    char shape[100] = "", load[32] = "";
    if (several_shapes) {
        shape[0] = '/';
        shape_of(cJSON_GetObjectItemCaseSensitive(job, "case_id")->valuestring, shape + 1, sizeof shape - 1);
    }
    if (mixed_loads)    /* one axis, one unit: concurrency and request rate get their own curves */
        snprintf(load, sizeof load, "/%s", cJSON_IsNumber(rate) ? "request_rate" : "concurrency");
    snprintf(k->group, sizeof k->group, "%s%s%s", label, shape, load);
}

static double metric(const cJSON *a, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "metrics"), name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The number at a.<outer>.<inner> of a round artifact, NaN when absent. */
static double nested(const cJSON *a, const char *outer, const char *mid, const char *inner)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(a, outer);
    if (mid)
        o = cJSON_GetObjectItemCaseSensitive(o, mid);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, inner);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* {median, min, max, n} of one number per round (NaN rounds left out). */
static void add_range_of(cJSON *point, const char *name, cJSON *const *arts, size_t n,
                         double (*get)(const cJSON *a, const void *ctx), const void *ctx);

static double get_metric(const cJSON *a, const void *ctx)
{
    return metric(a, ctx);
}

static void add_range(cJSON *point, const char *name, cJSON *const *arts, size_t n, const char *src)
{
    add_range_of(point, name, arts, n, get_metric, src);
}

static double get_sm_mhz(const cJSON *a, const void *ctx)
{
    (void)ctx;
    return nested(a, "hardware", "gpu", "median_sm_mhz");
}

/* Seed 002's gpu block from the rounds' telemetry: the range of their
 * median SM clocks, the hottest temperature, and the share of thermally
 * throttled samples pooled over every round's GPU samples. NULL when no
 * round read a GPU. */
static cJSON *gpu_block(cJSON *const *arts, size_t n)
{
    double hottest = NAN, throttled = 0, samples = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        double t = nested(arts[i], "hardware", "gpu", "max_temp_c"), share = nested(arts[i], "hardware", "gpu", "thermal_share");
        double k = nested(arts[i], "hardware_run_summary", NULL, "samples") *
                   nested(arts[i], "hardware_run_summary", NULL, "gpu_count");
        any |= !isnan(get_sm_mhz(arts[i], NULL)) || !isnan(t);
        if (!isnan(t))
            hottest = isnan(hottest) ? t : fmax(hottest, t);
        if (!isnan(share) && k > 0) {
            throttled += share * k;
            samples += k;
        }
    }
    if (!any)
        return NULL;
    cJSON *g = cJSON_CreateObject();
    add_range_of(g, "median_sm_mhz", arts, n, get_sm_mhz, NULL);
    artifact_add_number(g, "max_temp_c", hottest);
    artifact_add_number(g, "thermal_share", samples > 0 ? throttled / samples : NAN);
    return g;
}

static void add_range_of(cJSON *point, const char *name, cJSON *const *arts, size_t n,
                         double (*get)(const cJSON *a, const void *ctx), const void *ctx)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; v && i < n; i++) {
        double x = get(arts[i], ctx);
        if (!isnan(x))
            v[k++] = x;
    }
    struct matrix_range r;
    cJSON *o = cJSON_AddObjectToObject(point, name);
    if (k && matrix_range_of(v, k, &r) == 0) {
        cJSON_AddNumberToObject(o, "median", r.median);
        cJSON_AddNumberToObject(o, "min", r.min);
        cJSON_AddNumberToObject(o, "max", r.max);
    } else {
        cJSON_AddNullToObject(o, "median");
        cJSON_AddNullToObject(o, "min");
        cJSON_AddNullToObject(o, "max");
    }
    cJSON_AddNumberToObject(o, "n", (double)k);
    free(v);
}

/* 51 nearest-rank quantiles of field over every request of every repeat. */
static cJSON *pooled_quantiles(cJSON *const *arts, size_t n, const char *field)
{
    size_t cap = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        cap += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(arts[i], "request_timings"));
    double *v = malloc((cap ? cap : 1) * sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        const cJSON *t;
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(arts[i], "request_timings")) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(t, field);
            if (cJSON_IsNumber(x))
                v[k++] = x->valuedouble;
        }
    }
    cJSON *q = cJSON_CreateArray();
    struct dist d;
    dist_compute(v, k, PCT_NEAREST, &d);    /* sorts v */
    for (int i = 0; i < LOAD_CURVE_QUANTILES; i++) {
        double p = 100.0 * i / (LOAD_CURVE_QUANTILES - 1);
        cJSON_AddItemToArray(q, k ? cJSON_CreateNumber(i == 0 ? v[0] : pct_sorted(v, k, p, PCT_NEAREST))
                                  : cJSON_CreateNull());
    }
    free(v);
    return q;
}

static cJSON *point_json(double x, cJSON *const *arts, size_t n)
{
    static const char *const ranges[][2] = {
        {"output_throughput", "output_throughput"}, {"median_ttft_ms", "ttft_p50_ms"},
        {"p99_ttft_ms", "ttft_p99_ms"}, {"median_tpot_ms", "tpot_p50_ms"}, {"p99_tpot_ms", "tpot_p99_ms"},
        {"p99_itl_ms", "itl_p99_ms"}, {"median_itl_ms", "itl_p50_ms"}, {"goodput_rps", "goodput_rps"},
        {"request_throughput", "request_throughput"},
    };
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "x", x);
    for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++)
        add_range(p, ranges[i][0], arts, n, ranges[i][1]);
    cJSON *completed = cJSON_AddArrayToObject(p, "completed");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(completed, cJSON_CreateNumber(
            cJSON_GetObjectItemCaseSensitive(arts[i], "completed")->valuedouble));
    cJSON *gpu = gpu_block(arts, n);
    if (gpu)
        cJSON_AddItemToObject(p, "gpu", gpu);
    else
        cJSON_AddNullToObject(p, "gpu");
    cJSON_AddItemToObject(p, "ttft_quantiles_ms", pooled_quantiles(arts, n, "ttft_ms"));
    cJSON_AddItemToObject(p, "tpot_quantiles_ms", pooled_quantiles(arts, n, "tpot_ms"));
    return p;
}

/* Appends the point for key k (every complete round with that key) to its group. */
static void add_point(cJSON *load, const struct point_key *k, cJSON *const *arts,
                      const struct point_key *keys, size_t n)
{
    cJSON *group = cJSON_GetObjectItemCaseSensitive(load, k->group);
    if (!group) {
        group = cJSON_AddObjectToObject(load, k->group);
        cJSON_AddNullToObject(group, "kv_pool_tokens");
        cJSON_AddArrayToObject(group, "points");
    }
    /* the KV pool: the servers' own figure, the same in every round of a target */
    for (size_t i = 0; i < n; i++) {
        double pool = nested(arts[i], "server_metrics", "derived", "kv_pool_tokens");
        if (!isnan(pool) && !strcmp(keys[i].group, k->group) &&
            cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(group, "kv_pool_tokens"))) {
            cJSON_ReplaceItemInObjectCaseSensitive(group, "kv_pool_tokens", cJSON_CreateNumber(pool));
            break;
        }
    }
    cJSON *points = cJSON_GetObjectItemCaseSensitive(group, "points");
    const cJSON *p;
    cJSON_ArrayForEach(p, points)
        if (cJSON_GetObjectItemCaseSensitive(p, "x")->valuedouble == k->x)
            return;     /* already built from an earlier round */
    cJSON **same = calloc(n, sizeof *same);
    size_t m = 0;
    for (size_t i = 0; same && i < n; i++)
        if (keys[i].x == k->x && !strcmp(keys[i].group, k->group))
            same[m++] = arts[i];
    if (same)
        cJSON_AddItemToArray(points, point_json(k->x, same, m));
    free(same);
}

/* Whether the plan mixes closed-loop and open-loop cases. */
static bool mixed_loads(const cJSON *jobs)
{
    int open = 0, closed = 0;
    const cJSON *j, *a;
    cJSON_ArrayForEach(j, jobs) {
        bool is_open = false;
        cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(j, "args"))
            if (cJSON_IsString(a) && !strcmp(a->valuestring, "--request-rate"))
                is_open = true;
        *(is_open ? &open : &closed) += 1;
    }
    return open && closed;
}

/* Whether the plan's cases have more than one shape (shape_of). */
static bool several_shapes(const cJSON *jobs)
{
    const cJSON *j;
    char first[100] = "", shape[100];
    cJSON_ArrayForEach(j, jobs) {
        shape_of(cJSON_GetObjectItemCaseSensitive(j, "case_id")->valuestring, shape, sizeof shape);
        if (!first[0])
            snprintf(first, sizeof first, "%s", shape);
        else if (strcmp(first, shape) != 0)
            return true;
    }
    return false;
}

cJSON *sweep_load_curve(const cJSON *plan, const char *profile, double slo_ttft_ms,
                        double slo_tpot_ms, char *err, size_t errlen)
{
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(plan, "jobs"), *job;
    size_t n = (size_t)cJSON_GetArraySize(jobs), k = 0;
    cJSON **arts = calloc(n ? n : 1, sizeof *arts);
    struct point_key *keys = calloc(n ? n : 1, sizeof *keys);
    bool shapes = several_shapes(jobs), mixed = mixed_loads(jobs);
    cJSON_ArrayForEach(job, jobs) {
        char hex[SHA256_HEX_LEN + 1];
        cJSON *a = arts ? load_round(job, hex) : NULL;
        if (a) {
            key_of(a, job, shapes, mixed, &keys[k]);
            arts[k++] = a;
        }
    }
    cJSON *doc = NULL;
    if (k == 0) {
        snprintf(err, errlen, "no round completed");
    } else {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", LOAD_CURVE_SCHEMA);
        cJSON_AddStringToObject(doc, "profile", profile);
        cJSON *slo = cJSON_AddObjectToObject(doc, "slo");
        artifact_add_number(slo, "ttft_ms", slo_ttft_ms);
        artifact_add_number(slo, "tpot_ms", slo_tpot_ms);
        cJSON_AddNullToObject(doc, "environment");
        cJSON *q = cJSON_AddArrayToObject(doc, "quantiles");
        for (int i = 0; i < LOAD_CURVE_QUANTILES; i++)
            cJSON_AddItemToArray(q, cJSON_CreateNumber(i / (double)(LOAD_CURVE_QUANTILES - 1)));
        cJSON *load = cJSON_AddObjectToObject(doc, "load");
        for (size_t i = 0; i < k; i++)
            add_point(load, &keys[i], arts, keys, k);
    }
    for (size_t i = 0; i < k; i++)
        cJSON_Delete(arts[i]);
    free(arts);
    free(keys);
    return doc;
}
