/* test_client_bound.c — a lagging loop is not "client-bound" when every
 * arrival was stamped by the kernel: the numbers stay right (regression:
 * client_bound fired on 12 of 14 llama.cpp runs whose numbers matched the
 * server's within 1-5 ms, because the loop lag p99 alone decided it). The
 * first tokens came before the holds: none is flagged first_output_merged,
 * and the summary says the lag left the latencies alone
 * (tests/e2e/test_first_merged.c has the other side). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

Test(client_bound, a_held_loop_with_kernel_stamps_is_lag_not_client_bound, .timeout = 60)
{
    struct sim_proc sim;
    /* 2.5 s of streaming per request: ~250 lag samples, of which the holds below make > 1% late */
    const char *sa[] = {"--ttft-ms", "20", "--itl-ms", "10", NULL};
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    char art[64], out[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(out, sizeof out), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "4",
                          "--num-prompts", "4", "--input-len", "16", "--output-len", "250",
                          "--calibration", "none", "--out", art, NULL};
    pid_t pid = harness_spawn_to(argv, out);
    cr_assert_gt(pid, 0);
    harness_sleep_ms(400);
    for (int i = 0; i < 6; i++) {       /* hold the client's loop 30 ms, six times */
        kill(pid, SIGSTOP);
        harness_sleep_ms(30);
        kill(pid, SIGCONT);
        harness_sleep_ms(250);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d", WEXITSTATUS(st));
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    const cJSON *client = cJSON_GetObjectItem(a, "client");
    const cJSON *lag = cJSON_GetObjectItem(client, "loop_lag_ms");
    const cJSON *rx = cJSON_GetObjectItem(client, "arrival_stamps");
    double kernel = harness_num(rx, "kernel_rx"), clock = harness_num(rx, "client_clock");
    cr_assert_geq(harness_num(lag, "samples"), 100);
    cr_assert_gt(harness_num(lag, "p99"), 1.0, "the holds should show as lag: p99 %g ms", harness_num(lag, "p99"));
    cr_assert_leq(clock, 0.01 * (kernel + clock), "%g of %g arrivals by the clock", clock, kernel + clock);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "client_bound")), "kernel-stamped lag reported as client-bound");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(a, "client_bound_reason")), "");
    cr_assert_eq(harness_num(a, "first_output_merged_requests"), 0);
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(t, "first_output_merged")), "request %g flagged",
                  harness_num(t, "request_index"));
    char *text = harness_read_file(out, NULL);
    cr_assert(text && strstr(text, "arrivals were kernel-stamped, so latencies are unaffected"),
              "no kernel-stamped note:\n%s", text ? text : "");
    free(text);
    cJSON_Delete(a);
    unlink(art);
    unlink(out);
}
