/* test_sim_chunks.c — unit tests of how output tokens become SSE chunks
 * (--tokens-without-chunk: sim_token_chunkless, sim_chunk_end) and of the
 * token count of a reply's text: every flavor's /tokenize, given the text a
 * stream carried up to any chunk boundary, counts exactly the tokens that
 * text came from (src/sim/tokens.h, src/sim/request.h). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "sim/flavor.h"
#include "sim/request.h"
#include "sim/tokens.h"

/* One stream as gen.c sends it: tokens come in batches (engine steps: 1,
 * or 1 + accepted drafts), and after each batch the chunk [from, end) goes
 * out when end > from. chunk_end[k] is the token end of chunk k and
 * chunk_batch[k] the batch after which it was sent; token_batch[i] the
 * batch that generated token i. */
struct stream {
    int64_t n_chunks;
    int64_t chunk_end[4096], chunk_batch[4096], token_batch[4096];
};

/* Batch sizes: 1 each without speculation; else 1 + a draw in 0..spec. */
static void run_stream(const struct sim_output *o, double p, int spec, struct stream *st)
{
    st->n_chunks = 0;
    int64_t from = 0, gen = 0, batch = 0;
    while (gen < o->completion_tokens) {
        int64_t n = 1 + (spec ? (int64_t)(sim_mix64(o->key + (uint64_t)batch) % (uint64_t)(spec + 1)) : 0);
        if (gen + n > o->completion_tokens)
            n = o->completion_tokens - gen;
        for (int64_t i = gen; i < gen + n; i++)
            st->token_batch[i] = batch;
        gen += n;
        int64_t end = sim_chunk_end(o, p, from, gen);
        cr_assert(end >= from && end <= gen);
        if (end > from) {
            st->chunk_end[st->n_chunks] = end;
            st->chunk_batch[st->n_chunks++] = batch;
            from = end;
        }
        batch++;
    }
    cr_assert_eq(from, o->completion_tokens, "the reply's last token must be delivered");
}

static struct sim_output reply(uint64_t seed, int64_t tokens, bool ignore_eos)
{
    uint64_t key = sim_request_key(seed, sim_hash_bytes(SIM_HASH_INIT, &seed, sizeof seed), 0);
    return sim_plan_output(key, tokens, ignore_eos);
}

Test(sim_chunks, no_share_means_one_chunk_per_batch)
{
    struct stream st;
    for (uint64_t s = 0; s < 50; s++) {
        struct sim_output o = reply(s, 100, true);
        run_stream(&o, 0, 0, &st);
        cr_expect_eq(st.n_chunks, 100);
        for (int64_t i = 0; i < 100; i++)
            cr_expect(!sim_token_chunkless(&o, i, 0));
    }
}

/* The share of tokens without a chunk of their own is P over many tokens
 * (binomial: over 25,500 draws one standard deviation is <= 0.0032). */
Test(sim_chunks, share_of_chunkless_tokens_is_p)
{
    const double shares[] = {0.05, 0.27, 0.5, 0.9};
    struct stream st;
    for (size_t k = 0; k < sizeof shares / sizeof *shares; k++) {
        int64_t eligible = 0, held = 0;
        for (uint64_t s = 0; s < 100; s++) {
            struct sim_output o = reply(s * 7919 + k, 256, true);
            run_stream(&o, shares[k], 0, &st);
            eligible += o.completion_tokens - 1;          /* the last token always sends */
            held += o.completion_tokens - st.n_chunks;   /* one token per batch: chunkless = no chunk */
        }
        double share = (double)held / (double)eligible;
        cr_expect(fabs(share - shares[k]) < 0.02, "P %.2f: share %.4f", shares[k], share);
    }
}

/* The recorded stream at path: its text-carrying events (all but the final
 * one, which carries the finish_reason, usage and no text) and its
 * usage.completion_tokens. */
static void recorded_shape(const char *path, int64_t *chunks, int64_t *tokens)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    static char line[1 << 16];
    *chunks = *tokens = -1;
    int64_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "data: {", 7) != 0)
            continue;
        cJSON *ev = cJSON_Parse(line + 6);
        cr_assert_not_null(ev, "%s: an event is not JSON", path);
        const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "choices"), 0);
        const cJSON *text = cJSON_GetObjectItem(c0, "text");
        if (!text)
            text = cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "delta"), "content");
        /* a text of "\u0000" is a token's text too: the final event is the one with a finish_reason */
        n += cJSON_IsString(text) && cJSON_IsNull(cJSON_GetObjectItem(c0, "finish_reason"));
        const cJSON *u = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "usage"), "completion_tokens");
        if (cJSON_IsNumber(u))
            *tokens = (int64_t)u->valuedouble;
        cJSON_Delete(ev);
    }
    fclose(f);
    *chunks = n;
}

/* llama-server's recorded streams (tests/data/fixtures/llamacpp/
 * v1_*_stream_tokens_without_chunks.txt: 47 chunks for 64 tokens, 38 for
 * 48): --tokens-without-chunk P = (tokens - chunks) / (tokens - 1) gives
 * that many chunks on average. */
Test(sim_chunks, reproduces_the_recorded_llamacpp_shape)
{
    const char *rec[] = {"tests/data/fixtures/llamacpp/v1_chat_completions_stream_tokens_without_chunks.txt",
                         "tests/data/fixtures/llamacpp/v1_completions_stream_tokens_without_chunks.txt"};
    const int64_t want[2][2] = {{47, 64}, {38, 48}};
    struct stream st;
    for (size_t k = 0; k < 2; k++) {
        int64_t chunks, tokens;
        recorded_shape(rec[k], &chunks, &tokens);
        cr_expect(chunks == want[k][0] && tokens == want[k][1], "%s: %lld chunks for %lld tokens", rec[k],
                  (long long)chunks, (long long)tokens);
        double p = (double)(tokens - chunks) / (double)(tokens - 1);
        int64_t sum = 0, n = 2000;
        for (uint64_t s = 0; s < (uint64_t)n; s++) {
            struct sim_output o = reply(s, tokens, true);
            run_stream(&o, p, 0, &st);
            sum += st.n_chunks;
        }
        double mean = (double)sum / (double)n;
        cr_expect(fabs(mean - (double)chunks) < 0.5, "%lld tokens: mean %.2f chunks, recorded %lld",
                  (long long)tokens, mean, (long long)chunks);
    }
}

/* Every token is in exactly one chunk, sent at or after the batch that
 * generated it; the chunks' text, concatenated, is the reply's text; the
 * last token is never held, even at a share near 1; decisions depend only
 * on the reply's key. With and without speculative batches. */
Test(sim_chunks, chunks_carry_every_token_once_never_early)
{
    struct stream st;
    for (int spec = 0; spec <= 4; spec += 2)
        for (uint64_t s = 0; s < 60; s++) {
            double p = (double)(s % 10) / 10.0 + 0.05;
            struct sim_output o = reply(s, 1 + (int64_t)(s * 37 % 300), s % 3 == 0);
            run_stream(&o, p, spec, &st);
            cr_expect(!sim_token_chunkless(&o, o.completion_tokens - 1, 0.999));
            struct buf whole, joined;
            buf_init(&whole, 1 << 20);
            buf_init(&joined, 1 << 20);
            for (int64_t i = 0; i < o.completion_tokens; i++)
                buf_append(&whole, sim_token_text(&o, i), strlen(sim_token_text(&o, i)));
            int64_t from = 0;
            for (int64_t c = 0; c < st.n_chunks; c++) {
                cr_assert_gt(st.chunk_end[c], from);
                for (int64_t i = from; i < st.chunk_end[c]; i++) {
                    cr_expect_geq(st.chunk_batch[c], st.token_batch[i], "token %lld sent before it existed",
                                  (long long)i);
                    buf_append(&joined, sim_token_text(&o, i), strlen(sim_token_text(&o, i)));
                }
                from = st.chunk_end[c];
            }
            cr_expect_eq(from, o.completion_tokens);
            cr_expect_eq(joined.len, whole.len);
            cr_expect(whole.len == 0 || !memcmp(joined.data, whole.data, whole.len));
            buf_free(&whole);
            buf_free(&joined);
            struct sim_output again = reply(s, o.completion_tokens, true);   /* same key */
            for (int64_t i = 0; i < o.completion_tokens; i++)
                cr_expect_eq(sim_token_chunkless(&o, i, p), sim_token_chunkless(&again, i, p));
        }
}

/* /tokenize of text under flavor f and tokenizer t, with the body the
 * client sends (vLLM, SGLang: add_special_tokens false; llama.cpp: its
 * defaults, add_special false, parse_special true). */
static int64_t tokenize(enum sim_flavor f, enum sim_tokenizer t, const char *text, bool special)
{
    cJSON *b = cJSON_CreateObject();
    if (f == SIM_FLAVOR_LLAMACPP) {
        cJSON_AddStringToObject(b, "content", text);
        if (special)
            cJSON_AddTrueToObject(b, "add_special");
    } else {
        cJSON_AddStringToObject(b, "model", "m");
        cJSON_AddStringToObject(b, "prompt", text);
        if (!special)
            cJSON_AddFalseToObject(b, "add_special_tokens");
    }
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    struct sim_limits lim = {.model = "m", .max_model_len = 1 << 20, .flavor = (int)f,
                             .any_model = f >= SIM_FLAVOR_SGLANG, .tokenizer = (int)t};
    struct sim_request rq;
    struct sim_error err;
    int rc = sim_request_parse(body, strlen(body), SIM_EP_TOKENIZE, &lim, &rq, &err);
    cr_assert_eq(rc, 0, "flavor %d: %s", (int)f, err.message);
    free(body);
    int64_t n = rq.prompt_tokens;
    sim_request_free(&rq);
    return n;
}

/* The text a client received up to each chunk boundary (reasoning and
 * content are the same token sequence, split at a token) tokenizes to the
 * tokens sent so far, on every flavor and tokenizer, with tokens held
 * without a chunk and with speculative batches. The EOS token of a stopped
 * reply has no text (as on vLLM, SGLang and llama.cpp): the text of a
 * whole stopped reply counts completion_tokens - 1. add_special adds the
 * BOS token. */
Test(sim_chunks, tokenize_of_received_text_counts_tokens_sent)
{
    const enum sim_flavor flavors[] = {SIM_FLAVOR_ANVIL, SIM_FLAVOR_VLLM, SIM_FLAVOR_SGLANG,
                                       SIM_FLAVOR_LLAMACPP};
    struct stream st;
    for (size_t f = 0; f < 4; f++)
        for (int t = 0; t < 2; t++)
            for (uint64_t s = 0; s < 12; s++) {
                struct sim_output o = reply(s + 100 * f, 20 + (int64_t)s * 7, s % 2 == 0);
                run_stream(&o, 0.3, (int)(s % 3), &st);
                struct buf text;
                buf_init(&text, 1 << 20);
                int64_t from = 0;
                for (int64_t c = 0; c < st.n_chunks; c++) {
                    for (int64_t i = from; i < st.chunk_end[c]; i++)
                        buf_append(&text, sim_token_text(&o, i), strlen(sim_token_text(&o, i)));
                    from = st.chunk_end[c];
                    bool eos = o.stopped && from == o.completion_tokens;
                    int64_t n = tokenize(flavors[f], (enum sim_tokenizer)t, text.data ? text.data : "", false);
                    cr_expect_eq(n, from - eos, "flavor %zu tokenizer %d chunk %lld: %lld tokens sent, "
                                 "tokenize says %lld", f, t, (long long)c, (long long)from, (long long)n);
                }
                cr_expect_eq(tokenize(flavors[f], (enum sim_tokenizer)t, text.data ? text.data : "", true),
                             o.completion_tokens - o.stopped + 1);
                buf_free(&text);
            }
}
