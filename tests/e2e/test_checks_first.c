/* test_checks_first.c — everything is checked before the first request:
 * an --out that is a directory, flags in conflict, a non-HTTP scheme, a
 * plan too large for memory; and what is allowed but surprising is said
 * (a first arrival minutes away). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

/* The simulator's count of chat requests served so far. */
static double served(const struct sim_proc *sim)
{
    return harness_metric(sim->root_url, "vllm:request_success_total{finished_reason=\"length\",model_name=\"anvil-sim\"}");
}

Test(checks_first, out_naming_a_directory_fails_before_measuring, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-checks-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "3",
                          "--input-len", "16", "--output-len", "2", "--calibration", "none", "--out", dir, NULL};
    char out[8192], err[4096];
    int status;
    double before = served(&sim);
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 1, "%s", err);
    cr_assert(strstr(err, "is a directory"), "%s", err);
    cr_assert_null(strstr(out, "Serving Benchmark Result"), "it measured first: %s", out);
    double after = served(&sim);
    cr_assert(!isnan(before) && before == after, "requests were sent: %g -> %g", before, after);
    rmdir(dir);
    cr_assert_eq(sim_stop(&sim), 0);
}

Test(checks_first, conflicts_and_schemes_are_usage_errors_at_once)
{
    struct { const char *args[8]; const char *want; } cases[] = {
        {{"--concurrency", "4", "--max-concurrency", "8"}, "--concurrency and --max-concurrency are the same setting"},
        {{"--input-len", "4", "--random-input-len", "8"}, "--input-len and --random-input-len"},
        {{"--base-url", "ftp://127.0.0.1:1/v1"}, "only http:// and https://"},
        {{"--base-url", "file:///etc/passwd"}, "only http:// and https://"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[12] = {harness_anvil_bin(), "run"};
        int n = 2;
        for (int k = 0; cases[i].args[k]; k++)
            argv[n++] = cases[i].args[k];
        char err[2048];
        int status;
        cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "case %zu: exit %d (%s)", i, status, err);
        cr_assert(strstr(err, cases[i].want), "case %zu: '%s' not in: %s", i, cases[i].want, err);
    }
}

Test(checks_first, credentials_in_a_refused_url_are_not_echoed)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "ftp://user:hunter2@h/v1", NULL};
    char err[2048];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2);
    cr_assert_null(strstr(err, "hunter2"), "%s", err);
}

Test(checks_first, a_first_arrival_minutes_away_is_said, .timeout = 60)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, NULL), 0);
    /* --duration ends the wait: the point is the warning before it */
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--request-rate", "0.001",
                          "--duration", "0.3", "--input-len", "16", "--output-len", "2",
                          "--calibration", "none", "--out", "/dev/null", NULL};
    char err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert(strstr(err, "on average 1000 s apart"), "%s", err);
    cr_assert_eq(sim_stop(&sim), 0);
}

/* Input errors anvil can know before any request are usage errors (exit 2)
 * naming the flag, found before the server is even asked (nothing listens
 * at the URL: a later check would say it cannot reach it, exit 1). Before,
 * each of these exited 1 after discovery. */
Test(checks_first, input_errors_are_usage_errors_before_any_request)
{
    struct { const char *args[3]; const char *want; } cases[] = {
        {{"--dataset", "csv:x"}, "--dataset csv:x: expected jsonl:FILE"},
        {{"--dataset", "jsonl:/nonexistent/anvil.jsonl"}, "--dataset: cannot read /nonexistent/anvil.jsonl"},
        {{"--tools", "/nonexistent/tools.json"}, "--tools: cannot read"},
        {{"--agentic", "/nonexistent/a.yaml"}, "--agentic: cannot read"},
        {{"--image-size", "0x0"}, "--image-size 0x0: expected WxH"},
        {{"--max-failure-rate", "2"}, "--max-failure-rate: expected a number from 0 to 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[8] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1",
                               cases[i].args[0], cases[i].args[1], NULL};
        char err[2048];
        int status;
        cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "case %zu: exit %d: %s", i, status, err);
        cr_assert(strstr(err, cases[i].want), "case %zu: '%s' not in: %s", i, cases[i].want, err);
        cr_assert_null(strstr(err, "cannot reach"), "case %zu: the server was asked first: %s", i, err);
    }
}
