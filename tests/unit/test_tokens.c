/* test_tokens.c — how a stream's output tokens are counted and dated
 * (stats/tokens.h): the source ladder, the share of chunks without a count,
 * and the window's count, each against numbers worked out by hand. */
#include <math.h>

#include <criterion/criterion.h>

#include "stats/tokens.h"

#define MS(x) ((int64_t)((x) * 1e6))

/* A record of n chunks at 10, 20, ... ms with the given counts and bytes. */
static void make(struct req_record *r, int n, const int32_t *tokens, const int *bytes)
{
    record_init(r, 0, false, -1, 100);
    r->t_start = 1;
    for (int i = 0; i < n; i++)
        cr_assert_eq(record_add_chunk(r, MS(10 * (i + 1)), tokens ? tokens[i] : -1, bytes ? (size_t)bytes[i] : 0,
                                      true), 0);
}

Test(tokens_unit, the_best_source_counts)
{
    struct req_record r;
    make(&r, 4, NULL, NULL);
    enum token_source src;
    cr_assert_eq(tokens_of(&r, &src), 4);
    cr_assert_eq(src, TOKENS_CHUNKS, "nothing else known: one token per chunk");
    r.text_tokens = 9;
    cr_assert_eq(tokens_of(&r, &src), 9);
    cr_assert_eq(src, TOKENS_TOKENIZE);
    r.completion_tokens = 11;
    cr_assert_eq(tokens_of(&r, &src), 11);
    cr_assert_eq(src, TOKENS_USAGE, "usage beats the tokenizer");
    cr_assert_str_eq(token_source_name(TOKENS_TOKENIZE), "tokenize");
    record_free(&r);
}

Test(tokens_unit, chunks_without_a_count_share_by_bytes)
{
    /* 12 tokens: chunk 0 says 2; the other 10 go 1 : 3 : 1 by bytes (4, 12, 4) */
    const int32_t tok[] = {2, -1, -1, -1};
    const int bytes[] = {8, 4, 12, 4};
    struct req_record r;
    make(&r, 4, tok, bytes);
    r.completion_tokens = 12;
    double t[4];
    tokens_of_chunks(&r, t);
    cr_assert_float_eq(t[0], 2, 1e-12);
    cr_assert_float_eq(t[1], 2, 1e-12);
    cr_assert_float_eq(t[2], 6, 1e-12);
    cr_assert_float_eq(t[3], 2, 1e-12);
    record_free(&r);
}

Test(tokens_unit, without_bytes_the_share_is_even_and_never_negative)
{
    struct req_record r;
    make(&r, 4, NULL, NULL);
    r.completion_tokens = 10;
    double t[4];
    tokens_of_chunks(&r, t);
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(t[i], 2.5, 1e-12);
    /* chunks that claim more than the stream's count leave nothing to share */
    const int32_t tok[] = {5, 6, -1, -1};
    struct req_record q;
    make(&q, 4, tok, NULL);
    q.completion_tokens = 10;
    tokens_of_chunks(&q, t);
    cr_assert_float_eq(t[2], 0, 1e-12);
    cr_assert_float_eq(t[3], 0, 1e-12);
    record_free(&r);
    record_free(&q);
}

Test(tokens_unit, a_window_counts_the_tokens_dated_inside_it)
{
    /* a: 4 chunks at 10..40 ms, 8 tokens by usage, bytes 1:1:1:1 -> 2 each;
     * b: cut, tokenized to 6 over 3 chunks at 10..30 ms with bytes 1:2:3;
     * c: never started; d: chunks by count. Window [15, 35] ms. */
    struct req_record rec[4];
    const int even[] = {5, 5, 5, 5}, rising[] = {1, 2, 3};
    make(&rec[0], 4, NULL, even);
    rec[0].completion_tokens = 8;
    make(&rec[1], 3, NULL, rising);
    rec[1].text_tokens = 6;
    make(&rec[2], 2, NULL, NULL);
    rec[2].t_start = 0;
    const int32_t own[] = {3, 4, 5};
    make(&rec[3], 3, own, NULL);
    rec[3].completion_tokens = 12;     /* continuous usage: the running count came with every chunk */
    struct token_window w;
    tokens_in_window(rec, 4, MS(15), MS(35), &w);
    /* a: chunks at 20, 30 -> 4; b: 20, 30 -> 2 + 3; d: 20, 30 -> 4 + 5 */
    cr_assert_float_eq(w.tokens, 4 + 5 + 9, 1e-9);
    cr_assert_eq(w.chunks, 6);
    cr_assert_eq(w.chunks_with_count, 2);
    cr_assert_eq(w.last_arrival, MS(30));
    cr_assert_eq(w.by_source[TOKENS_USAGE], 4, "a's and d's chunks");
    cr_assert_eq(w.by_source[TOKENS_TOKENIZE], 2);
    cr_assert_eq(window_token_source(&w), TOKENS_TOKENIZE, "the weakest source used");
    for (int i = 0; i < 4; i++)
        record_free(&rec[i]);
}
