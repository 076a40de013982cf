/* test_ceiling.c — the client's ceiling: every run's peak SSE events/s per
 * measuring thread (client.peak_events_per_s_per_thread) against the
 * journal's own chunk stamps, its share of the last measured ceiling and
 * the warning above 70 %, and `anvil ceiling` end to end (run/ceiling.h).
 * No timing is asserted: what the machine sustains is what it measures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"
#include "scaleout.h"

/* A fresh directory under the test run's own folder, into dir (cap bytes). */
static void tmpdir(char *dir, size_t cap)
{
    const char *base = getenv("ANVIL_TEST_TMPDIR");
    snprintf(dir, cap, "%s/ceiling-XXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(dir), "%s", dir);
}

/* Runs `anvil run` against sim (concurrency c, n requests of out tokens),
 * its artifact at art; extra: more flags (NULL-terminated, or NULL). Fills
 * the exit status and stderr (errcap bytes). */
static void run(const struct sim_proc *sim, const char *c, const char *n, const char *out, const char *art,
                const char *const extra[], char *err, size_t errcap, int *status)
{
    const char *argv[32] = {harness_anvil_bin(), "run", "--base-url", sim->base_url, "--concurrency", c,
                            "--num-prompts", n, "--input-len", "16", "--output-len", out, "--calibration", "none",
                            "--server-metrics", "off", "--out", art};
    int k = 18;
    for (int i = 0; extra && extra[i]; i++)
        argv[k++] = extra[i];
    argv[k] = NULL;
    static char so[65536];
    cr_assert_eq(run_cmd_err(argv, so, sizeof so, err, errcap, status), 0);
}

/* The fullest 1-second bin of CLOCK_MONOTONIC (bin = stamp / 1 s) of the
 * output chunks in the journal at path, each at its stamp (t0_ns + t);
 * *extra gets the events that carried no output (the role chunk, usage,
 * [DONE]), which the journal does not stamp. */
static long journal_peak(const char *path, long *extra)
{
    cJSON *lines[64];
    int n = harness_read_jsonl(path, lines, 64);
    cr_assert_gt(n, 1, "%s", path);
    const char *t0s = cJSON_GetStringValue(cJSON_GetObjectItem(lines[0], "t0_ns"));
    cr_assert(t0s, "%s: the header has no t0_ns", path);
    double t0 = (double)strtoll(t0s, NULL, 10);
    enum { BINS = 4096 };
    static long count[BINS];
    memset(count, 0, sizeof count);
    long first_bin = 0, peak = 0;
    bool any = false;
    *extra = 0;
    for (int i = 1; i < n; i++) {
        const cJSON *c, *chunks = cJSON_GetObjectItem(lines[i], "chunks");
        *extra += (long)harness_num(lines[i], "events") - cJSON_GetArraySize(chunks);
        cJSON_ArrayForEach(c, chunks) {
            long bin = (long)floor((t0 + cJSON_GetNumberValue(cJSON_GetArrayItem(c, 0))) / 1e9);
            if (!any)
                first_bin = bin - BINS / 2;
            any = true;
            cr_assert(bin - first_bin >= 0 && bin - first_bin < BINS);
            long k = ++count[bin - first_bin];
            if (k > peak)
                peak = k;
        }
    }
    for (int i = 0; i < n; i++)
        cJSON_Delete(lines[i]);
    return peak;
}

/* The number at path in o, or NaN when it is null; fails when absent. */
static double num_or_nan(const cJSON *o, const char *path)
{
    const cJSON *v = harness_json_path(o, path);
    cr_assert(v, "%s is absent", path);
    cr_assert(cJSON_IsNumber(v) || cJSON_IsNull(v), "%s is neither a number nor null", path);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

Test(ceiling, the_peak_is_the_fullest_second_of_the_journal, .timeout = 90)
{
    const char *sim_args[] = {"--ttft-ms", "20", "--itl-ms", "10", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[128], art[192], journal[256], err[8192];
    tmpdir(dir, sizeof dir);
    snprintf(art, sizeof art, "%s/run.json", dir);
    int status;
    /* 4 streams of 150 tokens 10 ms apart, two each: about 3 s, ~400 events a second */
    run(&sim, "4", "8", "150", art, NULL, err, sizeof err, &status);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    double peak = num_or_nan(a, "client.peak_events_per_s_per_thread");
    cr_assert_eq(harness_num(harness_json_path(a, "client"), "threads"), 1);
    cJSON_Delete(a);
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0);
    long extra, want = journal_peak(journal, &extra);
    /* the driver counts every SSE event: the output chunks the journal dates, plus at most the
     * events it does not (at most all of them in one bin); an event read after a later stamp
     * of another stream counts in that later bin (1 % allowed) */
    cr_assert_gt(want, 200, "the fullest second held %ld chunks", want);
    cr_assert(peak >= (double)want * 0.99 - 2 && peak <= (double)(want + extra) * 1.01 + 2,
              "peak %g events/s, the journal's fullest second %ld chunks (+ up to %ld other events)", peak, want,
              extra);
}

/* Writes a ceiling file of events_per_s under $XDG_CACHE_HOME/anvil. */
static void fake_ceiling(const char *cache, double events_per_s)
{
    char path[256];
    snprintf(path, sizeof path, "%s/anvil", cache);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/anvil/ceiling.json", cache);
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fprintf(f, "{\"schema\": \"anvil.ceiling/v1\", \"events_per_s\": %g, \"measured_at\": \"2026-01-02T03:04:05Z\", "
               "\"host\": \"test\", \"anvil_version\": \"0\", \"threads\": 1, \"transport\": null}\n", events_per_s);
    fclose(f);
}

/* A run with $XDG_CACHE_HOME at a directory of its own holding a ceiling
 * of events_per_s (0: none): fills its artifact's client block's peak,
 * ceiling and share and whether stderr warned. */
static void run_against(double events_per_s, double *peak, double *ceiling, double *share, bool *warned)
{
    const char *sim_args[] = {"--ttft-ms", "10", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[128], cache[160], art[192], err[8192];
    tmpdir(dir, sizeof dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    mkdir(cache, 0755);
    if (events_per_s > 0)
        fake_ceiling(cache, events_per_s);
    setenv("XDG_CACHE_HOME", cache, 1);
    snprintf(art, sizeof art, "%s/run.json", dir);
    int status;
    run(&sim, "2", "4", "40", art, NULL, err, sizeof err, &status);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    *peak = num_or_nan(a, "client.peak_events_per_s_per_thread");
    *ceiling = num_or_nan(a, "client.ceiling_events_per_s");
    *share = num_or_nan(a, "client.ceiling_share");
    const char *when = cJSON_GetStringValue(harness_json_path(a, "client.ceiling_measured_at"));
    cr_assert(events_per_s > 0 ? when && !strcmp(when, "2026-01-02T03:04:05Z") : !when);
    cJSON_Delete(a);
    *warned = strstr(err, "of its measured ceiling") != NULL;
    if (*warned) {     /* it names the numbers and the date */
        char pct[32];
        snprintf(pct, sizeof pct, "%.0f%%", 100 * *peak / events_per_s);
        cr_assert(strstr(err, pct) && strstr(err, "2026-01-02T03:04:05Z") && strstr(err, "--threads"), "%s", err);
    }
}

Test(ceiling, a_run_above_70_percent_of_a_tiny_ceiling_warns, .timeout = 60)
{
    double peak, ceiling, share;
    bool warned;
    run_against(10, &peak, &ceiling, &share, &warned);
    cr_assert_gt(peak, 7, "the run read %g events in its fullest second", peak);
    cr_assert_eq(ceiling, 10);
    cr_assert_float_eq(share, peak / 10, 1e-9);
    cr_assert(warned, "no warning at %g %% of the ceiling", 100 * share);
}

Test(ceiling, a_run_far_below_its_ceiling_is_not_warned_about, .timeout = 60)
{
    double peak, ceiling, share;
    bool warned;
    run_against(1e9, &peak, &ceiling, &share, &warned);
    cr_assert_eq(ceiling, 1e9);
    cr_assert_float_eq(share, peak / 1e9, 1e-15);
    cr_assert_not(warned);
}

Test(ceiling, without_a_ceiling_the_fields_are_null_and_nothing_warns, .timeout = 60)
{
    double peak, ceiling, share;
    bool warned;
    run_against(0, &peak, &ceiling, &share, &warned);
    cr_assert(isfinite(peak), "the peak is measured whatever the ceiling");
    cr_assert(isnan(ceiling) && isnan(share));
    cr_assert_not(warned);
}

Test(ceiling, measures_and_writes_the_file_every_run_reads, .timeout = 120)
{
    char dir[128], cache[160], path[224], out[16384], err[8192];
    tmpdir(dir, sizeof dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    snprintf(path, sizeof path, "%s/anvil/ceiling.json", cache);
    const char *argv[] = {harness_anvil_bin(), "ceiling", "--max-seconds", "30", "--start-concurrency", "1",
                          "--max-concurrency", "2", "--output-len", "20", "--rounds", "2",
                          "--sim-bin", harness_reference_sim_bin(), NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert(strstr(out, "concurrency") && strstr(out, "peak ev/s"), "the table's header: %s", out);
    if (status == 1) {     /* a loaded machine may miss 1 ms even at one stream: then it says so */
        cr_assert(strstr(err, "no step had every first-token stamp within 1 ms"), "%s\n%s", out, err);
        cr_assert_neq(access(path, F_OK), 0, "nothing written");
        return;
    }
    cr_assert_eq(status, 0, "%s\n%s", out, err);
    cr_assert(strstr(out, path), "it names the file: %s", out);
    cJSON *j = harness_load_json(path);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "schema")), "anvil.ceiling/v1");
    double ev = harness_num(j, "events_per_s");
    cr_assert_gt(ev, 0);
    cr_assert_eq(harness_num(j, "threads"), 1);
    /* auto: the simulator is plain http://, so anvil's own transport */
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "transport")), "native");
    char host[256] = "";
    gethostname(host, sizeof host);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "host")), host);
    const char *at = cJSON_GetStringValue(cJSON_GetObjectItem(j, "measured_at"));
    cr_assert(at && strlen(at) == 20 && at[4] == '-' && at[10] == 'T' && at[19] == 'Z', "%s", at ? at : "null");
    cr_assert(cJSON_GetStringValue(cJSON_GetObjectItem(j, "anvil_version")));
    /* the ceiling is the fullest step within 1 ms, and the steps went 1, 2 */
    const cJSON *s, *steps = cJSON_GetObjectItem(j, "steps");
    double best = 0, conc = 0;
    int k = 0;
    cJSON_ArrayForEach(s, steps) {
        cr_assert_eq(harness_num(s, "concurrency"), k == 0 ? 1 : 2);
        bool within = cJSON_IsTrue(cJSON_GetObjectItem(s, "within"));
        cr_assert_eq(within, harness_num(s, "late") == 0 && harness_num(s, "failed") == 0);
        cr_assert_eq(harness_num(s, "requests"), 2 * harness_num(s, "concurrency"));
        if (within && harness_num(s, "events_per_s") > best) {
            best = harness_num(s, "events_per_s");
            conc = harness_num(s, "concurrency");
        }
        k++;
    }
    cr_assert(k >= 1 && k <= 2);
    cr_assert_eq(ev, best);
    cr_assert_eq(harness_num(j, "concurrency"), conc);
    cJSON_Delete(j);
    /* a run now compares itself with it */
    const char *sim_args[] = {"--ttft-ms", "10", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char art[192];
    snprintf(art, sizeof art, "%s/run.json", dir);
    run(&sim, "1", "2", "10", art, NULL, err, sizeof err, &status);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert_eq(num_or_nan(a, "client.ceiling_events_per_s"), ev);
    cJSON_Delete(a);
}

Test(ceiling, the_ceiling_file_flag_wins_and_empty_means_none, .timeout = 60)
{
    char dir[128], cache[160], other[224], art[192], err[8192];
    tmpdir(dir, sizeof dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    mkdir(cache, 0755);
    fake_ceiling(cache, 10);
    setenv("XDG_CACHE_HOME", cache, 1);
    snprintf(other, sizeof other, "%s/elsewhere", dir);
    mkdir(other, 0755);
    fake_ceiling(other, 1e9);
    snprintf(other, sizeof other, "%s/elsewhere/anvil/ceiling.json", dir);
    const char *sim_args[] = {"--ttft-ms", "10", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    snprintf(art, sizeof art, "%s/a.json", dir);
    int status;
    const char *flag[] = {"--ceiling-file", other, NULL};
    run(&sim, "1", "2", "10", art, flag, err, sizeof err, &status);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert_eq(num_or_nan(a, "client.ceiling_events_per_s"), 1e9);
    cJSON_Delete(a);
    const char *none[] = {"--ceiling-file", "", NULL};
    snprintf(art, sizeof art, "%s/b.json", dir);
    run(&sim, "1", "2", "10", art, none, err, sizeof err, &status);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", err);
    a = harness_load_json(art);
    cr_assert(isnan(num_or_nan(a, "client.ceiling_events_per_s")));
    cJSON_Delete(a);
    cr_assert_null(strstr(err, "ceiling"), "%s", err);
}

Test(ceiling, a_merged_run_keeps_its_fullest_shard_and_their_one_ceiling, .timeout = 90)
{
    char dir[128], cache[160], s[2][192], merged[192], o[16384], e[8192];
    tmpdir(dir, sizeof dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    mkdir(cache, 0755);
    fake_ceiling(cache, 1e6);
    setenv("XDG_CACHE_HOME", cache, 1);
    const char *sim_args[] = {"--ttft-ms", "10", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "8", "--concurrency", "4", "--input-len", "16",
                          "--output-len", "30", "--calibration", "none", "--server-metrics", "off", NULL};
    scaleout_run_shards(dir, 2, tail);
    cr_assert_eq(sim_stop(&sim), 0);
    double peak = 0;
    for (int i = 0; i < 2; i++) {
        snprintf(s[i], sizeof s[i], "%s/s%d.json", dir, i);
        cJSON *a = harness_load_json(s[i]);
        double p = num_or_nan(a, "client.peak_events_per_s_per_thread");
        cr_assert(p > 0 && num_or_nan(a, "client.ceiling_events_per_s") == 1e6);
        peak = p > peak ? p : peak;
        cJSON_Delete(a);
    }
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    const char *argv[] = {harness_anvil_bin(), "merge", "--out", merged, s[0], s[1], NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 0, "%s", e);
    cJSON *m = harness_load_json(merged);
    cr_assert_eq(num_or_nan(m, "client.peak_events_per_s_per_thread"), peak);
    cr_assert_eq(num_or_nan(m, "client.ceiling_events_per_s"), 1e6);
    cr_assert_float_eq(num_or_nan(m, "client.ceiling_share"), peak / 1e6, 1e-12);
    cJSON_Delete(m);
}
