/* steady.c — the steady-state window of a run (docs/METHODOLOGY.md, "Steady state"). */
#include "stats/steady.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "stats/hist.h"
#include "stats/metrics.h"
#include "stats/pass.h"
#include "stats/tokens.h"

#define STEP_NS ((int64_t)(STEADY_STEP_S * 1e9))

const char *steady_basis_name(enum steady_basis b)
{
    return b == STEADY_IN_FLIGHT ? "in_flight" : b == STEADY_COMPLETION_RATE ? "completion_rate" : "none";
}

struct steady_opts steady_opts_of(long concurrency, double request_rate)
{
    if (isfinite(request_rate) && request_rate > 0)
        return (struct steady_opts){STEADY_COMPLETION_RATE, request_rate, 0};
    if (concurrency > 0)
        return (struct steady_opts){STEADY_IN_FLIGHT, (double)concurrency, 0};
    return (struct steady_opts){STEADY_NONE, NAN, 0};
}

const char *steady_reason_text(const char *reason)
{
    static const char *const words[][2] = {
        {STEADY_NO_TARGET, "no target to hold (neither a concurrency cap nor a request rate)"},
        {STEADY_NO_REQUESTS, "no measured request was sent"},
        {STEADY_NEVER, "the load never held within 10 % of its target"},
        {STEADY_TOO_SHORT, "the longest stretch within 10 % of the target lasted under 10 s"},
        {STEADY_TOO_SMALL, "the longest stretch within 10 % of the target was under 10 % of the run"},
    };
    for (size_t i = 0; reason && i < sizeof words / sizeof *words; i++)
        if (!strcmp(reason, words[i][0]))
            return words[i][1];
    return reason ? reason : "";
}

bool steady_differs(double whole, double steady)
{
    return isfinite(whole) && isfinite(steady) && fabs(steady - whole) > STEADY_NOISE * fabs(whole);
}

/* The grid: steps of STEP_NS from t0, n of them (whole steps only). */
struct grid {
    int64_t t0;
    size_t n;
    double *level;          /* each step's level */
    bool *in;               /* the step held the band */
};

/* Step k of t (t ≥ t0), capped at g->n − 1. */
static size_t step_of(const struct grid *g, int64_t t)
{
    size_t k = t <= g->t0 ? 0 : (size_t)((t - g->t0) / STEP_NS);
    return k < g->n ? k : g->n - 1;
}

/* Closed loop: each step's time-averaged number of requests in flight
 * (start ≤ t < end), warm-ups included: they hold a slot too. One pass;
 * 0, or -1 on the iterator's error. */
static int in_flight(struct rec_iter *it, struct grid *g)
{
    int64_t end_all = g->t0 + (int64_t)g->n * STEP_NS;
    if (pass_begin(it) != 0)
        return -1;
    for (const struct req_record *r; (r = it->next(it));) {
        if (!r->t_start)
            continue;
        int64_t s = r->t_start > g->t0 ? r->t_start : g->t0;
        int64_t e = r->t_end && r->t_end < end_all ? r->t_end : end_all;
        for (size_t k = step_of(g, s); s < e && k < g->n; k++) {
            int64_t lo = g->t0 + (int64_t)k * STEP_NS, hi = lo + STEP_NS;
            if (lo >= e)
                break;
            g->level[k] += (double)((e < hi ? e : hi) - (s > lo ? s : lo));
        }
    }
    for (size_t k = 0; k < g->n; k++)
        g->level[k] /= (double)STEP_NS;
    return pass_end(it);
}

/* Open loop: over each step's trailing window, completed requests against
 * the plan's sends (t_scheduled) in the same window; the level is the
 * completion rate. A step whose window reaches before t0, or that ends
 * after the plan's last send, is out. One pass; 0, or -1 when memory runs
 * out or on the iterator's error. */
static int completion_rate(struct rec_iter *it, double target, struct grid *g)
{
    double *done = calloc(g->n, sizeof *done), *sent = calloc(g->n, sizeof *sent);
    if (!done || !sent) {
        free(done);
        free(sent);
        return -1;
    }
    int64_t end_all = g->t0 + (int64_t)g->n * STEP_NS, last_planned = 0;
    int rc = pass_begin(it);
    for (const struct req_record *r; rc == 0 && (r = it->next(it));) {
        int64_t planned = r->t_scheduled ? r->t_scheduled : r->t_start;
        if (r->warmup || !r->t_start)
            continue;
        last_planned = planned > last_planned ? planned : last_planned;
        if (planned < end_all)
            sent[step_of(g, planned)]++;
        if (!r->cut && r->fail == FAIL_NONE && r->t_end >= g->t0 && r->t_end < end_all)
            done[step_of(g, r->t_end)]++;
    }
    if (rc != 0 || pass_end(it) != 0) {
        free(done);
        free(sent);
        return -1;
    }
    double window_s = fmax(STEADY_RATE_WINDOW_S, STEADY_RATE_MIN_SENDS / target);
    size_t w = (size_t)ceil(window_s / STEADY_STEP_S - 1e-9);
    double c = 0, s = 0;
    for (size_t k = 0; k < g->n; k++) {
        c += done[k];
        s += sent[k];
        if (k >= w) {
            c -= done[k - w];
            s -= sent[k - w];
        }
        g->level[k] = c / ((double)w * STEADY_STEP_S);
        /* after the plan's last send the run drains: completions outlast sends by design */
        bool sending = g->t0 + (int64_t)(k + 1) * STEP_NS <= last_planned;
        g->in[k] = sending && k + 1 >= w && s > 0 && fabs(c - s) <= STEADY_BAND * s;
    }
    free(done);
    free(sent);
    return 0;
}

/* The figures over the stretch [a, b]: the distributions of completed
 * requests with a ≤ start and end ≤ b, tokens that arrived in [a, b] and
 * completed requests with a < end ≤ b, per second. One pass over the n
 * records of it: per-request columns of n values, ITL per chunk in a
 * column that turns into a histogram past VCOL_EXACT_MAX gaps (stats/hist.h). */
static int figures(struct rec_iter *it, size_t n, int64_t a, int64_t b, enum pct_method m,
                   struct steady_state *out)
{
    double *ttft = malloc((n + 1) * sizeof *ttft), *tpot = malloc((n + 1) * sizeof *tpot);
    double *e2e = malloc((n + 1) * sizeof *e2e);
    struct vcol itl;
    vcol_init(&itl);
    struct token_window tw = {0};
    int rc = ttft && tpot && e2e ? pass_begin(it) : -1;
    size_t k = 0;
    long ended = 0;
    for (const struct req_record *r; rc == 0 && (r = it->next(it));) {
        tokens_window_add(r, a, b, &tw);
        if (r->warmup || !r->t_start || r->cut || r->fail != FAIL_NONE)
            continue;
        ended += r->t_end > a && r->t_end <= b;
        if (r->t_start < a || r->t_end > b)
            continue;
        if (k == n) {           /* more records than the count pass saw: the source changed */
            snprintf(it->err, sizeof it->err, "the records changed between two passes");
            rc = -1;
            break;
        }
        struct req_metrics rm;
        metrics_derive(r, &rm);
        ttft[k] = rm.ttft_ms;
        tpot[k] = rm.tpot_ms;
        e2e[k++] = rm.e2e_ms;
        for (size_t c = 1; rc == 0 && c < r->n_chunks; c++)
            rc = vcol_add(&itl, ns_to_ms(r->chunks[c].t_ns - r->chunks[c - 1].t_ns));
    }
    if (rc == 0)
        rc = pass_end(it);
    if (rc == 0) {
        out->requests = (int)k;
        dist_compute(ttft, k, m, &out->ttft);
        dist_compute(tpot, k, m, &out->tpot);
        dist_compute(e2e, k, m, &out->e2e);
        vcol_dist(&itl, m, &out->itl);
        double s = (double)(b - a) / 1e9;
        out->output_throughput = tw.tokens / s;
        out->request_throughput = (double)ended / s;
    }
    free(ttft);
    free(tpot);
    free(e2e);
    vcol_free(&itl);
    return rc;
}

/* The first longest run of steps in the band, from step `first` on: *at and
 * *len (0: none). */
static void longest(const struct grid *g, size_t first, size_t *at, size_t *len)
{
    *at = *len = 0;
    for (size_t k = first, run = 0; k < g->n; k++) {
        run = g->in[k] ? run + 1 : 0;
        if (run > *len) {
            *len = run;
            *at = k + 1 - run;
        }
    }
}

static void empty_state(const struct steady_opts *o, struct steady_state *out)
{
    struct dist none;
    dist_compute(NULL, 0, PCT_NEAREST, &none);
    *out = (struct steady_state){
        .basis = o->basis, .target = o->target, .band = STEADY_BAND, .not_before_s = o->not_before_s,
        .run_s = NAN, .start_s = NAN, .end_s = NAN, .length_s = NAN, .share = NAN, .level = NAN,
        .ttft = none, .tpot = none, .itl = none, .e2e = none,
        .output_throughput = NAN, .request_throughput = NAN,
    };
}

/* The run's span over measured requests sent (as the summary's duration)
 * and the number of records. One pass; 0, or -1 on the iterator's error. */
static int span_of(struct rec_iter *it, int64_t *first, int64_t *last, size_t *n)
{
    *first = *last = 0;
    *n = 0;
    if (pass_begin(it) != 0)
        return -1;
    for (const struct req_record *r; (r = it->next(it));) {
        ++*n;
        if (r->warmup || !r->t_start)
            continue;
        if (!*first || r->t_start < *first)
            *first = r->t_start;
        if (r->t_end > *last)
            *last = r->t_end;
    }
    return pass_end(it);
}

/* One pass. */
int steady_not_before_s_iter(struct rec_iter *it, int64_t end_ns, double *out)
{
    int64_t first, last;
    size_t n;
    int rc = span_of(it, &first, &last, &n);
    *out = rc == 0 && first && end_ns > first ? (double)(end_ns - first) / 1e9 : 0;
    return rc;
}

double steady_not_before_s(const struct req_record *recs, int n, int64_t end_ns)
{
    struct rec_iter it;
    rec_iter_array(&it, recs, n);
    double s;
    steady_not_before_s_iter(&it, end_ns, &s);        /* an array has no error */
    return s;
}

/* At most three passes: the span, the level, the figures when reached. */
int steady_detect_iter(struct rec_iter *it, const struct steady_opts *o, enum pct_method m,
                       struct steady_state *out)
{
    empty_state(o, out);
    int64_t first, last;
    size_t n;
    if (span_of(it, &first, &last, &n) != 0)
        return -1;
    if (first && last > first)
        out->run_s = (double)(last - first) / 1e9;
    if (o->basis == STEADY_NONE || !(o->target > 0)) {
        out->reason = STEADY_NO_TARGET;
        return 0;
    }
    if (!first || last <= first) {
        out->reason = STEADY_NO_REQUESTS;
        return 0;
    }
    struct grid g = {.t0 = first, .n = (size_t)((last - first) / STEP_NS)};
    if (g.n == 0) {         /* under one step: too short to judge */
        out->reason = STEADY_TOO_SHORT;
        return 0;
    }
    g.level = calloc(g.n + 1, sizeof *g.level);
    g.in = calloc(g.n + 1, sizeof *g.in);
    int rc = g.level && g.in ? 0 : -1;
    if (rc == 0 && o->basis == STEADY_IN_FLIGHT) {
        rc = in_flight(it, &g);
        for (size_t k = 0; k < g.n; k++)
            g.in[k] = fabs(g.level[k] - o->target) <= STEADY_BAND * o->target;
    } else if (rc == 0) {
        rc = completion_rate(it, o->target, &g);
    }
    size_t at = 0, len = 0;
    if (rc == 0) {
        double skip = o->not_before_s > 0 ? ceil(o->not_before_s / STEADY_STEP_S - 1e-9) : 0;
        longest(&g, (size_t)skip, &at, &len);
    }
    if (rc == 0 && len == 0)
        out->reason = STEADY_NEVER;
    if (rc == 0 && len > 0) {
        double level = 0;
        for (size_t k = at; k < at + len; k++)
            level += g.level[k];
        out->level = level / (double)len;
        out->start_s = (double)at * STEADY_STEP_S;
        out->length_s = (double)len * STEADY_STEP_S;
        out->end_s = out->start_s + out->length_s;
        out->share = out->length_s / out->run_s;
        out->reason = out->length_s < STEADY_MIN_S ? STEADY_TOO_SHORT
                    : out->share < STEADY_MIN_SHARE ? STEADY_TOO_SMALL : NULL;
        out->reached = out->reason == NULL;
        if (out->reached)
            rc = figures(it, n, first + (int64_t)at * STEP_NS, first + (int64_t)(at + len) * STEP_NS, m, out);
    }
    free(g.level);
    free(g.in);
    return rc;
}

int steady_detect(const struct req_record *recs, int n, const struct steady_opts *o, enum pct_method m,
                  struct steady_state *out)
{
    struct rec_iter it;
    rec_iter_array(&it, recs, n);
    return steady_detect_iter(&it, o, m, out);
}
