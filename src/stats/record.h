/* record.h — everything measured about one request, as raw timestamps and
 * server-reported counts. Metrics are derived from it (metrics.h), never
 * stored twice. */
#ifndef ANVIL_STATS_RECORD_H
#define ANVIL_STATS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* Why a request failed; FAIL_NONE for a completed one. */
enum fail_kind {
    FAIL_NONE,
    FAIL_CONNECT,      /* connection refused / reset before a response */
    FAIL_DNS,          /* host name did not resolve */
    FAIL_HTTP,         /* HTTP status >= 400 */
    FAIL_STREAM_ERROR, /* an error object inside a 200 stream */
    FAIL_TRUNCATED,    /* the stream ended before its final chunk / [DONE] */
    FAIL_TIMEOUT,      /* connect, total or idle timeout */
    FAIL_INVALID,      /* the server sent something that is not a valid stream */
    FAIL_EMPTY,        /* the stream ended properly but carried no output at all */
    FAIL_PROMPT_TRUNCATED, /* the server cut the prompt: usage.prompt_tokens under
                              RECORD_PROMPT_CUT_SHARE of the planned count */
    FAIL_CANCELLED,    /* stopped by anvil (Ctrl-C / SIGTERM) */
    FAIL_CLIENT,       /* this machine's own limit: descriptors, local ports, memory */
    FAIL_OTHER,        /* any other transport error */
};

/* A completed stream whose usage.prompt_tokens is under this share of its
 * planned prompt tokens had its prompt cut by the server (llama.cpp's
 * context shift keeps between half and all of its context; the same 80%
 * calibration takes for a truncated probe, docs/METHODOLOGY.md): the
 * request fails as "prompt_truncated", as it measured another length. */
#define RECORD_PROMPT_CUT_SHARE 0.8

/* Name of a failure category as written in artifacts ("http", "timeout", ...). */
const char *fail_kind_name(enum fail_kind k);

/* One output-carrying chunk (non-empty content, reasoning or tool call). */
struct out_chunk {
    int64_t t_ns;       /* arrival, CLOCK_MONOTONIC ns */
    int32_t tokens;     /* tokens it carried, from continuous usage; -1 when unknown */
    uint16_t bytes;     /* output bytes it carried (content, reasoning, tool call), up to 65535: a chunk
                           without its own count gets its stream's tokens in proportion (stats/tokens.h) */
    bool content;       /* carried the answer: content or a tool call (else reasoning only) */
};

struct req_record {
    int index;                  /* request_index: order of sending within its phase */
    bool warmup;                /* unmeasured warm-up request */
    long planned_prompt_tokens; /* planned_context_tokens: what the workload asked for */
    long max_tokens;            /* max_tokens sent */

    /* CLOCK_MONOTONIC ns; 0 = did not happen. */
    int64_t t_scheduled;        /* when the load plan wanted it sent (open loop); else = t_start */
    int64_t t_start;            /* handed to the transport */
    int64_t t_headers;          /* response headers complete */
    int64_t t_first_byte;       /* first body bytes */
    int64_t t_first_event;      /* first SSE event of any kind */
    int64_t t_first_output;     /* first non-empty reasoning, content or tool-call delta */
    int64_t t_first_content;    /* first non-empty content or tool-call delta: the answer's start (TTFT) */
    int64_t t_end;              /* end of stream */

    long http_status;
    long prompt_tokens;         /* usage.prompt_tokens; -1 unknown */
    long completion_tokens;     /* usage.completion_tokens; -1 unknown */
    long cached_tokens;         /* usage.prompt_tokens_details.cached_tokens; -1 unknown */
    long text_tokens;           /* the engine's tokenize count of `text`, for a stream without usage; <= 0 unknown */
    struct buf text;            /* owned: the output text received (content, reasoning), as JSON string
                                   contents (escaped), kept only while no usage has arrived, so a stream
                                   cut or ended without usage can be counted by the engine's tokenizer */
    bool text_dropped;          /* the text outgrew RECORD_TEXT_MAX and was let go */
    int content_chunks, reasoning_chunks;
    int tool_call_chunks;       /* chunks carrying tool-call deltas (delta.tool_calls, legacy function_call) */
    int tool_calls;             /* tool calls the reply opened (a delta with an id or a function name) */
    int events;                 /* SSE events received */
    int unknown_lines;          /* lines of no SSE field (e.g. "dat: {...}"): ignored, so events may be lost */
    bool done_seen;             /* [DONE] arrived */
    bool cut;                   /* duration mode: still running when the window closed (incomplete, not failed) */
    bool first_output_merged;   /* the first answer's arrival time is shared with a later output's (one
                                   kernel buffer or one read), or is the clock at a read made late: its
                                   own arrival is unknown, TTFT an upper bound (docs/METHODOLOGY.md,
                                   "Arrival timestamps") */
    char finish_reason[24];
    char trace_id[33];          /* the W3C trace id sent in its traceparent header (32 lowercase hex),
                                   "" = none sent (driver_cfg.traceparent) */

    struct out_chunk *chunks;   /* owned; output-carrying chunks in arrival order */
    size_t n_chunks, cap_chunks;

    enum fail_kind fail;
    char fail_msg[256];
};

/* How far the server's usage.prompt_tokens may stray from the planned
 * prompt length before the two count as different, in tokens: ±1% of
 * planned_prompt_tokens or ±4 tokens, whichever is larger (chat templates
 * add a few tokens; docs/METHODOLOGY.md). Calibration aims within it and the
 * run summary counts the requests outside it. */
long record_prompt_tolerance(long planned_prompt_tokens);

/* Zeroes *r and marks every count unknown. */
void record_init(struct req_record *r, int index, bool warmup, long planned_prompt_tokens,
                 long max_tokens);

/* Appends one output chunk that arrived at t_ns carrying tokens (-1
 * unknown) and bytes of output (saturated at 65535). Returns 0, or -1 when
 * memory runs out. */
int record_add_chunk(struct req_record *r, int64_t t_ns, int32_t tokens, size_t bytes, bool content);

/* Marks the request failed (the first failure wins) with a printf message,
 * its control characters escaped (core/escape.h): the message often quotes
 * what a server sent. */
void record_fail(struct req_record *r, enum fail_kind k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Scrubs secret (e.g. an API key a server echoed in an error body) from the
 * failure message, also where the message was cut inside it (redact.h). */
void record_redact(struct req_record *r, const char *secret);

struct secrets;

/* Scrubs every secret of s (core/redact.h; NULL = none) from the strings
 * a server's reply put in r: the failure message and the finish reason. */
void record_scrub(struct req_record *r, const struct secrets *s);

/* Most bytes of output text a record keeps for counting (RECORD_TEXT_MAX);
 * a longer text is dropped, and the stream falls back to its chunk count. */
#define RECORD_TEXT_MAX (1u << 20)

/* Frees the chunk list and the kept text. */
void record_free(struct req_record *r);

/* A run's records read one at a time, so that what is computed over them
 * (the summary, the steady state, the artifact's rows) need not hold them
 * all: an array in memory (rec_iter_array), or the journal read back line
 * by line (run/). Records come in no promised order. */
struct rec_iter {
    /* The next record, valid until the next call of next or rewind; NULL at
     * the end, or on an error (err then says why). */
    const struct req_record *(*next)(struct rec_iter *it);
    /* Back to the first record. Returns 0, or -1 (err says why). */
    int (*rewind)(struct rec_iter *it);
    void *ud;                       /* the source's own state */
    const struct req_record *recs;  /* rec_iter_array's records, */
    size_t n, at;                   /* their count, and the next one's place */
    char err[512];                  /* why next or rewind failed; "" = no error */
};

/* An iterator over recs[0..n) (borrowed; n may be 0 with recs NULL). */
void rec_iter_array(struct rec_iter *it, const struct req_record *recs, int n);

#endif
