/* load_curve.c — the anvil-serving.load-curve/v1 artifact: points from
 * round artifacts, the writer and the checked reader (each block's writer
 * next to its reader, same keys in the same order). */
#include "artifact/load_curve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/matrix.h"
#include "stats/dist.h"

#define OPT (JR_OPTIONAL | JR_NULLABLE)

const char *const load_curve_metric_names[LC_N_METRICS] = {
    "output_throughput", "median_ttft_ms", "p99_ttft_ms", "median_tpot_ms", "p99_tpot_ms",
    "p99_itl_ms", "median_itl_ms", "goodput_rps", "request_throughput",
};

/* ---- a point from round artifacts ---- */

/* The round's value of figure m. */
static double figure(const struct benchmark *b, int m)
{
    const struct bench_metrics *x = &b->metrics;
    switch (m) {
    case LC_OUTPUT_THROUGHPUT: return matrix_round_output_tps(b);     /* a duration round's window */
    case LC_MEDIAN_TTFT_MS: return x->dist.ttft.p50;
    case LC_P99_TTFT_MS: return x->dist.ttft.p99;
    case LC_MEDIAN_TPOT_MS: return x->dist.tpot.p50;
    case LC_P99_TPOT_MS: return x->dist.tpot.p99;
    case LC_P99_ITL_MS: return x->dist.itl.p99;
    case LC_MEDIAN_ITL_MS: return x->dist.itl.p50;
    case LC_GOODPUT_RPS: return x->goodput_rps;
    default: return x->request_throughput;
    }
}

static int range_of(const struct benchmark *const *rounds, size_t n, int m, struct load_curve_range *out)
{
    *out = (struct load_curve_range){NAN, NAN, NAN, 0};
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(figure(rounds[i], m)))
            v[k++] = figure(rounds[i], m);
    struct matrix_range r;
    if (k && matrix_range_of(v, k, &r) == 0)
        *out = (struct load_curve_range){r.median, r.min, r.max, (long)k};
    free(v);
    return 0;
}

/* The per-request TTFT (tpot false) or TPOT of a timing entry. */
static double request_value(const struct bench_timing *t, bool tpot)
{
    return tpot ? t->tpot_ms : t->ttft_ms;
}

/* 51 nearest-rank quantiles of one per-request figure over every request of
 * every round into q (NaN when no request has it). */
static int pooled_quantiles(const struct benchmark *const *rounds, size_t n, bool tpot, double *q)
{
    size_t cap = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        cap += rounds[i]->n_request_timings;
    double *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < rounds[i]->n_request_timings; t++)
            v[k++] = request_value(&rounds[i]->request_timings[t], tpot);
    struct dist d;
    dist_compute(v, k, PCT_NEAREST, &d);    /* drops NaNs, sorts the rest to the front */
    for (int i = 0; i < LOAD_CURVE_QUANTILES; i++) {
        double p = 100.0 * i / (LOAD_CURVE_QUANTILES - 1);
        q[i] = d.samples == 0 ? NAN : i == 0 ? v[0] : pct_sorted(v, d.samples, p, PCT_NEAREST);
    }
    free(v);
    return 0;
}

int load_curve_point_of(const struct benchmark *const *rounds, size_t n, double x,
                        struct load_curve_point *out)
{
    *out = (struct load_curve_point){.x = x, .completed = calloc(n ? n : 1, sizeof *out->completed),
                                     .n_completed = n};
    int rc = out->completed ? 0 : -1;
    for (int m = 0; !rc && m < LC_N_METRICS; m++)
        rc = range_of(rounds, n, m, &out->metric[m]);
    for (size_t i = 0; !rc && i < n; i++)
        out->completed[i] = rounds[i]->completed;
    if (!rc)
        rc = pooled_quantiles(rounds, n, false, out->ttft_quantiles_ms)
             | pooled_quantiles(rounds, n, true, out->tpot_quantiles_ms);
    if (rc)
        load_curve_point_free(out);
    return rc ? -1 : 0;
}

/* ---- ranges and telemetry ---- */

static void range_write(cJSON *o, const char *key, const struct load_curve_range *r)
{
    cJSON *j = cJSON_AddObjectToObject(o, key);
    artifact_add_number(j, "median", r->median);
    artifact_add_number(j, "min", r->min);
    artifact_add_number(j, "max", r->max);
    artifact_add_whole(j, "n", r->n);
}

static void range_read(struct jread *r, const cJSON *o, const char *key, struct load_curve_range *out)
{
    const cJSON *j = jread_object(r, o, key, 0);
    size_t mark = jread_enter(r, key);
    jread_number(r, j, "median", 0, &out->median);
    jread_number(r, j, "min", 0, &out->min);
    jread_number(r, j, "max", 0, &out->max);
    jread_whole(r, j, "n", 0, 0, &out->n);
    jread_leave(r, mark);
}

static void gpu_write(cJSON *o, const struct load_curve_gpu *g)
{
    if (!g->present) {
        cJSON_AddNullToObject(o, "gpu");
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "gpu");
    range_write(j, "median_sm_mhz", &g->median_sm_mhz);
    artifact_add_number(j, "max_temp_c", g->max_temp_c);
    artifact_add_number(j, "thermal_share", g->thermal_share);
}

static void gpu_read(struct jread *r, const cJSON *o, struct load_curve_gpu *g)
{
    *g = (struct load_curve_gpu){0};
    const cJSON *j = jread_object(r, o, "gpu", JR_NULLABLE);
    if (!j)
        return;
    g->present = true;
    size_t mark = jread_enter(r, "gpu");
    range_read(r, j, "median_sm_mhz", &g->median_sm_mhz);
    jread_number(r, j, "max_temp_c", 0, &g->max_temp_c);
    jread_number(r, j, "thermal_share", 0, &g->thermal_share);
    jread_leave(r, mark);
}

static cJSON *numbers_json(const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
    return a;
}

/* ---- points ---- */

static cJSON *point_json(const struct load_curve_point *p)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    artifact_add_number(j, "x", p->x);
    for (int m = 0; m < LC_N_METRICS; m++)
        range_write(j, load_curve_metric_names[m], &p->metric[m]);
    cJSON *c = cJSON_AddArrayToObject(j, "completed");
    for (size_t i = 0; c && i < p->n_completed; i++)
        cJSON_AddItemToArray(c, cJSON_CreateNumber((double)p->completed[i]));
    gpu_write(j, &p->gpu);
    cJSON_AddItemToObject(j, "ttft_quantiles_ms", numbers_json(p->ttft_quantiles_ms, LOAD_CURVE_QUANTILES));
    cJSON_AddItemToObject(j, "tpot_quantiles_ms", numbers_json(p->tpot_quantiles_ms, LOAD_CURVE_QUANTILES));
    return j;
}

static void completed_read(struct jread *r, const cJSON *o, struct load_curve_point *p)
{
    const cJSON *a = jread_array(r, o, "completed", 0), *e;
    if (!a)
        return;
    size_t mark = jread_enter(r, "completed");
    if (!(p->completed = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *p->completed)))
        jread_fail(r, NULL, "out of memory");
    cJSON_ArrayForEach(e, a) {
        if (r->failed)
            break;
        double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (!(v >= 0 && v == floor(v) && v <= 9007199254740992.0)) {
            size_t m = jread_enter_index(r, (int)p->n_completed);
            jread_fail(r, NULL, "expected a whole number ≥ 0");
            jread_leave(r, m);
            break;
        }
        p->completed[p->n_completed++] = (long)v;
    }
    jread_leave(r, mark);
}

static void point_read(struct jread *r, const cJSON *j, struct load_curve_point *p)
{
    *p = (struct load_curve_point){0};
    jread_number(r, j, "x", 0, &p->x);
    if (!r->failed && isnan(p->x))
        jread_fail(r, "x", "expected a number, got null");
    for (int m = 0; m < LC_N_METRICS; m++)
        range_read(r, j, load_curve_metric_names[m], &p->metric[m]);
    completed_read(r, j, p);
    gpu_read(r, j, &p->gpu);
    jread_numbers(r, j, "ttft_quantiles_ms", 0, p->ttft_quantiles_ms, LOAD_CURVE_QUANTILES);
    jread_numbers(r, j, "tpot_quantiles_ms", 0, p->tpot_quantiles_ms, LOAD_CURVE_QUANTILES);
}

void load_curve_point_free(struct load_curve_point *p)
{
    free(p->completed);
    p->completed = NULL;
    p->n_completed = 0;
}

/* ---- targets ---- */

static void target_write(cJSON *load, const struct load_curve_target *t)
{
    cJSON *j = cJSON_AddObjectToObject(load, t->name);
    artifact_add_number(j, "kv_pool_tokens", t->kv_pool_tokens);
    cJSON *pts = cJSON_AddArrayToObject(j, "points");
    for (size_t i = 0; pts && i < t->n_points; i++)
        cJSON_AddItemToArray(pts, point_json(&t->points[i]));
}

/* jread_each's reader of a target's points (ctx: the target). */
static void point_read_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct load_curve_target *t = ctx;
    point_read(r, o, &t->points[i]);
    t->n_points++;      /* counted even when it failed: freed */
}

static void target_read(struct jread *r, const cJSON *j, struct load_curve_target *t)
{
    if (!(t->name = strdup(j->string)))
        jread_fail(r, NULL, "out of memory");
    if (!cJSON_IsObject(j)) {
        jread_fail(r, NULL, "expected an object");
        return;
    }
    jread_number(r, j, "kv_pool_tokens", 0, &t->kv_pool_tokens);
    const cJSON *a = jread_array(r, j, "points", 0);
    if (!a)
        return;
    if (!(t->points = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *t->points)))
        jread_fail(r, "points", "out of memory");
    jread_each(r, "points", a, point_read_at, t);
}

static void target_free(struct load_curve_target *t)
{
    for (size_t i = 0; i < t->n_points; i++)
        load_curve_point_free(&t->points[i]);
    free(t->points);
    free(t->name);
}

/* ---- the document ---- */

cJSON *load_curve_to_json(const struct load_curve *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (c->schema)
        cJSON_AddStringToObject(o, "schema", c->schema);
    artifact_add_string(o, "profile", c->profile);
    cJSON *slo = cJSON_AddObjectToObject(o, "slo");
    artifact_add_number(slo, "ttft_ms", c->slo_ttft_ms);
    artifact_add_number(slo, "tpot_ms", c->slo_tpot_ms);
    cJSON_AddItemToObject(o, "environment", c->environment ? cJSON_Duplicate(c->environment, true)
                                                           : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "quantiles", numbers_json(c->quantiles, LOAD_CURVE_QUANTILES));
    cJSON *load = cJSON_AddObjectToObject(o, "load");
    for (size_t i = 0; load && i < c->n_load; i++)
        target_write(load, &c->load[i]);
    provenance_write(o, &c->provenance);
    return o;
}

static void load_read(struct jread *r, const cJSON *o, struct load_curve *c)
{
    const cJSON *load = jread_object(r, o, "load", 0), *e;
    if (!load)
        return;
    size_t mark = jread_enter(r, "load");
    if (!(c->load = calloc((size_t)cJSON_GetArraySize(load) + 1, sizeof *c->load)))
        jread_fail(r, NULL, "out of memory");
    cJSON_ArrayForEach(e, load) {
        if (r->failed)
            break;
        size_t m = jread_enter(r, e->string);
        target_read(r, e, &c->load[c->n_load++]);
        jread_leave(r, m);
    }
    jread_leave(r, mark);
}

int load_curve_from_json(const cJSON *j, const char *name, struct load_curve *out, char *err,
                         size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    *out = (struct load_curve){0};
    if (!cJSON_IsObject(j)) {
        jread_fail(&r, NULL, "not a JSON object");
        return -1;
    }
    jread_schema(&r, j, JR_OPTIONAL, LOAD_CURVE_SCHEMA, &out->schema);
    jread_string(&r, j, "profile", JR_NULLABLE, &out->profile);
    const cJSON *slo = jread_object(&r, j, "slo", 0);
    size_t mark = jread_enter(&r, "slo");
    jread_number(&r, slo, "ttft_ms", 0, &out->slo_ttft_ms);
    jread_number(&r, slo, "tpot_ms", 0, &out->slo_tpot_ms);
    jread_leave(&r, mark);
    const cJSON *env = jread_item(&r, j, "environment", JR_OPTIONAL);
    if (env && !cJSON_IsNull(env) && !(out->environment = cJSON_Duplicate(env, true)))
        jread_fail(&r, "environment", "out of memory");
    jread_numbers(&r, j, "quantiles", 0, out->quantiles, LOAD_CURVE_QUANTILES);
    load_read(&r, j, out);
    provenance_read(&r, j, &out->provenance);
    if (r.failed) {
        load_curve_free(out);
        return -1;
    }
    return 0;
}

int load_curve_read(const char *text, size_t len, const char *name, struct load_curve *out, char *err,
                    size_t errlen)
{
    *out = (struct load_curve){0};
    cJSON *j = artifact_parse(text, len, name, err, errlen);
    int rc = j ? load_curve_from_json(j, name, out, err, errlen) : -1;
    cJSON_Delete(j);
    return rc;
}

void load_curve_free(struct load_curve *c)
{
    free(c->schema);
    free(c->profile);
    cJSON_Delete(c->environment);
    for (size_t i = 0; i < c->n_load; i++)
        target_free(&c->load[i]);
    free(c->load);
    provenance_free(&c->provenance);
    *c = (struct load_curve){0};
}
