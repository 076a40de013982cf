/* test_engines.c — anvil against each engine the simulator impersonates
 * (`anvil sim --flavor vllm|sglang|llamacpp`, and the default anvil-sim):
 * token counting through the engine's own tokenize endpoint, engine_version
 * from its own endpoint, and errors inside 200 streams in its own shape. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static cJSON *jget(const cJSON *o, const char *path) { return harness_json_path(o, path); }

/* What each flavor reports as its version, where it reports it. */
static const struct flavor {
    const char *name, *engine, *version;
} flavors[] = {
    {"llamacpp", "llama.cpp", "b0-unknown"},   /* GET /props build_info */
    {"sglang", "sglang", "0.5.12"},            /* GET /server_info version */
    {"vllm", "vllm", "0.21.0"},                /* GET /version */
    {"anvil", "anvil-sim", "0.1.0"},           /* GET /version, "server":"anvil-sim" */
};

static void start_flavor(struct sim_proc *p, const char *flavor, const char *const more[])
{
    const char *args[16] = {"--flavor", flavor, "--ttft-ms", "1", "--itl-ms", "1"};
    int n = 6;
    for (int i = 0; more && more[i]; i++)
        args[n++] = more[i];
    args[n] = NULL;
    cr_assert_eq(sim_start(p, args), 0, "sim --flavor %s did not start", flavor);
}

/* Runs `anvil run` against p with extra flags; returns the artifact (caller
 * deletes) and fills err with stderr. */
static cJSON *run(const struct sim_proc *p, const char *const extra[], char *err, size_t errcap, int *status)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[40] = {harness_anvil_bin(), "run", "--base-url", p->base_url, "--out", art};
    int n = 6;
    for (int i = 0; extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    static char out[16384];
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, errcap, status), 0);
    char *text = harness_read_file(art, NULL);
    unlink(art);
    cJSON *a = text ? cJSON_Parse(text) : NULL;
    free(text);
    return a;
}

/* --calibration tokenize (and auto) against each flavor, chat and
 * completions: the engine's tokenize endpoint counts, no fallback, and the
 * prompts get --input-len tokens within the calibration's tolerance. */
static void check_tokenize(const struct flavor *f, const char *calib, const char *endpoint)
{
    struct sim_proc p;
    start_flavor(&p, f->name, NULL);
    char err[4096];
    int st;
    cJSON *a = run(&p, (const char *const[]){"--calibration", calib, "--endpoint", endpoint, "--num-prompts", "3",
                                             "--input-len", "300", "--output-len", "2", NULL},
                   err, sizeof err, &st);
    cr_assert_eq(sim_stop(&p), 0);
    cr_assert_eq(st, 0, "%s %s %s: exit %d\n%s", f->name, calib, endpoint, st, err);
    cr_assert_null(strstr(err, "unusable"), "%s: %s", f->name, err);
    cr_assert_null(strstr(err, "calibration failed"), "%s: %s", f->name, err);
    cr_assert_str_eq(cJSON_GetStringValue(jget(a, "calibration.method")), "tokenize", "%s %s", f->name, endpoint);
    cr_assert_str_eq(cJSON_GetStringValue(jget(a, "engine")), f->engine);
    cr_assert_str_eq(cJSON_GetStringValue(jget(a, "engine_version")), f->version, "%s", f->name);
    const cJSON *t;
    int n = 0;
    cJSON_ArrayForEach(t, jget(a, "request_timings")) {
        double got = jget(t, "prompt_tokens")->valuedouble;
        cr_assert_leq(fabs(got - 300), fmax(4, 3), "%s %s: prompt_tokens %g for --input-len 300",
                      f->name, endpoint, got);
        n++;
    }
    cr_assert_eq(n, 3);
    cJSON_Delete(a);
}

Test(engines, tokenize_calibration_llamacpp, .timeout = 60)
{
    check_tokenize(&flavors[0], "tokenize", "chat");
    check_tokenize(&flavors[0], "tokenize", "completions");
    check_tokenize(&flavors[0], "auto", "chat");
}

Test(engines, tokenize_calibration_sglang, .timeout = 60)
{
    check_tokenize(&flavors[1], "tokenize", "chat");
    check_tokenize(&flavors[1], "tokenize", "completions");
    check_tokenize(&flavors[1], "auto", "chat");
}

Test(engines, tokenize_calibration_vllm_and_anvil, .timeout = 60)
{
    check_tokenize(&flavors[2], "tokenize", "chat");
    check_tokenize(&flavors[2], "tokenize", "completions");
    check_tokenize(&flavors[3], "auto", "chat");
}

/* The first failure of a one-request run against a sim started with more. */
static void check_failure(const struct flavor *f, const char *const sim_args[], const char *input_len,
                          const char *want_msg, const char *want_phase)
{
    struct sim_proc p;
    start_flavor(&p, f->name, sim_args);
    char err[4096];
    int st;
    cJSON *a = run(&p, (const char *const[]){"--calibration", "none", "--num-prompts", "1", "--input-len",
                                             input_len, "--output-len", "8", NULL}, err, sizeof err, &st);
    cr_assert_eq(sim_stop(&p), 0);
    cr_assert(a, "%s: no artifact: %s", f->name, err);
    cr_assert_eq(jget(a, "failed")->valuedouble, 1, "%s: the request must fail\n%s", f->name, err);
    const cJSON *x = jget(a, "failures.0");
    cr_assert_str_eq(cJSON_GetStringValue(jget(x, "category")), "stream_error", "%s: %s", f->name,
                     cJSON_GetStringValue(jget(x, "message")));
    cr_assert_eq(jget(x, "http_status")->valuedouble, 200);
    cr_assert(strstr(cJSON_GetStringValue(jget(x, "message")), want_msg), "%s: message '%s' lacks '%s'",
              f->name, cJSON_GetStringValue(jget(x, "message")), want_msg);
    cr_assert_str_eq(cJSON_GetStringValue(jget(x, "phase")), want_phase, "%s", f->name);
    cJSON_Delete(a);
}

Test(engines, stream_error_in_each_flavors_shape, .timeout = 60)
{
    /* llama.cpp: an "error:" line; SGLang: {"error": {"object": "error", ...}}; vLLM: {"error": {...}} */
    const char *want[] = {"Internal server error (server_error, code 500)",
                          "Internal server error (InternalServerError, code 500)",
                          "Internal server error (InternalServerError, code 500)",
                          "Internal server error (InternalServerError, code 500)"};
    for (int i = 0; i < 4; i++)
        check_failure(&flavors[i], (const char *const[]){"--stream-error-rate", "1", NULL}, "8", want[i],
                      "mid_stream");
}

Test(engines, llamacpp_context_overflow_inside_200_stream, .timeout = 60)
{
    /* llama-server finds a prompt beyond the slot's context after its 200
     * stream began: one error line, then [DONE] (no token: not an empty stream) */
    check_failure(&flavors[0], (const char *const[]){"--max-model-len", "64", NULL}, "100",
                  "the request exceeds the available context size, try increasing it "
                  "(exceed_context_size_error, code 400)", "before_first_output");
}
