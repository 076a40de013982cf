/* test_aggregate.c — `anvil aggregate` end to end: two `anvil run` rounds
 * against `anvil sim` aggregated into a matrix; seed 003 recomputed from its
 * rows through the command; usage and input errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert(v, "missing '%s'", k);
    return v;
}

/* The first word `sha256sum FILE` prints: an oracle independent of anvil. */
static void sha256sum(const char *path, char out[65])
{
    const char *argv[] = {"sha256sum", path, NULL};
    char text[256];
    int status;
    cr_assert_eq(run_cmd(argv, text, sizeof text, &status), 0);
    cr_assert_eq(status, 0);
    cr_assert_eq(sscanf(text, "%64s", out), 1);
}

static void run_round(const char *base_url, const char *out)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", base_url, "--num-prompts", "4",
                          "--concurrency", "2", "--input-len", "32", "--output-len", "8", "--out", out,
                          NULL};
    static char text[16384];
    int status;
    cr_assert_eq(run_cmd(argv, text, sizeof text, &status), 0);
    cr_assert_eq(status, 0, "anvil run exited %d:\n%s", status, text);
}

/* Runs `anvil aggregate args...`; returns its exit status, stderr in err. */
static int aggregate(const char *const *args, char *err, size_t errcap)
{
    const char *argv[24] = {harness_anvil_bin(), "aggregate"};
    int n = 2;
    for (; args[n - 2]; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, errcap, &status), 0);
    return status;
}

Test(aggregate_e2e, two_rounds_against_sim, .timeout = 120)
{
    char f1[64], f2[64], m[64];
    cr_assert_eq(harness_tmpfile(f1, sizeof f1), 0);
    cr_assert_eq(harness_tmpfile(f2, sizeof f2), 0);
    cr_assert_eq(harness_tmpfile(m, sizeof m), 0);
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    run_round(sim.base_url, f1);
    run_round(sim.base_url, f2);
    cr_assert_eq(sim_stop(&sim), 0);

    char err[4096];
    const char *args[] = {f1, f2, "--out", m, NULL};
    cr_assert_eq(aggregate(args, err, sizeof err), 0, "%s", err);
    cJSON *doc = harness_load_json(m);
    cr_assert_str_eq(get(doc, "schema")->valuestring, "anvil-serving.matrix/v1");
    cr_assert_str_eq(get(doc, "status")->valuestring, "PASS");
    cr_assert_eq(cJSON_GetArraySize(get(doc, "status_reasons")), 0);
    cr_assert_eq(harness_num(doc, "counted_rounds"), 2);
    cr_assert_eq(harness_num(doc, "counted_requests"), 8);
    cr_assert_str_eq(get(doc, "model")->valuestring, "anvil-sim");

    const cJSON *rows = get(doc, "rows");
    cr_assert_eq(cJSON_GetArraySize(rows), 2);
    const char *files[] = {f1, f2};
    cJSON *arts[2];
    for (int i = 0; i < 2; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        char sha[65];
        sha256sum(files[i], sha);
        cr_assert_str_eq(get(r, "source_sha256")->valuestring, sha, "row %d names file %d's bytes", i, i);
        cr_assert_eq(harness_num(r, "repeat"), i + 1);
        cr_assert_str_eq(get(r, "engine")->valuestring, "anvil-sim");
        cr_assert_str_eq(get(r, "case_id")->valuestring, "run-32-8-c2");
        cr_assert_eq(harness_num(r, "completed"), 4);
        cr_assert_eq(harness_num(r, "failed"), 0);
        cr_assert_eq(harness_num(r, "total_output_tokens"), 32);
        arts[i] = harness_load_json(files[i]);
        const cJSON *am = get(arts[i], "metrics");
        cr_assert_eq(harness_num(r, "duration"), harness_num(arts[i], "wall_clock_ms") / 1000);
        cr_assert_eq(harness_num(r, "p50_ttft_ms"), harness_num(am, "ttft_p50_ms"));
        cr_assert_eq(harness_num(r, "p99_itl_ms"), harness_num(am, "itl_p99_ms"));
        cr_assert_eq(harness_num(r, "mean_e2el_ms"), harness_num(am, "e2e_mean_ms"));
        cr_assert_eq(harness_num(r, "output_throughput"), harness_num(am, "output_throughput"));
        cr_assert(harness_num(r, "p50_ttft_ms") >= 5.0, "the simulator's 5 ms TTFT");
    }

    const cJSON *aggs = get(doc, "aggregates");
    cr_assert_eq(cJSON_GetArraySize(aggs), 1);
    const cJSON *a = cJSON_GetArrayItem(aggs, 0), *metric;
    cr_assert_eq(harness_num(a, "rounds"), 2);
    cr_assert_eq(harness_num(a, "completed"), 8);
    int n = 0;
    cJSON_ArrayForEach(metric, get(a, "metrics")) {
        double x = harness_num(cJSON_GetArrayItem(rows, 0), metric->string);
        double y = harness_num(cJSON_GetArrayItem(rows, 1), metric->string);
        cr_assert_eq(harness_num(metric, "median"), (x + y) / 2, "%s: median of two = their mean", metric->string);
        cr_assert_eq(harness_num(metric, "min"), x < y ? x : y, "%s", metric->string);
        cr_assert_eq(harness_num(metric, "max"), x < y ? y : x, "%s", metric->string);
        n++;
    }
    cr_assert_eq(n, 20);
    cJSON_Delete(arts[0]);
    cJSON_Delete(arts[1]);
    cJSON_Delete(doc);

    /* the same round twice would be counted twice */
    const char *twice[] = {f1, f1, "--out", m, NULL};
    cr_assert_eq(aggregate(twice, err, sizeof err), 1);
    cr_assert(strstr(err, f1) && strstr(err, "same bytes"), "%s", err);
    unlink(f1);
    unlink(f2);
    unlink(m);
}

/* Seed 003 through the command: the matrix written from its rows carries
 * the seed's aggregates bit for bit (numbers survive writing and reading). */
Test(aggregate_e2e, from_rows_reproduces_seed003, .timeout = 60)
{
    char m[64], err[4096];
    cr_assert_eq(harness_tmpfile(m, sizeof m), 0);
    const char *args[] = {"--from-rows", "tests/data/seed-003.json", "--out", m, NULL};
    cr_assert_eq(aggregate(args, err, sizeof err), 0, "%s", err);
    cJSON *got = harness_load_json(m), *seed = harness_load_json("tests/data/seed-003.json");
    const cJSON *k;
    cJSON_ArrayForEach(k, seed) {
        char *a = cJSON_PrintUnformatted(get(got, k->string)), *b = cJSON_PrintUnformatted(k);
        cr_assert_str_eq(a, b, "field %s", k->string);
        free(a);
        free(b);
    }
    /* printed forms may both have lost a bit; compare the parsed doubles too */
    const cJSON *ga = get(got, "aggregates"), *sa = get(seed, "aggregates");
    for (int i = 0; i < cJSON_GetArraySize(sa); i++) {
        const cJSON *gm = get(cJSON_GetArrayItem(ga, i), "metrics"), *sm;
        cJSON_ArrayForEach(sm, get(cJSON_GetArrayItem(sa, i), "metrics"))
            for (int s = 0; s < 3; s++) {
                const char *stat = (const char *[]){"median", "min", "max"}[s];
                cr_assert_eq(harness_num(get(gm, sm->string), stat), harness_num(sm, stat), "[%d] %s.%s", i,
                             sm->string, stat);
            }
    }
    cJSON_Delete(got);
    cJSON_Delete(seed);
    unlink(m);
}

Test(aggregate_e2e, help_lists_every_flag)
{
    const char *argv[] = {harness_anvil_bin(), "aggregate", "--help", NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0);
    const char *flags[] = {"--out", "--from-rows", "--model", "--precision", "--hardware",
                           "--context-window", "--max-running-requests", "--tensor-parallel-size",
                           "--scope", "--help"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        cr_assert(strstr(out, flags[i]), "--help lacks %s", flags[i]);
}

Test(aggregate_e2e, usage_errors_exit_2_naming_the_flag)
{
    const char *no_out[] = {"tests/data/seed-003.json", NULL};
    const char *bad_flag[] = {"--no-such-flag", "--out", "/tmp/x", NULL};
    const char *bad_tp[] = {"--from-rows", "tests/data/seed-003.json", "--tensor-parallel-size", "two",
                            "--out", "/tmp/x", NULL};
    const char *no_value[] = {"--out", NULL};
    const char *no_input[] = {"--out", "/tmp/x", NULL};
    const char *const *cases[] = {no_out, bad_flag, bad_tp, no_value, no_input};
    const char *want[] = {"--out", "--no-such-flag", "--tensor-parallel-size", "--out", "no round artifacts"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[4096];
        cr_assert_eq(aggregate(cases[i], err, sizeof err), 2, "case %zu: %s", i, err);
        cr_assert(strstr(err, want[i]), "case %zu names %s: %s", i, want[i], err);
    }
}

/* Writes text to a new temporary file whose path goes into path. */
static void write_tmp(char *path, size_t cap, const char *text)
{
    cr_assert_eq(harness_tmpfile(path, cap), 0);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

Test(aggregate_e2e, invalid_inputs_exit_1_naming_the_file)
{
    char not_json[64], wrong_schema[64], no_rows[64], out[64];
    write_tmp(not_json, sizeof not_json, "{\"schema\": ");
    write_tmp(wrong_schema, sizeof wrong_schema, "{\"schema\": \"anvil-serving.matrix/v1\", \"rows\": []}");
    write_tmp(no_rows, sizeof no_rows, "{\"schema\": \"anvil-serving.matrix/v1\"}");
    cr_assert_eq(harness_tmpfile(out, sizeof out), 0);
    struct { const char *args[6]; const char *file, *what; } cases[] = {
        {{"/nonexistent/r.json", "--out", out}, "/nonexistent/r.json", "cannot open"},
        {{not_json, "--out", out}, not_json, "not valid JSON"},
        {{wrong_schema, "--out", out}, wrong_schema, "schema"},
        {{"tests/data/seed-003.json", "--out", out}, "seed-003.json", "not a round artifact"},
        {{"--from-rows", no_rows, "--out", out}, no_rows, "rows"},
        {{"--from-rows", "/nonexistent/m.json", "--out", out}, "/nonexistent/m.json", "cannot open"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[4096];
        cr_assert_eq(aggregate(cases[i].args, err, sizeof err), 1, "case %zu: %s", i, err);
        cr_assert(strstr(err, cases[i].file) && strstr(err, cases[i].what), "case %zu: %s", i, err);
    }
    unlink(not_json);
    unlink(wrong_schema);
    unlink(no_rows);
    unlink(out);
}

/* Load points are ordered as numbers, whatever order the files come in
 * (a shell glob gives c1, c16, c4, c8): the matrix rows and aggregates go
 * c1, c4, c8, c16. Failed before: first appearance, so text order. */
Test(aggregate_e2e, load_points_sort_as_numbers, .timeout = 120)
{
    const char *conc[] = {"1", "16", "4", "8"};     /* as `ls` lists c1 c16 c4 c8 */
    char f[4][64], m[64];
    struct sim_proc sim;
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(harness_tmpfile(f[i], sizeof f[i]), 0);
        const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "16",
                              "--concurrency", conc[i], "--input-len", "16", "--output-len", "4", "--out", f[i],
                              NULL};
        static char text[16384];
        int status;
        cr_assert_eq(run_cmd(argv, text, sizeof text, &status), 0);
        cr_assert_eq(status, 0, "%s", text);
    }
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(harness_tmpfile(m, sizeof m), 0);
    char err[4096];
    const char *args[] = {f[0], f[1], f[2], f[3], "--out", m, NULL};
    cr_assert_eq(aggregate(args, err, sizeof err), 0, "%s", err);
    cJSON *doc = harness_load_json(m);
    const double want[] = {1, 4, 8, 16};
    for (int i = 0; i < 4; i++) {
        const cJSON *row = cJSON_GetArrayItem(get(doc, "rows"), i);
        const cJSON *agg = cJSON_GetArrayItem(get(doc, "aggregates"), i);
        cr_assert_eq(harness_num(row, "concurrency"), want[i], "row %d: %s", i,
                     get(row, "case_id")->valuestring);
        cr_assert_str_eq(get(agg, "case_id")->valuestring, get(row, "case_id")->valuestring);
    }
    cJSON_Delete(doc);
    for (int i = 0; i < 4; i++)
        unlink(f[i]);
    unlink(m);
}
