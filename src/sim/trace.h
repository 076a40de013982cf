/* trace.h — the simulator's ground-truth log: one JSON line per finished or
 * aborted generation request, so tests can compare what a client measured
 * with what the server actually did, on the same CLOCK_MONOTONIC. */
#ifndef ANVIL_SIM_TRACE_H
#define ANVIL_SIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"

struct sim_trace;

/* One content-carrying chunk: when the write that carried it began and its
 * tokens (with --tokens-without-chunk also those that waited for it). */
struct sim_trace_chunk {
    int64_t t_ns;      /* clock_now_ns() just before the write that sent it (or evhttp_send_reply) */
    int64_t tokens;    /* output tokens it carries */
};

/* Everything one line says. Times are clock_now_ns() values; 0 means "never"
 * and prints as null. */
struct sim_trace_rec {
    const char *request_id;     /* X-Request-Id header value, or NULL (prints null) */
    const char *path;           /* e.g. "/v1/chat/completions" */
    int status;                 /* HTTP status sent (200, 400, 404, ...) */
    int64_t received_ns;        /* request callback entered */
    int64_t first_token_ns;     /* first content chunk, or 0 */
    int64_t finished_ns;        /* reply ended, or the abort was seen */
    int64_t prompt_tokens;      /* < 0 prints null (request rejected before counting) */
    int64_t completion_tokens;  /* tokens actually sent */
    bool stream;
    bool client_closed;         /* the client went away before the end */
    const char *finish_reason;  /* "stop", "length", "abort", or NULL (prints null) */
    const struct sim_trace_chunk *chunks;
    size_t n_chunks;
    /* Added with the engine model; printed after "chunks". */
    int64_t admitted_ns;        /* first scheduled by the engine (fixed mode: received_ns); 0 → null */
    int64_t cached_tokens;      /* prompt tokens served from the prefix cache */
    int64_t reasoning_tokens;   /* output tokens streamed as reasoning */
    const struct sim_seq_event *events;   /* prefill chunks and preemptions, in order */
    size_t n_events;
    const char *fault;          /* injected fault ("fail", "disconnect", ...), or NULL */
    /* Engine mode: the sequence, for its speculative-decoding counters (its
     * share of /metrics' spec_decode counters), printed after "fault"; NULL
     * prints null. */
    const struct sim_seq *seq;
    /* Script mode (--script): the latest any step was written after its
     * scheduled time (ns), printed last as "late_ns"; < 0 prints null. */
    int64_t late_ns;
    /* When each output token was generated (engine: the end of the step
     * that sampled it; fixed mode: its due time), in order; printed per
     * chunk as "gen_ns", chunks[i] taking the next chunks[i].tokens values.
     * NULL/0 for none (fewer than the tokens only when memory ran out). */
    const int64_t *gen_ns;
    size_t n_gen;
    /* Tokens generated but in no chunk (held for a chunk never sent, or a
     * body never sent): printed as a last chunk with "t_ns":null. */
    int64_t unsent_tokens;
    /* The request's W3C traceparent header (a client joining the server's
     * traces), printed last as "traceparent"; NULL prints null. */
    const char *traceparent;
};

/* Opens (truncates) path for writing. Returns the trace, or NULL with errno
 * set when the file cannot be opened or memory runs out. */
struct sim_trace *sim_trace_open(const char *path);

/* Writes one line for r and flushes it, so a reader sees every finished
 * request while the server runs. Returns 0, or -1 on a write error (the
 * error is remembered and reported again by sim_trace_close). */
int sim_trace_write(struct sim_trace *t, const struct sim_trace_rec *r);

/* Flushes, closes and frees t. Returns 0, or -1 when any write failed.
 * NULL-safe (returns 0). */
int sim_trace_close(struct sim_trace *t);

#endif
