/* test_load_curve.c — the typed load-curve artifact: read ∘ write is the
 * identity on every field, seed 002 reads with its real values, points are
 * built from round artifacts, and bad fields are named with their path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "artifact/load_curve.h"
#include "testutil.h"

static int counter;

static double next_num(void)
{
    return ++counter + 0.125;
}

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void fill_range(struct load_curve_range *r)
{
    *r = (struct load_curve_range){next_num(), next_num(), next_num(), ++counter};
}

static void fill_point(struct load_curve_point *p, bool gpu)
{
    *p = (struct load_curve_point){.x = next_num(), .n_completed = 3};
    for (int m = 0; m < LC_N_METRICS; m++)
        fill_range(&p->metric[m]);
    p->completed = calloc(3, sizeof *p->completed);
    for (int i = 0; i < 3; i++)
        p->completed[i] = ++counter;
    p->gpu.present = gpu;
    if (gpu) {
        fill_range(&p->gpu.median_sm_mhz);
        p->gpu.max_temp_c = next_num();
        p->gpu.thermal_share = next_num();
    }
    for (int i = 0; i < LOAD_CURVE_QUANTILES; i++) {
        p->ttft_quantiles_ms[i] = next_num();
        p->tpot_quantiles_ms[i] = next_num();
    }
    p->tpot_quantiles_ms[7] = NAN;
}

static void same_range(const struct load_curve_range *a, const struct load_curve_range *b, const char *what)
{
    cr_assert(same_double(a->median, b->median) && same_double(a->min, b->min) && same_double(a->max, b->max)
              && a->n == b->n, "%s", what);
}

static void same_point(const struct load_curve_point *a, const struct load_curve_point *b)
{
    cr_assert(same_double(a->x, b->x));
    for (int m = 0; m < LC_N_METRICS; m++)
        same_range(&a->metric[m], &b->metric[m], load_curve_metric_names[m]);
    cr_assert_eq(a->n_completed, b->n_completed);
    for (size_t i = 0; i < a->n_completed; i++)
        cr_assert_eq(a->completed[i], b->completed[i]);
    cr_assert_eq(a->gpu.present, b->gpu.present);
    if (a->gpu.present) {   /* an absent gpu (null) has no figures to compare */
        same_range(&a->gpu.median_sm_mhz, &b->gpu.median_sm_mhz, "gpu.median_sm_mhz");
        cr_assert(same_double(a->gpu.max_temp_c, b->gpu.max_temp_c));
        cr_assert(same_double(a->gpu.thermal_share, b->gpu.thermal_share));
    }
    for (int i = 0; i < LOAD_CURVE_QUANTILES; i++) {
        cr_assert(same_double(a->ttft_quantiles_ms[i], b->ttft_quantiles_ms[i]), "ttft q%d", i);
        cr_assert(same_double(a->tpot_quantiles_ms[i], b->tpot_quantiles_ms[i]), "tpot q%d", i);
    }
}


/* text parsed and read as a load curve (the reader's own two steps). */
static int read_curve(const char *text, size_t len, const char *name, struct load_curve *out, char *err,
                      size_t errlen)
{
    *out = (struct load_curve){0};
    cJSON *j = artifact_parse(text, len, name, err, errlen);
    int rc = j ? load_curve_from_json(j, name, out, err, errlen) : -1;
    cJSON_Delete(j);
    return rc;
}

Test(load_curve, read_after_write_is_the_identity_on_every_field)
{
    counter = 0;
    struct load_curve a = {.schema = strdup(LOAD_CURVE_SCHEMA), .profile = strdup("sweep-x"),
                           .slo_ttft_ms = next_num(), .slo_tpot_ms = NAN,
                           .environment = cJSON_Parse("{\"driver\": \"535\"}"), .n_load = 2};
    for (int i = 0; i < LOAD_CURVE_QUANTILES; i++)
        a.quantiles[i] = next_num();
    a.load = calloc(2, sizeof *a.load);
    for (int t = 0; t < 2; t++) {
        a.load[t] = (struct load_curve_target){.name = strdup(t ? "vllm/short" : "sglang"),
                                               .kv_pool_tokens = t ? NAN : next_num(), .n_points = 2};
        a.load[t].points = calloc(2, sizeof *a.load[t].points);
        for (int p = 0; p < 2; p++)
            fill_point(&a.load[t].points[p], p == 1);
    }
    cr_assert_eq(provenance_collect(&a.provenance, 3, (char *[]){"sweep", "--resume", "d", NULL}, true), 0);
    cJSON *j = load_curve_to_json(&a);
    char *text = artifact_print(j), err[256];
    struct load_curve b;
    cr_assert_eq(read_curve(text, strlen(text), "c.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(b.schema, a.schema);
    cr_assert_str_eq(b.profile, a.profile);
    cr_assert(same_double(a.slo_ttft_ms, b.slo_ttft_ms) && same_double(a.slo_tpot_ms, b.slo_tpot_ms));
    cr_assert(cJSON_Compare(a.environment, b.environment, true));
    for (int i = 0; i < LOAD_CURVE_QUANTILES; i++)
        cr_assert(same_double(a.quantiles[i], b.quantiles[i]));
    cr_assert_eq(b.n_load, 2);
    for (int t = 0; t < 2; t++) {
        cr_assert_str_eq(a.load[t].name, b.load[t].name);
        cr_assert(same_double(a.load[t].kv_pool_tokens, b.load[t].kv_pool_tokens));
        cr_assert_eq(a.load[t].n_points, b.load[t].n_points);
        for (size_t p = 0; p < a.load[t].n_points; p++)
            same_point(&a.load[t].points[p], &b.load[t].points[p]);
    }
    cr_assert(b.provenance.present);
    cr_assert_eq(b.provenance.n_command_line, 4);
    cr_assert_str_eq(b.provenance.command_line[3], "d");
    cr_assert_str_eq(b.provenance.kernel, a.provenance.kernel);
    free(text);
    cJSON_Delete(j);
    load_curve_free(&a);
    load_curve_free(&b);
}

Test(load_curve, reads_seed002_with_its_values)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-002.json", &len), err[256];
    struct load_curve c;
    cr_assert_eq(read_curve(text, len, "seed-002.json", &c, err, sizeof err), 0, "%s", err);
    free(text);
    cr_assert_null(c.schema);
    cr_assert_str_eq(c.profile, "l4-gpu1");
    cr_assert_eq(c.slo_ttft_ms, 1000);
    cr_assert_eq(c.slo_tpot_ms, 100);
    cr_assert_null(c.environment);
    cr_assert_eq(c.quantiles[1], 0.02);
    cr_assert_eq(c.quantiles[50], 1.0);
    cr_assert_eq(c.n_load, 3);
    cr_assert_str_eq(c.load[0].name, "vllm-fast-b");
    cr_assert_str_eq(c.load[2].name, "vllm-no-async");
    cr_assert_eq(c.load[0].kv_pool_tokens, 2928);
    cr_assert_eq(c.load[0].n_points, 2);
    const struct load_curve_point *p = &c.load[0].points[0];
    cr_assert_eq(p->x, 1.0);
    cr_assert_eq(p->metric[LC_OUTPUT_THROUGHPUT].median, 3.98);
    cr_assert_eq(p->metric[LC_OUTPUT_THROUGHPUT].n, 2);
    cr_assert_eq(p->metric[LC_MEDIAN_TTFT_MS].median, 1437.17);
    cr_assert_eq(p->metric[LC_P99_TTFT_MS].max, 1616.55);
    cr_assert_eq(p->metric[LC_P99_ITL_MS].min, 255.01);
    cr_assert_eq(p->metric[LC_GOODPUT_RPS].median, 0.0);
    cr_assert_eq(p->n_completed, 2);
    cr_assert(p->completed[0] == 16 && p->completed[1] == 16);
    cr_assert(p->gpu.present);
    cr_assert_eq(p->gpu.median_sm_mhz.median, 375.0);
    cr_assert_eq(p->gpu.max_temp_c, 88.0);
    cr_assert_eq(p->gpu.thermal_share, 1.0);
    cr_assert_eq(p->ttft_quantiles_ms[0], 277.9);
    cr_assert_eq(p->ttft_quantiles_ms[50], 1618.5);
    cr_assert_eq(p->tpot_quantiles_ms[25], 240.8);
    const struct load_curve_point *q = &c.load[2].points[1];
    cr_assert_eq(q->x, 4.0);
    cr_assert_eq(q->n_completed, 1, "vllm-no-async at x = 4 has one repeat");
    cr_assert_eq(q->gpu.median_sm_mhz.n, 1);
    cr_assert_eq(q->ttft_quantiles_ms[50], 5302.7);
    cr_assert_not(c.provenance.present);
    load_curve_free(&c);
}

Test(load_curve, bad_fields_name_the_file_and_the_path)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-002.json", &len);
    cJSON *seed = cJSON_ParseWithLength(text, len);
    free(text);
    struct { const char *where, *key, *value, *want; } cases[] = {
        {"", "quantiles", "[0, 1]", "c.json: quantiles: expected 51 numbers, got 2"},
        {"load.vllm-ngram.points.1", "x", NULL, "c.json: load.vllm-ngram.points[1].x: missing"},
        {"load.vllm-ngram.points.0.p99_tpot_ms", "n", "1.5", "c.json: load.vllm-ngram.points[0].p99_tpot_ms.n: expected a whole number ≥ 0, got 1.5"},
        {"load.vllm-fast-b.points.1", "completed", "[16, \"x\"]", "c.json: load.vllm-fast-b.points[1].completed[1]: expected a whole number ≥ 0"},
        {"load.vllm-fast-b.points.0.gpu", "max_temp_c", "\"hot\"", "c.json: load.vllm-fast-b.points[0].gpu.max_temp_c: expected a number, got a string"},
        {"", "slo", NULL, "c.json: slo: missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *j = cJSON_Duplicate(seed, true), *o = j;
        char path[96];
        snprintf(path, sizeof path, "%s", cases[i].where);
        for (char *seg = strtok(path, "."); seg; seg = strtok(NULL, "."))
            o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(seg)) : cJSON_GetObjectItem(o, seg);
        cr_assert(o, "case %zu", i);
        if (cases[i].value)
            cJSON_ReplaceItemInObject(o, cases[i].key, cJSON_Parse(cases[i].value));
        else
            cJSON_DeleteItemFromObject(o, cases[i].key);
        char err[256];
        struct load_curve c;
        cr_assert_eq(load_curve_from_json(j, "c.json", &c, err, sizeof err), -1, "case %zu", i);
        cr_assert(strstr(err, cases[i].want) == err, "case %zu: '%s'", i, err);
        cJSON_Delete(j);
    }
    cJSON_Delete(seed);
}

/* A round with the given p50 TTFT, p99 TPOT (NaN: null) and per-request
 * TTFTs. */
static void round_of(struct benchmark *b, double ttft_p50, double tpot_p99, const double *ttft, size_t n)
{
    *b = (struct benchmark){.completed = (long)n, .n_request_timings = n};
    b->metrics.dist.ttft.p50 = ttft_p50;
    b->metrics.dist.tpot.p99 = tpot_p99;
    b->metrics.output_throughput = 10 * ttft_p50;
    b->metrics.request_throughput = b->metrics.goodput_rps = NAN;
    b->metrics.dist.ttft.p99 = b->metrics.dist.tpot.p50 = NAN;
    b->metrics.dist.itl.p50 = b->metrics.dist.itl.p99 = NAN;
    b->request_timings = calloc(n, sizeof *b->request_timings);
    for (size_t i = 0; i < n; i++)
        b->request_timings[i] = (struct bench_timing){.ttft_ms = ttft[i], .tpot_ms = i % 2 ? NAN : 2.0 * (double)i};
}

Test(load_curve, point_from_rounds)
{
    struct benchmark r[3];
    const double t0[] = {5, 1, 3}, t1[] = {2, 4}, t2[] = {6};
    round_of(&r[0], 3.0, 7.0, t0, 3);
    round_of(&r[1], 1.0, NAN, t1, 2);
    round_of(&r[2], 2.0, 9.0, t2, 1);
    const struct benchmark *rounds[] = {&r[0], &r[1], &r[2]};
    struct load_curve_point p;
    cr_assert_eq(load_curve_point_of(rounds, 3, 4.0, &p), 0);
    cr_assert_eq(p.x, 4.0);
    const struct load_curve_range *ttft = &p.metric[LC_MEDIAN_TTFT_MS];
    cr_assert(ttft->median == 2.0 && ttft->min == 1.0 && ttft->max == 3.0 && ttft->n == 3);
    const struct load_curve_range *tpot = &p.metric[LC_P99_TPOT_MS];
    cr_assert(tpot->median == 8.0 && tpot->min == 7.0 && tpot->max == 9.0 && tpot->n == 2, "a round without it is left out");
    cr_assert(isnan(p.metric[LC_GOODPUT_RPS].median) && p.metric[LC_GOODPUT_RPS].n == 0);
    cr_assert_eq(p.metric[LC_OUTPUT_THROUGHPUT].median, 20.0);
    cr_assert(p.n_completed == 3 && p.completed[0] == 3 && p.completed[1] == 2 && p.completed[2] == 1);
    cr_assert_not(p.gpu.present);
    /* pooled TTFTs {1..6}: quantile 0 is the minimum, 1 the maximum, 0.5 the nearest rank 3 */
    cr_assert_eq(p.ttft_quantiles_ms[0], 1);
    cr_assert_eq(p.ttft_quantiles_ms[25], 3);
    cr_assert_eq(p.ttft_quantiles_ms[50], 6);
    /* TPOTs of even request indexes only: {0, 4} and {0} and {0}: undefined ones dropped */
    cr_assert_eq(p.tpot_quantiles_ms[50], 4);
    cr_assert_eq(p.tpot_quantiles_ms[0], 0);
    load_curve_point_free(&p);
    for (int i = 0; i < 3; i++)
        benchmark_free(&r[i]);
}

/* Failed before: a duration-mode round's point took the completed requests'
 * output_throughput (0 when every request was still running at the window's
 * end) instead of the tokens counted inside the window. */
Test(load_curve, duration_round_point_takes_the_window_throughput)
{
    struct benchmark r[2];
    const double t[] = {1};
    round_of(&r[0], 3.0, 7.0, t, 1);
    round_of(&r[1], 3.0, 7.0, t, 1);
    for (int i = 0; i < 2; i++)
        r[i].duration_mode = (struct bench_duration_mode){.present = true, .duration_s = 10, .window_s = 10,
                                                          .tokens_in_window = 4270.0 + 100 * i,
                                                          .aggregate_tps = 427.0 + 10 * i};
    r[1].completed = 0;
    r[1].metrics.output_throughput = 0;
    const struct benchmark *rounds[] = {&r[0], &r[1]};
    struct load_curve_point p;
    cr_assert_eq(load_curve_point_of(rounds, 2, 1.0, &p), 0);
    const struct load_curve_range *tps = &p.metric[LC_OUTPUT_THROUGHPUT];
    cr_assert(tps->min == 427.0 && tps->max == 437.0 && tps->n == 2, "min %g max %g n %ld", tps->min, tps->max, tps->n);
    load_curve_point_free(&p);
    for (int i = 0; i < 2; i++)
        benchmark_free(&r[i]);
}
