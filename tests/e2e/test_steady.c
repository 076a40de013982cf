/* test_steady.c — steady_state end to end against `anvil sim`: a closed
 * loop long enough to reach it, its window and figures recomputed here from
 * request_timings (start and E2E of every request), and a run too short to. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

#define STEP_NS 500000000.0     /* the detector's grid: 0.5 s */

static const char *const fast[] = {"--ttft-ms", "20", "--itl-ms", "5", NULL};

/* Runs anvil against a fresh simulator started with sim_args; the artifact
 * parsed, the summary printed into out. */
static cJSON *run_against(const char *const sim_args[], const char *const run_args[], char *art, size_t artcap,
                          char *out, size_t outcap)
{
    cr_assert_eq(harness_tmpfile(art, artcap), 0);
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[64] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--out", art};
    int n = 6;
    for (int i = 0; run_args[i]; i++)
        argv[n++] = run_args[i];
    argv[n] = NULL;
    int status;
    cr_assert_eq(run_cmd(argv, out, outcap, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "anvil run exited %d:\n%s", status, out);
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    return a;
}

struct span {
    double start, end;      /* ns on the client's monotonic clock */
    double ttft;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank p of n values (sorted here). */
static double nearest(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = (int)ceil(p / 100 * n);
    return v[(k < 1 ? 1 : k) - 1];
}

/* Closed loop, 4 streams of ~215 ms requests, 240 of them: about 13 s. The
 * number in flight per 0.5 s step, from the timings, held 4 ± 10 % over
 * the longest run of steps the artifact names, and over no longer one. */
Test(steady_e2e, a_closed_loop_reaches_steady_state_as_the_timings_say, .timeout = 120)
{
    const char *args[] = {"--concurrency", "4", "--num-prompts", "240", "--input-len", "16", "--output-len", "40",
                          "--ignore-eos", NULL};
    char art[64];
    static char out[32768];
    cJSON *a = run_against(fast, args, art, sizeof art, out, sizeof out);
    cJSON *t = cJSON_GetObjectItem(a, "request_timings"), *st = cJSON_GetObjectItem(a, "steady_state");
    int n = cJSON_GetArraySize(t);
    cr_assert_eq(n, 240);
    cr_assert(cJSON_IsObject(st));
    struct span *s = calloc((size_t)n, sizeof *s);
    double t0 = INFINITY, last = 0;
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_GetArrayItem(t, i);
        s[i].start = harness_num(e, "start_monotonic_ns");
        s[i].end = s[i].start + harness_num(e, "e2e_ms") * 1e6;
        s[i].ttft = harness_num(e, "ttft_ms");
        t0 = fmin(t0, s[i].start);
        last = fmax(last, s[i].end);
    }
    int steps = (int)((last - t0) / STEP_NS);
    double *level = calloc((size_t)steps, sizeof *level);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < steps; k++) {
            double lo = t0 + k * STEP_NS, hi = lo + STEP_NS;
            double ov = fmin(s[i].end, hi) - fmax(s[i].start, lo);
            level[k] += ov > 0 ? ov / STEP_NS : 0;
        }
    int best = 0, at = 0;
    for (int k = 0, run = 0; k < steps; k++) {
        run = fabs(level[k] - 4) <= 0.4 + 1e-6 ? run + 1 : 0;
        if (run > best) {
            best = run;
            at = k + 1 - run;
        }
    }
    double run_s = (last - t0) / 1e9, len = best * 0.5;
    cr_assert(len >= 10, "in flight held 4 for only %.1f s of %.1f s", len, run_s);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(st, "reached")), "%s", out);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(st, "reason")));
    cr_assert_str_eq(cJSON_GetObjectItem(st, "basis")->valuestring, "in_flight");
    cr_assert_float_eq(harness_num(st, "target"), 4, 1e-9);
    cr_assert_float_eq(harness_num(st, "run_s"), run_s, 1e-6);
    cr_assert_float_eq(harness_num(st, "start_s"), at * 0.5, 1e-9);
    cr_assert_float_eq(harness_num(st, "length_s"), len, 1e-9);
    cr_assert_float_eq(harness_num(st, "share"), len / run_s, 1e-6);
    /* the figures: requests inside [a, b], nearest rank; ended in (a, b] per second */
    double a0 = t0 + at * STEP_NS, b0 = a0 + best * STEP_NS, *ttft = calloc((size_t)n, sizeof *ttft);
    int inside = 0, ended = 0;
    for (int i = 0; i < n; i++) {
        ended += s[i].end > a0 && s[i].end <= b0;
        if (s[i].start >= a0 && s[i].end <= b0)
            ttft[inside++] = s[i].ttft;
    }
    cr_assert_eq(harness_num(st, "requests"), inside);
    cr_assert_float_eq(harness_num(st, "ttft_p50_ms"), nearest(ttft, inside, 50), 1e-9);
    cr_assert_float_eq(harness_num(st, "ttft_p99_ms"), nearest(ttft, inside, 99), 1e-9);
    cr_assert_float_eq(harness_num(st, "request_throughput"), ended / len, 1e-6);
    /* 40 tokens a request: the tokens that arrived inside lie between those of the requests
     * inside and those of every request that overlapped it */
    double tps = harness_num(st, "output_throughput");
    cr_assert(tps >= 40.0 * inside / len && tps <= 40.0 * (inside + 8) / len, "%.1f tok/s", tps);
    cr_assert(strstr(out, "reached: "), "%s", out);
    /* anvil show prints the same line */
    const char *show[] = {harness_anvil_bin(), "show", art, NULL};
    int status;
    cr_assert_eq(run_cmd(show, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert(strstr(out, "steady state reached: "), "%s", out);
    free(ttft);
    free(level);
    free(s);
    cJSON_Delete(a);
    unlink(art);
}

/* 20 requests: about a second at target, under the 10 s minimum. */
Test(steady_e2e, a_run_under_ten_seconds_is_too_short, .timeout = 60)
{
    const char *args[] = {"--concurrency", "4", "--num-prompts", "20", "--input-len", "16", "--output-len", "40",
                          NULL};
    char art[64];
    static char out[32768];
    cJSON *a = run_against(fast, args, art, sizeof art, out, sizeof out);
    cJSON *st = cJSON_GetObjectItem(a, "steady_state");
    cr_assert(cJSON_IsObject(st));
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(st, "reached")));
    cr_assert_str_eq(cJSON_GetObjectItem(st, "reason")->valuestring, "too_short");
    cr_assert(harness_num(st, "length_s") < 10);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(st, "ttft_p50_ms")));
    cr_assert_eq(harness_num(st, "requests"), 0);
    cr_assert(strstr(out, "not reached: the longest stretch within 10 % of the target lasted under 10 s"), "%s", out);
    cJSON_Delete(a);
    unlink(art);
}

/* Open loop at 15 req/s against a simulator that runs 2 sequences at a time
 * (about 9 req/s): over every trailing 5 s window that ends before the last
 * send, the completions recomputed from the timings fall short of the sends
 * planned (start − send lateness) by over 10 %, and the artifact says never. */
Test(steady_e2e, an_open_loop_the_server_cannot_sustain_never_reaches_it, .timeout = 120)
{
    const char *sim_args[] = {"--max-num-seqs", "2", NULL};
    const char *args[] = {"--request-rate", "15", "--burstiness", "inf", "--num-prompts", "90", "--input-len", "16",
                          "--output-len", "40", "--ignore-eos", NULL};
    char art[64];
    static char out[32768];
    cJSON *a = run_against(sim_args, args, art, sizeof art, out, sizeof out);
    cJSON *t = cJSON_GetObjectItem(a, "request_timings"), *st = cJSON_GetObjectItem(a, "steady_state");
    int n = cJSON_GetArraySize(t);
    cr_assert_eq(n, 90, "every request completes (queued, not failed)");
    double *sched = calloc((size_t)n, sizeof *sched), *end = calloc((size_t)n, sizeof *end);
    double t0 = INFINITY, last_sched = 0;
    for (int i = 0; i < n; i++) {
        cJSON *e = cJSON_GetArrayItem(t, i);
        double start = harness_num(e, "start_monotonic_ns");
        sched[i] = start - harness_num(e, "send_lateness_ms") * 1e6;
        end[i] = start + harness_num(e, "e2e_ms") * 1e6;
        t0 = fmin(t0, start);
        last_sched = fmax(last_sched, sched[i]);
    }
    int judged = 0;     /* windows of 10 steps (5 s: max(5, 50 / 15)) ending by the last send */
    for (int k = 9; t0 + (k + 1) * STEP_NS <= last_sched; k++, judged++) {
        double lo = t0 + (k - 9) * STEP_NS, hi = t0 + (k + 1) * STEP_NS;
        int sent = 0, done = 0;
        for (int i = 0; i < n; i++) {
            sent += sched[i] >= (k == 9 ? -INFINITY : lo) && sched[i] < hi;
            done += end[i] >= lo && end[i] < hi;
        }
        cr_assert(abs(done - sent) > 0.1 * sent, "step %d: %d done of %d sent", k, done, sent);
    }
    cr_assert_geq(judged, 1);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(st, "reached")));
    cr_assert_str_eq(cJSON_GetObjectItem(st, "basis")->valuestring, "completion_rate");
    cr_assert_str_eq(cJSON_GetObjectItem(st, "reason")->valuestring, "never_at_target");
    cr_assert(strstr(out, "not reached: the load never held within 10 % of its target"), "%s", out);
    free(sched);
    free(end);
    cJSON_Delete(a);
    unlink(art);
}
