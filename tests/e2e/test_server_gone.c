/* test_server_gone.c — a server killed mid-run ends the run: incomplete,
 * reason server_gone, a clear line, exit non-zero, and every request that
 * had completed kept. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

/* A run of `threads` measuring loops against a simulator killed at 1.8 s. */
static void killed_simulator(const char *threads)
{
    struct sim_proc sim;
    /* 40 tokens at 10 ms: each request takes ~0.4 s, so four waves of 4 have completed by 1.8 s */
    const char *sa[] = {"--ttft-ms", "10", "--itl-ms", "10", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char art[64], errf[64], cmd[1024];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(errf, sizeof errf), 0);
    snprintf(cmd, sizeof cmd, "exec %s run --base-url %s --concurrency 4 --num-prompts 200 --threads %s "
             "--input-len 16 --output-len 40 --calibration none --grace-s 2 --out %s 2>%s",
             harness_anvil_bin(), sim.base_url, threads, art, errf);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    pid_t pid = harness_spawn(argv, 0);
    cr_assert_gt(pid, 0);
    harness_sleep_ms(1800);
    kill(sim.pid, SIGKILL);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    sim_stop(&sim);     /* reaps the killed child */
    char *err = harness_read_file(errf, NULL);
    cr_assert(err);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit %d; stderr:\n%s", WEXITSTATUS(st), err);
    cr_assert(strstr(err, "the server went away"), "stderr:\n%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert(a, "no artifact; stderr:\n%s", err);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "incomplete")));
    cr_assert_str_eq(cJSON_GetObjectItem(a, "incomplete_reason")->valuestring, "server_gone");
    const cJSON *gone = cJSON_GetObjectItem(a, "server_gone");
    cr_assert(cJSON_IsObject(gone), "no server_gone block");
    cr_assert_geq(harness_num(gone, "connect_failures"), 3);
    cr_assert_gt(harness_num(gone, "first_failure_s"), 1.0);
    cr_assert_lt(harness_num(gone, "first_failure_s"), 3.0);
    /* the requests measured before the kill are kept; far fewer than 200 were sent */
    int done = cJSON_GetArraySize(cJSON_GetObjectItem(a, "request_timings"));
    cr_assert_geq(done, 8, "only %d completed requests kept", done);
    cr_assert_lt(harness_num(a, "completed"), 200);
    free(err);
    cJSON_Delete(a);
    unlink(art);
    unlink(errf);
}

Test(server_gone, killed_simulator_ends_the_run_incomplete, .timeout = 60)
{
    killed_simulator("1");
}

/* The streak of refused connections is counted over both loops, and both
 * stop sending. */
Test(server_gone, killed_simulator_ends_a_two_thread_run, .timeout = 60)
{
    killed_simulator("2");
}
