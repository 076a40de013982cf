/* test_visible_failures.c — failures are visible: the summary groups them by
 * HTTP status and category with the server's first message, a 200 that is
 * not an event stream says what it was, and --max-failure-rate decides the
 * exit status. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "harness.h"

/* Runs 3 requests against a simulator answering with script; returns the
 * exit status, stdout in out. */
static int run_against(const char *script, char *out, size_t cap)
{
    struct sim_proc sim;
    const char *sa[] = {"--script", script, NULL};
    cr_assert_eq(sim_start(&sim, sa), 0, "%s", script);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "3",
                          "--input-len", "16", "--output-len", "4", "--calibration", "none",
                          "--out", "/dev/null", NULL};
    char err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, cap, err, sizeof err, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    return status;
}

Test(visible_failures, every_401_is_one_line_with_the_server_message_and_exit_1, .timeout = 60)
{
    char out[16384];
    int status = run_against("tests/data/scripts/http_401.jsonl", out, sizeof out);
    cr_assert_eq(status, 1, "a run whose every request failed exits %d", status);
    cr_assert(strstr(out, "Failures by status and category"), "%s", out);
    cr_assert(strstr(out, "3  HTTP 401    http"), "%s", out);
    cr_assert(strstr(out, "Invalid API key"), "%s", out);
}

/* Runs 20 requests against a simulator failing half of them with 503. */
static int half_failing(const char *rate)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "1", "--fail-rate", "0.5", "--seed", "3", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "20",
                          "--input-len", "16", "--output-len", "2", "--calibration", "none",
                          "--out", "/dev/null", rate ? "--max-failure-rate" : NULL, rate, NULL};
    char out[16384], err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert(strstr(out, "HTTP 503"), "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    if (status)
        cr_assert(strstr(err, "more than --max-failure-rate"), "%s", err);
    return status;
}

Test(visible_failures, max_failure_rate_decides_the_exit_status, .timeout = 60)
{
    cr_assert_eq(half_failing(NULL), 1, "about half failed: above the default 0.05");
    cr_assert_eq(half_failing("0.9"), 0, "below a tolerance of 0.9");
}

Test(visible_failures, a_200_that_is_not_a_stream_says_what_it_was, .timeout = 60)
{
    struct { const char *script, *want; } cases[] = {
        {"tests/data/scripts/http_200_html.jsonl", "not an event stream (content-type text/html): body starts '<html>"},
        {"tests/data/scripts/http_200_json.jsonl", "not an event stream (content-type application/json): body starts '{\"id\""},
        {"tests/data/scripts/http_200_empty.jsonl", "HTTP 200 with an empty body (content-type text/event-stream)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[16384];
        run_against(cases[i].script, out, sizeof out);
        cr_assert(strstr(out, cases[i].want), "'%s' not in:\n%s", cases[i].want, out);
    }
}
