/* test_scan.c — the fast chunk scanner agrees with cJSON (the reference) on
 * every recorded server event, on hand-written edge cases and on seeded
 * random mutations of both; and it really takes the fast path on the
 * chunks servers send. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cjson/cJSON.h>

#include "openai/chunk.h"
#include "openai/scan.h"
#include "testutil.h"

static void assert_same(const char *data, size_t len)
{
    struct chunk fast, ref;
    chunk_decode(data, len, &fast);
    chunk_decode_json(data, len, &ref);
    cr_assert_eq(fast.kind, ref.kind, "kind differs on: %.*s", (int)len, data);
    cr_assert_eq(fast.content_bytes, ref.content_bytes, "content on: %.*s", (int)len, data);
    cr_assert_eq(fast.reasoning_bytes, ref.reasoning_bytes, "reasoning on: %.*s", (int)len, data);
    cr_assert_eq(fast.tool_call_bytes, ref.tool_call_bytes, "tool calls on: %.*s", (int)len, data);
    cr_assert_eq(fast.tool_calls_started, ref.tool_calls_started, "tool starts on: %.*s", (int)len, data);
    cr_assert_str_eq(fast.finish_reason, ref.finish_reason, "finish on: %.*s", (int)len, data);
    cr_assert_eq(fast.prompt_tokens, ref.prompt_tokens, "prompt_tokens on: %.*s", (int)len, data);
    cr_assert_eq(fast.completion_tokens, ref.completion_tokens, "completion on: %.*s", (int)len, data);
    cr_assert_eq(fast.cached_tokens, ref.cached_tokens, "cached on: %.*s", (int)len, data);
    cr_assert_str_eq(fast.error, ref.error, "error on: %.*s", (int)len, data);
}

/* Every "data: " payload of every fixture, as separate strings. */
struct corpus {
    char *ev[512];
    int n;
};

static void add_fixture_events(struct corpus *c, const char *path)
{
    char *text = tu_read_file(path, NULL);
    for (char *p = text; (p = strstr(p, "\ndata: ")) && c->n < 512;) {
        p += 7;
        size_t n = strcspn(p, "\n");
        c->ev[c->n++] = strndup(p, n);
        p += n;
    }
    free(text);
}

static void load_corpus(struct corpus *c)
{
    const char *dirs[] = {"tests/data/fixtures/vllm", "tests/data/fixtures/sglang", "tests/data/fixtures/llamacpp"};
    c->n = 0;
    for (int d = 0; d < 3; d++) {
        DIR *dir = opendir(dirs[d]);
        cr_assert(dir);
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (e->d_name[0] == '.')
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            add_fixture_events(c, path);
        }
        closedir(dir);
    }
}

static void free_corpus(struct corpus *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->ev[i]);
}

Test(scan, agrees_with_cjson_on_every_fixture_event_and_takes_the_fast_path)
{
    struct corpus c;
    load_corpus(&c);
    cr_assert_gt(c.n, 80, "fixtures hold %d events", c.n);
    int fast = 0;
    for (int i = 0; i < c.n; i++) {
        assert_same(c.ev[i], strlen(c.ev[i]));
        struct chunk k;
        if (chunk_scan(c.ev[i], strlen(c.ev[i]), &k) == 0)
            fast++;
    }
    /* everything but [DONE], error objects and native llama.cpp events with escapes */
    cr_assert_gt(fast, c.n * 3 / 4, "only %d of %d events took the fast path", fast, c.n);
    free_corpus(&c);
}

Test(scan, edge_cases)
{
    const char *cases[] = {
        "{}", "[]", "", " ", "null", "{\"choices\":[]}", "{\"choices\":null}",
        "{\"choices\":[null,{\"delta\":{\"content\":\"x\"}}]}",
        "{\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"bbbb\"}}]}",
        "{\"choices\":[{\"delta\":\"oops\",\"text\":\"abc\"}]}",
        "{\"choices\":[{\"delta\":{\"content\":\"\\u00e9\\ud83d\\ude00\\n\"}}]}",
        "{\"choices\":[{\"delta\":{\"content\":\"\\u0000abc\"}}]}",
        "{\"choices\":[{\"delta\":{\"content\":\"\\ud800\"}}]}",
        "{\"choices\":[{\"delta\":{\"content\":\"\\udc00x\"}}]}",
        "{\"choices\":[{\"delta\":{\"content\":\"\\x\"}}]}",
        "{\"choices\":[{\"delta\":{\"cont\\u0065nt\":\"abc\"}}]}",
        "{\"choices\":[{\"delta\":{\"content\":\"a\tb\"}}]}",
        "{\"choices\":[{\"text\":\"\xc3\xa9\xff\"}]}",
        "{\"choices\":[{\"finish_reason\":\"a_very_long_finish_reason_indeed\"}]}",
        "{\"choices\":[{\"finish_reason\":\"st\\u006fp\"}]}",
        "{\"usage\":{\"prompt_tokens\":1e400,\"completion_tokens\":-3,\"prompt_tokens_details\":{\"cached_tokens\":2.9}}}",
        "{\"usage\":{\"prompt_tokens\":01}}",
        "{\"usage\":{\"prompt_tokens\":1.}}",
        "{\"usage\":{\"prompt_tokens\":-0}}",
        "{\"usage\":{\"prompt_tokens_details\":null,\"prompt_tokens_details\":{\"cached_tokens\":5}}}",
        "{\"error\":null,\"choices\":[{\"text\":\"x\"}]}",
        "{\"error\":{\"message\":\"m\\u00e9\"}}",
        "{\"object\":\"error\",\"message\":\"flat\"}",
        "{\"object\":\"chat.completion.chunk\"}",
        "{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
        "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]} trailing",
        "\x01{\"choices\":[{\"text\":\"x\"}]}",
        "\xef\xbb\xbf{\"choices\":[{\"text\":\"x\"}]}",
        "{\"choices\":[{\"text\":\"x\"}],}",
        "{\"choices\":[{\"text\":\"x\"}]",
        "{\"choices\":[{\"text\":\"x\" \"y\"}]}",
        "{\"choices\":[{\"text\":\"\\u007f\\u0080\\u07ff\\u0800\\u0fff\\uffff\\ud800\\udc00\\udbff\\udfff\"}]}",
        /* tool calls: OpenAI's shape, SGLang's, several calls, duplicates, odd types, legacy */
        "{\"choices\":[{\"delta\":{\"role\":null,\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"index\":0,"
        "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\"}},{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"id\":\"bbbb\",\"function\":{\"name\":\"f\",\"name\":\"gg\"},\"function\":{\"arguments\":\"x\"}}]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":null,\"tool_calls\":[{\"id\":\"a\"}]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[null,1,\"x\",[],{\"id\":7,\"function\":\"f\"},{\"function\":{\"name\":null,\"arguments\":3}}]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":{\"id\":\"a\"}}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"\",\"function\":{\"name\":\"\",\"arguments\":\"\\u00e9\"}}]}}]}",
        "{\"choices\":[{\"delta\":{\"function_call\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}}]}",
        "{\"choices\":[{\"delta\":{\"function_call\":{\"arguments\":\"1}\",\"id\":\"ignored\"}}}]}",
        "{\"choices\":[{\"delta\":{\"function_call\":null,\"function_call\":{\"name\":\"f\"}}}]}",
        "{\"choices\":[{\"delta\":{\"function_call\":{\"name\":\"f\"},\"tool_calls\":[{\"id\":\"a\"}]}}]}",
        "{\"choices\":[{\"text\":\"x\",\"tool_calls\":[{\"id\":\"a\"}]}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"f\\u0075nction\":{}}]}}]}",
        "{\"v\":tru}", "{\"v\":nul}", "{\"v\":-}", "{\"v\":1e}", "{\"v\":1e+5}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_same(cases[i], strlen(cases[i]));
}

static unsigned long long rng_state = 0x2545F4914F6CDD1Dull;

static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

Test(scan, agrees_with_cjson_on_random_mutations, .timeout = 120)
{
    struct corpus c;
    load_corpus(&c);
    static const char alphabet[] = "{}[]\",:\\u0123456789abcdefnrtlse.-+E \t\n\x01\xc3\xa9";
    static const char *const tokens[] = {
        "\\u00e9", "\\u0800", "\\u07ff", "\\uffff", "\\ud83d\\ude00", "\\ud83d", "\\udc00",
        "\\u0000", "\\n", "\\\"", "null", "\"content\":\"x\",", "\"reasoning\":\"r\",",
        "\"usage\":{\"completion_tokens\":7},", "1e3", "-0", "[]", "{}", "\"error\":1,",
        "\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}],",
        "\"function_call\":{\"name\":\"f\",\"arguments\":\"1\"},", "{\"id\":\"x\"},",
    };
    char buf[8192];
    for (int iter = 0; iter < 40000; iter++) {
        const char *src = c.ev[rnd((unsigned)c.n)];
        size_t len = strlen(src);
        if (len >= sizeof buf - 64)
            continue;
        memcpy(buf, src, len);
        for (int m = 1 + (int)rnd(4); m > 0; m--) {
            size_t at = len ? rnd((unsigned)len) : 0;
            switch (rnd(4)) {
            case 0: buf[at] = alphabet[rnd(sizeof alphabet - 1)]; break;          /* replace */
            case 1: {                                                          /* insert a token */
                const char *t = tokens[rnd(sizeof tokens / sizeof *tokens)];
                size_t tl = strlen(t);
                if (len + tl >= sizeof buf)
                    break;
                memmove(buf + at + tl, buf + at, len - at);
                memcpy(buf + at, t, tl);
                len += tl;
                break;
            }
            case 2: if (len) { memmove(buf + at, buf + at + 1, len - at - 1); len--; } break; /* delete */
            case 3: len = at; break;                                           /* truncate */
            }
        }
        assert_same(buf, len);
    }
    free_corpus(&c);
}

/* Tool-call deltas take the fast path and count what both decoders count:
 * id + name + arguments bytes, one call opened per element naming an id or
 * a function (the legacy function_call by its name). */
Test(scan, tool_call_deltas_are_output_on_the_fast_path)
{
    static const struct {
        const char *ev;
        size_t bytes;
        int started;
    } cases[] = {
        {"{\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":null,\"reasoning_content\":null,"
         "\"tool_calls\":[{\"id\":\"call_0123\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":"
         "\"get_weather\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}", 9 + 11, 1},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\": \"}}]}}]}", 9, 0},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\"}},"
         "{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}}]}", 2 + 4, 2},
        {"{\"choices\":[{\"delta\":{\"function_call\":{\"name\":\"lookup\",\"arguments\":\"{\"}}}]}", 7, 1},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":null}}]}", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct chunk k;
        cr_assert_eq(chunk_scan(cases[i].ev, strlen(cases[i].ev), &k), 0, "declined: %s", cases[i].ev);
        cr_assert_eq(k.tool_call_bytes, cases[i].bytes, "bytes %zu on %s", k.tool_call_bytes, cases[i].ev);
        cr_assert_eq(k.tool_calls_started, cases[i].started, "started %d on %s", k.tool_calls_started, cases[i].ev);
        cr_assert_eq(k.content_bytes, 0);
        assert_same(cases[i].ev, strlen(cases[i].ev));
    }
}

/* A JSON string's contents (escaped), decoded; caller frees. */
static char *unescape(const struct buf *b)
{
    char *q = malloc(b->len + 3);
    q[0] = '"';
    memcpy(q + 1, b->data ? b->data : "", b->len);
    q[b->len + 1] = '"';
    q[b->len + 2] = '\0';
    cJSON *v = cJSON_Parse(q);
    free(q);
    cr_assert(cJSON_IsString(v), "kept text is a JSON string's contents: %.*s", (int)b->len, b->data);
    char *s = strdup(v->valuestring);
    cJSON_Delete(v);
    return s;
}

/* The output text kept for the tokenizer is the same through both paths:
 * the fast path's raw spans and cJSON's re-escaped strings decode alike,
 * and their decoded length is the bytes both count. */
Test(scan, kept_text_is_the_same_through_both_paths)
{
    struct corpus c;
    load_corpus(&c);
    int with_text = 0;
    for (int i = 0; i < c.n; i++) {
        size_t len = strlen(c.ev[i]);
        struct chunk fast, ref;
        chunk_decode(c.ev[i], len, &fast);
        chunk_decode_json(c.ev[i], len, &ref);
        cr_assert_not(ref.text_spanned, "cJSON's path has no spans");
        struct buf a, b;
        buf_init(&a, 1 << 20);
        buf_init(&b, 1 << 20);
        cr_assert_eq(chunk_text_append(c.ev[i], len, &fast, &a), 0);
        cr_assert_eq(chunk_text_append(c.ev[i], len, &ref, &b), 0);
        char *x = unescape(&a), *y = unescape(&b);
        cr_assert_str_eq(x, y, "on: %s", c.ev[i]);
        cr_assert_eq(strlen(x), fast.content_bytes + fast.reasoning_bytes, "on: %s", c.ev[i]);
        with_text += x[0] != '\0';
        free(x);
        free(y);
        buf_free(&a);
        buf_free(&b);
    }
    cr_assert_gt(with_text, 50, "%d events carried text", with_text);
    free_corpus(&c);
}
