/* test_search.c — the SLO search's rule (sweep/search.h): the Wilson
 * interval against an independent computation, verdicts, the probes a
 * search takes against a server with a known limit, the search settings
 * of a plan, and the search.json table's round trip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/fields.h"
#include "artifact/search.h"
#include "fields_sample.h"
#include "sweep/plan.h"
#include "sweep/search.h"

/* Bounds solved as the roots of (p̂ − p)² = z²p(1 − p)/n by bisection
 * (Python, 200 halvings), not from the closed form; 81/263 is the example
 * of Wilson's interval in the literature (0.2553, 0.3662). */
Test(search, wilson_interval_matches_the_roots_of_its_quadratic)
{
    const struct { long g, n; double lo, hi; } want[] = {
        {0, 10, 0.0, 0.277532799863}, {54, 54, 0.933586411909, 1.0}, {16, 18, 0.672002348698, 0.968980477354},
        {81, 263, 0.255288519878, 0.366209576983}, {99, 100, 0.945513803821, 0.998232567936},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        double ci[2];
        search_wilson(want[i].g, want[i].n, SEARCH_Z95, ci);
        cr_assert_float_eq(ci[0], want[i].lo, 1e-9, "%ld/%ld", want[i].g, want[i].n);
        cr_assert_float_eq(ci[1], want[i].hi, 1e-9, "%ld/%ld", want[i].g, want[i].n);
    }
    double ci[2];
    search_wilson(0, 0, SEARCH_Z95, ci);
    cr_assert(ci[0] == 0 && ci[1] == 1);
}

Test(search, verdict_spends_repeats_only_while_the_interval_holds_the_target)
{
    bool by;
    /* 18/18: [0.82, 1] holds 0.99 → uncertain while repeats are left */
    cr_assert_eq(search_verdict(18, 18, 0.99, 0, 2, &by), PROBE_UNCERTAIN);
    cr_assert_not(by);
    cr_assert_eq(search_verdict(36, 36, 0.99, 1, 2, &by), PROBE_UNCERTAIN);
    /* repeats spent: the pooled attainment decides */
    cr_assert_eq(search_verdict(54, 54, 0.99, 2, 2, &by), PROBE_PASS);
    cr_assert_not(by);
    cr_assert_eq(search_verdict(53, 54, 0.99, 2, 2, &by), PROBE_FAIL, "53/54 = 0.981 < 0.99");
    /* decided by the interval at once */
    cr_assert_eq(search_verdict(8, 18, 0.99, 0, 2, &by), PROBE_FAIL);
    cr_assert(by);
    cr_assert_eq(search_verdict(1000, 1000, 0.99, 0, 2, &by), PROBE_PASS, "lower bound 0.9962 > 0.99");
    cr_assert(by);
    cr_assert_eq(search_verdict(0, 0, 0.99, 0, 2, &by), PROBE_FAIL, "no request: nothing met the SLO");
    cr_assert_eq(search_verdict(18, 18, 0.99, 0, 0, &by), PROBE_PASS, "no repeats: the first round decides");
}

/* Runs the rule against a server that passes every load ≤ limit; returns
 * the answer (NaN: none) and the probes in *probes, the stop reason in *why. */
static double run_rule(const struct search_rule *r, double limit, long *probes, const char **why)
{
    struct search_state s;
    search_start(&s);
    double seen[64];
    for (double load; !isnan(load = search_next(&s, r));) {
        cr_assert(load >= r->lo && load <= r->hi, "load %g inside [%g, %g]", load, r->lo, r->hi);
        for (long i = 0; i < s.probes; i++)
            cr_assert_neq(seen[i], load, "load %g probed twice", load);
        cr_assert(s.probes < 64);
        seen[s.probes] = load;
        search_record(&s, r, load, load <= limit);
    }
    *probes = s.probes;
    *why = s.stopped;
    return s.pass;
}

Test(search, concurrency_search_finds_every_limit_in_few_probes)
{
    struct search_rule r = {.whole = true, .lo = 1, .hi = 256, .tolerance = 0.05, .max_probes = 20};
    for (long limit = 1; limit < 256; limit++) {
        long probes;
        const char *why;
        double best = run_rule(&r, (double)limit, &probes, &why);
        cr_assert_eq(best, (double)limit, "limit %ld found %g", limit, best);
        cr_assert_str_eq(why, "converged");
        /* doubling to the first failure, then bisection: ≤ 2·log2(256) + 1 */
        cr_assert(probes <= 17, "limit %ld: %ld probes", limit, probes);
    }
    long probes;
    const char *why;
    cr_assert_eq(run_rule(&r, 256, &probes, &why), 256);
    cr_assert_str_eq(why, "HI passes");
    cr_assert_eq(probes, 9, "1, 2, 4, ..., 256");
    cr_assert(isnan(run_rule(&r, 0, &probes, &why)));
    cr_assert_str_eq(why, "LO fails");
    cr_assert_eq(probes, 1);
    r.max_probes = 3;
    cr_assert_eq(run_rule(&r, 100, &probes, &why), 4);
    cr_assert_str_eq(why, "probe limit");
    cr_assert_eq(probes, 3);
}

Test(search, concurrency_search_order_from_4_to_32_with_limit_8)
{
    struct search_rule r = {.whole = true, .lo = 4, .hi = 32, .max_probes = 20};
    struct search_state s;
    search_start(&s);
    const double want[] = {4, 8, 16, 12, 10, 9};
    for (size_t i = 0; i < 6; i++) {
        double load = search_next(&s, &r);
        cr_assert_eq(load, want[i]);
        search_record(&s, &r, load, load <= 8);
    }
    cr_assert(isnan(search_next(&s, &r)));
    cr_assert_str_eq(s.stopped, "converged");
}

Test(search, rate_search_ends_within_the_tolerance_below_the_limit)
{
    struct search_rule r = {.whole = false, .lo = 1, .hi = 1000, .tolerance = 0.05, .max_probes = 30};
    for (double limit = 1.3; limit < 900; limit *= 1.37) {
        long probes;
        const char *why;
        double best = run_rule(&r, limit, &probes, &why);
        cr_assert_str_eq(why, "converged");
        cr_assert(best <= limit && best >= limit / 1.05, "limit %g found %g", limit, best);
        cr_assert(probes <= 16, "limit %g: %ld probes", limit, probes);
    }
}

Test(search, plan_keeps_the_search_settings_and_checks_them)
{
    struct sweep_case c = {.id = "short-16-10-c4", .input_len = 16, .output_len = 10, .concurrency = 4,
                           .request_rate = INFINITY};
    struct sweep_target t = {"", "http://h:8000/v1"};
    struct sweep_plan a, b;
    cr_assert_eq(sweep_plan_build(&c, 1, &t, 1, 1, "/tmp/s", NULL, "ttft:100", &a), 0);
    a.search = (struct sweep_search){.on = true, .rate = true, .lo = 2.5, .hi = 40, .attainment = 0.95,
                                     .repeats = 3, .tolerance = 0.02, .max_probes = 12};
    cJSON *j = sweep_plan_to_json(&a);
    char err[300];
    cr_assert_eq(sweep_plan_from_json(j, "p.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert(b.search.on && b.search.rate);
    cr_assert(b.search.lo == 2.5 && b.search.hi == 40 && b.search.attainment == 0.95);
    cr_assert(b.search.repeats == 3 && b.search.tolerance == 0.02 && b.search.max_probes == 12);
    sweep_plan_free(&b);
    cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "search"), "lo"), 50);
    cr_assert_eq(sweep_plan_from_json(j, "p.json", &b, err, sizeof err), -1);
    cr_assert(strstr(err, "p.json: search.hi"), "%s", err);
    cJSON_DeleteItemFromObject(j, "search");
    cr_assert_eq(sweep_plan_from_json(j, "p.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert_not(b.search.on, "a sweep of fixed load points has no search");
    sweep_plan_free(&b);
    cJSON_Delete(j);
    sweep_plan_free(&a);
}

Test(search, search_json_table_round_trips)
{
    char why[300];
    cr_assert(fields_sample_round_trip(&search_probe_table, why, sizeof why), "%s", why);
    cr_assert(fields_sample_round_trip(&search_result_table, why, sizeof why), "%s", why);
    cr_assert(fields_sample_round_trip(&search_doc_table, why, sizeof why), "%s", why);
}

Test(search, search_json_reader_checks_what_rows_cannot)
{
    struct search_doc d = {.schema = "anvil-serving.search/v1", .search = "concurrency", .slo = "ttft:100",
                           .slo_attainment = 0.99, .range = {4, 32}, .repeats = 2, .tolerance = NAN,
                           .max_probes = 20};
    struct search_probe p = {.present = true, .concurrency = 8, .request_rate = NAN, .case_id = "short-16-10-c8",
                             .rounds = 3, .requests = 54, .good = 54, .attainment = 1,
                             .interval = {0.93, 1}, .verdict = "pass", .decided_by = "repeats",
                             .goodput_rps = 26, .ttft_p50_ms = 40, .ttft_p99_ms = 50, .tpot_p50_ms = 20,
                             .tpot_p99_ms = 21};
    d.one = (struct search_result){.present = true, .stopped = "converged", .best = p, .probes = &p,
                                   .n_probes = 1};
    cJSON *j = search_to_json(&d);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "best"), "concurrency")->valuedouble, 8);
    cr_assert_null(cJSON_GetObjectItem(j, "targets"));
    cr_assert_null(cJSON_GetObjectItem(j, "tolerance"), "a concurrency search has none");
    struct search_doc back;
    char err[300];
    cr_assert_eq(search_from_json(j, "s.json", &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.one.best.concurrency, 8);
    cr_assert_str_eq(back.one.probes[0].verdict, "pass");
    search_doc_free(&back);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "probes"), 0), "verdict",
                              cJSON_CreateString("maybe"));
    cr_assert_eq(search_from_json(j, "s.json", &back, err, sizeof err), -1);
    cr_assert(strstr(err, "verdict"), "%s", err);
    cJSON_Delete(j);
}
