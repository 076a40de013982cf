/* results.c — the results table per load point and its two verdicts. */
#include "report/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "artifact/matrix.h"
#include "stats/registry.h"

/* The median of get() over the rounds, NaN values left out; NaN when none
 * (or memory runs out). */
static double median_of(const struct benchmark *const *r, size_t n, double (*get)(const struct benchmark *))
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double x = get(r[i]);
        if (!isnan(x))
            v[k++] = x;
    }
    double m = NAN;
    if (k) {
        gsl_sort(v, 1, k);
        m = gsl_stats_median_from_sorted_data(v, 1, k);
    }
    free(v);
    return m;
}

/* a duration-mode round's throughput is its window's (docs/MATRIX.md) */
static double g_tps(const struct benchmark *b) { return matrix_round_output_tps(b); }
static double g_ttft50(const struct benchmark *b) { return b->metrics.dist.ttft.p50; }
static double g_ttft99(const struct benchmark *b) { return b->metrics.dist.ttft.p99; }
static double g_tpot50(const struct benchmark *b) { return b->metrics.dist.tpot.p50; }
static double g_tpot99(const struct benchmark *b) { return b->metrics.dist.tpot.p99; }
static double g_goodput(const struct benchmark *b) { return b->metrics.goodput_rps; }

void results_row_of(const struct benchmark *const *rounds, size_t n, struct results_row *out)
{
    const struct benchmark *r0 = rounds[0];
    *out = (struct results_row){
        .target = r0->sweep.present && r0->sweep.target ? r0->sweep.target : r0->engine,
        .point = r0->sweep.present && r0->sweep.case_id ? r0->sweep.case_id : "",
        .rounds = (long)n, .good = 0};
    if (isnan(r0->request_rate))
        snprintf(out->load, sizeof out->load, "c%ld", r0->concurrency);
    else
        snprintf(out->load, sizeof out->load, "%g req/s", r0->request_rate);
    bool has_good = true;
    for (size_t i = 0; i < n; i++) {
        char why[256];
        out->completed += rounds[i]->completed;
        out->failed += rounds[i]->failed;
        out->failed_rounds += rounds[i]->failed > 0;
        out->outlasted_window += matrix_round_outlasted_window(rounds[i]);
        out->cut |= matrix_round_cut(rounds[i], why, sizeof why);
        has_good &= rounds[i]->good_requests >= 0;
        out->good += rounds[i]->good_requests;
    }
    if (!has_good)
        out->good = -1;
    out->output_tps = median_of(rounds, n, g_tps);
    out->ttft_p50_ms = median_of(rounds, n, g_ttft50);
    out->ttft_p99_ms = median_of(rounds, n, g_ttft99);
    out->tpot_p50_ms = median_of(rounds, n, g_tpot50);
    out->tpot_p99_ms = median_of(rounds, n, g_tpot99);
    out->goodput_rps = median_of(rounds, n, g_goodput);
}

/* good / (completed + failed), NaN without an SLO or a request. */
static double attainment(const struct results_row *r)
{
    long ended = r->completed + r->failed;
    return r->good >= 0 && ended > 0 ? (double)r->good / (double)ended : NAN;
}

static void verdicts(FILE *out, const struct results_row *rows, size_t n, const struct results_opts *o)
{
    long failed = 0, failed_rounds = 0;
    bool cut = false;
    size_t missed = 0, with_slo = 0;
    long limited = 0;
    for (size_t i = 0; i < n; i++) {
        limited += rows[i].outlasted_window;
        failed += rows[i].failed;
        failed_rounds += rows[i].failed_rounds;
        cut |= rows[i].cut;
        double a = attainment(&rows[i]);
        with_slo += !isnan(a);
        missed += !isnan(a) && a < 1;
    }
    const char *status = o->status ? o->status : failed ? "FAIL" : cut ? "INCOMPLETE" : "PASS";
    const char *reason = o->status ? o->reason : cut ? "a round was cut short" : NULL;
    if (!strcmp(status, "PASS") && limited)
        fprintf(out, "requests: PASS (no request failed; %ld duration-mode round%s where every request "
                "outlasted the window: throughput counted inside the window)\n",
                limited, limited == 1 ? "" : "s");
    else if (!strcmp(status, "PASS"))
        fprintf(out, "requests: PASS (every request of every round completed)\n");
    else if (!failed && reason)
        fprintf(out, "requests: %s (%s; no request failed)\n", status, reason);
    else
        fprintf(out, "requests: %s (%ld failed requests in %ld rounds%s%s)\n", status, failed, failed_rounds,
                reason ? "; " : "", reason ? reason : "");
    if (!o->slo)
        fprintf(out, "SLO: not set (--slo ttft:MS,tpot:MS to judge goodput)\n");
    else if (missed)
        fprintf(out, "SLO (%s): MISSED at %zu of %zu load points (attainment below 100%%: good requests / "
                "completed + failed)\n", o->slo, missed, with_slo);
    else
        fprintf(out, "SLO (%s): MET at every load point (every request within every bound)\n", o->slo);
}

int report_results(FILE *out, const struct results_row *rows, size_t n, const struct results_opts *o, char *err,
                   size_t errlen)
{
    bool priced = o->cost && isfinite(o->cost->gpu_hour_usd);
    struct rdoc doc = {0};
    /* the metrics' headings are the registry's (stats/registry.h) */
    char h[7][48];
    metric_column("output_throughput", NULL, h[0], sizeof h[0]);
    metric_column("ttft", "p50", h[1], sizeof h[1]);
    metric_column("ttft", "p99", h[2], sizeof h[2]);
    metric_column("tpot", "p50", h[3], sizeof h[3]);
    metric_column("tpot", "p99", h[4], sizeof h[4]);
    metric_column("goodput_rps", NULL, h[5], sizeof h[5]);
    metric_column("cost_per_mtok", NULL, h[6], sizeof h[6]);
    struct rtable *t = rdoc_table(&doc, o->title ? o->title : "Results per load point (medians across rounds)",
                                  priced ? 14 : 13, "target", "load point", "load", "rounds", "completed",
                                  "failed", h[0], h[1], h[2], h[3], h[4], h[5], "SLO attainment", h[6]);
    for (size_t i = 0; t && i < n; i++) {
        const struct results_row *r = &rows[i];
        rtable_text(t, r->target);
        rtable_text(t, r->point);
        rtable_text(t, r->load);
        rtable_whole(t, r->rounds, false);
        rtable_whole(t, r->completed, false);
        rtable_whole(t, r->failed, false);
        rtable_num(t, r->output_tps, 1);
        rtable_num(t, r->ttft_p50_ms, 1);
        rtable_num(t, r->ttft_p99_ms, 1);
        rtable_num(t, r->tpot_p50_ms, 2);
        rtable_num(t, r->tpot_p99_ms, 2);
        rtable_num(t, r->goodput_rps, 3);
        double a = attainment(r);
        if (isnan(a))
            rtable_text(t, NULL);
        else
            rtable_textf(t, "%.1f%%", 100 * a);
        if (priced)
            rtable_num(t, cost_per_mtok(o->cost, r->output_tps), 4);
    }
    int rc = rdoc_print(&doc, o->format, out);
    rdoc_free(&doc);
    if (rc) {
        snprintf(err, errlen, "out of memory or cannot write the table");
        return -1;
    }
    verdicts(out, rows, n, o);
    if (ferror(out)) {
        snprintf(err, errlen, "cannot write the table");
        return -1;
    }
    return 0;
}
