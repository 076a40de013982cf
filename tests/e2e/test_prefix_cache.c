/* test_prefix_cache.c — --prefix-hit-rate and --flush-cache against `anvil
 * sim --enable-prefix-caching`: a target of 0.5 is met within ±5 % (the
 * cache emptied, each group primed, then measured), the flush is the
 * engine's own (vLLM /reset_prefix_cache, SGLang /flush_cache, a warning
 * for llama.cpp), and --flush-cache makes a run start cold where the one
 * before had warmed the cache. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static char err_text[65536];

/* Runs anvil against sim with extra flags; returns the artifact. */
static cJSON *run_on(const struct sim_proc *sim, const char *const extra[])
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[40] = {harness_anvil_bin(), "run", "--base-url", sim->base_url, "--out", art};
    int n = 6;
    for (int i = 0; extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err_text, sizeof err_text, &status), 0);
    cr_assert_eq(status, 0, "exit %d\n%s", status, err_text);
    cJSON *a = harness_load_json(art);
    unlink(art);
    return a;
}

static void check_target(const char *flavor, const char *endpoint)
{
    const char *sim_args[] = {"--enable-prefix-caching", "--flavor", flavor, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *extra[] = {"--num-prompts", "24", "--concurrency", "4", "--input-len", "1024", "--output-len", "4",
                           "--prefix-hit-rate", "0.5", "--prefix-groups", "3", NULL};
    cJSON *a = run_on(&sim, extra);
    sim_stop(&sim);
    const cJSON *p = harness_json_path(a, "workload.prefix_cache");
    cr_assert(p, "%s: the artifact has workload.prefix_cache", flavor);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(p, "flush")), "flushed", "%s", flavor);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(p, "flush_endpoint")), endpoint, "%s", flavor);
    cr_assert_eq(harness_num(p, "groups"), 3);
    cr_assert_eq(harness_num(p, "primed_requests"), 3);
    cr_assert_eq(harness_num(a, "warmup_requests"), 0, "%s: the primers go before the load", flavor);
    double got = harness_num(p, "achieved_hit_rate");
    cr_assert(fabs(got - 0.5) <= 0.025, "%s: hit rate %g, target 0.5 ± 5%%", flavor, got);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(p, "met")), "%s", flavor);
    /* the server's counters over the load (pre-run to post-run reading): the measured requests only */
    double server = harness_num(p, "server_hit_rate");
    cr_assert(fabs(server - 0.5) <= 0.025, "%s: the server's counters give %g", flavor, server);
    cr_assert(fabs(server - got) <= 1e-9, "%s: server %g, cached_tokens %g", flavor, server, got);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(p, "server_met")), "%s", flavor);
    cr_assert(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(p, "server_hit_rate_source")), flavor), "%s", flavor);
    cr_assert_eq(harness_num(a, "completed"), 24);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0, "%s: prompts keep their length", flavor);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "cache_contaminated")));
    /* every measured request hits, and only its group's prefix */
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        cr_assert(fabs(harness_num(t, "cached_tokens") / harness_num(t, "prompt_tokens") - 0.5) <= 0.025,
                  "%s: request %g cached %g of %g", flavor, harness_num(t, "request_index"),
                  harness_num(t, "cached_tokens"), harness_num(t, "prompt_tokens"));
    cJSON_Delete(a);
}

Test(prefix_cache, vllm_target_half_is_met, .timeout = 60)
{
    check_target("vllm", "/reset_prefix_cache");
}

Test(prefix_cache, sglang_target_half_is_met, .timeout = 60)
{
    check_target("sglang", "/flush_cache");
}

static double first_cached(const cJSON *a)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        if (harness_num(t, "request_index") == 0)
            return harness_num(t, "cached_tokens");
    cr_assert_fail("no request 0");
    return -1;
}

Test(prefix_cache, flush_cache_makes_the_next_run_cold, .timeout = 60)
{
    const char *sim_args[] = {"--enable-prefix-caching", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    /* the shared prefix is the same text every run: a run after a run finds it cached */
    const char *warm[] = {"--num-prompts", "2", "--input-len", "600", "--output-len", "2", "--shared-prefix-len",
                          "400", NULL};
    const char *cold[] = {"--num-prompts", "2", "--input-len", "600", "--output-len", "2", "--shared-prefix-len",
                          "400", "--flush-cache", NULL};
    cJSON_Delete(run_on(&sim, warm));
    cJSON *again = run_on(&sim, warm);
    cr_assert_geq(first_cached(again), 384, "without a flush the first request finds the prefix cached");
    cJSON *a = run_on(&sim, cold);
    sim_stop(&sim);
    cr_assert_eq(first_cached(a), 0, "after the flush the first request finds nothing cached");
    const cJSON *p = harness_json_path(a, "workload.prefix_cache");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(p, "flush")), "flushed");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(p, "target_hit_rate")));
    cJSON_Delete(again);
    cJSON_Delete(a);
}

Test(prefix_cache, an_engine_without_a_flush_is_a_warning, .timeout = 60)
{
    const char *sim_args[] = {"--flavor", "llamacpp", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *extra[] = {"--num-prompts", "2", "--input-len", "64", "--output-len", "2", "--flush-cache", NULL};
    cJSON *a = run_on(&sim, extra);
    sim_stop(&sim);
    cr_assert(strstr(err_text, "offers no way to empty its prefix cache"), "%s", err_text);
    const cJSON *p = harness_json_path(a, "workload.prefix_cache");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(p, "flush")), "unsupported");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(p, "flush_endpoint")));
    cr_assert_eq(harness_num(a, "completed"), 2);
    cJSON_Delete(a);
}

Test(prefix_cache, a_target_the_server_cannot_show_is_not_met, .timeout = 60)
{
    const char *sim_args[] = {NULL};    /* no prefix caching: no cached_tokens */
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *extra[] = {"--num-prompts", "4", "--input-len", "256", "--output-len", "2", "--prefix-hit-rate",
                           "0.5", NULL};
    cJSON *a = run_on(&sim, extra);
    sim_stop(&sim);
    const cJSON *p = harness_json_path(a, "workload.prefix_cache");
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(p, "met")));
    cr_assert(strstr(err_text, "not validated"), "%s", err_text);
    cJSON_Delete(a);
}
