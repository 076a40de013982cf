/* test_sim_shapes.c — end-to-end tests of stream shapes where chunks and
 * tokens differ: tokens without a chunk of their own (--tokens-without-chunk,
 * llama.cpp's partial UTF-8), several tokens per chunk (speculative
 * decoding), and streams the client cuts. Each checks, against the bytes a
 * client received, that the trace dates every token (its chunk's write and
 * its generation), that /tokenize of the received text counts the tokens,
 * and that /metrics' generation counter counts exactly what was generated. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static cJSON *jget(const cJSON *o, const char *path) { return harness_json_path(o, path); }

static void start(struct sim_proc *p, const char *const args[])
{
    cr_assert_eq(sim_start(p, args), 0, "sim did not start");
}

static void stop_clean(struct sim_proc *p)
{
    cr_assert_eq(sim_stop(p), 0, "sim did not exit 0 on SIGTERM (sanitizer report above?)");
}

/* What a client read of one stream: the events carrying output text (chat
 * delta content/reasoning_content, completions text, non-empty), and that
 * text concatenated. Only whole "data: " lines are read (a cut body may end
 * mid-event). */
struct received {
    int text_events;
    char text[65536];
    size_t len;
};

static void add_text(struct received *rv, const cJSON *v, bool *any)
{
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return;
    size_t n = strlen(v->valuestring);
    cr_assert_lt(rv->len + n, sizeof rv->text);
    memcpy(rv->text + rv->len, v->valuestring, n + 1);
    rv->len += n;
    *any = true;
}

static void parse_stream(const char *body, struct received *rv)
{
    memset(rv, 0, sizeof *rv);
    for (const char *l = body; (l = strstr(l, "data: {")) != NULL;) {
        const char *eol = strstr(l, "\n\n");
        if (!eol)
            break;      /* cut mid-event */
        cJSON *ev = cJSON_ParseWithLength(l + 6, (size_t)(eol - l - 6));
        cr_assert_not_null(ev, "not JSON: %.*s", (int)(eol - l), l);
        const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "choices"), 0);
        bool any = false;
        add_text(rv, jget(c0, "delta.reasoning_content"), &any);
        add_text(rv, jget(c0, "delta.content"), &any);
        add_text(rv, jget(c0, "text"), &any);
        rv->text_events += any;
        cJSON_Delete(ev);
        l = eol;
    }
}

/* Checks one trace line's chunks against itself: each chunk lists one
 * generation time per token, no token is written before it was generated,
 * generation times never go back, Σ tokens = completion_tokens. Returns
 * the tokens in chunks that were written (t_ns not null); *chunks gets the
 * written chunks, *mixed whether a chunk holds tokens of different
 * generation times (tokens that waited for it). */
static int64_t check_chunks(const cJSON *line, int *chunks, bool *mixed)
{
    const cJSON *arr = jget(line, "chunks"), *c;
    int64_t sum = 0, written = 0;
    double last_gen = 0;
    *chunks = 0;
    cJSON_ArrayForEach(c, arr) {
        const cJSON *t = jget(c, "t_ns"), *gen = jget(c, "gen_ns");
        int64_t k = (int64_t)harness_num(c, "tokens");
        cr_assert(cJSON_IsArray(gen));
        cr_expect_eq(cJSON_GetArraySize(gen), k, "one generation time per token");
        const cJSON *g;
        double first = -1;
        cJSON_ArrayForEach(g, gen) {
            cr_expect_geq(g->valuedouble, last_gen, "generation times in order");
            last_gen = g->valuedouble;
            if (first < 0)
                first = g->valuedouble;
            if (cJSON_IsNumber(t))
                cr_expect_leq(g->valuedouble, t->valuedouble, "a token written before it was generated");
        }
        *mixed |= first >= 0 && first < last_gen;
        sum += k;
        if (cJSON_IsNumber(t)) {
            written += k;
            ++*chunks;
        }
    }
    cr_expect_eq(sum, (int64_t)harness_num(line, "completion_tokens"), "Σ chunks' tokens");
    return written;
}

static const cJSON *find_rid(cJSON *const lines[], int n, const char *rid)
{
    for (int i = 0; i < n; i++) {
        const cJSON *r = jget(lines[i], "request_id");
        if (cJSON_IsString(r) && !strcmp(r->valuestring, rid))
            return lines[i];
    }
    cr_assert_fail("no trace line for %s", rid);
    return NULL;
}

/* POSTs a tokenize body built by fmt around text (plain ASCII words) and
 * returns the count: "count", or the length of llama.cpp's "tokens". */
static int64_t tokenize(const struct sim_proc *p, const char *path, const char *fmt, const char *text)
{
    char url[256], *body = malloc(strlen(text) + 256);
    snprintf(url, sizeof url, "%s%s", p->root_url, path);
    sprintf(body, fmt, text);
    struct http_reply r;
    cr_assert_eq(http_post(url, body, &r), 0);
    free(body);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cJSON *j = cJSON_Parse(r.body);
    http_reply_free(&r);
    const cJSON *count = jget(j, "count");
    int64_t n = cJSON_IsNumber(count) ? (int64_t)count->valuedouble
                                      : cJSON_GetArraySize(jget(j, "tokens"));
    cJSON_Delete(j);
    return n;
}

/* llama.cpp's shape (fixtures/llamacpp/v1_*_tokens_without_chunks.txt: 47
 * chunks for 64 tokens): a share of tokens is carried by the next chunk.
 * The client's text events are the trace's chunks, every token is in one,
 * /tokenize of the text counts all 64, tokens_predicted_total all. */
Test(sim_shapes, llamacpp_tokens_without_chunk, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--flavor", "llamacpp", "--tokens-without-chunk", "0.27",
                                    "--ttft-ms", "2", "--itl-ms", "0.5", "--trace", trace, NULL});
    enum { N = 8, TOKENS = 64 };
    char url[256], body[256];
    snprintf(url, sizeof url, "%s/chat/completions", p.base_url);
    int events[N];
    for (int i = 0; i < N; i++) {
        snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"go %d\"}],"
                 "\"max_tokens\":%d,\"ignore_eos\":true,\"stream\":true}", i, TOKENS);
        char hdr[48];
        snprintf(hdr, sizeof hdr, "X-Request-Id: r%d", i);
        struct http_reply r;
        cr_assert_eq(http_do("POST", url, body, hdr, 0, &r), 0);
        cr_assert_eq(r.status, 200);
        struct received rv;
        parse_stream(r.body, &rv);
        http_reply_free(&r);
        events[i] = rv.text_events;
        cr_expect_eq(tokenize(&p, "/tokenize", "{\"content\":\"%s\"}", rv.text), TOKENS,
                     "the text of all %d tokens", TOKENS);
    }
    cr_expect_eq(harness_metric(p.root_url, "llamacpp:tokens_predicted_total"), N * TOKENS);
    stop_clean(&p);
    cJSON *lines[N];
    cr_assert_eq(harness_read_jsonl(trace, lines, N), N);
    unlink(trace);
    int total = 0;
    for (int i = 0; i < N; i++) {
        char rid[16];
        snprintf(rid, sizeof rid, "r%d", i);
        const cJSON *l = find_rid(lines, N, rid);
        int chunks;
        bool mixed = false;
        cr_expect_eq(check_chunks(l, &chunks, &mixed), TOKENS, "every token written");
        cr_expect_eq(chunks, events[i], "one trace chunk per text event the client read");
        total += chunks;
    }
    double share = (double)(N * TOKENS - total) / (N * (TOKENS - 1));
    cr_expect(share > 0.17 && share < 0.37, "share of tokens without a chunk %.3f, want about 0.27", share);
    for (int i = 0; i < N; i++)
        cJSON_Delete(lines[i]);
}

/* SGLang with speculative decoding: several tokens per chunk, and with
 * --tokens-without-chunk some wait for the next step's chunk. */
Test(sim_shapes, speculative_chunks_with_tokens_without_chunk, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--flavor", "sglang", "--model", "m", "--num-speculative-tokens", "3",
                                    "--tokens-without-chunk", "0.3", "--decode-base-ms", "1",
                                    "--trace", trace, NULL});
    enum { N = 6, TOKENS = 100 };
    char url[256], *bodies[N], *hdrs[N];
    snprintf(url, sizeof url, "%s/completions", p.base_url);
    for (int i = 0; i < N; i++) {
        bodies[i] = malloc(256);
        hdrs[i] = malloc(48);
        snprintf(bodies[i], 256, "{\"prompt\":\"spec %d\",\"max_tokens\":%d,\"ignore_eos\":true,"
                 "\"stream\":true}", i, TOKENS);
        snprintf(hdrs[i], 48, "X-Request-Id: r%d", i);
    }
    struct http_reply rep[N];
    cr_assert_eq(http_post_many(url, (const char *const *)bodies, (const char *const *)hdrs, N, rep,
                                NULL, NULL), 0);
    int events[N];
    for (int i = 0; i < N; i++) {
        cr_assert_eq(rep[i].status, 200);
        struct received rv;
        parse_stream(rep[i].body, &rv);
        events[i] = rv.text_events;
        cr_expect_eq(tokenize(&p, "/v1/tokenize", "{\"prompt\":\"%s\",\"add_special_tokens\":false}",
                              rv.text), TOKENS);
        http_reply_free(&rep[i]);
        free(bodies[i]);
        free(hdrs[i]);
    }
    cr_expect_eq(harness_metric(p.root_url, "sglang:generation_tokens_total{engine_type=\"unified\","
                                "is_streaming=\"true\",model_name=\"m\"}"), N * TOKENS);
    stop_clean(&p);
    cJSON *lines[N];
    cr_assert_eq(harness_read_jsonl(trace, lines, N), N);
    unlink(trace);
    bool mixed = false;
    int total = 0;
    for (int i = 0; i < N; i++) {
        char rid[16];
        snprintf(rid, sizeof rid, "r%d", i);
        const cJSON *l = find_rid(lines, N, rid);
        int chunks;
        cr_expect_eq(check_chunks(l, &chunks, &mixed), TOKENS);
        cr_expect_eq(chunks, events[i]);
        total += chunks;
    }
    for (int i = 0; i < N; i++)
        cJSON_Delete(lines[i]);
    cr_expect_lt(total, N * TOKENS / 2, "speculative steps carry several tokens per chunk");
    cr_expect(mixed, "some chunk carries tokens of an earlier step");
}

/* The tokens a server wrote inside [a, b], from its trace alone: Σ tokens
 * of the chunks written (t_ns) in the window. */
static int64_t written_in(const cJSON *line, double a, double b)
{
    int64_t n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, jget(line, "chunks")) {
        const cJSON *t = jget(c, "t_ns");
        if (cJSON_IsNumber(t) && t->valuedouble >= a && t->valuedouble <= b)
            n += (int64_t)harness_num(c, "tokens");
    }
    return n;
}

/* A client that leaves mid-stream (a duration window closing) still gets
 * its trace line, with the chunks actually written; the generation counter
 * counts what was generated, held tokens included; the text the client read
 * tokenizes to no more than the tokens written before it left. */
Test(sim_shapes, cut_stream_is_traced_with_what_was_written, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--ttft-ms", "1", "--itl-ms", "2", "--tokens-without-chunk", "0.3",
                                    "--trace", trace, NULL});
    char url[256];
    snprintf(url, sizeof url, "%s/chat/completions", p.base_url);
    struct http_reply r;
    cr_assert_eq(http_do("POST", url, "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"}],"
                         "\"max_tokens\":1000,\"ignore_eos\":true,\"stream\":true}",
                         "X-Request-Id: leaver", 4000, &r), 0);
    struct received rv;
    parse_stream(r.body, &rv);
    http_reply_free(&r);
    int64_t read_tokens = tokenize(&p, "/tokenize", "{\"prompt\":\"%s\",\"add_special_tokens\":false}", rv.text);
    cr_expect_gt(read_tokens, 0);
    double closed = 0;
    for (int i = 0; i < 200 && closed == 0; i++) {   /* the server sees the FIN within ms */
        harness_sleep_ms(10);
        closed = harness_metric(p.root_url, "anvil_sim:client_closed_total{model_name=\"anvil-sim\"}");
    }
    cr_expect_eq(closed, 1);
    double gen = harness_metric(p.root_url, "vllm:generation_tokens_total{model_name=\"anvil-sim\"}");
    stop_clean(&p);
    cJSON *lines[4];
    cr_assert_eq(harness_read_jsonl(trace, lines, 4), 1);
    unlink(trace);
    const cJSON *l = find_rid(lines, 1, "leaver");
    cr_expect(cJSON_IsTrue(jget(l, "client_closed")));
    cr_expect_eq(harness_num(l, "completion_tokens"), gen, "the counter counts every generated token");
    cr_expect(gen > 0 && gen < 1000, "cut early: %g", gen);
    int chunks;
    bool mixed = false;
    int64_t written = check_chunks(l, &chunks, &mixed);
    cr_expect_geq(written, read_tokens, "the client read %lld tokens, the server wrote %lld",
                  (long long)read_tokens, (long long)written);
    cr_expect_leq(written, (int64_t)gen);
    double t0 = harness_num(l, "received_ns"), t1 = harness_num(l, "finished_ns");
    cr_expect_eq(written_in(l, t0, t1), written, "every write within the request's life");
    double mid = (t0 + t1) / 2;
    cr_expect_eq(written_in(l, t0, mid) + written_in(l, mid + 1, t1), written, "windows partition the writes");
    cJSON_Delete(lines[0]);
}

Test(sim_shapes, tokens_without_chunk_refuses_bad_shares)
{
    const char *bad[] = {"1", "-0.1", "x", "1.5"};
    for (size_t i = 0; i < 4; i++) {
        const char *argv[] = {harness_anvil_bin(), "sim", "--tokens-without-chunk", bad[i], NULL};
        char out[64], err[512];
        int status;
        cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
        cr_expect_eq(status, 2, "%s", bad[i]);
        cr_expect(strstr(err, "--tokens-without-chunk") != NULL, "%s", err);
    }
    const char *good[] = {"0", "0.99"};
    for (size_t i = 0; i < 2; i++) {
        struct sim_proc p;
        start(&p, (const char *const[]){"--tokens-without-chunk", good[i], NULL});
        stop_clean(&p);
    }
}

static cJSON *get_json(const struct sim_proc *p, const char *path)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", p->root_url, path);
    struct http_reply r;
    cr_assert_eq(http_get(url, &r), 0);
    cr_assert_eq(r.status, 200, "%s: %ld", path, r.status);
    cJSON *j = cJSON_Parse(r.body);
    http_reply_free(&r);
    cr_assert_not_null(j, "%s: not JSON", path);
    return j;
}

/* A prompt of words words. */
static char *long_prompt(int words, int max_tokens, bool stream)
{
    char *b = malloc((size_t)words * 8 + 256);
    size_t n = (size_t)sprintf(b, "{\"prompt\":\"");
    for (int i = 0; i < words; i++)
        n += (size_t)sprintf(b + n, "w%d ", i);
    sprintf(b + n, "\",\"max_tokens\":%d,\"stream\":%s}", max_tokens, stream ? "true" : "false");
    return b;
}

/* Each flavor tells its context where its server does, before any request:
 * llama.cpp's /props per slot (--max-model-len) with total_slots
 * (--max-num-seqs), SGLang's /v1/models and /server_info, vLLM's
 * /v1/models. A llama.cpp request beyond the slot is refused with no token. */
Test(sim_shapes, context_is_discoverable_on_every_flavor, .timeout = 60)
{
    struct sim_proc p;
    start(&p, (const char *const[]){"--flavor", "llamacpp", "--max-model-len", "2048", "--max-num-seqs", "4",
                                    "--kv-cache-tokens", "8192", NULL});
    cJSON *j = get_json(&p, "/props");
    cr_expect_eq(harness_num(jget(j, "default_generation_settings"), "n_ctx"), 2048, "per slot");
    cr_expect_eq(harness_num(j, "total_slots"), 4);
    cJSON_Delete(j);
    char url[256];
    snprintf(url, sizeof url, "%s/completions", p.base_url);
    struct http_reply r;
    char *body = long_prompt(3000, 16, false);
    cr_assert_eq(http_post(url, body, &r), 0);
    free(body);
    cr_expect_eq(r.status, 400);
    cr_expect(strstr(r.body, "\"type\":\"exceed_context_size_error\"") != NULL, "%s", r.body);
    http_reply_free(&r);
    body = long_prompt(3000, 16, true);
    cr_assert_eq(http_post(url, body, &r), 0);
    free(body);
    cr_expect_eq(r.status, 200, "the build the fixtures come from found it after the stream began");
    cr_expect(strstr(r.body, "error: {\"code\":400,\"message\":\"the request exceeds the available context size")
              == r.body && !strstr(r.body, "data: {"), "no token: %s", r.body);
    http_reply_free(&r);
    cr_expect_eq(harness_metric(p.root_url, "llamacpp:tokens_predicted_total"), 0);
    stop_clean(&p);

    start(&p, (const char *const[]){"--flavor", "sglang", "--max-model-len", "4096", NULL});
    j = get_json(&p, "/v1/models");
    cr_expect_eq(harness_num(jget(j, "data.0"), "max_model_len"), 4096);
    cJSON_Delete(j);
    j = get_json(&p, "/server_info");
    cr_expect_eq(harness_num(j, "context_length"), 4096);
    cr_expect_eq(harness_num(j, "max_req_input_len"), 4095);
    cJSON_Delete(j);
    stop_clean(&p);

    start(&p, (const char *const[]){"--flavor", "vllm", "--max-model-len", "1024", NULL});
    j = get_json(&p, "/v1/models");
    cr_expect_eq(harness_num(jget(j, "data.0"), "max_model_len"), 1024);
    cJSON_Delete(j);
    stop_clean(&p);
}

/* llama.cpp at one stream (engine mode): as in fixtures/llamacpp/metrics.txt,
 * one llama_decode per token (the prompt's decode samples the first), so
 * n_decode_total = Σ the trace's completion_tokens, whether or not tokens
 * had a chunk of their own, for whole and cut streams alike — but for the
 * step that was running when the client left: it ran (a decode), its token
 * was dropped. tokens_predicted_total counts the replies that completed,
 * as llama-server adds them (metrics.on_prediction), not the cut one. */
Test(sim_shapes, llamacpp_counters_count_every_generated_token, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--flavor", "llamacpp", "--tokens-without-chunk", "0.3", "--decode-base-ms",
                                    "1", "--trace", trace, NULL});
    char url[256];
    snprintf(url, sizeof url, "%s/completions", p.base_url);
    enum { N = 4 };
    for (int i = 0; i < N; i++) {
        char body[160];
        snprintf(body, sizeof body, "{\"prompt\":\"one at a time %d\",\"max_tokens\":%d,\"stream\":true}", i,
                 40 + 10 * i);
        struct http_reply r;
        /* the last one is cut by its client after about 20 events */
        cr_assert_eq(http_do("POST", url, body, NULL, i == N - 1 ? 3000 : 0, &r), 0);
        http_reply_free(&r);
        if (i == N - 1)
            for (int k = 0; k < 100 && harness_metric(p.root_url, "llamacpp:requests_processing") != 0; k++)
                harness_sleep_ms(10);
    }
    double predicted = harness_metric(p.root_url, "llamacpp:tokens_predicted_total");
    double decodes = harness_metric(p.root_url, "llamacpp:n_decode_total");
    stop_clean(&p);
    cJSON *lines[N];
    cr_assert_eq(harness_read_jsonl(trace, lines, N), N);
    unlink(trace);
    double sum = 0, completed = 0;
    for (int i = 0; i < N; i++) {
        sum += harness_num(lines[i], "completion_tokens");
        if (!cJSON_IsTrue(cJSON_GetObjectItem(lines[i], "client_closed")))
            completed += harness_num(lines[i], "completion_tokens");
        cJSON_Delete(lines[i]);
    }
    cr_expect_lt(completed, sum, "the cut reply is in the trace");
    cr_expect_eq(predicted, completed, "tokens_predicted_total %g, the completed replies %g", predicted, completed);
    cr_expect(decodes == sum || decodes == sum + 1, "n_decode_total %g, the trace %g", decodes, sum);
}

/* A duration window that closes while its streams run: the client leaves
 * each one mid-stream, and each still gets its trace line, as a client
 * close, with the tokens it wrote and the ones it held. */
Test(sim_shapes, streams_cut_by_a_closing_window_are_traced, .timeout = 90)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--flavor", "llamacpp", "--tokens-without-chunk", "0.3", "--decode-base-ms",
                                    "2", "--trace", trace, NULL});
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", p.base_url, "--concurrency", "3",
                          "--duration", "1", "--warmup-s", "0", "--input-len", "16", "--output-len", "20000",
                          "--out", art, NULL};
    char out[8192], err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    for (int k = 0; k < 200 && harness_metric(p.root_url, "llamacpp:requests_processing") != 0; k++)
        harness_sleep_ms(10);
    double predicted = harness_metric(p.root_url, "llamacpp:tokens_predicted_total");
    stop_clean(&p);
    unlink(art);
    cJSON *lines[16];
    int n = harness_read_jsonl(trace, lines, 16);
    unlink(trace);
    cr_assert_geq(n, 3, "one line per stream the window cut (rc %d): %s", status, err);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        int chunks;
        bool mixed = false;
        int64_t written = check_chunks(lines[i], &chunks, &mixed);
        cr_expect(cJSON_IsTrue(jget(lines[i], "client_closed")), "line %d: a client close", i);
        cr_expect_gt(written, 0);
        sum += harness_num(lines[i], "completion_tokens");
        cJSON_Delete(lines[i]);
    }
    cr_expect_gt(sum, 0);
    cr_expect_eq(predicted, 0, "llama.cpp counts no token of a cut stream (metrics.on_prediction)");
}
