/* html.c — the HTML report: the artifacts' data as JSON for report.js,
 * wrapped with uPlot and the report's script and style. */
#include "report/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact/graph.h"
#include "artifact/observe.h"
#include "core/version.h"
#include "report/assets.h"
#include "stats/registry.h"

bool report_html_available(void)
{
    return report_have_uplot != 0;
}

/* A number, or null when NaN/inf (JSON has neither). */
static cJSON *num(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static void add_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, num(v));
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---- runs ---- */

static void add_card(cJSON *cards, const char *k, const char *v);

/* A card of two numbers (fmt takes two doubles), "n/a" when neither is known. */
static void card(cJSON *cards, const char *k, const char *fmt, double a, double b)
{
    char v[96];
    if (!isfinite(a) && !isfinite(b))
        snprintf(v, sizeof v, "n/a");
    else
        snprintf(v, sizeof v, fmt, a, b);
    add_card(cards, k, v);
}

/* A card of one number with prec decimals. */
static void card1(cJSON *cards, const char *k, double a, int prec)
{
    char v[96];
    if (!isfinite(a))
        snprintf(v, sizeof v, "n/a");
    else
        snprintf(v, sizeof v, "%.*f", prec, a);
    add_card(cards, k, v);
}

static void add_card(cJSON *cards, const char *k, const char *v)
{
    cJSON *kv = cJSON_CreateArray();
    cJSON_AddItemToArray(kv, cJSON_CreateString(k));
    cJSON_AddItemToArray(kv, cJSON_CreateString(v));
    cJSON_AddItemToArray(cards, kv);
}

struct by_start {
    double start;       /* start_monotonic_ns */
    size_t i;           /* index in request_timings */
};

/* By start, then index (qsort is not stable). */
static int cmp_start(const void *a, const void *b)
{
    const struct by_start *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* ---- server metrics and telemetry over time ---- */

static cJSON *column_json(const struct obs_column *c, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, num(c->v[i]));
    return a;
}

/* A timeline for report.js: t_s (s since t0, the client's first send) and
 * the columns, by device for the hardware ("host" and "devices"). */
static cJSON *timeline_json(const struct obs_timeline *t, bool hardware, double t0)
{
    cJSON *o = cJSON_CreateObject(), *ts = cJSON_AddArrayToObject(o, "t_s");
    for (size_t i = 0; i < t->n; i++)
        cJSON_AddItemToArray(ts, num(((double)t->t_ns[i] - t0) / 1e9));
    cJSON *cols = cJSON_AddObjectToObject(o, "cols"), *devs = hardware ? cJSON_AddArrayToObject(o, "devices") : NULL;
    for (int c = 0; c < t->n_cols; c++) {
        const struct obs_column *col = &t->col[c];
        cJSON *into = cols;
        if (hardware && col->device >= 0) {
            cJSON *d = NULL, *it;
            cJSON_ArrayForEach(it, devs)
                if (cJSON_GetObjectItem(it, "index")->valuedouble == col->device)
                    d = it;
            if (!d) {
                d = cJSON_CreateObject();
                cJSON_AddNumberToObject(d, "index", col->device);
                cJSON_AddObjectToObject(d, "cols");
                cJSON_AddItemToArray(devs, d);
            }
            into = cJSON_GetObjectItem(d, "cols");
        }
        cJSON_AddItemToObject(into, col->name, column_json(col, t->n));
    }
    return o;
}

/* Adds the run's server and hardware timelines to r (as "server", "gpu")
 * with times relative to t0 (CLOCK_MONOTONIC ns; NaN: the first reading's).
 * Returns 0, or -1 with err set when a series is malformed. */
static int add_timelines(cJSON *r, const struct artifact_any *a, double t0, char *err, size_t errlen)
{
    const struct benchmark *b = &a->u.bench;
    struct obs_timeline srv, hw;
    if (artifact_series_read(b->server_metrics, false, a->path, &srv, err, errlen) != 0)
        return -1;
    if (artifact_series_read(b->hardware, true, a->path, &hw, err, errlen) != 0) {
        obs_timeline_free(&srv);
        return -1;
    }
    if (isnan(t0))
        t0 = srv.n ? (double)srv.t_ns[0] : hw.n ? (double)hw.t_ns[0] : 0;
    if (srv.n)
        cJSON_AddItemToObject(r, "server", timeline_json(&srv, false, t0));
    if (hw.n)
        cJSON_AddItemToObject(r, "gpu", timeline_json(&hw, true, t0));
    obs_timeline_free(&srv);
    obs_timeline_free(&hw);
    return 0;
}

static cJSON *run_json(const struct artifact_any *a, const struct cost *cost, char *err, size_t errlen)
{
    const struct benchmark *b = &a->u.bench;
    const struct bench_dists *d = &b->metrics.dist;
    cJSON *r = cJSON_CreateObject();
    char label[512];
    if (b->sweep.present && b->sweep.case_id)
        snprintf(label, sizeof label, "%s %s r%ld", b->sweep.target ? b->sweep.target : b->engine,
                 b->sweep.case_id, b->sweep.round);
    else
        snprintf(label, sizeof label, "%s (%s)", base_name(a->path), b->engine);
    cJSON_AddStringToObject(r, "label", label);
    cJSON *cards = cJSON_AddArrayToObject(r, "cards");
    card(cards, "requests completed / failed", "%.0f / %.0f", (double)b->completed, (double)b->failed);
    /* the mode's headline (stats/registry.h): a duration run's window, whose
     * completed-request figure reads 0 when every request outlasts it */
    const struct metric_def *head;
    double tps = bench_headline_tps(b, &head);
    char head_key[96];
    snprintf(head_key, sizeof head_key, "%s, %s", head->label, head->unit);
    card1(cards, head_key, tps, 1);
    card(cards, "TTFT p50 / p99, ms", "%.1f / %.1f", d->ttft.p50, d->ttft.p99);
    card(cards, "TPOT p50 / p99, ms", "%.2f / %.2f", d->tpot.p50, d->tpot.p99);
    card(cards, "E2E p50 / p99, ms", "%.0f / %.0f", d->e2e.p50, d->e2e.p99);
    if (isfinite(b->metrics.goodput_rps))
        card(cards, "goodput, requests/s (SLO attainment)", "%.3f (%.2f)", b->metrics.goodput_rps,
             b->good_request_share);
    if (cost && isfinite(cost->gpu_hour_usd))
        card1(cards, "cost, USD per million output tokens", cost_per_mtok(cost, bench_cost_tps(b)), 4);
    cJSON *req = cJSON_AddObjectToObject(r, "req");
    cJSON *start = cJSON_AddArrayToObject(req, "start_s"), *ttft = cJSON_AddArrayToObject(req, "ttft"),
          *tpot = cJSON_AddArrayToObject(req, "tpot"), *e2e = cJSON_AddArrayToObject(req, "e2e"),
          *late = cJSON_AddArrayToObject(req, "lateness"), *tok = cJSON_AddArrayToObject(req, "tokens");
    double t0 = INFINITY;
    bool starts = b->n_request_timings > 0;
    for (size_t i = 0; i < b->n_request_timings; i++) {
        double s = b->request_timings[i].start_monotonic_ns;
        starts &= isfinite(s);
        if (s < t0)
            t0 = s;
    }
    /* request_timings in order of sending (the file keeps completion order) */
    size_t n = b->n_request_timings;
    struct by_start *order = malloc((n ? n : 1) * sizeof *order);
    if (!order) {
        snprintf(err, errlen, "out of memory");
        cJSON_Delete(r);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (struct by_start){starts ? b->request_timings[i].start_monotonic_ns : 0, i};
    qsort(order, n, sizeof *order, cmp_start);
    for (size_t i = 0; i < n; i++) {
        const struct bench_timing *t = &b->request_timings[order[i].i];
        if (starts)
            cJSON_AddItemToArray(start, num((t->start_monotonic_ns - t0) / 1e9));
        cJSON_AddItemToArray(ttft, num(t->ttft_ms));
        cJSON_AddItemToArray(tpot, num(t->tpot_ms));
        cJSON_AddItemToArray(e2e, num(t->e2e_ms));
        cJSON_AddItemToArray(late, num(t->send_lateness_ms));
        cJSON_AddItemToArray(tok, cJSON_CreateNumber((double)t->output_tokens));
    }
    free(order);
    if (add_timelines(r, a, starts ? t0 : NAN, err, errlen) != 0) {
        cJSON_Delete(r);
        return NULL;
    }
    cJSON *itl = cJSON_AddArrayToObject(r, "itl");
    const double q[] = {0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1};
    const double v[] = {d->itl.min, d->itl.p25, d->itl.p50, d->itl.p75, d->itl.p90, d->itl.p95, d->itl.p99,
                        d->itl.max};
    for (int i = 0; d->itl.samples && i < 8; i++) {
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(q[i]));
        cJSON_AddItemToArray(p, num(v[i]));
        cJSON_AddItemToArray(itl, p);
    }
    return r;
}

/* ---- load curves, matrices, decode matrices, graph data ---- */

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
        cJSON_AddItemToArray(x, num(lt->points[p].x));
        cJSON_AddItemToArray(tps, num(m[LC_OUTPUT_THROUGHPUT].median));
        cJSON_AddItemToArray(usd, num(cost_per_mtok(cost, m[LC_OUTPUT_THROUGHPUT].median)));
        cJSON_AddItemToArray(ttft, num(m[LC_P99_TTFT_MS].median));
        cJSON_AddItemToArray(tpot, num(m[LC_P99_TPOT_MS].median));
        cJSON_AddItemToArray(good, num(m[LC_GOODPUT_RPS].median));
        const struct load_curve_gpu *g = &lt->points[p].gpu;
        cJSON_AddItemToArray(sm, num(g->present ? g->median_sm_mhz.median : NAN));
        cJSON_AddItemToArray(temp, num(g->present ? g->max_temp_c : NAN));
        gpu |= g->present;
    }
    cJSON_AddBoolToObject(o, "gpu", gpu);
    return o;
}

static cJSON *curves_json(const struct artifact_any *a, const struct cost *cost)
{
    const struct load_curve *c = &a->u.curve;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", base_name(a->path));
    cJSON_AddStringToObject(o, "load_label", "load point: concurrency, or requests/s for open-loop cases");
    add_num(o, "slo_ttft_ms", c->slo_ttft_ms);
    add_num(o, "slo_tpot_ms", c->slo_tpot_ms);
    cJSON *targets = cJSON_AddArrayToObject(o, "targets");
    for (size_t t = 0; t < c->n_load; t++)
        cJSON_AddItemToArray(targets, curve_json(a, t, cost));
    cJSON_AddBoolToObject(o, "priced", cost && isfinite(cost->gpu_hour_usd));
    return o;
}

static cJSON *strings(const char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

static cJSON *matrix_json(const struct artifact_any *a, const struct cost *cost)
{
    const struct matrix *m = &a->u.matrix;
    static const char *const head[] = {"engine", "case", "req/s", "out tok/s", "TTFT p50 ms", "TTFT p99 ms",
                                       "TPOT p50 ms", "TPOT p99 ms", "E2EL p99 ms"};
    static const enum matrix_metric col[] = {MM_REQUEST_THROUGHPUT, MM_OUTPUT_THROUGHPUT, MM_P50_TTFT_MS,
                                             MM_P99_TTFT_MS, MM_P50_TPOT_MS, MM_P99_TPOT_MS, MM_P99_E2EL_MS};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", base_name(a->path));
    cJSON_AddStringToObject(o, "status", m->status ? m->status : "n/a");
    bool priced = cost && isfinite(cost->gpu_hour_usd);
    cJSON *h = strings(head, sizeof head / sizeof *head);
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
            cJSON_AddItemToArray(r, num(g->metric[col[c]].median));
        if (priced)
            cJSON_AddItemToArray(r, num(cost_per_mtok(cost, g->metric[MM_OUTPUT_THROUGHPUT].median)));
        cJSON_AddItemToArray(rows, r);
    }
    return o;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The distinct values of v[0..n) sorted, into u (n slots); returns how many. */
static size_t distinct(const long *v, size_t n, long *u)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && u[j] != v[i])
            j++;
        if (j == k)
            u[k++] = v[i];
    }
    qsort(u, k, sizeof *u, cmp_long);
    return k;
}

static cJSON *decode_json(const struct artifact_any *a, const struct cost *cost)
{
    const struct decode_matrix *m = &a->u.decode;
    size_t n = m->n_results;
    long *ctx = malloc(n * sizeof *ctx), *conc = malloc(n * sizeof *conc), *uc = malloc(n * sizeof *uc),
         *un = malloc(n * sizeof *un);
    cJSON *o = cJSON_CreateObject();
    if (!ctx || !conc || !uc || !un)
        goto out;
    for (size_t i = 0; i < n; i++) {
        ctx[i] = m->results[i].context_tokens;
        conc[i] = m->results[i].concurrency;
    }
    size_t nctx = distinct(ctx, n, uc), nconc = distinct(conc, n, un);
    cJSON_AddStringToObject(o, "name", base_name(a->path));
    cJSON *cc = cJSON_AddArrayToObject(o, "concurrency");
    for (size_t j = 0; j < nconc; j++)
        cJSON_AddItemToArray(cc, cJSON_CreateNumber((double)un[j]));
    bool priced = cost && isfinite(cost->gpu_hour_usd);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows"), *flags = cJSON_AddArrayToObject(o, "flags");
    cJSON *cost_rows = priced ? cJSON_AddArrayToObject(o, "cost_rows") : NULL;
    for (size_t i = 0; i < nctx; i++) {
        cJSON *r = cJSON_CreateArray(), *f = cJSON_CreateArray(), *cr = cJSON_CreateArray();
        char label[32];
        snprintf(label, sizeof label, "%ld", uc[i]);     /* a row label, not a value to shade */
        cJSON_AddItemToArray(r, cJSON_CreateString(label));
        cJSON_AddItemToArray(cr, cJSON_CreateString(label));
        cJSON_AddItemToArray(f, cJSON_CreateFalse());
        for (size_t j = 0; j < nconc; j++) {
            const struct decode_cell *cell = NULL;
            for (size_t k = 0; k < n; k++)
                if (m->results[k].context_tokens == uc[i] && m->results[k].concurrency == un[j])
                    cell = &m->results[k];
            cJSON_AddItemToArray(r, cell ? num(cell->aggregate_tps) : cJSON_CreateNull());
            cJSON_AddItemToArray(cr, cell ? num(cost_per_mtok(cost, cell->aggregate_tps)) : cJSON_CreateNull());
            cJSON_AddItemToArray(f, cJSON_CreateBool(cell && (cell->capacity_limited || cell->underfilled)));
        }
        cJSON_AddItemToArray(rows, r);
        cJSON_AddItemToArray(flags, f);
        if (cost_rows)
            cJSON_AddItemToArray(cost_rows, cr);
        else
            cJSON_Delete(cr);
    }
out:
    free(ctx);
    free(conc);
    free(uc);
    free(un);
    return o;
}

static const char *semantic(const struct graph_data *g, const char *metric)
{
    const char *key, *text;
    if (graph_semantic_of(metric, &key, &text) != 0)
        return NULL;
    for (size_t i = 0; i < g->n_semantics; i++)
        if (!strcmp(g->semantics[i].key, key))
            return g->semantics[i].text;
    return text;
}

static cJSON *graph_json(const struct artifact_any *a)
{
    const struct graph_data *g = &a->u.graph;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "title", g->title);
    if (g->subtitle)
        cJSON_AddStringToObject(o, "subtitle", g->subtitle);
    cJSON *charts = cJSON_AddArrayToObject(o, "charts");
    for (size_t c = 0; c < g->n_charts; c++) {
        const struct graph_chart *ch = &g->charts[c];
        cJSON *co = cJSON_CreateObject();
        cJSON_AddStringToObject(co, "title", ch->title);
        cJSON_AddStringToObject(co, "metric", ch->metric);
        cJSON_AddStringToObject(co, "x_label", ch->x_label);
        cJSON_AddStringToObject(co, "y_label", ch->y_label);
        const char *def = semantic(g, ch->metric);
        if (def)
            cJSON_AddStringToObject(co, "def", def);
        cJSON *series = cJSON_AddArrayToObject(co, "series");
        for (size_t s = 0; s < ch->n_series; s++) {
            cJSON *so = cJSON_CreateObject(), *pts = cJSON_AddArrayToObject(so, "points");
            cJSON_AddStringToObject(so, "label", ch->series[s].label);
            for (size_t i = 0; i < ch->series[s].n_points; i++) {
                cJSON *p = cJSON_CreateObject();
                cJSON_AddStringToObject(p, "x", ch->series[s].points[i].x);
                add_num(p, "value", ch->series[s].points[i].value);
                cJSON_AddStringToObject(p, "artifact", ch->series[s].points[i].artifact);
                cJSON_AddItemToArray(pts, p);
            }
            cJSON_AddItemToArray(series, so);
        }
        cJSON_AddItemToArray(charts, co);
    }
    return o;
}

/* ---- the document ---- */

static cJSON *definitions(void)
{
    cJSON *d = cJSON_CreateObject();
    /* the metric registry's (stats/registry.h): "name (unit): definition" */
    static const char *const keys[][2] = {{"ttft", "ttft"}, {"tpot", "tpot"}, {"itl", "itl"}, {"e2e", "e2e"},
                                          {"throughput", "output_throughput"}, {"lateness", "send_lateness"},
                                          {"cost", "cost_per_mtok"}, {"goodput", "goodput_rps"}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct metric_def *m = metric_find(keys[i][1]);
        char line[640];
        snprintf(line, sizeof line, "%s (%s): %s", m->name, m->unit, m->definition);
        cJSON_AddStringToObject(d, keys[i][0], line);
    }
    /* docs/METHODOLOGY.md, "Server metrics and telemetry over time" */
    static const char *const over_time[][2] = {
        {"server_tps", "server output tokens/s: Δ`generation_tokens` between two points / the time between "
                       "their midpoints (the server's counter), beside the client's output tokens/s (each "
                       "request's tokens spread evenly from its first token to its end)."},
        {"server_load", "running and waiting requests: the server's gauges at each reading; KV cache usage: "
                        "its `kv_cache_usage` gauge (0..1) in %."},
        {"gpu_util", "GPU utilization: the driver's share of the last sample period a kernel ran "
                     "(`utilization.gpu`), per GPU; host CPU: busy / all jiffies of /proc/stat between two points."},
        {"gpu_power", "GPU power: each GPU's power draw at the reading, W."},
        {"gpu_clock", "GPU SM clock: each GPU's SM clock at the reading, MHz (a clock falling under load: "
                      "power or thermal limits)."},
        {"gpu_temp", "GPU temperature: each GPU's core temperature at the reading, °C."},
    };
    for (size_t i = 0; i < sizeof over_time / sizeof *over_time; i++)
        cJSON_AddStringToObject(d, over_time[i][0], over_time[i][1]);
    return d;
}

static cJSON *data_json(const struct artifact_any *a, size_t n, const struct cost *cost, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "definitions", definitions());
    cJSON *runs = cJSON_AddArrayToObject(o, "runs"), *curves = cJSON_AddArrayToObject(o, "curves"),
          *matrices = cJSON_AddArrayToObject(o, "matrices"), *decode = cJSON_AddArrayToObject(o, "decode"),
          *graphs = cJSON_AddArrayToObject(o, "graphs");
    for (size_t i = 0; i < n; i++) {
        switch (a[i].kind) {
        case AK_BENCHMARK: {
            cJSON *r = run_json(&a[i], cost, err, errlen);
            if (!r) {
                cJSON_Delete(o);
                return NULL;
            }
            cJSON_AddItemToArray(runs, r);
            break;
        }
        case AK_LOAD_CURVE: cJSON_AddItemToArray(curves, curves_json(&a[i], cost)); break;
        case AK_MATRIX: cJSON_AddItemToArray(matrices, matrix_json(&a[i], cost)); break;
        case AK_DECODE_MATRIX: cJSON_AddItemToArray(decode, decode_json(&a[i], cost)); break;
        case AK_GRAPH: cJSON_AddItemToArray(graphs, graph_json(&a[i])); break;
        case AK_UNKNOWN: break;
        }
    }
    return o;
}

/* Text for HTML: & < > " escaped. */
static void html_text(FILE *out, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
}

/* JSON inside <script>: '<' written as \u003c so no "</script>" can end it. */
static void script_json(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("\\u003c", out);
        else
            fputc(*s, out);
}

int report_html(FILE *out, const struct artifact_any *a, size_t n, const struct cost *cost, char *err,
                size_t errlen)
{
    if (!report_html_available()) {
        snprintf(err, errlen, "this build of anvil has no chart bundle (uPlot was not in node_modules "
                 "when it was built): run scripts/install-report-deps, then make");
        return -1;
    }
    cJSON *data = data_json(a, n, cost, err, errlen);
    if (!data)
        return -1;
    char *json = cJSON_PrintUnformatted(data);
    cJSON_Delete(data);
    if (!json) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          /* nothing may load from anywhere: the file is the whole report */
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
          "<title>anvil report</title>\n<style>\n", out);
    fwrite(report_uplot_css, 1, report_uplot_css_len, out);
    fputs("\n</style>\n<style>\n", out);
    fwrite(report_css, 1, report_css_len, out);
    fprintf(out, "</style>\n</head>\n<body>\n<h1>anvil report</h1>\n<div class=\"sub\">anvil %s, charts by "
            "uPlot %s. Files:<br>\n", anvil_version(), report_uplot_version);
    for (size_t i = 0; i < n; i++) {
        html_text(out, a[i].path);
        fprintf(out, " (%s, sha256 %.16s…)<br>\n", artifact_kind_name(a[i].kind), a[i].sha256);
    }
    fputs("</div>\n<div id=\"anvil-report\"></div>\n<div id=\"anvil-status\">the charts are drawn by the "
          "script below; if this line stays, it did not run</div>\n"
          "<script type=\"application/json\" id=\"anvil-data\">", out);
    script_json(out, json);
    free(json);
    fputs("</script>\n<script>\n", out);
    fwrite(report_uplot_js, 1, report_uplot_js_len, out);
    fputs("\n</script>\n<script>\n", out);
    fwrite(report_js, 1, report_js_len, out);
    fputs("</script>\n</body>\n</html>\n", out);
    if (ferror(out)) {
        snprintf(err, errlen, "cannot write the report");
        return -1;
    }
    return 0;
}
