/* chunk.h — what one OpenAI-compatible stream event says, as far as timing
 * and token counting need: is there visible output, reasoning, a finish, a
 * usage report, an error. */
#ifndef ANVIL_OPENAI_CHUNK_H
#define ANVIL_OPENAI_CHUNK_H

#include <stddef.h>
#include <stdbool.h>

#include "core/buf.h"

enum chunk_kind {
    CHUNK_DATA,     /* a JSON chunk (possibly without output: role-only, usage-only, ...) */
    CHUNK_DONE,     /* the "[DONE]" sentinel */
    CHUNK_ERROR,    /* an error object inside the stream ({"error":...} or {"object":"error"}) */
    CHUNK_INVALID,  /* not JSON, or JSON that is not an object */
};

struct chunk {
    enum chunk_kind kind;
    size_t content_bytes;   /* bytes of choices[0].delta.content (chat) or choices[0].text (completions) */
    size_t reasoning_bytes; /* bytes of delta.reasoning, else delta.reasoning_content: one field, never the sum: some servers send both with the same text */
    size_t tool_call_bytes; /* bytes of delta.tool_calls[*] id + function.name + function.arguments, plus the legacy
                               delta.function_call name + arguments: a tool call is output like content */
    int tool_calls_started; /* tool-call deltas that open a call: tool_calls elements with a non-empty id or
                               function.name, and a function_call with a non-empty name */
    char finish_reason[24]; /* choices[0].finish_reason, "" when absent or null */
    long prompt_tokens;     /* usage.prompt_tokens; -1 when usage is absent or null */
    long completion_tokens; /* usage.completion_tokens; -1 when absent */
    long cached_tokens;     /* usage.prompt_tokens_details.cached_tokens; -1 when absent */
    char error[256];        /* CHUNK_ERROR: the message (truncated); CHUNK_INVALID: why */
    /* Where the fast path (scan.h) found the output text inside the event, as
     * JSON string contents (escaped, without quotes): [0] the content (or
     * text), [1] the reasoning field counted; NULL/0 when absent. Pointers
     * into the decoded data, valid while it is. text_spanned false: the
     * event went through cJSON, and chunk_text_append reads it again. */
    bool text_spanned;
    const char *text_raw[2];
    size_t text_raw_len[2];
};

/* Writes an error object as the server worded it into out (cap bytes):
 * "message (type, code N)", with type and code when the object has them.
 * data (len bytes, need not be NUL-terminated) is JSON: {"error": {...}}, a
 * bare {message, type, code} object (llama.cpp's "error:" stream line), or
 * TGI's {"error": "...", "error_type": "..."}; anything else is copied as
 * text. CHUNK_ERROR's out->error is made the same way. */
void chunk_error_text(const char *data, size_t len, char *out, size_t cap);

/* A usage count as read from JSON: a number in [0, 1e15) truncated to a
 * whole count, else -1 (absent). Shared by both decoding paths. */
long chunk_count_from_double(double v);

/* The reference decoder: the same as chunk_decode, always through cJSON.
 * Exposed for differential tests of the fast path. */
void chunk_decode_json(const char *data, size_t len, struct chunk *out);

/* Decodes one SSE data payload (data need not be NUL-terminated; len bytes).
 * Fills every field of *out. Never fails: malformed input yields
 * CHUNK_INVALID with a reason in out->error. Well-formed chunks take the
 * allocation-free scanner (scan.h); anything else goes through cJSON. */
void chunk_decode(const char *data, size_t len, struct chunk *out);

/* Appends the output text of one event (data, len bytes, decoded into *c by
 * chunk_decode) to out as JSON string contents (escaped, no quotes): its
 * content (or text), then the reasoning field the byte counts use. Tool-call
 * fragments are not text and are left out. Concatenated pieces stay one
 * valid JSON string's contents, so the engine's tokenizer can be sent the
 * whole reply without decoding it. Returns 0, or -1 when out is full (its
 * cap) or memory runs out. */
int chunk_text_append(const char *data, size_t len, const struct chunk *c, struct buf *out);

#endif
