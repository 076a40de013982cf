/* test_report_decode.c — `anvil report` of a decode matrix, opened in
 * headless Chromium: a real `anvil decode` against `anvil sim` (speculative
 * decoding, a KV cache too small for the largest cell) and seed 004 (a
 * real vLLM's). The answer comes first; each heat map's cells read the
 * artifact's figures (aggregate tok/s recomputed from the window's tokens
 * and length); the capacity-limited, underfilled and timed-out cells are
 * marked where the artifact says so; the prefill chart is drawn; the event
 * log has the artifact's events. `anvil show` of each cell's benchmark
 * artifact leads with its window's throughput and requests (it led with
 * "Successful requests: 0" and "Output token throughput: 0.00" where every
 * request outlasted the window). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "browser.h"
#include "harness.h"

#define OUT_DIR "build/report-test"

/* The text of the cell (ctx, conc) in the heat table of metric: a copy in
 * out. Fails the test when the table or the cell is missing. */
static void cell_text(const char *dom, const char *metric, long ctx, long conc, char *out, size_t cap)
{
    char key[96];
    snprintf(key, sizeof key, "data-metric=\"%s\"", metric);
    const char *t = strstr(dom, key);
    cr_assert(t, "no heat map of %s", metric);
    const char *end = strstr(t, "</table>");
    snprintf(key, sizeof key, "data-ctx=\"%ld\" data-conc=\"%ld\"", ctx, conc);
    const char *c = strstr(t, key);
    cr_assert(c && c < end, "%s: no cell ctx=%ld C=%ld", metric, ctx, conc);
    const char *close = strstr(c, "</td>"), *open = close;
    while (open > c && *open != '>')    /* the text holds no raw '>': the tag's end */
        open--;
    size_t n = (size_t)(close - open - 1);
    cr_assert_lt(n, cap);
    memcpy(out, open + 1, n);
    out[n] = 0;
}

/* Whether text (a number with d decimals, then marks) reads v rounded to d decimals. */
static void expect_reads(const char *text, double v, const char *what)
{
    char *rest;
    double got = strtod(text, &rest);
    cr_assert_neq(rest, text, "%s: not a number: '%s'", what, text);
    const char *dot = strchr(text, '.');
    int d = dot && dot < rest ? (int)(rest - dot - 1) : 0;
    cr_expect_leq(fabs(got - v), 0.5 * pow(10, -d) + 1e-9, "%s: the page reads %s, the artifact %.6g", what, text, v);
}

/* The window's aggregate tok/s recomputed from what the client counted:
 * tokens that arrived inside the window / window start → last token (the
 * seed's); the artifact's figure where another source made it. */
static double window_tps(const cJSON *r)
{
    const char *src = cJSON_GetStringValue(cJSON_GetObjectItem(r, "aggregate_source"));
    if (src && (!strcmp(src, "openai_continuous_usage") || !strcmp(src, "client_chunks")))
        return harness_num(r, "client_output_tokens") / harness_num(r, "measurement_seconds");
    return harness_num(r, "aggregate_tps");
}

static bool is_true(const cJSON *r, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(r, k));
}

static bool runs_in_full(const cJSON *r)
{
    return !is_true(r, "capacity_limited") && !is_true(r, "underfilled") && !is_true(r, "warmup_timed_out");
}

/* Every results[] cell of doc in every heat map, with its marks; returns
 * the best aggregate tok/s of a cell that ran in full (NAN: none). */
static double check_cells(const char *dom, const cJSON *doc)
{
    double best = NAN;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results")) {
        long ctx = (long)harness_num(r, "context_tokens"), conc = (long)harness_num(r, "concurrency");
        char text[256], what[96];
        struct { const char *metric; double v; } m[] = {
            {"tps", window_tps(r)},
            {"ttft_p50", harness_num(r, "ttft_p50") * (strstr(dom, "data-metric=\"ttft_p50\" data-unit=\"ms\"") ? 1000 : 1)},
            {"itl_p50", harness_num(r, "inter_token_latency_p50") * 1000},
            {"itl_p99", harness_num(r, "inter_token_latency_p99") * 1000},
            {"accept_len", harness_num(r, "server_spec_accept_length")},
        };
        for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
            cell_text(dom, m[i].metric, ctx, conc, text, sizeof text);
            snprintf(what, sizeof what, "%s ctx=%ld C=%ld", m[i].metric, ctx, conc);
            expect_reads(text, m[i].v, what);
            /* the marks: where the artifact says so, and only there */
            cr_expect_eq(strstr(text, "*") != NULL, is_true(r, "capacity_limited"), "%s: '%s'", what, text);
            cr_expect_eq(strstr(text, "†") != NULL, is_true(r, "underfilled"), "%s: '%s'", what, text);
            cr_expect_eq(strstr(text, "‡") != NULL, is_true(r, "warmup_timed_out"), "%s: '%s'", what, text);
        }
        if (runs_in_full(r) && !(window_tps(r) <= best))
            best = window_tps(r);
    }
    return best;
}

/* Per context, the answer's row: the largest concurrency that ran in full
 * and its aggregate tok/s (one decimal), or "none". */
static void check_fit(const char *dom, const cJSON *doc)
{
    const cJSON *r, *q;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results")) {
        long ctx = (long)harness_num(r, "context_tokens"), top = -1;
        double tps = NAN;
        cJSON_ArrayForEach(q, cJSON_GetObjectItem(doc, "results")) {
            if ((long)harness_num(q, "context_tokens") != ctx || !runs_in_full(q) || harness_num(q, "concurrency") < top)
                continue;
            top = (long)harness_num(q, "concurrency");
            tps = window_tps(q);
        }
        char key[64], want[96];
        snprintf(key, sizeof key, "<tr data-ctx=\"%ld\">", ctx);
        const char *row = strstr(dom, key);
        cr_assert(row, "no answer row for context %ld", ctx);
        const char *second = strstr(row, "</td><td>");
        cr_assert(second);
        if (top < 0)
            snprintf(want, sizeof want, "</td><td>none</td><td>n/a</td>");
        else
            snprintf(want, sizeof want, "</td><td>%ld</td><td>%.1f</td>", top, tps);
        cr_expect(!strncmp(second, want, strlen(want)), "context %ld: want %s, the page: %.80s", ctx, want, second);
    }
}

/* The rows of the event log's table (less its head). */
static int event_rows(const char *dom)
{
    const char *t = strstr(dom, "class=\"heat events\"");
    cr_assert(t, "no event log");
    const char *end = strstr(t, "</table>");
    int n = 0;
    for (const char *p = t; (p = strstr(p, "<tr")) && p < end; p++)
        n++;
    return n - 1;
}

/* The answer first: the decode section's answer before its heat maps,
 * its chart and its event log; it names best (tok/s, one decimal). */
static void check_answer(const char *dom, double best)
{
    const char *ans = strstr(dom, "class=\"decode-answer\""), *heat = strstr(dom, "data-metric=\"tps\""),
               *chart = strstr(dom, "data-chart=\"Prefill"), *log = strstr(dom, "class=\"heat events\"");
    cr_assert(ans && heat && log, "the answer, the heat maps and the event log are there");
    cr_expect_lt(ans, heat, "the answer comes before the heat maps");
    cr_expect(!chart || ans < chart, "the answer comes before the prefill chart");
    cr_expect_lt(heat, log);
    char want[64];
    snprintf(want, sizeof want, "class=\"answer-tps\">%.1f tok/s<", best);
    const char *hit = strstr(dom, want);
    cr_expect(hit && hit < heat, "the answer names the best full cell: %s", want);
}

static void report(const char *const *inputs, const char *html)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *argv[16] = {harness_anvil_bin(), "report"};
    int n = 2;
    for (; *inputs; inputs++)
        argv[n++] = *inputs;
    argv[n++] = "-o";
    argv[n++] = html;
    argv[n] = NULL;
    static char out[8192], err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
}

/* `anvil show` of a cell's benchmark artifact: its window's output tok/s
 * (tokens inside the window / the window), not 0, and its requests. */
static void check_show_cell(const char *bench)
{
    cJSON *b = harness_load_json(bench);
    cr_assert(b, "%s", bench);
    const cJSON *dm = cJSON_GetObjectItem(b, "duration_mode");
    double tps = harness_num(dm, "tokens_in_window") / harness_num(dm, "window_s");
    cr_assert_gt(tps, 0, "%s: the window counted tokens", bench);
    const char *argv[] = {harness_anvil_bin(), "show", bench, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    static const char label[] = "Output tok/s inside the window (aggregate):";
    const char *row = strstr(out, label);
    cr_assert(row, "%s", out);
    row += strlen(label);
    expect_reads(row + strspn(row, " "), tps, bench);
    /* the window first: a cell whose requests outlast its window completes none of them */
    const char *ok = strstr(out, "Successful requests:"), *started = strstr(out, "Requests started in the window:");
    cr_assert(ok && started, "%s", out);
    cr_expect_lt(row, ok, "the window's throughput comes before the request counts: %s", out);
    cr_expect_eq(strtol(ok + strlen("Successful requests:"), NULL, 10), (long)harness_num(b, "completed"));
    long n = strtol(started + strlen("Requests started in the window:"), NULL, 10);
    cr_expect_eq(n, (long)harness_num(dm, "requests_started_in_window"), "%s", out);
    cJSON_Delete(b);
}

Test(report_decode, a_real_matrix_reads_answer_first_and_its_cells_everywhere, .timeout = 180)
{
    char dir[64] = "/tmp/anvil-report-decode-XXXXXX";
    cr_assert(mkdtemp(dir));
    /* test_decode.c's simulator: 3 draft tokens, a KV cache of 5120 tokens (4 × 2k does not fit) */
    const char *sim_args[] = {"--flavor", "vllm", "--num-speculative-tokens", "3", "--kv-cache-tokens", "5120",
                              "--max-model-len", "4096", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,4",
                          "--contexts", "0,2k", "--duration", "1", "--max-tokens", "256", "--ready-stable-s", "0.3",
                          "--cell-warmup-timeout-s", "2", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--run-burst", "--burst-requests-per-concurrency", "1", "--out-dir", dir, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    char art[128];
    snprintf(art, sizeof art, "%s/decode.json", dir);
    const char *html = OUT_DIR "/decode.html";
    report((const char *[]){art, NULL}, html);
    cJSON *doc = harness_load_json(art);
    cr_assert(doc);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "results")), 4, "four cells");

    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_expect_eq(page.charts, 1, "the prefill chart: %ld charts", page.charts);
    cr_expect(strstr(page.dom, "data-chart=\"Prefill: prompt tokens/s against context (tokens)" BROWSER_DRAWN),
              "the prefill chart is drawn");
    double best = check_cells(page.dom, doc);
    cr_assert(isfinite(best), "a cell ran in full");
    const cJSON *r;
    check_answer(page.dom, best);
    check_fit(page.dom, doc);
    /* the bursts' map: each burst's aggregate tok/s, as the artifact has it */
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "burst_results")), 4);
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "burst_results")) {
        char text[256];
        cell_text(page.dom, "burst_tps", (long)harness_num(r, "context_tokens"), (long)harness_num(r, "concurrency"),
                  text, sizeof text);
        expect_reads(text, harness_num(r, "aggregate_tps"), "burst");
    }
    int limited = 0;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results")) limited += is_true(r, "capacity_limited");
    cr_expect_geq(limited, 1, "the 4 × 2k cell does not fit 5120 tokens");
    cr_expect(strstr(page.dom, "capacity-limited: the server's KV pool"), "the legend says what * means");
    cr_expect_eq(event_rows(page.dom), cJSON_GetArraySize(cJSON_GetObjectItem(doc, "event_log")));
    browser_close(&page);
    browser_screenshot(html, OUT_DIR "/decode.png", 1280, 1600);

    const char *cells[] = {"c1-ctx0", "c4-ctx0", "c1-ctx2048", "c4-ctx2048"};
    for (int i = 0; i < 4; i++) {
        char bench[160];
        snprintf(bench, sizeof bench, "%s/cells/%s.bench.json", dir, cells[i]);
        check_show_cell(bench);
    }
    /* the directory: the matrix stands for its cells, bursts and prefill runs (they opened the page
       with an empty comparison and 11 runs, 4 charts undrawn) */
    const char *dir_html = OUT_DIR "/decode-dir.html";
    report((const char *[]){dir, NULL}, dir_html);
    browser_open(dir_html, &page);
    browser_assert_clean(&page);
    cr_expect_null(strstr(page.dom, "id=\"anvil-compare\""), "no comparison of a matrix's own cells");
    cr_expect_null(strstr(page.dom, "id=\"anvil-runs\""), "no runs section for the matrix's own cells");
    cr_expect_eq(page.charts, 1, "the prefill chart alone: %ld charts", page.charts);
    browser_close(&page);
    cJSON_Delete(doc);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(report_decode, seed_004_a_real_vllm_matrix, .timeout = 60)
{
    const char *html = OUT_DIR "/decode-seed004.html";
    report((const char *[]){"tests/data/seed-004.json", "--gpu-hour-cost", "2.5", NULL}, html);
    cJSON *doc = harness_load_json("tests/data/seed-004.json");
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    double best = check_cells(page.dom, doc);
    /* the cost map: USD per million output tokens = 2.5 USD/h / (tok/s × 3600 s/h) × 1e6, one GPU */
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results")) {
        char text[256];
        cell_text(page.dom, "cost", (long)harness_num(r, "context_tokens"), (long)harness_num(r, "concurrency"), text,
                  sizeof text);
        expect_reads(text, 2.5 / (harness_num(r, "aggregate_tps") * 3600) * 1e6, "cost");
    }
    /* seed 004: only concurrency 1 ran in full, at both contexts; 129.5 tok/s at context 0 */
    cr_expect(fabs(best - 129.45) < 0.01, "%g", best);
    check_answer(page.dom, best);
    check_fit(page.dom, doc);
    cr_expect_eq(event_rows(page.dom), cJSON_GetArraySize(cJSON_GetObjectItem(doc, "event_log")));
    cr_expect(strstr(page.dom, "data-chart=\"Prefill: prompt tokens/s against context (tokens)" BROWSER_DRAWN));
    /* per context, the largest concurrency that ran in full: 1, then 2 is the first limited */
    static const char fit[] = "<tr data-ctx=\"65536\"><td>64k (65536)</td><td>1</td><td>122.2</td>";
    cr_expect(strstr(page.dom, fit), "64k: concurrency 1 at 122.2 tok/s");
    browser_close(&page);
    browser_screenshot(html, OUT_DIR "/decode-seed004.png", 1280, 1600);
    cJSON_Delete(doc);
}

/* Without speculative decoding the acceptance map says so instead of a
 * table of n/a. */
Test(report_decode, no_speculative_decoding_says_so, .timeout = 60)
{
    cJSON *doc = harness_load_json("tests/data/seed-004.json");
    cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results"))
        cJSON_ReplaceItemInObject(r, "server_spec_accept_length", cJSON_CreateNull());
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *json = OUT_DIR "/decode-no-spec.json", *html = OUT_DIR "/decode-no-spec.html";
    char *text = cJSON_Print(doc);
    FILE *f = fopen(json, "w");
    cr_assert(f && text);
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(doc);
    report((const char *[]){json, NULL}, html);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_expect(strstr(page.dom, "Acceptance length: n/a: no speculative decoding reported"));
    cr_expect(!strstr(page.dom, "data-metric=\"accept_len\""));
    browser_close(&page);
}
