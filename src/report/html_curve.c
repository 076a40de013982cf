/* html_curve.c — load curves and matrices for the report (see html_parts.h). */
#include "report/html_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>


static cJSON *curve_json(const struct artifact_any *a, size_t t, const struct cost *cost)
{
    const struct load_curve *c = &a->u.curve;
    const struct load_curve_target *lt = &c->load[t];
    cJSON *o = cJSON_CreateObject();
    cJSON *x = cJSON_AddArrayToObject(o, "x"), *tps = cJSON_AddArrayToObject(o, "tps"),
          *ttft = cJSON_AddArrayToObject(o, "ttft_p99"), *tpot = cJSON_AddArrayToObject(o, "tpot_p99"),
          *good = cJSON_AddArrayToObject(o, "goodput"), *sm = cJSON_AddArrayToObject(o, "sm_mhz"),
          *temp = cJSON_AddArrayToObject(o, "max_temp_c"), *usd = cJSON_AddArrayToObject(o, "cost");
    bool gpu = false;
    cJSON_AddStringToObject(o, "name", lt->name);
    for (size_t p = 0; p < lt->n_points; p++) {
        const struct load_curve_range *m = lt->points[p].metric;
        cJSON_AddItemToArray(x, html_num(lt->points[p].x));
        cJSON_AddItemToArray(tps, html_num(m[LC_OUTPUT_THROUGHPUT].median));
        cJSON_AddItemToArray(usd, html_num(cost_per_mtok(cost, m[LC_OUTPUT_THROUGHPUT].median)));
        cJSON_AddItemToArray(ttft, html_num(m[LC_P99_TTFT_MS].median));
        cJSON_AddItemToArray(tpot, html_num(m[LC_P99_TPOT_MS].median));
        cJSON_AddItemToArray(good, html_num(m[LC_GOODPUT_RPS].median));
        const struct load_curve_gpu *g = &lt->points[p].gpu;
        cJSON_AddItemToArray(sm, html_num(g->present ? g->median_sm_mhz.median : NAN));
        cJSON_AddItemToArray(temp, html_num(g->present ? g->max_temp_c : NAN));
        gpu |= g->present;
    }
    cJSON_AddBoolToObject(o, "gpu", gpu);
    return o;
}

cJSON *html_curve(const struct artifact_any *a, const struct cost *cost)
{
    const struct load_curve *c = &a->u.curve;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", html_base_name(a->path));
    cJSON_AddStringToObject(o, "load_label", "load point: concurrency, or requests/s for open-loop cases");
    html_add_num(o, "slo_ttft_ms", c->slo_ttft_ms);
    html_add_num(o, "slo_tpot_ms", c->slo_tpot_ms);
    cJSON *targets = cJSON_AddArrayToObject(o, "targets");
    for (size_t t = 0; t < c->n_load; t++)
        cJSON_AddItemToArray(targets, curve_json(a, t, cost));
    cJSON_AddBoolToObject(o, "priced", cost && isfinite(cost->gpu_hour_usd));
    return o;
}

cJSON *html_matrix(const struct artifact_any *a, const struct cost *cost)
{
    const struct matrix *m = &a->u.matrix;
    static const char *const head[] = {"engine", "case", "req/s", "out tok/s", "TTFT p50 ms", "TTFT p99 ms",
                                       "TPOT p50 ms", "TPOT p99 ms", "E2EL p99 ms"};
    static const enum matrix_metric col[] = {MM_REQUEST_THROUGHPUT, MM_OUTPUT_THROUGHPUT, MM_P50_TTFT_MS,
                                             MM_P99_TTFT_MS, MM_P50_TPOT_MS, MM_P99_TPOT_MS, MM_P99_E2EL_MS};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", html_base_name(a->path));
    cJSON_AddStringToObject(o, "status", m->status ? m->status : "n/a");
    bool priced = cost && isfinite(cost->gpu_hour_usd);
    cJSON *h = html_strings(head, sizeof head / sizeof *head);
    if (priced)
        cJSON_AddItemToArray(h, cJSON_CreateString("USD / M out tok"));
    cJSON_AddItemToObject(o, "head", h);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (size_t i = 0; i < m->n_aggregates; i++) {
        const struct matrix_aggregate *g = &m->aggregates[i];
        cJSON *r = cJSON_CreateArray();
        cJSON_AddItemToArray(r, cJSON_CreateString(g->engine));
        cJSON_AddItemToArray(r, cJSON_CreateString(g->case_id));
        for (size_t c = 0; c < sizeof col / sizeof *col; c++)
            cJSON_AddItemToArray(r, html_num(g->metric[col[c]].median));
        if (priced)
            cJSON_AddItemToArray(r, html_num(cost_per_mtok(cost, g->metric[MM_OUTPUT_THROUGHPUT].median)));
        cJSON_AddItemToArray(rows, r);
    }
    return o;
}
