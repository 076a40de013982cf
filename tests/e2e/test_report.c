/* test_report.c — `anvil report` opened in headless Chromium (Debian's
 * chromium, scripts/install-browser-deps) with the network cut: the page
 * logs nothing to the console (no script error, nothing refused), every
 * chart element is there and drawn (its canvas holds its series' colours,
 * checked by the page and reported in #anvil-status), and a screenshot
 * under build/ is not one uniform colour. */
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


/* A run with 2 GPUs read through a fake nvidia-smi (values that move with
 * the clock) and the simulator's /metrics scraped, into art; checks that its
 * series share the requests' clock: the readings before the load and after
 * it bracket every request. */
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
                         "--num-prompts", "24", "--input-len", "16", "--output-len", "32",
                         "--telemetry-interval-ms", "50", "--scrape-interval-ms", "50", "--out", art, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(run, out, sizeof out, &status), 0);
    setenv("PATH", saved, 1);
    unsetenv("ANVIL_NVML_LIBRARY");
    free(saved);
    cr_assert_eq(status, 0, "%s", out);
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

/* A sweep's rounds (2 concurrencies × 2 rounds, run here), a run with
 * telemetry, plus every seed: every kind of chart the report draws. */
static void make_report(const char *html)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64] = "/tmp/anvil-report-XXXXXX", targets[200];
    cr_assert(mkdtemp(dir));
    snprintf(targets, sizeof targets, "sim=%s", sim.base_url);
    const char *sweep[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,4",
                           "--input-len", "16", "--output-len", "8", "--rounds", "2", "--num-prompts", "12",
                           "--slo", "ttft:100,tpot:20", "--out-dir", dir, NULL};
    static char out[65536];
    char err[4096];
    int status;
    cr_assert_eq(run_cmd(sweep, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    char gpu_dir[64] = "/tmp/anvil-report-gpu-XXXXXX", art[128];
    cr_assert(mkdtemp(gpu_dir));
    snprintf(art, sizeof art, "%s/telemetry.json", gpu_dir);
    telemetry_run(sim.base_url, gpu_dir, art);
    const char *report[] = {harness_anvil_bin(), "report", dir, art, "tests/data/seed-000.json",
                            "tests/data/seed-001.json", "tests/data/seed-002.json", "tests/data/seed-003.json",
                            "tests/data/seed-004.json", "--gpu-hour-cost", "2.5", "-o", html, NULL};
    sim_stop(&sim);
    cr_assert_eq(run_cmd_err(report, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, gpu_dir);
    cr_assert_eq(system(cmd), 0);
}

Test(report_e2e, opens_offline_in_chromium_with_every_chart_drawn, .timeout = 180)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *html = OUT_DIR "/report.html", *png = OUT_DIR "/report.png";
    make_report(html);
    char *text = harness_read_file(html, NULL);
    cr_assert(text);
    /* self-contained: nothing to fetch, and a policy that forbids fetching */
    cr_assert(strstr(text, "Content-Security-Policy\" content=\"default-src 'none'"));
    cr_assert_eq(browser_count(text, "<link"), 0);
    cr_assert_eq(browser_count(text, " src=\""), 0);
    free(text);
    struct browser_page page;
    browser_open(html, &page);
    const char *dom = page.dom;
    long charts = page.charts;
    /* every kind at once: each section's own charts are counted by its own
       test (test_report_*.c); here, that they live together on one page */
    cr_assert_gt(charts, 20, "%ld charts", charts);
    cr_assert_eq(browser_count(dom, "<div class=\"def\">"), charts, "every chart has its one-line definition");
    browser_assert_clean(&page);
    browser_close(&page);
    browser_screenshot(html, png, 1280, 2400);
}

Test(report_e2e, refuses_bad_inputs_and_names_them, .timeout = 30)
{
    char out[1024], err[2048];
    int status;
    const char *missing[] = {harness_anvil_bin(), "report", "no/such.json", "-o", "/dev/null", NULL};
    cr_assert_eq(run_cmd_err(missing, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2);
    cr_assert(strstr(err, "no/such.json: cannot read"), "%s", err);
    const char *no_out[] = {harness_anvil_bin(), "report", "tests/data/seed-001.json", NULL};
    cr_assert_eq(run_cmd_err(no_out, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2);
    cr_assert(strstr(err, "-o FILE is required"), "%s", err);
}

/* make test has run scripts/install-report-deps: a second run finds the
 * locked uPlot in node_modules/ and does nothing (it ran npm ci on every
 * call before, reading the lock's version from the wrong line). */
Test(report_e2e, install_report_deps_is_a_no_op_once_installed, .timeout = 60)
{
    const char *argv[] = {"scripts/install-report-deps", NULL};
    static char out[4096], err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0);
    cr_assert_str_eq(err, "", "a second run said: %s", err);
}

/* -o into a folder that does not exist yet makes it, as anvil run's --out
 * does (it refused before: "cannot write: No such file or directory"). */
Test(report_e2e, writes_into_a_folder_it_makes, .timeout = 60)
{
    char base[64], path[160], out[1024], err[2048];
    cr_assert_eq(harness_tmpfile(base, sizeof base), 0);
    snprintf(path, sizeof path, "%s.d/new/report.html", base);
    const char *argv[] = {harness_anvil_bin(), "report", "tests/data/seed-001.json", "-o", path, NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    size_t len = 0;
    char *html = harness_read_file(path, &len);
    cr_assert(html && len > 1000 && strstr(html, "<html"), "%s", path);
    free(html);
    unlink(path);
    snprintf(path, sizeof path, "%s.d/new", base);
    rmdir(path);
    snprintf(path, sizeof path, "%s.d", base);
    rmdir(path);
    unlink(base);
}
