/* test_artifacts.c — anvil's own artifacts through the typed readers: every
 * file `anvil run`, `anvil sweep` and `anvil aggregate` write reads back and
 * writes out again byte for byte (write ∘ read is the identity), and each
 * records its provenance, checked against the system's own tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "core/version.h"
#include "artifact/benchmark.h"
#include "artifact/load_curve.h"
#include "artifact/matrix.h"
#include "harness.h"

enum kind { BENCHMARK, MATRIX, LOAD_CURVE };

/* Reads the file at path with the kind's reader, writes what it read with
 * the kind's writer, and compares the text with the file's, byte for byte. */
static void rewrites_identically(const char *path, enum kind kind)
{
    size_t len;
    char *text = harness_read_file(path, &len), err[512];
    cr_assert(text, "cannot read %s", path);
    cJSON *in = cJSON_ParseWithLength(text, len), *out = NULL;
    cr_assert(in, "%s is not JSON", path);
    if (kind == BENCHMARK) {
        struct benchmark b;
        cr_assert_eq(benchmark_from_json(in, path, &b, err, sizeof err), 0, "%s", err);
        out = benchmark_to_json(&b);
        benchmark_free(&b);
    } else if (kind == MATRIX) {
        struct matrix m;
        cr_assert_eq(matrix_from_json(in, path, &m, err, sizeof err), 0, "%s", err);
        out = matrix_to_json(&m);
        matrix_free(&m);
    } else {
        struct load_curve c;
        cr_assert_eq(load_curve_from_json(in, path, &c, err, sizeof err), 0, "%s", err);
        out = load_curve_to_json(&c);
        load_curve_free(&c);
    }
    char *again = artifact_print(out);
    cr_assert(again);
    cr_assert_eq(strlen(again) + 1, len, "%s: %zu bytes written back, %zu read", path, strlen(again) + 1, len);
    cr_assert(!strncmp(again, text, len - 1) && text[len - 1] == '\n', "%s differs when written back", path);
    free(again);
    cJSON_Delete(out);
    cJSON_Delete(in);
    free(text);
}

/* The first line a command prints, without its newline. */
static void first_line(const char *const *argv, char *out, size_t cap)
{
    int status;
    cr_assert_eq(run_cmd(argv, out, cap, &status), 0);
    cr_assert_eq(status, 0, "%s failed", argv[0]);
    out[strcspn(out, "\n")] = '\0';
}

/* The provenance block against uname, getconf and /proc/cpuinfo read by
 * grep; command_line against want (n strings). */
static void check_provenance(const cJSON *art, const char *const *want, int n)
{
    const cJSON *p = cJSON_GetObjectItem(art, "provenance");
    cr_assert(cJSON_IsObject(p), "no provenance");
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(p, "anvil_version")));
    cr_assert_str_eq(cJSON_GetObjectItem(p, "anvil_version")->valuestring, anvil_version());
    const cJSON *cl = cJSON_GetObjectItem(p, "command_line");
    cr_assert_eq(cJSON_GetArraySize(cl), n, "command_line has %d entries", cJSON_GetArraySize(cl));
    for (int i = 0; i < n; i++)
        cr_assert_str_eq(cJSON_GetArrayItem(cl, i)->valuestring, want[i], "command_line[%d]", i);
    char host[256], kernel[256], cores[32], model[256];
    first_line((const char *[]){"uname", "-n", NULL}, host, sizeof host);
    first_line((const char *[]){"uname", "-r", NULL}, kernel, sizeof kernel);
    first_line((const char *[]){"getconf", "_NPROCESSORS_ONLN", NULL}, cores, sizeof cores);
    first_line((const char *[]){"sh", "-c", "grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//; s/ *$//'", NULL},
               model, sizeof model);
    cr_assert_str_eq(cJSON_GetObjectItem(p, "host")->valuestring, host);
    cr_assert_str_eq(cJSON_GetObjectItem(p, "kernel")->valuestring, kernel);
    cr_assert_eq(cJSON_GetObjectItem(p, "cpu_cores")->valuedouble, atof(cores));
    if (model[0])
        cr_assert_str_eq(cJSON_GetObjectItem(p, "cpu_model")->valuestring, model);
}

static void tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/anvil-artifacts-XXXXXX");
    cr_assert(mkdtemp(out));
}

static void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

#define SECRET "sk-e2e-secret-1234"

/* A closed-loop run with SLOs, failed requests (the simulator answers 30%
 * with 503), a secret header and credentials in the URL. */
Test(artifacts_e2e, run_artifact_reads_back_byte_for_byte_with_provenance, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "1", "--fail-rate", "0.3", "--seed", "3", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], path[128], url[400];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/run.json", dir);
    snprintf(url, sizeof url, "http://user:%s@%s/v1", SECRET, sim.root_url + strlen("http://"));
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", url, "--num-prompts", "10",
                          "--concurrency", "2", "--input-len", "16", "--output-len", "4", "--warmup", "1",
                          "--goodput", "ttft:100", "--header", "Authorization: Bearer " SECRET,
                          "--out", path, NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert(status == 0 || status == 1, "anvil run exited %d: %s", status, out);
    rewrites_identically(path, BENCHMARK);
    char *text = harness_read_file(path, NULL);
    cr_assert_null(strstr(text, SECRET), "the secret reached the artifact");
    free(text);
    cJSON *art = harness_load_json(path);
    cr_assert_gt(harness_num(art, "failed"), 0, "the run has failures to read back");
    cr_assert_gt(harness_num(art, "good_requests"), 0);
    char redacted_url[400];
    snprintf(redacted_url, sizeof redacted_url, "http://[redacted]@%s/v1", sim.root_url + strlen("http://"));
    const char *want[] = {"anvil", "run", "--base-url", redacted_url, "--num-prompts", "10",
                          "--concurrency", "2", "--input-len", "16", "--output-len", "4", "--warmup", "1",
                          "--goodput", "ttft:100", "--header", "[redacted]", "--out", path};
    check_provenance(art, want, sizeof want / sizeof *want);
    cJSON_Delete(art);
    rmtree(dir);
}

/* Duration mode, open loop with constant gaps (burstiness "inf"). */
Test(artifacts_e2e, duration_mode_artifact_reads_back_byte_for_byte, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], path[128];
    tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/duration.json", dir);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--duration", "0.5",
                          "--warmup-s", "0.2", "--request-rate", "20", "--burstiness", "inf",
                          "--input-len", "16", "--output-len", "4", "--out", path, NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    rewrites_identically(path, BENCHMARK);
    cJSON *art = harness_load_json(path);
    cr_assert(cJSON_IsObject(cJSON_GetObjectItem(art, "duration_mode")));
    cr_assert_str_eq(cJSON_GetObjectItem(art, "burstiness")->valuestring, "inf");
    cJSON_Delete(art);
    rmtree(dir);
}

/* A sweep's rounds, matrix and load curve, and `anvil aggregate` of its
 * rounds. */
Test(artifacts_e2e, sweep_and_aggregate_artifacts_read_back_byte_for_byte, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], targets[200], path[256], r1[200], r2[200], agg[200];
    tmpdir(dir, sizeof dir);
    snprintf(targets, sizeof targets, "simA=%s", sim.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,2",
                          "--input-len", "16", "--output-len", "4", "--rounds", "1", "--num-prompts", "3",
                          "--slo", "ttft:100,tpot:20", "--out-dir", dir, "--", "--header", "X-Key: " SECRET, NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    snprintf(r1, sizeof r1, "%s/rounds/simA/short-16-4-c1/round-1.json", dir);
    snprintf(r2, sizeof r2, "%s/rounds/simA/short-16-4-c2/round-1.json", dir);
    rewrites_identically(r1, BENCHMARK);
    rewrites_identically(r2, BENCHMARK);
    snprintf(path, sizeof path, "%s/matrix.json", dir);
    rewrites_identically(path, MATRIX);
    cJSON *m = harness_load_json(path);
    const char *want[] = {"anvil", "sweep", "--targets", targets, "--concurrency", "1,2", "--input-len", "16",
                          "--output-len", "4", "--rounds", "1", "--num-prompts", "3", "--slo",
                          "ttft:100,tpot:20", "--out-dir", dir, "--", "[redacted]", "[redacted]"};
    check_provenance(m, want, sizeof want / sizeof *want);
    cJSON_Delete(m);
    snprintf(path, sizeof path, "%s/load-curve.json", dir);
    rewrites_identically(path, LOAD_CURVE);
    cJSON *c = harness_load_json(path);
    check_provenance(c, want, sizeof want / sizeof *want);
    cJSON_Delete(c);
    char *round_text = harness_read_file(r1, NULL);
    cr_assert_null(strstr(round_text, SECRET), "a round's command line keeps the header's value out");
    free(round_text);
    snprintf(agg, sizeof agg, "%s/aggregate.json", dir);
    const char *aggregate[] = {harness_anvil_bin(), "aggregate", r1, r2, "--out", agg, "--precision", "BF16", NULL};
    cr_assert_eq(run_cmd(aggregate, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    rewrites_identically(agg, MATRIX);
    m = harness_load_json(agg);
    const char *want_agg[] = {"anvil", "aggregate", r1, r2, "--out", agg, "--precision", "BF16"};
    check_provenance(m, want_agg, sizeof want_agg / sizeof *want_agg);
    cJSON_Delete(m);
    rmtree(dir);
}
