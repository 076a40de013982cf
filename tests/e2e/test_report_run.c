/* test_report_run.c — `anvil report`'s runs and comparisons in headless
 * Chromium: a run opens with its workload line, its headline cards and its
 * failures by status (each checked against a recomputation from the
 * artifact's raw records), then its distributions, the timeline of its
 * requests (one bar per request) and its server and GPU series; a duration
 * run's and a decode cell's throughput card is the window's; two runs open
 * with the comparison's verdicts. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "browser.h"
#include "harness.h"
#include "report/show.h"

#define OUT_DIR "build/report-run"
#define DRAWN BROWSER_DRAWN

static void out_dir(void)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
}

/* Runs argv (anvil ...) and asserts it exits 0. */
static void run_ok(const char *const argv[])
{
    static char out[65536], err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s: %s%s", argv[1], out, err);
}

/* The p-th percentile of v[0..n) by nearest rank (docs/METHODOLOGY.md):
 * element ⌈p·n/100⌉ (1-based) of the sorted values. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double nearest_rank(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)ceil(p * (double)n / 100.0);
    return v[k ? k - 1 : 0];
}

/* A request_timings field of every entry into v (cap values); returns how many. */
static size_t timings(const cJSON *art, const char *key, double *v, size_t cap)
{
    size_t n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(art, "request_timings"))
        if (n < cap)
            v[n++] = harness_num(t, key);
    return n;
}

/* The text between open and the next close after it in s (owned), or NULL. */
static char *between(const char *s, const char *open, const char *close)
{
    const char *a = strstr(s, open);
    if (!a)
        return NULL;
    a += strlen(open);
    const char *b = strstr(a, close);
    return b ? strndup(a, (size_t)(b - a)) : NULL;
}

/* The value of the card whose key is k (the first one). */
static char *card(const char *dom, const char *k)
{
    char open[256];
    snprintf(open, sizeof open, "<div class=\"k\">%s</div><div class=\"v\">", k);
    return between(dom, open, "</div>");
}

/* A run with 2 GPUs read through a fake nvidia-smi (values that move with
 * the clock) and the simulator's /metrics scraped, into art; checks that its
 * series share the requests' clock: the readings before the load and after
 * it bracket every request. Failures are allowed (--max-failure-rate 1). */
static void telemetry_run(const char *base_url, const char *dir, const char *art)
{
    char smi[128], path[4096];
    snprintf(smi, sizeof smi, "%s/nvidia-smi", dir);
    FILE *f = fopen(smi, "w");
    cr_assert(f);
    fputs("#!/bin/sh\nms=$(( $(date +%s%N) / 1000000 ))\nu=$(( ms % 97 ))\n"
          "echo \"0, NVIDIA Fake L4, GPU-smi0, $u, 33, 2048, 23034, $(( 60 + ms % 41 )).50, 72.00, "
          "$(( 60 + u / 10 )), $(( 1500 + u )), 6251, 0x0000000000000000\"\n"
          "echo \"1, NVIDIA Fake L4, GPU-smi1, $(( 96 - u )), 30, 4096, 23034, 80.00, 72.00, 65, 1600, 6251, "
          "0x0000000000000000\"\n", f);
    fclose(f);
    cr_assert_eq(chmod(smi, 0755), 0);
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "/usr/bin:/bin");
    snprintf(path, sizeof path, "%s:%s", dir, saved);
    setenv("PATH", path, 1);
    setenv("ANVIL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    const char *run[] = {harness_anvil_bin(), "run", "--base-url", base_url, "--concurrency", "4",
                         "--num-prompts", "40", "--input-len", "16", "--output-len", "32",
                         "--max-failure-rate", "1", "--telemetry-interval-ms", "50", "--scrape-interval-ms", "50",
                         "--out", art, NULL};
    run_ok(run);
    setenv("PATH", saved, 1);
    unsetenv("ANVIL_NVML_LIBRARY");
    free(saved);
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    double first = INFINITY, last = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        double s = harness_num(t, "start_monotonic_ns");
        first = fmin(first, s);
        last = fmax(last, s + harness_num(t, "e2e_ms") * 1e6);
    }
    const char *blocks[] = {"server_metrics.series", "hardware.series"};
    for (int i = 0; i < 2; i++) {
        const cJSON *series = harness_json_path(a, blocks[i]);
        cr_assert(cJSON_IsObject(series), "no %s", blocks[i]);
        const cJSON *ms = cJSON_GetObjectItem(series, "t_ms");
        double t0 = harness_num(series, "t0_monotonic_ns");
        double tn = t0 + cJSON_GetArrayItem(ms, cJSON_GetArraySize(ms) - 1)->valuedouble * 1e6;
        cr_assert_leq(t0, first, "%s: the reading before the load precedes the first send", blocks[i]);
        cr_assert_geq(tn, last, "%s: the reading after it follows the last end", blocks[i]);
        cr_assert_gt(cJSON_GetArraySize(ms), 4, "%s: periodic readings", blocks[i]);
    }
    cr_assert_eq(cJSON_GetArraySize(harness_json_path(a, "hardware.series.devices")), 2);
    cJSON_Delete(a);
    unlink(smi);
}

/* anvil report INPUTS... -o html (inputs NULL-terminated). */
static void report(const char *html, const char *const inputs[])
{
    const char *argv[16] = {harness_anvil_bin(), "report"};
    int n = 2;
    for (int i = 0; inputs[i] && n < 12; i++)
        argv[n++] = inputs[i];
    argv[n++] = "-o";
    argv[n++] = html;
    argv[n] = NULL;
    run_ok(argv);
}

/* Where what first occurs in dom (an offset), asserting that it does. */
static long at(const char *dom, const char *what)
{
    const char *p = strstr(dom, what);
    cr_assert(p, "no %s in the page", what);
    return (long)(p - dom);
}

Test(report_run, a_run_opens_with_its_workload_cards_failures_then_its_timeline, .timeout = 240)
{
    out_dir();
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", "--fail-rate", "0.2", "--fail-status", "500", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64] = "/tmp/anvil-report-run-XXXXXX", art[128];
    cr_assert(mkdtemp(dir));
    snprintf(art, sizeof art, "%s/run.json", dir);
    telemetry_run(sim.base_url, dir, art);
    sim_stop(&sim);
    const char *html = OUT_DIR "/run.html";
    report(html, (const char *[]){art, NULL});
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    const char *dom = page.dom;
    /* the answer first: no comparison for one run; workload, cards, failures before any chart */
    cr_assert_null(strstr(dom, "id=\"anvil-compare\""));
    long chart0 = at(dom, "data-chart=");
    cr_assert_lt(at(dom, "<div class=\"workload\">"), chart0);
    cr_assert_lt(at(dom, "<table class=\"failures\">"), chart0);
    char *w = between(dom, "<div class=\"workload\">", "</div>");
    cr_assert(w);
    const char *base_url = cJSON_GetStringValue(cJSON_GetObjectItem(a, "base_url"));
    cr_assert(base_url && strstr(w, base_url), "the base URL %s in: %s", base_url, w);
    cr_assert(strstr(w, "closed loop at concurrency 4"), "%s", w);
    char lens[64];
    snprintf(lens, sizeof lens, "%.0f → %.0f tokens", harness_num(a, "context_tokens"), harness_num(a, "max_tokens"));
    cr_assert(strstr(w, lens) && !strcmp(lens, "16 → 32 tokens"), "%s in: %s", lens, w);
    free(w);
    /* cards against the raw records: counts, and nearest-rank TTFT and TPOT */
    static double v[4096];
    size_t n = timings(a, "ttft_ms", v, 4096);
    int n_fail = cJSON_GetArraySize(cJSON_GetObjectItem(a, "failures"));
    cr_assert_gt(n, 10);
    cr_assert_gt(n_fail, 0, "the simulator's faults failed some requests");
    char want[128], *got;
    snprintf(want, sizeof want, "%zu / %d", n, n_fail);
    got = card(dom, "requests completed / failed");
    cr_assert(got && !strcmp(got, want), "completed / failed: %s, recomputed %s", got, want);
    free(got);
    double t50 = nearest_rank(v, n, 50), t99 = nearest_rank(v, n, 99);
    snprintf(want, sizeof want, "%.1f / %.1f", t50, t99);
    got = card(dom, "TTFT p50 / p99, ms");
    cr_assert(got && !strcmp(got, want), "TTFT card %s, recomputed %s", got, want);
    free(got);
    n = timings(a, "tpot_ms", v, 4096);
    snprintf(want, sizeof want, "%.2f / %.2f", nearest_rank(v, n, 50), nearest_rank(v, n, 99));
    got = card(dom, "TPOT p50 / p99, ms");
    cr_assert(got && !strcmp(got, want), "TPOT card %s, recomputed %s", got, want);
    free(got);
    /* failures by status, counted from the artifact's failures */
    int by500 = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(a, "failures"))
        by500 += harness_num(f, "http_status") == 500;
    cr_assert_gt(by500, 0);
    snprintf(want, sizeof want, "<td class=\"n\">%d</td><td class=\"l\">HTTP 500</td>", by500);
    cr_assert(strstr(dom, want), "failures row %s", want);
    /* the timeline: one bar per completed request, drawn */
    n = timings(a, "ttft_ms", v, 4096);
    char bars[160];
    snprintf(bars, sizeof bars, "data-bars=\"%zu\"", n);
    cr_assert_eq(browser_count(dom, bars), 1, "%s", bars);
    /* marked as the caption says: no SLO, so TTFT (TPOT) over the run's p90, recomputed */
    const char *keys[] = {"ttft_ms", "tpot_ms"}, *attrs[] = {"data-ttft-over", "data-tpot-over"};
    for (int k = 0; k < 2; k++) {
        size_t m = timings(a, keys[k], v, 4096), over = 0;
        double p90 = nearest_rank(v, m, 90);
        for (size_t i = 0; i < m; i++)
            over += v[i] > p90;
        snprintf(bars, sizeof bars, "%s=\"%zu\"", attrs[k], over);
        cr_assert(strstr(dom, bars), "%s (p90 %.3f ms)", bars, p90);
        if (k == 0)
            snprintf(bars, sizeof bars, "red when TTFT is over %.1f ms (the run's TTFT p90)", p90);
        else
            snprintf(bars, sizeof bars, "orange when TPOT is over %.2f ms (the run's TPOT p90)", p90);
        cr_assert(strstr(dom, bars), "the caption says the rule: %s", bars);
    }
    cr_assert_eq(browser_count(dom, " (s since the first send)" DRAWN), 1, "the timeline, drawn");
    snprintf(bars, sizeof bars, "(%zu requests drawn;", n);
    cr_assert(strstr(dom, bars), "the caption says %s", bars);
    cr_assert_lt(at(dom, "TTFT — CDF (ms, log scale)\""), at(dom, "data-chart=\"Timeline of requests: "),
                 "distributions, then the timeline");
    /* the server's and the GPUs' series over time, after the timeline */
    cr_assert_eq(browser_count(dom, "vs client" DRAWN), 1, "server vs client output tokens/s");
    cr_assert_eq(browser_count(dom, "KV cache usage (%)" DRAWN), 1);
    const char *gpu[] = {"GPU utilization and host CPU (%)" DRAWN, "GPU power (W)" DRAWN,
                         "GPU SM clock (MHz)" DRAWN, "GPU temperature (°C)" DRAWN};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(browser_count(dom, gpu[i]), 1, "%s", gpu[i]);
    cr_assert_lt(at(dom, "data-chart=\"Timeline of requests: "), at(dom, "GPU power (W)\""));
    browser_close(&page);
    browser_screenshot(html, OUT_DIR "/run.png", 1280, 2400);
    cJSON_Delete(a);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The card "Window output throughput, tokens/s" of the page of art equals
 * the window's tokens / its length (duration_mode), never 0 or n/a. */
static void window_card(const char *art, const char *html)
{
    report(html, (const char *[]){art, NULL});
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    const cJSON *dm = cJSON_GetObjectItem(a, "duration_mode");
    cr_assert(cJSON_IsObject(dm), "%s: a duration window", art);
    double tokens = harness_num(dm, "tokens_in_window"), window = harness_num(dm, "window_s");
    cr_assert_gt(tokens, 0, "tokens were measured in the window");
    char want[64];
    snprintf(want, sizeof want, "%.1f", tokens / window);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    char *got = card(page.dom, "Window output throughput, tokens/s");
    cr_assert(got && !strcmp(got, want), "window card %s, recomputed %.0f tokens / %.3f s = %s", got, tokens,
              window, want);
    free(got);
    browser_close(&page);
    cJSON_Delete(a);
}

Test(report_run, a_duration_runs_throughput_card_is_its_windows, .timeout = 120)
{
    out_dir();
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "20", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64] = "/tmp/anvil-report-dur-XXXXXX", art[128];
    cr_assert(mkdtemp(dir));
    snprintf(art, sizeof art, "%s/dur.json", dir);
    /* 200 tokens at 20 ms each outlast the 1 s window: no request completes inside it */
    const char *run[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--duration", "1",
                         "--concurrency", "2", "--input-len", "16", "--output-len", "200", "--ignore-eos",
                         "--max-failure-rate", "1", "--out", art, NULL};
    run_ok(run);
    sim_stop(&sim);
    window_card(art, OUT_DIR "/duration.html");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A cell of `anvil decode` (its benchmark artifact, cells/c2-ctx0.bench.json:
 * a duration window) shows the window's throughput on its card. */
Test(report_run, a_decode_cells_card_is_its_windows_throughput, .timeout = 120)
{
    out_dir();
    const char *sim_args[] = {"--flavor", "vllm", "--num-speculative-tokens", "3", "--kv-cache-tokens", "5120",
                              "--max-model-len", "4096", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[64] = "/tmp/anvil-report-dec-XXXXXX", art[160];
    cr_assert(mkdtemp(dir));
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "2",
                          "--contexts", "0", "--duration", "1", "--max-tokens", "256", "--ready-stable-s", "0.2",
                          "--cell-warmup-timeout-s", "3", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--out-dir", dir, NULL};
    run_ok(argv);
    sim_stop(&sim);
    snprintf(art, sizeof art, "%s/cells/c2-ctx0.bench.json", dir);
    window_card(art, OUT_DIR "/decode-cell.html");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A run of 16 requests (16 → 16 tokens) at concurrency conc against a
 * simulator of itl_ms per token, into art. */
static void small_run(const char *itl_ms, const char *conc, const char *art)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", itl_ms, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *run[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", conc,
                         "--num-prompts", "16", "--input-len", "16", "--output-len", "16", "--ignore-eos",
                         "--out", art, NULL};
    run_ok(run);
    sim_stop(&sim);
}

Test(report_run, two_runs_open_with_the_comparisons_verdicts, .timeout = 180)
{
    out_dir();
    char dir[64] = "/tmp/anvil-report-cmp-XXXXXX", fast[128], slow[128];
    cr_assert(mkdtemp(dir));
    snprintf(fast, sizeof fast, "%s/fast.json", dir);
    snprintf(slow, sizeof slow, "%s/slow.json", dir);
    small_run("2", "2", fast);
    small_run("12", "2", slow);
    const char *html = OUT_DIR "/compare.html";
    report(html, (const char *[]){fast, slow, NULL});
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    const char *dom = page.dom;
    /* the verdicts first, then the runs they summarize */
    long cmp = at(dom, "<h2 id=\"anvil-compare\">");
    cr_assert_lt(cmp, at(dom, "<h2 id=\"anvil-runs\">"));
    cr_assert_lt(cmp, at(dom, "data-chart="));
    char *base = between(dom, "A (the baseline) = ", ".");
    cr_assert(base && strstr(fast, base), "the first input is the baseline: %s", base);
    free(base);
    /* B (slow: 12 ms per token against 2) is slower in TPOT, by its summary line and its verdict row */
    char *sum = between(dom, "<ul class=\"summary\"><li>", "</li>");
    cr_assert(sum && strstr(sum, "slower in TPOT p50"), "summary: %s", sum);
    free(sum);
    char *row = between(dom, "<td class=\"l\">TPOT p50 (ms)</td>", "</tr>");
    cr_assert(row && strstr(row, "<td class=\"verdict worse\">worse"), "TPOT p50 row: %s", row);
    free(row);
    browser_close(&page);
    browser_screenshot(html, OUT_DIR "/compare.png", 1280, 1600);
    /* the same file twice: the same in every metric */
    report(html, (const char *[]){fast, fast, NULL});
    browser_open(html, &page);
    browser_assert_clean(&page);
    dom = page.dom;
    cr_assert(strstr(dom, "<ul class=\"summary\"><li>run-16-16-c2: B is the same as A in all"), "the same file twice");
    cr_assert_null(strstr(dom, "class=\"verdict worse\""));
    cr_assert_null(strstr(dom, "class=\"verdict better\""));
    browser_close(&page);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Each seed alone opens clean; seed 001 (a run) opens with its workload
 * line and cards before its charts. */
Test(report_run, every_seed_opens_clean, .timeout = 180)
{
    out_dir();
    for (int s = 0; s <= 4; s++) {
        char seed[64], html[128];
        snprintf(seed, sizeof seed, "tests/data/seed-%03d.json", s);
        snprintf(html, sizeof html, OUT_DIR "/seed-%03d.html", s);
        report(html, (const char *[]){seed, NULL});
        struct browser_page page;
        browser_open(html, &page);
        browser_assert_clean(&page);
        if (s == 1) {
            const char *dom = page.dom;
            cr_assert_lt(at(dom, "<div class=\"workload\">"), at(dom, "data-chart="));
            cr_assert_lt(at(dom, "<div class=\"cards\">"), at(dom, "data-chart="));
        }
        browser_close(&page);
    }
}

/* Copies the file at from to to. */
static void copy_file(const char *from, const char *to)
{
    size_t len;
    char *text = harness_read_file(from, &len);
    cr_assert(text, "%s", from);
    FILE *f = fopen(to, "w");
    cr_assert(f, "%s", to);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    free(text);
}

/* Nine runs: every chart holds at most 8 (the page's check errs beyond),
 * the ninth in a chart of its own; a run of another concurrency is not
 * compared, and the page says why. */
Test(report_run, nine_runs_are_small_multiples_and_another_workload_is_not_compared, .timeout = 180)
{
    out_dir();
    char dir[64] = "/tmp/anvil-report-many-XXXXXX", one[128], other[128], many[128], path[192];
    cr_assert(mkdtemp(dir));
    snprintf(one, sizeof one, "%s/one.json", dir);
    snprintf(other, sizeof other, "%s/c4.json", dir);
    snprintf(many, sizeof many, "%s/many", dir);
    small_run("2", "2", one);
    small_run("2", "4", other);
    cr_assert_eq(mkdir(many, 0755), 0);
    for (int i = 1; i <= 9; i++) {
        snprintf(path, sizeof path, "%s/r%d.json", many, i);
        copy_file(one, path);
    }
    const char *html = OUT_DIR "/many.html";
    report(html, (const char *[]){many, NULL});
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert_eq(browser_count(page.dom, "TTFT — CDF (ms, log scale) (runs 1–8 of 9)" DRAWN), 1);
    cr_assert_eq(browser_count(page.dom, "TTFT — CDF (ms, log scale) (runs 9–9 of 9)" DRAWN), 1);
    cr_assert_eq(browser_count(page.dom, "<h3>B"), 8, "each of the 8 others against the first");
    cr_assert_eq(browser_count(page.dom, "<li>run-16-16-c2: B is the same as A in all"), 8,
                 "copies of one run are the same");
    browser_close(&page);
    report(html, (const char *[]){one, other, NULL});
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert(strstr(page.dom, "<div class=\"refused\">None of the 1 other input compares with the baseline"));
    /* no answer, so not first: said after the runs (it opened the page) */
    cr_assert_gt(at(page.dom, "<h2 id=\"anvil-compare\">Not compared"), at(page.dom, "<h2 id=\"anvil-runs\">Runs ("));
    char *why = between(page.dom, "<div class=\"refused\">Not compared: refusing to compare", "</div>");
    cr_assert(why && strstr(why, "concurrency differs (2 vs 4)"), "the reason: %s", why);
    free(why);
    cr_assert_null(strstr(page.dom, "<td class=\"verdict"), "no verdict for a pair not compared");
    browser_close(&page);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Whether s starts with prefix. */
static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* The workload line of each load shape, from the artifact's fields. */
Test(report_run, the_workload_line_names_each_load_shape)
{
    char line[512];
    struct benchmark b = {.concurrency = 4, .request_rate = NAN, .burstiness = NAN, .context_tokens = 16,
                          .max_tokens = 32, .requests = 40, .endpoint = "chat", .base_url = "http://h:1/v1",
                          .model = "m"};
    cr_assert_str_eq(bench_workload_line(&b, line, sizeof line), "closed loop at concurrency 4; 40 requests; "
                     "16 → 32 tokens (input → output max_tokens); chat endpoint at http://h:1/v1, model m");
    b.request_rate = 8;
    b.burstiness = 0.5;
    cr_assert(strstr(bench_workload_line(&b, line, sizeof line), "open loop at 8 req/s (burstiness 0.5), "
                     "concurrency cap 4; 40 requests;"), "%s", line);
    b.request_rate = NAN;
    b.concurrency = 0;
    cr_assert(starts(bench_workload_line(&b, line, sizeof line), "every request at once (no concurrency cap);"),
              "%s", line);
    b.concurrency = 4;
    b.duration_mode = (struct bench_duration_mode){.present = true, .duration_s = 30, .warmup_s = 5};
    cr_assert(starts(bench_workload_line(&b, line, sizeof line),
                     "duration 30 s (warm-up 5 s), closed loop at concurrency 4; 16 → 32"), "%s", line);
    b.duration_mode.present = false;
    b.context_tokens = NAN;
    b.workload = (struct bench_workload){.present = true, .dataset = "sharegpt:conv.json"};
    cr_assert(strstr(bench_workload_line(&b, line, sizeof line), "; recorded lengths of sharegpt:conv.json; "),
              "%s", line);
    b.workload = (struct bench_workload){.present = true,
                                         .trace = {.present = true, .format = "mooncake", .requests = 100, .speed = 2}};
    b.load_mode = "trace-replay";
    cr_assert(starts(bench_workload_line(&b, line, sizeof line), "trace replay (mooncake, 100 requests, "
                       "speed 2×); 40 requests; recorded lengths;"), "%s", line);
    b.workload = (struct bench_workload){.present = true, .agentic = {.present = true, .sessions = 3, .turns = 12}};
    b.load_mode = "closed-loop";
    cr_assert(starts(bench_workload_line(&b, line, sizeof line), "agentic: 3 sessions, 12 turns;"), "%s", line);
    b.endpoint = NULL;
    b.base_url = NULL;
    cr_assert(strstr(bench_workload_line(&b, line, sizeof line), "; server at an unrecorded URL, model m"), "%s", line);
    char small[24];
    bench_workload_line(&b, small, sizeof small);
    cr_assert_eq(strlen(small), sizeof small - 1, "cut to fit: %s", small);
}

/* A run of 2,100 requests (one run's 16 repeated, each copy later by its
 * index): the timeline draws the first 2,000 by sending and says so. */
Test(report_run, a_huge_runs_timeline_draws_the_first_2000_bars, .timeout = 120)
{
    out_dir();
    char dir[64] = "/tmp/anvil-report-huge-XXXXXX", one[128], huge[128];
    cr_assert(mkdtemp(dir));
    snprintf(one, sizeof one, "%s/one.json", dir);
    snprintf(huge, sizeof huge, "%s/huge.json", dir);
    small_run("2", "2", one);
    cJSON *a = harness_load_json(one);
    cr_assert(a);
    cJSON *t = cJSON_GetObjectItem(a, "request_timings");
    int n = cJSON_GetArraySize(t);
    for (int i = n; i < 2100; i++) {
        cJSON *c = cJSON_Duplicate(cJSON_GetArrayItem(t, i % n), 1);
        cJSON *s = cJSON_GetObjectItem(c, "start_monotonic_ns");
        cJSON_SetNumberValue(s, s->valuedouble + 1e6 * i);
        cJSON_ReplaceItemInObject(c, "request_index", cJSON_CreateNumber(i));
        cJSON_AddItemToArray(t, c);
    }
    cJSON_ReplaceItemInObject(a, "completed", cJSON_CreateNumber(2100));
    char *text = cJSON_PrintUnformatted(a);
    FILE *f = fopen(huge, "w");
    cr_assert(f && text);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
    free(text);
    cJSON_Delete(a);
    const char *html = OUT_DIR "/huge.html";
    report(html, (const char *[]){huge, NULL});
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert(strstr(page.dom, "data-bars=\"2000\""), "2000 bars drawn");
    cr_assert(strstr(page.dom, "(first 2000 of 2100 requests drawn;"), "the caption says so");
    browser_close(&page);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
