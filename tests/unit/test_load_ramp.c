/* test_load_ramp.c — staged ramps in the load plan: an open-loop rate ramp's
 * send times against vLLM's formula recomputed here, a closed-loop ramp's
 * stream starts, both the same over threads and shards, and the refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "load/arrivals.h"
#include "load/plan.h"

static struct plan_cfg ramp_cfg(enum ramp_strategy st, double r0, double r1, double burst, int n, int threads)
{
    return (struct plan_cfg){.warmup = 3, .num_prompts = n, .concurrency = 0, .request_rate = INFINITY,
                             .burstiness = burst, .seed = 11, .threads = threads, .fixed_span = true,
                             .ramp = {.strategy = st, .start_rps = r0, .end_rps = r1}};
}

/* vLLM's rate at request i of n, written out again: progress i/(n − 1). */
static double rate_at(enum ramp_strategy st, double r0, double r1, int i, int n)
{
    double p = (double)i / (n - 1);
    return st == RAMP_LINEAR ? r0 + (r1 - r0) * p : r0 * pow(r1 / r0, p);
}

/* With constant gaps (burstiness inf) the gap before request i is exactly
 * 1/rate(i): the send times are the running sum, whatever the threads. */
static void check_deterministic(enum ramp_strategy st, double r0, double r1)
{
    enum { N = 60 };
    for (int th = 1; th <= 3; th++) {
        struct plan_cfg c = ramp_cfg(st, r0, r1, INFINITY, N, th);
        struct load_plan p;
        char err[200];
        cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
        cr_assert(p.open_loop, "a rate ramp is an open loop");
        double t = 0;
        for (int i = 0; i < N; i++) {
            if (i)
                t += 1 / rate_at(st, r0, r1, i, N);
            const struct plan_entry *e = &p.entries[3 + i];
            cr_assert(fabs((double)e->send_ns - t * 1e9) <= 2, "request %d: %lld ns, want %.0f", i,
                      (long long)e->send_ns, t * 1e9);
            cr_assert_eq(e->thread, i % th);
        }
        for (int w = 0; w < 3; w++)
            cr_assert_eq(p.entries[w].send_ns, 0, "warm-ups are before the ramp");
        plan_free(&p);
    }
}

Test(load_ramp, linear_ramp_send_times_follow_vllms_formula)
{
    check_deterministic(RAMP_LINEAR, 2, 20);
    check_deterministic(RAMP_LINEAR, 0, 10);    /* the first rate is never used: the first goes at 0 */
}

Test(load_ramp, exponential_ramp_send_times_follow_vllms_formula)
{
    check_deterministic(RAMP_EXPONENTIAL, 1, 64);
}

/* Poisson and gamma gaps are drawn at the instantaneous rate: gap_i ·
 * rate(i) has mean 1 and variance 1/B, over a ramp of 30x. */
Test(load_ramp, gamma_gaps_are_drawn_at_the_instantaneous_rate)
{
    enum { N = 40000 };
    double bursts[] = {1, 4};
    for (size_t b = 0; b < 2; b++) {
        static int64_t t[N];
        struct load_ramp r = {.strategy = RAMP_LINEAR, .start_rps = 1, .end_rps = 30};
        cr_assert_eq(arrivals_ramp_schedule(&r, bursts[b], 5, t, N), 0);
        double sum = 0, sq = 0;
        for (int i = 1; i < N; i++) {
            double x = (double)(t[i] - t[i - 1]) / 1e9 * rate_at(RAMP_LINEAR, 1, 30, i, N);
            sum += x;
            sq += x * x;
        }
        double mean = sum / (N - 1), var = sq / (N - 1) - mean * mean;
        cr_assert(fabs(mean - 1) < 0.03, "burstiness %g: mean %g", bursts[b], mean);
        cr_assert(fabs(var - 1 / bursts[b]) < 0.06, "burstiness %g: variance %g", bursts[b], var);
    }
}

Test(load_ramp, poisson_ramp_is_the_same_schedule_with_1_and_2_threads_and_over_shards)
{
    enum { N = 500, SHARDS = 3 };
    struct load_plan one, two;
    char err[200];
    struct plan_cfg c1 = ramp_cfg(RAMP_LINEAR, 1, 50, 1, N, 1), c2 = ramp_cfg(RAMP_LINEAR, 1, 50, 1, N, 2);
    cr_assert_eq(plan_build(&c1, &one, err, sizeof err), 0, "%s", err);
    cr_assert_eq(plan_build(&c2, &two, err, sizeof err), 0, "%s", err);
    for (long s = 0; s < one.n; s++)
        cr_assert_eq(one.entries[s].send_ns, two.entries[s].send_ns, "request %ld", s);
    long seen = 0;
    for (int i = 0; i < SHARDS; i++) {
        struct plan_shard sh;
        cr_assert_eq(plan_shard(&c1, NULL, i, SHARDS, &sh, err, sizeof err), 0, "%s", err);
        cr_assert_not_null(sh.send_ns, "a ramp's shard is open loop");
        for (int k = 0; k < sh.num_prompts; k++)
            cr_assert_eq(sh.send_ns[k], one.entries[sh.seqs[sh.warmup + k]].send_ns);
        seen += sh.num_prompts;
        plan_shard_free(&sh);
    }
    cr_assert_eq(seen, N);
    plan_free(&one);
    plan_free(&two);
}

/* Closed loop: stream k of C starts k·S/(C − 1) after the measured phase
 * starts; the threads share the streams, and each shard gets its slots'. */
Test(load_ramp, closed_loop_streams_start_in_equal_steps_over_ramp_up_s)
{
    enum { C = 7 };
    const double S = 3;
    for (int th = 1; th <= 2; th++) {
        struct plan_cfg c = {.warmup = 2, .num_prompts = 40, .concurrency = C, .request_rate = INFINITY,
                             .burstiness = 1, .threads = th, .ramp = {.ramp_up_s = S}};
        struct load_plan p;
        char err[200];
        cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
        cr_assert_not(p.open_loop);
        cr_assert_not_null(p.stream_start_ns);
        for (int k = 0; k < C; k++)
            cr_assert(fabs((double)p.stream_start_ns[k] - S * 1e9 * k / (C - 1)) <= 1, "stream %d", k);
        plan_free(&p);
    }
    struct plan_cfg c = {.num_prompts = 40, .concurrency = C, .request_rate = INFINITY, .burstiness = 1,
                         .threads = 1, .ramp = {.ramp_up_s = S}};
    int64_t joined[C];
    int k = 0;
    for (int i = 0; i < 3; i++) {
        struct plan_shard sh;
        char err[200];
        cr_assert_eq(plan_shard(&c, NULL, i, 3, &sh, err, sizeof err), 0, "%s", err);
        cr_assert_not_null(sh.stream_start_ns);
        for (int j = 0; j < sh.concurrency; j++)
            joined[k++] = sh.stream_start_ns[j];
        plan_shard_free(&sh);
    }
    cr_assert_eq(k, C, "the shards' streams are the whole run's");
    for (int j = 0; j < C; j++)
        cr_assert_eq(joined[j], plan_stream_start_ns(S, j, C), "stream %d", j);
}

Test(load_ramp, bad_ramps_are_refused_with_the_reason)
{
    struct load_plan p;
    char err[200] = "";
    struct plan_cfg c = ramp_cfg(RAMP_EXPONENTIAL, 0, 10, 1, 10, 1);
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "ramp"), "%s", err);
    c = ramp_cfg(RAMP_LINEAR, 0, 0, 1, 10, 1);
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    c = ramp_cfg(RAMP_LINEAR, 1, 10, 1, 10, 1);
    c.ramp.ramp_up_s = 2;
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "closed loop"), "%s", err);
}
