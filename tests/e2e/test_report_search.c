/* test_report_search.c — an SLO search (`anvil sweep --search
 * concurrency`, search.json) read back: `anvil report` of its sweep
 * directory opens with an answer card that is the search's best load (the
 * largest load whose probe passed, recomputed here from the probes), with
 * its attainment and interval; the probes' chart is drawn and their table
 * has one row per probe in the order they ran; `anvil report search.json`
 * alone draws the card itself; `anvil show search.json` prints the best and
 * every probe with the file's numbers. The search runs against `anvil sim`
 * of 2 slots and requests of about 420 ms (40 tokens, 10 ms steps), so
 * concurrency 3 queues a whole request past the 200 ms TTFT SLO. With
 * --targets each target's card is its own search's answer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "browser.h"
#include "harness.h"

#define OUT_DIR "build/report-search-test"

/* Runs a search over concurrency 1..4 into dir; returns search.json. */
static cJSON *search(const char *dir)
{
    struct sim_proc sim;
    const char *sim_args[] = {"--max-num-seqs", "2", "--decode-base-ms", "10", NULL};
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--search", "concurrency",
                          "--concurrency", "1..4", "--input-len", "16", "--output-len", "40", "--num-prompts", "8",
                          "--slo", "ttft:200", "--out-dir", dir, NULL};
    static char out[32768];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    char path[512];
    snprintf(path, sizeof path, "%s/search.json", dir);
    cJSON *s = harness_load_json(path);
    cr_assert(s, "%s", path);
    return s;
}

/* The largest concurrency among the probes that passed (NaN when none). */
static double largest_pass(const cJSON *probes)
{
    double best = NAN;
    const cJSON *p;
    cJSON_ArrayForEach(p, probes)
        if (!strcmp(cJSON_GetObjectItem(p, "verdict")->valuestring, "pass") &&
            (isnan(best) || harness_num(p, "concurrency") > best))
            best = harness_num(p, "concurrency");
    return best;
}

static void report(const char *input, const char *html)
{
    const char *argv[] = {harness_anvil_bin(), "report", input, "-o", html, NULL};
    static char out[8192], err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
}

static double iv(const cJSON *p, int k)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(p, "interval"), k)->valuedouble;
}

/* The page's search card says best, with the attainment and interval of
 * the probe at best; the probes' table lists every probe in order. */
static void check_page(const char *html, const cJSON *probes, double best, size_t charts)
{
    struct browser_page page;
    browser_open(html, &page);
    browser_assert_clean(&page);
    const char *dom = page.dom;
    cr_assert_eq(page.charts, (long)charts, "%ld charts", page.charts);
    const char *card = strstr(dom, "<div class=\"k\">by SLO search: attainment ≥ 0.99</div>");
    cr_assert(card, "no search card");
    const char *x = strstr(card, "class=\"answer-x");
    cr_assert(x);
    x = strchr(x, '>') + 1;
    cr_assert(isnan(best) ? !strncmp(x, "none", 4) : strtod(x, NULL) == best, "card says %.10s, probes say %g", x,
              best);
    cr_assert_lt(card - dom, strstr(dom, "data-chart=") - dom, "the answer before any chart");
    const cJSON *p;
    cJSON_ArrayForEach(p, probes)
        if (harness_num(p, "concurrency") == best) {
            char want[200];
            snprintf(want, sizeof want, "attainment %.4f (95%% interval %.4f–%.4f)",
                     harness_num(p, "good") / harness_num(p, "requests"), iv(p, 0), iv(p, 1));
            cr_assert(strstr(card, want), "want %s in %.600s", want, card);
        }
    cr_assert_eq(browser_count(dom, "<tr class=\"probe "), cJSON_GetArraySize(probes));
    const char *at = dom;
    cJSON_ArrayForEach(p, probes) {
        char row[120];
        snprintf(row, sizeof row, "<tr class=\"probe %s%s\" data-x=\"%g\">",
                 cJSON_GetObjectItem(p, "verdict")->valuestring,
                 harness_num(p, "concurrency") == best ? " best" : "", harness_num(p, "concurrency"));
        const char *r = strstr(at, row);
        cr_assert(r, "probe row %s not found after the previous one", row);
        at = r + 1;
    }
    cr_assert_eq(browser_count(dom, "SLO attainment per probe (ratio of requests good)" BROWSER_DRAWN), 1);
    browser_close(&page);
}

/* `anvil show` of search.json: the best's line and each probe's row carry
 * the file's numbers (attainment recomputed as good / requests). */
static void check_show(const char *path, const cJSON *s, double best)
{
    const char *argv[] = {harness_anvil_bin(), "show", path, NULL};
    static char out[32768];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    const char *b = strstr(out, "concurrency:");
    cr_assert(b, "%s", out);
    cr_assert_eq(strtod(b + strlen("concurrency:"), NULL), best, "%s", out);
    const cJSON *bj = cJSON_GetObjectItem(s, "best");
    char want[200];
    snprintf(want, sizeof want, "%.4f (%.4f..%.4f), %ld of %ld good",
             harness_num(bj, "good") / harness_num(bj, "requests"),
             iv(bj, 0), iv(bj, 1), (long)harness_num(bj, "good"), (long)harness_num(bj, "requests"));
    cr_assert(strstr(out, want), "want %s in %s", want, out);
    const char *ttft = strstr(out, "TTFT p99 (ms):");
    cr_assert(ttft);
    cr_assert_leq(fabs(strtod(ttft + 14, NULL) - harness_num(bj, "ttft_p99_ms")), 0.051);
    const char *stopped = strstr(out, "Stopped:");
    cr_assert(stopped && strstr(stopped, cJSON_GetObjectItem(s, "stopped")->valuestring), "%s", out);
    const char *line = strstr(out, "probes in the order they ran");
    cr_assert(line, "%s", out);
    line = strchr(strstr(line, "-----"), '\n') + 1;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(s, "probes")) {
        double load, att, lo, hi;
        long rounds, good, n;
        char verdict[16], by[16];
        cr_assert_eq(sscanf(line, "%lf %ld %ld/%ld %lf %lf..%lf %15s %15s", &load, &rounds, &good, &n, &att, &lo, &hi,
                            verdict, by), 9, "%.200s", line);
        cr_assert_eq(load, harness_num(p, "concurrency"));
        cr_assert_eq(rounds, (long)harness_num(p, "rounds"));
        cr_assert_eq(good, (long)harness_num(p, "good"));
        cr_assert_eq(n, (long)harness_num(p, "requests"));
        cr_assert_leq(fabs(att - (double)good / (double)n), 5.1e-5);
        cr_assert_leq(fabs(lo - iv(p, 0)), 5.1e-5);
        cr_assert_leq(fabs(hi - iv(p, 1)), 5.1e-5);
        cr_assert_str_eq(verdict, cJSON_GetObjectItem(p, "verdict")->valuestring);
        cr_assert_str_eq(by, cJSON_GetObjectItem(p, "decided_by")->valuestring);
        line = strchr(line, '\n') + 1;
    }
}

Test(report_search, the_answer_card_is_the_search_best_and_the_probes_are_shown, .timeout = 240)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    char dir[64] = "/tmp/anvil-report-search-XXXXXX";
    cr_assert(mkdtemp(dir));
    cJSON *s = search(dir);
    const cJSON *probes = cJSON_GetObjectItem(s, "probes");
    double best = largest_pass(probes);
    cr_assert_eq(harness_num(cJSON_GetObjectItem(s, "best"), "concurrency"), best);
    cr_assert_geq(cJSON_GetArraySize(probes), 2);
    /* the sweep's directory: its load curve's answer card is the search's;
       its 4 curves (throughput, TTFT, TPOT, goodput), the probes' chart, and
       3 charts per load point (each probe a load of its own) */
    report(dir, OUT_DIR "/sweep.html");
    check_page(OUT_DIR "/sweep.html", probes, best, 5 + 3 * (size_t)cJSON_GetArraySize(probes));
    browser_screenshot(OUT_DIR "/sweep.html", OUT_DIR "/sweep.png", 1280, 1600);
    /* search.json alone: the search section draws the card */
    char path[512];
    snprintf(path, sizeof path, "%s/search.json", dir);
    report(path, OUT_DIR "/search.html");
    check_page(OUT_DIR "/search.html", probes, best, 1);
    check_show(path, s, best);
    cJSON_Delete(s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(report_search, with_targets_each_card_is_its_own_search, .timeout = 240)
{
    mkdir("build", 0755);
    mkdir(OUT_DIR, 0755);
    struct sim_proc one, two;
    const char *one_args[] = {"--max-num-seqs", "1", "--decode-base-ms", "10", NULL};
    const char *two_args[] = {"--max-num-seqs", "2", "--decode-base-ms", "10", NULL};
    cr_assert_eq(sim_start(&one, one_args), 0);
    cr_assert_eq(sim_start(&two, two_args), 0);
    char dir[64] = "/tmp/anvil-report-search-XXXXXX", targets[300];
    cr_assert(mkdtemp(dir));
    snprintf(targets, sizeof targets, "one=%s,two=%s", one.base_url, two.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--search", "concurrency",
                          "--concurrency", "1..3", "--input-len", "16", "--output-len", "40", "--num-prompts", "6",
                          "--slo", "ttft:200", "--search-repeats", "1", "--launcher", "env", "--out-dir", dir, NULL};
    static char out[32768];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&one);
    sim_stop(&two);
    cr_assert_eq(status, 0, "%s", out);
    char path[512];
    snprintf(path, sizeof path, "%s/search.json", dir);
    cJSON *s = harness_load_json(path);
    cr_assert(s, "%s", path);
    report(dir, OUT_DIR "/targets.html");
    struct browser_page page;
    browser_open(OUT_DIR "/targets.html", &page);
    browser_assert_clean(&page);
    const cJSON *t;
    size_t probes = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(s, "targets")) {
        const char *name = cJSON_GetObjectItem(t, "target")->valuestring;
        double best = largest_pass(cJSON_GetObjectItem(t, "probes"));
        probes += (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(t, "probes"));
        char key[200];
        snprintf(key, sizeof key, "<div class=\"run\">%s</div><div class=\"k\">by SLO search: attainment ≥ 0.99</div>",
                 name);
        const char *card = strstr(page.dom, key);
        cr_assert(card, "no search card for %s", name);
        const char *x = strchr(strstr(card, "class=\"answer-x"), '>') + 1;
        cr_assert(isnan(best) ? !strncmp(x, "none", 4) : strtod(x, NULL) == best, "%s: card %.10s, probes %g", name,
                  x, best);
        snprintf(key, sizeof key, "SLO attainment per probe (ratio of requests good)");
        char title[300];
        snprintf(title, sizeof title, "%s: %s" BROWSER_DRAWN, name, key);
        cr_assert_eq(browser_count(page.dom, title), 1, "%s's probes chart", name);
    }
    cr_assert_eq(browser_count(page.dom, "<tr class=\"probe "), (int)probes);
    browser_close(&page);
    cJSON_Delete(s);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
