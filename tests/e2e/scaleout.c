/* scaleout.c — comparisons of merged artifacts (scaleout.h). */
#include "scaleout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "harness.h"
#include "load/arrivals.h"

void scaleout_by_index(const cJSON *art, const cJSON **by, int n)
{
    for (int i = 0; i < n; i++)
        by[i] = NULL;
    const cJSON *t;
    cJSON_ArrayForEach(t, harness_json_path(art, "request_timings")) {
        int i = (int)harness_num(t, "request_index");
        cr_assert(i >= 0 && i < n, "request_index %d outside the plan of %d", i, n);
        cr_assert_null(by[i], "request_index %d twice", i);
        by[i] = t;
    }
}

void scaleout_assert_same_requests(const cJSON *a, const cJSON *b, double ttft_tol_ms)
{
    const char *counts[] = {"requests", "completed", "failed", "concurrency"};
    for (size_t k = 0; k < 4; k++)
        cr_assert_eq(harness_num(a, counts[k]), harness_num(b, counts[k]), "%s", counts[k]);
    int n = (int)harness_num(a, "requests");
    const cJSON **ba = calloc((size_t)n, sizeof *ba), **bb = calloc((size_t)n, sizeof *bb);
    scaleout_by_index(a, ba, n);
    scaleout_by_index(b, bb, n);
    for (int i = 0; i < n; i++) {
        cr_assert(ba[i] && bb[i], "request %d is in one artifact only", i);
        cr_assert_eq(harness_num(ba[i], "output_tokens"), harness_num(bb[i], "output_tokens"), "request %d", i);
        cr_assert_eq(harness_num(ba[i], "prompt_tokens"), harness_num(bb[i], "prompt_tokens"), "request %d", i);
        double ta = harness_num(ba[i], "ttft_ms"), tb = harness_num(bb[i], "ttft_ms");
        cr_assert(fabs(ta - tb) <= ttft_tol_ms, "request %d: TTFT %.3f ms against %.3f ms", i, ta, tb);
    }
    free(ba);
    free(bb);
}

void scaleout_assert_schedule(const cJSON *art, int n, double rate, uint64_t seed, double tol_ms)
{
    int64_t *due = calloc((size_t)n, sizeof *due);
    const cJSON **by = calloc((size_t)n, sizeof *by);
    cr_assert_eq(arrivals_schedule(rate, 1, seed, true, due, (size_t)n), 0);
    scaleout_by_index(art, by, n);
    double t0 = 0;
    for (int i = 0; i < n; i++) {
        cr_assert(by[i], "request %d missing", i);
        double sched_ms = harness_num(by[i], "start_monotonic_ns") / 1e6 - harness_num(by[i], "send_lateness_ms");
        if (i == 0)
            t0 = sched_ms;
        double want = (double)(due[i] - due[0]) / 1e6;
        cr_assert(fabs(sched_ms - t0 - want) <= tol_ms, "request %d scheduled %.4f ms after request 0, the "
                  "schedule says %.4f ms", i, sched_ms - t0, want);
    }
    free(due);
    free(by);
}

void scaleout_run_shards(const char *dir, int n, const char *const argv_tail[])
{
    scaleout_run_shards_exit(dir, n, argv_tail, 0);
}

void scaleout_run_shards_exit(const char *dir, int n, const char *const argv_tail[], int want)
{
    struct timeval now;
    gettimeofday(&now, NULL);
    char start[32], shard[8][32], out[8][512];
    /* far enough ahead for every shard's set-up on a loaded machine */
    snprintf(start, sizeof start, "%.3f", (double)now.tv_sec + now.tv_usec / 1e6 + 1.5);
    pid_t pids[8];
    cr_assert_leq(n, 8);
    for (int i = 0; i < n; i++) {
        const char *argv[64] = {harness_anvil_bin(), "run", "--shard", shard[i], "--start-at", start, "--out", out[i]};
        snprintf(shard[i], sizeof shard[i], "%d/%d", i, n);
        snprintf(out[i], sizeof out[i], "%s/s%d.json", dir, i);
        int k = 8;
        for (int t = 0; argv_tail[t] && k < 63; t++)
            argv[k++] = argv_tail[t];
        argv[k] = NULL;
        pids[i] = harness_spawn(argv, 1);
        cr_assert_gt(pids[i], 0);
    }
    for (int i = 0; i < n; i++) {
        int ws;
        waitpid(pids[i], &ws, 0);
        cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == want, "shard %d/%d did not exit %d", i, n, want);
    }
}
