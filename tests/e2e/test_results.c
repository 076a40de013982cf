/* test_results.c — reading results back: `anvil show` prints every kind
 * of artifact anvil writes (a sweep's rounds, matrix and load curve, and
 * graph data), `anvil compare` compares two sweeps' rounds, and `anvil graph`
 * reproduces seed 000 from artifacts made here (each value and sha256
 * checked against the files). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/any.h"
#include "artifact/json.h"
#include "harness.h"

static void tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/anvil-results-XXXXXX");
    cr_assert(mkdtemp(out));
}

static void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void write_json(const char *path, const cJSON *j)
{
    char err[256];
    cr_assert_eq(artifact_write_file(path, j, err, sizeof err), 0, "%s", err);
}

/* sha256sum's digest of the file (independent of anvil's). */
static void sha256sum(const char *path, char out[65])
{
    char buf[256];
    int status;
    cr_assert_eq(run_cmd((const char *[]){"sha256sum", path, NULL}, buf, sizeof buf, &status), 0);
    cr_assert_eq(status, 0);
    memcpy(out, buf, 64);
    out[64] = '\0';
}

/* The seed's points' artifacts, made here: each holds every metric any
 * chart takes from it, with the seed's value. */
static void make_artifacts(const cJSON *seed, const char *dir)
{
    cJSON *files = cJSON_CreateObject();
    const cJSON *chart, *series, *pt;
    cJSON_ArrayForEach(chart, cJSON_GetObjectItem(seed, "charts")) {
        const char *metric = cJSON_GetObjectItem(chart, "metric")->valuestring;
        cr_assert(!strncmp(metric, "metrics.", 8));
        cJSON_ArrayForEach(series, cJSON_GetObjectItem(chart, "series"))
            cJSON_ArrayForEach(pt, cJSON_GetObjectItem(series, "points")) {
                const char *name = cJSON_GetObjectItem(pt, "artifact")->valuestring;
                cJSON *art = cJSON_GetObjectItem(files, name);
                if (!art) {
                    art = cJSON_AddObjectToObject(files, name);
                    cJSON_AddStringToObject(art, "schema", "anvil-serving.benchmark/v1");
                    cJSON_AddObjectToObject(art, "metrics");
                }
                cJSON *m = cJSON_GetObjectItem(art, "metrics");
                if (!cJSON_GetObjectItem(m, metric + 8))
                    cJSON_AddNumberToObject(m, metric + 8, cJSON_GetObjectItem(pt, "value")->valuedouble);
            }
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, files) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, f->string);
        write_json(path, f);
    }
    cJSON_Delete(files);
}

/* The plan of the seed: its charts with points as {x, artifact}, except
 * chart 0's series 0 as an object {x: file}; its own semantic keys that are
 * not METHODOLOGY's metrics. */
static cJSON *plan_of(const cJSON *seed)
{
    cJSON *plan = cJSON_CreateObject();
    cJSON_AddItemToObject(plan, "title", cJSON_Duplicate(cJSON_GetObjectItem(seed, "title"), 1));
    cJSON_AddItemToObject(plan, "subtitle", cJSON_Duplicate(cJSON_GetObjectItem(seed, "subtitle"), 1));
    cJSON *sem = cJSON_AddObjectToObject(plan, "metric_semantics");
    const cJSON *ssem = cJSON_GetObjectItem(seed, "metric_semantics");
    cJSON_AddItemToObject(sem, "topology", cJSON_Duplicate(cJSON_GetObjectItem(ssem, "topology"), 1));
    cJSON_AddItemToObject(sem, "comparison_set", cJSON_Duplicate(cJSON_GetObjectItem(ssem, "comparison_set"), 1));
    cJSON *charts = cJSON_Duplicate(cJSON_GetObjectItem(seed, "charts"), 1);
    cJSON *chart, *series, *pt;
    int c = 0;
    cJSON_ArrayForEach(chart, charts) {
        int s = 0;
        cJSON_ArrayForEach(series, cJSON_GetObjectItem(chart, "series")) {
            cJSON *pts = cJSON_GetObjectItem(series, "points");
            if (c == 0 && s == 0) {
                cJSON *obj = cJSON_CreateObject();
                cJSON_ArrayForEach(pt, pts)
                    cJSON_AddStringToObject(obj, cJSON_GetObjectItem(pt, "x")->valuestring,
                                            cJSON_GetObjectItem(pt, "artifact")->valuestring);
                cJSON_ReplaceItemInObject(series, "points", obj);
            } else {
                cJSON_ArrayForEach(pt, pts) {
                    cJSON_DeleteItemFromObject(pt, "value");
                    cJSON_DeleteItemFromObject(pt, "artifact_sha256");
                }
            }
            s++;
        }
        c++;
    }
    cJSON_AddItemToObject(plan, "charts", charts);
    return plan;
}

Test(results_e2e, graph_reproduces_seed_000_from_artifacts_made_here, .timeout = 60)
{
    cJSON *seed = harness_load_json("tests/data/seed-000.json");
    char dir[64], plan_path[128], out_path[128];
    tmpdir(dir, sizeof dir);
    make_artifacts(seed, dir);
    cJSON *plan = plan_of(seed);
    snprintf(plan_path, sizeof plan_path, "%s/plan.json", dir);
    snprintf(out_path, sizeof out_path, "%s/graph.json", dir);
    write_json(plan_path, plan);
    cJSON_Delete(plan);
    char out[4096], err[4096];
    int status;
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "graph", plan_path, "--out", out_path, NULL},
                             out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *got = harness_load_json(out_path);
    /* the seed with our files' digests is what anvil wrote, but for metric_semantics */
    cJSON *want = cJSON_Duplicate(seed, 1);
    cJSON *chart, *series, *pt;
    int points = 0;
    cJSON_ArrayForEach(chart, cJSON_GetObjectItem(want, "charts"))
        cJSON_ArrayForEach(series, cJSON_GetObjectItem(chart, "series"))
            cJSON_ArrayForEach(pt, cJSON_GetObjectItem(series, "points")) {
                char path[512], sha[65];
                snprintf(path, sizeof path, "%s/%s", dir, cJSON_GetObjectItem(pt, "artifact")->valuestring);
                sha256sum(path, sha);
                cJSON_ReplaceItemInObject(pt, "artifact_sha256", cJSON_CreateString(sha));
                points++;
            }
    cr_assert_gt(points, 40);
    cJSON *gsem = cJSON_DetachItemFromObject(got, "metric_semantics");
    cJSON_Delete(cJSON_DetachItemFromObject(want, "metric_semantics"));
    cr_assert(cJSON_Compare(want, got, true), "graph data differs from seed 000 (values, names or digests)");
    /* the plan's own sentences, then METHODOLOGY's definitions of every charted metric */
    const char *keys[] = {"topology", "comparison_set", "ttft", "e2e", "tpot", "decode", "effective_prefill",
                          "aggregate", "percentiles"};
    cr_assert_eq(cJSON_GetArraySize(gsem), (int)(sizeof keys / sizeof *keys));
    cr_assert_str_eq(cJSON_GetArrayItem(gsem, 0)->string, "topology");
    cr_assert_str_eq(cJSON_GetArrayItem(gsem, 1)->string, "comparison_set");
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_assert(cJSON_IsString(cJSON_GetObjectItem(gsem, keys[i])), "no %s in metric_semantics", keys[i]);
    char *doc = harness_read_file("docs/METHODOLOGY.md", NULL);
    for (size_t i = 2; i < sizeof keys / sizeof *keys; i++)
        cr_assert(strstr(doc, cJSON_GetObjectItem(gsem, keys[i])->valuestring), "%s", keys[i]);
    free(doc);
    /* show reads it back */
    static char shown[65536];
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "show", out_path, NULL}, shown, sizeof shown,
                             err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(shown, "4K/C8 n100 TTFT p50 (metrics.ttft_p50_ms)") && strstr(shown, "2331.26"), "%s", shown);
    cJSON_Delete(gsem);
    cJSON_Delete(got);
    cJSON_Delete(want);
    cJSON_Delete(seed);
    rmtree(dir);
}

Test(results_e2e, graph_names_the_missing_artifact_or_metric, .timeout = 30)
{
    char dir[64], plan_path[128], art[160];
    tmpdir(dir, sizeof dir);
    snprintf(plan_path, sizeof plan_path, "%s/plan.yaml", dir);
    snprintf(art, sizeof art, "%s/a.json", dir);
    FILE *f = fopen(art, "w");
    fputs("{\"metrics\": {\"ttft_p50_ms\": 12.5}}\n", f);
    fclose(f);
    const char *plans[][2] = {
        {"metrics.ttft_p99_ms", "a.json"},      /* the metric is not in the artifact */
        {"metrics.ttft_p50_ms", "gone.json"},   /* the artifact is not there */
    };
    const char *want[][2] = {{"a.json: metric metrics.ttft_p99_ms: absent", "points[0]"},
                             {"gone.json: cannot read the artifact", "points[0]"}};
    for (int i = 0; i < 2; i++) {
        f = fopen(plan_path, "w");
        fprintf(f, "title: t\ncharts:\n  - metric: %s\n    title: T\n    x_label: x\n    y_label: ms\n"
                   "    series:\n      - label: s\n        points:\n          cfg: %s\n", plans[i][0], plans[i][1]);
        fclose(f);
        char out[1024], err[2048];
        int status;
        cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "graph", plan_path, NULL}, out, sizeof out,
                                 err, sizeof err, &status), 0);
        cr_assert_eq(status, 2);
        cr_assert(strstr(err, plan_path) && strstr(err, want[i][0]) && strstr(err, want[i][1]), "%s", err);
    }
    rmtree(dir);
}

/* Runs a sweep of two concurrencies × rounds against the simulator into dir. */
static void sweep(const char *dir, const char *ttft_ms, const char *rounds)
{
    const char *sim_args[] = {"--ttft-ms", ttft_ms, "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char targets[200];
    snprintf(targets, sizeof targets, "sim=%s", sim.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,2",
                          "--input-len", "16", "--output-len", "4", "--rounds", rounds, "--num-prompts", "4",
                          "--slo", "ttft:100,tpot:20", "--out-dir", dir, NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
}

static void show_ok(const char *path, const char *format, const char *want)
{
    static char out[262144];
    char err[2048];
    int status;
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "show", path, "--format", format, NULL}, out,
                             sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "show %s: %s", path, err);
    cr_assert(strstr(out, want), "show %s --format %s lacks '%s':\n%s", path, format, want, out);
}

Test(results_e2e, show_and_compare_what_anvil_writes, .timeout = 180)
{
    char a[64], b[64], path[256];
    tmpdir(a, sizeof a);
    tmpdir(b, sizeof b);
    sweep(a, "2", "3");
    sweep(b, "40", "3");
    snprintf(path, sizeof path, "%s/rounds/sim/short-16-4-c2/round-1.json", a);
    show_ok(path, "table", "Successful requests:");
    show_ok(path, "csv", "\nSuccessful requests,");     /* a key in CSV: no colon */
    show_ok(path, "markdown", "| TTFT |");
    snprintf(path, sizeof path, "%s/matrix.json", a);
    show_ok(path, "table", "short-16-4-c2");
    show_ok(path, "csv", "engine,case,in,out,conc,rounds");
    snprintf(path, sizeof path, "%s/load-curve.json", a);
    show_ok(path, "table", "SLO TTFT (ms):");
    show_ok(path, "json", "\"tables\"");
    /* B's server takes 40 ms to the first token, A's 2: B's TTFT is worse beyond noise */
    static char out[65536];
    char err[2048];
    int status;
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", a, b, "--format", "csv", NULL}, out,
                             sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "# A sim/short-16-4-c1 (rounds: 3) vs B sim/short-16-4-c1 (rounds: 3)"), "%s", out);
    cr_assert(strstr(out, "# A sim/short-16-4-c2 (rounds: 3) vs B sim/short-16-4-c2 (rounds: 3)"), "%s", out);
    char *row = strstr(out, "TTFT p50 (ms),");
    cr_assert(row && strstr(row, ",worse,") && strstr(row, "bootstrap 95% CI of the median"), "%s", out);
    /* one round against itself: every metric the same, none better or worse (before: each
     * "better" or "worse" by its last bits); against B's: no noise estimate, and it says so */
    char r1[256], r2[256];
    snprintf(r1, sizeof r1, "%s/rounds/sim/short-16-4-c1/round-1.json", a);
    snprintf(r2, sizeof r2, "%s/rounds/sim/short-16-4-c1/round-1.json", b);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", r1, r1, "--format", "csv", NULL},
                             out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "TTFT p50 (ms),"), "%s", out);
    cr_assert(!strstr(out, ",better") && !strstr(out, ",worse") && !strstr(out, ",-0.0"), "%s", out);
    cr_assert(strstr(out, ",same (no noise estimate: 1 round each),"), "%s", out);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", r1, r2, "--format", "csv", NULL},
                             out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    row = strstr(out, "TTFT p50 (ms),");
    cr_assert(row && strchr(row, '\n'), "%s", out);
    *strchr(row, '\n') = '\0';
    cr_assert(strstr(row, ",worse (no noise estimate: 1 round each),"), "%s", row);
    /* one round of each at different concurrency: refused, then forced */
    snprintf(r2, sizeof r2, "%s/rounds/sim/short-16-4-c2/round-1.json", b);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", r1, r2, NULL}, out, sizeof out, err,
                             sizeof err, &status), 0);
    cr_assert_eq(status, 2);
    cr_assert(strstr(err, "refusing to compare") && strstr(err, "concurrency differs (1 vs 2)"), "%s", err);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", r1, r2, "--force", "--format",
                                              "markdown", NULL}, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "compared despite different workloads"), "%s", out);
    /* the two sweeps' matrices: the same verdicts from their rows */
    char ma[128], mb[128], mc[128];
    snprintf(ma, sizeof ma, "%s/matrix.json", a);
    snprintf(mb, sizeof mb, "%s/matrix.json", b);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", ma, mb, "--format", "csv", NULL}, out,
                             sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "# A sim/short-16-4-c2 (rounds: 3) vs B sim/short-16-4-c2 (rounds: 3)"), "%s", out);
    row = strstr(out, "TTFT p50 (ms),");
    cr_assert(row && strstr(row, ",worse,") && strstr(row, "bootstrap 95% CI of the median"), "%s", out);
    cr_assert(strstr(out, "matrices: each row is a round"), "%s", out);
    /* a matrix against a sweep directory: the rounds compared as rows */
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", ma, b, "--format", "markdown", NULL},
                             out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "compared as a matrix's rows"), "%s", out);
    row = strstr(out, "| TTFT p50 (ms) |");
    cr_assert(row && strstr(row, "| worse |"), "%s", out);
    /* B's matrix with other output lengths: refused, then forced */
    cJSON *m = harness_load_json(mb);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(m, "rows"))
        cJSON_SetNumberValue(cJSON_GetObjectItem(it, "output_tokens"), 8);
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(m, "aggregates"))
        cJSON_SetNumberValue(cJSON_GetObjectItem(it, "output_tokens"), 8);
    snprintf(mc, sizeof mc, "%s/other.json", b);
    write_json(mc, m);
    cJSON_Delete(m);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", ma, mc, NULL}, out, sizeof out, err,
                             sizeof err, &status), 0);
    cr_assert_eq(status, 2, "%s", out);
    cr_assert(strstr(err, "refusing to compare") && strstr(err, "output lengths differ (4 vs 8 tokens)"), "%s", err);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", ma, mc, "--force", NULL}, out,
                             sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(out, "compared despite different workloads"), "%s", out);
    rmtree(a);
    rmtree(b);
}

/* Runs a sweep against a simulator started with sim_args; returns its exit
 * status and its stdout in out. */
static int sweep_with(const char *const *sim_args, const char *slo, const char *dir, char *out, size_t cap)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char targets[200];
    snprintf(targets, sizeof targets, "sim=%s", sim.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,2",
                          "--input-len", "16", "--output-len", "4", "--rounds", "1", "--num-prompts", "8",
                          "--slo", slo, "--out-dir", dir, NULL};
    int status;
    cr_assert_eq(run_cmd(argv, out, cap, &status), 0);
    sim_stop(&sim);
    return status;
}

/* The end table says failed requests and missed SLOs apart. */
Test(results_e2e, sweep_ends_with_a_table_that_tells_failures_from_missed_slos, .timeout = 120)
{
    static char out[65536];
    char dir[64];
    /* every request completes, but none meets a 5 ms TTFT against a 20 ms server */
    tmpdir(dir, sizeof dir);
    const char *slow[] = {"--ttft-ms", "20", "--itl-ms", "1", NULL};
    cr_assert_eq(sweep_with(slow, "ttft:5", dir, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "Results per load point (medians across rounds)"), "%s", out);
    cr_assert(strstr(out, "short-16-4-c1") && strstr(out, "short-16-4-c2"), "%s", out);
    cr_assert(strstr(out, "0.0%"), "attainment 0%%: %s", out);
    cr_assert(strstr(out, "requests: PASS (every request of every round completed)"), "%s", out);
    cr_assert(strstr(out, "SLO (ttft:5): MISSED at 2 of 2 load points"), "%s", out);
    rmtree(dir);
    /* requests fail (503 for 40%), the SLO is generous */
    tmpdir(dir, sizeof dir);
    const char *failing[] = {"--ttft-ms", "2", "--itl-ms", "1", "--fail-rate", "0.4", "--seed", "7", NULL};
    cr_assert_eq(sweep_with(failing, "ttft:5000", dir, out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "requests: FAIL ("), "%s", out);
    cr_assert(strstr(out, "failed requests in"), "%s", out);
    cr_assert(strstr(out, "SLO (ttft:5000): MISSED"), "failed requests miss the SLO: %s", out);
    rmtree(dir);
}

/* Two targets of one sweep are two sets of rounds of the same case: compare
 * keeps them apart (it pooled them by case id before). */
Test(results_e2e, compare_keeps_the_targets_of_a_sweep_apart, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], targets[400];
    tmpdir(dir, sizeof dir);
    snprintf(targets, sizeof targets, "fast=%s,slow=%s", sim.base_url, sim.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,2",
                          "--input-len", "16", "--output-len", "4", "--rounds", "1", "--num-prompts", "3",
                          "--out-dir", dir, NULL};
    static char out[65536];
    char err[2048];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(run_cmd_err((const char *[]){harness_anvil_bin(), "compare", dir, dir, NULL}, out, sizeof out,
                             err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    const char *want[] = {"== A fast/short-16-4-c1 (rounds: 1) vs B fast/short-16-4-c1 (rounds: 1) ==",
                          "== A slow/short-16-4-c1 (rounds: 1) vs B slow/short-16-4-c1 (rounds: 1) ==",
                          "== A fast/short-16-4-c2 (rounds: 1) vs B fast/short-16-4-c2 (rounds: 1) ==",
                          "== A slow/short-16-4-c2 (rounds: 1) vs B slow/short-16-4-c2 (rounds: 1) =="};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(strstr(out, want[i]), "no '%s' in:\n%s", want[i], out);
    rmtree(dir);
}

/* The value printed after key on the same line of out (a %15.4f row). */
static double after(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    cr_assert(p, "no \"%s\" in:\n%s", key, out);
    return strtod(p + strlen(key), NULL);
}

/* USD per million output tokens from an artifact's output throughput, as
 * the issue defines it: price × GPUs / (tokens/s × 3600) × 10⁶. */
static double cost_of(const char *artifact, double usd, double gpus)
{
    cJSON *a = harness_load_json(artifact);
    cr_assert(a, "%s", artifact);
    double tps = harness_num(harness_json_path(a, "metrics"), "output_throughput");
    cJSON_Delete(a);
    cr_assert_gt(tps, 0);
    return usd * gpus / (tps * 3600) * 1e6;
}

/* --gpu-hour-cost in anvil run's summary and anvil sweep's table: the same
 * figure show computes from the artifact (one formula). */
Test(results_e2e, run_and_sweep_price_output_tokens_like_show, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], art[128], targets[200], err[4096];
    static char out[65536], shown[65536];
    int status;
    tmpdir(dir, sizeof dir);
    snprintf(art, sizeof art, "%s/run.json", dir);
    const char *run[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "8",
                         "--input-len", "16", "--output-len", "8", "--gpu-hour-cost", "2.5", "--gpus", "2",
                         "--out", art, NULL};
    cr_assert_eq(run_cmd_err(run, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s%s", out, err);
    double printed = after(out, "Cost per million output tokens (USD):");
    cr_assert_float_eq(printed, cost_of(art, 2.5, 2), 1e-4 + 1e-6 * printed, "%s", out);
    cr_assert_float_eq(after(out, "GPU-hour price (USD):"), 2.5, 1e-9);
    const char *show[] = {harness_anvil_bin(), "show", art, "--gpu-hour-cost", "2.5", "--gpus", "2", NULL};
    cr_assert_eq(run_cmd(show, shown, sizeof shown, &status), 0);
    cr_assert_eq(status, 0, "%s", shown);
    cr_assert_float_eq(after(shown, "Cost (USD per million output tokens):"), printed, 1e-9, "%s", shown);
    /* without the flag: no cost section */
    const char *plain[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "4",
                           "--input-len", "16", "--output-len", "8", "--out", art, NULL};
    cr_assert_eq(run_cmd_err(plain, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_null(strstr(out, "Cost per million"), "%s", out);
    /* the sweep's table: a cost column, each point's value from its round */
    snprintf(targets, sizeof targets, "sim=%s", sim.base_url);
    const char *sweep[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,2",
                           "--input-len", "16", "--output-len", "4", "--rounds", "1", "--num-prompts", "8",
                           "--gpu-hour-cost", "3", "--gpus", "4", "--out-dir", dir, "--force", NULL};
    cr_assert_eq(run_cmd(sweep, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert(strstr(out, "USD / M out tok"), "%s", out);
    char **files;
    size_t n;
    char rounds[128];
    snprintf(rounds, sizeof rounds, "%s/rounds/", dir);
    cr_assert_eq(artifact_find_json(rounds, &files, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 2);
    for (size_t i = 0; i < n; i++)   /* a folder given with its slash: paths keep one (had two) */
        cr_assert(!strstr(files[i], "//"), "%s", files[i]);
    for (size_t i = 0; i < n; i++) {
        char want[32];
        snprintf(want, sizeof want, " %.4f\n", cost_of(files[i], 3, 4));
        cr_assert(strstr(out, want), "%s (%s) not at a row's end:\n%s", want, files[i], out);
    }
    artifact_strings_free(files, n);
    rmtree(dir);
}
