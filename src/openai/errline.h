/* errline.h — llama.cpp's in-stream failure line.
 *
 * llama-server builds of 2024–2025 (tools/server/server.cpp: the stream's
 * error callback calls server_sent_event(sink, "error", error_data)) end a
 * failing 200 stream with an SSE line whose field name is "error", not
 * "data", then "data: [DONE]":
 *
 *   error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}
 *
 * SSE framing ignores fields it does not know (WHATWG), so net/sse.h never
 * reports this line and the request would look like an empty stream. This
 * scanner finds it in the raw bytes: a line that begins with "error:".
 * (Later builds send data: {"error":{...}} instead, which chunk.h decodes.) */
#ifndef ANVIL_OPENAI_ERRLINE_H
#define ANVIL_OPENAI_ERRLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

/* Largest part of the line's value kept (bytes); the rest is dropped. */
#define ERRLINE_MAX 4096

struct errline {
    struct buf value;      /* the value after "error:" (one leading space dropped), capped */
    unsigned matched;      /* bytes of "error:" matched at the current line's start; ERRLINE_NO: cannot match */
    bool capturing;        /* "error:" was seen: the bytes up to the line's end are its value */
    bool complete;         /* the line's end was seen */
    bool leading;          /* capturing, and no value byte seen yet (a first ' ' is dropped) */
};

/* Prepares e; allocates nothing until an error line is found. */
void errline_init(struct errline *e);

/* Scans n bytes that follow the ones scanned before (bytes may be split
 * anywhere). Returns how many of them come before an error line: all n when
 * no error line began, else the offset of the line's start in these bytes
 * (0 when it began in an earlier call). Once an error line has begun, every
 * later byte belongs to it until its end, and e->complete tells when that
 * end was seen. Never fails: a value beyond ERRLINE_MAX is cut. */
size_t errline_scan(struct errline *e, const char *p, size_t n);

/* The value seen so far (NUL-terminated, "" when none). */
const char *errline_value(const struct errline *e);

/* Frees e's buffer. */
void errline_free(struct errline *e);

#endif
