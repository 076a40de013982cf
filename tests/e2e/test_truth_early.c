/* test_truth_early.c — no arrival time anvil reports is earlier than the
 * bytes it dates. Nothing inside one run can catch a stamp that runs early
 * (the reply just looks fast), so these tests hold anvil's loop while the
 * simulator writes the response headers and the first token at known,
 * different times, and run many streams against fixed latency, and compare
 * every first token and end of stream with the simulator's trace
 * (`anvil sim --trace`, the same CLOCK_MONOTONIC).
 *
 * "Never early" allows 1 µs: kernel stamps are converted from
 * CLOCK_REALTIME to CLOCK_MONOTONIC by the two clocks' offset read with two
 * clock_gettime calls, tens of ns apart, and the trace stamps a chunk as
 * its write begins, before the kernel stamps the segment. */
#include <math.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

#define NEVER_EARLY_MS 0.001    /* clock granularity allowed below the truth */
#define MAX_REQ 4096

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A trace line's numbers by request index (NAN when absent). */
struct truth {
    double received[MAX_REQ], first[MAX_REQ], finished[MAX_REQ];
};

static void read_truth(const char *path, struct truth *t)
{
    for (int i = 0; i < MAX_REQ; i++)
        t->received[i] = t->first[i] = t->finished[i] = NAN;
    char *text = harness_read_file(path, NULL);
    cr_assert(text, "cannot read the trace %s", path);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j, "trace line is not JSON: %.80s", line);
        const cJSON *id = cJSON_GetObjectItem(j, "request_id");
        int idx;
        if (cJSON_IsString(id) && sscanf(id->valuestring, "anvil-req-%d", &idx) == 1 && idx >= 0 &&
            idx < MAX_REQ) {
            t->received[idx] = harness_num(j, "received_ns");
            t->first[idx] = harness_num(j, "first_token_ns");
            t->finished[idx] = harness_num(j, "finished_ns");
        }
        cJSON_Delete(j);
    }
    free(text);
}

/* The reported first-token and end times of request_timings entry t
 * against the truth, in ms (reported − true). */
static void errors(const cJSON *t, const struct truth *tr, double *first_err, double *end_err, int *idx)
{
    *idx = (int)harness_num(t, "request_index");
    cr_assert(*idx >= 0 && *idx < MAX_REQ);
    double start = harness_num(t, "start_monotonic_ns");
    *first_err = (start + harness_num(t, "ttft_ms") * 1e6 - tr->first[*idx]) / 1e6;
    *end_err = (start + harness_num(t, "e2e_ms") * 1e6 - tr->finished[*idx]) / 1e6;
    cr_assert(isfinite(*first_err) && isfinite(*end_err), "request %d is not in the trace", *idx);
}

/* Two requests one after the other on one connection. Every reply's
 * headers wait 300 ms (--slow-headers-ms) and its first token is due 320
 * ms after arrival, its second 500 ms later. anvil is stopped (SIGSTOP) as
 * the second request reaches the simulator and resumed 600 ms later, so the
 * headers and the first token both arrive while nothing reads the socket,
 * 20 ms apart. On a reused connection the kernel delays its ACKs (40 ms),
 * so the headers' segment is still unacknowledged, and cannot take the
 * token's bytes, when the token arrives: the two wait as separate
 * segments, each with its own stamp (measured on this VM; the old rule gave
 * the token the headers' stamp, 20 ms early). Through a proxy (via_proxy:
 * http_proxy names the simulator, which serves absolute-form requests)
 * anvil cannot trust byte offsets (the proxy may be TLS) and dates every
 * byte of a read by the queue's newest segment: the token exactly here
 * (the last to arrive), the headers late. */
static void held_run(bool via_proxy)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--slow-headers-ms", "300", "--ttft-ms", "320", "--itl-ms", "500",
                              "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "1", "--num-prompts", "2",
                          "--endpoint", "completions", "--input-len", "16", "--output-len", "2", "--calibration", "none",
                          "--out", art,
                          NULL};
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    if (via_proxy)
        cr_assert_eq(setenv("http_proxy", sim.root_url, 1), 0);
    pid_t pid = harness_spawn(argv, 0);
    unsetenv("http_proxy");     /* for anvil only, not this process's own requests */
    cr_assert_gt(pid, 0);
    const char *waiting = "anvil_sim:faults_total{kind=\"slow_headers\",model_name=\"anvil-sim\"}";
    for (int i = 0; i < 2000 && !(harness_metric(sim.root_url, waiting) >= 2); i++)
        harness_sleep_ms(1);
    kill(pid, SIGSTOP);
    double stopped = mono_ns();
    harness_sleep_ms(600);
    double resumed = mono_ns();
    kill(pid, SIGCONT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);

    static struct truth tr;
    read_truth(trace, &tr);
    cr_assert(tr.received[1] + 300e6 > stopped, "the second reply's headers left after the client stopped (%.1f ms after arrival)", (stopped - tr.received[1]) / 1e6);
    cr_assert_lt(tr.first[1], resumed - 100e6, "its first token came while the client was stopped");
    cr_assert_gt(tr.first[1] - (tr.received[1] + 300e6), 15e6, "headers and token left apart");
    cJSON *a = harness_load_json(art);
    const cJSON *t;
    int k = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        double first_err, end_err;
        int idx;
        errors(t, &tr, &first_err, &end_err, &idx);
        /* each token waited alone in its segment: dated exactly */
        cr_assert(first_err >= -NEVER_EARLY_MS && first_err <= 1.0,
                  "request %d: first token stamped %.3f ms from the server's write", idx, first_err);
        cr_assert(end_err >= -NEVER_EARLY_MS, "request %d: end stamped %.3f ms early", idx, -end_err);
        if (idx == 1) {
            double headers = harness_num(t, "start_monotonic_ns") + harness_num(t, "time_to_headers_ms") * 1e6;
            cr_assert(headers >= tr.received[1] + 300e6 - NEVER_EARLY_MS * 1e6,
                      "headers stamped %.3f ms before they were sent",
                      (tr.received[1] + 300e6 - headers) / 1e6);
        }
        k++;
    }
    cr_assert_eq(k, 2);
    cJSON_Delete(a);
    unlink(trace);
    unlink(art);
}

Test(truth, a_held_client_never_dates_the_first_token_by_the_headers, .timeout = 60)
{
    held_run(false);
}

Test(truth, a_held_client_through_a_proxy_dates_a_read_by_its_newest_segment, .timeout = 60)
{
    held_run(true);
}

/* n requests at concurrency c against --ttft-ms 50 --itl-ms 10 and four
 * tokens each: no first token and no end of stream is dated before the
 * simulator wrote it. At 1,024 streams anvil's loop falls behind and finds
 * the headers and the first token queued together (the old rule dated
 * thousands of first tokens by the headers, down to 0.02 ms TTFT). */
static void never_early(const char *concurrency, int n, const char *output_len)
{
    char trace[64], art[64], np[16];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    snprintf(np, sizeof np, "%d", n);
    const char *sim_args[] = {"--ttft-ms", "50", "--itl-ms", "10", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    harness_split_cpus(sim.pid);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", concurrency,
                          "--num-prompts", np, "--endpoint", "completions", "--input-len", "16", "--output-len",
                          output_len, "--calibration", "none", "--out", art, NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    static struct truth tr;
    read_truth(trace, &tr);
    cJSON *a = harness_load_json(art);
    const cJSON *t;
    int k = 0, early_first = 0, early_end = 0;
    double worst_first = INFINITY, worst_end = INFINITY;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        double first_err, end_err;
        int idx;
        errors(t, &tr, &first_err, &end_err, &idx);
        early_first += first_err < -NEVER_EARLY_MS;
        early_end += end_err < -NEVER_EARLY_MS;
        worst_first = fmin(worst_first, first_err);
        worst_end = fmin(worst_end, end_err);
        k++;
    }
    cr_assert_eq(k, n);
    cr_assert(early_first == 0 && early_end == 0, "concurrency %s, %d requests: %d first tokens stamped before "
              "the server wrote them (worst %.3f ms early), %d ends (worst %.3f ms early)", concurrency, n,
              early_first, -worst_first, early_end, -worst_end);
    cJSON_Delete(a);
    unlink(trace);
    unlink(art);
}

Test(truth, never_early_at_concurrency_1, .timeout = 60)
{
    never_early("1", 16, "4");
}

Test(truth, never_early_at_concurrency_64, .timeout = 60)
{
    never_early("64", 256, "4");
}

Test(truth, never_early_at_concurrency_1024, .timeout = 120)
{
    never_early("1024", 4096, "32");
}
