/* stream.h — turns the bytes of one streamed response into a req_record:
 * SSE framing, chunk decoding, and a timestamp for every event, taken when
 * its bytes were handed over by the transport. */
#ifndef ANVIL_OPENAI_STREAM_H
#define ANVIL_OPENAI_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "net/sse.h"
#include "openai/errline.h"
#include "stats/record.h"

/* Largest single SSE event accepted (bytes); larger ones fail the request. */
#define STREAM_MAX_EVENT (8u << 20)

struct stream {
    struct sse_parser sse;
    struct errline errline;     /* llama.cpp's "error:" line, which SSE framing drops */
    struct req_record *rec;     /* not owned */
    struct buf error_body;      /* body of an HTTP error reply, capped */
    int64_t now;                /* arrival time of the bytes being parsed */
    bool now_unknown;           /* set by the caller before stream_feed: now is the clock at a read made
                                   late (net/http.h, http_arrival_unknown), an upper bound; a first
                                   answer so dated is flagged first_output_merged */
    bool now_shared;            /* set by the caller before stream_feed: bytes that arrived apart may
                                   share now (http_arrival_shared); a first answer whose time a later
                                   output shares is then flagged. Default true (stream_init) */
    long last_completion_tokens;/* running usage seen so far (continuous usage) */
    bool stopped;               /* a failure was recorded: ignore further bytes */
    bool keep_text;             /* keep the output text while no usage came (req_record.text), for a
                                   tokenizer to count after the load; false (stream_init's) when the
                                   server has none anvil knows */
    char content_type[80];      /* as the server sent it; "" unknown */
    char head[96];              /* the body's first bytes, to say what a non-stream was */
    size_t head_len;
};

/* Prepares s to fill rec (not owned; must outlive s). */
void stream_init(struct stream *s, struct req_record *rec);

/* Notes the HTTP status once headers are complete at t_ns. A status >= 400
 * makes the body an error message to keep rather than a stream. */
void stream_headers(struct stream *s, int64_t t_ns, long status);

/* Notes the response's Content-Type (copied; "" or NULL = unknown): a 200
 * that carried no event is then reported with it. */
void stream_content_type(struct stream *s, const char *ct);

/* Feeds n body bytes that arrived at t_ns (CLOCK_MONOTONIC ns). Never fails:
 * bad input is recorded as the request's failure. */
void stream_feed(struct stream *s, int64_t t_ns, const char *bytes, size_t n);

/* Ends the stream at t_ns after the transport finished cleanly; decides
 * whether it completed or was truncated, and records HTTP errors. */
void stream_finish(struct stream *s, int64_t t_ns);

/* Whether the reply is over by what arrived: [DONE], or a chunk with a
 * finish_reason (its content is complete; usage may still follow), with no
 * failure recorded. The one rule for a stream's end: whatever ends its
 * transfer afterwards — a timer, a cancel, a transport error, the window —
 * the request is judged completed (stream_finish), never failed or cut. */
bool stream_reply_over(const struct stream *s);

/* Frees the parser state (not the record). */
void stream_free(struct stream *s);

#endif
