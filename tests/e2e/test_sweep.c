/* test_sweep.c — `anvil sweep` end to end against `anvil sim`: a 2-case ×
 * 2-round sweep with its matrix and load curve, and an interrupted sweep
 * resumed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/json.h"
#include "harness.h"

static cJSON *load(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return harness_load_json(path);
}

static void tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/anvil-sweep-XXXXXX");
    cr_assert(mkdtemp(out));
}

static void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(sweep_e2e, two_cases_two_rounds_matrix_and_load_curve, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", NULL, "--concurrency", "1,2",
                          "--input-len", "32", "--output-len", "8", "--rounds", "2", "--num-prompts", "4",
                          "--slo", "ttft:50,tpot:10", "--out-dir", dir, NULL};
    char targets[200];
    snprintf(targets, sizeof targets, "simA=%s", sim.base_url);
    argv[3] = targets;
    static char out[8192];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cJSON *m = load(dir, "matrix.json");
    cr_assert_str_eq(cJSON_GetObjectItem(m, "status")->valuestring, "PASS");
    const cJSON *rows = cJSON_GetObjectItem(m, "rows");
    cr_assert_eq(cJSON_GetArraySize(rows), 4);
    const char *want[4][2] = {{"short-32-8-c1", "1"}, {"short-32-8-c1", "2"}, {"short-32-8-c2", "1"}, {"short-32-8-c2", "2"}};
    for (int i = 0; i < 4; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        cr_assert_str_eq(cJSON_GetObjectItem(r, "engine")->valuestring, "simA");
        cr_assert_str_eq(cJSON_GetObjectItem(r, "case_id")->valuestring, want[i][0]);
        cr_assert_eq(cJSON_GetObjectItem(r, "repeat")->valuedouble, atoi(want[i][1]));
        cr_assert_eq(cJSON_GetObjectItem(r, "completed")->valuedouble, 4);
        cr_assert_eq(strlen(cJSON_GetObjectItem(r, "source_sha256")->valuestring), 64);
    }
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m, "aggregates")), 2);
    cJSON *c = load(dir, "load-curve.json");
    const cJSON *pts = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "load"), "simA"), "points");
    cr_assert_eq(cJSON_GetArraySize(pts), 2);
    const cJSON *p = cJSON_GetArrayItem(pts, 1);
    cr_assert_eq(cJSON_GetObjectItem(p, "x")->valuedouble, 2);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "output_throughput"), "n")->valuedouble, 2);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p, "ttft_quantiles_ms")), 51);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p, "completed")), 2);
    double q0 = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "ttft_quantiles_ms"), 0)->valuedouble;
    double q50 = cJSON_GetArrayItem(cJSON_GetObjectItem(p, "ttft_quantiles_ms"), 50)->valuedouble;
    cr_assert(q0 >= 5 && q0 <= q50, "quantiles ascend from the minimum (%g, %g)", q0, q50);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "slo"), "ttft_ms")->valuedouble, 50);
    cJSON_Delete(c);
    cJSON_Delete(m);
    rmtree(dir);
}

/* A duration-mode sweep whose replies outlast the window (2,000 tokens at
 * 2 ms each against a 0.5 s window): the matrix reports the window's
 * throughput (tokens by arrival time inside it) and marks the rounds
 * rounds that every request outlasted instead of failing them; --input-len 0 (a minimal
 * prompt) is a case like any other. Failed before: --input-len 0 was a
 * usage error, and the rounds were FAIL with output_throughput 0. */
Test(sweep_e2e, duration_rounds_report_the_window_and_outlast_it, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "2",
                          "--input-len", "0,16", "--output-len", "2000", "--rounds", "1", "--out-dir", dir,
                          "--", "--duration", "0.5", NULL};
    static char out[8192];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert(strstr(out, "outlasted the window"), "%s", out);
    cJSON *m = load(dir, "matrix.json");
    cr_assert_str_eq(cJSON_GetObjectItem(m, "status")->valuestring, "PASS");
    const cJSON *rows = cJSON_GetObjectItem(m, "rows");
    cr_assert_eq(cJSON_GetArraySize(rows), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *r = cJSON_GetArrayItem(rows, i);
        cr_assert_eq(cJSON_GetObjectItem(r, "input_tokens")->valuedouble, i ? 16 : 0);
        cr_assert_eq(cJSON_GetObjectItem(r, "completed")->valuedouble, 0);
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "outlasted_window")));
        char path[600];
        snprintf(path, sizeof path, "rounds/target/%s/round-1.json", cJSON_GetObjectItem(r, "case_id")->valuestring);
        cJSON *round = load(dir, path);
        double window_tps = cJSON_GetObjectItem(cJSON_GetObjectItem(round, "duration_mode"), "aggregate_tps")->valuedouble;
        cr_assert_gt(window_tps, 0);
        cr_assert_eq(cJSON_GetObjectItem(r, "output_throughput")->valuedouble, window_tps);
        cJSON_Delete(round);
    }
    cJSON_Delete(m);
    rmtree(dir);
}

Test(sweep_e2e, interrupted_sweep_keeps_rounds_and_resumes, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "25", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    /* each round: 4 requests × (5 + 19·25 ms) ≈ 1.9 s */
    const char *start[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "1,2",
                           "--input-len", "16", "--output-len", "20", "--rounds", "2", "--num-prompts", "4",
                           "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(start, 1);
    cr_assert_gt(pid, 0);
    harness_sleep_ms(3000);     /* round 1 of the first case is done, the second case runs */
    kill(pid, SIGINT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "interrupted sweep exits 1 (status %d)", st);
    cJSON *m = load(dir, "matrix.json");
    cr_assert_str_eq(cJSON_GetObjectItem(m, "status")->valuestring, "INCOMPLETE");
    int kept = cJSON_GetArraySize(cJSON_GetObjectItem(m, "rows"));
    cr_assert(kept >= 1 && kept < 4, "%d rounds kept", kept);
    char *first_sha = strdup(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "rows"), 0),
                                                 "source_sha256")->valuestring);
    cJSON_Delete(m);

    const char *argv[] = {harness_anvil_bin(), "sweep", "--resume", dir, NULL};
    static char out[8192];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    m = load(dir, "matrix.json");
    cr_assert_str_eq(cJSON_GetObjectItem(m, "status")->valuestring, "PASS");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m, "rows")), 4);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "rows"), 0),
                                         "source_sha256")->valuestring, first_sha,
                     "a finished round is kept, not run again");
    free(first_sha);
    cJSON_Delete(m);
    rmtree(dir);
}

static void write_plan(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

Test(sweep_e2e, usage_errors)
{
    char dir[64], dup[128], escape[128];
    tmpdir(dir, sizeof dir);
    snprintf(dup, sizeof dup, "%s/dup.json", dir);
    snprintf(escape, sizeof escape, "%s/escape.json", dir);
    write_plan(dup, "{\"cases\": [{\"name\": \"a\"}, {\"name\": \"a\", \"concurrency\": 2}]}");
    write_plan(escape, "{\"cases\": [{\"name\": \"../../x\"}]}");
    const char *both[] = {harness_anvil_bin(), "sweep", "--concurrency", "1", "--request-rate", "2", NULL};
    const char *bad_list[] = {harness_anvil_bin(), "sweep", "--concurrency", "1,x", NULL};
    const char *bad_slo[] = {harness_anvil_bin(), "sweep", "--slo", "ttft", NULL};
    const char *dup_names[] = {harness_anvil_bin(), "sweep", "--plan", dup, "--out-dir", dir, NULL};
    const char *traversal[] = {harness_anvil_bin(), "sweep", "--plan", escape, "--out-dir", dir, NULL};
    const char *const *cases[] = {both, bad_list, bad_slo, dup_names, traversal};
    for (int i = 0; i < 5; i++) {
        char err[1024];
        int status;
        cr_assert_eq(run_cmd_err(cases[i], NULL, 0, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "case %d: %s", i, err);
        cr_assert(strstr(err, "anvil sweep:"), "%s", err);
    }
    rmtree(dir);
}

Test(sweep_e2e, open_loop_load_points_make_a_matrix_and_curve, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--request-rate", "20,40",
                          "--input-len", "16", "--output-len", "4", "--rounds", "1", "--num-prompts", "6",
                          "--slo", "ttft:100", "--out-dir", dir, NULL};
    static char out[8192];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cJSON *m = load(dir, "matrix.json");
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "rows"), 1);
    cr_assert_str_eq(cJSON_GetObjectItem(row, "case_id")->valuestring, "short-16-4-r40");
    cr_assert_eq(cJSON_GetObjectItem(row, "request_rate")->valuedouble, 40);
    cr_assert_eq(cJSON_GetObjectItem(row, "concurrency")->valuedouble, 0, "no cap");
    cJSON_Delete(m);
    cJSON *c = load(dir, "load-curve.json");
    const cJSON *pts = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "load"), 0), "points");
    cr_assert_eq(cJSON_GetArraySize(pts), 2);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 1), "x")->valuedouble, 40, "x is the request rate");
    cJSON_Delete(c);
    rmtree(dir);
}

Test(sweep_e2e, yaml_plan_with_run_flags_as_keys, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], plan[128];
    tmpdir(dir, sizeof dir);
    snprintf(plan, sizeof plan, "%s/plan.yaml", dir);
    FILE *f = fopen(plan, "w");
    fprintf(f, "rounds: 1\nnum_prompts: 3\ncases:\n"
               "  - name: rag-small\n    input_len: 64\n    output_len: 4\n    concurrency: 2\n"
               "    endpoint: completions\n    ignore_eos: true\n");
    fclose(f);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--plan", plan,
                          "--out-dir", dir, NULL};
    static char out[8192];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cJSON *m = load(dir, "matrix.json");
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "rows"), 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m, "rows")), 1);
    cr_assert_str_eq(cJSON_GetObjectItem(row, "case_id")->valuestring, "rag-small");
    cr_assert_eq(cJSON_GetObjectItem(row, "completed")->valuedouble, 3);
    cr_assert_eq(cJSON_GetObjectItem(row, "input_tokens")->valuedouble, 64);
    cJSON_Delete(m);
    cJSON *r = load(dir, "rounds/target/rag-small/round-1.json");
    cr_assert_str_eq(cJSON_GetObjectItem(r, "endpoint")->valuestring, "completions",
                     "a plan key became the anvil run flag --endpoint");
    cJSON_Delete(r);
    rmtree(dir);
}

/* 7 × 7 × 7 = 343 cases from flags (more than a fixed table once held):
 * all planned. The sweep is stopped as soon as its plan is written. */
Test(sweep_e2e, every_case_of_a_large_grid_is_planned, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], plan_path[128];
    tmpdir(dir, sizeof dir);
    snprintf(plan_path, sizeof plan_path, "%s/sweep-plan.json", dir);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url,
                          "--input-len", "8,9,10,11,12,13,14", "--output-len", "2,3,4,5,6,7,8",
                          "--concurrency", "1,2,3,4,5,6,7", "--rounds", "1", "--num-prompts", "1",
                          "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 2000 && access(plan_path, R_OK) != 0; i++)
        harness_sleep_ms(5);
    harness_sleep_ms(50);       /* the plan is written whole before the first round starts */
    kill(pid, SIGINT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    sim_stop(&sim);
    cr_assert(WIFEXITED(st), "the sweep ended by itself after SIGINT (status %d)", st);
    cJSON *plan = load(dir, "sweep-plan.json");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(plan, "jobs")), 343);
    cJSON_Delete(plan);
    rmtree(dir);
}

/* Rewrites the JSON file at path with the member key of the object at
 * path_in ("" = the top, "jobs.0" = the first job) replaced by the JSON
 * value, or deleted when value is NULL. */
static void edit_json(const char *path, const char *path_in, const char *key, const char *value)
{
    cJSON *j = harness_load_json(path);
    cJSON *o = path_in[0] ? harness_json_path(j, path_in) : j;
    cr_assert(o, "%s has no %s", path, path_in);
    if (value)
        cJSON_ReplaceItemInObject(o, key, cJSON_Parse(value));
    else
        cJSON_DeleteItemFromObject(o, key);
    char *text = cJSON_Print(j);
    write_plan(path, text);
    free(text);
    cJSON_Delete(j);
}

/* A hand-edited sweep-plan.json with a key missing or mistyped: --resume
 * names the file and the key in one line and exits 1 (it crashed on a
 * missing job key before plans were read through the checked reader). */
Test(sweep_e2e, resume_of_a_plan_missing_a_key_is_one_line_not_a_crash, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64], plan[128], saved[160];
    tmpdir(dir, sizeof dir);
    snprintf(plan, sizeof plan, "%s/sweep-plan.json", dir);
    snprintf(saved, sizeof saved, "%s/plan.orig", dir);
    const char *start[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--input-len", "8",
                           "--output-len", "2", "--concurrency", "1,2", "--rounds", "1", "--num-prompts", "1",
                           "--out-dir", dir, NULL};
    static char out[8192];
    int status;
    cr_assert_eq(run_cmd(start, out, sizeof out, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    char *orig = harness_read_file(plan, NULL);
    cr_assert(orig);
    write_plan(saved, orig);
    struct { const char *in, *key, *value, *want; } edits[] = {
        {"jobs.1", "artifact", NULL, "sweep-plan.json: jobs[1].artifact: missing"},
        {"jobs.0", "args", "[\"--input-len\", 8]", "sweep-plan.json: jobs[0].args[1]: expected a string, got a number"},
        {"", "rounds", "\"1\"", "sweep-plan.json: rounds: expected a whole number ≥ 1, got a string"},
        {"", "jobs", NULL, "sweep-plan.json: jobs: missing"},
        {"", "slo", "\"ttft\"", "sweep-plan.json: slo: expected ttft:MS,tpot:MS"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        write_plan(plan, orig);
        edit_json(plan, edits[i].in, edits[i].key, edits[i].value);
        const char *argv[] = {harness_anvil_bin(), "sweep", "--resume", dir, NULL};
        char err[2048];
        cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
        cr_assert_eq(status, 1, "edit %zu: exit %d: %s", i, status, err);
        cr_assert(strstr(err, edits[i].want), "edit %zu: %s", i, err);
        cr_assert(strstr(err, "anvil sweep: --resume ") == err, "edit %zu: %s", i, err);
        cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
    }
    free(orig);
    rmtree(dir);
}

/* --plan files are read through the checked reader too: a mistyped key is
 * a usage error naming the file and the key (it was silently defaulted). */
Test(sweep_e2e, plan_file_with_a_mistyped_key_names_file_and_key)
{
    char dir[64], plan[128];
    tmpdir(dir, sizeof dir);
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    struct { const char *text, *want; } cases[] = {
        {"{\"cases\": [{\"input_len\": \"128\"}]}", "plan.json: cases[0].input_len: expected a whole number ≥ 0, got a string"},
        {"{\"rounds\": \"3\", \"cases\": [{}]}", "plan.json: rounds: expected a whole number ≥ 1, got a string"},
        {"{\"cases\": [{}, {\"request_rate\": \"fast\"}]}", "plan.json: cases[1].request_rate: expected a number, got a string"},
        {"{\"cases\": [{\"name\": 7}]}", "plan.json: cases[0].name: expected a non-empty string, got a number"},
        {"{\"cases\": [{\"args\": [\"--warmup\", 2]}]}", "plan.json: cases[0].args[1]: expected a string, got a number"},
        {"{\"cases\": [{\"endpoint\": [\"chat\"]}]}", "plan.json: cases[0].endpoint: expected an anvil run flag's value"},
        {"{\"cases\": []}", "plan.json: cases: expected a non-empty array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_plan(plan, cases[i].text);
        const char *argv[] = {harness_anvil_bin(), "sweep", "--plan", plan, "--out-dir", dir, NULL};
        char err[1024];
        int status;
        cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "case %zu: %s", i, err);
        cr_assert(strstr(err, "anvil sweep: --plan ") == err && strstr(err, cases[i].want), "case %zu: %s", i, err);
        cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
    }
    rmtree(dir);
}

/* A round measured while its directory cannot take the artifact (a full
 * disk; here a directory in the artifact's place, made once the round has
 * started) goes to its fallback: the sweep stops at once naming it, and a
 * resume takes the round from there instead of measuring it again. */
Test(sweep_e2e, a_round_that_cannot_be_written_stops_the_sweep_and_resumes_from_its_fallback, .timeout = 120)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "25", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    /* one round of 4 requests × (5 + 39·25 ms) ≈ 4 s */
    const char *start[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "1",
                           "--input-len", "16", "--output-len", "40", "--rounds", "1", "--num-prompts", "4",
                           "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(start, 1);
    cr_assert_gt(pid, 0);
    /* once the round measures (its start line is in its log), its artifact's place is taken */
    char cmd[700], artifact[600] = "";
    for (int k = 0; k < 300 && !artifact[0]; k++) {
        harness_sleep_ms(20);
        snprintf(cmd, sizeof cmd, "grep -lq 'measuring thread' %s/logs/*.log 2>/dev/null", dir);
        if (system(cmd) != 0)
            continue;
        snprintf(cmd, sizeof cmd, "find %s/rounds -type d -mindepth 2", dir);
        FILE *f = popen(cmd, "r");
        char line[500] = "";
        cr_assert(f && fgets(line, sizeof line, f));
        pclose(f);
        line[strcspn(line, "\n")] = '\0';
        snprintf(artifact, sizeof artifact, "%s/round-1.json", line);
    }
    cr_assert(artifact[0], "the round started");
    cr_assert_eq(mkdir(artifact, 0755), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "the sweep stops (status %d)", st);
    char fb[1200];
    artifact_fallback_path(artifact, fb, sizeof fb);
    cr_assert_eq(access(fb, F_OK), 0, "the measured round is at its fallback %s", fb);
    cJSON *lines[64];
    int before = harness_read_jsonl(trace, lines, 64);
    for (int i = 0; i < before; i++)
        cJSON_Delete(lines[i]);
    cr_assert_eq(rmdir(artifact), 0);   /* the disk has room again */

    const char *argv[] = {harness_anvil_bin(), "sweep", "--resume", dir, NULL};
    static char out[8192];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    int after = harness_read_jsonl(trace, lines, 64);
    for (int i = 0; i < after; i++)
        cJSON_Delete(lines[i]);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(after, before, "the round was not measured again (%d requests, then %d)", before, after);
    cr_assert_neq(access(fb, F_OK), 0, "the fallback was moved into place");
    cJSON *m = load(dir, "matrix.json");
    cr_assert_str_eq(cJSON_GetObjectItem(m, "status")->valuestring, "PASS");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m, "rows")), 1);
    cJSON_Delete(m);
    unlink(trace);
    rmtree(dir);
}
