/* server.c — listening socket, routes and the small JSON endpoints of the
 * simulator (see server.h). Generation endpoints live in gen.c. */
#include "sim/server.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "sim/arrival.h"
#include "sim/driver.h"
#include "sim/flavor.h"
#include "sim/gen.h"
#include "sim/script.h"
#include "sim/reply.h"
#include "sim/tokens.h"
#include "sim/trace.h"

#define SIM_MAX_BODY_BYTES (64u << 20)     /* request bodies: a 32k-token prompt is far less */
#define SIM_MAX_HEADER_BYTES (64u << 10)
#define SIM_SCRATCH_BYTES (256u << 20)     /* cap of one reply body built in scratch */

enum route_kind { R_GEN_COMPLETIONS, R_GEN_CHAT, R_MODELS, R_HEALTH, R_VERSION, R_TOKENIZE,
                  R_APPLY_TEMPLATE, R_METRICS, R_SERVER_INFO, R_PROPS, R_RESET_PREFIX_CACHE, R_FLUSH_CACHE };

/* Which flavors serve a route (bit 1 << enum sim_flavor). */
#define F_ANVIL (1u << SIM_FLAVOR_ANVIL)
#define F_VLLM (1u << SIM_FLAVOR_VLLM)
#define F_SGLANG (1u << SIM_FLAVOR_SGLANG)
#define F_LLAMACPP (1u << SIM_FLAVOR_LLAMACPP)
#define F_ALL (F_ANVIL | F_VLLM | F_SGLANG | F_LLAMACPP)

struct route {
    const char *path;
    enum evhttp_cmd_type method;
    enum route_kind kind;
    unsigned flavors;
};

static const struct route routes[] = {
    {"/v1/completions", EVHTTP_REQ_POST, R_GEN_COMPLETIONS, F_ALL},
    {"/v1/chat/completions", EVHTTP_REQ_POST, R_GEN_CHAT, F_ALL},
    {"/v1/models", EVHTTP_REQ_GET, R_MODELS, F_ALL},
    {"/health", EVHTTP_REQ_GET, R_HEALTH, F_ALL},
    {"/version", EVHTTP_REQ_GET, R_VERSION, F_ANVIL | F_VLLM},
    /* SGLang: /v1/tokenize only (its builds without /tokenize answer 404 there) */
    {"/tokenize", EVHTTP_REQ_POST, R_TOKENIZE, F_ANVIL | F_VLLM | F_LLAMACPP},
    {"/v1/tokenize", EVHTTP_REQ_POST, R_TOKENIZE, F_SGLANG},
    {"/apply-template", EVHTTP_REQ_POST, R_APPLY_TEMPLATE, F_LLAMACPP},
    {"/server_info", EVHTTP_REQ_GET, R_SERVER_INFO, F_SGLANG},
    {"/get_server_info", EVHTTP_REQ_GET, R_SERVER_INFO, F_SGLANG},
    {"/props", EVHTTP_REQ_GET, R_PROPS, F_LLAMACPP},
    {"/metrics", EVHTTP_REQ_GET, R_METRICS, F_ALL},
    /* vLLM (with VLLM_SERVER_DEV_MODE=1): 200, empty body; SGLang: GET or POST */
    {"/reset_prefix_cache", EVHTTP_REQ_POST, R_RESET_PREFIX_CACHE, F_ANVIL | F_VLLM},
    {"/flush_cache", EVHTTP_REQ_POST, R_FLUSH_CACHE, F_SGLANG},
    {"/flush_cache", EVHTTP_REQ_GET, R_FLUSH_CACHE, F_SGLANG},
};

/* The prefix cache is emptied. SGLang refuses while requests run or wait
 * (400, its text); vLLM resets whenever asked. */
static void handle_flush(struct sim_server *s, struct evhttp_request *req, bool sglang)
{
    const struct sim_engine *e = s->driver ? sim_driver_engine(s->driver) : NULL;
    if (sglang && e && sim_engine_running(e) + sim_engine_waiting(e) > 0) {
        evbuffer_add_printf(s->out, "Cache not flushed because there are pending requests. #queue-req: %lld, "
                            "#running-req: %lld", (long long)sim_engine_waiting(e), (long long)sim_engine_running(e));
        evhttp_send_reply(req, 400, NULL, s->out);
        return;
    }
    if (s->driver)
        sim_driver_reset_prefix_cache(s->driver);
    static const char flushed[] = "Cache flushed.\nPlease check backend logs for more details. (When there are "
                                  "running or waiting requests, the operation will not be performed.)\n";
    if (sglang)
        evbuffer_add(s->out, flushed, sizeof flushed - 1);
    evhttp_send_reply(req, 200, NULL, s->out);
}

void sim_server_reply_json(struct sim_server *s, struct evhttp_request *req, int status,
                           const char *body, size_t len)
{
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evbuffer_add(s->out, body, len);
    evhttp_send_reply(req, status, NULL, s->out);
}

void sim_server_reply_error(struct sim_server *s, struct evhttp_request *req,
                            const struct sim_error *err)
{
    char *body = sim_flavor_error((enum sim_flavor)s->cfg.flavor, err);
    if (body)
        sim_server_reply_json(s, req, err->status, body, strlen(body));
    else
        evhttp_send_error(req, 500, "out of memory");
    cJSON_free(body);
}

/* Sends a cJSON-built body (NULL means out of memory) and frees it. */
static void reply_owned(struct sim_server *s, struct evhttp_request *req, char *body)
{
    if (body)
        sim_server_reply_json(s, req, 200, body, strlen(body));
    else
        evhttp_send_error(req, 500, "out of memory");
    cJSON_free(body);
}

static void handle_tokenize(struct sim_server *s, struct evhttp_request *req)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    const char *body = len ? (const char *)evbuffer_pullup(in, -1) : "";
    struct sim_limits lim = {.model = s->cfg.model, .max_model_len = s->cfg.max_model_len,
                             .flavor = s->cfg.flavor, .any_model = s->cfg.flavor >= SIM_FLAVOR_SGLANG,
                             .tokenizer = s->cfg.tokenizer};
    struct sim_request rq;
    struct sim_error err;
    if (sim_request_parse(body, len, SIM_EP_TOKENIZE, &lim, &rq, &err) != 0) {
        sim_server_reply_error(s, req, &err);
        return;
    }
    reply_owned(s, req, sim_flavor_tokenize((enum sim_flavor)s->cfg.flavor, rq.token_ids, rq.pieces,
                                            rq.prompt_tokens, s->cfg.max_model_len));
    sim_request_free(&rq);
}

/* llama.cpp POST /apply-template: the chat prompt as the template renders it. */
static void handle_apply_template(struct sim_server *s, struct evhttp_request *req)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    const char *body = len ? (const char *)evbuffer_pullup(in, -1) : "";
    struct sim_error err;
    buf_reset(&s->scratch);
    if (sim_request_apply_template(body, len, &s->scratch, &err) != 0) {
        buf_reset(&s->scratch);
        sim_server_reply_error(s, req, &err);
        return;
    }
    char *reply = sim_flavor_apply_template(s->scratch.data ? s->scratch.data : "");
    buf_reset(&s->scratch);
    reply_owned(s, req, reply);
}

static void handle_metrics(struct sim_server *s, struct evhttp_request *req)
{
    if (s->metrics.running > 0 && sim_faults_metrics_fail(s->cfg.faults.metrics_fail_rate, s->busy_scrapes++)) {
        evbuffer_add_printf(s->out, "metrics unavailable while requests run (--metrics-fail-rate)\n");
        evhttp_send_reply(req, 503, "Service Unavailable", s->out);
        return;
    }
    buf_reset(&s->scratch);
    const struct sim_engine *eng = s->driver ? sim_driver_engine(s->driver) : NULL;
    if (sim_metrics_render(&s->metrics, eng, s->cfg.model, &s->scratch) != 0) {
        evhttp_send_error(req, 500, "out of memory");
        return;
    }
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    evbuffer_add(s->out, s->scratch.data, s->scratch.len);
    buf_reset(&s->scratch);
    evhttp_send_reply(req, 200, "OK", s->out);
}

static void reply_status(struct sim_server *s, struct evhttp_request *req, int status,
                         const char *type, const char *fmt, const char *path)
{
    struct sim_error err = {.status = status, .type = type, .param = NULL};
    snprintf(err.message, sizeof err.message, fmt, path);
    sim_server_reply_error(s, req, &err);
}

static void reply_not_found(struct sim_server *s, struct evhttp_request *req, const char *path)
{
    char *body = sim_flavor_not_found((enum sim_flavor)s->cfg.flavor, path);
    if (body)
        sim_server_reply_json(s, req, 404, body, strlen(body));
    else
        evhttp_send_error(req, 500, "out of memory");
    cJSON_free(body);
}

/* What SGLang's /server_info and llama.cpp's /props report, from the
 * configuration and the engine's counters. */
static struct sim_server_facts server_facts(const struct sim_server *s)
{
    const struct sim_engine_params *p = &s->cfg.engine;
    struct sim_server_facts f = {
        .model = s->cfg.model, .max_model_len = s->cfg.max_model_len,
        .max_num_seqs = p->max_num_seqs, .max_num_batched_tokens = p->max_num_batched_tokens,
        .kv_cache_tokens = p->kv_cache_tokens / p->block_size * p->block_size,
        .block_size = p->block_size, .num_speculative_tokens = p->num_speculative_tokens,
    };
    double up_s = (double)(clock_now_ns() - s->metrics.start_ns) / 1e9;
    uint64_t gen = s->metrics.generation_tokens[0] + s->metrics.generation_tokens[1];
    f.gen_throughput = up_s > 0 ? (double)gen / up_s : 0;
    const struct sim_engine_stats *st = s->driver ? sim_engine_stats(sim_driver_engine(s->driver)) : NULL;
    f.spec_accept_length = st && st->spec_drafts ? 1.0 + (double)st->spec_accepted / (double)st->spec_drafts : 1.0;
    return f;
}

static void dispatch(struct sim_server *s, struct evhttp_request *req, const struct route *r,
                     int64_t t0)
{
    static const char health[] = "{\"status\":\"ok\"}";
    switch (r->kind) {
    case R_GEN_COMPLETIONS: sim_gen_start(s, req, SIM_EP_COMPLETIONS, r->path, t0); break;
    case R_GEN_CHAT: sim_gen_start(s, req, SIM_EP_CHAT, r->path, t0); break;
    case R_MODELS:
        reply_owned(s, req, sim_flavor_models((enum sim_flavor)s->cfg.flavor, s->cfg.model,
                                              s->cfg.max_model_len, (int64_t)time(NULL)));
        break;
    case R_HEALTH: sim_server_reply_json(s, req, 200, health, sizeof health - 1); break;
    case R_VERSION: reply_owned(s, req, sim_flavor_version((enum sim_flavor)s->cfg.flavor)); break;
    case R_TOKENIZE: handle_tokenize(s, req); break;
    case R_APPLY_TEMPLATE: handle_apply_template(s, req); break;
    case R_METRICS: handle_metrics(s, req); break;
    case R_SERVER_INFO: {
        struct sim_server_facts f = server_facts(s);
        reply_owned(s, req, sim_flavor_server_info(&f));
        break;
    }
    case R_RESET_PREFIX_CACHE: handle_flush(s, req, false); break;
    case R_FLUSH_CACHE: handle_flush(s, req, true); break;
    case R_PROPS: {
        struct sim_server_facts f = server_facts(s);
        reply_owned(s, req, sim_flavor_props(&f));
        break;
    }
    }
}

/* A stream is many small writes: with Nagle's algorithm on, a token waits
 * for the ACK of the previous segment, which the client may delay by up to
 * 40 ms — the token would reach the client late. Real servers (uvicorn)
 * disable it too. Returns the connection's socket, or -1. */
static int set_nodelay(struct evhttp_request *req)
{
    struct evhttp_connection *conn = evhttp_request_get_connection(req);
    struct bufferevent *bev = conn ? evhttp_connection_get_bufferevent(conn) : NULL;
    int one = 1, fd = bev ? bufferevent_getfd(bev) : -1;
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* The one evhttp callback: exact path match, then method. A request's
 * arrival is when its bytes reached the host (arrival.h), else now,
 * before any parsing. */
static void on_request(struct evhttp_request *req, void *arg)
{
    int64_t now = clock_now_ns();
    struct sim_server *s = arg;
    int64_t t0 = sim_arrivals_take(s->rx_stamps, set_nodelay(req), now);
    if (s->script && evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
        sim_script_play(s->script, s->base, req, t0, s->trace);
        return;
    }
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    if (!path)
        path = "";
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    bool path_known = false;
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        if (strcmp(routes[i].path, path) != 0 || !(routes[i].flavors & (1u << s->cfg.flavor)))
            continue;
        path_known = true;
        if (routes[i].method == m || (m == EVHTTP_REQ_HEAD && routes[i].method == EVHTTP_REQ_GET)) {
            dispatch(s, req, &routes[i], t0);
            return;
        }
    }
    if (path_known)
        reply_status(s, req, 405, "MethodNotAllowed", "Method Not Allowed: %s", path);
    else
        reply_not_found(s, req, path);
}

/* Binds the first address host:port resolves to, with the kernel's maximum
 * backlog (evhttp_bind_socket's 128 would drop SYNs when 1024 clients
 * connect at once, and so does libevent's own choice for a backlog of -1:
 * also 128, `ss -ltn` shows). listen(2) cuts a larger one to
 * net.core.somaxconn. */
#define SIM_BACKLOG 65535
static struct evconnlistener *listen_on(struct sim_server *s, char *err, size_t errcap)
{
    char port[16];
    snprintf(port, sizeof port, "%d", s->cfg.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(s->cfg.host, port, &hints, &res);
    if (gai != 0) {
        snprintf(err, errcap, "cannot resolve --host '%s': %s", s->cfg.host, gai_strerror(gai));
        return NULL;
    }
    struct evconnlistener *lev = NULL;
    int saved = 0;
    for (struct addrinfo *ai = res; ai && !lev; ai = ai->ai_next) {
        lev = evconnlistener_new_bind(s->base, NULL, NULL,
                                      LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
                                      SIM_BACKLOG, ai->ai_addr, (int)ai->ai_addrlen);
        if (!lev)
            saved = errno;
    }
    freeaddrinfo(res);
    if (!lev)
        snprintf(err, errcap, "cannot listen on %s:%d: %s", s->cfg.host, s->cfg.port, strerror(saved));
    return lev;
}

static int bound_port(struct evconnlistener *lev)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(evconnlistener_get_fd(lev), (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static int setup_http(struct sim_server *s, char *err, size_t errcap)
{
    s->http = evhttp_new(s->base);
    if (!s->http) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    evhttp_set_max_body_size(s->http, SIM_MAX_BODY_BYTES);
    evhttp_set_max_headers_size(s->http, SIM_MAX_HEADER_BYTES);
    evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD);
    evhttp_set_gencb(s->http, on_request, s);
    struct evconnlistener *lev = listen_on(s, err, errcap);
    if (!lev)
        return -1;
    s->port = bound_port(lev);
    if (!evhttp_bind_listener(s->http, lev)) {   /* on success evhttp owns lev */
        evconnlistener_free(lev);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    return 0;
}

struct sim_server *sim_server_new(struct event_base *base, const struct sim_config *cfg,
                                  char *err, size_t errcap)
{
    struct sim_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errcap, "out of memory");
        return NULL;
    }
    s->base = base;
    LIST_INIT(&s->live);
    s->cfg = *cfg;
    buf_init(&s->scratch, SIM_SCRATCH_BYTES);
    buf_init(&s->text[0], SIM_SCRATCH_BYTES);
    buf_init(&s->text[1], SIM_SCRATCH_BYTES);
    s->id_salt = sim_mix64((uint64_t)clock_now_ns() ^ ((uint64_t)getpid() << 32));
    s->model_json = sim_json_quote(cfg->model);
    s->out = evbuffer_new();
    s->rx_stamps = sim_arrivals_new(base);
    sim_metrics_init(&s->metrics, cfg->flavor);
    if (!cfg->fixed_latency) {
        struct sim_engine_hooks hooks = {.on_tokens = sim_gen_on_tokens, .flush = sim_gen_flush, .ctx = s};
        s->driver = sim_driver_new(base, &cfg->engine, &hooks);
    }
    if (!s->model_json || !s->out || !s->rx_stamps || (!cfg->fixed_latency && !s->driver)) {
        snprintf(err, errcap, "out of memory");
        sim_server_free(s);
        return NULL;
    }
    if (cfg->trace_path && !(s->trace = sim_trace_open(cfg->trace_path))) {
        snprintf(err, errcap, "cannot open --trace '%s': %s", cfg->trace_path, strerror(errno));
        sim_server_free(s);
        return NULL;
    }
    if (cfg->script_path && !(s->script = sim_script_load(cfg->script_path, err, errcap))) {
        sim_server_free(s);
        return NULL;
    }
    if (setup_http(s, err, errcap) != 0) {
        sim_server_free(s);
        return NULL;
    }
    return s;
}

int sim_server_free(struct sim_server *s)
{
    if (!s)
        return 0;
    s->shutting_down = true;
    /* Frees every connection; each in-flight request's close callback
     * traces it as an abort and frees its state (gen.c). */
    if (s->http)
        evhttp_free(s->http);
    sim_gen_discard_all(s);   /* defensive: normally nothing is left */
    sim_arrivals_free(s->rx_stamps);   /* after the connections: none is peeked any more */
    sim_driver_free(s->driver);
    sim_script_free(s->script);   /* after evhttp_free: its playbacks ended with their connections */
    int rc = sim_trace_close(s->trace);
    if (s->out)
        evbuffer_free(s->out);
    buf_free(&s->scratch);
    buf_free(&s->text[0]);
    buf_free(&s->text[1]);
    cJSON_free(s->model_json);
    free(s);
    return rc;
}
