/* test_report_sweep.c — `anvil report` of a sweep, a load curve and a
 * matrix opened in headless Chromium (tests/e2e/browser.h): the page opens
 * with its answer (per target the largest load meeting the SLOs, checked
 * against a recomputation from the round artifacts' request records; the
 * knee without SLOs; a matrix's status and the leader of each case), before
 * any chart; every chart of at most 8 series and drawn; the rounds folded
 * per load point, closed, in order of load; seeds 000–004 clean. The first
 * screen of the sweep's report is the README's picture (docs/report-sweep.png). */
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "browser.h"
#include "harness.h"

#define OUT_DIR "build/report-sweep-test"
#define README_PNG "docs/report-sweep.png"

/* ---- recomputed from raw records ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank p-th percentile (docs/METHODOLOGY.md) of the round's
 * request_timings[].key (nulls left out); NaN when none has it. */
static double round_pct(const cJSON *art, const char *key, double p)
{
    const cJSON *t, *all = cJSON_GetObjectItem(art, "request_timings");
    double *v = malloc((size_t)(cJSON_GetArraySize(all) + 1) * sizeof *v);
    cr_assert(v);
    size_t n = 0;
    cJSON_ArrayForEach(t, all) {
        const cJSON *x = cJSON_GetObjectItem(t, key);
        if (cJSON_IsNumber(x))
            v[n++] = x->valuedouble;
    }
    qsort(v, n, sizeof *v, cmp_double);
    double r = n ? v[(size_t)ceil(p / 100 * (double)n) - 1] : NAN;
    free(v);
    return r;
}

/* The median of v[0..n) (of an even count, the mean of the middle two). */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One load point of one target: the medians across its rounds of each
 * round's p99 TTFT and p99 TPOT. */
struct point {
    double x, ttft, tpot;
};

/* The points of target (x ascending) from dir's round artifacts. */
static size_t points_of(const char *dir, const char *target, struct point *pts, size_t cap)
{
    char pat[512];
    glob_t g;
    snprintf(pat, sizeof pat, "%s/rounds/%s/*/round-*.json", dir, target);
    cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no rounds: %s", pat);
    double xs[64], ttft[64][8], tpot[64][8];
    size_t n = 0, k[64] = {0};
    for (size_t i = 0; i < g.gl_pathc; i++) {
        cJSON *a = harness_load_json(g.gl_pathv[i]);
        cr_assert(a, "%s", g.gl_pathv[i]);
        double x = harness_num(a, "concurrency");
        size_t j = 0;
        while (j < n && xs[j] != x)
            j++;
        if (j == n)
            xs[n++] = x;
        cr_assert(j < 64 && k[j] < 8);
        ttft[j][k[j]] = round_pct(a, "ttft_ms", 99);
        tpot[j][k[j]++] = round_pct(a, "tpot_ms", 99);
        cJSON_Delete(a);
    }
    globfree(&g);
    cr_assert_leq(n, cap);
    for (size_t j = 0; j < n; j++)
        pts[j] = (struct point){xs[j], median(ttft[j], k[j]), median(tpot[j], k[j])};
    for (size_t a = 1; a < n; a++)        /* by load */
        for (size_t b = a; b > 0 && pts[b - 1].x > pts[b].x; b--) {
            struct point t = pts[b];
            pts[b] = pts[b - 1];
            pts[b - 1] = t;
        }
    return n;
}

/* The knee of target from dir's rounds: the lowest load whose median
 * across rounds of metrics.output_throughput reaches 95% of the highest. */
static double knee_of_rounds(const char *dir, const char *target)
{
    char pat[512];
    glob_t g;
    snprintf(pat, sizeof pat, "%s/rounds/%s/*/round-*.json", dir, target);
    cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no rounds: %s", pat);
    double xs[64], tps[64][8], med[64], most = -1, knee = NAN;
    size_t n = 0, k[64] = {0};
    for (size_t i = 0; i < g.gl_pathc; i++) {
        cJSON *a = harness_load_json(g.gl_pathv[i]);
        cr_assert(a);
        double x = harness_num(a, "concurrency");
        size_t j = 0;
        while (j < n && xs[j] != x)
            j++;
        if (j == n)
            xs[n++] = x;
        cr_assert(j < 64 && k[j] < 8);
        tps[j][k[j]++] = harness_num(cJSON_GetObjectItem(a, "metrics"), "output_throughput");
        cJSON_Delete(a);
    }
    globfree(&g);
    for (size_t j = 0; j < n; j++)
        most = fmax(most, med[j] = median(tps[j], k[j]));
    for (size_t j = 0; j < n; j++)
        if (med[j] >= 0.95 * most && !(xs[j] >= knee))
            knee = xs[j];
    return knee;
}

/* The largest load meeting both SLOs: the last point before the first that
 * breaks one (points ascending); NaN when the first does. *broke: whether
 * any point did. */
static double answer_of(const struct point *p, size_t n, double slo_ttft, double slo_tpot, bool *broke)
{
    double best = NAN;
    *broke = false;
    for (size_t i = 0; i < n; i++) {
        if (!(p[i].ttft <= slo_ttft) || !(p[i].tpot <= slo_tpot)) {
            *broke = true;
            return best;
        }
        best = p[i].x;
    }
    return best;
}

/* ---- read from the page ---- */

/* The answer card of target in dom: its text from the name on. */
static const char *card_of(const char *dom, const char *target)
{
    const char *ans = strstr(dom, "class=\"answer\"");
    cr_assert(ans, "no answer element");
    char key[200];
    snprintf(key, sizeof key, "<div class=\"run\">%s</div>", target);
    const char *c = strstr(ans, key);
    cr_assert(c, "no answer card for %s", target);
    return c;
}

/* The answer load a card shows (NaN for "none"). */
static double card_x(const char *card)
{
    const char *x = strstr(card, "class=\"answer-x");
    cr_assert(x);
    x = strchr(x, '>') + 1;
    return strncmp(x, "none", 4) ? strtod(x, NULL) : NAN;
}

/* The number after label in the card's figures line. */
static double card_figure(const char *card, const char *label)
{
    const char *at = strstr(card, "class=\"answer-at\">"), *end = strstr(card, "class=\"why\"");
    cr_assert(at && end);
    const char *f = strstr(at, label);
    cr_assert(f && f < end, "no %s in the card", label);
    return strtod(f + strlen(label), NULL);
}

static void report(const char *const *inputs, const char *html)
{
    const char *argv[16] = {harness_anvil_bin(), "report"};
    int k = 2;
    for (; *inputs; inputs++)
        argv[k++] = *inputs;
    argv[k++] = "-o";
    argv[k++] = html;
    argv[k] = NULL;
    static char out[65536], err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
}

/* Where what first occurs in s (a huge offset when it does not). */
static size_t at(const char *s, const char *what)
{
    const char *p = strstr(s, what);
    return p ? (size_t)(p - s) : SIZE_MAX;
}

/* Width and height of the PNG at path (0 × 0 when it is not one). */
static void png_size(const char *path, unsigned long *w, unsigned long *h)
{
    unsigned char b[24] = {0};
    FILE *f = fopen(path, "rb");
    *w = *h = 0;
    if (!f)
        return;
    size_t got = fread(b, 1, sizeof b, f);
    fclose(f);
    if (got < 24 || memcmp(b, "\x89PNG\r\n\x1a\n", 8) || memcmp(b + 12, "IHDR", 4))
        return;
    *w = (unsigned long)b[16] << 24 | (unsigned long)b[17] << 16 | (unsigned long)b[18] << 8 | b[19];
    *h = (unsigned long)b[20] << 24 | (unsigned long)b[21] << 16 | (unsigned long)b[22] << 8 | b[23];
}

/* ---- a sweep ---- */

#define SLO_TTFT 100.0
#define SLO_TPOT 50.0

/* 2 targets (the engine model with 2 and 4 sequences at once: a queue, and
 * TTFT well past the SLO, from concurrency 4 and 8) × 4 loads, given out of
 * order × 3 rounds, into dir. */
static void sweep(char *dir)
{
    const char *a_args[] = {"--max-num-seqs", "2", NULL}, *b_args[] = {"--max-num-seqs", "4", NULL};
    struct sim_proc a, b;
    cr_assert_eq(sim_start_reference(&a, a_args), 0);
    cr_assert_eq(sim_start_reference(&b, b_args), 0);
    char targets[400];
    snprintf(targets, sizeof targets, "a=%s,b=%s", a.base_url, b.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "4,1,8,2",
                          "--input-len", "16", "--output-len", "32", "--rounds", "3", "--num-prompts", "8",
                          "--slo", "ttft:100,tpot:50", "--out-dir", dir, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&a);
    sim_stop(&b);
    cr_assert_eq(status, 0, "%s", out);
}

Test(report_sweep, opens_with_the_largest_load_meeting_the_slos, .timeout = 300)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    char dir[64] = "/tmp/anvil-report-sweep-XXXXXX";
    cr_assert(mkdtemp(dir));
    sweep(dir);
    const char *html = OUT_DIR "/sweep.html", *in[] = {dir, NULL};
    report(in, html);
    struct browser_page page;
    browser_open(html, &page);
    const char *dom = page.dom;
    browser_assert_clean(&page);
    /* the answer first: before any chart, the first heading of the page's sections */
    cr_assert_lt(at(dom, "class=\"answer\""), at(dom, "data-chart="));
    cr_assert_eq(at(dom, "<h2>Largest load meeting the SLOs (TTFT p99 ≤ 100 ms, TPOT p99 ≤ 50 ms)</h2>"),
                 at(dom, "<h2>"), "the answer's heading is the first");
    bool any_broke = false;
    const char *names[] = {"a", "b"};
    for (int t = 0; t < 2; t++) {
        struct point p[8];
        size_t n = points_of(dir, names[t], p, 8);
        cr_assert_eq(n, 4);
        bool broke;
        double want = answer_of(p, n, SLO_TTFT, SLO_TPOT, &broke);
        any_broke |= broke;
        const char *card = card_of(dom, names[t]);
        double got = card_x(card);
        cr_assert(isnan(want) ? isnan(got) : got == want, "%s: the page says %g, the rounds say %g", names[t], got,
                  want);
        if (isnan(want))
            continue;
        size_t i = 0;
        while (p[i].x != want)
            i++;
        double ttft = card_figure(card, "TTFT p99 "), tpot = card_figure(card, "TPOT p99 ");
        cr_assert_leq(fabs(ttft - p[i].ttft), p[i].ttft >= 10 ? 0.051 : 0.0051, "%s: TTFT p99 %g vs %g", names[t],
                      ttft, p[i].ttft);
        cr_assert_leq(fabs(tpot - p[i].tpot), p[i].tpot >= 10 ? 0.051 : 0.0051, "%s: TPOT p99 %g vs %g", names[t],
                      tpot, p[i].tpot);
        if (broke) {    /* why: the next point and what it broke */
            char why[160];
            snprintf(why, sizeof why, "the next load, %g, broke it: ", p[i + 1].x);
            cr_assert(strstr(card, why), "%s: %.400s", names[t], card);
        }
    }
    cr_assert(any_broke, "the sweep was meant to break the TTFT SLO at its higher loads");
    /* the curves, at most 8 series each (else an error above), then one
       fold per load point, closed, in order of load (given as 4,1,8,2) */
    cr_assert_eq(page.charts, 4 + 4 * 3, "%ld charts", page.charts);
    cr_assert_eq(browser_count(dom, "<details class=\"point\">"), 4, "closed folds, one per load point");
    size_t last = 0;
    for (int x = 1; x <= 8; x *= 2) {
        char s[64];
        snprintf(s, sizeof s, "<summary>Load %d (", x);
        cr_assert_gt(at(dom, s), last, "fold of load %d in order", x);
        last = at(dom, s);
    }
    cr_assert(strstr(dom, "{\"x\":[1,2,4,8]"), "the curve's points in order of load");
    cr_assert(strstr(dom, "class=\"verdict pass\">PASS</span>"), "the matrix's verdict");
    cr_assert(strstr(dom, "id=\"anvil-status\" class=\"ok\""), "the self-check stays hidden");
    browser_close(&page);
    /* the first screen: the README's picture */
    browser_screenshot(html, OUT_DIR "/first-screen.png", 1280, 800);
    /* without SLOs a sweep writes no load curve: the report makes one of its
       rounds, whose answer is the knee */
    char curve[200];
    snprintf(curve, sizeof curve, "%s/load-curve.json", dir);
    cr_assert_eq(unlink(curve), 0);
    const char *knee_html = OUT_DIR "/sweep-no-curve.html";
    report(in, knee_html);
    browser_open(knee_html, &page);
    browser_assert_clean(&page);
    cr_assert_eq(page.charts, 4 + 4 * 3, "%ld charts", page.charts);
    cr_assert_eq(at(page.dom, "<h2>The knee of each load curve</h2>"), at(page.dom, "<h2>"));
    for (int t = 0; t < 2; t++) {
        const char *card = card_of(page.dom, names[t]);
        cr_assert(strstr(card, "the knee (no SLO given)"));
        cr_assert_eq(card_x(card), knee_of_rounds(dir, names[t]), "%s", names[t]);
    }
    cr_assert_eq(browser_count(page.dom, "<details class=\"point\">"), 4);
    browser_close(&page);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A sweep run without --slo (one target, 3 loads × 2 rounds): no load
 * curve and no goodput; the page opens with the knee recomputed from the
 * rounds, and draws no chart of a figure no round has. */
Test(report_sweep, a_sweep_without_slos_opens_with_its_knee, .timeout = 180)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *args[] = {"--max-num-seqs", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, args), 0);
    char dir[64] = "/tmp/anvil-report-knee-XXXXXX", targets[200];
    cr_assert(mkdtemp(dir));
    snprintf(targets, sizeof targets, "sim=%s", sim.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,2,4",
                          "--input-len", "16", "--output-len", "32", "--rounds", "2", "--num-prompts", "8",
                          "--out-dir", dir, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    const char *html = OUT_DIR "/sweep-no-slo.html", *in[] = {dir, NULL};
    report(in, html);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert_eq(at(page.dom, "<h2>The knee of each load curve</h2>"), at(page.dom, "<h2>"));
    const char *card = card_of(page.dom, "sim");
    cr_assert_eq(card_x(card), knee_of_rounds(dir, "sim"));
    /* throughput, TTFT p99, TPOT p99 (no goodput without an SLO); per load TTFT, TPOT, E2E */
    cr_assert_eq(page.charts, 3 + 3 * 3, "%ld charts", page.charts);
    cr_assert_eq(browser_count(page.dom, "<div class=\"title\">Goodput"), 0);
    cr_assert_eq(browser_count(page.dom, "1 target × 2 rounds</summary>"), 3, "each load: its 2 rounds");
    browser_close(&page);
    /* the same sweep twice (a before/after of one server): two series a load, never one of 4 rounds
       pooled across the sweeps (it read "1 target × 4 rounds") */
    char copy[80], cmd[200];
    snprintf(copy, sizeof copy, "%s-again", dir);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", dir, copy);
    cr_assert_eq(system(cmd), 0);
    const char *both[] = {dir, copy, NULL};
    report(both, html);
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert_eq(browser_count(page.dom, "2 targets × 2 rounds</summary>"), 3, "each load: each sweep's 2 rounds");
    browser_close(&page);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, copy);
    cr_assert_eq(system(cmd), 0);
}

/* The README shows the first screen of a sweep's report; the picture is
 * this suite's (build/report-sweep-test/first-screen.png, copied). */
Test(report_sweep, the_readme_picture_is_a_first_screen)
{
    unsigned long w, h;
    png_size(README_PNG, &w, &h);
    cr_assert(w == 1280 && h == 800, README_PNG ": %lu × %lu, not a 1280 × 800 PNG", w, h);
    char *readme = harness_read_file("README.md", NULL);
    cr_assert(readme && strstr(readme, "(" README_PNG ")"), "README.md shows " README_PNG);
    free(readme);
}

/* ---- load curves and matrices as found ---- */

/* Seed 002: no target meets its SLOs even at the lowest load (recomputed
 * from the seed's medians); each card says so and why. */
Test(report_sweep, seed_002_answers_none_with_why, .timeout = 120)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *html = OUT_DIR "/seed-002.html", *in[] = {"tests/data/seed-002.json", NULL};
    report(in, html);
    cJSON *seed = harness_load_json("tests/data/seed-002.json");
    cr_assert(seed);
    double slo_ttft = harness_num(cJSON_GetObjectItem(seed, "slo"), "ttft_ms"),
           slo_tpot = harness_num(cJSON_GetObjectItem(seed, "slo"), "tpot_ms");
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert_lt(at(page.dom, "class=\"answer\""), at(page.dom, "data-chart="));
    const cJSON *t;
    int targets = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(seed, "load")) {
        struct point p[16];
        size_t n = 0;
        const cJSON *pt;
        cJSON_ArrayForEach(pt, cJSON_GetObjectItem(t, "points")) {
            cr_assert_lt(n, 16);
            p[n++] = (struct point){harness_num(pt, "x"), harness_num(cJSON_GetObjectItem(pt, "p99_ttft_ms"), "median"),
                                    harness_num(cJSON_GetObjectItem(pt, "p99_tpot_ms"), "median")};
        }
        bool broke;
        double want = answer_of(p, n, slo_ttft, slo_tpot, &broke);
        const char *card = card_of(page.dom, t->string);
        double got = card_x(card);
        cr_assert(isnan(want) ? isnan(got) : got == want, "%s: %g vs %g", t->string, got, want);
        if (isnan(want))
            cr_assert(strstr(card, "the lowest load, 1, broke it: TTFT p99"), "%.400s", card);
        targets++;
    }
    cr_assert_eq(targets, 3);
    /* 6 curves (throughput, TTFT, TPOT, goodput, GPU clock and temperature), 3 targets each */
    cr_assert_eq(page.charts, 6);
    browser_close(&page);
    cJSON_Delete(seed);
}

/* Writes seed 002 changed into path: without SLOs (so the answer is the
 * knee), and with copies of its targets up to n in all. */
static void seed_002_variant(const char *path, bool slo, int n)
{
    cJSON *seed = harness_load_json("tests/data/seed-002.json");
    cr_assert(seed);
    if (!slo) {
        cJSON *s = cJSON_GetObjectItem(seed, "slo");
        cJSON_ReplaceItemInObject(s, "ttft_ms", cJSON_CreateNull());
        cJSON_ReplaceItemInObject(s, "tpot_ms", cJSON_CreateNull());
    }
    cJSON *load = cJSON_GetObjectItem(seed, "load");
    int have = cJSON_GetArraySize(load);
    for (int i = have; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "copy-%d", i);
        cJSON_AddItemToObject(load, name, cJSON_Duplicate(cJSON_GetArrayItem(load, i % have), 1));
    }
    char *text = cJSON_Print(seed);
    FILE *f = fopen(path, "w");
    cr_assert(f && text);
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(seed);
}

/* Without SLOs each target's answer is its knee: the lowest load whose
 * output throughput (median across rounds) reaches 95% of its highest. */
Test(report_sweep, without_slos_the_answer_is_the_knee, .timeout = 120)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *json = OUT_DIR "/seed-002-no-slo.json", *html = OUT_DIR "/knee.html", *in[] = {json, NULL};
    seed_002_variant(json, false, 3);
    report(in, html);
    cJSON *seed = harness_load_json(json);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    cr_assert(strstr(page.dom, "<h2>The knee of each load curve</h2>"));
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(seed, "load")) {
        double most = -1, knee = NAN;
        const cJSON *pt;
        cJSON_ArrayForEach(pt, cJSON_GetObjectItem(t, "points"))
            most = fmax(most, harness_num(cJSON_GetObjectItem(pt, "output_throughput"), "median"));
        cJSON_ArrayForEach(pt, cJSON_GetObjectItem(t, "points")) {
            double v = harness_num(cJSON_GetObjectItem(pt, "output_throughput"), "median"), x = harness_num(pt, "x");
            if (v >= 0.95 * most && !(x >= knee))
                knee = x;
        }
        const char *card = card_of(page.dom, t->string);
        cr_assert(strstr(card, "the knee (no SLO given)"));
        cr_assert_eq(card_x(card), knee, "%s", t->string);
    }
    browser_close(&page);
    cJSON_Delete(seed);
}

/* Twelve targets: each curve splits into charts of at most 8 series (7
 * beside an SLO line); nothing is an error. */
Test(report_sweep, many_targets_make_small_multiples, .timeout = 120)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *json = OUT_DIR "/seed-002-many.json", *html = OUT_DIR "/many.html", *in[] = {json, NULL};
    seed_002_variant(json, true, 12);
    report(in, html);
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    /* throughput, goodput, GPU clock and temperature: 8 + 4; TTFT and TPOT with their SLO line: 7 + 5 */
    cr_assert_eq(page.charts, 12);
    cr_assert_eq(browser_count(page.dom, "— targets 1–8 of 12</div>"), 4);
    cr_assert_eq(browser_count(page.dom, "— targets 1–7 of 12</div>"), 2);
    cr_assert_eq(browser_count(page.dom, "class=\"card answer-card\""), 12);
    browser_close(&page);
}

/* Seed 003: the status first, then per case the engine with the most
 * output tokens/s (recomputed from the seed's aggregates), then the table. */
Test(report_sweep, seed_003_opens_with_its_status_and_leaders, .timeout = 120)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    const char *html = OUT_DIR "/seed-003.html", *in[] = {"tests/data/seed-003.json", NULL};
    report(in, html);
    cJSON *seed = harness_load_json("tests/data/seed-003.json");
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    const char *dom = page.dom;
    cr_assert_lt(at(dom, "class=\"verdict pass\">PASS</span>"), at(dom, "<table"));
    const cJSON *aggs = cJSON_GetObjectItem(seed, "aggregates");
    int cases = 0, n = cJSON_GetArraySize(aggs);
    for (int i = 0; i < n; i++) {
        const char *id = cJSON_GetObjectItem(cJSON_GetArrayItem(aggs, i), "case_id")->valuestring;
        const cJSON *best = NULL;
        double most = -1;
        int engines = 0, earlier = 0;
        for (int j = 0; j < n; j++) {
            const cJSON *b = cJSON_GetArrayItem(aggs, j);
            if (strcmp(cJSON_GetObjectItem(b, "case_id")->valuestring, id))
                continue;
            earlier += j < i;
            engines++;
            double v = harness_num(cJSON_GetObjectItem(harness_json_path(b, "metrics"), "output_throughput"), "median");
            if (v > most) {
                most = v;
                best = b;
            }
        }
        if (earlier || engines < 2)
            continue;
        char row[300];
        snprintf(row, sizeof row, "<td class=\"l\">%s</td><td class=\"l\">%d</td><td class=\"l\">%s (%.*f)</td>", id,
                 engines, cJSON_GetObjectItem(best, "engine")->valuestring, most >= 100 ? 1 : 2, most);
        cr_assert(strstr(dom, row), "no leader row %s", row);
        cr_assert_lt(at(dom, row), at(dom, "<th>engine</th>"), "the leaders before the table");
        cases++;
    }
    cr_assert_gt(cases, 10);
    browser_close(&page);
    cJSON_Delete(seed);
}

/* Every seed alone: drawn, no error, no self-check line in sight. */
Test(report_sweep, seeds_000_to_004_render_clean, .timeout = 180)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    for (int s = 0; s <= 4; s++) {
        char seed[64], html[128];
        snprintf(seed, sizeof seed, "tests/data/seed-%03d.json", s);
        snprintf(html, sizeof html, OUT_DIR "/seed-%03d-alone.html", s);
        const char *in[] = {seed, NULL};
        report(in, html);
        struct browser_page page;
        browser_open(html, &page);
        browser_assert_clean(&page);
        cr_assert(strstr(page.dom, "id=\"anvil-status\" class=\"ok\""), "%s: %.300s", seed, page.status);
        browser_close(&page);
    }
}
