/* test_tokens.c — output tokens counted and dated right, on every stream
 * shape the simulator serves: anvil's count of a window's tokens against
 * the simulator's trace (the tokens of every chunk it wrote, by write time),
 * for multi-token chunks (speculative decoding) with and without continuous
 * usage, streams cut by the window, completed ones, and decode cells. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Tokens the server wrote in [ws, we] (CLOCK_MONOTONIC ns), from its trace. */
static double traced_tokens(const char *trace, double ws, double we)
{
    static cJSON *lines[4096];
    int n = harness_read_jsonl(trace, lines, 4096);
    cr_assert_geq(n, 1, "the trace %s has lines", trace);
    double tokens = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(lines[i], "chunks")) {
            const cJSON *t = cJSON_GetObjectItem(c, "t_ns");
            if (cJSON_IsNumber(t) && t->valuedouble >= ws && t->valuedouble <= we)
                tokens += harness_num(c, "tokens");
        }
        cJSON_Delete(lines[i]);
    }
    return tokens;
}

/* A duration-mode run of `anvil run` against a simulator started with
 * sim_args; returns the artifact (caller deletes) and the trace's path. */
static cJSON *window_run(const char *const sim_args[], const char *const run_args[], char *trace,
                         size_t cap, char *err, size_t errcap)
{
    cr_assert_eq(harness_tmpfile(trace, cap), 0);
    const char *args[32];
    int k = 0;
    for (; sim_args[k]; k++)
        args[k] = sim_args[k];
    args[k++] = "--trace";
    args[k++] = trace;
    args[k] = NULL;
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, args), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[48] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--out", art,
                            "--input-len", "32", "--telemetry", "off", "--scrape-interval-ms", "100"};
    int n = 12;
    for (int i = 0; run_args[i]; i++)
        argv[n++] = run_args[i];
    argv[n] = NULL;
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, errcap, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "anvil run exited %d: %s", status, err);
    cJSON *doc = harness_load_json(art);
    unlink(art);
    return doc;
}

/* Asserts the window's tokens within 2 % of the trace's, the source, and
 * (server_counts) the server's generation counter over the window beside it. */
static void check_window(const cJSON *doc, const char *trace, const char *source, bool server_counts,
                         const char *err)
{
    const cJSON *d = cJSON_GetObjectItem(doc, "duration_mode");
    double ws = harness_num(d, "window_start_ns"), we = harness_num(d, "window_end_ns");
    double truth = traced_tokens(trace, ws, we), got = harness_num(d, "tokens_in_window");
    cr_assert_gt(truth, 500, "the server wrote %.0f tokens in the window", truth);
    cr_expect_leq(fabs(got - truth), 0.02 * truth, "anvil counted %.0f tokens in the window, the server wrote "
                  "%.0f (%+.1f %%); stderr: %s", got, truth, 100 * (got - truth) / truth, err);
    const cJSON *s = cJSON_GetObjectItem(d, "token_source");
    cr_expect(cJSON_IsString(s) && !strcmp(s->valuestring, source), "token_source %s, expected %s",
              cJSON_IsString(s) ? s->valuestring : "null", source);
    if (!server_counts) {
        cr_expect(cJSON_IsNull(cJSON_GetObjectItem(d, "server_tokens_in_window")));
        return;
    }
    /* the server's counter over the same window is recorded beside it */
    double srv = harness_num(d, "server_tokens_in_window");
    cr_expect_leq(fabs(srv - truth), 0.02 * truth, "server counter %.0f vs trace %.0f", srv, truth);
    /* both within 2 % of the truth, so within the cross-check's bound of each other: no warning */
    if (fabs(got - srv) <= 0.02 * srv)
        cr_expect_null(strstr(err, "output tokens in the window: anvil counted"), "%s", err);
    else
        cr_expect(strstr(err, "output tokens in the window: anvil counted"), "a %.1f %% gap is said: %s",
                  100 * (got - srv) / srv, err);
}

static const char *const spec_sglang[] = {"--flavor", "sglang", "--num-speculative-tokens", "3", NULL};

Test(tokens, multi_token_chunks_cut_by_the_window_count_by_the_servers_tokenizer, .timeout = 60)
{
    /* every stream outlasts the window: no usage ever arrives for it */
    const char *run[] = {"--concurrency", "6", "--duration", "2", "--warmup-s", "0.5", "--output-len", "8000",
                         "--no-continuous-usage", NULL};
    char trace[64];
    static char err[65536];
    cJSON *doc = window_run(spec_sglang, run, trace, sizeof trace, err, sizeof err);
    check_window(doc, trace, "tokenize", true, err);
    cr_expect(strstr(err, "counted by the server's tokenizer"), "the run says how it counted: %s", err);
    cJSON_Delete(doc);
    unlink(trace);
}

Test(tokens, multi_token_chunks_completed_in_the_window_count_by_usage, .timeout = 60)
{
    /* short replies: most streams end inside the window with their final usage */
    const char *run[] = {"--concurrency", "6", "--duration", "2", "--warmup-s", "0.5", "--output-len", "96",
                         "--no-continuous-usage", NULL};
    char trace[64];
    static char err[65536];
    cJSON *doc = window_run(spec_sglang, run, trace, sizeof trace, err, sizeof err);
    /* the streams the window cut at its end had no usage yet */
    check_window(doc, trace, "tokenize", true, err);
    cr_expect_gt(harness_num(doc, "completed"), 20);
    cJSON_Delete(doc);
    unlink(trace);
}

Test(tokens, sglang_gets_continuous_usage_by_default, .timeout = 60)
{
    const char *run[] = {"--concurrency", "4", "--duration", "2", "--warmup-s", "0.5", "--output-len", "8000",
                         NULL};
    char trace[64];
    static char err[65536];
    cJSON *doc = window_run(spec_sglang, run, trace, sizeof trace, err, sizeof err);
    const cJSON *d = cJSON_GetObjectItem(doc, "duration_mode");
    double ws = harness_num(d, "window_start_ns"), we = harness_num(d, "window_end_ns");
    double truth = traced_tokens(trace, ws, we), got = harness_num(d, "tokens_in_window");
    cr_expect_leq(fabs(got - truth), 0.02 * truth, "anvil %.0f, server %.0f; %s", got, truth, err);
    cJSON_Delete(doc);
    unlink(trace);
}

Test(tokens, a_decode_cell_counts_multi_token_chunks, .timeout = 90)
{
    char dir[] = "/tmp/anvil-tokens-XXXXXX", trace[64];
    cr_assert(mkdtemp(dir));
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *args[] = {"--flavor", "sglang", "--num-speculative-tokens", "3", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, args), 0);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "4",
                          "--contexts", "0", "--duration", "1.5", "--max-tokens", "8000", "--ready-stable-s", "0.2",
                          "--cell-warmup-timeout-s", "5", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--out-dir", dir, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    char path[600];
    snprintf(path, sizeof path, "%s/decode.json", dir);
    cJSON *doc = harness_load_json(path);
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "results"), 0);
    cr_assert(c);
    double ws = harness_num(c, "window_start_monotonic_ns"), we = harness_num(c, "window_end_monotonic_ns");
    double truth = traced_tokens(trace, ws, we);
    double got = harness_num(c, "client_output_tokens");
    cr_assert_gt(truth, 500);
    cr_expect_leq(fabs(got - truth), 0.02 * truth, "the cell counted %.0f tokens, the server wrote %.0f", got, truth);
    /* steps/s are the seed's engine steps: aggregate tok/s over the acceptance length */
    double tps = harness_num(c, "aggregate_tps"), secs = harness_num(c, "measurement_seconds");
    cr_expect_leq(fabs(tps * secs - got), 1, "aggregate_tps × measurement_seconds = the tokens counted");
    cJSON_Delete(doc);
    unlink(trace);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* llama.cpp: a share of tokens (partial UTF-8, control tokens) has no
 * chunk of its own; no continuous usage. */
static const char *const llamacpp_chunkless[] = {"--flavor", "llamacpp", "--tokens-without-chunk", "0.3", NULL};

Test(tokens, tokens_without_a_chunk_cut_by_the_window_count_by_the_servers_tokenizer, .timeout = 60)
{
    const char *run[] = {"--concurrency", "4", "--duration", "2", "--warmup-s", "0.5", "--output-len", "8000", NULL};
    char trace[64];
    static char err[65536];
    cJSON *doc = window_run(llamacpp_chunkless, run, trace, sizeof trace, err, sizeof err);
    check_window(doc, trace, "tokenize", false, err);
    /* llama.cpp counts a reply's tokens when it completes: over a window that cut every stream
     * its counter is no figure, and engine steps come from the client's count, not 0 */
    const cJSON *d = harness_json_path(doc, "server_metrics.derived");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(d, "server_output_tokens")));
    double tokens = harness_num(cJSON_GetObjectItem(doc, "duration_mode"), "tokens_in_window");
    cr_expect_float_eq(harness_num(d, "server_engine_steps"), tokens, 1e-6, "one token a step without drafts");
    cr_expect_gt(harness_num(d, "batch_steps_per_s"), 0, "n_decode_total's own rate");
    cr_expect_null(strstr(err, "other traffic"), "%s", err);
    cJSON_Delete(doc);
    unlink(trace);
}

Test(tokens, tokens_without_a_chunk_in_completed_replies_count_by_usage, .timeout = 60)
{
    const char *run[] = {"--concurrency", "4", "--duration", "2", "--warmup-s", "0.5", "--output-len", "64",
                         "--endpoint", "completions", NULL};
    char trace[64];
    static char err[65536];
    cJSON *doc = window_run(llamacpp_chunkless, run, trace, sizeof trace, err, sizeof err);
    check_window(doc, trace, "tokenize", false, err);
    /* completed replies: every token counted, though 30 % had no chunk */
    const cJSON *t;
    int n = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(doc, "request_timings")) {
        cr_expect_eq(harness_num(t, "output_tokens"), 64);
        cr_expect_lt(harness_num(t, "output_chunks"), 60, "fewer chunks than tokens");
        n++;
    }
    cr_expect_gt(n, 10);
    cJSON_Delete(doc);
    unlink(trace);
}
