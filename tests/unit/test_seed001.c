/* test_seed001.c — seed 001 as a specification: distributions computed from
 * its request_timings with anvil's code and names reproduce its metrics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "artifact/benchmark.h"
#include "stats/dist.h"
#include "testutil.h"

struct field {
    const char *timing;     /* request_timings field */
    const char *base;       /* metrics name base */
    bool ms;
};

static const struct field fields[] = {
    {"ttft_ms", "ttft", true},
    {"time_to_first_output_ms", "time_to_first_output", true},
    {"e2e_ms", "e2e", true},
    {"generation_ms", "generation", true},
    {"tpot_ms", "tpot", true},
    {"mean_inter_token_latency_ms", "mean_inter_token_latency_ms", false},
    {"decode_tok_s", "decode_tok_s", false},
    {"effective_prefill_tok_s", "effective_prefill_tok_s", false},
    {"prompt_tokens", "prompt_tokens", false},
};

static cJSON *load_seed(void)
{
    char *text = tu_read_file("tests/data/seed-001.json", NULL);
    cJSON *seed = cJSON_Parse(text);
    free(text);
    cr_assert(seed);
    return seed;
}

Test(seed001, distributions_reproduce_metrics)
{
    cJSON *seed = load_seed();
    const cJSON *timings = cJSON_GetObjectItem(seed, "request_timings");
    const cJSON *want = cJSON_GetObjectItem(seed, "metrics");
    int n = cJSON_GetArraySize(timings);
    cr_assert_eq(n, 16);
    int compared = 0;
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
        double vals[64];
        for (int i = 0; i < n; i++)
            vals[i] = cJSON_GetObjectItem(cJSON_GetArrayItem(timings, i), fields[f].timing)->valuedouble;
        struct dist d;
        dist_compute(vals, (size_t)n, PCT_NEAREST, &d);
        cJSON *got = cJSON_CreateObject();
        artifact_add_dist(got, fields[f].base, fields[f].ms, &d);
        const cJSON *g;
        cJSON_ArrayForEach(g, got) {
            const cJSON *w = cJSON_GetObjectItem(want, g->string);
            cr_assert(w, "seed metrics lack %s", g->string);
            if (strstr(g->string, "_mean"))     /* summation order may differ in the last bit */
                cr_assert_float_eq(g->valuedouble, w->valuedouble, 1e-12 * fabs(w->valuedouble), "%s", g->string);
            else
                cr_assert_eq(g->valuedouble, w->valuedouble, "%s: %.17g != %.17g", g->string, g->valuedouble, w->valuedouble);
            compared++;
        }
        cJSON_Delete(got);
    }
    cr_assert_eq(compared, 9 * 10);
    cJSON_Delete(seed);
}

Test(seed001, per_request_relations_hold)
{
    cJSON *seed = load_seed();
    const cJSON *t;
    long out_total = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(seed, "request_timings")) {
        double e2e = cJSON_GetObjectItem(t, "e2e_ms")->valuedouble;
        double ttfo = cJSON_GetObjectItem(t, "time_to_first_output_ms")->valuedouble;
        double gen = cJSON_GetObjectItem(t, "generation_ms")->valuedouble;
        double out = cJSON_GetObjectItem(t, "output_tokens")->valuedouble;
        double prompt = cJSON_GetObjectItem(t, "prompt_tokens")->valuedouble;
        out_total += (long)out;
        cr_assert_float_eq(gen, e2e - ttfo, 1e-6);
        cr_assert_float_eq(cJSON_GetObjectItem(t, "tpot_ms")->valuedouble, gen / (out - 1), 1e-9);
        cr_assert_float_eq(cJSON_GetObjectItem(t, "decode_tok_s")->valuedouble, (out - 1) / (gen / 1000), 1e-6);
        cr_assert_float_eq(cJSON_GetObjectItem(t, "effective_prefill_tok_s")->valuedouble, prompt / (ttfo / 1000), 1e-6);
    }
    const cJSON *m = cJSON_GetObjectItem(seed, "metrics");
    cr_assert_eq(out_total, (long)cJSON_GetObjectItem(m, "output_tokens")->valuedouble);
    double wall = cJSON_GetObjectItem(seed, "wall_clock_ms")->valuedouble;
    cr_assert_float_eq(cJSON_GetObjectItem(m, "throughput_tok_s")->valuedouble, out_total / (wall / 1000), 1e-9);
    cJSON_Delete(seed);
}
