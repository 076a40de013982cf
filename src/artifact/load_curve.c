/* load_curve.c — the anvil-serving.load-curve/v1 artifact: points from
 * round artifacts, the writer and the checked reader (each block's writer
 * next to its reader, same keys in the same order). */
#include "artifact/load_curve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/fields.h"
#include "artifact/matrix.h"
#include "stats/dist.h"

#define LOAD_CURVE_METRIC_NAME(e, key, unit) #key,
const char *const load_curve_metric_names[LC_N_METRICS] = {LOAD_CURVE_METRICS(LOAD_CURVE_METRIC_NAME)};

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

/* ---- codecs ---- */

/* 51 numbers or nulls (the quantiles and the quantile curves). */
static void quantiles_write(cJSON *o, const char *key, const void *value)
{
    const double *v = value;
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; a && i < LOAD_CURVE_QUANTILES; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
}

static void quantiles_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    jread_numbers(r, o, key, flags, value, LOAD_CURVE_QUANTILES);
}

static const struct field_codec quantiles_codec = {quantiles_write, quantiles_read, NULL};

/* A point's completed requests per repeat: the member completed, its count
 * n_completed beside it. */
#define POINT_OF(v) ((struct load_curve_point *)((char *)(v) - offsetof(struct load_curve_point, completed)))

static void completed_write(cJSON *o, const char *key, const void *value)
{
    const struct load_curve_point *p = POINT_OF((void *)value);
    cJSON *c = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; c && i < p->n_completed; i++)
        cJSON_AddItemToArray(c, cJSON_CreateNumber((double)p->completed[i]));
}

static void completed_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct load_curve_point *p = POINT_OF(value);
    const cJSON *a = jread_array(r, o, key, flags), *e;
    if (!a)
        return;
    size_t mark = jread_enter(r, key);
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

static void completed_free(void *value)
{
    struct load_curve_point *p = POINT_OF(value);
    free(p->completed);
    p->completed = NULL;
    p->n_completed = 0;
}

static const struct field_codec completed_codec = {completed_write, completed_read, completed_free};

/* ---- points ---- */

static const struct field range_rows[] = {
    F_NUM(struct load_curve_range, median, 0, NULL),
    F_NUM(struct load_curve_range, min, 0, NULL),
    F_NUM(struct load_curve_range, max, 0, NULL),
    F_WHOLE(struct load_curve_range, n, 0, "repeats"),
};
static const struct field_table range_t = FIELD_TABLE_ALWAYS("range", struct load_curve_range, range_rows);

#define METRIC_RANGE(e, key, unit) \
    {#key, FIELD_OBJECT, (e) * sizeof(struct load_curve_range), 0, 0, unit, NULL, 0, 0, &range_t, NULL},
static const struct field metric_rows[] = {LOAD_CURVE_METRICS(METRIC_RANGE)};
typedef struct load_curve_range load_curve_ranges[LC_N_METRICS];
static const struct field_table metrics_t = FIELD_TABLE_ALWAYS("metrics", load_curve_ranges, metric_rows);

/* Seed 002's GPU telemetry: null until anvil samples GPUs. */
static const struct field gpu_rows[] = {
    F_OBJ(struct load_curve_gpu, median_sm_mhz, 0, &range_t),
    F_NUM(struct load_curve_gpu, max_temp_c, 0, "°C"),
    F_NUM(struct load_curve_gpu, thermal_share, 0, "fraction"),
};
static const struct field_table gpu_t = FIELD_TABLE("gpu", struct load_curve_gpu, gpu_rows, present);

static const struct field point_rows[] = {
    F_NUM(struct load_curve_point, x, 0, NULL),     /* concurrency, or requests/s (open loop) */
    F_KEYED("metrics", FIELD_OBJECT, struct load_curve_point, metric, 0, FW_INLINE, NULL, &metrics_t, NULL),
    F_CUSTOM_U(struct load_curve_point, completed, 0, "requests", &completed_codec),
    F_OBJ_W(struct load_curve_point, gpu, JR_NULLABLE, FW_NULL, &gpu_t),
    F_CUSTOM_U(struct load_curve_point, ttft_quantiles_ms, 0, "ms", &quantiles_codec),
    F_CUSTOM_U(struct load_curve_point, tpot_quantiles_ms, 0, "ms", &quantiles_codec),
};
const struct field_table load_curve_point_table = FIELD_TABLE_ALWAYS("points[]", struct load_curve_point, point_rows);

void load_curve_point_free(struct load_curve_point *p)
{
    completed_free(&p->completed);
}

/* ---- targets ---- */

/* A target's name is its key in `load`; the rows are what is under it. */
static const struct field target_rows[] = {
    F_NUM(struct load_curve_target, kv_pool_tokens, 0, "tokens"),
    F_ARR(struct load_curve_target, points, n_points, 0, &load_curve_point_table),
};
const struct field_table load_curve_target_table = FIELD_TABLE_ALWAYS("load.*", struct load_curve_target,
                                                                      target_rows);

/* `load`: the member load, its count n_load beside it; name → target. */
#define CURVE_OF(v) ((struct load_curve *)((char *)(v) - offsetof(struct load_curve, load)))

static void load_write(cJSON *o, const char *key, const void *value)
{
    const struct load_curve *c = CURVE_OF((void *)value);
    cJSON *load = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; load && i < c->n_load; i++)
        fields_write(cJSON_AddObjectToObject(load, c->load[i].name), &load_curve_target_table, &c->load[i]);
}

static void load_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct load_curve *c = CURVE_OF(value);
    const cJSON *load = jread_object(r, o, key, flags), *e;
    if (!load)
        return;
    size_t mark = jread_enter(r, key);
    if (!(c->load = calloc((size_t)cJSON_GetArraySize(load) + 1, sizeof *c->load)))
        jread_fail(r, NULL, "out of memory");
    cJSON_ArrayForEach(e, load) {
        if (r->failed)
            break;
        size_t m = jread_enter(r, e->string);
        struct load_curve_target *t = &c->load[c->n_load++];
        if (!cJSON_IsObject(e))
            jread_fail(r, NULL, "expected an object");
        else if (fields_read(r, e, &load_curve_target_table, t) == 0)
            for (size_t i = 0; i < t->n_points && !r->failed; i++)
                if (isnan(t->points[i].x)) {
                    size_t k = jread_enter(r, "points");
                    jread_enter_index(r, (int)i);
                    jread_fail(r, "x", "expected a number, got null");
                    jread_leave(r, k);
                }
        if (!(t->name = strdup(e->string)))
            jread_fail(r, NULL, "out of memory");
        jread_leave(r, m);
    }
    jread_leave(r, mark);
}

static void load_free(void *value)
{
    struct load_curve *c = CURVE_OF(value);
    for (size_t i = 0; i < c->n_load; i++) {
        free(c->load[i].name);
        fields_free(&load_curve_target_table, &c->load[i]);
    }
    free(c->load);
    c->load = NULL;
    c->n_load = 0;
}

static const struct field_codec load_codec = {load_write, load_read, load_free};

/* ---- the document ---- */

/* slo {ttft_ms, tpot_ms}: the two members slo_ttft_ms, slo_tpot_ms, one
 * after the other. */
struct slo_v {
    double ttft_ms, tpot_ms;
};
_Static_assert(offsetof(struct load_curve, slo_tpot_ms) - offsetof(struct load_curve, slo_ttft_ms) ==
               offsetof(struct slo_v, tpot_ms), "slo_v lies over slo_ttft_ms, slo_tpot_ms");
static const struct field slo_rows[] = {
    F_NUM(struct slo_v, ttft_ms, 0, "ms"),
    F_NUM(struct slo_v, tpot_ms, 0, "ms"),
};
static const struct field_table slo_t = FIELD_TABLE_ALWAYS("slo", struct slo_v, slo_rows);

static const struct field curve_rows[] = {
    F_STR_W(struct load_curve, schema, JR_OPTIONAL, FW_OMIT_NONE),
    F_STR(struct load_curve, profile, JR_NULLABLE),
    F_KEYED("slo", FIELD_OBJECT, struct load_curve, slo_ttft_ms, 0, 0, NULL, &slo_t, NULL),
    F_CUSTOM(struct load_curve, environment, JR_OPTIONAL, &field_json_codec),  /* kept as found */
    F_CUSTOM(struct load_curve, quantiles, 0, &quantiles_codec),
    F_CUSTOM(struct load_curve, load, 0, &load_codec),
    F_OBJ(struct load_curve, provenance, JR_OPTIONAL, &provenance_table),
};
const struct field_table load_curve_table = FIELD_TABLE_ALWAYS("load curve", struct load_curve, curve_rows);

cJSON *load_curve_to_json(const struct load_curve *c)
{
    return fields_to_json(&load_curve_table, c);
}

int load_curve_from_json(const cJSON *j, const char *name, struct load_curve *out, char *err,
                         size_t errlen)
{
    struct jread r;
    *out = (struct load_curve){0};
    if (jread_document(&r, j, name, err, errlen) != 0)
        return -1;
    char *schema = NULL;    /* checked first: another artifact kind is named as such */
    if (jread_schema(&r, j, JR_OPTIONAL, LOAD_CURVE_SCHEMA, &schema) == 0)
        fields_read(&r, j, &load_curve_table, out);
    free(schema);
    if (r.failed) {
        load_curve_free(out);
        return -1;
    }
    return 0;
}

void load_curve_free(struct load_curve *c)
{
    fields_free(&load_curve_table, c);
}
