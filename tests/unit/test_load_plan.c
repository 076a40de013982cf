/* test_load_plan.c — the load plan before sending: closed-loop slots,
 * open-loop arrival times split over threads, multi-turn order, the thread
 * count, and the errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "load/arrivals.h"
#include "load/plan.h"

static struct plan_cfg closed(int warmup, int n, int c, int threads)
{
    return (struct plan_cfg){.warmup = warmup, .num_prompts = n, .concurrency = c, .request_rate = INFINITY,
                             .burstiness = 1, .threads = threads, .fixed_span = true};
}

Test(load_plan, closed_loop_slots_split_evenly_and_sum_to_the_concurrency)
{
    int cs[] = {2, 3, 7, 256, 1025};
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++)
        for (int th = 1; th <= 2; th++) {
            struct load_plan p;
            char err[200];
            struct plan_cfg c = closed(3, 50, cs[i], th);
            cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
            cr_assert_not(p.open_loop);
            cr_assert_eq(p.n, 53);
            int sum = 0;
            for (int t = 0; t < th; t++) {
                sum += p.slots[t];
                cr_assert_geq(p.slots[t], cs[i] / th);
                cr_assert_leq(p.slots[t], cs[i] / th + 1);
            }
            cr_assert_eq(sum, cs[i]);
            for (long s = 0; s < p.n; s++) {
                cr_assert_eq(p.entries[s].send_ns, 0);
                cr_assert_eq(p.entries[s].thread, -1, "closed loop: any thread's free slot takes it");
                cr_assert_eq(p.entries[s].follows, -1);
            }
            plan_free(&p);
        }
}

/* The open-loop schedule is arrivals_schedule's, whatever the threads; the
 * threads' shares interleave and together are the whole schedule. */
Test(load_plan, open_loop_send_times_are_the_schedule_for_any_thread_count)
{
    enum { N = 1000 };
    static int64_t want[N];
    cr_assert_eq(arrivals_schedule(20, 1, 7, true, want, N), 0);
    for (int th = 1; th <= 4; th++) {
        struct plan_cfg c = closed(2, N, 0, th);
        c.request_rate = 20;
        c.seed = 7;
        struct load_plan p;
        char err[200];
        cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
        cr_assert(p.open_loop);
        int per[4] = {0};
        for (long s = 0; s < 2; s++)
            cr_assert(p.entries[s].send_ns == 0 && p.entries[s].thread == -1, "warm-ups: closed loop");
        for (long i = 0; i < N; i++) {
            const struct plan_entry *e = &p.entries[2 + i];
            cr_assert_eq(e->send_ns, want[i], "request %ld with %d threads", i, th);
            cr_assert(e->thread >= 0 && e->thread < th);
            per[e->thread]++;
        }
        for (int t = 0; t < th; t++) {
            cr_assert_geq(per[t], N / th);
            cr_assert_leq(per[t], N / th + 1);
            cr_assert_eq(p.slots[t], (int)p.n, "no cap: each thread may hold every request");
        }
        plan_free(&p);
    }
}

Test(load_plan, open_loop_cap_is_every_threads_slot_count)
{
    struct plan_cfg c = closed(0, 100, 8, 2);
    c.request_rate = 5;
    struct load_plan p;
    char err[200];
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(p.slots[0], 8);
    cr_assert_eq(p.slots[1], 8);
    plan_free(&p);
}

/* Conversations: turn k+1 follows turn k, interleaved with other ones. */
static long two_conversations(void *ud, long seq)
{
    (void)ud;
    return seq >= 2 ? seq - 2 : -1;
}

Test(load_plan, multi_turn_order_is_kept)
{
    struct plan_cfg c = closed(0, 9, 2, 2);
    c.follows = two_conversations;
    struct load_plan p;
    char err[200];
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
    cr_assert(p.any_follows);
    for (long s = 0; s < 9; s++)
        cr_assert_eq(p.entries[s].follows, s >= 2 ? s - 2 : -1);
    plan_free(&p);
}

/* An agent's turn 0 (request 0) spawns sub-agents 1 and 2; turn 1
 * (request 3) waits for all three, 0.5 s after the last ends. */
static int fan_out(void *ud, long seq, long *out, int cap)
{
    (void)ud;
    (void)cap;
    if (seq == 1 || seq == 2) {
        out[0] = 0;
        return 1;
    }
    if (seq != 3)
        return 0;
    out[0] = 2;
    out[1] = 1;
    out[2] = 0;
    return 3;
}

static int64_t half_second(void *ud, long seq)
{
    (void)ud;
    return seq == 3 ? 500000000 : 7;
}

Test(load_plan, requests_may_wait_for_several_and_several_for_one)
{
    struct plan_cfg c = closed(0, 5, 4, 1);
    c.waits_for = fan_out;
    c.think_ns = half_second;
    struct load_plan p;
    char err[200];
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
    cr_assert(p.any_follows);
    int waits[] = {0, 1, 1, 3, 0};
    for (long s = 0; s < 5; s++)
        cr_assert_eq(p.entries[s].n_waits, waits[s], "request %ld", s);
    cr_assert_eq(p.entries[3].think_ns, 500000000);
    cr_assert_eq(p.entries[1].think_ns, 7);
    cr_assert_eq(p.entries[0].think_ns, 0, "no think time without a wait");
    /* who waits for whom */
    cr_assert_eq(p.waiters_at[1] - p.waiters_at[0], 3, "request 0: requests 1, 2 and 3 wait for it");
    cr_assert_eq(p.waiters[p.waiters_at[0]], 1);
    cr_assert_eq(p.waiters[p.waiters_at[0] + 2], 3);
    cr_assert_eq(p.waiters_at[2] - p.waiters_at[1], 1);
    cr_assert_eq(p.waiters[p.waiters_at[1]], 3);
    cr_assert_eq(p.waiters_at[5] - p.waiters_at[3], 0);
    plan_free(&p);
}

/* Request 1 waits for request 0 three hundred times over: more than a plan
 * holds. */
static int too_many(void *ud, long seq, long *out, int cap)
{
    (void)ud;
    for (int i = 0; i < cap && seq == 1; i++)
        out[i] = 0;
    return seq == 1 ? 300 : 0;
}

/* A wait beyond PLAN_MAX_WAITS is refused, not dropped (it was capped
 * silently before, and the request could start before one it waits for). */
Test(load_plan, more_waits_than_a_plan_holds_are_refused)
{
    struct plan_cfg c = closed(0, 3, 1, 1);
    c.waits_for = too_many;
    struct load_plan p;
    char err[200] = "";
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    cr_assert_str_eq(err, "request 1 waits for 300 requests, more than the 256 a plan allows");
}

static long follows_later(void *ud, long seq)
{
    (void)ud;
    return seq == 1 ? 3 : -1;
}

static long two_followers(void *ud, long seq)
{
    (void)ud;
    return seq >= 1 ? 0 : -1;
}

Test(load_plan, bad_plans_are_refused_with_the_reason)
{
    struct load_plan p;
    char err[200] = "";
    struct plan_cfg c = closed(0, 5, 2, 1);
    c.follows = follows_later;
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "request 1 follows request 3"), "%s", err);
    cr_assert_null(p.entries);
    c.follows = two_followers;
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "request 2 is the second to follow request 0"), "%s", err);
    c = closed(0, 5, 1, 2);
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "concurrency of at least the threads"), "%s", err);
    c = closed(0, 5, 1, 0);
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    c = closed(0, 5, 1, 1);
    c.request_rate = -1;
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "rate (-1)"), "%s", err);
}

/* A trace's send times replace the schedule, and must not go back. */
Test(load_plan, send_times_from_a_trace)
{
    struct plan_cfg c = closed(1, 4, 2, 2);
    struct load_plan p;
    char err[200];
    cr_assert_eq(plan_build(&c, &p, err, sizeof err), 0, "%s", err);
    int64_t bad[4] = {0, 5, 3, 9}, good[4] = {0, 1000, 1000, 5000};
    cr_assert_eq(plan_set_send_times(&p, bad), -1);
    cr_assert_not(p.open_loop);
    cr_assert_eq(plan_set_send_times(&p, good), 0);
    cr_assert(p.open_loop);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(p.entries[1 + i].send_ns, good[i]);
        cr_assert_eq(p.entries[1 + i].thread, i % 2);
    }
    cr_assert_eq(p.slots[0], 2, "the concurrency becomes a global cap");
    plan_free(&p);
}

Test(load_plan, thread_count_defaults)
{
    cr_assert_eq(plan_threads(0, 2, 256, 1000), 2);
    cr_assert_eq(plan_threads(0, 2, 100, 1000), 1, "one thread per 64 streams at most");
    cr_assert_eq(plan_threads(0, 8, 200, 1000), 3);
    cr_assert_eq(plan_threads(0, 2, 1, 1000), 1);
    cr_assert_eq(plan_threads(0, -1, 1024, 1000), 1, "unknown cores: one");
    cr_assert_eq(plan_threads(2, 2, 4, 1000), 2, "asked for: only the concurrency caps it");
    cr_assert_eq(plan_threads(4, 2, 3, 1000), 3);
    cr_assert_eq(plan_threads(2, 2, 0, 1), 1, "never more than the requests");
    cr_assert_eq(plan_threads(0, 4, 0, 1000), 4, "no cap: every request may be in flight");
}
