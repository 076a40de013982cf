/* html_curve.c — load curves and matrices for the report (see html_parts.h). */
#include "report/html_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>


/* ---- the points of a target in order of load ---- */

struct by_x {
    double x;
    size_t i;
};

static int cmp_x(const void *a, const void *b)
{
    const struct by_x *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

/* The indices of lt's points by load x ascending (a sweep adds points in
 * the order its rounds ran), into a new array (caller frees); NULL when
 * memory runs out. */
static size_t *by_load(const struct load_curve_target *lt)
{
    size_t n = lt->n_points;
    struct by_x *v = malloc((n ? n : 1) * sizeof *v);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!v || !order) {
        free(v);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (struct by_x){lt->points[i].x, i};
    qsort(v, n, sizeof *v, cmp_x);
    for (size_t i = 0; i < n; i++)
        order[i] = v[i].i;
    free(v);
    return order;
}

/* ---- the answer: the largest load meeting the SLOs, or the knee ---- */

/* Whether point p breaks an SLO of c: its p99 TTFT or p99 TPOT, median
 * across repeats, above the bound (a figure no repeat has, no request
 * completed, breaks it too). Writes which, with the numbers, into why. */
static bool breaks_slo(const struct load_curve *c, const struct load_curve_point *p, char *why, size_t cap)
{
    const struct {
        const char *name;
        double slo, v;
    } b[] = {{"TTFT p99", c->slo_ttft_ms, p->metric[LC_P99_TTFT_MS].median},
             {"TPOT p99", c->slo_tpot_ms, p->metric[LC_P99_TPOT_MS].median}};
    size_t at = 0;
    why[0] = '\0';
    for (size_t k = 0; k < sizeof b / sizeof *b; k++) {
        if (!isfinite(b[k].slo) || b[k].v <= b[k].slo)
            continue;
        int w = isfinite(b[k].v)
                    ? snprintf(why + at, cap - at, "%s%s %.1f ms > SLO %g ms", at ? ", " : "", b[k].name, b[k].v,
                               b[k].slo)
                    : snprintf(why + at, cap - at, "%s%s not measured (no request completed)", at ? ", " : "",
                               b[k].name);
        at = w > 0 && (size_t)w < cap - at ? at + (size_t)w : cap - 1;
    }
    return at > 0;
}

/* With SLOs: the last point before the first that breaks one (points in
 * order), -1 when the lowest load breaks it; why says which point broke
 * which SLO, or that none did. */
static long slo_answer(const struct load_curve *c, const struct load_curve_target *lt, const size_t *order,
                       char *why, size_t cap)
{
    long best = -1;
    char broke[400];
    for (size_t k = 0; k < lt->n_points; k++) {
        const struct load_curve_point *p = &lt->points[order[k]];
        if (breaks_slo(c, p, broke, sizeof broke)) {
            snprintf(why, cap, "%s load, %g, broke it: %s", best < 0 ? "the lowest" : "the next", p->x, broke);
            return best;
        }
        best = (long)order[k];
    }
    snprintf(why, cap, "every load tested met the SLOs: the limit lies above %g (not tested)",
             lt->n_points ? lt->points[order[lt->n_points - 1]].x : NAN);
    return best;
}

/* Without SLOs, the knee: the lowest load whose output throughput (median
 * across repeats) is within KNEE_SHARE of the curve's highest; past it
 * more load buys latency, not throughput. -1 when no point has one. */
#define KNEE_SHARE 0.95
static long knee_answer(const struct load_curve_target *lt, const size_t *order, char *why, size_t cap)
{
    long top = -1;
    for (size_t k = 0; k < lt->n_points; k++) {
        double v = lt->points[order[k]].metric[LC_OUTPUT_THROUGHPUT].median;
        if (isfinite(v) && (top < 0 || v > lt->points[top].metric[LC_OUTPUT_THROUGHPUT].median))
            top = (long)order[k];
    }
    if (top < 0) {
        snprintf(why, cap, "no load point measured an output throughput");
        return -1;
    }
    double most = lt->points[top].metric[LC_OUTPUT_THROUGHPUT].median;
    for (size_t k = 0; k < lt->n_points; k++) {
        double v = lt->points[order[k]].metric[LC_OUTPUT_THROUGHPUT].median;
        if (isfinite(v) && v >= KNEE_SHARE * most) {
            snprintf(why, cap, "no SLO given: the knee, the lowest load reaching %.0f%% of the highest output "
                     "throughput (%.1f tokens/s at load %g)", 100 * KNEE_SHARE, most, lt->points[top].x);
            return (long)order[k];
        }
    }
    return top;     /* not reached: top itself qualifies */
}

/* The answer of one target (the shape html_parts.h documents). */
static cJSON *answer_json(const struct load_curve *c, const struct load_curve_target *lt, const size_t *order,
                          const struct cost *cost)
{
    bool slo = isfinite(c->slo_ttft_ms) || isfinite(c->slo_tpot_ms);
    char why[600];
    long best = slo ? slo_answer(c, lt, order, why, sizeof why) : knee_answer(lt, order, why, sizeof why);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "target", lt->name);
    cJSON_AddStringToObject(o, "kind", slo ? "slo" : "knee");
    cJSON_AddStringToObject(o, "source", "load curve");
    const struct load_curve_point *p = best >= 0 ? &lt->points[best] : NULL;
    const struct load_curve_range *m = p ? p->metric : NULL;
    html_add_num(o, "x", p ? p->x : NAN);
    html_add_num(o, "tps", m ? m[LC_OUTPUT_THROUGHPUT].median : NAN);
    html_add_num(o, "ttft_p99", m ? m[LC_P99_TTFT_MS].median : NAN);
    html_add_num(o, "tpot_p99", m ? m[LC_P99_TPOT_MS].median : NAN);
    html_add_num(o, "goodput", m ? m[LC_GOODPUT_RPS].median : NAN);
    html_add_num(o, "cost", m ? cost_per_mtok(cost, m[LC_OUTPUT_THROUGHPUT].median) : NAN);
    html_add_num(o, "repeats", m ? (double)m[LC_OUTPUT_THROUGHPUT].n : NAN);
    cJSON_AddStringToObject(o, "why", why);
    return o;
}

/* ---- the curves ---- */

static cJSON *curve_json(const struct load_curve_target *lt, const size_t *order, const struct cost *cost)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *x = cJSON_AddArrayToObject(o, "x"), *tps = cJSON_AddArrayToObject(o, "tps"),
          *ttft = cJSON_AddArrayToObject(o, "ttft_p99"), *tpot = cJSON_AddArrayToObject(o, "tpot_p99"),
          *good = cJSON_AddArrayToObject(o, "goodput"), *sm = cJSON_AddArrayToObject(o, "sm_mhz"),
          *temp = cJSON_AddArrayToObject(o, "max_temp_c"), *usd = cJSON_AddArrayToObject(o, "cost");
    bool gpu = false;
    cJSON_AddStringToObject(o, "name", lt->name);
    for (size_t k = 0; k < lt->n_points; k++) {
        const struct load_curve_point *pt = &lt->points[order[k]];
        const struct load_curve_range *m = pt->metric;
        cJSON_AddItemToArray(x, html_num(pt->x));
        cJSON_AddItemToArray(tps, html_num(m[LC_OUTPUT_THROUGHPUT].median));
        cJSON_AddItemToArray(usd, html_num(cost_per_mtok(cost, m[LC_OUTPUT_THROUGHPUT].median)));
        cJSON_AddItemToArray(ttft, html_num(m[LC_P99_TTFT_MS].median));
        cJSON_AddItemToArray(tpot, html_num(m[LC_P99_TPOT_MS].median));
        cJSON_AddItemToArray(good, html_num(m[LC_GOODPUT_RPS].median));
        const struct load_curve_gpu *g = &pt->gpu;
        cJSON_AddItemToArray(sm, html_num(g->present ? g->median_sm_mhz.median : NAN));
        cJSON_AddItemToArray(temp, html_num(g->present ? g->max_temp_c : NAN));
        gpu |= g->present;
    }
    cJSON_AddBoolToObject(o, "gpu", gpu);
    return o;
}

/* The curve c, named name, for curve.js. */
static cJSON *curve_doc(const struct load_curve *c, const char *name, const struct cost *cost, char *err,
                        size_t errlen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "load_label", "load point: concurrency, or requests/s for open-loop cases");
    html_add_num(o, "slo_ttft_ms", c->slo_ttft_ms);
    html_add_num(o, "slo_tpot_ms", c->slo_tpot_ms);
    cJSON *targets = cJSON_AddArrayToObject(o, "targets"), *answers = cJSON_AddArrayToObject(o, "answers");
    for (size_t t = 0; t < c->n_load; t++) {
        size_t *order = by_load(&c->load[t]);
        if (!order) {
            snprintf(err, errlen, "out of memory");
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToArray(targets, curve_json(&c->load[t], order, cost));
        cJSON_AddItemToArray(answers, answer_json(c, &c->load[t], order, cost));
        free(order);
    }
    cJSON_AddBoolToObject(o, "priced", cost && isfinite(cost->gpu_hour_usd));
    return o;
}

cJSON *html_curve(const struct artifact_any *a, const struct cost *cost, char *err, size_t errlen)
{
    return curve_doc(&a->u.curve, html_base_name(a->path), cost, err, errlen);
}

/* ---- the curve of a sweep's rounds that came without one ---- */

/* A case id without its load suffix ("-c8", "-r2"), as the sweep's load
 * curve groups points (sweep/report.c), into out (cap bytes). */
static void shape_of(const char *case_id, char *out, size_t cap)
{
    const char *dash = strrchr(case_id, '-');
    bool load = dash && (dash[1] == 'c' || dash[1] == 'r') && dash[2] >= '0' && dash[2] <= '9';
    snprintf(out, cap, "%.*s", (int)(load ? (size_t)(dash - case_id) : strlen(case_id)), case_id);
}

/* Whether a is a complete round of a sweep. */
static bool sweep_round(const struct artifact_any *a)
{
    return a->kind == AK_BENCHMARK && a->u.bench.sweep.present && a->u.bench.sweep.case_id && !a->u.bench.incomplete;
}

/* The curve and load point of round b: its target, its case's shape when
 * the rounds have several, its load kind when they mix closed and open
 * loops (one axis, one unit), as the sweep's load curve does. */
static void key_of(const struct benchmark *b, bool shapes, bool mixed, char *group, size_t cap, double *x)
{
    bool open = !isnan(b->request_rate);
    char shape[128] = "";
    *x = open ? b->request_rate : (double)b->concurrency;
    if (shapes) {
        shape[0] = '/';
        shape_of(b->sweep.case_id, shape + 1, sizeof shape - 1);
    }
    snprintf(group, cap, "%s%s%s", b->sweep.target ? b->sweep.target : b->engine, shape,
             !mixed ? "" : open ? "/request_rate" : "/concurrency");
}

/* Adds the point (group, x) of the rounds r[0..n) to c unless it is there. */
static int add_point(struct load_curve *c, const struct benchmark *const *r, size_t n, bool shapes, bool mixed,
                     const char *group, double x, const struct benchmark **same)
{
    struct load_curve_target *t = NULL;
    for (size_t i = 0; i < c->n_load && !t; i++)
        if (!strcmp(c->load[i].name, group))
            t = &c->load[i];
    if (!t) {
        t = &c->load[c->n_load];
        *t = (struct load_curve_target){.name = strdup(group), .kv_pool_tokens = NAN,
                                        .points = calloc(n, sizeof *t->points)};
        c->n_load++;
        if (!t->name || !t->points)
            return -1;
    }
    for (size_t i = 0; i < t->n_points; i++)
        if (t->points[i].x == x)
            return 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        char g[300];
        double xi;
        key_of(r[i], shapes, mixed, g, sizeof g, &xi);
        if (xi == x && !strcmp(g, group))
            same[m++] = r[i];
    }
    if (load_curve_point_of(same, m, x, &t->points[t->n_points]) != 0)
        return -1;
    t->n_points++;
    return 0;
}

/* The load curve (no SLO) of the rounds r[0..n) into *c. */
static int curve_of_rounds(const struct benchmark *const *r, size_t n, struct load_curve *c)
{
    bool shapes = false, open = false, closed = false;
    char first[128], shape[128];
    shape_of(r[0]->sweep.case_id, first, sizeof first);
    for (size_t i = 0; i < n; i++) {
        shape_of(r[i]->sweep.case_id, shape, sizeof shape);
        shapes |= strcmp(shape, first) != 0;
        *(isnan(r[i]->request_rate) ? &closed : &open) = true;
    }
    *c = (struct load_curve){.slo_ttft_ms = NAN, .slo_tpot_ms = NAN, .load = calloc(n, sizeof *c->load)};
    const struct benchmark **same = calloc(n, sizeof *same);
    int rc = c->load && same ? 0 : -1;
    for (size_t i = 0; !rc && i < n; i++) {
        char g[300];
        double x;
        key_of(r[i], shapes, open && closed, g, sizeof g, &x);
        rc = add_point(c, r, n, shapes, open && closed, g, x, same);
    }
    free(same);
    return rc;
}

int html_curve_of_rounds(const struct artifact_any *a, size_t n, const struct cost *cost, cJSON **out, char *err,
                         size_t errlen)
{
    const struct benchmark **r = calloc(n ? n : 1, sizeof *r);
    size_t k = 0;
    *out = NULL;
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (sweep_round(&a[i]))
            r[k++] = &a[i].u.bench;
    struct load_curve c = {0};
    int rc = 0;
    if (k && curve_of_rounds(r, k, &c) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    } else if (k) {
        *out = curve_doc(&c, "the sweep's rounds (no load curve among the inputs)", cost, err, errlen);
        rc = *out ? 0 : -1;
    }
    load_curve_free(&c);
    free(r);
    return rc;
}

/* ---- matrices ---- */

/* "engine (value)" of the aggregate among those of case_id whose metric k
 * (median across rounds) is the largest (most) or smallest; null when no
 * engine has it. */
static cJSON *leader(const struct matrix *m, const char *case_id, enum matrix_metric k, bool most)
{
    const struct matrix_aggregate *best = NULL;
    for (size_t i = 0; i < m->n_aggregates; i++) {
        const struct matrix_aggregate *g = &m->aggregates[i];
        double v = g->metric[k].median;
        if (strcmp(g->case_id, case_id) != 0 || !isfinite(v))
            continue;
        if (!best || (most ? v > best->metric[k].median : v < best->metric[k].median))
            best = g;
    }
    if (!best)
        return cJSON_CreateNull();
    char text[300];
    snprintf(text, sizeof text, "%s (%.*f)", best->engine, fabs(best->metric[k].median) >= 100 ? 1 : 2,
             best->metric[k].median);
    return cJSON_CreateString(text);
}

/* Per case that more than one engine ran (in order of first appearance):
 * [case, engines, most output tok/s, lowest TTFT p99, lowest TPOT p99]. */
static cJSON *leaders(const struct matrix *m)
{
    cJSON *rows = cJSON_CreateArray();
    for (size_t i = 0; i < m->n_aggregates; i++) {
        const char *id = m->aggregates[i].case_id;
        size_t engines = 0, first = i;
        for (size_t j = 0; j < m->n_aggregates; j++)
            if (!strcmp(m->aggregates[j].case_id, id)) {
                engines++;
                first = j < first ? j : first;
            }
        if (engines < 2 || first != i)
            continue;
        cJSON *r = cJSON_CreateArray();
        cJSON_AddItemToArray(r, cJSON_CreateString(id));
        char count[32];
        snprintf(count, sizeof count, "%zu", engines);     /* a count, not a figure to shade */
        cJSON_AddItemToArray(r, cJSON_CreateString(count));
        cJSON_AddItemToArray(r, leader(m, id, MM_OUTPUT_THROUGHPUT, true));
        cJSON_AddItemToArray(r, leader(m, id, MM_P99_TTFT_MS, false));
        cJSON_AddItemToArray(r, leader(m, id, MM_P99_TPOT_MS, false));
        cJSON_AddItemToArray(rows, r);
    }
    return rows;
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
    cJSON_AddItemToObject(o, "reasons", html_strings((const char *const *)m->status_reasons, m->n_status_reasons));
    html_add_num(o, "rounds", m->counted_rounds == ARTIFACT_NONE ? NAN : (double)m->counted_rounds);
    html_add_num(o, "requests", m->counted_requests == ARTIFACT_NONE ? NAN : (double)m->counted_requests);
    const char *const meta[] = {m->meta.model, m->meta.precision, m->meta.hardware};
    cJSON *about = cJSON_AddArrayToObject(o, "about");
    for (size_t i = 0; i < sizeof meta / sizeof *meta; i++)
        if (meta[i])
            cJSON_AddItemToArray(about, cJSON_CreateString(meta[i]));
    cJSON_AddItemToObject(o, "leaders", leaders(m));
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
