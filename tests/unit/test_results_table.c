/* test_results_table.c — the results table `anvil sweep` and `anvil decode`
 * end with (report/results.h): medians across rounds, the SLO attainment,
 * the cost column, and request and SLO verdicts kept apart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "artifact/json.h"
#include "report/results.h"

static void blank(struct benchmark *b, double tps, double ttft_p99)
{
    memset(b, 0, sizeof *b);
    b->engine = (char *)"vllm";
    b->concurrency = 8;
    b->request_rate = NAN;
    struct dist *d = (struct dist *)&b->metrics.dist;
    for (size_t i = 0; i < sizeof b->metrics.dist / sizeof *d; i++)
        d[i] = (struct dist){0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    b->metrics.output_throughput = tps;
    b->metrics.throughput_tok_s = b->metrics.goodput_rps = NAN;
    b->metrics.dist.ttft.p99 = ttft_p99;
    b->completed = 10;
    b->good_requests = ARTIFACT_NONE;
}

/* What report_results prints for rows, as a string (caller frees). */
static char *print(const struct results_row *rows, size_t n, const struct results_opts *o)
{
    char *text = NULL, err[256];
    size_t len;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(report_results(f, rows, n, o, err, sizeof err), 0, "%s", err);
    fclose(f);
    return text;
}

Test(results_table, medians_across_rounds_and_summed_counts)
{
    struct benchmark b[4];
    blank(&b[0], 100, 40);
    blank(&b[1], 300, NAN);        /* a round without TTFT p99: left out of that median */
    blank(&b[2], 200, 20);
    blank(&b[3], 400, 30);
    b[2].failed = 2;
    const struct benchmark *r[] = {&b[0], &b[1], &b[2], &b[3]};
    struct results_row row;
    results_row_of(r, 4, &row);
    cr_assert_float_eq(row.output_tps, 250, 1e-12, "even count: mean of the middle two");
    cr_assert_float_eq(row.ttft_p99_ms, 30, 1e-12, "odd count of defined values: the middle one");
    cr_assert(isnan(row.tpot_p50_ms));
    cr_assert_eq(row.rounds, 4);
    cr_assert_eq(row.completed, 40);
    cr_assert_eq(row.failed, 2);
    cr_assert_eq(row.failed_rounds, 1);
    cr_assert_lt(row.good, 0, "no SLO set");
    cr_assert_str_eq(row.target, "vllm");
    cr_assert_str_eq(row.load, "c8");
    b[0].request_rate = 2.5;
    results_row_of(r, 1, &row);
    cr_assert_str_eq(row.load, "2.5 req/s");
}

Test(results_table, request_failures_and_slo_misses_are_separate_words)
{
    struct results_row rows[2] = {
        {.target = "sim", .point = "c1", .load = "c1", .rounds = 1, .completed = 10, .good = 10,
         .output_tps = 100, .goodput_rps = 1},
        {.target = "sim", .point = "c8", .load = "c8", .rounds = 1, .completed = 10, .good = 4,
         .output_tps = 400, .goodput_rps = 0.4},
    };
    for (int i = 0; i < 2; i++)
        rows[i].ttft_p50_ms = rows[i].ttft_p99_ms = rows[i].tpot_p50_ms = rows[i].tpot_p99_ms = 1;
    struct results_opts o = {.slo = "ttft:100", .format = RF_TABLE};
    char *t = print(rows, 2, &o);
    cr_assert(strstr(t, "requests: PASS (every request of every round completed)"), "%s", t);
    cr_assert(strstr(t, "SLO (ttft:100): MISSED at 1 of 2 load points"), "%s", t);
    cr_assert(strstr(t, "100.0%") && strstr(t, "40.0%"), "attainment: %s", t);
    cr_assert_null(strstr(t, "USD"), "unpriced: no cost column: %s", t);
    free(t);
    /* every completed request within the bound, but one failed: FAIL, and the
       failed request counts against the attainment (good / completed + failed) */
    rows[1].good = 9;
    rows[1].completed = 9;
    rows[1].failed = 1;
    rows[1].failed_rounds = 1;
    rows[0].good = 10;
    o.slo = "ttft:1000";
    t = print(rows, 2, &o);
    cr_assert(strstr(t, "requests: FAIL (1 failed requests in 1 rounds)"), "%s", t);
    cr_assert(strstr(t, "SLO (ttft:1000): MISSED at 1 of 2 load points"), "%s", t);
    cr_assert(strstr(t, "90.0%"), "%s", t);
    free(t);
    /* a cut round without failures: INCOMPLETE; no SLO: not set */
    rows[1].failed = rows[1].failed_rounds = 0;
    rows[1].good = 9;
    rows[1].cut = true;
    o.slo = NULL;
    t = print(rows, 2, &o);
    cr_assert(strstr(t, "requests: INCOMPLETE (a round was cut short; no request failed)"), "%s", t);
    cr_assert(strstr(t, "SLO: not set"), "%s", t);
    free(t);
    o.slo = "ttft:1000";
    t = print(rows, 2, &o);
    cr_assert(strstr(t, "SLO (ttft:1000): MET at every load point"), "%s", t);
    free(t);
    /* the caller's status (a matrix's) wins, with its reason */
    o.status = "FAIL";
    o.reason = "round 2 of c8 has no artifact";
    t = print(rows, 2, &o);
    cr_assert(strstr(t, "requests: FAIL (round 2 of c8 has no artifact; no request failed)"), "%s", t);
    free(t);
}

Test(results_table, cost_column_is_cost_per_mtok)
{
    struct results_row row = {.target = "sim", .point = "c1", .load = "c1", .rounds = 1, .completed = 1,
                              .good = -1, .output_tps = 1000, .ttft_p50_ms = NAN, .ttft_p99_ms = NAN,
                              .tpot_p50_ms = NAN, .tpot_p99_ms = NAN, .goodput_rps = NAN};
    struct cost c = {2.0, 8};
    struct results_opts o = {.cost = &c, .format = RF_CSV};
    char *t = print(&row, 1, &o);
    /* 2 USD × 8 GPUs / (1000 tok/s × 3600 s) × 10⁶ = 4.4444 */
    cr_assert(strstr(t, ",USD / M out tok\n"), "%s", t);
    cr_assert(strstr(t, ",4.4444\n"), "%s", t);
    cr_assert_float_eq(cost_per_mtok(&c, 1000), 16.0 / 3600 * 1000, 1e-12);
    free(t);
}
