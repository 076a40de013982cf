/* http.c — curl multi ⇄ libevent glue (after curl's hiperfifo.c and
 * multi-event.c examples). */
#include "net/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "net/rxstamp.h"

struct http_client {
    CURLM *multi;
    struct event_base *base;
    struct event *timer;
    struct event *drain;        /* reads curl's finished transfers from a clean stack */
    size_t in_flight;
    struct http_xfer *xfers;    /* in flight, doubly linked */
    /* Inside a socket event whose socket the kernel stamped: when what it
     * holds arrived (net/rxstamp.h); rx_now.head is 0 otherwise. */
    struct rxstamp rx_now;
    int rx_port;                /* the local port of that socket */
    int body_pieces;            /* body callbacks so far in the current socket event */
    struct http_rx_counts rx;   /* how the stamps handed to callbacks were taken */
};

struct http_xfer {
    struct http_client *client;
    CURL *easy;
    const struct http_handlers *h;
    void *ud;
    struct http_xfer *prev, *next;
    int local_port;             /* of the connection it uses (curl's pre-request callback) */
    int64_t t_start;            /* when it was handed to curl (CLOCK_MONOTONIC ns) */
    char err[CURL_ERROR_SIZE];
    char content_type[80];      /* of the last header block, "" when none */
};

static void unlink_xfer(struct http_client *c, struct http_xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        c->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    c->in_flight--;
}

/* Per-socket state, attached to curl's socket with curl_multi_assign. */
struct sock_ctx {
    struct event *ev;
    struct http_client *client;
    int local_port;     /* names the connection to its transfer (http_xfer.local_port) */
};

static void drain_done(struct http_client *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode rc = msg->data.result;
        struct http_xfer *x;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        int64_t now = clock_now_ns();
        curl_multi_remove_handle(c->multi, easy);
        unlink_xfer(c, x);
        x->h->on_done(x->ud, now, rc, rc == CURLE_OK ? "" : (x->err[0] ? x->err : curl_easy_strerror(rc)));
        curl_easy_cleanup(easy);
        free(x);
    }
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg)
{
    struct sock_ctx *ctx = arg;
    struct http_client *c = ctx->client;
    int mask = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    if (!(what & EV_READ) || rxstamp_peek(fd, &c->rx_now) != 0)
        c->rx_now.head = 0;
    c->rx_port = ctx->local_port;
    c->body_pieces = 0;
    curl_multi_socket_action(c->multi, fd, mask, &running);
    c->rx_now.head = 0;
    drain_done(c);
}

/* When the bytes curl hands x over arrived. Inside a socket event for x's
 * socket that the kernel stamped: the stamp of the queue's head for headers
 * and the first body piece (each piece is one HTTP chunk: one write of the
 * server's, as a rule), and of its newest segment for the pieces after it.
 * Otherwise the clock now: outside socket events (curl also reads when it
 * runs a transfer from its timer or as a request starts), for a transfer
 * curl runs from another socket's event, and when the kernel gave no stamp.
 * The connection is matched by local port: CURLINFO_ACTIVESOCKET knows a
 * new connection only after its first transfer is done (curl 7.88). Never
 * before the transfer's start (a step of the wall clock could move a
 * kernel stamp there). */
static int64_t arrival(const struct http_xfer *x, bool body)
{
    struct http_client *c = x->client;
    if (!c->rx_now.head || !x->local_port || x->local_port != c->rx_port) {
        c->rx.clock++;
        return clock_now_ns();
    }
    c->rx.kernel++;
    int64_t t = body && c->body_pieces++ > 0 ? c->rx_now.newest : c->rx_now.head;
    return t > x->t_start ? t : x->t_start;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct http_client *c = arg;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain_done(c);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drain_done(arg);
}

static int timer_cb(CURLM *multi, long timeout_ms, void *arg)
{
    (void)multi;
    struct http_client *c = arg;
    if (timeout_ms < 0) {
        evtimer_del(c->timer);
        return 0;
    }
    /* never call back into curl from here: 0 becomes "as soon as the loop runs" */
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(c->timer, &tv);
    return 0;
}

/* The port of an IPv4 or IPv6 socket address, 0 for other families. */
static int local_port(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)a)->sin_port);
    if (a->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
    return 0;
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *arg, void *sockp)
{
    (void)easy;
    struct http_client *c = arg;
    struct sock_ctx *ctx = sockp;
    if (what == CURL_POLL_REMOVE) {
        if (ctx) {
            event_free(ctx->ev);
            free(ctx);
            curl_multi_assign(c->multi, s, NULL);
        }
        return 0;
    }
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        if (!ctx)
            return -1;
        ctx->client = c;
        struct sockaddr_storage a;
        socklen_t alen = sizeof a;
        if (getsockname(s, (struct sockaddr *)&a, &alen) == 0)
            ctx->local_port = local_port(&a);
        curl_multi_assign(c->multi, s, ctx);
    } else {
        event_free(ctx->ev);
    }
    short kind = EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
    ctx->ev = event_new(c->base, s, kind, on_socket_event, ctx);
    if (!ctx->ev)
        return -1;
    event_add(ctx->ev, NULL);
    return 0;
}

struct http_client *http_client_new(struct event_base *base, long max_connections)
{
    struct http_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base = base;
    c->multi = curl_multi_init();
    c->timer = evtimer_new(base, on_timer, c);
    c->drain = evtimer_new(base, on_drain, c);
    if (!c->multi || !c->timer || !c->drain) {
        http_client_free(c);
        return NULL;
    }
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, max_connections);
    return c;
}

/* Names the connection a transfer got (new or reused) by its local port. */
static int prereq_cb(void *arg, char *primary_ip, char *local_ip, int primary_port, int port)
{
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    struct http_xfer *x = arg;
    x->local_port = port;
    return CURL_PREREQFUNC_OK;
}

/* Every connection of a streamed transfer gets kernel receive stamps. */
static int sockopt_cb(void *arg, curl_socket_t fd, curlsocktype purpose)
{
    (void)arg;
    if (purpose == CURLSOCKTYPE_IPCXN)
        rxstamp_enable(fd);     /* without it, reads are stamped by the clock and counted so */
    return CURL_SOCKOPT_OK;
}

static size_t header_cb(char *p, size_t size, size_t n, void *arg)
{
    struct http_xfer *x = arg;
    size_t len = size * n;
    if (len > 13 && !strncasecmp(p, "content-type:", 13)) {
        size_t i = 13, k = 0;
        while (i < len && p[i] == ' ')
            i++;
        while (i < len && p[i] != '\r' && p[i] != '\n' && k + 1 < sizeof x->content_type)
            x->content_type[k++] = p[i++];
        x->content_type[k] = '\0';
    }
    if (len <= 2 && (p[0] == '\r' || p[0] == '\n')) {   /* end of a header block */
        long status = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && x->h->on_content_type)
            x->h->on_content_type(x->ud, x->content_type);
        if (status >= 200)
            x->h->on_headers(x->ud, arrival(x, false), status);
        x->content_type[0] = '\0';     /* a later block (after 1xx) sends its own */
    }
    return len;
}

static size_t write_cb(char *p, size_t size, size_t n, void *arg)
{
    struct http_xfer *x = arg;
    x->h->on_body(x->ud, arrival(x, true), p, size * n);
    return size * n;
}

/* Options shared by streaming transfers and blocking fetches. */
static void set_common(CURL *e, const char *url, const struct curl_slist *headers,
                       const char *body, size_t body_len)
{
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    if (body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
}

struct http_xfer *http_start(struct http_client *c, const struct http_request *req,
                             const struct http_handlers *h, void *ud, int64_t *t_start_ns)
{
    struct http_xfer *x = calloc(1, sizeof *x);
    if (!x || !(x->easy = curl_easy_init())) {
        free(x);
        return NULL;
    }
    x->client = c;
    x->h = h;
    x->ud = ud;
    CURL *e = x->easy;
    set_common(e, req->url, req->headers, req->body, req->body_len);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->err);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, prereq_cb);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
    if (req->connect_timeout_ms)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
    if (req->timeout_ms)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms);
    *t_start_ns = x->t_start = clock_now_ns();
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        free(x);
        return NULL;
    }
    c->in_flight++;
    x->next = c->xfers;
    if (c->xfers)
        c->xfers->prev = x;
    c->xfers = x;
    /* Start it now rather than on the next loop pass, so that request start
     * is when its bytes go out even when many are launched at once. A
     * transfer that ends right away is reported from the drain event, never
     * from inside this call. */
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    event_active(c->drain, EV_TIMEOUT, 0);
    return x;
}

void http_cancel(struct http_client *c, struct http_xfer *x)
{
    curl_multi_remove_handle(c->multi, x->easy);
    unlink_xfer(c, x);
    curl_easy_cleanup(x->easy);
    free(x);
}

struct http_xfer *http_first(const struct http_client *c)
{
    return c->xfers;
}

struct http_rx_counts http_rx_counts(const struct http_client *c)
{
    return c->rx;
}

size_t http_in_flight(const struct http_client *c)
{
    return c->in_flight;
}

void http_client_free(struct http_client *c)
{
    if (!c)
        return;
    if (c->multi) {
        while (c->xfers)
            http_cancel(c, c->xfers);
        curl_multi_cleanup(c->multi);   /* may call socket_cb: before the timer and base go */
    }
    if (c->timer)
        event_free(c->timer);
    if (c->drain)
        event_free(c->drain);
    free(c);
}

static size_t fetch_write_cb(char *p, size_t size, size_t n, void *arg)
{
    struct buf *out = arg;
    size_t len = size * n;
    size_t room = out->max - out->len;
    buf_append(out, p, len < room ? len : room);  /* keep what fits; a cap is not an error */
    return len;
}

CURLcode http_fetch(const char *url, const struct curl_slist *headers, const char *body,
                    long timeout_ms, struct buf *out, long *status, char *err, size_t errlen)
{
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *e = curl_easy_init();
    if (!e) {
        snprintf(err, errlen, "curl_easy_init failed");
        return CURLE_FAILED_INIT;
    }
    set_common(e, url, headers, body, body ? strlen(body) : 0);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, fetch_write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    CURLcode rc = curl_easy_perform(e);
    *status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    snprintf(err, errlen, "%s", rc == CURLE_OK ? "" : (errbuf[0] ? errbuf : curl_easy_strerror(rc)));
    curl_easy_cleanup(e);
    return rc;
}
