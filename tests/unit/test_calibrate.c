/* test_calibrate.c — prompt length calibration against model tokenizers. */
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "stats/record.h"
#include "workload/calibrate.h"

/* A tokenizer of `per_word` tokens per word (rounded down) plus a fixed
 * template overhead; counts the calls. */
struct fake {
    double per_word;
    long overhead;
    int calls;
};

static long fake_count(void *ud, long words, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct fake *f = ud;
    f->calls++;
    return f->overhead + (long)(f->per_word * (double)words);
}

static long failing_count(void *ud, long words, char *err, size_t errlen)
{
    (void)ud;
    (void)words;
    snprintf(err, errlen, "connection refused");
    return -1;
}

Test(calibrate, converges_within_tolerance_for_many_tokenizers)
{
    double rates[] = {1.0, 1.3, 0.75, 2.4};
    long overheads[] = {0, 9, 40};
    long targets[] = {16, 128, 512, 4096, 32000};
    for (size_t r = 0; r < 4; r++)
        for (size_t o = 0; o < 3; o++)
            for (size_t t = 0; t < 5; t++) {
                if (targets[t] < overheads[o])  /* unreachable: see the next test */
                    continue;
                struct fake f = {rates[r], overheads[o], 0};
                struct calibration c;
                char err[64];
                cr_assert_eq(calibrate(targets[t], fake_count, &f, &c, err, sizeof err), 0);
                cr_assert(c.converged, "rate %.2f overhead %ld target %ld: got %ld", rates[r],
                          overheads[o], targets[t], c.tokens);
                cr_assert_leq(labs(c.tokens - targets[t]), record_prompt_tolerance(targets[t]));
                cr_assert_leq(f.calls, 6, "%d calls", f.calls);
                cr_assert_eq(c.n_steps, f.calls);
            }
}

Test(calibrate, unreachable_target_returns_closest)
{
    struct fake f = {1.0, 50, 0};     /* even 0 words cost 50 tokens */
    struct calibration c;
    char err[64];
    cr_assert_eq(calibrate(10, fake_count, &f, &c, err, sizeof err), 0);
    cr_assert_not(c.converged);
    cr_assert_eq(c.words, 0);
    cr_assert_eq(c.tokens, 50);
}

Test(calibrate, count_failure_is_reported)
{
    struct calibration c;
    char err[64] = "";
    cr_assert_eq(calibrate(100, failing_count, NULL, &c, err, sizeof err), -1);
    cr_assert_str_eq(err, "connection refused");
}
