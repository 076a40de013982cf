/* test_report_seeds.c — `anvil report` of each seed alone (000 graph data,
 * 001 a run, 002 a load curve, 003 a matrix, 004 a decode matrix), opened
 * in headless Chromium: every chart drawn, no error, the self-check line
 * hidden; the kind's answer before its evidence (charts, folds); no chart
 * of over 8 series (counted in uPlot's legend); captions as text (no
 * Markdown backtick left in a definition). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "browser.h"
#include "harness.h"

#define OUT_DIR "build/report-test"

/* The first occurrence of what in [from, the end), or the end. */
static const char *first_or_end(const char *from, const char *what)
{
    const char *p = strstr(from, what);
    return p ? p : from + strlen(from);
}

/* Per chart, its series (uPlot's legend rows less the x axis's). */
static void at_most_8_series(const char *dom)
{
    for (const char *c = strstr(dom, "data-chart=\""); c;) {
        const char *next = strstr(c + 1, "data-chart=\""), *end = next ? next : c + strlen(c);
        int rows = 0;
        for (const char *p = c; (p = strstr(p, "class=\"u-series")) && p < end; p++)
            rows++;
        cr_expect_leq(rows - 1, 8, "a chart of %d series: %.120s", rows - 1, c);
        c = next;
    }
}

/* Every definition under a chart or table reads as text: its `code`
 * spans rendered, no backtick left. */
static void captions_as_text(const char *dom)
{
    for (const char *d = strstr(dom, "class=\"def"); d; d = strstr(d + 1, "class=\"def")) {
        const char *end = strstr(d, "</div>");
        cr_assert(end);
        const char *tick = memchr(d, '`', (size_t)(end - d));
        cr_expect_null(tick, "a caption shows Markdown: %.*s", (int)(end - d), d);
    }
}

/* Seed 000's answer: per chart its better direction (a metric in ms:
 * lower; in tokens/s: higher) and the best and worst value of its points,
 * as the page's table reads them. */
static void check_graph_answer(const char *dom)
{
    cJSON *g = harness_load_json("tests/data/seed-000.json");
    const cJSON *ch, *s, *p;
    int rows = 0;
    cJSON_ArrayForEach(ch, cJSON_GetObjectItem(g, "charts")) {
        const char *metric = cJSON_GetStringValue(cJSON_GetObjectItem(ch, "metric"));
        bool lower = strstr(metric, "_ms") != NULL;
        cr_assert(lower || strstr(metric, "tok_s"), "%s", metric);
        double lo = INFINITY, hi = -INFINITY;
        cJSON_ArrayForEach(s, cJSON_GetObjectItem(ch, "series")) cJSON_ArrayForEach(p, cJSON_GetObjectItem(s, "points")) {
            lo = fmin(lo, harness_num(p, "value"));
            hi = fmax(hi, harness_num(p, "value"));
        }
        double best = lower ? lo : hi, worst = lower ? hi : lo;
        char want[512];
        snprintf(want, sizeof want, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td>",
                 cJSON_GetStringValue(cJSON_GetObjectItem(ch, "title")),
                 cJSON_GetStringValue(cJSON_GetObjectItem(ch, "y_label")), lower ? "lower" : "higher");
        const char *row = strstr(dom, want);
        cr_expect(row, "no answer row %s", want);
        if (!row)
            continue;
        rows++;
        const char *end = strstr(row, "</tr>");
        char v[64];
        snprintf(v, sizeof v, "<td>%.*f</td>", fabs(best) >= 100 ? 1 : 2, best);
        const char *b = strstr(row, v);
        cr_expect(b && b < end, "%s: best %s", want, v);
        snprintf(v, sizeof v, "<td>%.*f</td>", fabs(worst) >= 100 ? 1 : 2, worst);
        const char *w = strstr(b ? b + 1 : row, v);
        cr_expect(w && w < end, "%s: worst %s", want, v);
    }
    cr_expect_eq(rows, cJSON_GetArraySize(cJSON_GetObjectItem(g, "charts")));
    cJSON_Delete(g);
}

/* Reports seed alone and checks its page; answer is the attribute text
 * that starts the kind's answer. */
static void check_seed(const char *seed, const char *answer, long min_charts)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    char html[128], png[128], path[64];
    snprintf(path, sizeof path, "tests/data/%s.json", seed);
    snprintf(html, sizeof html, OUT_DIR "/%s.html", seed);
    snprintf(png, sizeof png, OUT_DIR "/%s.png", seed);
    const char *argv[] = {harness_anvil_bin(), "report", path, "-o", html, NULL};
    static char out[8192], err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_expect_geq(page.charts, min_charts, "%s: %ld charts", seed, page.charts);
    cr_expect(strstr(page.dom, "id=\"anvil-status\" class=\"ok\""), "%s: the self-check line is hidden", seed);
    const char *report = strstr(page.dom, "id=\"anvil-report\"");
    cr_assert(report);
    const char *ans = strstr(report, answer);
    cr_assert(ans, "%s: no answer (%s)", seed, answer);
    cr_expect_lt(ans, first_or_end(report, "class=\"chart\""), "%s: the answer comes before the charts", seed);
    cr_expect_lt(ans, first_or_end(report, "<details"), "%s: the answer comes before the folds", seed);
    at_most_8_series(report);
    captions_as_text(report);
    if (!strcmp(seed, "seed-000"))
        check_graph_answer(report);
    browser_close(&page);
    browser_screenshot(html, png, 1280, 1200);
}

Test(report_seeds, seed_000_graph_data, .timeout = 60)
{
    check_seed("seed-000", "class=\"graph-answer\"", 13);
}

Test(report_seeds, seed_001_a_run, .timeout = 60)
{
    check_seed("seed-001", "class=\"cards\"", 1);
}

Test(report_seeds, seed_002_a_load_curve, .timeout = 60)
{
    check_seed("seed-002", "class=\"answer\"", 1);
}

Test(report_seeds, seed_003_a_matrix, .timeout = 60)
{
    check_seed("seed-003", "class=\"heat\"", 0);
}

Test(report_seeds, seed_004_a_decode_matrix, .timeout = 60)
{
    check_seed("seed-004", "class=\"decode-answer\"", 1);
}

/* Graph data whose first chart has 10 series (seed 000's, copied under
 * other labels) draws it as small multiples: series 1–8, then 9–10. */
Test(report_seeds, a_graph_of_10_series_splits_into_small_multiples, .timeout = 60)
{
    cJSON *g = harness_load_json("tests/data/seed-000.json");
    cr_assert(g);
    cJSON *series = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(g, "charts"), 0), "series");
    const cJSON *model = cJSON_GetArrayItem(series, 0);
    for (int i = cJSON_GetArraySize(series); i < 10; i++) {
        cJSON *s = cJSON_Duplicate(model, 1);
        char label[32];
        snprintf(label, sizeof label, "copy %d", i);
        cJSON_ReplaceItemInObject(s, "label", cJSON_CreateString(label));
        cJSON_AddItemToArray(series, s);
    }
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *json = OUT_DIR "/graph-10-series.json", *html = OUT_DIR "/graph-10-series.html";
    char *text = cJSON_Print(g);
    FILE *f = fopen(json, "w");
    cr_assert(f && text);
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(g);
    const char *argv[] = {harness_anvil_bin(), "report", json, "-o", html, NULL};
    static char out[8192], err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_expect_eq(page.charts, 14, "13 charts, the first in two: %ld", page.charts);
    cr_expect(strstr(page.dom, "series 1–8 of 10" BROWSER_DRAWN), "the first eight");
    cr_expect(strstr(page.dom, "series 9–10 of 10" BROWSER_DRAWN), "the last two");
    at_most_8_series(page.dom);
    browser_close(&page);
}
