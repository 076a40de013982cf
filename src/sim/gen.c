/* gen.c — generation requests in both modes (see gen.h).
 *
 * Each accepted request gets a struct sim_gen. In fixed-latency mode it has
 * one one-shot timer: token i is due at t0 + ttft + i*itl (absolute, so
 * lateness never accumulates); the timer sends every token already due, up
 * to SIM_EVENTS_PER_WAKEUP, and re-arms. In engine mode the request is a
 * sim_seq in the engine, whose steps hand tokens to sim_gen_on_tokens; one
 * step's tokens for one request go out as one chunk (several with
 * speculative decoding). Either way a stream ends the flavor's way (finish
 * chunk, usage chunk, [DONE]); a non-streamed reply is one body sent when
 * its last token exists. evhttp's close callback tells us when a client
 * leaves first. Faults (faults.h) are planned on arrival. */
#include "sim/gen.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/vec.h"
#include "sim/driver.h"
#include "sim/engine.h"
#include "sim/faults.h"
#include "sim/flavor.h"
#include "sim/kvcache.h"
#include "sim/reply.h"
#include "sim/server.h"
#include "sim/tokens.h"
#include "sim/trace.h"

/* A stream's framed chunks not yet written: at most one wake-up's or one
 * batch of engine steps' events. A buffer grown past KEEP is freed after
 * its write; MAX bounds it (past it, chunks go through evhttp). */
#define SIM_WIRE_KEEP_BYTES (32u * 1024u)
#define SIM_WIRE_MAX_BYTES (64u << 20)

struct sim_gen {
    LIST_ENTRY(sim_gen) link;       /* sim_server.live */
    struct sim_server *srv;
    struct evhttp_request *req;     /* owned by evhttp while attached to a connection */
    struct evhttp_connection *evcon;
    struct event *timer;            /* fixed mode: token schedule; both: slow-headers delay */
    struct sim_request rq;
    struct sim_output out;
    struct sim_stream_fmt fmt;      /* streams only; head/tail owned */
    struct buf wire;                /* streams: HTTP chunks framed, not yet handed to the socket */
    bool chunked;                   /* the reply uses chunked transfer coding (HTTP/1.1) */
    struct sim_seq seq;             /* engine mode */
    uint64_t *block_hashes;         /* engine mode with prefix caching: owned */
    struct sim_fault_plan fault;
    const char *fault_name;         /* the fault that ended or marked this reply, for the trace */
    char id[64];                    /* response id in the flavor's form */
    char *model_json;               /* the model name as replies say it, JSON-quoted (cJSON_free) */
    int64_t created;                /* unix s */
    const char *path;               /* static route string */
    char *request_id;               /* X-Request-Id copy, or NULL */
    char *traceparent;              /* traceparent header copy, or NULL */
    int64_t t0_ns;
    int64_t first_token_ns;         /* 0 until the first content chunk is written */
    bool first_queued;              /* the first content chunk is queued, not yet written */
    int64_t finished_ns;            /* when the reply's end was written; 0 = not (yet) */
    int64_t last_tokens_ns;         /* when its previous batch of tokens was sampled/due (ITL); 0 = none */
    int64_t generated;              /* output tokens generated (engine step ended / due): /metrics counts them */
    int64_t in_chunks;              /* of those, the tokens put in a chunk or body (the rest are held) */
    int64_t reasoning;              /* leading output tokens that are reasoning */
    bool engine;                    /* tokens come from the engine */
    bool started;                   /* headers sent / seq submitted / timer running */
    bool cut;                       /* disconnect fault: waiting for evhttp to notice the close */
    bool in_frontend;               /* engine mode: waiting for the frontend slot (timer armed) */
    bool to_write;                  /* engine mode: chunks queued in this batch of steps */
    struct sim_trace_chunk *chunks; /* trace only: one per content chunk */
    size_t n_chunks, cap_chunks;
    size_t n_unwritten;             /* the last chunks, queued but not written (t_ns 0) */
    int64_t *gen_ns;                /* trace only: when each output token was generated */
    size_t n_gen, cap_gen;
};

static void gen_timer_cb(evutil_socket_t fd, short what, void *arg);

/* ---- bookkeeping ------------------------------------------------------------- */

/* t0 + ttft + i*itl (+ the stall fault's pause from its token on),
 * saturating: absurd flag values must delay forever, not overflow. */
static int64_t due_ns(const struct sim_gen *g, int64_t i)
{
    int64_t step, due;
    if (__builtin_mul_overflow(i, g->srv->cfg.itl_ns, &step) ||
        __builtin_add_overflow(g->t0_ns + g->srv->cfg.ttft_ns, step, &due))
        return INT64_MAX / 2;
    if (g->fault.stall_after > 0 && i >= g->fault.stall_after)
        due += g->fault.stall_ns;
    return due;
}

/* Arms the timer for absolute time at_ns, rounding up to whole µs so that it
 * never fires before the token is due. */
static void arm_at(struct sim_gen *g, int64_t at_ns)
{
    int64_t d = at_ns - clock_now_ns();
    if (d < 0)
        d = 0;
    int64_t us = d / 1000 + (d % 1000 != 0);
    struct timeval tv = {.tv_sec = (time_t)(us / 1000000), .tv_usec = (suseconds_t)(us % 1000000)};
    evtimer_add(g->timer, &tv);
}

static void gen_free(struct sim_gen *g)
{
    LIST_REMOVE(g, link);
    if (g->engine && g->seq.state != SIM_SEQ_NEW && g->seq.state != SIM_SEQ_DONE)
        sim_driver_abort(g->srv->driver, &g->seq);
    sim_seq_release(&g->seq);
    if (g->timer)
        event_free(g->timer);
    sim_request_free(&g->rq);
    sim_stream_fmt_free(&g->fmt);
    buf_free(&g->wire);
    cJSON_free(g->model_json);
    free(g->block_hashes);
    free(g->request_id);
    free(g->traceparent);
    free(g->chunks);
    free(g->gen_ns);
    free(g);
}

/* Remembers a content chunk for the trace and the first token for TTFT.
 * t_ns 0: the chunk is queued, and stamped when it is written
 * (stamp_written). Out of memory only loses the chunk from the trace, never
 * the tokens. */
static void note_chunk(struct sim_gen *g, int64_t t_ns, int64_t tokens)
{
    g->in_chunks += tokens;
    if (!g->first_token_ns && !g->first_queued) {
        g->first_token_ns = t_ns;
        g->first_queued = !t_ns;
        if (t_ns)
            sim_metrics_on_first_token(&g->srv->metrics, t_ns - g->t0_ns);
    }
    if (!g->srv->trace)
        return;
    if (VEC_RESERVE(g->chunks, g->cap_chunks, g->n_chunks + 1, 16) != 0)
        return;
    g->chunks[g->n_chunks++] = (struct sim_trace_chunk){.t_ns = t_ns, .tokens = tokens};
    g->n_unwritten += !t_ns;
}

/* The queued chunks went out in a write that began at t_ns. */
static void stamp_written(struct sim_gen *g, int64_t t_ns)
{
    if (g->first_queued) {
        g->first_queued = false;
        g->first_token_ns = t_ns;
        sim_metrics_on_first_token(&g->srv->metrics, t_ns - g->t0_ns);
    }
    for (size_t i = g->n_chunks - g->n_unwritten; i < g->n_chunks; i++)
        g->chunks[i].t_ns = t_ns;
    g->n_unwritten = 0;
}

/* n more output tokens exist, generated at t_ns (the engine step's end, or
 * their due time in fixed-latency mode): /metrics counts them now, as
 * engines count sampled tokens whether or not a chunk carries them yet, and
 * the trace dates each. Out of memory only loses the dates. */
static void note_generated(struct sim_gen *g, int64_t n, int64_t t_ns)
{
    g->generated += n;
    sim_metrics_on_tokens(&g->srv->metrics, n, g->rq.stream);
    if (!g->srv->trace)
        return;
    if (VEC_RESERVE(g->gen_ns, g->cap_gen, g->n_gen + (size_t)n, 16) != 0)
        return;
    for (int64_t i = 0; i < n; i++)
        g->gen_ns[g->n_gen++] = t_ns;
}

static void trace_gen(struct sim_gen *g, int status, const char *finish, bool client_closed)
{
    if (!g->srv->trace)
        return;
    struct sim_trace_rec r = {
        .request_id = g->request_id, .path = g->path, .status = status,
        .received_ns = g->t0_ns, .first_token_ns = g->first_token_ns,
        .finished_ns = g->finished_ns ? g->finished_ns : clock_now_ns(),
        .prompt_tokens = g->rq.prompt_tokens,
        .completion_tokens = g->generated, .stream = g->rq.stream,
        .client_closed = client_closed, .finish_reason = finish,
        .chunks = g->chunks, .n_chunks = g->n_chunks,
        .admitted_ns = g->engine ? g->seq.admitted_ns : g->started ? g->t0_ns : 0,
        .cached_tokens = g->seq.cached_tokens,
        .reasoning_tokens = g->generated < g->reasoning ? g->generated : g->reasoning,
        .events = g->seq.events, .n_events = g->seq.n_events, .fault = g->fault_name,
        .seq = g->engine ? &g->seq : NULL, .late_ns = -1,
        .gen_ns = g->gen_ns, .n_gen = g->n_gen, .unsent_tokens = g->generated - g->in_chunks,
        .traceparent = g->traceparent,
    };
    sim_trace_write(g->srv->trace, &r);
}

static void count_fault(struct sim_gen *g, enum sim_fault_kind k)
{
    g->srv->metrics.faults[k]++;
    g->fault_name = sim_fault_name(k);
}

/* The reply ended (finish "stop"/"length", "error" for an injected stream
 * error, NULL for an abort): count it, trace it, forget it. */
static void gen_end(struct sim_gen *g, const char *finish, bool client_closed)
{
    int64_t now = clock_now_ns();
    if (g->started)   /* a request still in its slow-headers wait was never counted as running */
        sim_metrics_on_end(&g->srv->metrics, finish, client_closed, g->generated, now - g->t0_ns,
                           g->first_token_ns ? g->first_token_ns - g->t0_ns : 0);
    if (g->started && g->first_token_ns) {
        /* fixed-latency mode has no queue: admitted on arrival */
        int64_t admitted = g->engine && g->seq.admitted_ns ? g->seq.admitted_ns : g->t0_ns;
        sim_metrics_on_phases(&g->srv->metrics, admitted - g->t0_ns, g->first_token_ns - admitted,
                              now - g->first_token_ns);
    }
    trace_gen(g, 200, finish ? finish : "abort", client_closed);
    gen_free(g);
}

/* evhttp's close callback: the client went away (or the server is shutting
 * down, or a disconnect fault cut the connection) before the reply ended. A
 * request evhttp detached from its dying connection is ours to free; an
 * attached one goes with the connection. */
static void gen_close_cb(struct evhttp_connection *evcon, void *arg)
{
    (void)evcon;
    struct sim_gen *g = arg;
    bool client_closed = !g->srv->shutting_down && !g->cut;
    if (evhttp_request_get_connection(g->req) == NULL)
        evhttp_request_free(g->req);
    gen_end(g, NULL, client_closed);
}

/* ---- sending ------------------------------------------------------------------- */

/* Writes what the connection holds to the socket now, not on the loop's
 * next pass, so that the trace's stamp is when the bytes left, also for
 * the 64th of 64 chunks sent in one engine step. What the socket does not
 * take (a client reading slower than the server writes) stays queued for
 * evhttp, in order. Sets *t_ns to when the write began (CLOCK_MONOTONIC):
 * a loopback write returns only after delivering the bytes and waking the
 * reader, tens to hundreds of µs later, so its start is the closer stamp.
 * Returns whether everything queued left. */
static bool flush_now(struct bufferevent *bev, int64_t *t_ns)
{
    *t_ns = clock_now_ns();
    if (!bev)
        return false;
    struct evbuffer *out = bufferevent_get_output(bev);
    evbuffer_unfreeze(out, 1);     /* as the bufferevent's own write does: frozen to all others */
    evbuffer_write(out, bufferevent_getfd(bev));
    evbuffer_freeze(out, 1);
    return evbuffer_get_length(out) == 0;
}

/* Moves the framed chunks of g->wire to the end of the connection's output
 * buffer (evhttp's order: after its headers and earlier chunks). */
static void wire_to_evhttp(struct sim_gen *g, struct bufferevent *bev)
{
    if (g->wire.len && bev)
        evbuffer_add(bufferevent_get_output(bev), g->wire.data, g->wire.len);
    buf_reset(&g->wire);
}

/* An HTTP chunk's size line as evhttp writes it ("%x\r\n": lower-case hex,
 * no leading zeros) into out (24 bytes); returns its length. */
static size_t chunk_head(size_t len, char *out)
{
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[len & 15];
        len >>= 4;
    } while (len);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\r';
    out[n + 1] = '\n';
    return n + 2;
}

/* Frames the scratch buffer as one HTTP chunk (the bytes
 * evhttp_send_reply_chunk would queue: size in hex, CRLF, data, CRLF) at
 * the end of g->wire; nothing is written yet. Building the frames here and
 * writing them with one send() per wake-up (wire_write) spares every event
 * evhttp's printf of the size, its buffer chains and the write-event
 * re-arming on the socket — most of the simulator's user time per event.
 * If the wire cannot grow, what it holds and this chunk go to evhttp. */
static void queue_scratch(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    char head[24];
    size_t hl = g->chunked ? chunk_head(s->scratch.len, head) : 0;
    size_t mark = g->wire.len;
    if (buf_append(&g->wire, head, hl) != 0 ||
        buf_append(&g->wire, s->scratch.data, s->scratch.len) != 0 ||
        (g->chunked && buf_append(&g->wire, "\r\n", 2) != 0)) {
        g->wire.len = mark;
        wire_to_evhttp(g, evhttp_connection_get_bufferevent(g->evcon));
        evbuffer_add(s->out, s->scratch.data, s->scratch.len);
        evhttp_send_reply_chunk(g->req, s->out);
    }
    buf_reset(&s->scratch);
}

/* Writes g->wire and whatever the connection already holds, and sets *t_ns
 * to when the write began (flush_now). With nothing queued before it the
 * wire goes to the socket in one send() of our own; what the socket does
 * not take is queued for evhttp, which writes it when the client reads.
 * Returns whether everything left. */
static bool wire_write(struct sim_gen *g, int64_t *t_ns)
{
    struct bufferevent *bev = evhttp_connection_get_bufferevent(g->evcon);
    if (!bev || evbuffer_get_length(bufferevent_get_output(bev)) > 0) {
        wire_to_evhttp(g, bev);
        return flush_now(bev, t_ns);
    }
    *t_ns = clock_now_ns();
    size_t done = 0;
    while (done < g->wire.len) {
        ssize_t n = send(bufferevent_getfd(bev), g->wire.data + done, g->wire.len - done, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;   /* full (EAGAIN) or broken: evhttp writes the rest, or meets the error */
        done += (size_t)n;
    }
    bool all = done == g->wire.len;
    if (!all) {
        evbuffer_add(bufferevent_get_output(bev), g->wire.data + done, g->wire.len - done);
        bufferevent_enable(bev, EV_WRITE);
    }
    if (g->wire.cap > SIM_WIRE_KEEP_BYTES)
        buf_free(&g->wire);   /* a burst's buffer is not kept for the rest of the stream */
    else
        buf_reset(&g->wire);
    return all;
}

/* Writes the chunks queued so far in one go and stamps them; chunks a slow
 * client's socket did not take yet wait for the next write that empties
 * the queue (or the end) for their stamp. */
static void write_queued(struct sim_gen *g)
{
    int64_t t;
    if (wire_write(g, &t))
        stamp_written(g, t);
}

/* Ends the chunked reply with the last chunks still queued, and writes all
 * in one go, so the client gets its last events and the end of the body
 * together. Stamps them and g->finished_ns with the write's start (for a
 * slow client, when the end was handed over). evhttp finishes the request
 * from its write callback, which a write of our own does not run: it is
 * run (deferred) here. Precondition: the reply is chunked and something is
 * queued — otherwise evhttp_send_reply_end may finish (and free) the
 * connection at once, before bev is used. */
static void end_reply(struct sim_gen *g)
{
    struct bufferevent *bev = evhttp_connection_get_bufferevent(g->evcon);
    evhttp_connection_set_closecb(g->evcon, NULL, NULL);
    wire_to_evhttp(g, bev);
    evhttp_send_reply_end(g->req);
    flush_now(bev, &g->finished_ns);
    stamp_written(g, g->finished_ns);
    if (bev)
        bufferevent_trigger(bev, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
}

/* The text of tokens [from, to) that are reasoning (< g->reasoning) or
 * content, in the server's text buffers; *rp and *cp point at each, or are
 * NULL when the range has none of that kind. A chunk holding tokens that
 * waited without a chunk of their own can be long: the buffers grow (out of
 * memory only shortens the text). */
static void split_text(const struct sim_gen *g, int64_t from, int64_t to, const char **rp,
                       const char **cp)
{
    struct buf *r = &g->srv->text[0], *c = &g->srv->text[1];
    buf_reset(r);
    buf_reset(c);
    *rp = *cp = NULL;
    for (int64_t i = from; i < to; i++) {
        const char *w = sim_token_text(&g->out, i);
        bool think = i < g->reasoning;
        struct buf *dst = think ? r : c;
        buf_append(dst, w, strlen(w));
        *(think ? rp : cp) = dst->data ? dst->data : "";
    }
}

/* llama.cpp's timings from the server's own clock. */
static struct sim_timings timings_now(const struct sim_gen *g)
{
    int64_t now = clock_now_ns(), first = g->first_token_ns ? g->first_token_ns : now;
    return (struct sim_timings){
        .prompt_n = g->rq.prompt_tokens - g->seq.cached_tokens,
        .prompt_ms = (double)(first - g->t0_ns) / 1e6,
        .predicted_n = g->generated, .predicted_ms = (double)(now - first) / 1e6,
    };
}

/* After the last token: the flavor's finish chunk, usage chunk, [DONE], end
 * of the chunked reply. */
static void stream_end(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    const char *finish = sim_finish_reason(&g->out);   /* the engine's: a tool call ends on "stop" */
    buf_reset(&s->scratch);
    if (sim_fmt_finish_separate(&g->fmt)) {
        struct sim_timings t = timings_now(g);
        sim_sse_finish(&s->scratch, &g->fmt, sim_fmt_finish_reason(&g->fmt, finish), g->generated, &t);
    }
    if (sim_fmt_has_usage_chunk(&g->fmt))
        sim_sse_usage(&s->scratch, &g->fmt, g->generated);
    sim_sse_done(&s->scratch);
    queue_scratch(g);
    end_reply(g);
    gen_end(g, finish, false);
}

/* Ends the stream with an error event in the flavor's shape, then [DONE]
 * (llama-server writes [DONE] after its error line too). */
static void stream_fail(struct sim_gen *g, int status, const char *type, const char *param,
                        const char *message)
{
    struct sim_server *s = g->srv;
    buf_reset(&s->scratch);
    sim_sse_error(&s->scratch, &g->fmt, status,
                  sim_flavor_error_type((enum sim_flavor)s->cfg.flavor, status, type, param), message);
    sim_sse_done(&s->scratch);
    queue_scratch(g);
    end_reply(g);
    gen_end(g, "error", false);
}

/* Injected: an error event inside the 200 stream, then [DONE]. */
static void stream_error(struct sim_gen *g)
{
    count_fault(g, SIM_FAULT_STREAM_ERROR);
    stream_fail(g, 500, "InternalServerError", NULL, "Internal server error");
}

/* Injected: the server drops the connection mid-reply (no terminating
 * chunk). shutdown() makes evhttp see EOF on its next read, which ends the
 * request through gen_close_cb; until then the request only waits. */
static void cut_connection(struct sim_gen *g)
{
    count_fault(g, SIM_FAULT_DISCONNECT);
    g->cut = true;
    if (g->timer)
        evtimer_del(g->timer);
    if (g->engine && g->seq.state != SIM_SEQ_DONE && g->seq.state != SIM_SEQ_NEW)
        sim_driver_abort(g->srv->driver, &g->seq);
    struct bufferevent *bev = evhttp_connection_get_bufferevent(g->evcon);
    if (bev)
        shutdown(bufferevent_getfd(bev), SHUT_RDWR);
}

/* n more output tokens of a stream were generated at gen_ns. Queues, as
 * one SSE event, every token generated and not yet sent up to the last one
 * that has a chunk of its own (--tokens-without-chunk: the tokens after it
 * wait for a later chunk; the reply's last token always sends), then ends
 * the stream or injects a fault when it is time (writing what is queued).
 * Returns false when g is gone (ended) or cut; otherwise the event is
 * written by the caller's write_queued, once per wake-up (fixed latency) or
 * batch of engine steps (sim_gen_flush). */
static bool stream_send(struct sim_gen *g, int64_t n, int64_t gen_ns)
{
    struct sim_server *s = g->srv;
    int64_t from = g->in_chunks;
    note_generated(g, n, gen_ns);
    bool last = g->generated >= g->out.completion_tokens;
    int64_t to = sim_chunk_end(&g->out, s->cfg.tokens_without_chunk, from, g->generated);
    if (to > from) {
        const char *finish = last && !sim_fmt_finish_separate(&g->fmt) ? sim_finish_reason(&g->out) : NULL;
        const char *rp, *cp;
        split_text(g, from, to, &rp, &cp);
        if (g->engine && g->fmt.cached_tokens >= 0)
            g->fmt.cached_tokens = g->seq.cached_tokens;
        buf_reset(&s->scratch);
        if (g->fmt.tool_name && cp) {
            /* a tool-call reply: its content tokens are the call's arguments;
             * the chunk holding the first of them opens the call */
            bool opens = from <= g->reasoning;
            if (rp)
                sim_sse_delta(&s->scratch, &g->fmt, rp, NULL, g->generated, NULL);
            sim_sse_tool_delta(&s->scratch, &g->fmt, cp, opens, g->generated, finish);
        } else {
            sim_sse_delta(&s->scratch, &g->fmt, rp, cp, g->generated, finish);
        }
        queue_scratch(g);
        note_chunk(g, 0, to - from);
    }
    if (last) {
        stream_end(g);
        return false;
    }
    if (g->fault.disconnect_after >= 0 && g->generated >= g->fault.disconnect_after) {
        write_queued(g);
        cut_connection(g);
        return false;
    }
    if (g->fault.error_after >= 0 && g->generated >= g->fault.error_after) {
        stream_error(g);
        return false;
    }
    return true;
}

/* Non-streamed: the whole reply as one body (or the fault in its place). */
static void body_send(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    /* fixed-latency mode: every token is due now, each at its own time */
    for (int64_t i = g->generated; i < g->out.completion_tokens; i++)
        note_generated(g, 1, due_ns(g, i));
    if (g->fault.disconnect_after >= 0) {
        cut_connection(g);
        return;
    }
    if (g->fault.error_after >= 0) {
        count_fault(g, SIM_FAULT_STREAM_ERROR);
        struct sim_error err = {.status = 500, .type = "InternalServerError"};
        snprintf(err.message, sizeof err.message, "Internal server error");
        evhttp_connection_set_closecb(g->evcon, NULL, NULL);
        sim_server_reply_error(s, g->req, &err);
        gen_end(g, "error", false);
        return;
    }
    int64_t c = g->out.completion_tokens;
    int64_t think = g->reasoning < c ? g->reasoning : c;
    struct buf text;
    buf_init(&text, 1u << 28);
    for (int64_t i = 0; i < c; i++) {
        const char *w = sim_token_text(&g->out, i);
        buf_append(&text, w, strlen(w) + (i + 1 == think));   /* a NUL splits reasoning from content */
    }
    size_t rlen = think > 0 && text.data ? strlen(text.data) : 0;
    struct sim_timings t = timings_now(g);
    struct sim_body b = {
        .ep = g->rq.ep, .flavor = s->cfg.flavor, .id = g->id, .created = g->created,
        .model = g->rq.model_name[0] && s->cfg.flavor == SIM_FLAVOR_SGLANG ? g->rq.model_name : s->cfg.model,
        .reasoning = think > 0 ? (text.data ? text.data : "") : NULL,
        .content = !text.data ? "" : think > 0 ? (think < c ? text.data + rlen + 1 : "") : text.data,
        .finish = sim_finish_reason(&g->out), .prompt_tokens = g->rq.prompt_tokens,
        .completion_tokens = c, .cached_tokens = g->fmt.cached_tokens, .reasoning_tokens = think,
        .timings = &t,
    };
    char *body = sim_json_completion(&b);
    buf_free(&text);
    int64_t now = clock_now_ns();
    evhttp_connection_set_closecb(g->evcon, NULL, NULL);
    if (body)
        sim_server_reply_json(s, g->req, 200, body, strlen(body));
    else
        evhttp_send_error(g->req, 500, "out of memory");
    cJSON_free(body);
    note_chunk(g, now, c);
    gen_end(g, sim_finish_reason(&g->out), false);
}

/* ---- fixed-latency mode ----------------------------------------------------------- */

/* A slow reader: its connection still holds this many unsent bytes. */
static size_t queued_bytes(const struct sim_gen *g)
{
    struct bufferevent *bev = evhttp_connection_get_bufferevent(g->evcon);
    return bev ? evbuffer_get_length(bufferevent_get_output(bev)) : 0;
}

static void stream_tick(struct sim_gen *g)
{
    int64_t now = clock_now_ns();
    if (queued_bytes(g) > SIM_MAX_QUEUED_BYTES) {
        arm_at(g, now + 1000000);   /* let the client catch up; retry in 1 ms */
        return;
    }
    for (int n = 0; n < SIM_EVENTS_PER_WAKEUP && due_ns(g, g->generated) <= now; n++) {
        if (g->generated > 0)    /* tokens leave on their schedule: the gap between two is theirs */
            sim_metrics_on_itl(&g->srv->metrics, due_ns(g, g->generated) - due_ns(g, g->generated - 1), 1);
        if (!stream_send(g, 1, due_ns(g, g->generated)))
            return;
    }
    write_queued(g);
    arm_at(g, due_ns(g, g->generated));
}

/* Non-streamed: the body once the last token is due. */
static void body_tick(struct sim_gen *g)
{
    int64_t last_due = due_ns(g, g->out.completion_tokens - 1);
    if (clock_now_ns() < last_due) {
        arm_at(g, last_due);
        return;
    }
    body_send(g);
}

/* ---- engine mode -------------------------------------------------------------------- */

void sim_gen_on_tokens(void *ctx, struct sim_seq *seq, int64_t first, int64_t n, bool done,
                       int64_t now_ns)
{
    (void)ctx;
    (void)first;
    struct sim_gen *g = seq->user;
    if (g->last_tokens_ns)
        sim_metrics_on_itl(&g->srv->metrics, now_ns - g->last_tokens_ns, n);
    g->last_tokens_ns = now_ns;
    if (g->rq.stream) {
        if (stream_send(g, n, now_ns))      /* false: g is gone */
            g->to_write = true;
        return;
    }
    note_generated(g, n, now_ns);
    if (done)
        body_send(g);
}

void sim_gen_flush(void *ctx)
{
    struct sim_server *s = ctx;
    for (struct sim_gen *g = LIST_FIRST(&s->live); g; g = LIST_NEXT(g, link))
        if (g->to_write) {
            g->to_write = false;
            write_queued(g);
        }
}

/* Names the full prompt blocks for the prefix cache, from the prompt's
 * token ids (then no longer needed). */
static void hash_prompt_blocks(struct sim_gen *g)
{
    int64_t bs = g->srv->cfg.engine.block_size;
    if (!g->rq.token_ids || g->rq.prompt_tokens < bs)
        return;
    g->block_hashes = malloc((size_t)(g->rq.prompt_tokens / bs) * sizeof *g->block_hashes);
    if (g->block_hashes)
        g->seq.n_block_hashes = sim_kv_block_hashes(g->rq.token_ids, g->rq.prompt_tokens, bs,
                                                    g->block_hashes);
    g->seq.block_hashes = g->block_hashes;
    free(g->rq.token_ids);
    g->rq.token_ids = NULL;
}

static void engine_enter(struct sim_gen *g);

/* Hands the request to the engine once the frontend has processed it. */
static void engine_submit(struct sim_gen *g)
{
    int64_t now = clock_now_ns();
    int64_t at = sim_driver_frontend_slot(g->srv->driver, now);
    if (at > now) {
        g->in_frontend = true;
        arm_at(g, at);
        return;
    }
    engine_enter(g);
}

static void engine_enter(struct sim_gen *g)
{
    g->in_frontend = false;
    struct sim_seq *q = &g->seq;
    q->prompt_tokens = g->rq.prompt_tokens;
    q->output_tokens = g->out.completion_tokens;
    q->key = g->out.key;
    q->user = g;
    if (g->fault.stall_after > 0) {
        q->stall_after = g->fault.stall_after;
        q->stall_ns = g->fault.stall_ns;
    }
    sim_driver_submit(g->srv->driver, q);
}

/* ---- starting ------------------------------------------------------------------------- */

static void make_id(struct sim_server *s, enum sim_endpoint ep, char *out, size_t cap)
{
    uint64_t r = sim_mix64(s->id_salt + s->id_next++);
    sim_flavor_make_id((enum sim_flavor)s->cfg.flavor, ep, r, out, cap);
}

static const char *status_type(int status)
{
    return status == 429 ? "RateLimitError" : status == 503 ? "ServiceUnavailableError"
                                                             : "InternalServerError";
}

/* A rejected request still gets a trace line: it is a request a client sent. */
static void reject(struct sim_server *s, struct evhttp_request *req, const char *path,
                   int64_t t0, const struct sim_error *err, const char *fault)
{
    if (err->status < 500)
        s->metrics.rejected++;
    if (s->trace) {
        const char *rid = evhttp_find_header(evhttp_request_get_input_headers(req), "X-Request-Id");
        const char *tp = evhttp_find_header(evhttp_request_get_input_headers(req), "traceparent");
        struct sim_trace_rec r = {.request_id = rid, .path = path, .status = err->status,
                                  .received_ns = t0, .finished_ns = clock_now_ns(),
                                  .prompt_tokens = -1, .fault = fault, .late_ns = -1, .traceparent = tp};
        sim_trace_write(s->trace, &r);
    }
    sim_server_reply_error(s, req, err);
}

/* Injected: answer fail_status (with Retry-After for 429/503) instead of serving. */
static void fail_fault(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    struct sim_error err = {.status = g->fault.fail_status, .type = status_type(g->fault.fail_status)};
    snprintf(err.message, sizeof err.message, "%s", err.status == 429 ? "Too many requests"
             : err.status == 503 ? "The server is overloaded, retry later" : "Internal server error");
    if (err.status == 429 || err.status == 503)
        evhttp_add_header(evhttp_request_get_output_headers(g->req), "Retry-After", "1");
    s->metrics.faults[SIM_FAULT_FAIL]++;
    evhttp_connection_set_closecb(g->evcon, NULL, NULL);
    reject(s, g->req, g->path, g->t0_ns, &err, sim_fault_name(SIM_FAULT_FAIL));
    gen_free(g);
}

/* Starts the SSE reply: headers and, where the flavor has one, the role chunk. */
static int stream_start(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    struct evkeyvalq *h = evhttp_request_get_output_headers(g->req);
    evhttp_add_header(h, "Content-Type", "text/event-stream; charset=utf-8");
    evhttp_add_header(h, "Cache-Control", "no-cache");
    evhttp_send_reply_start(g->req, 200, "OK");
    /* evhttp chose chunked coding (HTTP/1.1) or a body ended by the close */
    g->chunked = evhttp_find_header(h, "Transfer-Encoding") != NULL;
    if (sim_fmt_has_role_chunk(&g->fmt)) {
        buf_reset(&s->scratch);
        sim_sse_role(&s->scratch, &g->fmt);
        queue_scratch(g);
        write_queued(g);
    }
    return 0;
}

/* llama.cpp: a stream whose prompt and max_tokens exceed the context. The
 * slot finds it after the 200 stream began: no token, an error line, [DONE]. */
static void context_error(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    char msg[256];
    sim_flavor_context_message((enum sim_flavor)s->cfg.flavor, s->cfg.max_model_len, g->rq.prompt_tokens,
                               g->rq.max_tokens, msg, sizeof msg);
    sim_metrics_on_start(&s->metrics, 0, true);   /* no prompt token was processed */
    stream_start(g);
    stream_fail(g, 400, "BadRequestError", "input_tokens", msg);
}

/* Serves the request: right away, or after the slow-headers delay. */
static void gen_begin(struct sim_gen *g)
{
    g->started = true;
    if (g->fault.fail_status) {
        fail_fault(g);
        return;
    }
    struct sim_server *s = g->srv;
    if (g->rq.over_context) {
        context_error(g);
        return;
    }
    sim_metrics_on_start(&s->metrics, g->rq.prompt_tokens, g->rq.stream);
    if (g->rq.stream)
        stream_start(g);
    if (g->fault.stall_after > 0)
        count_fault(g, SIM_FAULT_STALL);
    if (g->rq.stream && g->fault.disconnect_after == 0) {
        cut_connection(g);
        return;
    }
    if (g->rq.stream && g->fault.error_after == 0) {
        stream_error(g);
        return;
    }
    if (g->engine)
        engine_submit(g);
    else
        arm_at(g, g->rq.stream ? due_ns(g, 0) : due_ns(g, g->out.completion_tokens - 1));
}

static void gen_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct sim_gen *g = arg;
    if (!g->started)
        gen_begin(g);
    else if (g->in_frontend)
        engine_enter(g);
    else if (g->rq.stream)
        stream_tick(g);
    else
        body_tick(g);
}

/* The per-stream formatting state; the model name is the served one, or
 * for SGLang whatever the request named (it echoes it). */
static int fmt_init(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    bool echo = s->cfg.flavor == SIM_FLAVOR_SGLANG && g->rq.model_name[0];
    g->model_json = sim_json_quote(echo ? g->rq.model_name : s->cfg.model);
    g->fmt = (struct sim_stream_fmt){
        .ep = g->rq.ep, .flavor = s->cfg.flavor, .id = g->id, .model_json = g->model_json,
        .created = g->created, .prompt_tokens = g->rq.prompt_tokens,
        .cached_tokens = g->engine && s->cfg.engine.enable_prefix_caching ? 0 : -1,
        .reasoning_tokens = g->reasoning < g->out.completion_tokens ? g->reasoning : g->out.completion_tokens,
        .include_usage = g->rq.include_usage, .continuous_usage = g->rq.continuous_usage,
        .tool_name = g->rq.tool_name[0] ? g->rq.tool_name : NULL,
    };
    if (!g->model_json)
        return -1;
    return g->rq.stream ? sim_stream_fmt_init(&g->fmt) : 0;
}

/* Takes ownership of *rq (freed here on failure). Returns NULL when out of memory. */
static struct sim_gen *gen_new(struct sim_server *s, struct evhttp_request *req,
                               struct sim_request *rq, const char *path, int64_t t0)
{
    struct sim_gen *g = calloc(1, sizeof *g);
    if (!g) {
        sim_request_free(rq);
        return NULL;
    }
    g->srv = s;
    g->req = req;
    g->evcon = evhttp_request_get_connection(req);
    g->rq = *rq;
    g->path = path;
    g->t0_ns = t0;
    g->engine = s->driver != NULL;
    g->created = (int64_t)time(NULL);
    buf_init(&g->wire, SIM_WIRE_MAX_BYTES);
    make_id(s, rq->ep, g->id, sizeof g->id);
    uint64_t key = sim_request_key(s->cfg.seed, rq->prompt_hash, sim_request_seed(rq));
    g->out = sim_plan_output(key, rq->max_tokens, rq->ignore_eos);
    g->reasoning = rq->ep == SIM_EP_CHAT ? s->cfg.reasoning_tokens : 0;
    const char *rid = evhttp_find_header(evhttp_request_get_input_headers(req), "X-Request-Id");
    g->request_id = rid ? strdup(rid) : NULL;
    const char *tp = evhttp_find_header(evhttp_request_get_input_headers(req), "traceparent");
    g->traceparent = tp ? strdup(tp) : NULL;
    g->fault = sim_faults_plan(&s->cfg.faults, sim_faults_key(s->cfg.seed, rid, s->arrivals++),
                               g->out.completion_tokens);
    g->timer = evtimer_new(s->base, gen_timer_cb, g);
    LIST_INSERT_HEAD(&s->live, g, link);    /* from here gen_free can undo everything */
    if (g->engine && s->cfg.engine.enable_prefix_caching)
        hash_prompt_blocks(g);
    if (!g->timer || (rid && !g->request_id) || (tp && !g->traceparent) || fmt_init(g) != 0) {
        gen_free(g);
        return NULL;
    }
    return g;
}

void sim_gen_start(struct sim_server *s, struct evhttp_request *req, enum sim_endpoint ep,
                   const char *path, int64_t t0_ns)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    const char *body = len ? (const char *)evbuffer_pullup(in, -1) : "";
    struct sim_limits lim = {
        .model = s->cfg.model, .max_model_len = s->cfg.max_model_len, .flavor = s->cfg.flavor,
        .any_model = s->cfg.flavor == SIM_FLAVOR_SGLANG || s->cfg.flavor == SIM_FLAVOR_LLAMACPP,
        .want_ids = s->driver && s->cfg.engine.enable_prefix_caching,
        .tokenizer = s->cfg.tokenizer, .context_shift = s->cfg.context_shift,
    };
    struct sim_request rq;
    struct sim_error err;
    if (sim_request_parse(body, len, ep, &lim, &rq, &err) != 0) {
        reject(s, req, path, t0_ns, &err, NULL);
        return;
    }
    struct sim_gen *g = gen_new(s, req, &rq, path, t0_ns);
    if (!g) {
        evhttp_send_error(req, 500, "out of memory");
        return;
    }
    evhttp_connection_set_closecb(g->evcon, gen_close_cb, g);
    if (g->fault.slow_headers_ns > 0) {
        s->metrics.faults[SIM_FAULT_SLOW_HEADERS]++;
        g->fault_name = sim_fault_name(SIM_FAULT_SLOW_HEADERS);
        arm_at(g, t0_ns + g->fault.slow_headers_ns);
    } else {
        gen_begin(g);
    }
}

void sim_gen_discard_all(struct sim_server *s)
{
    while (!LIST_EMPTY(&s->live)) {
        struct sim_gen *g = LIST_FIRST(&s->live);
        if (g->started)
            sim_metrics_on_end(&s->metrics, NULL, 0, g->generated, clock_now_ns() - g->t0_ns, 0);
        trace_gen(g, 200, "abort", false);
        gen_free(g);
    }
}
