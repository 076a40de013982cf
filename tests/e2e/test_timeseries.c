/* test_timeseries.c — the artifact's timeseries against the run's own
 * records: a short duration-mode run on a simulator that fails some
 * requests; every column sums to the artifact's totals, and each row's
 * counts and percentiles are recomputed from request_timings and the
 * journal (the records as they ended), not from the code that made them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"
#include "scaleout.h"

#define MAX_ROWS 64
#define MAX_LINES 4096

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank p of the n values (sorted here): element ⌈p·n/100⌉. */
static double nearest(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)ceil(p * (double)n / 100.0 - 1e-9);
    return v[(k < 1 ? 1 : k) - 1];
}

/* What one row should hold, recomputed. */
struct want {
    long started, completed, failed, cut, tokens;
    double ttft[512], itl[8192];
    size_t n_ttft, n_itl;
};

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Row of an instant (CLOCK_MONOTONIC ns) for rows of width w_ns from t0. */
static long row_of(double t_ns, double t0, double w_ns)
{
    return t_ns > t0 ? (long)floor((t_ns - t0) / w_ns) : 0;
}

/* From the journal (every measured request as it ended): starts, failures,
 * cuts and the inter-chunk gaps of completed requests, per row. */
static void from_journal(const char *path, double t0, double w_ns, struct want *w, long n_rows)
{
    static cJSON *lines[MAX_LINES];
    int n = harness_read_jsonl(path, lines, MAX_LINES);
    cr_assert_gt(n, 1, "journal %s", path);
    double jt0 = atof(cJSON_GetObjectItem(lines[0], "t0_ns")->valuestring);
    for (int i = 1; i < n; i++) {
        const cJSON *r = lines[i];
        if (cJSON_IsTrue(cJSON_GetObjectItem(r, "warmup")) || !cJSON_GetObjectItem(r, "t_start")) {
            cJSON_Delete(lines[i]);
            continue;
        }
        long ks = row_of(jt0 + num(r, "t_start"), t0, w_ns), ke = row_of(jt0 + num(r, "t_end"), t0, w_ns);
        cr_assert_lt(ke, n_rows, "request %g ends after the last row", num(r, "index"));
        w[ks].started++;
        const cJSON *fail = cJSON_GetObjectItem(r, "fail");
        if (cJSON_IsTrue(cJSON_GetObjectItem(r, "cut")))
            w[ke].cut++;
        else if (cJSON_IsString(fail) && strcmp(fail->valuestring, "none"))
            w[ke].failed++;
        else {
            const cJSON *ch = cJSON_GetObjectItem(r, "chunks");
            for (int c = 1; c < cJSON_GetArraySize(ch); c++) {
                double gap = (cJSON_GetArrayItem(cJSON_GetArrayItem(ch, c), 0)->valuedouble -
                              cJSON_GetArrayItem(cJSON_GetArrayItem(ch, c - 1), 0)->valuedouble) / 1e6;
                cr_assert_lt(w[ke].n_itl, 8192);
                w[ke].itl[w[ke].n_itl++] = gap;
            }
        }
        cJSON_Delete(lines[i]);
    }
    cJSON_Delete(lines[0]);
}

/* From request_timings (completed requests): ends, tokens and TTFT per row. */
static void from_timings(const cJSON *art, double t0, double w_ns, struct want *w, long n_rows)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(art, "request_timings")) {
        double end = num(t, "start_monotonic_ns") + (double)llround(num(t, "e2e_ms") * 1e6);
        long k = row_of(end, t0, w_ns);
        cr_assert_lt(k, n_rows);
        w[k].completed++;
        w[k].tokens += (long)num(t, "output_tokens");
        cr_assert_lt(w[k].n_ttft, 512);
        w[k].ttft[w[k].n_ttft++] = num(t, "ttft_ms");
    }
}

Test(timeseries_e2e, sums_to_the_totals_and_rows_recompute_from_the_records, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "20", "--itl-ms", "5", "--fail-rate", "0.15",
                              "--stream-error-rate", "0.1", "--seed", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char path[64];
    cr_assert_eq(harness_tmpfile(path, sizeof path), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--duration", "5",
                          "--concurrency", "4", "--input-len", "32", "--output-len", "16",
                          "--timeseries-interval-s", "1", "--max-failure-rate", "1", "--out", path, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cJSON *art = harness_load_json(path);
    const cJSON *ts = cJSON_GetObjectItem(art, "timeseries"), *rows = cJSON_GetObjectItem(ts, "rows");
    cr_assert_eq(harness_num(ts, "interval_s"), 1);
    cr_assert_eq(harness_num(ts, "exact_from_s"), 0);
    long n_rows = cJSON_GetArraySize(rows);
    cr_assert(n_rows >= 5 && n_rows <= MAX_ROWS, "%ld rows for a 5 s run", n_rows);
    double t0 = harness_num(ts, "t0_monotonic_ns");

    /* the sums are the artifact's totals */
    long sum[5] = {0};
    const char *cols[5] = {"started", "completed", "failed", "cut", "output_tokens"};
    const cJSON *r;
    cJSON_ArrayForEach(r, rows)
        for (int c = 0; c < 5; c++)
            sum[c] += (long)harness_num(r, cols[c]);
    const cJSON *dm = cJSON_GetObjectItem(art, "duration_mode");
    cr_assert_eq(sum[0], (long)harness_num(dm, "requests_started_in_window"));
    cr_assert_eq(sum[1], (long)harness_num(art, "completed"));
    cr_assert_eq(sum[2], (long)harness_num(art, "failed"));
    cr_assert_gt(sum[2], 0, "the simulator's faults failed some requests");
    cr_assert_eq(sum[3], (long)harness_num(dm, "incomplete_requests"));
    cr_assert_eq(sum[4], (long)harness_num(cJSON_GetObjectItem(art, "metrics"), "output_tokens"));

    /* each row, recomputed from the records */
    static struct want w[MAX_ROWS];
    memset(w, 0, sizeof w);
    from_timings(art, t0, 1e9, w, n_rows);
    char journal[600];
    snprintf(journal, sizeof journal, "%.*s%s.requests.jsonl", (int)(strrchr(path, '/') - path + 1), path,
             cJSON_GetObjectItem(art, "run_id")->valuestring);
    from_journal(journal, t0, 1e9, w, n_rows);
    bool late = harness_num(ts, "late_requests") > 0;
    long in_flight = 0;
    for (long k = 0; k < n_rows; k++) {
        r = cJSON_GetArrayItem(rows, (int)k);
        cr_assert_eq(harness_num(r, "t_s"), (double)k);
        cr_assert_eq((long)harness_num(r, "started"), w[k].started, "row %ld: started %g, recomputed %ld", k,
                     harness_num(r, "started"), w[k].started);
        cr_assert_eq((long)harness_num(r, "completed"), w[k].completed, "row %ld: completed %g, recomputed %ld", k,
                     harness_num(r, "completed"), w[k].completed);
        cr_assert_eq((long)harness_num(r, "failed"), w[k].failed, "row %ld: failed %g, recomputed %ld", k,
                     harness_num(r, "failed"), w[k].failed);
        cr_assert_eq((long)harness_num(r, "cut"), w[k].cut, "row %ld: cut %g, recomputed %ld", k,
                     harness_num(r, "cut"), w[k].cut);
        cr_assert_eq((long)harness_num(r, "output_tokens"), w[k].tokens, "row %ld: output_tokens %g, recomputed %ld", k,
                     harness_num(r, "output_tokens"), w[k].tokens);
        in_flight += w[k].started - w[k].completed - w[k].failed - w[k].cut;
        cr_assert_eq((long)harness_num(r, "in_flight"), in_flight, "row %ld", k);
        /* a request reported after its row closed is left out of that row's percentiles */
        if (late && (size_t)harness_num(r, "ttft_samples") != w[k].n_ttft)
            continue;
        cr_assert_eq((size_t)harness_num(r, "ttft_samples"), w[k].n_ttft, "row %ld", k);
        cr_assert_eq((size_t)harness_num(r, "itl_samples"), w[k].n_itl, "row %ld: %g itl samples, %zu gaps in the journal", k, harness_num(r, "itl_samples"), w[k].n_itl);
        if (!w[k].n_ttft) {
            cr_assert(cJSON_IsNull(cJSON_GetObjectItem(r, "ttft_p50_ms")), "row %ld", k);
            continue;
        }
        cr_assert_float_eq(num(r, "ttft_p50_ms"), nearest(w[k].ttft, w[k].n_ttft, 50), 1e-5, "row %ld", k);
        cr_assert_float_eq(num(r, "ttft_p99_ms"), nearest(w[k].ttft, w[k].n_ttft, 99), 1e-5, "row %ld", k);
        if (w[k].n_itl) {
            cr_assert_float_eq(num(r, "itl_p50_ms"), nearest(w[k].itl, w[k].n_itl, 50), 1e-5, "row %ld", k);
            cr_assert_float_eq(num(r, "itl_p99_ms"), nearest(w[k].itl, w[k].n_itl, 99), 1e-5, "row %ld", k);
        }
        /* the server's gauges were scraped every second: the rows inside the load have them */
        if (k >= 1 && k < 4)
            cr_assert(cJSON_IsObject(cJSON_GetObjectItem(r, "server")), "row %ld has no server gauges", k);
    }
    cr_assert_eq(in_flight, 0, "every request ended");
    cJSON_Delete(art);
    unlink(journal);
    unlink(path);
}

Test(timeseries_e2e, interval_must_be_positive, .timeout = 30)
{
    const char *bad[] = {"0", "-1", "abc"};
    for (int i = 0; i < 3; i++) {
        const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1",
                              "--timeseries-interval-s", bad[i], NULL};
        char out[4096];
        int status;
        cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
        cr_assert_eq(status, 2, "--timeseries-interval-s %s: exit %d", bad[i], status);
    }
}

/* The mean of column col of the series' points (t0_monotonic_ns + t_ms)
 * whose times fall in [lo, hi) ns, NaN when none; *n gets how many. */
static double series_mean(const cJSON *series, const cJSON *col, double lo, double hi, int *n)
{
    double t0 = num(series, "t0_monotonic_ns"), sum = 0;
    const cJSON *t_ms = cJSON_GetObjectItem(series, "t_ms");
    *n = 0;
    for (int i = 0; i < cJSON_GetArraySize(t_ms); i++) {
        double t = t0 + cJSON_GetArrayItem(t_ms, i)->valuedouble * 1e6;
        const cJSON *v = cJSON_GetArrayItem(col, i);
        if (t >= lo && t < hi && cJSON_IsNumber(v)) {
            sum += v->valuedouble;
            (*n)++;
        }
    }
    return *n ? sum / *n : NAN;
}

/* The gauges of each row: the server's from server_metrics.series, two
 * GPUs' from a DCGM exporter's scrape (constant: util averaged, power and
 * memory summed, the hottest temperature). */
Test(timeseries_e2e, rows_carry_the_server_and_gpu_gauges_of_their_interval, .timeout = 120)
{
    char file[64], url[128], path[64];
    cr_assert_eq(harness_tmpfile(file, sizeof file), 0);
    FILE *f = fopen(file, "w");
    fputs("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
          "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-d0\",modelName=\"NVIDIA A100-SXM4-80GB\"} 91\n"
          "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-d1\",modelName=\"NVIDIA A100-SXM4-80GB\"} 51\n"
          "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-d0\"} 310.5\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-d1\"} 100\n"
          "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-d0\"} 61\nDCGM_FI_DEV_GPU_TEMP{gpu=\"1\",UUID=\"GPU-d1\"} 70\n"
          "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-d0\"} 70000\nDCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-d0\"} 11920\n"
          "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-d1\"} 1000\nDCGM_FI_DEV_FB_FREE{gpu=\"1\",UUID=\"GPU-d1\"} 80920\n", f);
    fclose(f);
    snprintf(url, sizeof url, "file://%s", file);
    cr_assert_eq(harness_tmpfile(path, sizeof path), 0);
    const char *sim_args[] = {"--ttft-ms", "10", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "2",
                          "--num-prompts", "20", "--input-len", "32", "--output-len", "40",
                          "--timeseries-interval-s", "0.5", "--scrape-interval-ms", "100",
                          "--telemetry-interval-ms", "100", "--gpu-metrics-url", url, "--out", path, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    unlink(file);
    cr_assert_eq(status, 0, "%s", out);
    cJSON *art = harness_load_json(path);
    unlink(path);
    const cJSON *ts = cJSON_GetObjectItem(art, "timeseries"), *rows = cJSON_GetObjectItem(ts, "rows");
    const cJSON *srv = harness_json_path(art, "server_metrics.series");
    cr_assert(cJSON_IsObject(srv), "the server was scraped");
    double t0 = harness_num(ts, "t0_monotonic_ns"), w = harness_num(ts, "interval_s") * 1e9;
    cr_assert_eq(w, 0.5e9);
    int with_gpu = 0;
    for (int k = 0; k < cJSON_GetArraySize(rows); k++) {
        const cJSON *r = cJSON_GetArrayItem(rows, k), *s = cJSON_GetObjectItem(r, "server");
        double lo = t0 + num(r, "t_s") * 1e9;
        int n;
        double running = series_mean(srv, cJSON_GetObjectItem(srv, "running_requests"), lo, lo + w, &n);
        if (!n) {
            cr_assert(cJSON_IsNull(s), "row %d: no scrape in it, yet server gauges", k);
        } else {
            cr_assert_float_eq(num(s, "running_requests"), running, 1e-9, "row %d", k);
            double kv = series_mean(srv, cJSON_GetObjectItem(srv, "kv_cache_usage"), lo, lo + w, &n);
            cr_assert_float_eq(num(s, "kv_cache_usage"), kv, 1e-9, "row %d", k);
        }
        const cJSON *g = cJSON_GetObjectItem(r, "gpu");
        if (cJSON_IsNull(g))
            continue;
        with_gpu++;
        cr_assert_float_eq(num(g, "util_pct"), 71, 1e-9, "row %d: the mean of 91 and 51", k);
        cr_assert_float_eq(num(g, "power_w"), 410.5, 1e-9, "row %d: the GPUs' sum", k);
        cr_assert_float_eq(num(g, "temp_c"), 70, 1e-9, "row %d: the hottest", k);
        cr_assert_float_eq(num(g, "mem_used_mb"), 71000, 1e-9, "row %d", k);
    }
    cr_assert_geq(with_gpu, 2, "the GPU exporter was read every 100 ms");
    cJSON_Delete(art);
}

/* Column col summed over the rows of art's timeseries. */
static long column_sum(const cJSON *art, const char *col)
{
    long sum = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, harness_json_path(art, "timeseries.rows"))
        sum += (long)harness_num(r, col);
    return sum;
}

/* An artifact rebuilt from records after the fact has the series too:
 * `anvil recover` from the journal (the same rows as the run's), `anvil
 * merge` of two shards (the whole run's, summing to its totals). */
Test(timeseries_e2e, recovered_and_merged_artifacts_have_the_series, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "15", "--itl-ms", "2", "--fail-rate", "0.3", "--seed", "9", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-ts-XXXXXX", run[128], rec[128], merged[128], s0[128], s1[128], journal[300];
    cr_assert(mkdtemp(dir));
    snprintf(run, sizeof run, "%s/run.json", dir);
    snprintf(rec, sizeof rec, "%s/recovered.json", dir);
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    snprintf(s0, sizeof s0, "%s/s0.json", dir);
    snprintf(s1, sizeof s1, "%s/s1.json", dir);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "40", "--concurrency", "4",
                          "--input-len", "32", "--output-len", "8", "--calibration", "none",
                          "--max-failure-rate", "1", "--timeseries-interval-s", "0.25", NULL};
    const char *argv[32] = {harness_anvil_bin(), "run", "--out", run};
    int k = 4, status;
    for (int i = 0; tail[i]; i++)
        argv[k++] = tail[i];
    argv[k] = NULL;
    static char o[65536];
    cr_assert_eq(run_cmd(argv, o, sizeof o, &status), 0);
    cr_assert_eq(status, 0, "%s", o);
    cJSON *a = harness_load_json(run);
    snprintf(journal, sizeof journal, "%s/%s.requests.jsonl", dir, cJSON_GetObjectItem(a, "run_id")->valuestring);
    const char *rargv[] = {harness_anvil_bin(), "recover", journal, "--out", rec, NULL};
    cr_assert_eq(run_cmd(rargv, o, sizeof o, &status), 0);
    cr_assert_eq(status, 0, "%s", o);
    cJSON *r = harness_load_json(rec);
    /* recovered at the default interval (the journal does not keep the flag) */
    cr_assert_eq(harness_num(harness_json_path(r, "timeseries"), "interval_s"), 1);
    const char *cols[] = {"started", "completed", "failed", "output_tokens"};
    for (int c = 0; c < 4; c++)
        cr_assert_eq(column_sum(r, cols[c]), column_sum(a, cols[c]), "%s", cols[c]);
    cr_assert_eq(column_sum(r, "completed"), (long)harness_num(r, "completed"));
    cr_assert_eq(column_sum(r, "failed"), (long)harness_num(r, "failed"));
    cr_assert_gt(column_sum(r, "failed"), 0);
    cJSON_Delete(r);
    cJSON_Delete(a);

    scaleout_run_shards(dir, 2, tail);
    const char *margv[] = {harness_anvil_bin(), "merge", "--max-failure-rate", "1", "--out", merged, s0, s1, NULL};
    cr_assert_eq(run_cmd(margv, o, sizeof o, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", o);
    cJSON *m = harness_load_json(merged);
    cr_assert_eq(harness_num(harness_json_path(m, "timeseries"), "interval_s"), 0.25, "the shards' interval");
    cr_assert_eq(column_sum(m, "started"), 40);
    cr_assert_eq(column_sum(m, "completed"), (long)harness_num(m, "completed"));
    cr_assert_eq(column_sum(m, "failed"), (long)harness_num(m, "failed"));
    cr_assert_eq(column_sum(m, "output_tokens"), (long)harness_num(harness_json_path(m, "metrics"), "output_tokens"));
    cJSON_Delete(m);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
