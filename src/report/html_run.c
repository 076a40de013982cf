/* html_run.c — a run's data for the report (see html_parts.h). */
#include "report/html_parts.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact/observe.h"
#include "stats/registry.h"

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

/* ---- failures by status ---- */

/* Groups of failures at most; the rest are summed into one last group. */
#define MAX_FAIL_GROUPS 16

/* A message on one line (control characters as spaces), cut at about 160
 * characters, as the terminal's failure lines (report/failures.h) print it. */
static cJSON *one_line(const char *m)
{
    char v[164];
    size_t i = 0;
    for (; m && m[i] && i < 160; i++)
        v[i] = (unsigned char)m[i] < 0x20 ? ' ' : m[i];
    v[i] = '\0';
    if (m && m[i])
        memcpy(v + 157, "...", 4);
    return cJSON_CreateString(v);
}

/* The failed requests of b grouped by HTTP status and category, in order of
 * first appearance: [{count, status ("HTTP 503" or "no response"),
 * category, message (the first's)}]. */
static cJSON *failures_json(const struct benchmark *b)
{
    cJSON *g = cJSON_CreateArray();
    long other = 0;
    for (size_t i = 0; i < b->n_failures; i++) {
        const struct bench_failure *f = &b->failures[i];
        char status[32] = "no response";
        if (f->http_status != ARTIFACT_NONE && f->http_status > 0)
            snprintf(status, sizeof status, "HTTP %ld", f->http_status);
        const char *cat = f->category ? f->category : "unknown";
        cJSON *it, *hit = NULL;
        cJSON_ArrayForEach(it, g)
            if (!strcmp(cJSON_GetObjectItem(it, "status")->valuestring, status) &&
                !strcmp(cJSON_GetObjectItem(it, "category")->valuestring, cat))
                hit = it;
        if (!hit && cJSON_GetArraySize(g) == MAX_FAIL_GROUPS) {
            other++;
            continue;
        }
        if (!hit) {
            hit = cJSON_CreateObject();
            cJSON_AddNumberToObject(hit, "count", 0);
            cJSON_AddStringToObject(hit, "status", status);
            cJSON_AddStringToObject(hit, "category", cat);
            cJSON_AddItemToObject(hit, "message", one_line(f->message));
            cJSON_AddItemToArray(g, hit);
        }
        cJSON *c = cJSON_GetObjectItem(hit, "count");
        cJSON_SetNumberValue(c, c->valuedouble + 1);
    }
    if (other) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "count", (double)other);
        cJSON_AddStringToObject(o, "status", "other");
        cJSON_AddStringToObject(o, "category", "in other groups");
        cJSON_AddStringToObject(o, "message", "");
        cJSON_AddItemToArray(g, o);
    }
    return g;
}

/* The timeline's colouring rule: a request's TTFT (its TPOT) is marked when
 * over the run's SLO for it, else over the run's own p90. */
static void thresholds_json(cJSON *r, const struct benchmark *b)
{
    const struct bench_dists *d = &b->metrics.dist;
    cJSON *t = cJSON_AddObjectToObject(r, "thresholds");
    bool slo_ttft = b->slo.present && isfinite(b->slo.ttft_ms), slo_tpot = b->slo.present && isfinite(b->slo.tpot_ms);
    html_add_num(t, "ttft_ms", slo_ttft ? b->slo.ttft_ms : d->ttft.p90);
    cJSON_AddStringToObject(t, "ttft_rule", slo_ttft ? "the run's TTFT SLO" : "the run's TTFT p90");
    html_add_num(t, "tpot_ms", slo_tpot ? b->slo.tpot_ms : d->tpot.p90);
    cJSON_AddStringToObject(t, "tpot_rule", slo_tpot ? "the run's TPOT SLO" : "the run's TPOT p90");
}

/* ---- server metrics and telemetry over time ---- */

static cJSON *column_json(const struct obs_column *c, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, html_num(c->v[i]));
    return a;
}

/* A timeline for run.js: t_s (s since t0, the client's first send) and
 * the columns, by device for the hardware ("host" and "devices"). */
static cJSON *timeline_json(const struct obs_timeline *t, bool hardware, double t0)
{
    cJSON *o = cJSON_CreateObject(), *ts = cJSON_AddArrayToObject(o, "t_s");
    for (size_t i = 0; i < t->n; i++)
        cJSON_AddItemToArray(ts, html_num(((double)t->t_ns[i] - t0) / 1e9));
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

cJSON *html_run(const struct artifact_any *a, const struct cost *cost, char *err, size_t errlen)
{
    const struct benchmark *b = &a->u.bench;
    const struct bench_dists *d = &b->metrics.dist;
    cJSON *r = cJSON_CreateObject();
    char label[512];
    if (b->sweep.present && b->sweep.case_id)
        snprintf(label, sizeof label, "%s %s r%ld", b->sweep.target ? b->sweep.target : b->engine,
                 b->sweep.case_id, b->sweep.round);
    else
        snprintf(label, sizeof label, "%s (%s)", html_base_name(a->path), b->engine);
    cJSON_AddStringToObject(r, "label", label);
    if (b->sweep.present && b->sweep.case_id) {
        /* a round of a sweep: curve.js folds it into its load point's detail */
        cJSON *sw = cJSON_AddObjectToObject(r, "sweep");
        cJSON_AddStringToObject(sw, "target", b->sweep.target ? b->sweep.target : b->engine);
        cJSON_AddStringToObject(sw, "case", b->sweep.case_id);
        cJSON_AddNumberToObject(sw, "round", (double)b->sweep.round);
        /* its load point: concurrency, or requests/s for an open loop (curve.js orders the points by it) */
        html_add_num(sw, "x", isnan(b->request_rate) ? (double)b->concurrency : b->request_rate);
        /* which sweep: its directory (DIR/rounds/TARGET/CASE/round-N.json), so two sweeps' rounds of
           one target and case stay apart */
        const char *cut = strstr(a->path, "/rounds/");
        char dir[1024];
        snprintf(dir, sizeof dir, "%.*s", cut ? (int)(cut - a->path) : 0, a->path);
        cJSON_AddStringToObject(sw, "dir", cut ? dir : ".");
    }
    char line[1024];
    cJSON_AddStringToObject(r, "workload", bench_workload_line(b, line, sizeof line));
    cJSON_AddItemToObject(r, "failures", failures_json(b));
    thresholds_json(r, b);
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
            cJSON_AddItemToArray(start, html_num((t->start_monotonic_ns - t0) / 1e9));
        cJSON_AddItemToArray(ttft, html_num(t->ttft_ms));
        cJSON_AddItemToArray(tpot, html_num(t->tpot_ms));
        cJSON_AddItemToArray(e2e, html_num(t->e2e_ms));
        cJSON_AddItemToArray(late, html_num(t->send_lateness_ms));
        cJSON_AddItemToArray(tok, cJSON_CreateNumber((double)t->output_tokens));
    }
    free(order);
    if (add_timelines(r, a, starts ? t0 : NAN, err, errlen) != 0) {
        cJSON_Delete(r);
        return NULL;
    }
    html_run_time(r, b);
    cJSON *itl = cJSON_AddArrayToObject(r, "itl");
    const double q[] = {0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1};
    const double v[] = {d->itl.min, d->itl.p25, d->itl.p50, d->itl.p75, d->itl.p90, d->itl.p95, d->itl.p99,
                        d->itl.max};
    for (int i = 0; d->itl.samples && i < 8; i++) {
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(q[i]));
        cJSON_AddItemToArray(p, html_num(v[i]));
        cJSON_AddItemToArray(itl, p);
    }
    return r;
}
