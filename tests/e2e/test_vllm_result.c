/* test_vllm_result.c — `anvil run --result-format vllm` writes vLLM's
 * result JSON beside the artifact, with vLLM's keys, and its figures equal
 * a recomputation from the artifact's request_timings (numpy's linear
 * percentiles, mean, population std), not the code that wrote them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy.percentile's default (linear) over sorted v[0..n). */
static double linear(const double *v, int n, double p)
{
    double rank = p / 100 * (n - 1);
    int lo = (int)floor(rank), hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (rank - lo);
}

static void check_metric(const cJSON *res, const cJSON *timings, const char *field, const char *name)
{
    double v[256];
    int n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, timings) v[n++] = harness_num(t, field);
    qsort(v, (size_t)n, sizeof v[0], cmp);
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    char k[64];
    const double want[] = {mean, linear(v, n, 50), sqrt(sq / n), linear(v, n, 50), linear(v, n, 99.9)};
    const char *fmt[] = {"mean_%s_ms", "median_%s_ms", "std_%s_ms", "p50_%s_ms", "p99.9_%s_ms"};
    for (int i = 0; i < 5; i++) {
        snprintf(k, sizeof k, fmt[i], name);
        double got = harness_num(res, k);
        cr_assert(fabs(got - want[i]) <= 1e-9 * fabs(want[i]) + 1e-12, "%s: %.17g, recomputed %.17g", k, got,
                  want[i]);
    }
}

Test(vllm_result, keys_and_figures_match_the_artifact, .timeout = 120)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "3", "--itl-ms", "2", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-vllm-XXXXXX", art[128], vres[160];
    cr_assert(mkdtemp(dir));
    snprintf(art, sizeof art, "%s/run.json", dir);
    snprintf(vres, sizeof vres, "%s/run.vllm.json", dir);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "24",
                          "--max-concurrency", "4", "--input-len", "16", "--output-len", "8",
                          "--result-format", "vllm", "--percentile-method", "linear",
                          "--percentile-metrics", "ttft,e2el", "--metric-percentiles", "50,99.9", "--out", art,
                          NULL};
    static char out[65536];
    char err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "vLLM result: "), "%s", out);
    cJSON *a = harness_load_json(art), *v = harness_load_json(vres);
    cr_assert(a && v);
    const char *keys[] = {"date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
                          "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
                          "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
                          "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
                          "max_concurrent_requests", "mean_ttft_ms"};
    const cJSON *k = v->child;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++, k = k->next) {
        cr_assert(k, "ends before %s", keys[i]);
        cr_assert_str_eq(k->string, keys[i]);
    }
    cr_assert_str_eq(cJSON_GetObjectItem(v, "request_rate")->valuestring, "inf");
    cr_assert_eq(harness_num(v, "max_concurrency"), 4);
    cr_assert_eq(harness_num(v, "num_prompts"), 24);
    cr_assert_eq(harness_num(v, "completed"), harness_num(a, "completed"));
    cr_assert_str_eq(cJSON_GetObjectItem(v, "model_id")->valuestring, cJSON_GetObjectItem(a, "model")->valuestring);
    const cJSON *m = cJSON_GetObjectItem(a, "metrics");
    cr_assert_eq(harness_num(v, "total_output_tokens"), harness_num(m, "output_tokens"));
    cr_assert_eq(harness_num(v, "total_input_tokens"), harness_num(m, "prompt_tokens"));
    cr_assert(harness_num(v, "max_concurrent_requests") >= 1 && harness_num(v, "max_concurrent_requests") <= 4);
    const cJSON *timings = cJSON_GetObjectItem(a, "request_timings");
    cr_assert_eq(cJSON_GetArraySize(timings), 24);
    check_metric(v, timings, "ttft_ms", "ttft");
    check_metric(v, timings, "e2e_ms", "e2el");
    cr_assert_null(cJSON_GetObjectItem(v, "mean_tpot_ms"), "only the --percentile-metrics asked for");
    cJSON_Delete(a);
    cJSON_Delete(v);
    unlink(art);
    unlink(vres);
    char jl[160];
    snprintf(jl, sizeof jl, "rm -rf %s", dir);
    cr_assert_eq(system(jl), 0);
}

/* vLLM's file goes beside the artifact's: with --out - there is none, a
 * usage error before any request (no server listens on port 9). */
Test(vllm_result, refused_with_out_dash_before_any_request)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1", "--result-format",
                          "vllm", "--out", "-", NULL};
    char out[4096], err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "--result-format vllm writes beside the artifact file: not with --out -"), "%s", err);
}
