/* gen.h — generation requests (/v1/completions, /v1/chat/completions): the
 * reply's lifecycle in both modes (fixed-latency timers, or tokens from the
 * engine model), streaming in the flavor's shape, reasoning, injected
 * faults, client disconnects and tracing. */
#ifndef ANVIL_SIM_GEN_H
#define ANVIL_SIM_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/request.h"

struct sim_server;
struct sim_seq;
struct evhttp_request;

/* Most SSE events one timer callback writes for one stream before yielding
 * to the loop (fairness between streams when tokens fall due together). */
#define SIM_EVENTS_PER_WAKEUP 64

/* Bytes a fixed-latency stream may have queued unsent on its connection
 * before the simulator waits for the client to read (bounds memory per slow
 * client). */
#define SIM_MAX_QUEUED_BYTES (256u * 1024u)

/* Handles one request to endpoint ep (SIM_EP_COMPLETIONS or SIM_EP_CHAT)
 * that arrived at t0_ns (clock_now_ns when the request callback ran).
 * Validates the body and either answers with an error right away or starts
 * the reply: fixed-latency mode sends token i at t0_ns + ttft + i * itl;
 * engine mode queues the request in the engine, which hands tokens to
 * sim_gen_on_tokens. Faults (--fail-rate ...) are decided here. The
 * request stays owned by evhttp; the simulator's state for it is freed
 * when the reply ends or the client goes away. */
void sim_gen_start(struct sim_server *s, struct evhttp_request *req, enum sim_endpoint ep,
                   const char *path, int64_t t0_ns);

/* The engine's token hook (engine.h sim_engine_hooks.on_tokens, ctx = the
 * server): streams tokens first..first+n-1 of seq's request as one chunk,
 * or sends the whole non-streamed body when done. */
void sim_gen_on_tokens(void *ctx, struct sim_seq *seq, int64_t first, int64_t n, bool done,
                       int64_t now_ns);

/* The engine's flush hook (sim_engine_hooks.flush, ctx = the server):
 * writes the chunks each stream got in the last batch of steps, one write
 * per stream, and stamps them for the trace. */
void sim_gen_flush(void *ctx);

/* Frees the state of every request still in s->live without touching its
 * evhttp_request (for shutdown, after evhttp_free freed the requests); each
 * is counted and traced as an abort. */
void sim_gen_discard_all(struct sim_server *s);

#endif
