/* test_ramp.c — staged ramps end to end against anvil sim: a linear rate
 * ramp's sends (the simulator's trace as ground truth) follow vLLM's
 * formula, recomputed here; a closed-loop ramp starts its streams in the
 * stated steps; the artifact records the ramp; warm-ups run before it; bad
 * combinations are usage errors before any request. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"
#include "scaleout.h"

#define MAX_REQ 64

/* The latest end of a warm-up in the simulator's trace (ns), or NAN. */
static double last_warmup_end(const char *trace)
{
    static cJSON *lines[MAX_REQ + 8];
    int n = harness_read_jsonl(trace, lines, MAX_REQ + 8);
    double last = NAN;
    for (int i = 0; i < n; i++) {
        const cJSON *id = cJSON_GetObjectItem(lines[i], "request_id");
        if (cJSON_IsString(id) && !strncmp(id->valuestring, "anvil-warmup-", 13)) {
            double f = harness_num(lines[i], "finished_ns");
            last = isnan(last) || f > last ? f : last;
        }
        cJSON_Delete(lines[i]);
    }
    return last;
}

/* Runs anvil against a traced simulator; the artifact and the trace. */
static cJSON *run_traced(const char *const sim_args[], const char *const run_args[], struct harness_traced *tr,
                         char *trace, size_t cap)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(trace, cap), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sa[16] = {"--trace", trace};
    for (int i = 0; sim_args[i]; i++)
        sa[2 + i] = sim_args[i];
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    const char *argv[40] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--out", art,
                            "--calibration", "none"};
    int n = 8;
    for (int i = 0; run_args[i]; i++)
        argv[n++] = run_args[i];
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    harness_read_trace(trace, tr, MAX_REQ);
    cJSON *a = harness_load_json(art);
    unlink(art);
    return a;
}

/* The ramp's end after the artifact's first measured send, s: where its
 * steady state may begin (recomputed from request_timings). */
static double ramp_end_after_first_send(const cJSON *a)
{
    const cJSON *t;
    double first = INFINITY;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        first = fmin(first, harness_num(t, "start_monotonic_ns"));
    return (harness_num(cJSON_GetObjectItem(a, "ramp"), "end_ns") - first) / 1e9;
}

/* Request i's start in the artifact (CLOCK_MONOTONIC ns), by index. */
static void starts_of(const cJSON *a, double *start, int n)
{
    for (int i = 0; i < n; i++)
        start[i] = NAN;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        int i = (int)harness_num(t, "request_index");
        cr_assert(i >= 0 && i < n);
        start[i] = harness_num(t, "start_monotonic_ns");
    }
}

/* A linear ramp from 5 to 40 req/s over 40 requests with constant gaps:
 * request i is due Σ_{j=1..i} 1/(5 + 35 j/39) s after the first (about
 * 2.3 s in all). The simulator received each within 25 ms of that,
 * give or take the send lateness the artifact reports; every request is
 * measured; the artifact names the ramp and its end (the last scheduled
 * send); the two warm-ups ended before the ramp began. */
Test(ramp, linear_ramp_sends_follow_the_ramp, .timeout = 120)
{
    enum { N = 40 };
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "2", NULL};
    const char *run_args[] = {"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "5", "--ramp-up-end-rps", "40",
                              "--burstiness", "inf", "--num-prompts", "40", "--warmup", "2", "--input-len", "16",
                              "--output-len", "4", "--threads", "2", NULL};
    static struct harness_traced tr[MAX_REQ];
    char trace[64];
    cJSON *a = run_traced(sim_args, run_args, tr, trace, sizeof trace);
    static double late[MAX_REQ];
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        late[(int)harness_num(t, "request_index") % MAX_REQ] = harness_num(t, "send_lateness_ms") / 1e3;
    double want = 0;
    for (int i = 0; i < N; i++) {
        if (i)
            want += 1 / (5 + 35.0 * i / (N - 1));
        cr_assert(!isnan(tr[i].received), "request %d reached the server", i);
        /* never early; late only by what the client says it was late (a loaded machine), 25 ms aside */
        double got = (tr[i].received - tr[0].received) / 1e9 + late[0] - late[i];
        cr_assert(fabs(got - want) < 0.025, "request %d received %.4f s after the first (less its lateness), the "
                  "ramp says %.4f", i, got, want);
    }
    cr_assert_eq(harness_num(a, "completed"), N, "every ramp request is measured");
    cr_assert_str_eq(cJSON_GetObjectItem(a, "load_mode")->valuestring, "open-loop");
    const cJSON *r = cJSON_GetObjectItem(a, "ramp");
    cr_assert(cJSON_IsObject(r), "the artifact records the ramp");
    cr_assert_str_eq(cJSON_GetObjectItem(r, "strategy")->valuestring, "linear");
    cr_assert_eq(harness_num(r, "start_rps"), 5);
    cr_assert_eq(harness_num(r, "end_rps"), 40);
    cr_assert(fabs(harness_num(r, "end_s") - want) < 1e-6, "end_s %.9f, the last send %.9f", harness_num(r, "end_s"),
              want);
    static double start[MAX_REQ];
    starts_of(a, start, N);
    double last_due = start[N - 1] - late[N - 1] * 1e9;
    cr_assert(fabs(harness_num(r, "end_ns") - last_due) < 1e4, "end_ns %.0f, the last send was due at %.0f",
              harness_num(r, "end_ns"), last_due);
    double warm_end = last_warmup_end(trace);
    cr_assert(!isnan(warm_end), "the warm-ups were sent");
    cr_assert_lt(warm_end, tr[0].received, "the warm-ups ended before the ramp began");
    cJSON_Delete(a);
    unlink(trace);
}

/* Each request's scheduled time (start less its lateness) after request
 * 0's, ns, into off[0..n). */
static void schedule_of(const cJSON *a, double *off, int n)
{
    static double at[MAX_REQ * 4];
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        int i = (int)harness_num(t, "request_index");
        cr_assert(i >= 0 && i < n);
        at[i] = harness_num(t, "start_monotonic_ns") - harness_num(t, "send_lateness_ms") * 1e6;
    }
    for (int i = 0; i < n; i++)
        off[i] = at[i] - at[0];
}

/* A Poisson ramp is one schedule, computed before sending: the same with
 * one measuring thread and two, and its last send is the ramp's end_s. */
Test(ramp, poisson_ramp_is_the_same_schedule_with_1_and_2_threads, .timeout = 120)
{
    enum { N = 200 };
    static double off[2][N];
    double end_s[2];
    for (int k = 0; k < 2; k++) {
        const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
        const char *run_args[] = {"--ramp-up-strategy", "exponential", "--ramp-up-start-rps", "50",
                                  "--ramp-up-end-rps", "800", "--num-prompts", "200", "--input-len", "16",
                                  "--output-len", "2", "--seed", "9", "--threads", k ? "2" : "1", NULL};
        static struct harness_traced tr[MAX_REQ];
        char trace[64];
        cJSON *a = run_traced(sim_args, run_args, tr, trace, sizeof trace);
        unlink(trace);
        cr_assert_eq(harness_num(a, "completed"), N);
        schedule_of(a, off[k], N);
        end_s[k] = harness_num(cJSON_GetObjectItem(a, "ramp"), "end_s");
        cJSON_Delete(a);
    }
    for (int i = 1; i < N; i++) {
        cr_assert_geq(off[0][i], off[0][i - 1] - 2, "the schedule never goes back");
        cr_assert(fabs(off[0][i] - off[1][i]) <= 2, "request %d scheduled %.0f ns after request 0 with 1 thread, "
                  "%.0f with 2", i, off[0][i], off[1][i]);
    }
    cr_assert_eq(end_s[0], end_s[1]);
    cr_assert(fabs(off[0][N - 1] - end_s[0] * 1e9) <= 2, "the last send %.0f ns, end_s %.9f", off[0][N - 1],
              end_s[0]);
}

/* Closed loop, 5 streams started over 2 s on two threads: stream k starts
 * k·0.5 s after the first. Each request lasts about 3 s (60 tokens, 50 ms
 * apart), longer than the ramp, so requests 0..4 are the streams' first
 * and their starts are the steps; the server never holds more requests
 * than streams started. */
Test(ramp, closed_loop_streams_start_in_the_stated_steps, .timeout = 120)
{
    enum { C = 5, N = 10 };
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "50", NULL};
    const char *run_args[] = {"--concurrency", "5", "--ramp-up-s", "2", "--num-prompts", "10", "--warmup", "1",
                              "--input-len", "16", "--output-len", "60", "--threads", "2", NULL};
    static struct harness_traced tr[MAX_REQ];
    char trace[64];
    cJSON *a = run_traced(sim_args, run_args, tr, trace, sizeof trace);
    for (int k = 0; k < C; k++) {
        double got = (tr[k].received - tr[0].received) / 1e9, want = 2.0 * k / (C - 1);
        /* never early; late by at most a loaded machine's timer delay */
        cr_assert(got > want - 0.005 && got < want + 0.1, "stream %d started %.4f s after the first, the step says "
                  "%.4f", k, got, want);
    }
    for (int i = 0; i < N; i++) {     /* in flight at each arrival: never more than the streams started */
        double t = (tr[i].received - tr[0].received) / 1e9;
        int running = 0;
        for (int j = 0; j < N; j++)
            running += tr[j].received <= tr[i].received && tr[j].finished > tr[i].received;
        int started = t >= 2 ? C : 1 + (int)floor(t / 0.5 + 1e-3);
        cr_assert_leq(running, started, "at %.3f s: %d in flight, %d streams started", t, running, started);
    }
    cr_assert_eq(harness_num(a, "completed"), N);
    cr_assert_str_eq(cJSON_GetObjectItem(a, "load_mode")->valuestring, "closed-loop");
    const cJSON *r = cJSON_GetObjectItem(a, "ramp");
    cr_assert(cJSON_IsObject(r));
    cr_assert_str_eq(cJSON_GetObjectItem(r, "strategy")->valuestring, "streams");
    cr_assert_eq(harness_num(r, "ramp_up_s"), 2);
    cr_assert_eq(harness_num(r, "end_s"), 2);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(r, "start_rps")));
    /* the steady state counts nothing before the ramp's end (it did: 0) */
    cr_assert_float_eq(harness_num(cJSON_GetObjectItem(a, "steady_state"), "not_before_s"),
                       ramp_end_after_first_send(a), 1e-6);
    static double start[MAX_REQ];
    starts_of(a, start, N);
    double end_ns = harness_num(r, "end_ns");
    cr_assert(start[C - 1] > end_ns - 5e6 && start[C - 1] < end_ns + 100e6, "end_ns %.0f is the last stream's start "
              "(%.0f), give or take a loaded machine's timer delay", end_ns, start[C - 1]);
    cr_assert_lt(last_warmup_end(trace), tr[0].received, "the warm-up ended before the ramp began");
    cJSON_Delete(a);
    unlink(trace);
}

/* Duration mode: the stream ramp starts with the warm-up, the steady
 * state's origin is the first measured send (the window's): the ramp's end
 * lands --warmup-s earlier on it. It was the ramp's end_s (4 s), so a run
 * whose ramp ended in the warm-up lost the window's first seconds. */
Test(ramp, a_ramp_in_the_warmup_is_not_held_against_the_window, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "10", NULL};
    const char *run_args[] = {"--concurrency", "4", "--ramp-up-s", "3", "--warmup-s", "2", "--duration", "2",
                              "--input-len", "16", "--output-len", "20", NULL};
    static struct harness_traced tr[MAX_REQ];
    char trace[64];
    cJSON *a = run_traced(sim_args, run_args, tr, trace, sizeof trace);
    unlink(trace);
    double want = ramp_end_after_first_send(a);
    double got = harness_num(cJSON_GetObjectItem(a, "steady_state"), "not_before_s");
    cr_assert(want > 0.5 && want < 1.2, "the ramp ends %.3f s into the window (3 s ramp, 2 s warm-up)", want);
    cr_assert(fabs(got - want) < 1e-6, "not_before_s %.6f, the ramp's end after the first measured send %.6f", got,
              want);
    cJSON_Delete(a);
}

/* Two shards of one closed loop of 4 streams started over 1.5 s: shard 0
 * holds streams 0 and 1 (at 0 and 0.5 s), shard 1 streams 2 and 3 (at 1
 * and 1.5 s), all counted from the agreed start, so together they start
 * in the single run's steps. Requests 0..3 are the streams' first (slot i
 * mod 4; each lasts about 3 s, longer than the ramp). */
Test(ramp, shards_start_their_streams_at_the_whole_runs_steps, .timeout = 120)
{
    enum { C = 4 };
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "5", "--itl-ms", "50", NULL};
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    char dir[] = "/tmp/anvil-ramp-XXXXXX", path[2][128];
    cr_assert(mkdtemp(dir));
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "8", "--concurrency", "4", "--ramp-up-s", "1.5",
                          "--input-len", "16", "--output-len", "60", "--calibration", "none", NULL};
    scaleout_run_shards(dir, 2, tail);
    cr_assert_eq(sim_stop(&sim), 0);
    double start[C] = {NAN, NAN, NAN, NAN}, end_ns[2];
    for (int k = 0; k < 2; k++)
        snprintf(path[k], sizeof path[k], "%s/s%d.json", dir, k);
    char merged[160], e[4096];
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    const char *margv[] = {harness_anvil_bin(), "merge", "--out", merged, path[0], path[1], NULL};
    int status;
    cr_assert_eq(run_cmd_err(margv, NULL, 0, e, sizeof e, &status), 0);
    cr_assert_eq(status, 0, "%s", e);
    cJSON *m = harness_load_json(merged);
    const cJSON *mr = cJSON_GetObjectItem(m, "ramp");
    cr_assert(cJSON_IsObject(mr), "the merged artifact keeps the ramp");
    cr_assert_str_eq(cJSON_GetObjectItem(mr, "strategy")->valuestring, "streams");
    cr_assert_eq(harness_num(mr, "end_s"), 1.5);
    cr_assert_float_eq(harness_num(cJSON_GetObjectItem(m, "steady_state"), "not_before_s"),
                       ramp_end_after_first_send(m), 1e-6, "the merged steady state starts after the ramp");
    cr_assert_gt(harness_num(cJSON_GetObjectItem(m, "steady_state"), "not_before_s"), 1.4);
    cJSON_Delete(m);
    unlink(merged);
    for (int k = 0; k < 2; k++) {
        cJSON *a = harness_load_json(path[k]);
        const cJSON *r = cJSON_GetObjectItem(a, "ramp"), *t;
        cr_assert_eq(harness_num(r, "end_s"), 1.5, "shard %d: the whole run's ramp", k);
        end_ns[k] = harness_num(r, "end_ns");
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
            int i = (int)harness_num(t, "request_index");
            if (i < C) {
                cr_assert_eq(i / 2, k, "request %d is a stream of shard %d", i, i / 2);
                start[i] = harness_num(t, "start_monotonic_ns");
            }
        }
        cJSON_Delete(a);
        unlink(path[k]);
    }
    rmdir(dir);
    cr_assert(fabs(end_ns[0] - end_ns[1]) < 5e6, "the shards' ramps end together (%.0f ns apart)",
              end_ns[0] - end_ns[1]);
    for (int i = 0; i < C; i++) {
        double got = (start[i] - start[0]) / 1e9, want = 1.5 * i / (C - 1);
        cr_assert(got > want - 0.01 && got < want + 0.1, "stream %d started %.4f s after stream 0, the step says "
                  "%.4f", i, got, want);
    }
}

/* Every bad combination is a usage error naming the flags, before any
 * request (nothing listens at the URL). */
Test(ramp, bad_combinations_are_usage_errors)
{
    struct { const char *args[10]; const char *want; } cases[] = {
        {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "5", "--request-rate", "3"},
         "without --request-rate"},
        {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1"}, "needs both --ramp-up-start-rps and"},
        {{"--ramp-up-start-rps", "1", "--ramp-up-end-rps", "5"}, "go with --ramp-up-strategy"},
        {{"--ramp-up-strategy", "exponential", "--ramp-up-start-rps", "0", "--ramp-up-end-rps", "5"},
         "exponential ramp needs --ramp-up-start-rps above 0"},
        {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "10", "--ramp-up-end-rps", "5"},
         "must not be above --ramp-up-end-rps"},
        {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "0", "--ramp-up-end-rps", "0"},
         "--ramp-up-end-rps must be above 0"},
        {{"--ramp-up-strategy", "quadratic"}, "expected linear or exponential"},
        {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "5", "--duration", "5"},
         "not with --duration"},
        {{"--ramp-up-s", "2", "--request-rate", "5"}, "not with --request-rate"},
        {{"--ramp-up-s", "2", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "5"},
         "not with --request-rate or --ramp-up-strategy"},
        {{"--ramp-up-s", "2", "--concurrency", "1"}, "at least 2"},
        {{"--ramp-up-s", "0", "--concurrency", "4"}, "--ramp-up-s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[20] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1"};
        int n = 4;
        for (int k = 0; cases[i].args[k]; k++)
            argv[n++] = cases[i].args[k];
        char err[2048];
        int status;
        cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "case %zu: exit %d (%s)", i, status, err);
        cr_assert(strstr(err, cases[i].want), "case %zu: '%s' not in: %s", i, cases[i].want, err);
    }
}
