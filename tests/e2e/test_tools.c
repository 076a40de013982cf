/* test_tools.c — --tools against `anvil sim`: every flavor's tool-call
 * stream (no content at all) is measured as output without an invariant
 * tripping, the prompt is calibrated with the tool schema counted, and
 * tool_choice "none" gives ordinary replies. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

#define TOOLS "tests/data/workloads/tools.json"

/* Runs 4 requests against a sim of flavor with extra flags; returns the artifact. */
static cJSON *run_with(const char *flavor, const char *const extra[], int *status, char *err, size_t errlen)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--flavor", flavor, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[40] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "4",
                            "--input-len", "300", "--output-len", "24", "--out", art};
    int n = 12;
    for (int i = 0; extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    static char out[16384];
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, errlen, status), 0);
    sim_stop(&sim);
    cJSON *a = *status == 0 ? harness_load_json(art) : NULL;
    unlink(art);
    return a;
}

static void check_tool_run(const char *flavor)
{
    const char *extra[] = {"--tools", TOOLS, "--tool-choice", "auto", NULL};
    int status;
    static char err[16384];
    cJSON *a = run_with(flavor, extra, &status, err, sizeof err);
    cr_assert_eq(status, 0, "%s: exit %d\n%s", flavor, status, err);
    const cJSON *m = cJSON_GetObjectItem(a, "metrics");
    cr_assert_eq(harness_num(a, "completed"), 4, "%s", flavor);
    cr_assert_eq(harness_num(m, "tool_calls"), 4, "%s: one call per reply", flavor);
    cr_assert_eq(harness_num(m, "content_chunks"), 0, "%s: a tool-call reply has no content", flavor);
    cr_assert_geq(harness_num(m, "tool_call_chunks"), 4, "%s", flavor);
    const cJSON *v, *vs = harness_json_path(a, "invariants.violations");
    cr_assert(vs && vs->child);
    cJSON_ArrayForEach(v, vs)
        cr_assert_eq(v->valuedouble, 0, "%s: invariant %s violated", flavor, v->string);
    /* the schema is prompt: calibrated with it, every request has the planned length */
    cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(a, "calibration.method")), "probe", "%s", flavor);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0, "%s", flavor);
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        cr_assert_eq(harness_num(t, "tool_calls"), 1);
        cr_assert(harness_num(t, "ttft_ms") > 0, "%s: TTFT is the first tool-call delta", flavor);
        cr_assert_eq(harness_num(t, "output_tokens"), 24, "%s: tokens from usage", flavor);
        /* ignore_eos: the call runs to max_tokens */
        cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(t, "finish_reason")), "length", "%s", flavor);
    }
    cJSON_Delete(a);
}

Test(tools, vllm_tool_call_replies_are_output, .timeout = 60)
{
    check_tool_run("vllm");
}

Test(tools, sglang_tool_call_replies_are_output, .timeout = 60)
{
    check_tool_run("sglang");
}

Test(tools, llamacpp_tool_call_replies_are_output, .timeout = 60)
{
    check_tool_run("llamacpp");
}

Test(tools, tool_choice_none_gives_content, .timeout = 60)
{
    const char *extra[] = {"--tools", TOOLS, "--tool-choice", "none", NULL};
    int status;
    static char err[16384];
    cJSON *a = run_with("vllm", extra, &status, err, sizeof err);
    cr_assert_eq(status, 0, "%s", err);
    const cJSON *m = cJSON_GetObjectItem(a, "metrics");
    cr_assert_eq(harness_num(m, "tool_calls"), 0);
    cr_assert_gt(harness_num(m, "content_chunks"), 0);
    cr_assert_eq(harness_num(a, "prompt_token_mismatches"), 0);
    cJSON_Delete(a);
}

Test(tools, bad_tools_are_refused_before_sending, .timeout = 60)
{
    char bad[64];
    cr_assert_eq(harness_tmpfile(bad, sizeof bad), 0);
    FILE *f = fopen(bad, "w");
    fputs("[{\"type\": \"function\", \"function\": {\"name\": \"has space\"}}]", f);
    fclose(f);
    const char *extra[] = {"--tools", bad, NULL};
    int status;
    static char err[16384];
    cJSON *a = run_with("vllm", extra, &status, err, sizeof err);
    unlink(bad);
    cr_assert_null(a);
    cr_assert_neq(status, 0);
    cr_assert(strstr(err, "tools[0].function.name"), "%s", err);
    const char *unknown[] = {"--tools", TOOLS, "--tool-choice", "no_such_fn", NULL};
    a = run_with("vllm", unknown, &status, err, sizeof err);
    cr_assert_null(a);
    cr_assert(strstr(err, "no_such_fn"), "%s", err);
}
