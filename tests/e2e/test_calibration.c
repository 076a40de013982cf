/* test_calibration.c — prompt calibration and prompt uniqueness against
 * `anvil sim`, checked in the simulator's trace: calibration never warms the
 * cache for a measured request, measured prompts share no prefix beyond the
 * chat template, a target the context cannot hold stops before the first
 * measured request, a near-limit target converges in a few requests,
 * --calibration none still checks prompt_tokens, and --calibration-cache
 * (and so a sweep) calibrates once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

#define MAX_TRACE 256

/* One generation request of the simulator's trace. */
struct traced {
    int index;              /* anvil-req-<index>, or -1 without request id (calibration) */
    int status;
    long prompt_tokens;     /* -1 when null (rejected) */
    long cached_tokens;
    double ttft_ms;         /* server side: first token − received; NAN without a first token */
};

/* Reads the trace at path into t (cap entries). Returns how many. */
static int read_trace(const char *path, struct traced *t, int cap)
{
    cJSON *lines[MAX_TRACE];
    int n = harness_read_jsonl(path, lines, MAX_TRACE);
    cr_assert_geq(n, 0, "trace %s is not JSON lines", path);
    int k = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *l = lines[i];
        const cJSON *id = cJSON_GetObjectItem(l, "request_id");
        const cJSON *p = cJSON_GetObjectItem(l, "prompt_tokens");
        const cJSON *first = cJSON_GetObjectItem(l, "first_token_ns");
        if (k < cap) {
            t[k] = (struct traced){.index = -1, .status = (int)harness_num(l, "status"),
                                   .prompt_tokens = cJSON_IsNumber(p) ? (long)p->valuedouble : -1,
                                   .cached_tokens = (long)harness_num(l, "cached_tokens"),
                                   .ttft_ms = cJSON_IsNumber(first)
                                              ? (first->valuedouble - harness_num(l, "received_ns")) / 1e6 : NAN};
            if (cJSON_IsString(id))
                cr_assert_eq(sscanf(id->valuestring, "anvil-req-%d", &t[k].index), 1);
            k++;
        }
        cJSON_Delete(lines[i]);
    }
    return k;
}

static int count_calibration(const struct traced *t, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += t[i].index < 0;
    return c;
}

static int count_measured(const struct traced *t, int n)
{
    return n - count_calibration(t, n);
}

/* Runs `anvil run --base-url URL ARGS... --out art` and returns its exit
 * status; stdout and stderr go to out and err. */
static int anvil_run(const struct sim_proc *sim, const char *const *args, const char *art, char *out,
                     size_t outcap, char *err, size_t errcap)
{
    const char *argv[64] = {harness_anvil_bin(), "run", "--base-url", sim->base_url, "--out", art};
    int k = 6;
    for (int i = 0; args[i] && k < 63; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    int status;
    cr_assert_eq(run_cmd_err(argv, out, outcap, err, errcap, &status), 0);
    return status;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Regression: calibration counted tokens with request 0's exact prompt, so a
 * server with a prefix cache (llama.cpp has one on by default) served
 * request 0 from cache — 1,024 of its 1,031 tokens, TTFT 6 ms against 108
 * ms for the others — while the artifact said cache_contaminated: false
 * (llama.cpp reports no cached_tokens). */
Test(calibration_e2e, request_0_sees_a_cold_cache_after_probe_calibration, .timeout = 120)
{
    /* llama.cpp reports no cached_tokens: only the server's trace shows it;
     * the default flavor reports them in usage too */
    const char *flavors[] = {"llamacpp", "anvil"};
    for (int fl = 0; fl < 2; fl++) {
        char trace[64], art[64];
        cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
        cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
        /* prefill at 10k tokens/s: a cold 1k-token prompt takes ≈ 100 ms, a cached one ≈ 5 ms */
        const char *sim_args[] = {"--enable-prefix-caching", "--prefill-tok-s", "10000", "--trace", trace,
                                  fl == 0 ? "--flavor" : NULL, "llamacpp", NULL};  /* NULL: the default */
        struct sim_proc sim;
        cr_assert_eq(sim_start(&sim, sim_args), 0);
        const char *args[] = {"--concurrency", "1", "--num-prompts", "4", "--input-len", "1024", "--output-len", "4",
                              "--calibration", "probe", NULL};
        static char out[16384], err[8192];
        int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
        cr_assert_eq(sim_stop(&sim), 0);
        cr_assert_eq(status, 0, "%s%s", out, err);
        struct traced t[MAX_TRACE];
        int n = read_trace(trace, t, MAX_TRACE);
        cr_assert_eq(count_measured(t, n), 4);
        cr_assert_gt(count_calibration(t, n), 0, "probe calibration sends generation requests");
        double others = 0;
        for (int i = 0; i < n; i++) {
            if (t[i].index < 0)
                continue;
            /* 16-token blocks: the 2 template tokens before the text are no block */
            cr_assert_eq(t[i].cached_tokens, 0, "%s: request %d had %ld cached tokens", flavors[fl],
                         t[i].index, t[i].cached_tokens);
            if (t[i].index > 0)
                others += t[i].ttft_ms / 3;
        }
        for (int i = 0; i < n; i++)
            if (t[i].index == 0)    /* the server's own times: its engine model, not the machine's noise */
                cr_assert_gt(t[i].ttft_ms, 0.5 * others, "%s: request 0: TTFT %.1f ms, the others %.1f ms",
                             flavors[fl], t[i].ttft_ms, others);
        cJSON *a = harness_load_json(art);
        cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "cache_contaminated")));
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings"))
            if (fl == 1)        /* usage.prompt_tokens_details.cached_tokens */
                cr_assert_eq(harness_num(r, "cached_tokens"), 0, "request %g", harness_num(r, "request_index"));
        cJSON_Delete(a);
        unlink(trace);
        unlink(art);
    }
}

/* Regression: every prompt started with the run's salt (16 hex digits) and
 * a zero-padded index, so prompts shared their first 21–34 tokens on BPE
 * vocabularies; with --tokenizer pieces (BPE-like splitting of hex and
 * digits) and 1-token cache blocks the simulator served 16 of 138 tokens of
 * every request after the first from cache. */
Test(calibration_e2e, measured_prompts_share_only_the_chat_template, .timeout = 120)
{
    char trace[64], art[64], art2[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(art2, sizeof art2), 0);
    const char *sim_args[] = {"--tokenizer", "pieces", "--enable-prefix-caching", "--block-size", "1",
                              "--kv-cache-tokens", "65536", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--num-prompts", "12", "--input-len", "128", "--output-len", "2", NULL};
    static char out[16384], err[8192];
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    cr_assert_eq(status, 0, "%s%s", out, err);
    /* completions: the shared start is the BOS token */
    const char *comp[] = {"--endpoint", "completions", "--num-prompts", "1", "--input-len", "64",
                          "--output-len", "2", NULL};
    status = anvil_run(&sim, comp, art2, out, sizeof out, err, sizeof err);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s%s", out, err);

    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    int seen = 0;
    for (int i = 0; i < n && seen < 12; i++) {
        if (t[i].index < 0)
            continue;
        seen++;
        /* the chat template before the text: <start> user — 2 tokens (docs/SIM.md) */
        cr_assert_leq(t[i].cached_tokens, 2, "request %d: %ld of %ld tokens from cache", t[i].index,
                      t[i].cached_tokens, t[i].prompt_tokens);
    }
    cr_assert_eq(seen, 12);
    cJSON *a = harness_load_json(art);
    cr_assert_eq(harness_num(a, "shared_prefix_tokens"), 2);
    cr_assert_str_eq(str(cJSON_GetObjectItem(a, "calibration"), "shared_prefix_method"), "tokenize");
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
    cJSON_Delete(a);
    a = harness_load_json(art2);
    cr_assert_eq(harness_num(a, "shared_prefix_tokens"), 1);
    cJSON_Delete(a);
    unlink(trace);
    unlink(art);
    unlink(art2);
}

/* --shared-prefix-len still shares: its text comes first, and is measured. */
Test(calibration_e2e, shared_prefix_len_is_shared_and_measured, .timeout = 120)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--enable-prefix-caching", "--block-size", "1", "--kv-cache-tokens", "65536",
                              "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--concurrency", "1", "--num-prompts", "4", "--input-len", "128", "--output-len", "2",
                          "--shared-prefix-len", "40", NULL};
    static char out[16384], err[8192];
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s%s", out, err);
    cJSON *a = harness_load_json(art);
    /* one token per word in the default tokenizer: the template's 2 and the 40 shared words */
    cr_assert_eq(harness_num(a, "shared_prefix_tokens"), 42);
    cJSON_Delete(a);
    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    for (int i = 0; i < n; i++)
        if (t[i].index > 0)
            cr_assert_eq(t[i].cached_tokens, 42, "request %d: %ld cached", t[i].index, t[i].cached_tokens);
    unlink(trace);
    unlink(art);
}

/* Regression: a target above the context was calibrated through /tokenize
 * (which has no context check) and every measured request then failed. */
Test(calibration_e2e, target_above_max_model_len_stops_before_measuring, .timeout = 60)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    unlink(art);
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", "--max-model-len", "2048", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--num-prompts", "2", "--input-len", "4000", "--output-len", "16", NULL};
    static char out[8192], err[8192];
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 2, "refused before any request: %s%s", out, err);
    cr_assert(strstr(err, "prompt of 4000 tokens cannot fit: the server's context is 2048 tokens "
                          "(/models max_model_len)"), "%s", err);
    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    cr_assert_eq(n, 0, "nothing generated: the limit was known from /models");
    cr_assert_eq(access(art, F_OK), -1, "no artifact: nothing was measured");
    unlink(trace);
}

/* Regression: llama.cpp's /v1/models has no max_model_len, so its context
 * was unknown: a 2048-token slot given --input-len 3000 was calibrated to
 * prompts it cut (context shift) and the run measured 1,979-token prompts
 * with exit 0. Its /props says the slot's n_ctx: refused before any
 * request, calibration probes included, exit 2, naming both numbers. */
Test(calibration_e2e, llamacpp_slot_context_refuses_before_any_request, .timeout = 60)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    unlink(art);
    const char *sim_args[] = {"--flavor", "llamacpp", "--context-shift", "--max-model-len", "2048",
                              "--tokenizer", "pieces", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--num-prompts", "2", "--input-len", "3000", "--output-len", "4",
                          "--calibration", "probe", NULL};
    static char out[8192], err[8192];
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    /* a prompt that fits but whose reply does not */
    const char *tail[] = {"--num-prompts", "2", "--input-len", "2000", "--output-len", "64", NULL};
    static char out2[8192], err2[8192];
    int status2 = anvil_run(&sim, tail, art, out2, sizeof out2, err2, sizeof err2);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 2, "%s%s", out, err);
    cr_assert(strstr(err, "prompt of 3000 tokens cannot fit: the server's context is 2048 tokens "
                          "(/props default_generation_settings.n_ctx)"), "%s", err);
    cr_assert_eq(status2, 2, "%s%s", out2, err2);
    cr_assert(strstr(err2, "prompt of 2000 tokens with 64 output tokens cannot fit: the server's context is "
                           "2048 tokens (/props default_generation_settings.n_ctx)"), "%s", err2);
    struct traced t[MAX_TRACE];
    cr_assert_eq(read_trace(trace, t, MAX_TRACE), 0, "no request reached the server, probes included");
    cr_assert_eq(access(art, F_OK), -1, "no artifact: nothing was measured");
    unlink(trace);
}

/* With --calibration none nothing is refused up front: a llama.cpp slot
 * that cuts each 3000-word prompt (context shift) had its requests counted
 * as measurements of ~1,500-2,000-token prompts. Each is now a failure,
 * prompt_truncated, checked against the server's own count in its trace. */
Test(calibration_e2e, a_prompt_the_server_cut_is_a_failed_request, .timeout = 60)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--flavor", "llamacpp", "--context-shift", "--max-model-len", "2048",
                              "--ttft-ms", "1", "--itl-ms", "1", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--num-prompts", "3", "--input-len", "3000", "--output-len", "8",
                          "--calibration", "none", NULL};
    static char out[16384], err[8192];
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 1, "every request failed: %s%s", out, err);
    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    cr_assert_eq(n, 3);
    for (int i = 0; i < n; i++)
        cr_assert_lt(t[i].prompt_tokens, 2400, "the server kept %ld tokens of request %d", t[i].prompt_tokens, i);
    cJSON *a = harness_load_json(art);
    cr_assert_eq(harness_num(a, "completed"), 0);
    cr_assert_eq(harness_num(a, "failed"), 3);
    cr_assert_eq(cJSON_GetNumberValue(harness_json_path(a, "failed_by_category.prompt_truncated")), 3);
    const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "failures"), 0);
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(f, "message"));
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(f, "category")), "prompt_truncated");
    cr_assert(msg && strstr(msg, "the server cut the prompt: usage.prompt_tokens "), "%s", msg ? msg : "(none)");
    cJSON_Delete(a);
    cr_assert(strstr(out, "prompt_truncated"), "the summary names the category: %s", out);
    unlink(trace);
    unlink(art);
}

/* Regression: the first probe had --input-len words and any error ended the
 * calibration: 1,900 tokens on a 2,048-token llama.cpp slot, whose
 * tokenizer makes more than a token per word, failed at once. Now: a short
 * probe, a jump, a refinement — and a refused probe is a bound, not the end
 * (its message kept, never a trailing ": "). */
Test(calibration_e2e, near_limit_target_converges_in_four_requests, .timeout = 120)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--flavor", "llamacpp", "--max-model-len", "2048", "--tokenizer", "pieces",
                              "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--num-prompts", "2", "--input-len", "1900", "--output-len", "16",
                          "--calibration", "probe", NULL};
    static char out[16384], err[8192];
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    cr_assert_eq(status, 0, "%s%s", out, err);
    /* above the context: refused before any request, from /props */
    const char *over[] = {"--num-prompts", "1", "--input-len", "3000", "--output-len", "16",
                          "--calibration", "probe", NULL};
    status = anvil_run(&sim, over, art, out, sizeof out, err, sizeof err);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 2, "%s%s", out, err);
    cr_assert(strstr(err, "prompt of 3000 tokens cannot fit: the server's context is 2048 tokens"), "%s", err);
    cr_assert_null(strstr(err, ": \n"), "%s", err);

    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    int first_run = 0;
    for (int i = 0; i < n && t[i].index < 0; i++, first_run++)
        cr_assert_eq(t[i].status, 200, "calibration request %d refused", i);
    cr_assert_leq(first_run, 4, "%d calibration requests", first_run);
    cr_assert_eq(count_measured(t, n), 2);
    cr_assert_eq(n - first_run - 2, 0, "the refused target took %d requests", n - first_run - 2);
    cJSON *a = harness_load_json(art);
    const cJSON *cal = cJSON_GetObjectItem(a, "calibration");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cal, "converged")));
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cal, "steps")), first_run);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
    cJSON_Delete(a);
    unlink(trace);
    unlink(art);
}

/* Regression: with --calibration none, --input-len 128 sent 138-token
 * prompts and the artifact said context_tokens 128, prompt_token_mismatches 0. */
Test(calibration_e2e, calibration_none_flags_prompt_token_mismatches, .timeout = 60)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--num-prompts", "3", "--input-len", "128", "--output-len", "2",
                          "--calibration", "none", NULL};
    static char out[16384], err[8192];
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s%s", out, err);
    cr_assert(strstr(out, "warning: 3 requests reported prompt_tokens other than"), "%s", out);
    /* anvil's own unfitted prompts: not blamed on the server */
    cr_assert(strstr(err, "with --calibration none, prompts of --input-len words were sent unfitted"), "%s", err);
    cr_assert_null(strstr(out, "re-templated"), "%s", out);
    cr_assert_null(strstr(err, "re-templated"), "%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 3);
    cr_assert_eq(harness_num(a, "context_tokens"), 128);
    /* 128 words, the 4-word head and the template's 6 tokens */
    cr_assert_eq(harness_num(a, "context_tokens_measured"), 138);
    cJSON_Delete(a);
    unlink(art);
}

/* A second run against the same server and length takes the calibration
 * from --calibration-cache: no calibration request reaches the server. */
Test(calibration_e2e, calibration_cache_is_reused, .timeout = 60)
{
    char trace[64], art[64], cache[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(cache, sizeof cache), 0);
    unlink(cache);      /* a missing file is an empty cache */
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *args[] = {"--num-prompts", "2", "--input-len", "96", "--output-len", "2",
                          "--calibration", "probe", "--calibration-cache", cache, NULL};
    static char out[16384], err[8192];
    cr_assert_eq(anvil_run(&sim, args, art, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cJSON *a = harness_load_json(art);
    const cJSON *cal = cJSON_GetObjectItem(a, "calibration");
    cr_assert_str_eq(str(cal, "source"), "measured");
    long words = (long)harness_num(cal, "filler_words");
    cJSON_Delete(a);
    cr_assert_eq(anvil_run(&sim, args, art, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cr_assert_eq(sim_stop(&sim), 0);

    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    int first = 0;      /* the first run's calibration requests come before any measured one */
    while (first < n && t[first].index < 0)
        first++;
    cr_assert_gt(first, 0);
    cr_assert_eq(count_measured(t, n), 4);
    cr_assert_eq(count_calibration(t, n), first, "the second run sent %d calibration requests",
                 count_calibration(t, n) - first);
    a = harness_load_json(art);
    cal = cJSON_GetObjectItem(a, "calibration");
    cr_assert_str_eq(str(cal, "source"), "cache");
    cr_assert_str_eq(str(cal, "cache_file"), cache);
    cr_assert(strstr(str(cal, "cache_key"), "input_len=96"), "%s", str(cal, "cache_key"));
    cr_assert_eq((long)harness_num(cal, "filler_words"), words);
    cr_assert_eq(harness_num(a, "shared_prefix_tokens"), 2);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
    cJSON_Delete(a);

    /* a file that is not a cache is an error, not overwritten */
    FILE *f = fopen(cache, "w");
    cr_assert(f);
    fputs("{\"some\": \"thing else\"}\n", f);
    fclose(f);
    cr_assert_eq(sim_start(&sim, NULL), 0);
    int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
    sim_stop(&sim);
    cr_assert_eq(status, 1);
    cr_assert(strstr(err, "--calibration-cache") && strstr(err, "not a calibration cache"), "%s", err);
    char *text = harness_read_file(cache, NULL);
    cr_assert_str_eq(text, "{\"some\": \"thing else\"}\n");
    free(text);
    unlink(trace);
    unlink(art);
    unlink(cache);
}

/* Regression: every round of a sweep calibrated again. */
Test(calibration_e2e, sweep_calibrates_once, .timeout = 120)
{
    char trace[64], dir[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    snprintf(dir, sizeof dir, "/tmp/anvil-sweep-XXXXXX");
    cr_assert(mkdtemp(dir));
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "1,2",
                          "--input-len", "48", "--output-len", "2", "--rounds", "2", "--num-prompts", "2",
                          "--out-dir", dir, "--", "--calibration", "probe", NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    cr_assert_eq(count_measured(t, n), 8);
    int first = 0;
    while (first < n && t[first].index < 0)
        first++;
    cr_assert_gt(first, 0);
    cr_assert_eq(count_calibration(t, n), first, "only the first round calibrates: %d of %d",
                 first, count_calibration(t, n));
    const char *rounds[] = {"short-48-2-c1/round-1", "short-48-2-c1/round-2", "short-48-2-c2/round-1",
                            "short-48-2-c2/round-2"};
    for (int i = 0; i < 4; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/rounds/target/%s.json", dir, rounds[i]);
        cJSON *a = harness_load_json(path);
        cr_assert_str_eq(str(cJSON_GetObjectItem(a, "calibration"), "source"), i == 0 ? "measured" : "cache",
                         "%s", rounds[i]);
        cJSON_Delete(a);
    }
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    unlink(trace);
}

/* --input-len 0 is a minimal prompt: the request's head and the chat
 * template (the simulator's 4 + 6 tokens), counted once by calibration,
 * with no prompt-token warning; --calibration none sends the same. Failed
 * before: --input-len 0 was a usage error. */
Test(calibration_e2e, input_len_0_sends_a_minimal_prompt, .timeout = 60)
{
    char art[64], trace[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *calib[] = {"auto", "none"};
    for (int k = 0; k < 2; k++) {
        const char *args[] = {"--num-prompts", "3", "--input-len", "0", "--output-len", "2",
                              "--calibration", calib[k], NULL};
        static char out[16384], err[8192];
        int status = anvil_run(&sim, args, art, out, sizeof out, err, sizeof err);
        cr_assert_eq(status, 0, "%s%s", out, err);
        /* no prompt-token warning (a loaded machine may still flag a late first token) */
        cr_assert_null(strstr(out, "prompt_tokens other than"), "%s", out);
        cr_assert_null(strstr(err, "prompt-length"), "%s", err);
        cr_assert_null(strstr(err, "warning"), "%s", err);
        cJSON *a = harness_load_json(art);
        cr_assert_eq(harness_num(a, "completed"), 3);
        cr_assert_eq(harness_num(a, "context_tokens"), 0);
        cr_assert_eq(harness_num(a, "context_tokens_measured"), 10);
        cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
        const cJSON *cal = cJSON_GetObjectItem(a, "calibration");
        if (k == 0) {
            cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cal, "converged")));
            cr_assert_eq(harness_num(cal, "measured_tokens"), 10);
            cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cal, "steps")), 1, "one count");
        }
        cJSON_Delete(a);
    }
    cr_assert_eq(sim_stop(&sim), 0);
    struct traced t[MAX_TRACE];
    int n = read_trace(trace, t, MAX_TRACE);
    cr_assert_eq(count_measured(t, n), 6);
    for (int i = 0; i < n; i++)
        cr_assert_eq(t[i].prompt_tokens, 10, "request %d", i);
    unlink(art);
    unlink(trace);
}
