/* test_sim_tokens.c — unit tests of the simulator's token model
 * (src/sim/tokens.h) and request validation (src/sim/request.h). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim/request.h"
#include "sim/tokens.h"

static int64_t count(const char *s)
{
    return sim_count_tokens(s, strlen(s));
}

Test(sim_tokens, counts_whitespace_separated_runs)
{
    cr_expect_eq(count(""), 0);
    cr_expect_eq(count("   \t\n"), 0);
    cr_expect_eq(count("hello"), 1);
    cr_expect_eq(count("Hello, world!"), 2);
    cr_expect_eq(count("  leading and trailing  "), 3);
    cr_expect_eq(count("a\tb\nc\rd\fe\vf g"), 7);
    cr_expect_eq(count("don't-split:punctuation,at.all"), 1);
    cr_expect_eq(count("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac"), 2);   /* UTF-8 bytes are token bytes */
    const char nul[] = {'a', '\0', 'b', ' ', 'c'};
    cr_expect_eq(sim_count_tokens(nul, sizeof nul), 2);
}

Test(sim_tokens, iterator_agrees_with_count)
{
    const char *s = "  one two\t\tthree\nfour ";
    size_t pos = 0, start, len;
    const char *want[] = {"one", "two", "three", "four"};
    int n = 0;
    while (sim_next_token(s, strlen(s), &pos, &start, &len)) {
        cr_assert_lt(n, 4);
        cr_expect_eq(len, strlen(want[n]));
        cr_expect(memcmp(s + start, want[n], len) == 0);
        n++;
    }
    cr_expect_eq(n, count(s));
}

Test(sim_tokens, completion_prompt_adds_bos)
{
    cr_expect_eq(sim_completion_prompt_tokens("The capital of France is", 24), 6);
    cr_expect_eq(sim_completion_prompt_tokens("", 0), SIM_BOS_TOKENS);
}

Test(sim_tokens, chat_template_overhead)
{
    const char *c[] = {"You are terse.", "Reply with a short greeting."};
    size_t l[] = {strlen(c[0]), strlen(c[1])};
    /* (3 + 3) + (3 + 5) + 3 */
    cr_expect_eq(sim_chat_prompt_tokens(c, l, 2), 17);
    cr_expect_eq(sim_chat_prompt_tokens(c, l, 1), 3 + 3 + 3);
    const char *empty[] = {NULL};
    size_t zero[] = {0};
    cr_expect_eq(sim_chat_prompt_tokens(empty, zero, 1), SIM_CHAT_MSG_TOKENS + SIM_CHAT_REPLY_TOKENS);
}

Test(sim_tokens, ignore_eos_gives_exactly_max_tokens)
{
    for (uint64_t k = 0; k < 1000; k++) {
        struct sim_output o = sim_plan_output(sim_mix64(k), 37, true);
        cr_assert_eq(o.completion_tokens, 37);
        cr_assert(!o.stopped);
        cr_assert_str_eq(sim_finish_reason(&o), "length");
        for (int64_t i = 0; i < 37; i++)
            cr_assert(sim_token_text(&o, i)[0] == ' ');
    }
}

Test(sim_tokens, early_stop_is_deterministic_and_bounded)
{
    int stopped = 0;
    for (uint64_t k = 0; k < 4000; k++) {
        uint64_t key = sim_request_key(0, sim_mix64(k), 0);
        struct sim_output a = sim_plan_output(key, 100, false);
        struct sim_output b = sim_plan_output(key, 100, false);
        cr_assert_eq(a.completion_tokens, b.completion_tokens);
        cr_assert_eq(a.stopped, b.stopped);
        cr_assert_eq(a.stopped, key % 4 == 0);
        if (a.stopped) {
            stopped++;
            cr_assert(a.completion_tokens >= 50 && a.completion_tokens <= 90, "%lld",
                      (long long)a.completion_tokens);
            cr_assert_str_eq(sim_token_text(&a, a.completion_tokens - 1), "");  /* EOS */
            cr_assert_str_eq(sim_finish_reason(&a), "stop");
        } else {
            cr_assert_eq(a.completion_tokens, 100);
        }
    }
    cr_expect(stopped > 800 && stopped < 1200, "about a quarter stop early: %d", stopped);
    /* One token budget: a stopped reply is just the EOS token. */
    uint64_t key = 0;
    while (key % 4 != 0 || sim_plan_output(key, 1, false).completion_tokens != 1)
        key++;
    struct sim_output one = sim_plan_output(key, 1, false);
    cr_expect(one.stopped);
    cr_expect_eq(one.completion_tokens, 1);
}

Test(sim_tokens, output_text_depends_on_seed_prompt_and_request_seed)
{
    uint64_t ph = sim_hash_bytes(SIM_HASH_INIT, "prompt", 6);
    struct sim_output a = sim_plan_output(sim_request_key(0, ph, 0), 64, true);
    struct sim_output b = sim_plan_output(sim_request_key(0, ph, 0), 64, true);
    struct sim_output c = sim_plan_output(sim_request_key(1, ph, 0), 64, true);
    struct sim_output d = sim_plan_output(sim_request_key(0, ph, 5), 64, true);
    int diff_c = 0, diff_d = 0;
    for (int64_t i = 0; i < 64; i++) {
        cr_assert_str_eq(sim_token_text(&a, i), sim_token_text(&b, i));
        diff_c += strcmp(sim_token_text(&a, i), sim_token_text(&c, i)) != 0;
        diff_d += strcmp(sim_token_text(&a, i), sim_token_text(&d, i)) != 0;
    }
    cr_expect_gt(diff_c, 32);
    cr_expect_gt(diff_d, 32);
}

Test(sim_tokens, vocabulary_is_plain_ascii_words)
{
    /* Every word the hash can pick: a leading space, then [a-z]+. */
    struct sim_output o = sim_plan_output(12345, 5000, true);
    for (int64_t i = 0; i < 5000; i++) {
        const char *w = sim_token_text(&o, i);
        cr_assert_eq(w[0], ' ');
        cr_assert_gt(strlen(w), 1);
        for (const char *p = w + 1; *p; p++)
            cr_assert(*p >= 'a' && *p <= 'z', "word '%s'", w);
    }
}

/* Each vocabulary word is one token for both tokenizers, so text never
 * splits a generated token (failed before: " sentence" was 2 pieces). */
Test(sim_tokens, every_output_word_is_one_token_in_both_tokenizers)
{
    for (uint64_t s = 0; s < 40; s++) {
        struct sim_output o = sim_plan_output(sim_request_key(s, s * 31, 0), 200, true);
        for (int64_t i = 0; i < o.completion_tokens; i++) {
            const char *w = sim_token_text(&o, i);
            cr_expect_eq(sim_count_tokens_as(SIM_TOKENIZER_WORDS, w, strlen(w)), 1, "'%s'", w);
            cr_expect_eq(sim_count_tokens_as(SIM_TOKENIZER_PIECES, w, strlen(w)), 1, "'%s'", w);
        }
    }
}

Test(sim_tokens, context_length_message)
{
    char msg[512];
    cr_expect_eq(sim_check_context(100, 60, 40, msg, sizeof msg), 0);
    cr_expect_eq(sim_check_context(100, 60, 41, msg, sizeof msg), -1);
    cr_expect_str_eq(msg, "This model's maximum context length is 100 tokens. However, you requested "
                          "101 tokens (60 in the messages, 41 in the completion). Please reduce the "
                          "length of the messages or completion.");
    cr_expect_eq(sim_check_context(100, 101, 1, msg, sizeof msg), -1);
}

/* ---- request validation ---- */

static const struct sim_limits lim = {.model = "anvil-sim", .max_model_len = 64};

static int parse(const char *body, enum sim_endpoint ep, struct sim_request *rq, struct sim_error *err)
{
    return sim_request_parse(body, strlen(body), ep, &lim, rq, err);
}

Test(sim_request, defaults_and_fields)
{
    struct sim_request rq;
    struct sim_error err;
    cr_assert_eq(parse("{\"prompt\":\"a b c\"}", SIM_EP_COMPLETIONS, &rq, &err), 0);
    cr_expect_eq(rq.prompt_tokens, 4);
    cr_expect_eq(rq.max_tokens, SIM_DEFAULT_MAX_TOKENS);
    cr_expect(!rq.stream && !rq.ignore_eos && !rq.include_usage && !rq.continuous_usage);
    sim_request_free(&rq);

    cr_assert_eq(parse("{\"model\":\"anvil-sim\",\"messages\":[{\"role\":\"user\",\"content\":\"x y\"}],"
                       "\"max_tokens\":5,\"max_completion_tokens\":7,\"stream\":true,\"ignore_eos\":true,"
                       "\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true},"
                       "\"temperature\":0,\"seed\":3}", SIM_EP_CHAT, &rq, &err), 0);
    cr_expect_eq(rq.prompt_tokens, 3 + 2 + 3);
    cr_expect_eq(rq.max_tokens, 7);   /* max_completion_tokens wins */
    cr_expect(rq.stream && rq.ignore_eos && rq.include_usage && rq.continuous_usage);
    cr_expect(rq.has_seed && rq.seed == 3);
    cr_expect_eq(sim_request_seed(&rq), 0);   /* greedy ignores the seed */
    sim_request_free(&rq);

    /* continuous_usage_stats alone does nothing (vLLM). */
    cr_assert_eq(parse("{\"prompt\":\"x\",\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true}}",
                       SIM_EP_COMPLETIONS, &rq, &err), 0);
    cr_expect(!rq.continuous_usage);
    sim_request_free(&rq);
}

Test(sim_request, content_parts_and_null_content)
{
    struct sim_request rq;
    struct sim_error err;
    cr_assert_eq(parse("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a b\"},"
                       "{\"type\":\"text\",\"text\":\"c\"}]},{\"role\":\"assistant\",\"content\":null}]}",
                       SIM_EP_CHAT, &rq, &err), 0);
    cr_expect_eq(rq.prompt_tokens, (3 + 3) + 3 + 3);
    sim_request_free(&rq);
}

Test(sim_request, tokenize_ids_match_count)
{
    struct sim_request rq;
    struct sim_error err;
    cr_assert_eq(parse("{\"messages\":[{\"role\":\"user\",\"content\":\"one two three\"}]}",
                       SIM_EP_TOKENIZE, &rq, &err), 0);
    cr_expect_eq(rq.prompt_tokens, 3 + 3 + 3);
    cr_assert_not_null(rq.token_ids);
    cr_expect_eq(rq.token_ids[0], SIM_TOKEN_ID_MSG_START);
    for (int64_t i = 0; i < rq.prompt_tokens; i++)
        cr_expect(rq.token_ids[i] >= 0 && rq.token_ids[i] < SIM_TOKEN_ID_LIMIT);
    sim_request_free(&rq);

    cr_assert_eq(parse("{\"messages\":[{\"role\":\"user\",\"content\":\"one\"}],\"add_generation_prompt\":false}",
                       SIM_EP_TOKENIZE, &rq, &err), 0);
    cr_expect_eq(rq.prompt_tokens, 3 + 1);
    sim_request_free(&rq);

    cr_assert_eq(parse("{\"prompt\":\"Hello, world!\",\"add_special_tokens\":false}", SIM_EP_TOKENIZE, &rq, &err), 0);
    cr_expect_eq(rq.prompt_tokens, 2);
    sim_request_free(&rq);
}

Test(sim_request, same_words_same_hash_different_text_different_hash)
{
    struct sim_request a, b, c;
    struct sim_error err;
    cr_assert_eq(parse("{\"prompt\":\"alpha beta\"}", SIM_EP_COMPLETIONS, &a, &err), 0);
    cr_assert_eq(parse("{\"prompt\":\"alpha beta\",\"max_tokens\":3}", SIM_EP_COMPLETIONS, &b, &err), 0);
    cr_assert_eq(parse("{\"prompt\":\"alpha gamma\"}", SIM_EP_COMPLETIONS, &c, &err), 0);
    cr_expect_eq(a.prompt_hash, b.prompt_hash);
    cr_expect_neq(a.prompt_hash, c.prompt_hash);
}

struct bad_case {
    const char *body;
    enum sim_endpoint ep;
    int status;
    const char *param;   /* NULL: JSON null */
    const char *type;
};

Test(sim_request, rejects_bad_bodies)
{
    static const struct bad_case cases[] = {
        {"", SIM_EP_COMPLETIONS, 400, NULL, "BadRequestError"},
        {"{not json", SIM_EP_COMPLETIONS, 400, NULL, "BadRequestError"},
        {"[1,2]", SIM_EP_CHAT, 400, NULL, "BadRequestError"},
        {"{}", SIM_EP_COMPLETIONS, 400, "prompt", "BadRequestError"},
        {"{\"prompt\":5}", SIM_EP_COMPLETIONS, 400, "prompt", "BadRequestError"},
        {"{}", SIM_EP_CHAT, 400, "messages", "BadRequestError"},
        {"{\"messages\":[]}", SIM_EP_CHAT, 400, "messages", "BadRequestError"},
        {"{\"messages\":[{\"content\":\"x\"}]}", SIM_EP_CHAT, 400, "messages", "BadRequestError"},
        {"{\"messages\":[{\"role\":\"user\",\"content\":7}]}", SIM_EP_CHAT, 400, "messages", "BadRequestError"},
        {"{\"prompt\":\"x\",\"max_tokens\":0}", SIM_EP_COMPLETIONS, 400, "max_tokens", "BadRequestError"},
        {"{\"prompt\":\"x\",\"max_tokens\":1.5}", SIM_EP_COMPLETIONS, 400, NULL, "BadRequestError"},
        {"{\"prompt\":\"x\",\"stream\":\"yes\"}", SIM_EP_COMPLETIONS, 400, NULL, "BadRequestError"},
        {"{\"prompt\":\"x\",\"temperature\":-1}", SIM_EP_COMPLETIONS, 400, "temperature", "BadRequestError"},
        {"{\"prompt\":\"x\",\"max_tokens\":63}", SIM_EP_COMPLETIONS, 400, "input_tokens", "BadRequestError"},
        {"{\"model\":\"other\",\"prompt\":\"x\"}", SIM_EP_COMPLETIONS, 404, "model", "NotFoundError"},
        {"{\"model\":\"other\",\"prompt\":\"x\"}", SIM_EP_TOKENIZE, 404, "model", "NotFoundError"},
        {"{\"model\":3,\"prompt\":\"x\"}", SIM_EP_COMPLETIONS, 400, "model", "BadRequestError"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sim_request rq;
        struct sim_error err;
        cr_expect_eq(parse(cases[i].body, cases[i].ep, &rq, &err), -1, "case %zu accepted: %s", i, cases[i].body);
        cr_expect_eq(err.status, cases[i].status, "case %zu", i);
        cr_expect_str_eq(err.type, cases[i].type, "case %zu", i);
        if (cases[i].param)
            cr_expect(err.param && strcmp(err.param, cases[i].param) == 0, "case %zu param %s", i,
                      err.param ? err.param : "(null)");
        else
            cr_expect_null(err.param, "case %zu param %s", i, err.param ? err.param : "");
        cr_expect_gt(strlen(err.message), 0, "case %zu", i);
    }
}

Test(sim_request, model_not_found_message)
{
    struct sim_request rq;
    struct sim_error err;
    cr_assert_eq(parse("{\"model\":\"gpt-4o\",\"messages\":[]}", SIM_EP_CHAT, &rq, &err), -1);
    cr_expect_str_eq(err.message, "The model `gpt-4o` does not exist.");
}

Test(sim_request, exact_fit_is_accepted)
{
    struct sim_request rq;
    struct sim_error err;
    /* 1 word + BOS = 2 prompt tokens, + 62 = 64 = max_model_len */
    cr_assert_eq(parse("{\"prompt\":\"x\",\"max_tokens\":62}", SIM_EP_COMPLETIONS, &rq, &err), 0);
    sim_request_free(&rq);
}

/* ---- --tokenizer pieces, --context-shift ---- */

Test(sim_tokens, pieces_split_letters_digits_and_punctuation)
{
    struct { const char *s; int64_t n; } cases[] = {
        {"", 0}, {"the model", 2}, {"mountain", 2},             /* 6 letters, then 2 */
        {"a3f9-0001:", 8},                                      /* a 3 f 9 - 000 1 : */
        {"0123456789abcdef-000000007:", 10},    /* 012 345 678 9 abcdef - 000 000 007 : */
        {"caf\xc3\xa9!", 2},                                    /* UTF-8 bytes are letters */
        {"Hello, world!", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        cr_expect_eq(sim_count_tokens_as(SIM_TOKENIZER_PIECES, cases[i].s, strlen(cases[i].s)), cases[i].n,
                     "'%s'", cases[i].s);
    const char *s = "ab1234;";
    const char *want[] = {"ab", "123", "4", ";"};
    size_t pos = 0, start, len;
    int n = 0;
    while (sim_next_token_as(SIM_TOKENIZER_PIECES, s, strlen(s), &pos, &start, &len)) {
        cr_assert_lt(n, 4);
        cr_expect_eq(len, strlen(want[n]));
        cr_expect(memcmp(s + start, want[n], len) == 0);
        n++;
    }
    cr_expect_eq(n, 4);
    enum sim_tokenizer t;
    cr_expect_eq(sim_tokenizer_parse("pieces", &t), 0);
    cr_expect_eq(t, SIM_TOKENIZER_PIECES);
    cr_expect_eq(sim_tokenizer_parse("bpe", &t), -1);
}

Test(sim_request, context_shift_truncates_as_llamacpp)
{
    /* 64-token context, max_tokens 4: n_ctx 60, half 30; a prompt of p
     * tokens keeps p − ⌊(p − 30)/30⌋·30 */
    struct sim_limits shift = {.model = "anvil-sim", .max_model_len = 64, .context_shift = true,
                               .want_ids = true};
    long prompts[] = {59, 60, 61, 89, 90, 150};
    long kept[] = {59, 30, 31, 59, 30, 30};
    for (size_t i = 0; i < 6; i++) {
        char body[2048] = "{\"max_tokens\":4,\"prompt\":\"";
        for (long w = 0; w < prompts[i] - 1; w++)       /* the BOS token is the prompt's first */
            snprintf(body + strlen(body), sizeof body - strlen(body), "w%ld ", w);
        strcat(body, "\"}");
        struct sim_request rq;
        struct sim_error err;
        cr_assert_eq(sim_request_parse(body, strlen(body), SIM_EP_COMPLETIONS, &shift, &rq, &err), 0,
                     "%s", err.message);
        cr_expect_eq(rq.prompt_tokens, kept[i], "prompt of %ld tokens kept %lld", prompts[i],
                     (long long)rq.prompt_tokens);
        /* the erased blocks are at the start: the last word stays the last token */
        char last[16];
        snprintf(last, sizeof last, "w%ld", prompts[i] - 2);
        cr_expect_eq(rq.token_ids[rq.prompt_tokens - 1], sim_token_id(last, strlen(last)));
        sim_request_free(&rq);
    }
    /* without it, the same prompt is refused */
    struct sim_request rq;
    struct sim_error err;
    const char *body = "{\"max_tokens\":60,\"prompt\":\"a b c d e\"}";
    cr_expect_eq(sim_request_parse(body, strlen(body), SIM_EP_COMPLETIONS, &lim, &rq, &err), -1);
}

/* An image_url shorter than the JPEG data: URL prefix is a 400 naming the
 * part, not a read past the string's end (before: ASan heap-buffer-overflow
 * in jpeg_size, which took strlen past the prefix before checking it). */
Test(sim_request, a_short_image_url_is_refused_not_overread)
{
    static const char *urls[] = {"x", "data:image/png;base64,", "data:image/jpeg;base64,", "data:image/jpeg;"};
    for (size_t i = 0; i < sizeof urls / sizeof *urls; i++) {
        char body[512];
        snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
                 "\"hi\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"%s\"}}]}],\"max_tokens\":2}", urls[i]);
        struct sim_request rq;
        struct sim_error err;
        cr_assert_eq(parse(body, SIM_EP_CHAT, &rq, &err), -1, "%s", urls[i]);
        cr_expect_eq(err.status, 400);
        cr_expect(strstr(err.message, "PNG or JPEG"), "%s", err.message);
    }
}
