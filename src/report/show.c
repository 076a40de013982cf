/* show.c — artifact → summary tables. */
#include "report/show.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "artifact/json.h"
#include "artifact/matrix.h"
#include "report/decode_table.h"
#include "report/drift.h"
#include "report/steady.h"

double cost_per_mtok(const struct cost *c, double output_tps)
{
    if (!c || !isfinite(c->gpu_hour_usd) || !(output_tps > 0) || c->gpus < 1)
        return NAN;
    return c->gpu_hour_usd * (double)c->gpus / (output_tps * 3600.0) * 1e6;
}

double bench_output_tps(const struct benchmark *b)
{
    double v = b->metrics.output_throughput;
    return isnan(v) ? b->metrics.throughput_tok_s : v;
}

double bench_headline_tps(const struct benchmark *b, const struct metric_def **def)
{
    const struct metric_def *d = metric_headline(b->duration_mode.present ? METRIC_DURATION : METRIC_REQUESTS);
    double v = !strcmp(d->name, "aggregate_tps") ? b->duration_mode.aggregate_tps : bench_output_tps(b);
    if (isnan(v) && strcmp(d->name, "output_throughput")) {
        d = metric_find("output_throughput");
        v = bench_output_tps(b);
    }
    if (def)
        *def = d;
    return v;
}

double bench_cost_tps(const struct benchmark *b)
{
    return matrix_round_output_tps(b);
}

static bool cost_on(const struct cost *c)
{
    return c && isfinite(c->gpu_hour_usd);
}

/* ---- benchmark ---- */

/* Appends printf text at *len of buf (cap bytes), cutting at the end. */
static void line_add(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void line_add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = *len + (size_t)n < cap ? *len + (size_t)n : cap;
}

/* The load: how requests were sent. */
static void load_text(const struct benchmark *b, char *buf, size_t cap, size_t *len)
{
    const struct bench_workload *w = &b->workload;
    if (b->duration_mode.present)
        line_add(buf, cap, len, "duration %g s (warm-up %g s), ", b->duration_mode.duration_s,
                 b->duration_mode.warmup_s);
    if (w->present && w->agentic.present)
        line_add(buf, cap, len, "agentic: %ld sessions, %ld turns", w->agentic.sessions, w->agentic.turns);
    else if ((w->present && w->trace.present) || (b->load_mode && !strcmp(b->load_mode, "trace-replay")))
        line_add(buf, cap, len, "trace replay (%s, %ld requests, speed %g×)",
                 w->trace.format ? w->trace.format : "trace", w->trace.requests, w->trace.speed);
    else if (isfinite(b->request_rate))
        line_add(buf, cap, len, "open loop at %g req/s (burstiness %g)", b->request_rate, b->burstiness);
    else if (isinf(b->request_rate) || b->concurrency == 0)
        line_add(buf, cap, len, "every request at once (no concurrency cap)");
    else if (b->concurrency > 0)
        line_add(buf, cap, len, "closed loop at concurrency %ld", b->concurrency);
    else
        line_add(buf, cap, len, "closed loop");
    if (isfinite(b->request_rate) && b->concurrency > 0)
        line_add(buf, cap, len, ", concurrency cap %ld", b->concurrency);
}

char *bench_workload_line(const struct benchmark *b, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    load_text(b, buf, cap, &len);
    if (b->requests > 0 && !b->duration_mode.present)     /* a window sends as many as fit */
        line_add(buf, cap, &len, "; %ld requests", b->requests);
    const char *dataset = b->workload.present ? b->workload.dataset : NULL;
    bool recorded = dataset || !isfinite(b->context_tokens) || b->workload.trace.present;
    if (recorded)
        line_add(buf, cap, &len, "; recorded lengths%s%s", dataset ? " of " : "", dataset ? dataset : "");
    else
        line_add(buf, cap, &len, "; %.0f → %ld tokens (input → output max_tokens)", b->context_tokens,
                 b->max_tokens);
    if (b->endpoint)
        line_add(buf, cap, &len, "; %s endpoint", b->endpoint);
    else
        line_add(buf, cap, &len, "; server");
    line_add(buf, cap, &len, " at %s, model %s", b->base_url ? b->base_url : "an unrecorded URL",
             b->model ? b->model : "not recorded");
    return buf;
}

/* A field's row: its name as a label (k without the colon), then its value. */
static void kv_text(struct rtable *t, const char *k, const char *v)
{
    rtable_label(t, k);
    rtable_text(t, v);
}

static void kv_num(struct rtable *t, const char *k, double v, int prec)
{
    rtable_label(t, k);
    rtable_num(t, v, prec);
}

static void kv_whole(struct rtable *t, const char *k, long v)
{
    rtable_label(t, k);
    rtable_whole(t, v, true);
}

/* max_tokens as the requests asked it: the run's figure, or the range of
 * the requests' own when they differ (recorded lengths of a trace or a
 * dataset). */
static void max_tokens_row(struct rtable *t, const struct benchmark *b)
{
    long lo = -1, hi = -1;
    for (size_t i = 0; i < b->n_request_timings; i++) {
        long m = b->request_timings[i].max_tokens;
        if (m == ARTIFACT_NONE)
            continue;
        lo = lo < 0 || m < lo ? m : lo;
        hi = m > hi ? m : hi;
    }
    if (lo < 0 || (lo == hi && lo == b->max_tokens)) {
        kv_whole(t, "Output tokens per request (max_tokens)", b->max_tokens);
        return;
    }
    char v[64];
    if (lo == hi)
        snprintf(v, sizeof v, "%ld", lo);
    else
        snprintf(v, sizeof v, "%ld-%ld (as recorded)", lo, hi);
    kv_text(t, "Output tokens per request (max_tokens)", v);
}

/* A row named by the metric registry's label of metric (stats/registry.h). */
static void latency_row(struct rtable *t, const char *metric, const struct dist *d)
{
    rtable_text(t, metric_find(metric)->label);
    rtable_num(t, d->mean, 2);
    rtable_num(t, d->p50, 2);
    rtable_num(t, d->p90, 2);
    rtable_num(t, d->p99, 2);
    rtable_num(t, d->max, 2);
    rtable_whole(t, (long)d->samples, false);
}

/* A duration-mode run's (a decode cell's) figures, before the request
 * counts: its window's throughput is the run's answer, and a window
 * shorter than a request completes none of them (0 successful requests,
 * 0 tok/s over completed requests) while it counted every token. */
static void window_rows(struct rtable *t, const struct benchmark *b)
{
    const struct bench_duration_mode *w = &b->duration_mode;
    if (!w->present)
        return;
    kv_num(t, "Measurement window (s)", w->window_s, 2);
    kv_num(t, "Output tok/s inside the window (aggregate)", w->aggregate_tps, 2);
    kv_num(t, "Output tokens inside the window", w->tokens_in_window, 0);
    kv_whole(t, "Requests started in the window", w->requests_started_in_window);
    kv_whole(t, "Requests still running when it closed", w->incomplete_requests);
}

static void bench_run_table(struct rdoc *doc, const struct artifact_any *a, const struct cost *cost)
{
    const struct benchmark *b = &a->u.bench;
    const struct bench_metrics *m = &b->metrics;
    char title[512];
    snprintf(title, sizeof title, "%s (benchmark, run %s)", a->path, b->run_id ? b->run_id : "n/a");
    struct rtable *t = rdoc_table(doc, title, 2, "field", "value");
    kv_text(t, "Engine", b->engine);
    kv_text(t, "Model", b->model);
    kv_text(t, "Endpoint", b->endpoint);
    kv_text(t, "Started", b->started_at);
    kv_text(t, "Finished", b->finished_at);
    kv_text(t, "Load mode", b->load_mode ? b->load_mode : b->measurement_protocol);
    if (b->concurrency > 0 || b->concurrency == ARTIFACT_NONE)
        kv_whole(t, "Concurrency", b->concurrency);     /* none: n/a */
    else
        kv_text(t, "Concurrency", "no cap");
    if (!isnan(b->request_rate))
        kv_num(t, "Request rate (req/s)", b->request_rate, 2);
    kv_num(t, "Input tokens per request (planned)", b->context_tokens, 0);
    max_tokens_row(t, b);
    window_rows(t, b);
    kv_whole(t, "Successful requests", b->completed);
    kv_whole(t, "Failed requests", b->failed);
    if (b->not_sent > 0)
        kv_whole(t, "Requests not sent (run cut short)", b->not_sent);
    kv_num(t, "Benchmark duration (s)", b->wall_clock_ms / 1000.0, 2);
    kv_whole(t, "Total input tokens", m->prompt_tokens);
    kv_whole(t, "Total generated tokens", m->output_tokens);
    kv_num(t, "Request throughput (req/s)", m->request_throughput, 2);
    /* the mode's headline (stats/registry.h): a duration run's is its window's, as the report's card */
    kv_num(t, "Output token throughput (tok/s)", bench_headline_tps(b, NULL), 2);
    if (b->duration_mode.present)
        kv_num(t, "Output token throughput of completed requests (tok/s)", bench_output_tps(b), 2);
    kv_num(t, "Total token throughput (tok/s)", m->total_token_throughput, 2);
    kv_num(t, "Peak output token throughput (tok/s, 1 s)", m->peak_output_tps_1s, 2);
    if (!isnan(m->aggregate_tps) && !b->duration_mode.present)
        kv_num(t, "Output tok/s inside the window (aggregate)", m->aggregate_tps, 2);
    if (!isnan(m->goodput_rps))
        kv_num(t, "Request goodput (req/s)", m->goodput_rps, 2);
    if (!isnan(b->good_request_share))
        kv_num(t, "SLO attainment (share of requests)", b->good_request_share, 3);
    if (cost_on(cost))
        kv_num(t, "Cost (USD per million output tokens)", cost_per_mtok(cost, bench_cost_tps(b)), 4);
}

static void bench_notes(struct rdoc *doc, const struct benchmark *b)
{
    for (size_t i = 0; i < b->failed_by_category.n; i++)
        rdoc_note(doc, "%ld requests failed with %s", b->failed_by_category.v[i].count,
                  b->failed_by_category.v[i].key);
    if (b->incomplete)
        rdoc_note(doc, "the run is incomplete: %s", b->incomplete_reason ? b->incomplete_reason : "no reason given");
    if (b->request_rows_left_out > 0 && b->request_rows_left_out != ARTIFACT_NONE)
        rdoc_note(doc, "the rows list the requests of request_index below %ld; %ld more are in the run's "
                  "journal (%s.requests.jsonl): every summary covers them all", b->max_request_rows,
                  b->request_rows_left_out, b->run_id ? b->run_id : "<run_id>");
    if (b->client_bound)
        rdoc_note(doc, "the numbers are limited by the client: %s",
                  b->client_bound_reason && b->client_bound_reason[0] ? b->client_bound_reason
                  : "event-loop lag or send lateness p99 over 1 ms");
    if (b->cache_contaminated)
        rdoc_note(doc, "over 5%% of prompt tokens were served from the prefix cache though every prompt was unique");
    if (b->usage_over_max_tokens > 0)
        rdoc_note(doc, "%ld requests report more output tokens than max_tokens: throughput and TPOT are not "
                  "trustworthy", b->usage_over_max_tokens);
    if (b->prompt_token_mismatches > 0)
        rdoc_note(doc, "%ld requests reported prompt_tokens other than the planned count",
                  b->prompt_token_mismatches);
}

/* The steady state: one note whether it was reached, and a table of the
 * figures that differ from the whole run's beyond noise (report/steady.h). */
static void bench_steady(struct rdoc *doc, const struct benchmark *b)
{
    struct steady_view v;
    char line[320];
    steady_view_of_bench(b, &v);
    if (!v.present)
        return;
    rdoc_note(doc, "steady state %s", steady_line(&v, line, sizeof line));
    struct rtable *t = NULL;
    for (int i = 0; i < STEADY_FIGURES; i++) {
        if (!steady_figure_differs(&v, i))
            continue;
        if (!t && !(t = rdoc_table(doc, "Steady state beside the whole run (differing by over 5 %)", 3,
                                   "figure", "whole run", "steady")))
            return;
        rtable_label(t, v.fig[i].label);
        rtable_num(t, v.fig[i].whole, 2);
        rtable_num(t, v.fig[i].steady, 2);
    }
    if (v.reached && !t)
        rdoc_note(doc, "steady-state figures within 5%% of the whole run's");
}

/* Drift over the run: a note per metric whose last quarter moved beyond
 * its noise from the first (report/drift.h), or one saying none did. */
static void drift_notes(struct rdoc *doc, const struct benchmark *b)
{
    struct drift d[DRIFT_MAX];
    double q_s;
    int n = drift_of_run(b, d, DRIFT_MAX, &q_s), drifted = 0;
    for (int i = 0; i < n; i++) {
        if (!d[i].drifted)
            continue;
        drifted++;
        rdoc_note(doc, "drift: %s went from %.4g to %.4g %s between the first and the last %.3g s of the run "
                  "(%+.0f%%; noise %.3g %s)", d[i].label, d[i].first, d[i].last, d[i].unit, q_s,
                  d[i].first != 0 ? 100 * (d[i].last - d[i].first) / fabs(d[i].first) : INFINITY, d[i].noise,
                  d[i].unit);
    }
    if (n > 0 && !drifted)
        rdoc_note(doc, "no drift beyond noise: %d metrics compared between the first and the last %.3g s of "
                  "the run", n, q_s);
}

static void show_bench(struct rdoc *doc, const struct artifact_any *a, const struct cost *cost)
{
    const struct benchmark *b = &a->u.bench;
    const struct bench_dists *d = &b->metrics.dist;
    bench_run_table(doc, a, cost);
    struct rtable *t = rdoc_table(doc, "Latency (ms)", 7, "metric", "mean", "p50", "p90", "p99", "max",
                                  "samples");
    latency_row(t, "ttft", &d->ttft);
    latency_row(t, "tpot", &d->tpot);
    latency_row(t, "itl", &d->itl);
    latency_row(t, "e2e", &d->e2e);
    latency_row(t, "time_to_first_output", &d->time_to_first_output);
    if (d->send_lateness.samples)
        latency_row(t, "send_lateness", &d->send_lateness);
    if (d->time_to_headers.samples) {
        t = rdoc_table(doc, "TTFT decomposition (median ms)", 2, "stage", "ms");
        kv_num(t, metric_find("time_to_headers")->label, d->time_to_headers.p50, 2);
        kv_num(t, metric_find("time_to_first_byte")->label, d->time_to_first_byte.p50, 2);
        kv_num(t, metric_find("time_to_first_event")->label, d->time_to_first_event.p50, 2);
        kv_num(t, "First output (any)", d->time_to_first_output.p50, 2);
        kv_num(t, "First content = TTFT", d->ttft.p50, 2);
    }
    bench_steady(doc, b);
    bench_notes(doc, b);
    drift_notes(doc, b);
}

/* ---- matrix ---- */

static void range_cell(struct rtable *t, const struct matrix_range *r, int prec)
{
    rtable_num(t, r->median, prec);
}

static void show_matrix(struct rdoc *doc, const struct artifact_any *a, const struct cost *cost)
{
    const struct matrix *m = &a->u.matrix;
    char title[512];
    snprintf(title, sizeof title, "%s (matrix, status %s)", a->path, m->status ? m->status : "n/a");
    struct rtable *t = rdoc_table(doc, title, 2, "field", "value");
    kv_text(t, "Model", m->meta.model);
    kv_text(t, "Precision", m->meta.precision);
    kv_text(t, "Hardware", m->meta.hardware);
    kv_num(t, "Context window (tokens)", m->meta.context_window, 0);
    kv_whole(t, "Counted rounds", m->counted_rounds);
    kv_whole(t, "Counted requests", m->counted_requests);
    kv_text(t, "Scope", m->meta.scope);
    bool c = cost_on(cost);
    t = rdoc_table(doc, "Per engine and case: median across rounds", c ? 15 : 14, "engine", "case",
                   "in", "out", "conc", "rounds", "completed", "req/s", "out tok/s", "TTFT p50 ms",
                   "TTFT p99 ms", "TPOT p50 ms", "TPOT p99 ms", "E2EL p99 ms", "USD/Mtok");
    for (size_t i = 0; i < m->n_aggregates; i++) {
        const struct matrix_aggregate *g = &m->aggregates[i];
        rtable_text(t, g->engine);
        rtable_text(t, g->case_id);
        rtable_whole(t, g->input_tokens, true);
        rtable_whole(t, g->output_tokens, true);
        rtable_whole(t, g->concurrency, true);
        rtable_whole(t, g->rounds, true);
        rtable_whole(t, g->completed, true);
        range_cell(t, &g->metric[MM_REQUEST_THROUGHPUT], 2);
        range_cell(t, &g->metric[MM_OUTPUT_THROUGHPUT], 1);
        range_cell(t, &g->metric[MM_P50_TTFT_MS], 1);
        range_cell(t, &g->metric[MM_P99_TTFT_MS], 1);
        range_cell(t, &g->metric[MM_P50_TPOT_MS], 2);
        range_cell(t, &g->metric[MM_P99_TPOT_MS], 2);
        range_cell(t, &g->metric[MM_P99_E2EL_MS], 1);
        if (c)
            rtable_num(t, cost_per_mtok(cost, g->metric[MM_OUTPUT_THROUGHPUT].median), 4);
    }
    for (size_t i = 0; i < m->n_status_reasons; i++)
        rdoc_note(doc, "FAIL: %s", m->status_reasons[i]);
    size_t limited = 0;
    for (size_t i = 0; i < m->n_rows; i++)
        limited += m->rows[i].outlasted_window;
    if (limited)    /* as the sweep's results table says it: measured, not failed */
        rdoc_note(doc, "%zu duration-mode round%s where every request outlasted the window: throughput "
                  "counted inside the window", limited, limited == 1 ? "" : "s");
    rdoc_note(doc, "%zu rows (one per round); the full min–max ranges are in the file's aggregates",
              m->n_rows);
}

/* ---- load curve ---- */

static void show_curve(struct rdoc *doc, const struct artifact_any *a, const struct cost *cost)
{
    const struct load_curve *c = &a->u.curve;
    char title[512];
    snprintf(title, sizeof title, "%s (load curve, profile %s)", a->path, c->profile ? c->profile : "n/a");
    struct rtable *t = rdoc_table(doc, title, 2, "field", "value");
    kv_num(t, "SLO TTFT (ms)", c->slo_ttft_ms, 0);
    kv_num(t, "SLO TPOT (ms)", c->slo_tpot_ms, 0);
    bool withcost = cost_on(cost);
    for (size_t i = 0; i < c->n_load; i++) {
        const struct load_curve_target *lt = &c->load[i];
        snprintf(title, sizeof title, "%s: median across repeats per load point", lt->name);
        t = rdoc_table(doc, title, withcost ? 13 : 12, "x", "repeats", "completed", "out tok/s",
                       "TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms", "TPOT p99 ms", "ITL p99 ms",
                       "goodput req/s", "req/s", "SLO attainment", "USD/Mtok");
        for (size_t p = 0; p < lt->n_points; p++) {
            const struct load_curve_point *pt = &lt->points[p];
            const struct load_curve_range *r = pt->metric;
            long done = 0;
            for (size_t k = 0; k < pt->n_completed; k++)
                done += pt->completed[k];
            rtable_num(t, pt->x, 2);
            rtable_whole(t, (long)pt->n_completed, false);
            rtable_whole(t, done, false);
            rtable_num(t, r[LC_OUTPUT_THROUGHPUT].median, 1);
            rtable_num(t, r[LC_MEDIAN_TTFT_MS].median, 1);
            rtable_num(t, r[LC_P99_TTFT_MS].median, 1);
            rtable_num(t, r[LC_MEDIAN_TPOT_MS].median, 2);
            rtable_num(t, r[LC_P99_TPOT_MS].median, 2);
            rtable_num(t, r[LC_P99_ITL_MS].median, 2);
            rtable_num(t, r[LC_GOODPUT_RPS].median, 3);
            rtable_num(t, r[LC_REQUEST_THROUGHPUT].median, 3);
            /* goodput over request throughput: the share of completed requests within every SLO */
            rtable_num(t, r[LC_GOODPUT_RPS].median / r[LC_REQUEST_THROUGHPUT].median, 3);
            if (withcost)
                rtable_num(t, cost_per_mtok(cost, r[LC_OUTPUT_THROUGHPUT].median), 4);
        }
    }
    rdoc_note(doc, "SLO attainment = median goodput / median request throughput at the point");
}

/* ---- graph data ---- */

static void show_graph(struct rdoc *doc, const struct artifact_any *a)
{
    const struct graph_data *g = &a->u.graph;
    char title[512];
    snprintf(title, sizeof title, "%s (graph data: %s)", a->path, g->title);
    struct rtable *t = rdoc_table(doc, title, 2, "field", "value");
    kv_text(t, "Subtitle", g->subtitle);
    rtable_label(t, "Charts");
    rtable_whole(t, (long)g->n_charts, false);
    for (size_t c = 0; c < g->n_charts; c++) {
        const struct graph_chart *ch = &g->charts[c];
        char col[256];
        snprintf(title, sizeof title, "%s (%s)", ch->title, ch->metric);
        snprintf(col, sizeof col, "%s", ch->y_label);
        t = rdoc_table(doc, title, 5, "series", ch->x_label, col, "artifact", "sha256");
        for (size_t s = 0; s < ch->n_series; s++)
            for (size_t i = 0; i < ch->series[s].n_points; i++) {
                const struct graph_point *p = &ch->series[s].points[i];
                rtable_text(t, ch->series[s].label);
                rtable_text(t, p->x);
                rtable_num(t, p->value, 2);
                rtable_text(t, p->artifact);
                rtable_textf(t, "%.12s", p->sha256);
            }
    }
    for (size_t i = 0; i < g->n_semantics; i++)
        rdoc_note(doc, "%s: %s", g->semantics[i].key, g->semantics[i].text);
}

/* ---- SLO search ---- */

/* The load of probe p: concurrency, or requests/s in a request-rate search. */
static double probe_load(const struct search_probe *p)
{
    return isnan(p->request_rate) ? (double)p->concurrency : p->request_rate;
}

/* One target's answer (its best probe and why the search stopped), then
 * its probes in the order they ran. */
static void show_search_result(struct rdoc *doc, const struct search_doc *d, const struct search_result *r)
{
    const char *load = !strcmp(d->search, "concurrency") ? "concurrency" : "request rate (req/s)";
    const struct search_probe *b = &r->best;
    char title[512];
    snprintf(title, sizeof title, "%s%sthe largest load with SLO attainment >= %g", r->target ? r->target : "",
             r->target ? ": " : "", d->slo_attainment);
    struct rtable *t = rdoc_table(doc, title, 2, "field", "value");
    rtable_label(t, load);
    if (b->present)
        rtable_num(t, probe_load(b), isnan(b->request_rate) ? 0 : 3);
    else
        rtable_text(t, "none (no probe passed)");
    if (b->present) {
        rtable_label(t, "SLO attainment (95% interval)");
        rtable_textf(t, "%.4f (%.4f..%.4f), %ld of %ld good", b->attainment, b->interval[0], b->interval[1], b->good,
                     b->requests);
        kv_num(t, "Goodput (req/s)", b->goodput_rps, 3);
        kv_num(t, "TTFT p50 (ms)", b->ttft_p50_ms, 1);
        kv_num(t, "TTFT p99 (ms)", b->ttft_p99_ms, 1);
        kv_num(t, "TPOT p50 (ms)", b->tpot_p50_ms, 2);
        kv_num(t, "TPOT p99 (ms)", b->tpot_p99_ms, 2);
    }
    kv_text(t, "Stopped", r->stopped);
    snprintf(title, sizeof title, "%s%sprobes in the order they ran", r->target ? r->target : "",
             r->target ? ": " : "");
    t = rdoc_table(doc, title, 7, load, "rounds", "good/n", "attainment", "95% interval", "verdict", "decided_by");
    for (size_t i = 0; i < r->n_probes; i++) {
        const struct search_probe *p = &r->probes[i];
        rtable_num(t, probe_load(p), isnan(p->request_rate) ? 0 : 3);
        rtable_whole(t, p->rounds, false);
        rtable_textf(t, "%ld/%ld", p->good, p->requests);
        rtable_num(t, p->attainment, 4);
        rtable_textf(t, "%.4f..%.4f", p->interval[0], p->interval[1]);
        rtable_text(t, p->verdict);
        rtable_text(t, p->decided_by);
    }
}

static void show_search(struct rdoc *doc, const struct artifact_any *a)
{
    const struct search_doc *d = &a->u.search;
    char title[512];
    snprintf(title, sizeof title, "%s (SLO search by %s)", a->path, d->search);
    struct rtable *t = rdoc_table(doc, title, 2, "field", "value");
    kv_text(t, "SLO", d->slo);
    kv_num(t, "Target attainment", d->slo_attainment, 4);
    rtable_label(t, "Range");
    rtable_textf(t, "%g..%g", d->range[0], d->range[1]);
    if (d->one.present)
        show_search_result(doc, d, &d->one);
    for (size_t i = 0; i < d->n_targets; i++)
        show_search_result(doc, d, &d->targets[i]);
    rdoc_note(doc, "a probe passes when its attainment (good / measured requests) is >= the target: decided by "
              "its 95%% Wilson interval excluding the target, or after every repeat by the attainment itself");
}

void show_artifact(struct rdoc *doc, const struct artifact_any *a, const struct cost *cost)
{
    switch (a->kind) {
    case AK_BENCHMARK: show_bench(doc, a, cost); break;
    case AK_MATRIX: show_matrix(doc, a, cost); break;
    case AK_LOAD_CURVE: show_curve(doc, a, cost); break;
    case AK_DECODE_MATRIX: decode_table(doc, a->path, &a->u.decode, cost); break;
    case AK_GRAPH: show_graph(doc, a); break;
    case AK_SEARCH: show_search(doc, a); break;
    case AK_UNKNOWN: break;
    }
}
