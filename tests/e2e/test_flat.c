/* test_flat.c — a run whose records are dropped as they end (memory flat in
 * the number of requests) still has every request: its journal holds them
 * all, its summaries cover them all (recomputed here from the journal's raw
 * times), and its artifact lists the rows below --max-request-rows, in
 * request_index order, and counts the others. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

#define N 300
#define ROWS 100

static double t_of(const cJSON *line, const char *k)
{
    const cJSON *t = cJSON_GetObjectItem(line, k);
    return cJSON_IsString(t) ? strtod(t->valuestring, NULL) : cJSON_IsNumber(t) ? t->valuedouble : NAN;
}

Test(flat, a_run_past_max_request_rows_keeps_every_request_and_exact_summaries, .timeout = 120)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "2", "--itl-ms", "0.5", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-flat-XXXXXX", out[128], journal[512], n[16], rows[16];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/a.json", dir);
    snprintf(n, sizeof n, "%d", N);
    snprintf(rows, sizeof rows, "%d", ROWS);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", n,
                          "--concurrency", "8", "--input-len", "16", "--output-len", "8", "--calibration", "none",
                          "--max-request-rows", rows, "--telemetry", "off", "--out", out, NULL};
    static char err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(out);
    cr_assert(a);
    cr_assert_eq(harness_num(a, "completed"), N);
    cr_assert_eq(harness_num(a, "request_rows_left_out"), N - ROWS);
    cr_assert_eq(harness_num(a, "max_request_rows"), ROWS);
    /* the rows: request_index 0 .. ROWS-1, in order */
    const cJSON *t = cJSON_GetObjectItem(a, "request_timings");
    cr_assert_eq(cJSON_GetArraySize(t), ROWS);
    int i = 0;
    for (const cJSON *row = t->child; row; row = row->next, i++)
        cr_assert_eq(harness_num(row, "request_index"), i);
    /* show says where the others are */
    static char shown[65536];
    const char *show[] = {harness_anvil_bin(), "show", out, NULL};
    cr_assert_eq(run_cmd(show, shown, sizeof shown, &status), 0);
    char want[96];
    snprintf(want, sizeof want, "request_index below %d; %d more are in the run's journal", ROWS, N - ROWS);
    cr_assert(strstr(shown, want), "%s", shown);
    /* the journal: every request, and the summaries recomputed from its raw times */
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0);
    static cJSON *lines[N + 8];
    int k = harness_read_jsonl(journal, lines, N + 8);
    cr_assert_eq(k, N + 1, "a header and one line per request");
    static double ttft[N], e2e[N], itl[N * 16];
    size_t ni = 0;
    for (int l = 1; l < k; l++) {
        double s = t_of(lines[l], "t_start");
        ttft[l - 1] = (t_of(lines[l], "t_first_content") - s) / 1e6;
        e2e[l - 1] = (t_of(lines[l], "t_end") - s) / 1e6;
        const cJSON *c = cJSON_GetObjectItem(lines[l], "chunks");
        for (int j = 1; j < cJSON_GetArraySize(c); j++) {
            double t1 = cJSON_GetArrayItem(cJSON_GetArrayItem(c, j), 0)->valuedouble;
            double t0 = cJSON_GetArrayItem(cJSON_GetArrayItem(c, j - 1), 0)->valuedouble;
            itl[ni++] = (t1 - t0) / 1e6;
        }
    }
    const cJSON *m = cJSON_GetObjectItem(a, "metrics");
    const double ps[] = {50, 90, 99};
    const char *pn[] = {"p50", "p90", "p99"};
    for (int q = 0; q < 3; q++) {
        char key[64];
        snprintf(key, sizeof key, "ttft_%s_ms", pn[q]);
        cr_assert_float_eq(harness_num(m, key), harness_nearest_rank(ttft, N, ps[q]), 1e-6, "%s", key);
        snprintf(key, sizeof key, "e2e_%s_ms", pn[q]);
        cr_assert_float_eq(harness_num(m, key), harness_nearest_rank(e2e, N, ps[q]), 1e-6, "%s", key);
        snprintf(key, sizeof key, "itl_%s_ms", pn[q]);
        cr_assert_float_eq(harness_num(m, key), harness_nearest_rank(itl, ni, ps[q]), 1e-6, "%s", key);
    }
    cr_assert_eq(harness_num(m, "ttft_samples"), N);
    cr_assert_eq(harness_num(m, "itl_samples"), (double)ni);
    cr_assert_eq(harness_num(m, "itl_percentile_rel_error"), 0, "under 262,144 gaps: exact");
    for (int l = 0; l < k; l++)
        cJSON_Delete(lines[l]);
    cJSON_Delete(a);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(out);
    unlink(journal);
    rmdir(dir);
}

/* Past 262,144 gaps the run's ITL percentiles come from a log-linear
 * histogram: each within the bound the artifact states of the nearest-rank
 * percentile of every gap, recomputed here from the journal's chunk times. */
Test(flat, itl_past_the_exact_bound_is_within_the_stated_error, .timeout = 180)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "0.02", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-flat-XXXXXX", out[128], journal[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/a.json", dir);
    /* 280 requests × 1000 tokens: 279,720 gaps */
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "280",
                          "--concurrency", "16", "--input-len", "8", "--output-len", "1000", "--ignore-eos",
                          "--calibration", "none", "--telemetry", "off", "--out", out, NULL};
    static char err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(out);
    const cJSON *m = cJSON_GetObjectItem(a, "metrics");
    double bound = harness_num(m, "itl_percentile_rel_error");
    cr_assert_float_eq(bound, 0.001, 1e-12, "past the bound: the histogram's");
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0);
    static cJSON *lines[300];
    int k = harness_read_jsonl(journal, lines, 300);
    cr_assert_eq(k, 281);
    size_t cap = 300000, ni = 0;
    double *itl = malloc(cap * sizeof *itl);
    for (int l = 1; l < k; l++) {
        const cJSON *c = cJSON_GetObjectItem(lines[l], "chunks");
        double prev = NAN;
        for (const cJSON *ch = c->child; ch && ni < cap; ch = ch->next) {
            double t = ch->child->valuedouble;
            if (!isnan(prev))
                itl[ni++] = (t - prev) / 1e6;
            prev = t;
        }
    }
    cr_assert_gt(ni, 262144);
    cr_assert_eq(harness_num(m, "itl_samples"), (double)ni);
    const double ps[] = {25, 50, 75, 90, 95, 99};
    const char *pn[] = {"p25", "p50", "p75", "p90", "p95", "p99"};
    for (int q = 0; q < 6; q++) {
        char key[64];
        snprintf(key, sizeof key, "itl_%s_ms", pn[q]);
        double exact = harness_nearest_rank(itl, ni, ps[q]), got = harness_num(m, key);
        cr_assert_leq(fabs(got - exact), bound * exact, "%s: %.9g against %.9g", key, got, exact);
    }
    for (int l = 0; l < k; l++)
        cJSON_Delete(lines[l]);
    free(itl);
    cJSON_Delete(a);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(out);
    unlink(journal);
    rmdir(dir);
}

/* Duration mode with --warmup-s, streams without usage (the server's
 * tokenizer counts them after the load): the requests sent before the
 * window opened are read back from the journal with their counts too, so
 * the window's tokens are the tokens the simulator sent in it (its trace),
 * not their chunk counts. Chunks of 0.3 of the tokens held back make a chunk
 * count fall short by about that share. */
Test(flat, duration_warmups_without_usage_count_their_tokens_in_the_window, .timeout = 120)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc sim;
    const char *sa[] = {"--flavor", "vllm", "--ttft-ms", "2", "--itl-ms", "2", "--tokens-without-chunk", "0.3",
                        "--trace", trace, NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-flat-XXXXXX", out[128], journal[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/a.json", dir);
    /* replies of 1.2 s: each window's first requests were sent in the warm-up */
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--duration", "2s",
                          "--warmup-s", "1", "--concurrency", "4", "--input-len", "16", "--output-len", "600",
                          "--calibration", "none", "--telemetry", "off", "--extra-body",
                          "{\"stream_options\":{\"include_usage\":false}}", "--out", out, NULL};
    static char err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *a = harness_load_json(out);
    cr_assert(a);
    const cJSON *d = cJSON_GetObjectItem(a, "duration_mode");
    cr_assert_gt(harness_num(d, "warmup_requests"), 0);
    const cJSON *src = cJSON_GetObjectItem(d, "token_source");
    cr_assert(cJSON_IsString(src) && !strcmp(src->valuestring, "tokenize"), "%s",
              cJSON_IsString(src) ? src->valuestring : "null");
    double ws = harness_num(d, "window_start_ns"), we = harness_num(d, "window_end_ns"), truth = 0;
    static cJSON *lines[4096];
    int k = harness_read_jsonl(trace, lines, 4096);
    cr_assert_gt(k, 0);
    for (int l = 0; l < k; l++) {
        const cJSON *ch = cJSON_GetObjectItem(lines[l], "chunks");
        for (const cJSON *c = ch ? ch->child : NULL; c; c = c->next) {
            const cJSON *t = cJSON_GetObjectItem(c, "t_ns");
            if (cJSON_IsNumber(t) && t->valuedouble >= ws && t->valuedouble <= we)
                truth += harness_num(c, "tokens");
        }
        cJSON_Delete(lines[l]);
    }
    /* the client dates a chunk when it arrives, a little after the simulator sent it */
    double got = harness_num(d, "tokens_in_window");
    cr_assert_leq(fabs(got - truth), 0.01 * truth, "tokens_in_window %.1f, the trace's %.0f", got, truth);
    cJSON_Delete(a);
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0);
    unlink(journal);
    unlink(out);
    unlink(trace);
    rmdir(dir);
}
