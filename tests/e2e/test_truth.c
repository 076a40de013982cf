/* test_truth.c — anvil's per-request timestamps against the simulator's
 * ground truth (`anvil sim --trace`), on the one CLOCK_MONOTONIC: for every
 * request, the moment anvil stamps the first token and the end of the
 * stream ([DONE]) against the moments the server began writing them, within
 * 1 ms at concurrency 1 and 64, on the engine model and in fixed-latency
 * mode.
 *
 * The simulator and the client each get a CPU of their own (when there are
 * two): on this VM the kernel wakes a reader on its writer's CPU, and two
 * processes sharing one CPU stall each other for milliseconds. A stall
 * between anvil's look at a socket and curl's read of it lets bytes that
 * arrive meanwhile be read in the same pass under the earlier stamp
 * (measured unpinned: 1 request in about 20 runs of 192, off by 8 ms). */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

#define MAX_REQ 256

/* Runs n requests at the given concurrency against a simulator started
 * with sim_args (plus --trace) and checks every request's first-token and
 * end stamps within 1 ms of the trace (a first token read together with
 * the next ones, as the journal's chunk stamps show: within 1 ms of the
 * newest write that read held). */
static void agree(const char *const sim_args[], const char *concurrency, int n, const char *transport)
{
    char trace[64], art[64], np[16];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    snprintf(np, sizeof np, "%d", n);
    const char *args[16] = {"--trace", trace};
    for (int i = 0; sim_args[i]; i++) {
        cr_assert_lt(2 + i, 15);
        args[2 + i] = sim_args[i];
    }
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, args), 0);
    harness_split_cpus(sim.pid);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", concurrency,
                          "--num-prompts", np, "--input-len", "64", "--output-len", "16", "--transport", transport,
                          "--out", art, NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    static struct harness_traced tr[MAX_REQ];
    harness_read_trace(trace, tr, MAX_REQ);
    cJSON *a = harness_load_json(art);
    static int shared[MAX_REQ];
    harness_first_shared(art, a, shared, MAX_REQ);
    const cJSON *t;
    int k = 0, merged = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        int idx = (int)harness_num(t, "request_index");
        cr_assert(idx >= 0 && idx < MAX_REQ);
        double start = harness_num(t, "start_monotonic_ns");
        double end_err = (start + harness_num(t, "e2e_ms") * 1e6 - tr[idx].finished) / 1e6;
        char what[64];
        snprintf(what, sizeof what, "%s, concurrency %s, request %d", transport, concurrency, idx);
        merged += harness_check_first_stamp(&tr[idx], start + harness_num(t, "ttft_ms") * 1e6, shared[idx],
                                            cJSON_IsTrue(cJSON_GetObjectItem(t, "first_output_merged")), what);
        cr_assert(fabs(end_err) <= 1.0, "concurrency %s, request %d: end of stream stamped %.3f ms from "
                  "the server's write", concurrency, idx, end_err);
        k++;
    }
    cr_assert_eq(k, n);
    cr_assert_leq(merged, n / 4, "%d of %d first tokens read with the second", merged, n);
    /* nearly every arrival time came from the kernel (measured: 0–2 of 3,776 not) */
    const cJSON *rx = harness_json_path(a, "client.arrival_stamps");
    double kernel = harness_num(rx, "kernel_rx"), clock = harness_num(rx, "client_clock");
    cr_assert(kernel > 0 && clock <= kernel / 100, "arrival stamps: %g from the kernel, %g from the clock",
              kernel, clock);
    cJSON_Delete(a);
    unlink(trace);
    unlink(art);
}

static const char *const engine_model[] = {NULL};
static const char *const fixed_latency[] = {"--ttft-ms", "30", "--itl-ms", "10", NULL};

/* Each on both transports: anvil's own and curl. */
Test(truth, engine_model_within_1ms_at_concurrency_1, .timeout = 90)
{
    agree(engine_model, "1", 16, "native");
    agree(engine_model, "1", 16, "curl");
}

Test(truth, engine_model_within_1ms_at_concurrency_64, .timeout = 180)
{
    agree(engine_model, "64", 192, "native");
    agree(engine_model, "64", 192, "curl");
}

Test(truth, fixed_latency_within_1ms_at_concurrency_1, .timeout = 90)
{
    agree(fixed_latency, "1", 16, "native");
    agree(fixed_latency, "1", 16, "curl");
}

Test(truth, fixed_latency_within_1ms_at_concurrency_64, .timeout = 180)
{
    agree(fixed_latency, "64", 192, "native");
    agree(fixed_latency, "64", 192, "curl");
}

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One request (--ttft-ms 300, itl_ms between tokens, `tokens` of them)
 * whose client is stopped (SIGSTOP) from the moment the server runs it
 * until 600 ms later. Fills the first token's stamp error against the
 * trace (ms), the trace's chunk times (ns) and when the client was resumed
 * (CLOCK_MONOTONIC ns); checks that the stall shows in the self-check. */
static void paused_run(const char *transport, const char *itl_ms, const char *tokens, double *first_err,
                       double *chunk_ns, int cap, double *resumed, bool *merged)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--ttft-ms", "300", "--itl-ms", itl_ms, "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "1",
                          "--input-len", "16", "--output-len", tokens, "--calibration", "none", "--transport",
                          transport, "--out", art, NULL};
    pid_t pid = harness_spawn(argv, 0);
    cr_assert_gt(pid, 0);
    const char *running = "vllm:num_requests_running{model_name=\"anvil-sim\"}";
    for (int i = 0; i < 1000 && !(harness_metric(sim.root_url, running) >= 1); i++)
        harness_sleep_ms(2);
    kill(pid, SIGSTOP);
    harness_sleep_ms(600);      /* the first token is written ≤ 300 ms after the request came */
    *resumed = mono_ns();
    kill(pid, SIGCONT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    cJSON *tr[4];
    cr_assert_eq(harness_read_jsonl(trace, tr, 4), 1);
    const cJSON *c;
    int k = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(tr[0], "chunks"))
        if (k < cap)
            chunk_ns[k++] = harness_num(c, "t_ns");
    cr_assert_lt(chunk_ns[0], *resumed - 200e6, "the first token came while the client was stopped");
    cJSON *a = harness_load_json(art);
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "request_timings"), 0);
    cr_assert(t);
    *first_err = (harness_num(t, "start_monotonic_ns") + harness_num(t, "ttft_ms") * 1e6 - chunk_ns[0]) / 1e6;
    *merged = cJSON_IsTrue(cJSON_GetObjectItem(t, "first_output_merged"));
    /* the stall shows in the self-check — unless the probe took no sample at all: a sub-second
     * run whose only late slot fell after its last request (max is then null) */
    const cJSON *lag = harness_json_path(a, "client.loop_lag_ms");
    const cJSON *max = cJSON_GetObjectItem(lag, "max");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "client_bound")) ||
              (cJSON_IsNumber(max) ? max->valuedouble >= 200 : harness_num(lag, "samples") == 0),
              "the stall shows in the client self-check");
    cJSON_Delete(a);
    cJSON_Delete(tr[0]);
    unlink(trace);
    unlink(art);
}

/* Stopped while the first token arrives, resumed before the second: the
 * kernel's receive stamp dates the token to its arrival, not to the late
 * read 300 ms after it — unless the stop came inside curl's own call as the
 * request started (after the request went out, before curl's first try to
 * read: one run in 10–20 here), which then reads the reply itself, with no
 * look at the socket: the token is dated by the clock, late, and flagged
 * first_output_merged (its arrival is unknown). */
static void still_stamps(const char *transport)
{
    double err, chunks[2], resumed;
    bool merged;
    paused_run(transport, "1000", "2", &err, chunks, 2, &resumed, &merged);
    cr_assert(fabs(err) <= 1.0 || (merged && err > 0), "%s: first token stamped %.3f ms from the server's write%s",
              transport, err, merged ? "" : ", not flagged first_output_merged");
}

Test(truth, a_paused_client_still_stamps_arrival, .timeout = 60)
{
    still_stamps("native");
}

Test(truth, a_paused_curl_client_still_stamps_arrival, .timeout = 60)
{
    still_stamps("curl");
}

/* Stopped while four tokens arrive 50 ms apart: the kernel merges the
 * queued segments and keeps the newest one's stamp, so the first token is
 * dated by the last one's arrival (METHODOLOGY.md) — late by the tokens'
 * spread, never by the stall (but for a stop inside curl's own read, above)
 * — and flagged first_output_merged whenever it is late. */
static void dates_queued(const char *transport)
{
    double err, chunks[4], resumed;
    bool merged;
    paused_run(transport, "50", "4", &err, chunks, 4, &resumed, &merged);
    cr_assert(merged || fabs(err) <= 1.0, "%s: first token stamped %.3f ms late, not flagged first_output_merged",
              transport, err);
    cr_assert_lt(chunks[3], resumed - 50e6, "all four tokens came while the client was stopped");
    double newest = (chunks[3] - chunks[0]) / 1e6;
    cr_assert(err >= -1.0 && (err <= newest + 1.0 || merged), "%s: first token stamped %.3f ms from the server's "
              "write: outside [0, %.3f] (its arrival .. the newest token's)", transport, err, newest);
}

Test(truth, a_paused_client_dates_queued_tokens_by_the_newest, .timeout = 60)
{
    dates_queued("native");
}

Test(truth, a_paused_curl_client_dates_queued_tokens_by_the_newest, .timeout = 60)
{
    dates_queued("curl");
}
