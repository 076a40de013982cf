/* server.h — the simulator's HTTP server: one libevent loop, evhttp routes,
 * and the state every request handler shares. */
#ifndef ANVIL_SIM_SERVER_H
#define ANVIL_SIM_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "core/buf.h"
#include "sim/faults.h"
#include "sim/metrics.h"
#include "sim/profile.h"
#include "sim/request.h"

struct event_base;
struct evhttp;
struct evhttp_request;
struct evbuffer;
struct sim_trace;
struct sim_gen;
struct sim_driver;
struct sim_arrivals;

/* The flags of `anvil sim`, after parsing. Strings are borrowed from argv
 * and must outlive the server. */
struct sim_config {
    const char *host;         /* address to bind, e.g. "127.0.0.1" */
    int port;                 /* TCP port; 0 picks a free one */
    const char *model;        /* served model name */
    int64_t max_model_len;    /* context window, tokens */
    int64_t ttft_ns;          /* arrival to first token, ns */
    int64_t itl_ns;           /* between consecutive tokens, ns */
    const char *trace_path;   /* JSON-lines trace file, or NULL for none */
    const char *script_path;  /* scripted reply for every POST (script.h), or NULL */
    uint64_t seed;            /* enters every output hash, acceptance draw and fault draw */
    bool fixed_latency;       /* --ttft-ms/--itl-ms given: fixed schedule, no engine model */
    struct sim_engine_params engine;  /* engine mode: the model (profile.h) */
    int flavor;               /* enum sim_flavor: whose shapes and names */
    int64_t reasoning_tokens; /* chat: the first N output tokens stream as reasoning */
    struct sim_faults faults; /* injected failures (faults.h) */
    int tokenizer;            /* enum sim_tokenizer: how prompts split into tokens */
    bool context_shift;       /* truncate prompts over the context (llama.cpp), not reject them */
    double tokens_without_chunk;  /* share of output tokens held for the next chunk (0 <= p < 1) */
};

struct sim_server {
    struct event_base *base;      /* borrowed: the one loop */
    struct evhttp *http;          /* owned */
    struct sim_config cfg;
    char *model_json;             /* cfg.model as a JSON string literal (cJSON_free) */
    struct sim_trace *trace;      /* owned, or NULL */
    struct sim_script *script;    /* owned, or NULL: every POST gets it */
    struct sim_metrics metrics;
    LIST_HEAD(, sim_gen) live;    /* in-flight generation requests (list owned here) */
    struct sim_driver *driver;    /* engine mode: the engine on its step timer (owned), else NULL */
    struct sim_arrivals *rx_stamps;   /* kernel receive stamps of requests (arrival.h; owned) */
    uint64_t arrivals;            /* generation requests seen (fault key without X-Request-Id) */
    uint64_t busy_scrapes;        /* GET /metrics taken while requests were in flight */
    struct buf scratch;           /* one SSE event or body at a time */
    struct buf text[2];           /* one chunk's reasoning [0] and content [1] text */
    struct evbuffer *out;         /* staging for evhttp_send_reply_chunk, which drains it */
    uint64_t id_salt;             /* makes response ids differ between runs */
    uint64_t id_next;             /* response id counter */
    int port;                     /* the port actually bound */
    bool shutting_down;           /* set by sim_server_free: aborts are not client closes */
};

/* Creates the server on base (given two priorities, arrival.h): binds cfg->host:cfg->port (backlog SOMAXCONN),
 * opens the trace file when cfg->trace_path is set. Returns the server, or
 * NULL after writing one line (no newline) into err (errcap bytes). */
struct sim_server *sim_server_new(struct event_base *base, const struct sim_config *cfg,
                                  char *err, size_t errcap);

/* Stops accepting, ends every in-flight request (each traced as an abort),
 * closes the trace and frees the server. Returns 0, or -1 when the trace
 * could not be written completely. NULL-safe. */
int sim_server_free(struct sim_server *s);

/* Sends a complete reply: status, Content-Type: application/json, body
 * (len bytes, copied). For the handlers in gen.c. */
void sim_server_reply_json(struct sim_server *s, struct evhttp_request *req, int status,
                           const char *body, size_t len);

/* Sends err as an error reply in the flavor's shape (flavor.h sim_flavor_error). */
void sim_server_reply_error(struct sim_server *s, struct evhttp_request *req,
                            const struct sim_error *err);

#endif
