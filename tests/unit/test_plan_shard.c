/* test_plan_shard.c — the plan split over processes (plan_shard): the
 * shards together are the single-process plan, entry for entry. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "load/arrivals.h"
#include "load/plan.h"

static struct plan_cfg cfg(int warmup, int n, int c, double rate)
{
    return (struct plan_cfg){.warmup = warmup, .num_prompts = n, .concurrency = c, .request_rate = rate,
                             .burstiness = 1, .seed = 7, .threads = 1, .fixed_span = true};
}

/* Every seq of the whole plan is in exactly one shard, each shard's seqs
 * rise, and local maps them back. */
static void assert_partition(const struct plan_shard *s, int count, long total)
{
    char *seen = calloc((size_t)total, 1);
    for (int i = 0; i < count; i++) {
        long n = (long)s[i].warmup + s[i].num_prompts;
        cr_assert_eq(s[i].n_total, total);
        for (long k = 0; k < n; k++) {
            long seq = s[i].seqs[k];
            cr_assert(seq >= 0 && seq < total);
            cr_assert_not(seen[seq], "seq %ld in two shards", seq);
            seen[seq] = 1;
            cr_assert_eq(s[i].local[seq], k);
            if (k)
                cr_assert_gt(seq, s[i].seqs[k - 1]);
        }
    }
    for (long q = 0; q < total; q++)
        cr_assert(seen[q], "seq %ld in no shard", q);
    free(seen);
}

Test(plan_shard, closed_loop_concurrency_and_requests_split_by_slot)
{
    int counts[] = {1, 2, 3, 5};
    int concs[] = {5, 6, 7, 64};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++) {
            int n = counts[a], c = concs[b];
            struct plan_shard s[5];
            char err[200];
            struct plan_cfg pc = cfg(4, 100, c, INFINITY);
            int sum = 0, measured = 0, warm = 0;
            for (int i = 0; i < n; i++) {
                cr_assert_eq(plan_shard(&pc, NULL, i, n, &s[i], err, sizeof err), 0, "%s", err);
                cr_assert_null(s[i].send_ns);
                cr_assert(s[i].concurrency == c / n || s[i].concurrency == c / n + 1);
                sum += s[i].concurrency;
                measured += s[i].num_prompts;
                warm += s[i].warmup;
                /* a shard sends in proportion to its slots: request i mod c is a slot's */
                double share = 100.0 * s[i].concurrency / c;
                cr_assert(fabs(s[i].num_prompts - share) <= s[i].concurrency, "shard %d of %d, c %d: %d requests",
                          i, n, c, s[i].num_prompts);
            }
            cr_assert_eq(sum, c, "the shards' slots are the concurrency");
            cr_assert_eq(measured, 100);
            cr_assert_eq(warm, 4);
            assert_partition(s, n, 104);
            for (int i = 0; i < n; i++)
                plan_shard_free(&s[i]);
        }
}

Test(plan_shard, open_loop_shards_together_are_the_whole_schedule)
{
    enum { N = 500 };
    int64_t due[N];
    cr_assert_eq(arrivals_schedule(20, 1, 7, true, due, N), 0);
    for (int n = 1; n <= 3; n++) {
        struct plan_shard s[3];
        char err[200];
        struct plan_cfg pc = cfg(0, N, 0, 20);
        int k[3] = {0};
        for (int i = 0; i < n; i++)
            cr_assert_eq(plan_shard(&pc, NULL, i, n, &s[i], err, sizeof err), 0, "%s", err);
        assert_partition(s, n, N);
        for (int q = 0; q < N; q++) {   /* entry q is shard q mod n's, at the schedule's time */
            int i = q % n;
            cr_assert_eq(s[i].seqs[k[i]], q);
            cr_assert_eq(s[i].send_ns[k[i]], due[q], "entry %d", q);
            k[i]++;
        }
        for (int i = 0; i < n; i++) {
            cr_assert_eq(s[i].concurrency, 0, "no cap stays no cap");
            plan_shard_free(&s[i]);
        }
    }
}

Test(plan_shard, a_callers_schedule_is_split_the_same_way)
{
    int64_t t[6] = {0, 10, 10, 35, 40, 90};
    struct plan_shard s;
    char err[200];
    struct plan_cfg pc = cfg(0, 6, 4, INFINITY);
    cr_assert_eq(plan_shard(&pc, t, 1, 2, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.num_prompts, 3);
    cr_assert_eq(s.send_ns[0], 10);
    cr_assert_eq(s.send_ns[1], 35);
    cr_assert_eq(s.send_ns[2], 90);
    cr_assert_eq(s.concurrency, 2, "a cap of 4 over 2 shards");
    plan_shard_free(&s);
}

/* Conversation 0→1→2 and 3→4: a turn goes to the shard of the turn before it. */
static long follows(void *ud, long seq)
{
    (void)ud;
    return seq == 1 || seq == 2 || seq == 4 ? seq - 1 : -1;
}

Test(plan_shard, turns_of_a_conversation_stay_in_one_shard)
{
    for (int i = 0; i < 2; i++) {
        struct plan_shard s;
        char err[200];
        struct plan_cfg pc = cfg(0, 6, 2, INFINITY);
        pc.follows = follows;
        cr_assert_eq(plan_shard(&pc, NULL, i, 2, &s, err, sizeof err), 0, "%s", err);
        cr_assert_eq(s.local[0] >= 0, s.local[1] >= 0);
        cr_assert_eq(s.local[1] >= 0, s.local[2] >= 0);
        cr_assert_eq(s.local[3] >= 0, s.local[4] >= 0);
        plan_shard_free(&s);
    }
}

Test(plan_shard, refuses_more_shards_than_concurrency_and_bad_indexes)
{
    struct plan_shard s;
    char err[200];
    struct plan_cfg pc = cfg(0, 10, 2, INFINITY);
    cr_assert_eq(plan_shard(&pc, NULL, 0, 3, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "concurrency of at least 3"), "%s", err);
    cr_assert_eq(plan_shard(&pc, NULL, 2, 2, &s, err, sizeof err), -1);
    cr_assert_eq(plan_shard(&pc, NULL, -1, 2, &s, err, sizeof err), -1);
    pc = cfg(0, 10, 2, 5);      /* an open loop's cap is split too */
    cr_assert_eq(plan_shard(&pc, NULL, 0, 3, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "cap"), "%s", err);
}
