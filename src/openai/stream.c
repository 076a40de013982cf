/* stream.c — per-request stream measurement. Every timestamp is the arrival
 * time of the read that completed the event, so a backlog parsed late still
 * carries the time its bytes arrived. */
#include "openai/stream.h"

#include <stdio.h>
#include <string.h>

#include "openai/chunk.h"

#define ERROR_BODY_MAX 4096

void stream_init(struct stream *s, struct req_record *rec)
{
    sse_init(&s->sse, STREAM_MAX_EVENT);
    errline_init(&s->errline);
    buf_init(&s->error_body, ERROR_BODY_MAX);
    s->rec = rec;
    s->now = 0;
    s->now_unknown = false;
    s->now_shared = true;
    s->last_completion_tokens = 0;
    s->stopped = false;
    s->keep_text = false;
    s->content_type[0] = '\0';
    s->head_len = 0;
}

void stream_headers(struct stream *s, int64_t t_ns, long status)
{
    s->rec->http_status = status;
    if (!s->rec->t_headers)
        s->rec->t_headers = t_ns;
}

/* Keeps the event's output text while the stream has reported no usage
 * (a stream cut, or ended without usage, is then counted by the engine's
 * tokenizer); usage makes it unnecessary (on_usage frees it). */
static void keep_text(struct stream *s, const struct sse_event *ev, const struct chunk *c)
{
    struct req_record *r = s->rec;
    if (!s->keep_text || r->completion_tokens >= 0 || r->text_dropped)
        return;
    if (chunk_text_append(ev->data, ev->data_len, c, &r->text) != 0) {
        r->text_dropped = true;     /* longer than RECORD_TEXT_MAX: the count falls back to chunks */
        buf_free(&r->text);
    }
}

static void on_output(struct stream *s, const struct chunk *c)
{
    struct req_record *r = s->rec;
    int32_t tokens = -1;
    if (c->completion_tokens >= 0) {    /* continuous usage: tokens since the last report */
        tokens = (int32_t)(c->completion_tokens - s->last_completion_tokens);
        s->last_completion_tokens = c->completion_tokens;
    }
    /* the answer is content or a tool call; TTFT is its first piece */
    bool answer = c->content_bytes || c->tool_call_bytes;
    if (!r->t_first_output)
        r->t_first_output = s->now;
    if (answer && !r->t_first_content) {
        r->t_first_content = s->now;
        r->first_output_merged |= s->now_unknown;   /* read late, without a kernel stamp */
    } else if (s->now == r->t_first_content && s->now_shared) {    /* same buffer or read, merged */
        r->first_output_merged = true;
    }
    if (c->content_bytes)
        r->content_chunks++;
    if (c->tool_call_bytes)
        r->tool_call_chunks++;
    r->tool_calls += c->tool_calls_started;
    if (c->reasoning_bytes)
        r->reasoning_chunks++;
    size_t bytes = c->content_bytes + c->reasoning_bytes + c->tool_call_bytes;
    if (record_add_chunk(r, s->now, tokens, bytes, answer) != 0) {
        record_fail(r, FAIL_OTHER, "out of memory recording chunk %zu", r->n_chunks);
        s->stopped = true;
    }
}

static void on_usage(struct stream *s, const struct chunk *c)
{
    struct req_record *r = s->rec;
    if (c->prompt_tokens >= 0)
        r->prompt_tokens = c->prompt_tokens;
    if (c->completion_tokens >= 0) {
        r->completion_tokens = c->completion_tokens;
        s->last_completion_tokens = c->completion_tokens;
        buf_free(&r->text);     /* counted by the server: the text is not needed */
    }
    if (c->cached_tokens >= 0)
        r->cached_tokens = c->cached_tokens;
}

static int on_event(void *ud, const struct sse_event *ev)
{
    struct stream *s = ud;
    struct req_record *r = s->rec;
    r->events++;
    if (!r->t_first_event)
        r->t_first_event = s->now;
    if (!strcmp(ev->type, "error")) {
        record_fail(r, FAIL_STREAM_ERROR, "event: error frame: %.200s", ev->data);
        return 1;
    }
    struct chunk c;
    chunk_decode(ev->data, ev->data_len, &c);
    switch (c.kind) {
    case CHUNK_DONE:
        r->done_seen = true;
        r->t_end = s->now;
        return 1;
    case CHUNK_ERROR:
        record_fail(r, FAIL_STREAM_ERROR, "error in stream after %d events: %s", r->events, c.error);
        return 1;
    case CHUNK_INVALID:
        record_fail(r, FAIL_INVALID, "event %d: %s", r->events, c.error);
        return 1;
    case CHUNK_DATA:
        break;
    }
    if (c.content_bytes || c.reasoning_bytes || c.tool_call_bytes) {
        on_output(s, &c);
        keep_text(s, ev, &c);
    }
    on_usage(s, &c);
    if (c.finish_reason[0])
        memcpy(r->finish_reason, c.finish_reason, sizeof r->finish_reason);
    return 0;
}

/* llama.cpp's "error:" line ended (or the stream did, in the middle of it):
 * the request failed with the server's message. */
static void fail_errline(struct stream *s)
{
    struct req_record *r = s->rec;
    const char *v = errline_value(&s->errline);
    char msg[256];
    r->events++;
    if (!r->t_first_event)
        r->t_first_event = s->now;
    chunk_error_text(v, strlen(v), msg, sizeof msg);
    record_fail(r, FAIL_STREAM_ERROR, "error in stream after %d events: %s", r->events, msg);
    s->stopped = true;
}

void stream_content_type(struct stream *s, const char *ct)
{
    snprintf(s->content_type, sizeof s->content_type, "%s", ct ? ct : "");
}

/* A 200 that carried no event: say what it was instead. */
static void fail_not_a_stream(struct stream *s)
{
    char head[sizeof s->head];
    size_t i = 0;
    for (; i < s->head_len; i++)
        head[i] = (unsigned char)s->head[i] < 0x20 || (unsigned char)s->head[i] >= 0x7f ? '.' : s->head[i];
    head[i] = '\0';
    record_fail(s->rec, FAIL_INVALID, "HTTP %ld but not an event stream (content-type %s): %s%s%s",
                s->rec->http_status, s->content_type[0] ? s->content_type : "not given",
                i ? "body starts '" : "empty body", head, i ? "'" : "");
}

void stream_feed(struct stream *s, int64_t t_ns, const char *bytes, size_t n)
{
    struct req_record *r = s->rec;
    if (!r->t_first_byte)
        r->t_first_byte = t_ns;
    if (s->head_len < sizeof s->head - 1) {
        size_t k = n < sizeof s->head - 1 - s->head_len ? n : sizeof s->head - 1 - s->head_len;
        memcpy(s->head + s->head_len, bytes, k);
        s->head_len += k;
    }
    if (r->http_status >= 400) {
        buf_append(&s->error_body, bytes, n < ERROR_BODY_MAX - s->error_body.len
                                              ? n : ERROR_BODY_MAX - s->error_body.len);
        return;
    }
    if (s->stopped || r->done_seen)
        return;
    s->now = t_ns;
    /* the events before an error line are the stream's; the line ends it */
    size_t framed = errline_scan(&s->errline, bytes, n);
    int rc = framed ? sse_feed(&s->sse, bytes, framed, on_event, s) : 0;
    r->unknown_lines = (int)(s->sse.unknown_lines < INT32_MAX ? s->sse.unknown_lines : INT32_MAX);
    if (rc == SSE_TOO_LARGE)
        record_fail(r, FAIL_INVALID, "an SSE event exceeds %u bytes", STREAM_MAX_EVENT);
    if (rc != 0 && r->fail != FAIL_NONE)
        s->stopped = true;
    if (!s->stopped && !r->done_seen && s->errline.complete)
        fail_errline(s);
}

void stream_finish(struct stream *s, int64_t t_ns)
{
    struct req_record *r = s->rec;
    if (r->http_status >= 400) {
        record_fail(r, FAIL_HTTP, "HTTP %ld: %s", r->http_status,
                    s->error_body.len ? s->error_body.data : "(empty body)");
        return;
    }
    if (r->fail != FAIL_NONE)
        return;
    if (!r->done_seen && s->errline.capturing) {   /* closed in the middle of the error line */
        s->now = t_ns;
        fail_errline(s);
        return;
    }
    if (r->events == 0 && !r->done_seen) {
        if (s->content_type[0] && !strstr(s->content_type, "event-stream"))
            fail_not_a_stream(s);
        else if (s->head_len == 0)
            record_fail(r, FAIL_TRUNCATED, "HTTP %ld with an empty body (content-type %s): the stream "
                        "ended before any event", r->http_status, s->content_type[0] ? s->content_type : "not given");
        else
            record_fail(r, FAIL_TRUNCATED, "stream ended without a final chunk after 0 events");
        return;
    }
    if (!r->done_seen && !r->finish_reason[0]) {
        record_fail(r, FAIL_TRUNCATED, "stream ended without a final chunk after %d events", r->events);
        return;
    }
    if (!r->done_seen)          /* closed after the final chunk, without [DONE] */
        r->t_end = t_ns;
    /* a reply with no token at all would count as a completed request with
     * no latency: a server fault, not a measurement */
    if (r->n_chunks == 0 && r->unknown_lines > 0)
        record_fail(r, FAIL_INVALID, "no output event could be read: %d lines of no SSE field (e.g. a "
                    "malformed \"data:\" prefix) beside %d events", r->unknown_lines, r->events);
    else if (r->n_chunks == 0 && r->completion_tokens <= 0)
        record_fail(r, FAIL_EMPTY, "stream ended after %d events without any output", r->events);
    /* a cut prompt measured another length than the one planned */
    else if (r->planned_prompt_tokens > 0 && r->prompt_tokens >= 0 &&
             (double)r->prompt_tokens < RECORD_PROMPT_CUT_SHARE * (double)r->planned_prompt_tokens)
        record_fail(r, FAIL_PROMPT_TRUNCATED, "the server cut the prompt: usage.prompt_tokens %ld of %ld planned "
                    "(under %.0f%%)", r->prompt_tokens, r->planned_prompt_tokens, 100 * RECORD_PROMPT_CUT_SHARE);
}

bool stream_reply_over(const struct stream *s)
{
    const struct req_record *r = s->rec;
    return r->fail == FAIL_NONE && r->http_status < 400 && (r->done_seen || r->finish_reason[0]);
}

void stream_free(struct stream *s)
{
    sse_free(&s->sse);
    errline_free(&s->errline);
    buf_free(&s->error_body);
}
