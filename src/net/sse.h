/* sse.h — incremental Server-Sent Events framing (WHATWG "event stream
 * interpretation"): bytes in, whole events out.
 *
 * Bytes may arrive split at any offset (inside a line, a "\r\n" pair or a
 * UTF-8 sequence) and many events may arrive in one read. Lines end in "\n",
 * "\r\n" or "\r". Comment lines (":") and fields other than "data" and
 * "event" ("id", "retry", unknown) are ignored. Allocation happens only when
 * an event is larger than any seen before on this parser. */
#ifndef ANVIL_NET_SSE_H
#define ANVIL_NET_SSE_H

#include <stddef.h>
#include <stdbool.h>

#include "core/buf.h"

/* One dispatched event. Pointers are valid only during the callback; data is
 * NUL-terminated (data[data_len] == '\0'). type is "" when no "event:" field
 * was given (the spec's default "message"). */
struct sse_event {
    const char *type;
    const char *data;
    size_t data_len;
};

/* Called once per event. Return 0 to go on, non-zero to stop sse_feed, which
 * then returns that value. */
typedef int (*sse_event_fn)(void *ud, const struct sse_event *ev);

struct sse_parser {
    struct buf line;    /* the current, incomplete line */
    struct buf data;    /* data field lines of the current event, joined by '\n' */
    struct buf type;    /* event field of the current event */
    bool have_data;     /* a data field was seen since the last dispatch */
    bool skip_lf;       /* the previous byte was '\r': a leading '\n' is its pair */
    size_t bom;         /* bytes of a leading UTF-8 byte order mark seen so far (3 = past it) */
    long unknown_lines; /* lines of a field the format does not define (not data, event, id, retry,
                           a comment or blank): ignored as the spec says, counted for the caller */
};

/* Prepares a parser whose events (and lines) may be at most max_event bytes.
 * Allocates nothing until bytes arrive. */
void sse_init(struct sse_parser *p, size_t max_event);

/* Feeds n bytes; calls fn for every event completed by them. Returns 0, the
 * callback's non-zero value, or SSE_TOO_LARGE when an event exceeds
 * max_event (the parser must then be reset or freed). */
int sse_feed(struct sse_parser *p, const char *bytes, size_t n, sse_event_fn fn, void *ud);

/* Forgets any partial line or event, keeping allocations for reuse. */
void sse_reset(struct sse_parser *p);

/* Frees the parser's buffers. */
void sse_free(struct sse_parser *p);

#define SSE_TOO_LARGE (-1)

#endif
