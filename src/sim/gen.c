/* gen.c — generation requests on timers (see gen.h).
 *
 * Each accepted request gets a struct sim_gen and one one-shot timer. Token i
 * is due at t0 + ttft + i*itl (absolute, so lateness never accumulates); the
 * timer callback sends every token already due, up to SIM_EVENTS_PER_WAKEUP,
 * and re-arms for the next one. A stream ends with finish_reason on its last
 * content chunk, an optional usage chunk and [DONE]; a non-streamed reply is
 * one body sent when its last token is due. evhttp's close callback tells us
 * when a client leaves first. */
#include "sim/gen.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "sim/reply.h"
#include "sim/server.h"
#include "sim/tokens.h"
#include "sim/trace.h"

struct sim_gen {
    struct sim_gen *prev, *next;    /* sim_server.live */
    struct sim_server *srv;
    struct evhttp_request *req;     /* owned by evhttp while attached to a connection */
    struct evhttp_connection *evcon;
    struct event *timer;
    struct sim_request rq;
    struct sim_output out;
    struct sim_stream_fmt fmt;      /* streams only; fmt.head owned */
    char id[48];                    /* "chatcmpl-<16 hex>" or "cmpl-<16 hex>" */
    int64_t created;                /* unix s */
    const char *path;               /* static route string */
    char *request_id;               /* X-Request-Id copy, or NULL */
    int64_t t0_ns;
    int64_t first_token_ns;         /* 0 until the first content chunk */
    int64_t sent;                   /* tokens handed to evhttp */
    struct sim_trace_chunk *chunks; /* trace only: one per content chunk */
    size_t n_chunks, cap_chunks;
};

static void gen_timer_cb(evutil_socket_t fd, short what, void *arg);

/* t0 + ttft + i*itl, saturating: absurd flag values (a day of ITL times a
 * huge context) must delay forever, not overflow. */
static int64_t due_ns(const struct sim_gen *g, int64_t i)
{
    int64_t step, due;
    if (__builtin_mul_overflow(i, g->srv->cfg.itl_ns, &step) ||
        __builtin_add_overflow(g->t0_ns + g->srv->cfg.ttft_ns, step, &due))
        return INT64_MAX / 2;
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

static void live_link(struct sim_server *s, struct sim_gen *g)
{
    g->next = s->live;
    if (s->live)
        s->live->prev = g;
    s->live = g;
}

static void live_unlink(struct sim_server *s, struct sim_gen *g)
{
    if (g->prev)
        g->prev->next = g->next;
    else
        s->live = g->next;
    if (g->next)
        g->next->prev = g->prev;
}

static void gen_free(struct sim_gen *g)
{
    live_unlink(g->srv, g);
    if (g->timer)
        event_free(g->timer);
    sim_request_free(&g->rq);
    free((char *)g->fmt.head);
    free(g->request_id);
    free(g->chunks);
    free(g);
}

/* Remembers a content chunk for the trace. Out of memory only loses the
 * chunk from the trace line, never the token from the reply. */
static void note_chunk(struct sim_gen *g, int64_t t_ns, int64_t tokens)
{
    if (!g->first_token_ns)
        g->first_token_ns = t_ns;
    if (!g->srv->trace)
        return;
    if (g->n_chunks == g->cap_chunks) {
        size_t cap = g->cap_chunks ? g->cap_chunks * 2 : 16;
        struct sim_trace_chunk *p = realloc(g->chunks, cap * sizeof *p);
        if (!p)
            return;
        g->chunks = p;
        g->cap_chunks = cap;
    }
    g->chunks[g->n_chunks++] = (struct sim_trace_chunk){.t_ns = t_ns, .tokens = tokens};
}

static void trace_gen(struct sim_gen *g, int status, const char *finish, bool client_closed)
{
    if (!g->srv->trace)
        return;
    struct sim_trace_rec r = {
        .request_id = g->request_id, .path = g->path, .status = status,
        .received_ns = g->t0_ns, .first_token_ns = g->first_token_ns,
        .finished_ns = clock_now_ns(), .prompt_tokens = g->rq.prompt_tokens,
        .completion_tokens = g->sent, .stream = g->rq.stream,
        .client_closed = client_closed, .finish_reason = finish,
        .chunks = g->chunks, .n_chunks = g->n_chunks,
    };
    sim_trace_write(g->srv->trace, &r);
}

/* The reply ended normally: count it, trace it, forget it. */
static void gen_done(struct sim_gen *g)
{
    const char *finish = sim_finish_reason(&g->out);
    sim_metrics_on_end(&g->srv->metrics, finish, 0);
    trace_gen(g, 200, finish, false);
    gen_free(g);
}

/* evhttp's close callback: the client went away (or the server is shutting
 * down) before the reply ended. A request evhttp detached from its dying
 * connection is ours to free; an attached one goes with the connection. */
static void gen_close_cb(struct evhttp_connection *evcon, void *arg)
{
    (void)evcon;
    struct sim_gen *g = arg;
    bool client_closed = !g->srv->shutting_down;
    if (evhttp_request_get_connection(g->req) == NULL)
        evhttp_request_free(g->req);
    sim_metrics_on_end(&g->srv->metrics, NULL, client_closed);
    trace_gen(g, 200, "abort", client_closed);
    gen_free(g);
}

/* Hands the scratch buffer to evhttp as one HTTP chunk. */
static void send_scratch(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    evbuffer_add(s->out, s->scratch.data, s->scratch.len);
    evhttp_send_reply_chunk(g->req, s->out);
    buf_reset(&s->scratch);
}

/* Sends token g->sent as its own SSE event, finish_reason on the last. */
static void send_token(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    bool last = g->sent + 1 == g->out.completion_tokens;
    const char *finish = last ? sim_finish_reason(&g->out) : NULL;
    buf_reset(&s->scratch);
    sim_sse_token(&s->scratch, &g->fmt, sim_token_text(&g->out, g->sent), g->sent + 1, finish);
    int64_t t = clock_now_ns();
    send_scratch(g);
    note_chunk(g, t, 1);
    g->sent++;
    sim_metrics_on_tokens(&s->metrics, 1);
}

/* After the last token: usage chunk, [DONE], end of the chunked reply. */
static void stream_end(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    buf_reset(&s->scratch);
    if (g->fmt.include_usage)
        sim_sse_usage(&s->scratch, &g->fmt, g->sent);
    sim_sse_done(&s->scratch);
    send_scratch(g);
    evhttp_connection_set_closecb(g->evcon, NULL, NULL);
    evhttp_send_reply_end(g->req);   /* may free req and the connection */
    gen_done(g);
}

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
    int n = 0;
    while (g->sent < g->out.completion_tokens && due_ns(g, g->sent) <= now
           && n < SIM_EVENTS_PER_WAKEUP) {
        send_token(g);
        n++;
    }
    if (g->sent == g->out.completion_tokens)
        stream_end(g);
    else
        arm_at(g, due_ns(g, g->sent));
}

/* Non-streamed: the whole text as one body once the last token is due. */
static void body_tick(struct sim_gen *g)
{
    int64_t last_due = due_ns(g, g->out.completion_tokens - 1);
    if (clock_now_ns() < last_due) {
        arm_at(g, last_due);
        return;
    }
    struct sim_server *s = g->srv;
    buf_reset(&s->scratch);
    for (int64_t i = 0; i < g->out.completion_tokens; i++) {
        const char *w = sim_token_text(&g->out, i);
        buf_append(&s->scratch, w, strlen(w));
    }
    char *body = sim_json_completion(g->rq.ep, g->id, g->created, s->cfg.model,
                                     s->scratch.len ? s->scratch.data : "",
                                     sim_finish_reason(&g->out), g->rq.prompt_tokens,
                                     g->out.completion_tokens);
    buf_reset(&s->scratch);
    int64_t t = clock_now_ns();
    evhttp_connection_set_closecb(g->evcon, NULL, NULL);
    if (body)
        sim_server_reply_json(s, g->req, 200, body, strlen(body));
    else
        evhttp_send_error(g->req, 500, "out of memory");
    cJSON_free(body);
    note_chunk(g, t, g->out.completion_tokens);
    g->sent = g->out.completion_tokens;
    sim_metrics_on_tokens(&s->metrics, g->sent);
    gen_done(g);
}

static void gen_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct sim_gen *g = arg;
    if (g->rq.stream)
        stream_tick(g);
    else
        body_tick(g);
}

static void make_id(struct sim_server *s, enum sim_endpoint ep, char *out, size_t cap)
{
    uint64_t r = sim_mix64(s->id_salt + s->id_next++);
    snprintf(out, cap, "%s-%016" PRIx64, ep == SIM_EP_CHAT ? "chatcmpl" : "cmpl", r);
}

/* A rejected request still gets a trace line: it is a request a client sent. */
static void reject(struct sim_server *s, struct evhttp_request *req, const char *path,
                   int64_t t0, const struct sim_error *err)
{
    s->metrics.rejected++;
    if (s->trace) {
        const char *rid = evhttp_find_header(evhttp_request_get_input_headers(req), "X-Request-Id");
        struct sim_trace_rec r = {.request_id = rid, .path = path, .status = err->status,
                                  .received_ns = t0, .finished_ns = clock_now_ns(),
                                  .prompt_tokens = -1};
        sim_trace_write(s->trace, &r);
    }
    sim_server_reply_error(s, req, err);
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
    g->created = (int64_t)time(NULL);
    make_id(s, rq->ep, g->id, sizeof g->id);
    uint64_t key = sim_request_key(s->cfg.seed, rq->prompt_hash, sim_request_seed(rq));
    g->out = sim_plan_output(key, rq->max_tokens, rq->ignore_eos);
    const char *rid = evhttp_find_header(evhttp_request_get_input_headers(req), "X-Request-Id");
    g->request_id = rid ? strdup(rid) : NULL;
    g->timer = evtimer_new(s->base, gen_timer_cb, g);
    live_link(s, g);    /* from here gen_free can undo everything */
    if (!g->timer || (rid && !g->request_id)) {
        gen_free(g);
        return NULL;
    }
    return g;
}

/* Starts the SSE reply: headers and, for chat, the role chunk, right away. */
static int stream_start(struct sim_gen *g)
{
    struct sim_server *s = g->srv;
    g->fmt = (struct sim_stream_fmt){
        .ep = g->rq.ep, .prompt_tokens = g->rq.prompt_tokens,
        .include_usage = g->rq.include_usage, .continuous_usage = g->rq.continuous_usage,
        .head = sim_sse_head_new(g->rq.ep, g->id, g->created, s->model_json),
    };
    if (!g->fmt.head)
        return -1;
    struct evkeyvalq *h = evhttp_request_get_output_headers(g->req);
    evhttp_add_header(h, "Content-Type", "text/event-stream; charset=utf-8");
    evhttp_add_header(h, "Cache-Control", "no-cache");
    evhttp_send_reply_start(g->req, 200, "OK");
    if (g->rq.ep == SIM_EP_CHAT) {
        buf_reset(&s->scratch);
        sim_sse_role(&s->scratch, &g->fmt);
        send_scratch(g);
    }
    return 0;
}

void sim_gen_start(struct sim_server *s, struct evhttp_request *req, enum sim_endpoint ep,
                   const char *path, int64_t t0_ns)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    const char *body = len ? (const char *)evbuffer_pullup(in, -1) : "";
    struct sim_limits lim = {.model = s->cfg.model, .max_model_len = s->cfg.max_model_len};
    struct sim_request rq;
    struct sim_error err;
    if (sim_request_parse(body, len, ep, &lim, &rq, &err) != 0) {
        reject(s, req, path, t0_ns, &err);
        return;
    }
    struct sim_gen *g = gen_new(s, req, &rq, path, t0_ns);
    if (!g || (rq.stream && stream_start(g) != 0)) {
        if (g)
            gen_free(g);
        evhttp_send_error(req, 500, "out of memory");
        return;
    }
    sim_metrics_on_start(&s->metrics, rq.prompt_tokens);
    evhttp_connection_set_closecb(g->evcon, gen_close_cb, g);
    arm_at(g, rq.stream ? due_ns(g, 0) : due_ns(g, g->out.completion_tokens - 1));
}

void sim_gen_discard_all(struct sim_server *s)
{
    while (s->live) {
        struct sim_gen *g = s->live;
        sim_metrics_on_end(&s->metrics, NULL, 0);
        trace_gen(g, 200, "abort", false);
        gen_free(g);
    }
}
