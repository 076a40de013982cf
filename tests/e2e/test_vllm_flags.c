/* test_vllm_flags.c — `vllm bench serve`'s flag vocabulary on anvil run:
 * --host/--port, a bare base URL, --endpoint as a path, --backend,
 * --dataset-name/--dataset-path, --result-dir/--result-filename, sampling
 * flags; and the conflicts between the two vocabularies. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static const char *art_str(const cJSON *a, const char *path)
{
    const cJSON *v = harness_json_path(a, path);
    cr_assert(cJSON_IsString(v), "%s missing", path);
    return v->valuestring;
}

Test(vllm_flags, host_port_endpoint_path_and_result_dir, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char port[16], dir[] = "/tmp/anvil-vllmflags-XXXXXX";
    snprintf(port, sizeof port, "%d", sim.port);
    cr_assert(mkdtemp(dir));
    const char *argv[] = {harness_anvil_bin(), "run", "--host", sim.host, "--port", port,
                          "--backend", "vllm", "--endpoint", "/v1/completions", "--num-prompts", "3",
                          "--random-input-len", "32", "--random-output-len", "4", "--save-result",
                          "--result-dir", dir, "--result-filename", "r.json", "--disable-tqdm",
                          "--tokenizer", "meta-llama/Llama-3.1-8B", NULL};
    char err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(err, "--tokenizer is not needed"), "%s", err);
    char path[128];
    snprintf(path, sizeof path, "%s/r.json", dir);
    cJSON *a = harness_load_json(path);
    cr_assert(a, "no artifact at %s", path);
    cr_assert_str_eq(art_str(a, "endpoint"), "completions");
    cr_assert(strstr(art_str(a, "base_url"), "/v1"), "base_url %s", art_str(a, "base_url"));
    cr_assert_null(strstr(art_str(a, "base_url"), "/v1/v1"));
    cJSON_Delete(a);
    unlink(path);
    rmdir(dir);
    /* a bare base URL (no /v1) reaches the API at /v1, as vLLM users write it */
    const char *bare[] = {harness_anvil_bin(), "run", "--base-url", sim.root_url, "--num-prompts", "2",
                          "--input-len", "16", "--output-len", "2", "--out", "/dev/null", NULL};
    cr_assert_eq(run_cmd_err(bare, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert_eq(sim_stop(&sim), 0);
}

Test(vllm_flags, conflicts_name_both_flags)
{
    struct { const char *args[8]; const char *want; } cases[] = {
        {{"--backend", "openai-chat", "--endpoint", "/v1/completions"}, "--backend openai-chat calls chat"},
        {{"--base-url", "http://x:1/v1", "--port", "9"}, "--base-url and --host/--port"},
        {{"--dataset", "jsonl:a", "--dataset-name", "sharegpt", "--dataset-path", "b"}, "--dataset and --dataset-name"},
        {{"--dataset-name", "sonnet", "--dataset-path", "b"}, "--dataset-name sonnet"},
        {{"--dataset-name", "sharegpt"}, "needs --dataset-path"},
        {{"--out", "a.json", "--result-filename", "b.json"}, "--out and --result-dir"},
        {{"--backend", "openai-audio"}, "not a text-generation backend"},
        {{"--endpoint", "/v1/embeddings"}, "--endpoint /v1/embeddings"},
        {{"--extra-body", "[1]"}, "expected a JSON object"},
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

Test(vllm_flags, percentile_metrics_and_the_load_settings_in_the_summary, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "8",
                          "--input-len", "16", "--output-len", "4", "--request-rate", "200",
                          "--max-concurrency", "3", "--burstiness", "2", "--percentile-metrics", "ttft,e2el",
                          "--metric-percentiles", "50,99.9", "--out", "-", NULL};
    static char out[1 << 20];
    char err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    /* --out -: stdout is the artifact alone; the summary went to stderr */
    cJSON *a = cJSON_Parse(out);
    cr_assert(a, "stdout is not the artifact: %.300s", out);
    const char *want[] = {"P99.9 TTFT (ms):", "P50 E2EL (ms):", "P99.9 E2EL (ms):",
                          "Traffic request rate (req/s):                            200",
                          "Burstiness factor:                                         2",
                          "Max request concurrency:                                   3"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_assert(strstr(err, want[i]), "'%s' not in:\n%s", want[i], err);
    cr_assert_null(strstr(err, "P50 TPOT"), "tpot was not asked for");
    cJSON_Delete(a);
    const char *bad[] = {harness_anvil_bin(), "run", "--metric-percentiles", "0", NULL};
    cr_assert_eq(run_cmd_err(bad, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2);
    cr_assert(strstr(err, "(0, 100]"), "%s", err);
    cr_assert_eq(sim_stop(&sim), 0);
}

Test(vllm_flags, every_vllm_alias_in_the_readme_table_is_accepted)
{
    const char *aliases[] = {"--num-warmups", "--random-prefix-len", "--random-input-len",
                             "--random-output-len", "--max-concurrency", NULL};
    for (int i = 0; aliases[i]; i++) {
        const char *argv[] = {harness_anvil_bin(), "run", aliases[i], "0x", NULL};
        char err[2048];
        int status;
        cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2);
        cr_assert_null(strstr(err, "unknown flag"), "%s: %s", aliases[i], err);
    }
}

/* max_tokens of request_timings[i] of a ShareGPT run with extra flags. */
static void sharegpt_max_tokens(const struct sim_proc *sim, const char *flag, const char *value, long got[2])
{
    char path[64];
    cr_assert_eq(harness_tmpfile(path, sizeof path), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim->base_url, "--dataset",
                          "sharegpt:tests/data/sharegpt-replies.json", "--num-prompts", "2", "--out", path,
                          flag, value, NULL};
    char err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cJSON *a = harness_load_json(path);
    for (int i = 0; i < 2; i++) {
        char k[48];
        snprintf(k, sizeof k, "request_timings.%d.max_tokens", i);
        const cJSON *v = harness_json_path(a, k);
        cr_assert(cJSON_IsNumber(v), "%s missing", k);
        got[i] = (long)v->valuedouble;
    }
    cJSON_Delete(a);
    unlink(path);
}

Test(vllm_flags, sharegpt_replies_use_their_recorded_lengths_unless_output_len_is_given, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    long got[2];
    sharegpt_max_tokens(&sim, NULL, NULL, got);
    /* the recorded replies have 5 and 9 words: the sim's tokenizer counts words */
    cr_assert(got[0] >= 5 && got[1] - got[0] == 4, "max_tokens %ld, %ld", got[0], got[1]);
    sharegpt_max_tokens(&sim, "--output-len", "3", got);
    cr_assert(got[0] == 3 && got[1] == 3, "max_tokens %ld, %ld", got[0], got[1]);
    sharegpt_max_tokens(&sim, "--sharegpt-output-len", "2", got);
    cr_assert(got[0] == 2 && got[1] == 2, "max_tokens %ld, %ld", got[0], got[1]);
    cr_assert_eq(sim_stop(&sim), 0);
}

/* Regression: --num-prompts 100000000, the documented maximum then, ended in
 * "could not set up the event loop" after discovery and calibration. The
 * maximum is now one whose records fit this kind of machine, and one above it
 * is refused at once, naming the bound. */
Test(vllm_flags, the_documented_maximum_of_num_prompts_is_checked_first)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:1/v1",
                          "--num-prompts", "100000000", NULL};
    char err[2048];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "--num-prompts: expected a whole number from 1 to 10000000"), "%s", err);
}

/* A port on 127.0.0.1 where nothing listens: bound, read, closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* --ready-check-timeout-sec 2 waits the 2 s it is given and tries once more
 * at the deadline (before: it gave up after 1 s, as the next try would have
 * passed the deadline; 1 was the same as 0). The bound above is loose: it
 * only says the wait ends. */
Test(vllm_flags, ready_check_waits_the_whole_timeout, .timeout = 30)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", closed_port());
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", url, "--ready-check-timeout-sec", "2",
                          "--num-prompts", "1", "--out", "/tmp/anvil-ready-never.json", NULL};
    char err[4096];
    int status;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_eq(status, 1, "%s", err);
    cr_assert(strstr(err, "waiting up to 2 s for the server"), "%s", err);
    cr_assert_geq(took, 2.0, "gave up after %.2f s of the 2 s asked", took);
    cr_assert_lt(took, 3.5, "waited %.2f s for a 2 s timeout", took);
}

/* A vLLM command line as it is, with the flags the README's table calls
 * not applicable: the run completes, each such flag gets one note on
 * stderr, --served-model-name names the model and --custom-output-len the
 * replies' length. Before, the first of them was an 'unknown flag'. */
Test(vllm_flags, a_vllm_command_line_with_flags_that_do_not_apply_runs, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "2", "--itl-ms", "1", "--model", "served-x", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char port[16], dir[] = "/tmp/anvil-vllmflags-XXXXXX";
    snprintf(port, sizeof port, "%d", sim.port);
    cr_assert(mkdtemp(dir));
    const char *argv[] = {harness_anvil_bin(), "run", "--backend", "openai-chat", "--host", sim.host,
                          "--port", port, "--endpoint", "/v1/chat/completions", "--served-model-name",
                          "served-x", "--dataset-name", "random", "--random-input-len", "16",
                          "--custom-output-len", "3", "--num-prompts", "3", "--tokenizer-mode", "auto",
                          "--trust-remote-code", "--save-detailed", "--append-result", "--metadata",
                          "team=perf", "gpu=none", "--label", "trial", "--disable-shuffle", "--no-oversample",
                          "--skip-chat-template", "--request-id-prefix", "bench-", "--no-stream",
                          "--save-result", "--result-dir", dir, "--result-filename", "r.json",
                          "--disable-tqdm", NULL};
    char err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert_null(strstr(err, "unknown flag"), "%s", err);
    const char *noted[] = {"--tokenizer-mode", "--trust-remote-code", "--save-detailed", "--append-result",
                           "--metadata", "--label", "--disable-shuffle", "--no-oversample",
                           "--skip-chat-template", "--request-id-prefix", "--no-stream"};
    for (size_t i = 0; i < sizeof noted / sizeof *noted; i++) {
        char want[96];
        snprintf(want, sizeof want, "note: %s does not apply to anvil: ", noted[i]);
        const char *at = strstr(err, want);
        cr_assert(at, "'%s' not in:\n%s", want, err);
        cr_assert_null(strstr(at + 1, want), "%s noted twice", noted[i]);
    }
    char path[128];
    snprintf(path, sizeof path, "%s/r.json", dir);
    cJSON *a = harness_load_json(path);
    cr_assert_str_eq(art_str(a, "model"), "served-x");
    cr_assert_eq(harness_num(a, "completed"), 3);
    for (int i = 0; i < 3; i++) {
        char k[48];
        snprintf(k, sizeof k, "request_timings.%d.max_tokens", i);
        const cJSON *v = harness_json_path(a, k);
        cr_assert(cJSON_IsNumber(v) && v->valuedouble == 3, "%s is not --custom-output-len's 3", k);
    }
    cJSON_Delete(a);
    unlink(path);
    rmdir(dir);
    cr_assert_eq(sim_stop(&sim), 0);
}

/* Flags whose meaning anvil cannot honour are refused before any request
 * (nothing listens at the URL: a usage error comes first) with the flag and
 * the reason, exit 2; before, each was an 'unknown flag'. */
Test(vllm_flags, vllm_flags_anvil_cannot_honour_are_refused_with_the_reason)
{
    struct { const char *args[4]; const char *want; } cases[] = {
        {{"--logprobs", "5"}, "--logprobs: "},
        {{"--use-beam-search"}, "--use-beam-search: "},
        {{"--profile"}, "--profile: not applicable: anvil does not control the server's profiler"},
        {{"--lora-modules", "a", "b"}, "--lora-modules: "},
        {{"--enable-multimodal-chat"}, "--enable-multimodal-chat: "},
        {{"--hf-split", "train"}, "--hf-split: "},
        {{"--sonnet-input-len", "550"}, "--sonnet-input-len: not applicable"},
        {{"--random-mm-limit-mm-per-prompt", "2"}, "--random-mm-limit-mm-per-prompt: not applicable"},
        {{"--insecure"}, "--insecure: not applicable"},
        {{"--min-p", "0.1"}, "--min-p: not a flag of anvil's: send it with every request as --extra-body"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[12] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1"};
        int n = 4;
        for (int k = 0; cases[i].args[k]; k++)
            argv[n++] = cases[i].args[k];
        char err[2048];
        int status;
        cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "case %zu: exit %d (%s)", i, status, err);
        cr_assert(strstr(err, cases[i].want), "case %zu: '%s' not in: %s", i, cases[i].want, err);
        cr_assert_null(strstr(err, "unknown flag"), "case %zu: %s", i, err);
        /* "anvil run: --FLAG: " and a reason of some words */
        cr_assert(strlen(err) > strlen("anvil run: : ") + strlen(cases[i].args[0]) + 30,
                  "case %zu: no reason given: %s", i, err);
    }
}

/* A typo is answered with the flag it was near (exit 2, nothing sent). */
Test(vllm_flags, a_mistyped_flag_gets_did_you_mean)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1", "--concurency", "4",
                          NULL};
    char err[2048];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "unknown flag '--concurency': did you mean '--concurrency'?"), "%s", err);
}

/* vllm bench serve's default: no --request-rate and no --max-concurrency
 * send every prompt at once. Each of 8 requests takes 200 ms of the
 * server's: one at a time (anvil's old default) that is 1.6 s and the
 * concurrency was 1; now all 8 are in flight together, said in one line. */
Test(vllm_flags, no_rate_and_no_concurrency_sends_every_prompt_at_once, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "200", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "8",
                          "--input-len", "16", "--output-len", "2", "--out", art, NULL};
    static char out[16384];
    char err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(err, "no --request-rate and no --concurrency: all 8 prompts at once, as vllm bench serve "
                          "sends them"), "%s", err);
    cr_assert(strstr(err, "8 prompts at concurrency 8"), "%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert_eq(harness_num(a, "concurrency"), 8);
    /* every request started before any ended: they were in flight together */
    double last_start = 0, first_end = INFINITY;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        double s = harness_num(t, "start_monotonic_ns");
        last_start = fmax(last_start, s);
        first_end = fmin(first_end, s + harness_num(t, "e2e_ms") * 1e6);
    }
    cr_assert_lt(last_start, first_end, "a request started after another had ended");
    cJSON_Delete(a);
    unlink(art);
}
