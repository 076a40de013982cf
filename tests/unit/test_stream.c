/* test_stream.c — recorded server streams through the measuring path: which
 * event is TTFT, what counts as output, where token counts come from. Each
 * event is fed as its own read at t = 1000 ns × (event number). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "openai/errline.h"
#include "openai/stream.h"
#include "stats/metrics.h"
#include "testutil.h"

#define T(i) ((int64_t)1000 * (i))

/* Feeds the fixture's body event by event (each "\n\n"-terminated block is
 * one read) into rec, planned for planned prompt tokens (0: no plan);
 * returns the number of reads. */
static int feed_planned(const char *path, struct req_record *rec, bool finish, long planned)
{
    char *text = tu_read_file(path, NULL);
    int status;
    const char *body = tu_fixture_body(text, &status);
    struct stream s;
    record_init(rec, 0, false, planned, 0);
    rec->t_start = T(0) + 1;   /* 0 means "not sent" */
    stream_init(&s, rec);
    stream_headers(&s, T(0) + 2, status);
    int reads = 0;
    for (const char *p = body; *p;) {
        const char *end = strstr(p, "\n\n");
        size_t n = end ? (size_t)(end - p) + 2 : strlen(p);
        stream_feed(&s, T(++reads), p, n);
        p += n;
    }
    if (finish)
        stream_finish(&s, T(reads + 1));
    stream_free(&s);
    free(text);
    return reads;
}

static int feed_fixture(const char *path, struct req_record *rec, bool finish)
{
    return feed_planned(path, rec, finish, 0);
}

Test(stream, vllm_chat_role_chunk_is_not_ttft)
{
    struct req_record r;
    int reads = feed_fixture("tests/data/fixtures/vllm/chat_stream.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    cr_assert_eq(r.t_first_event, T(1), "the role chunk is the first event");
    cr_assert_eq(r.t_first_content, T(2), "TTFT is the first non-empty content");
    cr_assert_eq(r.t_first_output, T(2));
    cr_assert_eq(r.t_end, T(reads), "E2E ends at [DONE]");
    cr_assert(r.done_seen);
    cr_assert_eq(r.content_chunks, 5);
    cr_assert_eq(r.completion_tokens, 6);
    cr_assert_eq(r.prompt_tokens, 36);
    cr_assert_str_eq(r.finish_reason, "stop");
    struct req_metrics m;
    metrics_derive(&r, &m);
    cr_assert_eq(m.output_token_source, TOKENS_USAGE);
    cr_assert_eq(m.output_tokens, 6);
    record_free(&r);
}

Test(stream, vllm_reasoning_then_content)
{
    struct req_record r;
    feed_fixture("tests/data/fixtures/vllm/chat_stream_reasoning.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    cr_assert_gt(r.reasoning_chunks, 0);
    cr_assert_gt(r.content_chunks, 0);
    cr_assert_lt(r.t_first_output, r.t_first_content, "reasoning comes before visible content");
    cr_assert_eq(r.t_first_output, T(2));
    record_free(&r);
}

Test(stream, vllm_legacy_reasoning_counts_each_delta_once)
{
    struct req_record r;
    feed_fixture("tests/data/fixtures/vllm/chat_stream_reasoning_legacy.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    cr_assert_eq((size_t)(r.reasoning_chunks + r.content_chunks) >= r.n_chunks, true);
    cr_assert_gt(r.reasoning_chunks, 0);
    record_free(&r);
}

Test(stream, vllm_continuous_usage_gives_tokens_per_chunk)
{
    struct req_record r;
    feed_fixture("tests/data/fixtures/vllm/chat_stream_continuous_usage.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    long sum = 0;
    for (size_t i = 0; i < r.n_chunks; i++) {
        cr_assert_geq(r.chunks[i].tokens, 1, "chunk %zu carries a known token count", i);
        sum += r.chunks[i].tokens;
    }
    cr_assert_leq(sum, r.completion_tokens);
    record_free(&r);
}

Test(stream, vllm_completions_text)
{
    struct req_record r;
    feed_fixture("tests/data/fixtures/vllm/completions_stream.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    cr_assert_eq(r.t_first_content, T(1), "completions have no role chunk");
    cr_assert_str_eq(r.finish_reason, "length");
    cr_assert_gt(r.completion_tokens, 0);
    record_free(&r);
}

Test(stream, sglang_chat_null_reasoning_and_separate_finish)
{
    struct req_record r;
    feed_fixture("tests/data/fixtures/sglang/chat_stream.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    cr_assert_eq(r.reasoning_chunks, 0, "\"reasoning_content\":null is no reasoning");
    cr_assert_eq(r.t_first_content, T(2));
    cr_assert_str_neq(r.finish_reason, "");
    cr_assert_gt(r.completion_tokens, 0);
    record_free(&r);
}

Test(stream, sglang_completions_usage_null_on_every_chunk)
{
    struct req_record r;
    feed_fixture("tests/data/fixtures/sglang/completions_stream.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    cr_assert_gt(r.completion_tokens, 0, "the final usage chunk still counts");
    record_free(&r);
}

Test(stream, llamacpp_usage_on_final_chunk_no_role_chunk)
{
    struct req_record r;
    feed_fixture("tests/data/fixtures/llamacpp/v1_chat_completions_stream.txt", &r, true);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    cr_assert_eq(r.t_first_content, T(1));
    cr_assert_eq(r.completion_tokens, 8);
    cr_assert_eq(r.prompt_tokens, 38);
    cr_assert_str_eq(r.finish_reason, "length");
    record_free(&r);
}

/* A prompt the server cut is a failed request, not a measurement at
 * another length: the recorded llama.cpp stream reports 38 prompt tokens,
 * under 80% of 48 planned (38.4), not of 47 (37.6). */
Test(stream, a_prompt_the_server_cut_fails_as_prompt_truncated)
{
    struct req_record r;
    feed_planned("tests/data/fixtures/llamacpp/v1_chat_completions_stream.txt", &r, true, 48);
    cr_assert_eq(r.fail, FAIL_PROMPT_TRUNCATED, "%s", r.fail_msg);
    cr_assert_str_eq(fail_kind_name(r.fail), "prompt_truncated");
    cr_assert_str_eq(r.fail_msg, "the server cut the prompt: usage.prompt_tokens 38 of 48 planned (under 80%)");
    cr_assert_eq(r.completion_tokens, 8, "what arrived is kept");
    record_free(&r);
    feed_planned("tests/data/fixtures/llamacpp/v1_chat_completions_stream.txt", &r, true, 47);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    record_free(&r);
    /* no planned count (dataset prompts): not checked */
    feed_planned("tests/data/fixtures/llamacpp/v1_chat_completions_stream.txt", &r, true, -1);
    cr_assert_eq(r.fail, FAIL_NONE, "%s", r.fail_msg);
    record_free(&r);
}

/* Feeds one whole body that arrived at t = 5 ns after headers with status,
 * then ends the stream at t = 6 ns; r is initialized here and started at 1. */
static void run_body(struct req_record *r, long status, const char *body)
{
    struct stream s;
    record_init(r, 0, false, 0, 0);
    r->t_start = 1;
    stream_init(&s, r);
    stream_headers(&s, 2, status);
    stream_feed(&s, 5, body, strlen(body));
    stream_finish(&s, 6);
    stream_free(&s);
}

Test(stream, error_inside_200_stream_fails_the_request)
{
    struct req_record r;
    run_body(&r, 200, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                      "data: {\"error\": {\"object\": \"error\", \"message\": \"The request queue is full.\"}}\n\n"
                      "data: [DONE]\n\n");
    cr_assert_eq(r.fail, FAIL_STREAM_ERROR);
    cr_assert(strstr(r.fail_msg, "queue is full"), "%s", r.fail_msg);
    record_free(&r);
}

Test(stream, connection_closed_mid_stream_is_truncated)
{
    struct req_record r;
    run_body(&r, 200, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choi");
    cr_assert_eq(r.fail, FAIL_TRUNCATED);
    record_free(&r);
}

Test(stream, http_error_keeps_the_body_as_message)
{
    struct req_record r;
    record_init(&r, 0, false, 0, 0);
    struct stream s;
    stream_init(&s, &r);
    stream_headers(&s, 1, 400);
    const char *body = "{\"object\":\"error\",\"message\":\"The input (40012 tokens) is longer than the model's context length (32768 tokens).\"}";
    stream_feed(&s, 2, body, 30);       /* the body in two reads */
    stream_feed(&s, 3, body + 30, strlen(body) - 30);
    stream_finish(&s, 4);
    cr_assert_eq(r.fail, FAIL_HTTP);
    cr_assert_eq(r.http_status, 400);
    cr_assert(strstr(r.fail_msg, "HTTP 400") && strstr(r.fail_msg, "context length"), "%s", r.fail_msg);
    stream_free(&s);
    record_free(&r);
}

Test(stream, timestamps_come_from_the_read_not_the_parse)
{
    /* two events in one read share that read's arrival time */
    struct req_record r;
    record_init(&r, 0, false, 0, 0);
    struct stream s;
    stream_init(&s, &r);
    stream_headers(&s, 1, 200);
    const char *a = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\nda";
    const char *b = "ta: {\"choices\":[{\"delta\":{\"content\":\"c\"}}]}\n\n";
    stream_feed(&s, 100, a, strlen(a));
    stream_feed(&s, 200, b, strlen(b));
    cr_assert_eq(r.n_chunks, 3);
    cr_assert_eq(r.chunks[0].t_ns, 100);
    cr_assert_eq(r.chunks[1].t_ns, 100);
    cr_assert_eq(r.chunks[2].t_ns, 200, "an event completed by a later read carries that read's time");
    stream_free(&s);
    record_free(&r);
}

/* A first answer read with the next output (one time for both: one kernel
 * buffer or one read) has no arrival of its own: flagged. One read each, or
 * a reasoning chunk sharing its time before it, is not. */
Test(stream, a_first_answer_sharing_its_time_with_later_output_is_flagged)
{
    const char *reason = "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"r\"}}]}\n\n";
    const char *ans = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
    const struct {
        int64_t t[3];           /* arrival of the reasoning chunk, the first answer, the next answer */
        bool merged;
    } cases[] = {{{100, 200, 300}, false}, {{100, 100, 300}, false}, {{100, 200, 200}, true},
                 {{100, 100, 100}, true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct req_record r;
        record_init(&r, 0, false, 0, 0);
        struct stream s;
        stream_init(&s, &r);
        stream_headers(&s, 1, 200);
        stream_feed(&s, cases[i].t[0], reason, strlen(reason));
        stream_feed(&s, cases[i].t[1], ans, strlen(ans));
        cr_assert_not(r.first_output_merged, "case %zu: flagged before any later output", i);
        s.now_shared = false;   /* the bytes with this time arrived together: one write, not merged */
        stream_feed(&s, cases[i].t[2], ans, strlen(ans));
        cr_assert_not(r.first_output_merged, "case %zu: one segment is no merge", i);
        s.now_shared = true;
        stream_feed(&s, cases[i].t[2], ans, strlen(ans));
        cr_assert_eq(r.t_first_content, cases[i].t[1]);
        cr_assert_eq(r.first_output_merged, cases[i].merged, "case %zu", i);
        stream_free(&s);
        record_free(&r);
    }
}

/* A first answer dated by the clock at a late read (now_unknown) is
 * flagged; a later output so dated is not the first answer's concern. */
Test(stream, a_first_answer_read_late_without_a_stamp_is_flagged)
{
    const char *ans = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
    for (int first_unknown = 0; first_unknown < 2; first_unknown++) {
        struct req_record r;
        record_init(&r, 0, false, 0, 0);
        struct stream s;
        stream_init(&s, &r);
        stream_headers(&s, 1, 200);
        s.now_unknown = first_unknown;
        stream_feed(&s, 100, ans, strlen(ans));
        s.now_unknown = true;
        stream_feed(&s, 200, ans, strlen(ans));
        cr_assert_eq(r.first_output_merged, first_unknown);
        stream_free(&s);
        record_free(&r);
    }
}

Test(stream, no_usage_falls_back_to_chunk_count)
{
    struct req_record r;
    run_body(&r, 200, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                      "data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"length\"}]}\n\n"
                      "data: [DONE]\n\n");
    struct req_metrics m;
    metrics_derive(&r, &m);
    cr_assert_eq(r.fail, FAIL_NONE);
    cr_assert_eq(m.output_token_source, TOKENS_CHUNKS);
    cr_assert_eq(m.output_tokens, 2);
    record_free(&r);
}

Test(stream, a_stream_without_any_output_fails_as_empty)
{
    const char *bodies[] = {
        "data: [DONE]\n\n",
        "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":0}}\n\n"
        "data: [DONE]\n\n",
    };
    for (int i = 0; i < 2; i++) {
        struct req_record r;
        run_body(&r, 200, bodies[i]);
        cr_assert_eq(r.fail, FAIL_EMPTY, "body %d", i);
        cr_assert_str_eq(fail_kind_name(r.fail), "empty_stream");
        record_free(&r);
    }
}

Test(stream, usage_alone_still_counts_as_output)
{
    /* a server that streams no text but reports tokens (e.g. only tool calls) is not empty */
    struct req_record r;
    run_body(&r, 200, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n");
    cr_assert_eq(r.fail, FAIL_NONE);
    record_free(&r);
}

Test(record, redaction_scrubs_every_occurrence)
{
    struct req_record r;
    record_init(&r, 0, false, 0, 0);
    record_fail(&r, FAIL_HTTP, "HTTP 401: bad key Bearer sk-abc123 (sk-abc123)");
    record_redact(&r, "sk-abc123");
    cr_assert_str_eq(r.fail_msg, "HTTP 401: bad key Bearer [redacted] ([redacted])");
    record_redact(&r, "dact");      /* a secret inside the mark must not loop */
    cr_assert(strstr(r.fail_msg, "[re"));
    record_free(&r);
}

Test(record, redaction_catches_a_key_cut_by_truncation)
{
    struct req_record r;
    record_init(&r, 0, false, 0, 0);
    char body[400];
    memset(body, 'x', 236);
    snprintf(body + 236, sizeof body - 236, " sk-secret-1234567890");
    record_fail(&r, FAIL_HTTP, "HTTP 401: %s", body);   /* cut at 255 bytes, inside the key */
    cr_assert_null(strstr(r.fail_msg, "sk-secret-1234567890"), "the whole key cannot fit");
    record_redact(&r, "sk-secret-1234567890");
    cr_assert_null(strstr(r.fail_msg, "sk-sec"), "%s", r.fail_msg);
    cr_assert(strstr(r.fail_msg, "[redacted]"));
    record_free(&r);
}

/* ---- errors inside 200 streams, in each engine's shape ----------------------- */

/* llama-server's stream failure (server_sent_event(sink, "error", ...), then
 * [DONE]); a prompt beyond the slot's context is reported so. */
#define LLAMACPP_ERROR_LINE "error: {\"code\":400,\"message\":\"the request exceeds the available context " \
    "size, try increasing it\",\"type\":\"exceed_context_size_error\"}\n\n"
#define LLAMACPP_DONE "data: [DONE]\n\n"
#define CONTENT_A "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"

static void assert_context_error(const struct req_record *r)
{
    cr_assert_eq(r->fail, FAIL_STREAM_ERROR, "%s: %s", fail_kind_name(r->fail), r->fail_msg);
    cr_assert(strstr(r->fail_msg, "exceeds the available context size") &&
              strstr(r->fail_msg, "exceed_context_size_error, code 400"), "%s", r->fail_msg);
}

Test(stream, llamacpp_error_line_fails_the_request_not_empty)
{
    const char *bodies[] = {
        LLAMACPP_ERROR_LINE LLAMACPP_DONE,                         /* before any token */
        CONTENT_A LLAMACPP_ERROR_LINE LLAMACPP_DONE,               /* mid-stream */
        "error:{\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\","
        "\"type\":\"exceed_context_size_error\"}\r\n\r\n" LLAMACPP_DONE,   /* no space, CRLF */
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        struct req_record r;
        run_body(&r, 200, bodies[i]);
        assert_context_error(&r);
        cr_assert_not(r.done_seen, "body %zu: the [DONE] after the error is not a clean end", i);
        record_free(&r);
    }
}

Test(stream, llamacpp_error_line_split_at_every_byte)
{
    const char *body = CONTENT_A LLAMACPP_ERROR_LINE LLAMACPP_DONE;
    struct req_record r;
    record_init(&r, 0, false, 0, 0);
    r.t_start = 1;
    struct stream s;
    stream_init(&s, &r);
    stream_headers(&s, 2, 200);
    for (size_t i = 0; body[i]; i++)
        stream_feed(&s, 10 + (int64_t)i, body + i, 1);
    stream_finish(&s, 1000);
    stream_free(&s);
    assert_context_error(&r);
    cr_assert_eq(r.content_chunks, 1, "the content before the error line was seen");
    record_free(&r);
}

Test(stream, llamacpp_error_line_cut_by_the_connection)
{
    struct req_record r;
    run_body(&r, 200, CONTENT_A "error: {\"code\":500,\"message\":\"slot died\"");
    cr_assert_eq(r.fail, FAIL_STREAM_ERROR, "%s", r.fail_msg);
    cr_assert(strstr(r.fail_msg, "slot died"), "the partial value is kept as text: %s", r.fail_msg);
    record_free(&r);
}

Test(stream, only_a_line_starting_error_colon_is_the_error_line)
{
    const char *bodies[] = {
        "data: {\"choices\":[{\"delta\":{\"content\":\"error: not a field\"}}]}\n\n"   /* inside data */
        "errors: an unknown field\n" "error_x: another\n" ": error: a comment\n\n"
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" LLAMACPP_DONE,
        CONTENT_A LLAMACPP_DONE LLAMACPP_ERROR_LINE,            /* after [DONE]: the stream had ended */
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        struct req_record r;
        run_body(&r, 200, bodies[i]);
        cr_assert_eq(r.fail, FAIL_NONE, "body %zu: %s", i, r.fail_msg);
        record_free(&r);
    }
}

#define SCAN(e, lit) errline_scan((e), (lit), strlen(lit))

Test(stream, errline_offsets)
{
    struct errline e;
    errline_init(&e);
    cr_assert_eq(SCAN(&e, "data: x\n\ner"), 11, "a prefix is not yet an error line");
    cr_assert_eq(SCAN(&e, "ror: {\"message\""), 0, "it began in the earlier read");
    cr_assert(e.capturing && !e.complete);
    cr_assert_eq(SCAN(&e, ":\"m\"}\ndata: [DONE]\n\n"), 0);
    cr_assert(e.complete);
    cr_assert_str_eq(errline_value(&e), "{\"message\":\"m\"}");
    errline_free(&e);
    errline_init(&e);
    cr_assert_eq(SCAN(&e, "data: a\n\nerror: {}\n"), 9, "the line starts at byte 9");
    errline_free(&e);
}

/* The fixture's in-stream error exchange (case n of error_responses.txt). */
static void run_case(struct req_record *r, const char *path, int n)
{
    char *text = tu_read_file(path, NULL);
    int status;
    char *body = tu_fixture_case(text, n, &status);
    cr_assert_eq(status, 200);
    run_body(r, status, body);
    free(body);
    free(text);
}

Test(stream, vllm_error_event_after_content)
{
    struct req_record r;
    run_case(&r, "tests/data/fixtures/vllm/error_responses.txt", 3);
    cr_assert_eq(r.fail, FAIL_STREAM_ERROR, "%s", r.fail_msg);
    cr_assert_eq(r.content_chunks, 2);
    cr_assert(strstr(r.fail_msg, "Internal server error (InternalServerError, code 500)"), "%s", r.fail_msg);
    record_free(&r);
}

Test(stream, sglang_queue_full_inside_200)
{
    struct req_record r;
    run_case(&r, "tests/data/fixtures/sglang/error_responses.txt", 3);
    cr_assert_eq(r.fail, FAIL_STREAM_ERROR, "%s", r.fail_msg);
    cr_assert(strstr(r.fail_msg, "The request queue is full. (SERVICE_UNAVAILABLE, code 503)"), "%s", r.fail_msg);
    record_free(&r);
}

Test(stream, llamacpp_later_builds_error_object)
{
    /* later llama-server builds: format_oai_sse({"error": res_json}), no [DONE] */
    struct req_record r;
    run_body(&r, 200, CONTENT_A "data: {\"error\":{\"code\":500,\"message\":\"Input prompt is too big "
                      "compared to KV size.\",\"type\":\"server_error\"}}\n\n");
    cr_assert_eq(r.fail, FAIL_STREAM_ERROR, "%s", r.fail_msg);
    cr_assert(strstr(r.fail_msg, "too big compared to KV size. (server_error, code 500)"), "%s", r.fail_msg);
    record_free(&r);
}

Test(stream, tgi_error_event)
{
    /* TGI: Event::json_data(ErrorResponse {error, error_type}) inside the stream */
    struct req_record r;
    run_body(&r, 200, CONTENT_A "data: {\"error\":\"Request failed during generation: Server error: "
                      "CUDA out of memory\",\"error_type\":\"generation\"}\n\n");
    cr_assert_eq(r.fail, FAIL_STREAM_ERROR, "%s", r.fail_msg);
    cr_assert(strstr(r.fail_msg, "CUDA out of memory (generation)"), "%s", r.fail_msg);
    record_free(&r);
}
