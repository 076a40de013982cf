/* test_report_timeseries.c — `anvil report`'s run over time in headless
 * Chromium: per run its timeseries rows drawn as five charts (one point
 * per artifact row, the completed requests per row recomputed from the
 * artifact's request_timings), the steady state stated in the run's
 * answer as the artifact says it, and its window and the ramp's end named
 * on the charts; the reached case from a copy of a real artifact whose
 * steady_state was set by hand (a run reaching it lasts over 10 s). */
#include <ctype.h>
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

#define OUT_DIR "build/report-timeseries"
#define DRAWN BROWSER_DRAWN

/* The five charts of a run over time (the end of their titles). */
static const char *const CHARTS[] = {
    "output tokens/s per row (tokens/s)", "requests per row: completed, failed, started (requests)",
    "requests in flight at each row's end (requests)", "TTFT per row, p50 and p99 (ms)",
    "ITL per row, p50 and p99 (ms)",
};
#define N_CHARTS 5

static void run_ok(const char *const argv[])
{
    static char out[65536], err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s: %s%s", argv[1], out, err);
}

static void report(const char *art, const char *html)
{
    const char *argv[] = {harness_anvil_bin(), "report", art, "-o", html, NULL};
    run_ok(argv);
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

static long at(const char *dom, const char *what)
{
    const char *p = strstr(dom, what);
    cr_assert(p, "no %s in the page", what);
    return (long)(p - dom);
}

/* A 5 s duration run of 4 streams started over 1 s (a ramp) with rows of
 * 1 s against a simulator that fails some requests, into art. */
static void short_run(const char *art)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "4", "--fail-rate", "0.15", "--fail-status", "500",
                              NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *run[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--duration", "5",
                         "--concurrency", "4", "--ramp-up-s", "1", "--input-len", "16", "--output-len", "24",
                         "--timeseries-interval-s", "1", "--max-failure-rate", "1", "--out", art, NULL};
    run_ok(run);
    sim_stop(&sim);
}

/* The completed requests per row recomputed from request_timings (each in
 * the row of its end: start + e2e), into lo[] (those clear of a row's
 * edge) and near[] (those within 1 µs of one, which may fall either side). */
static void completed_per_row(const cJSON *a, long *lo, long *near, int rows)
{
    const cJSON *ts = cJSON_GetObjectItem(a, "timeseries"), *t;
    double t0 = harness_num(ts, "t0_monotonic_ns"), w = harness_num(ts, "interval_s") * 1e9;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        double end = harness_num(t, "start_monotonic_ns") + harness_num(t, "e2e_ms") * 1e6 - t0;
        int k = (int)floor(end / w);
        double edge = fmin(end - k * w, (k + 1) * w - end);
        cr_assert(k >= 0 && k < rows, "a request ended in row %d of %d", k, rows);
        if (edge < 1e3) {
            near[k]++;
            if (k + 1 < rows)
                near[k + 1]++;
            if (k > 0)
                near[k - 1]++;
        } else {
            lo[k]++;
        }
    }
}

/* Checks the five charts of the run over time in dom against a: drawn,
 * one point per row, completed per row as recomputed. */
static void check_rows(const char *dom, const cJSON *a)
{
    const cJSON *ts = cJSON_GetObjectItem(a, "timeseries");
    cr_assert(cJSON_IsObject(ts), "the artifact has a timeseries");
    int rows = cJSON_GetArraySize(cJSON_GetObjectItem(ts, "rows"));
    cr_assert_geq(rows, 5, "a 5 s run in 1 s rows");
    for (int i = 0; i < N_CHARTS; i++) {
        char want[160];
        snprintf(want, sizeof want, "%s" DRAWN, CHARTS[i]);
        cr_assert_eq(browser_count(dom, want), 1, "%s", want);
    }
    char attr[64];
    snprintf(attr, sizeof attr, "data-rows=\"%d\"", rows);
    cr_assert_eq(browser_count(dom, attr), N_CHARTS, "every chart holds the artifact's %d rows", rows);
    cr_assert_eq(browser_count(dom, "data-x-axis=\"s since the first send\""), N_CHARTS, "a short run's axis in s");
    long lo[256] = {0}, near[256] = {0}, sum = 0;
    cr_assert_leq(rows, 256);
    completed_per_row(a, lo, near, rows);
    char *got = between(dom, "data-completed=\"", "\"");
    cr_assert(got, "the requests chart exposes its completed column");
    char *p = got;
    for (int k = 0; k < rows; k++) {
        char *end;
        long v = strtol(p, &end, 10);
        cr_assert(end != p, "row %d of %d in \"%s\"", k, rows, got);
        cr_assert(v >= lo[k] && v <= lo[k] + near[k], "row %d: %ld completed, recomputed %ld (+%ld at an edge)", k,
                  v, lo[k], near[k]);
        sum += v;
        p = *end == ',' ? end + 1 : end;
    }
    cr_assert_eq(*p, '\0', "no more values than rows: %s", got);
    cr_assert_eq(sum, cJSON_GetArraySize(cJSON_GetObjectItem(a, "request_timings")), "Σ completed = the records");
    free(got);
}

/* The steady-state line of dom (owned). */
static char *steady_line(const char *dom, bool reached)
{
    char open[96];
    snprintf(open, sizeof open, "<div class=\"steady %s\" data-reached=\"%d\">", reached ? "reached" : "not-reached",
             reached);
    char *s = between(dom, open, "</div>");
    cr_assert(s, "the steady line (%s)", open);
    cr_assert_lt(at(dom, open), at(dom, "data-chart="), "the steady state is in the answer, before any chart");
    return s;
}

/* "the linear ramp's end, 1.0 s" in every chart's caption, from a's ramp. */
static void check_ramp(const char *dom, const cJSON *a)
{
    const cJSON *ramp = cJSON_GetObjectItem(a, "ramp");
    cr_assert(cJSON_IsObject(ramp), "--ramp-up-s makes a ramp");
    char want[160];
    snprintf(want, sizeof want, "the %s ramp's end, %.1f s.", cJSON_GetStringValue(cJSON_GetObjectItem(ramp,
             "strategy")), harness_num(ramp, "end_s"));
    cr_assert_eq(browser_count(dom, want), N_CHARTS, "%s", want);
}

/* Writes a to path. */
static void write_json(const cJSON *a, const char *path)
{
    char *text = cJSON_Print(a);
    FILE *f = fopen(path, "w");
    cr_assert(f && text);
    fputs(text, f);
    fclose(f);
    free(text);
}

/* A copy of a whose rows are 12 of its second row, TTFT p50 5 ms in the
 * first half and 10 ms in the second: by docs/METHODOLOGY.md's rule (11
 * full rows, quarters of 2, medians 5 and 10, noise max(10 % of 10, spread
 * 0) = 1 ms) TTFT p50 drifted and no other metric did (each is constant).
 * The rows are made 120 s wide, merged before 960 s: a 24 min run, whose
 * time axis is in minutes. */
static void drift_copy(cJSON *a, const char *copy, const char *html)
{
    cJSON *ts = cJSON_GetObjectItem(a, "timeseries"), *rows = cJSON_CreateArray();
    double w = 120;
    cJSON_ReplaceItemInObject(ts, "interval_s", cJSON_CreateNumber(w));
    cJSON_ReplaceItemInObject(ts, "exact_from_s", cJSON_CreateNumber(960));
    for (int k = 0; k < 12; k++) {
        cJSON *r = cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItem(ts, "rows"), 1), true);
        cJSON_ReplaceItemInObject(r, "t_s", cJSON_CreateNumber(k * w));
        cJSON_ReplaceItemInObject(r, "ttft_p50_ms", cJSON_CreateNumber(k < 6 ? 5 : 10));
        cJSON_AddItemToArray(rows, r);
    }
    cJSON_ReplaceItemInObject(ts, "rows", rows);
    write_json(a, copy);
    report(copy, html);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert_eq(browser_count(page.dom, "data-rows=\"12\""), N_CHARTS);
    cr_assert_eq(browser_count(page.dom, "data-x-axis=\"min since the first send\""), N_CHARTS, "the axis in minutes");
    cr_assert_eq(browser_count(page.dom, "row of 120.000 s (12 rows, merged from 1.000 s rows)"), N_CHARTS);
    cr_assert_eq(browser_count(page.dom, "Rows before 16.0 min were merged"), 2, "TTFT and ITL say so");
    cr_assert(strstr(page.dom, "): TTFT p50.</div>"), "the group names TTFT p50 alone as drifted");
    cr_assert_eq(browser_count(page.dom, "TTFT p50 5.00 → 10.00 ms."), 1, "the TTFT chart's caption says it");
    cr_assert_eq(browser_count(page.dom, "within noise of the first's. shaded: the steady state, 0.0–0.1 min"),
                 N_CHARTS - 1, "the other charts none");
    browser_close(&page);
}

/* One row alone with a TTFT and ITL (requests of several rows: one
 * completes in row 1): its value is a segment of its row's width. A
 * stepped path drew nothing for a lone value and the chart read as not
 * drawn. */
static void lone_rows_copy(cJSON *a, const char *copy, const char *html)
{
    const char *keys[] = {"ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms"};
    int k = 0;
    cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(cJSON_GetObjectItem(a, "timeseries"), "rows")) {
        for (int i = 0; i < 4; i++)
            cJSON_ReplaceItemInObject(r, keys[i], k == 1 ? cJSON_CreateNumber(5 + i) : cJSON_CreateNull());
        k++;
    }
    write_json(a, copy);
    report(copy, html);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    browser_close(&page);
}

Test(report_timeseries, a_short_run_draws_its_rows_and_says_steady_state_not_reached, .timeout = 240)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    char dir[64] = "/tmp/anvil-report-ts-XXXXXX", art[128], copy[128];
    cr_assert(mkdtemp(dir));
    snprintf(art, sizeof art, "%s/run.json", dir);
    snprintf(copy, sizeof copy, "%s/reached.json", dir);
    short_run(art);
    const char *html = OUT_DIR "/run.html";
    report(art, html);
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    check_rows(page.dom, a);
    check_ramp(page.dom, a);
    /* the steady state as the artifact says: not reached, why, the longest stretch */
    const cJSON *st = cJSON_GetObjectItem(a, "steady_state");
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(st, "reached")), "a 5 s run cannot hold 10 s");
    const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(st, "reason"));
    cr_assert(reason);
    char *line = steady_line(page.dom, false), want[256];
    snprintf(want, sizeof want, "Steady state not reached: %s — ", reason);
    cr_assert(!strncmp(line, want, strlen(want)), "%s in: %s", want, line);
    if (cJSON_IsNumber(cJSON_GetObjectItem(st, "length_s"))) {
        snprintf(want, sizeof want, "(the longest stretch in the band: %.1f s of %.1f s)",
                 harness_num(st, "length_s"), harness_num(st, "run_s"));
        cr_assert(strstr(line, want), "%s in: %s", want, line);
    }
    /* (the page's script holds the words too: a caption has a number after them) */
    for (const char *p = page.dom; (p = strstr(p, "shaded: the steady state, ")); p++)
        cr_assert(!isdigit((unsigned char)p[26]), "nothing shaded when not reached");
    free(line);
    browser_close(&page);
    browser_screenshot(html, OUT_DIR "/run.png", 1280, 2400);

    /* the same run, its steady_state set by hand to a reached stretch */
    cJSON *s = cJSON_GetObjectItem(a, "steady_state");
    double run_s = harness_num(s, "run_s");
    cJSON_ReplaceItemInObject(s, "reached", cJSON_CreateTrue());
    cJSON_ReplaceItemInObject(s, "reason", cJSON_CreateNull());
    const char *keys[] = {"start_s", "end_s", "length_s", "share", "level"};
    const double vals[] = {1.5, 4.0, 2.5, 2.5 / run_s, 3.96};
    for (int i = 0; i < 5; i++)
        cJSON_ReplaceItemInObject(s, keys[i], cJSON_CreateNumber(vals[i]));
    write_json(a, copy);
    report(copy, html);
    browser_open(html, &page);
    browser_assert_clean(&page);
    check_rows(page.dom, a);
    line = steady_line(page.dom, true);
    snprintf(want, sizeof want, "Steady state reached: 2.5 s of %.1f s (%.0f %%), from 1.5 s to 4.0 s after the "
             "first send; in flight 3.96 of %g", run_s, 100 * 2.5 / run_s, harness_num(s, "target"));
    cr_assert_str_eq(line, want);
    free(line);
    cr_assert_eq(browser_count(page.dom, "shaded: the steady state, 1.5–4.0 s"), N_CHARTS,
                 "the window named on every chart");
    browser_close(&page);
    browser_screenshot(html, OUT_DIR "/reached.png", 1280, 2400);
    drift_copy(a, copy, html);
    lone_rows_copy(a, copy, html);
    cJSON_Delete(a);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
