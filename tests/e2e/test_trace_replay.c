/* test_trace_replay.c — trace replay against `anvil sim` with prefix
 * caching: a Mooncake trace of 300 requests goes out at its recorded times
 * (send lateness bounded), every prompt has its recorded length, and the
 * simulator's measured prefix hit rate equals the trace's theoretical one
 * within 0.02 (the prompts share exactly the blocks their hash_ids name);
 * an Azure trace's window is cut and its clock scaled, and its requests
 * share nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

/* The bound on |measured − theoretical| prefix hit rate: the simulator
 * caches whole 16-token blocks after the chat template's 10 tokens, and a
 * request that arrives while the one it shares blocks with is still in
 * prefill finds them not yet cached (measured on this trace: 0.0016). */
#define HIT_RATE_BOUND 0.02

static cJSON *replay(const char *spec, const char *const extra[], char *err, size_t errlen)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    /* fast prefill: the server keeps up with the trace, so what is measured is the sharing */
    const char *sim_args[] = {"--enable-prefix-caching", "--kv-cache-tokens", "4000000", "--prefill-tok-s",
                              "400000", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    harness_split_cpus(sim.pid);
    const char *argv[32] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--dataset", spec,
                            "--out", art};
    int n = 8;
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, errlen, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "exit %d:\n%s\n%s", status, out, err);
    cJSON *a = harness_load_json(art);
    unlink(art);
    return a;
}

/* The recorded offsets (ms) of a Mooncake file's lines, in time order. */
static int recorded_offsets(const char *path, double *ms, int cap)
{
    cJSON *lines[400];
    int n = harness_read_jsonl(path, lines, 400);
    cr_assert_gt(n, 0);
    for (int i = 0; i < n && i < cap; i++) {
        ms[i] = harness_num(lines[i], "timestamp");
        cJSON_Delete(lines[i]);
    }
    for (int i = 1; i < n; i++)        /* the file is in time order; insertion sort keeps it so */
        for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
            double t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    for (int i = n - 1; i >= 0; i--)
        ms[i] -= ms[0];
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

Test(trace_replay, mooncake_at_recorded_times_with_the_hit_rate_it_promises, .timeout = 120)
{
    static char err[65536];
    cJSON *a = replay("mooncake:tests/data/workloads/mooncake_300.jsonl", NULL, err, sizeof err);
    cr_assert_eq(harness_num(a, "completed"), 300, "%s", err);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0, "every prompt has its recorded length");
    const cJSON *t = harness_json_path(a, "workload.trace");
    cr_assert(t, "the artifact has workload.trace");
    cr_assert_eq(harness_num(t, "requests"), 300);
    double theory = harness_num(t, "theoretical_prefix_hit_rate"), measured = harness_num(t, "measured_prefix_hit_rate");
    cr_assert_gt(theory, 0.5, "the trace shares most of its blocks (%g)", theory);
    cr_assert(fabs(measured - theory) <= HIT_RATE_BOUND, "measured hit rate %g, theoretical %g (bound %g)",
              measured, theory, HIT_RATE_BOUND);
    /* the server's own counters, pre-run to post-run: the same tokens as cached_tokens */
    double server = harness_num(t, "server_prefix_hit_rate");
    cr_assert(fabs(server - theory) <= HIT_RATE_BOUND, "server hit rate %g, theoretical %g", server, theory);
    cr_assert(fabs(server - measured) <= 1e-9, "server %g, cached_tokens %g", server, measured);
    cr_assert(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(t, "server_prefix_hit_rate_source")),
                     "vllm:prefix_cache_hits_total"));
    /* sent at the recorded times: each start's offset from the first against the file's */
    static double want[400], lateness[400];
    int n = recorded_offsets("tests/data/workloads/mooncake_300.jsonl", want, 400);
    cr_assert_eq(n, 300);
    const cJSON *timings = cJSON_GetObjectItem(a, "request_timings"), *r;
    double t0 = harness_num(cJSON_GetArrayItem(timings, 0), "start_monotonic_ns");
    int k = 0;
    cJSON_ArrayForEach(r, timings) {
        int i = (int)harness_num(r, "request_index");
        double off_ms = (harness_num(r, "start_monotonic_ns") - t0) / 1e6;
        lateness[k++] = fabs(off_ms - want[i]);
        cr_assert_geq(harness_num(r, "send_lateness_ms"), 0);
    }
    qsort(lateness, (size_t)k, sizeof *lateness, cmp_double);
    /* the machine is shared and this is a sanitizer build: bounds, not a benchmark */
    cr_assert_lt(lateness[k / 2], 5, "median |send − recorded| %g ms", lateness[k / 2]);
    cr_assert_lt(lateness[k - 1], 250, "worst |send − recorded| %g ms", lateness[k - 1]);
    cr_assert_leq(harness_num(t, "late_sends"), 150);
    cJSON_Delete(a);
}

Test(trace_replay, azure_window_scaled_and_unshared, .timeout = 60)
{
    static char err[65536];
    const char *extra[] = {"--trace-start", "2", "--trace-duration", "4", "--trace-speed", "2", NULL};
    cJSON *a = replay("azure:tests/data/workloads/azure_60.csv", extra, err, sizeof err);
    const cJSON *t = harness_json_path(a, "workload.trace");
    cr_assert(t);
    cr_assert_eq(harness_num(t, "lines"), 60);
    long req = (long)harness_num(t, "requests");
    cr_assert(req > 10 && req < 40, "%ld requests in a 4 s window of 60 over 10 s", req);
    cr_assert_eq(harness_num(a, "completed"), req);
    cr_assert_leq(harness_num(t, "span_s"), 2.0, "4 s at twice the speed");
    cr_assert_gt(harness_num(t, "span_s"), 1.0);
    cr_assert_float_eq(harness_num(t, "theoretical_prefix_hit_rate"), 0, 1e-12);
    cr_assert_lt(harness_num(t, "measured_prefix_hit_rate"), 0.02, "Azure requests share nothing");
    cr_assert_lt(harness_num(t, "server_prefix_hit_rate"), 0.02, "nor do the server's counters say otherwise");
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
    cJSON_Delete(a);
}

Test(trace_replay, flags_that_do_not_apply_are_refused, .timeout = 30)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--dataset", "mooncake:tests/data/workloads/mooncake_300.jsonl",
                          "--request-rate", "5", NULL};
    static char out[4096], err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "recorded times"), "%s", err);
    const char *argv2[] = {harness_anvil_bin(), "run", "--trace-speed", "2", NULL};
    cr_assert_eq(run_cmd_err(argv2, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "--trace-speed"), "%s", err);
}

/* The summaries say how a replay was sent: its recorded times (not "inf
 * (closed loop)"), no cap, the recorded output lengths; `anvil show` says
 * "no cap" (was "Concurrency: 0") and the range of max_tokens the requests
 * asked, recomputed here from request_timings (was the unused default 128). */
Test(trace_replay, summaries_say_how_the_replay_was_sent, .timeout = 60)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, NULL), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--dataset",
                          "mooncake:tests/data/workloads/mooncake_300.jsonl", "--num-prompts", "6",
                          "--trace-speed", "4", "--out", art, NULL};
    static char out[16384];
    char err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "Traffic request rate (req/s):                 trace times x4\n"), "%s", out);
    cr_assert(strstr(out, "Burstiness factor:                           n/a (trace replay)\n"), "%s", out);
    cr_assert(strstr(out, "Output tokens per request:                       as recorded\n"), "%s", out);
    cr_assert_null(strstr(out, "closed loop"), "%s", out);
    cJSON *a = harness_load_json(art);
    long lo = -1, hi = -1;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        long m = (long)harness_num(t, "max_tokens");
        lo = lo < 0 || m < lo ? m : lo;
        hi = m > hi ? m : hi;
    }
    cJSON_Delete(a);
    cr_assert(lo > 0 && hi >= lo);
    const char *show[] = {harness_anvil_bin(), "show", art, NULL};
    cr_assert_eq(run_cmd_err(show, out, sizeof out, err, sizeof err, &status), 0);
    unlink(art);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "Concurrency:                                no cap\n"), "%s", out);
    char want[128];
    if (lo == hi)
        snprintf(want, sizeof want, "Output tokens per request (max_tokens):     %ld\n", lo);
    else
        snprintf(want, sizeof want, "Output tokens per request (max_tokens):     %ld-%ld (as recorded)\n", lo, hi);
    cr_assert(strstr(out, want), "want '%s' in:\n%s", want, out);
}
