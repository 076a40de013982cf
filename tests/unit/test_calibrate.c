/* test_calibrate.c — prompt length calibration against model tokenizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                cr_assert_eq(calibrate(targets[t], -1, fake_count, &f, &c, err, sizeof err), 0);
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
    cr_assert_eq(calibrate(10, -1, fake_count, &f, &c, err, sizeof err), 0);
    cr_assert_not(c.converged);
    cr_assert_eq(c.words, 0);
    cr_assert_eq(c.tokens, 50);
}

Test(calibrate, count_failure_is_reported)
{
    struct calibration c;
    char err[64] = "";
    cr_assert_eq(calibrate(100, -1, failing_count, NULL, &c, err, sizeof err), -1);
    cr_assert_str_eq(err, "connection refused");
}

/* A server of `per_word` tokens per word plus overhead whose context holds
 * `context` tokens: longer prompts are refused (HTTP 400) or, with
 * truncate, cut as llama.cpp's context shift cuts them (blocks of half the
 * context erased). Counts the calls and the longest prompt counted. */
struct server {
    double per_word;
    long overhead, context;
    bool truncate;
    int calls;
    long longest;
    double later;       /* tokens per word after the first 256 words; 0 = per_word */
};

static long server_count(void *ud, long words, char *err, size_t errlen)
{
    struct server *s = ud;
    s->calls++;
    double later = s->later > 0 ? s->later : s->per_word;
    long t = s->overhead + (long)(s->per_word * (double)(words < 256 ? words : 256) +
                                  later * (double)(words > 256 ? words - 256 : 0));
    if (t > s->longest)
        s->longest = t;
    if (t < s->context)
        return t;
    if (!s->truncate) {
        snprintf(err, errlen, "http://h/v1/chat/completions answered HTTP 400: {\"error\":{\"message\":"
                 "\"the request exceeds the available context size\"}}");
        return CALIB_TOO_LONG;
    }
    long half = s->context / 2;
    return t - (t - half) / half * half;
}

Test(calibrate, typical_search_takes_at_most_four_counts)
{
    double rates[] = {1.0, 1.13, 1.3, 0.75};
    long targets[] = {128, 1024, 1900, 8000};
    for (size_t r = 0; r < 4; r++)
        for (size_t t = 0; t < 4; t++) {
            struct server s = {rates[r], 10, 1L << 40, false, 0, 0};
            struct calibration c;
            char err[256];
            cr_assert_eq(calibrate(targets[t], -1, server_count, &s, &c, err, sizeof err), 0);
            cr_assert(c.converged);
            cr_assert_leq(s.calls, 4, "rate %.2f target %ld: %d counts", rates[r], targets[t], s.calls);
            cr_assert_float_eq(c.tokens_per_word, rates[r], 0.02);
        }
}

Test(calibrate, near_limit_target_converges_without_refusals)
{
    struct server s = {1.21, 10, 2048, false, 0, 0};
    struct calibration c;
    char err[256];
    cr_assert_eq(calibrate(1900, 2047, server_count, &s, &c, err, sizeof err), 0);
    cr_assert(c.converged);
    cr_assert_leq(s.calls, 4);
    cr_assert_lt(s.longest, 2048, "a probe of %ld tokens", s.longest);
}

Test(calibrate, overshoot_into_a_refusal_bisects_and_converges)
{
    /* the first 256 words cost 1 token each, the rest 1.3: the first jump
     * (at the short probe's slope) lands past the context */
    long contexts[] = {2100, 2005};
    for (int i = 0; i < 2; i++) {
        struct server s = {1.0, 10, contexts[i], false, 0, 0, 1.3};
        struct calibration c;
        char err[512];
        cr_assert_eq(calibrate(2000, -1, server_count, &s, &c, err, sizeof err), 0, "%s", err);
        cr_assert(c.converged, "context %ld: %ld tokens", contexts[i], c.tokens);
        cr_assert_eq(c.steps[2].tokens, -1, "the jump was refused");
        cr_assert_leq(s.calls, 6);
    }
}

Test(calibrate, target_above_a_refusing_context_cannot_fit)
{
    struct server s = {1.0, 10, 2048, false, 0, 0};
    struct calibration c;
    char err[512];
    cr_assert_eq(calibrate(3000, -1, server_count, &s, &c, err, sizeof err), CALIB_CANNOT_FIT);
    cr_assert_leq(s.calls, 5);
    cr_assert(strstr(err, "prompt of 3000 tokens cannot fit: the server's context is between "), "%s", err);
    cr_assert(strstr(err, "exceeds the available context size"), "%s", err);
    cr_assert_eq(c.steps[2].tokens, -1, "the refused step has no count");
}

Test(calibrate, target_above_a_truncating_context_cannot_fit)
{
    long targets[] = {2100, 3000, 5000, 40000};
    for (size_t i = 0; i < 4; i++) {
        struct server s = {1.13, 10, 2048, true, 0, 0};
        struct calibration c;
        char err[512];
        cr_assert_eq(calibrate(targets[i], -1, server_count, &s, &c, err, sizeof err), CALIB_CANNOT_FIT,
                     "target %ld", targets[i]);
        cr_assert_leq(s.calls, 5, "target %ld: %d counts", targets[i], s.calls);
        cr_assert_leq(s.longest, 2 * targets[i] + 64, "target %ld: a probe of %ld tokens", targets[i], s.longest);
        cr_assert(strstr(err, "cannot fit") && strstr(err, "truncated"), "%s", err);
    }
}

Test(calibrate, a_known_limit_is_never_exceeded)
{
    struct server s = {1.0, 10, 1L << 40, false, 0, 0};
    struct calibration c;
    char err[256];
    cr_assert_eq(calibrate(5000, 4000, server_count, &s, &c, err, sizeof err), CALIB_CANNOT_FIT);
    cr_assert_eq(s.calls, 0);
    cr_assert(strstr(err, "at most 4000 tokens"), "%s", err);
    cr_assert_eq(calibrate(3990, 4000, server_count, &s, &c, err, sizeof err), 0);
    cr_assert_leq(s.longest, 4000);
}

Test(calibrate, refusal_messages_are_classified_and_never_end_in_a_colon)
{
    char e413[256] = "http://h/v1/chat/completions answered HTTP 413: ";
    cr_assert(calib_error_is_too_long(e413, sizeof e413));
    cr_assert_str_eq(e413, "http://h/v1/chat/completions answered HTTP 413 (empty body)");
    char e400[256] = "http://h/v1/completions answered HTTP 400: {\"error\":{\"message\":\"This model's "
                     "maximum context length is 2048 tokens.\"}}";
    cr_assert(calib_error_is_too_long(e400, sizeof e400));
    char other[256] = "http://h/v1/completions answered HTTP 400: {\"error\":{\"message\":\"bad temperature\"}}";
    cr_assert_not(calib_error_is_too_long(other, sizeof other));
    char e500[256] = "http://h/v1/completions answered HTTP 500: context exploded";
    cr_assert_not(calib_error_is_too_long(e500, sizeof e500));
    char refused[256] = "cannot reach http://h/v1: Connection refused";
    cr_assert_not(calib_error_is_too_long(refused, sizeof refused));
    cr_assert_str_eq(refused, "cannot reach http://h/v1: Connection refused");
}

/* Context 0 is the minimal prompt (the request's head and the chat template,
 * no filler): one count says what it is, and that is the target met. Failed
 * before: a target of 0 ended "closest reachable", not converged. */
Test(calibrate, target_0_is_the_minimal_prompt_counted_once)
{
    struct fake f = {1.3, 10, 0};
    struct calibration c;
    char err[64];
    cr_assert_eq(calibrate(0, -1, fake_count, &f, &c, err, sizeof err), 0);
    cr_assert_eq(f.calls, 1);
    cr_assert_eq(c.n_steps, 1);
    cr_assert_eq(c.steps[0].words, 0);
    cr_assert_eq(c.words, 0);
    cr_assert_eq(c.tokens, 10);
    cr_assert_eq(c.target_tokens, 0);
    cr_assert(c.converged);
    cr_assert_eq(calibrate(0, -1, failing_count, &f, &c, err, sizeof err), -1, "a failed count is still an error");
}
