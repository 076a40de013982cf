/* test_drift.c — drift between the first and the last quarter of a time
 * series, from hand-built rows whose medians and spreads are known. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "artifact/any.h"
#include "report/drift.h"
#include "report/rtable.h"
#include "report/show.h"

/* n rows of 1 s; TTFT p50 of row i from f(i); no gauges. */
static struct bench_timeseries series(size_t n, double (*f)(size_t i, size_t n))
{
    static struct bench_ts_row rows[64];
    cr_assert_leq(n, 64);
    for (size_t i = 0; i < n; i++)
        rows[i] = (struct bench_ts_row){.t_s = (double)i, .completed = 10, .output_tokens = 100, .in_flight = 4,
                                        .ttft_p50_ms = f(i, n), .ttft_p99_ms = NAN, .itl_p50_ms = NAN,
                                        .itl_p99_ms = NAN};
    return (struct bench_timeseries){.present = true, .interval_s = 1, .rows = rows, .n_rows = n};
}

static const struct drift *find(const struct drift *d, int n, const char *label)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(d[i].label, label))
            return &d[i];
    cr_assert_fail("no %s compared", label);
    return NULL;
}

static double flat(size_t i, size_t n) { (void)n; return 10 + 0.1 * (double)(i % 3); }
/* the last quarter of the 12 full rows (rows 9..11 of 13) twice as slow */
static double rises(size_t i, size_t n) { (void)n; return i >= 9 ? 20 : 10; }
/* rows wobble 5 / 15; the last quarter (of n − 1 full rows) only 2 ms higher */
static double wobbles(size_t i, size_t n) { return (i % 2 ? 15 : 5) + (i >= n - 1 - (n - 1) / 4 ? 2 : 0); }

Test(drift, a_flat_run_has_none)
{
    struct bench_timeseries t = series(13, flat);
    struct drift d[DRIFT_MAX];
    double q;
    int n = drift_compare(&t, 0, d, DRIFT_MAX, &q);
    cr_assert_gt(n, 0);
    cr_assert_eq(q, 3.0, "12 full rows: quarters of 3 s");
    for (int i = 0; i < n; i++)
        cr_assert_not(d[i].drifted, "%s drifted: %g -> %g (noise %g)", d[i].label, d[i].first, d[i].last,
                      d[i].noise);
    const struct drift *tt = find(d, n, "TTFT p50");
    cr_assert_eq(tt->first, 10.1);          /* the median of 10, 10.1, 10.2 */
    cr_assert_float_eq(tt->noise, 1.01, 1e-9);  /* 10% of 10.1 beats the spread of 0.2 */
}

Test(drift, a_rise_beyond_noise_is_drift)
{
    struct bench_timeseries t = series(13, rises);
    struct drift d[DRIFT_MAX];
    int n = drift_compare(&t, 0, d, DRIFT_MAX, NULL);
    const struct drift *tt = find(d, n, "TTFT p50");
    cr_assert(tt->drifted);
    cr_assert_eq(tt->first, 10);
    cr_assert_eq(tt->last, 20);
    cr_assert_not(find(d, n, "output tokens/s")->drifted);
}

Test(drift, a_change_inside_the_rows_spread_is_noise)
{
    struct bench_timeseries t = series(17, wobbles);
    struct drift d[DRIFT_MAX];
    int n = drift_compare(&t, 0, d, DRIFT_MAX, NULL);
    const struct drift *tt = find(d, n, "TTFT p50");
    cr_assert_eq(tt->first, 5);
    cr_assert_eq(tt->last, 7);
    cr_assert_eq(tt->noise, 10, "the spread p75 - p25 of 5, 15, 5, 15: 10");
    cr_assert_not(tt->drifted);
}

Test(drift, short_or_absent_series_are_not_judged)
{
    struct bench_timeseries t = series(8, flat);    /* 7 full rows */
    struct drift d[DRIFT_MAX];
    cr_assert_eq(drift_compare(&t, 0, d, DRIFT_MAX, NULL), -1);
    t = series(9, flat);
    cr_assert_gt(drift_compare(&t, 0, d, DRIFT_MAX, NULL), 0);
    struct bench_timeseries none = {0};
    cr_assert_eq(drift_compare(&none, 0, d, DRIFT_MAX, NULL), -1);
}

/* A ramp's rows rise by design: from its end on, a flat run has no drift
 * (from row 0 the ramp's 1..4 requests in flight read as a rise of TTFT). */
static double ramped(size_t i, size_t n) { (void)n; return i < 4 ? 2.0 + (double)i : 10; }

Test(drift, a_ramp_is_not_drift_once_judged_from_its_end)
{
    struct bench_timeseries t = series(17, ramped);
    struct drift d[DRIFT_MAX];
    int n = drift_compare(&t, 0, d, DRIFT_MAX, NULL);
    cr_assert(find(d, n, "TTFT p50")->drifted, "from row 0: 2..5 ms against 10");
    n = drift_compare(&t, 4, d, DRIFT_MAX, NULL);
    cr_assert_eq(find(d, n, "TTFT p50")->first, 10, "rows 4..6: the first quarter after the ramp");
    cr_assert_not(find(d, n, "TTFT p50")->drifted);
    cr_assert_eq(drift_compare(&t, 9, d, DRIFT_MAX, NULL), -1, "7 full rows from 9 s: not judged");
}

/* Rows merged before exact_from_s hold the largest of their rows' p99s:
 * against exact rows that is a fall that is not there; the p99 is left out
 * while the first quarter is merged, the p50 kept. */
static double steady10(size_t i, size_t n) { (void)i; (void)n; return 10; }

Test(drift, merged_p99s_are_not_compared_with_exact_ones)
{
    struct bench_timeseries t = series(13, steady10);
    for (size_t i = 0; i < t.n_rows; i++)
        t.rows[i].ttft_p99_ms = i < 6 ? 30 : 20;      /* merged rows: the bound */
    t.exact_from_s = 6;
    struct drift d[DRIFT_MAX];
    int n = drift_compare(&t, 0, d, DRIFT_MAX, NULL);
    for (int i = 0; i < n; i++)
        cr_assert(strcmp(d[i].label, "TTFT p99"), "TTFT p99 compared across merged rows");
    cr_assert_not(find(d, n, "TTFT p50")->drifted);
    t.exact_from_s = 0;
    n = drift_compare(&t, 0, d, DRIFT_MAX, NULL);
    cr_assert(find(d, n, "TTFT p99")->drifted, "all rows exact: 30 -> 20 is drift");
}

/* What `anvil show` prints for seed 001 given the rows f makes. */
static char *shown(double (*f)(size_t i, size_t n))
{
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read("tests/data/seed-001.json", &a, err, sizeof err), 0, "%s", err);
    struct bench_timeseries t = series(13, f);
    struct bench_ts_row *rows = malloc(t.n_rows * sizeof *rows);     /* the artifact owns them */
    memcpy(rows, t.rows, t.n_rows * sizeof *rows);
    t.rows = rows;
    a.u.bench.timeseries = t;
    struct rdoc d = {0};
    show_artifact(&d, &a, NULL);
    char *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    cr_assert_eq(rdoc_print(&d, RF_TABLE, out), 0);
    fclose(out);
    rdoc_free(&d);
    artifact_any_free(&a);
    return text;
}

Test(drift, show_prints_a_line_per_drifting_metric_or_none)
{
    char *text = shown(rises);
    cr_assert(strstr(text, "note: drift: TTFT p50 went from 10 to 20 ms between the first and the last 3 s of "
                           "the run (+100%; noise 2 ms)"), "%s", text);
    cr_assert_null(strstr(text, "no drift"), "%s", text);
    free(text);
    text = shown(flat);
    cr_assert(strstr(text, "note: no drift beyond noise:"), "%s", text);
    cr_assert_null(strstr(text, "drift:"), "%s", text);
    free(text);
}
