/* http.c — curl multi ⇄ libevent glue (after curl's hiperfifo.c and
 * multi-event.c examples). */
#include "net/http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/stop.h"
#include "core/escape.h"
#include "core/vec.h"
#include "net/chunked.h"
#include "net/native.h"
#include "net/rxstamp.h"
#include "net/url.h"
#include "net/verdict.h"

/* One curl multi handle with its own connection cache. curl 7.88 walks a
 * multi's whole connection cache on operations done once per transfer
 * (curl_multi_remove_handle marks connect-only connections with
 * Curl_conncache_foreach; a new transfer scans its host's connections for
 * an idle one), so one multi holding 10,000 connections spent seconds of
 * one loop's time starting 10,000 streams (bench/RESULTS.md). A client
 * spreads its transfers over lanes of at most HTTP_LANE_CONNECTIONS
 * connections each instead. */
#define HTTP_LANE_CONNECTIONS 256
struct lane {
    struct http_client *client;
    CURLM *multi;
    struct event *timer;
    size_t in_flight;
};

struct http_client {
    struct lane *lanes;
    int n_lanes;
    struct event_base *base;
    struct event *drain;        /* reads curl's finished transfers from a clean stack */
    size_t in_flight;
    LIST_HEAD(, http_xfer) xfers;  /* in flight */
    /* Inside a socket event whose socket the kernel stamped (rx_valid):
     * when the bytes its queue held arrived, by offset (net/rxstamp.h). */
    struct rxstamp_map rx_map;
    bool rx_valid;
    bool rx_merged;             /* ... and more segments came since the last look than its queue has
                                   buffers: the kernel merged some (or it cannot tell) */
    int rx_port;                /* the local port of that socket */
    size_t rx_off;              /* bytes of its queue handed to callbacks so far in the event */
    bool proxy_env;             /* a proxy variable is set: curl may tunnel through TLS */
    int epfd;                   /* every socket curl opened (EPOLLIN), or -1 */
    struct sock_ctx **by_fd;    /* their contexts by descriptor (NULL: none) */
    size_t n_by_fd;
    struct http_rx st;          /* how the stamps handed to callbacks were taken, and the last one */
    struct native *native;      /* the transfers' transport when it is anvil's own, else NULL */
    int64_t read_clock;         /* the clock time given to the unstamped bytes of the current
                                   callback from curl (0: not read yet) */
};

struct http_xfer {
    struct http_client *client;
    struct lane *lane;          /* the multi it runs on */
    CURL *easy;
    const struct http_handlers *h;
    void *ud;
    LIST_ENTRY(http_xfer) link; /* http_client.xfers */
    int local_port;             /* of the connection it uses (curl's pre-request callback) */
    int64_t t_start;            /* when it was handed to curl (CLOCK_MONOTONIC ns) */
    bool tls;                   /* over TLS (or maybe, a proxy variable set): byte counts are no queue offsets */
    bool http11;                /* the current header block's status line is HTTP/1.1 */
    bool chunked;               /* ... and it names the chunked transfer coding */
    struct chunked dec;         /* curl hands the raw body over: its chunks are decoded here */
    char err[CURL_ERROR_SIZE];
    char content_type[80];      /* of the last header block, "" when none */
    char encoding[40];          /* its Content-Encoding, "" when none */
    char location[160];         /* its Location, "" when none */
    int sock_errno;             /* socket() failed with it (opensocket_cb), else 0 */
    CURLcode verdict;           /* CURLE_OK, or what http.c refused in the reply (http.h) */
    char why[400];              /* the verdict's message */
};

/* Whether a variable curl reads for a proxy is set (an https:// proxy is
 * TLS even for an http:// URL). curl takes no HTTP_PROXY. */
static bool proxy_in_env(void)
{
    static const char *const vars[] = {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy",
                                       "ALL_PROXY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return true;
    }
    return false;
}

static void unlink_xfer(struct http_client *c, struct http_xfer *x)
{
    LIST_REMOVE(x, link);
    c->in_flight--;
    x->lane->in_flight--;
}

/* Per-socket state, attached to curl's socket with curl_multi_assign. */
struct sock_ctx {
    struct event *ev;
    struct http_client *client;
    struct lane *lane;          /* whose multi opened the socket */
    uint32_t segs_seen;         /* data segments it had received at the last look (rxstamp_segs_in) */
    int local_port;     /* names the connection to its transfer (http_xfer.local_port) */
};

/* Whether a failed transfer ran into a limit of this machine's rather than
 * the server's (verdict.h); x->why then names it. */
static bool client_limit(struct http_xfer *x)
{
    long os = 0;
    curl_easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os);
    return http_limit_reason(x->sock_errno ? x->sock_errno : (int)os, x->why, sizeof x->why);
}

static void drain_done(struct lane *ln)
{
    struct http_client *c = ln->client;
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(ln->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode rc = msg->data.result;
        struct http_xfer *x;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        int64_t now = clock_now_ns();
        if (x->verdict != CURLE_OK)
            rc = x->verdict;
        /* curl keeps the errno of a failed address attempt (::1 before 127.0.0.1) after a later
         * one connects: it speaks of this machine only when no connection was made at all */
        else if ((rc == CURLE_COULDNT_CONNECT || x->sock_errno) && client_limit(x))
            rc = CURLE_OUT_OF_MEMORY;
        curl_multi_remove_handle(ln->multi, easy);
        unlink_xfer(c, x);
        x->h->on_done(x->ud, now, rc, x->why[0] ? x->why : rc == CURLE_OK ? "" : x->err[0] ? x->err : curl_easy_strerror(rc));
        curl_easy_cleanup(easy);
        free(x);
    }
}

/* Lets curl act on socket fd (mask: CURL_CSELECT_*); when it may read,
 * the kernel's stamps of what fd holds are taken first (rx_map). */
static void socket_action(struct http_client *c, struct sock_ctx *ctx, int fd, int mask)
{
    int running;
    struct lane *ln = ctx->lane;    /* ctx may be freed during the action (socket_cb's CURL_POLL_REMOVE) */
    c->rx_valid = (mask & CURL_CSELECT_IN) && rxstamp_peek(fd, RXSTAMP_RUNS, &c->rx_map) == 0;
    if (c->rx_valid) {      /* every buffer its own segment, unless more came than there are runs */
        uint32_t segs = c->rx_map.segs_in;
        c->rx_merged = !segs || segs - ctx->segs_seen > (uint32_t)c->rx_map.runs;
        ctx->segs_seen = segs;
    }
    c->rx_port = ctx->local_port;
    c->rx_off = 0;
    curl_multi_socket_action(ln->multi, fd, mask, &running);
    c->rx_valid = false;
    drain_done(ln);
}

static void on_socket_event(evutil_socket_t fd, short what, void *arg)
{
    struct sock_ctx *ctx = arg;
    int mask = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    socket_action(ctx->client, ctx, fd, mask);
}

/* Whether curl reads for x from the socket of the current socket event,
 * which the kernel stamped. The connection is matched by local port:
 * CURLINFO_ACTIVESOCKET knows a new connection only after its first
 * transfer is done (curl 7.88). */
static bool in_stamped_event(const struct http_xfer *x)
{
    const struct http_client *c = x->client;
    return c->rx_valid && x->local_port && x->local_port == c->rx_port;
}

/* The offset, in the queue the current socket event peeked, of the next n
 * bytes curl hands x; they are counted as handed over. curl hands every
 * byte it reads to the header or write callback, in order (the raw body:
 * CURLOPT_HTTP_TRANSFER_DECODING off), and reads x's socket from its
 * queue's head, so the count is each byte's offset. A header line that
 * began in an earlier read is counted whole here: later offsets then run
 * ahead of the bytes, which dates them later, never earlier. */
static size_t take(struct http_xfer *x, size_t n)
{
    struct http_client *c = x->client;
    size_t off = c->rx_off;
    if (in_stamped_event(x))
        c->rx_off += n;
    return off;
}

/* The kernel's arrival time of the byte at queue offset off, with *until
 * the end of the run of bytes sharing it; 0 when there is none: outside a
 * stamped socket event for x's socket (curl also reads when it runs a
 * transfer from its timer, from another socket's event, or as a request
 * starts), or for a byte that arrived after the peek. Over TLS the count
 * of decrypted bytes is less than their offset in the queue (records add
 * headers and tags): every byte counted below the queue's end gets its
 * newest stamp, and bytes that came in while curl was reading cannot be
 * told from those queued before (docs/METHODOLOGY.md). */
static int64_t kernel_stamp(const struct http_xfer *x, size_t off, size_t *until)
{
    if (!in_stamped_event(x))
        return 0;
    const struct rxstamp_map *m = &x->client->rx_map;
    if (x->tls && off < m->queued)      /* off is below the byte's queue offset: the newest stamp */
        return rxstamp_at(m, m->queued - 1, until);
    return rxstamp_at(m, off, until);
}

/* The time to hand a callback for bytes the kernel stamped t (0: none, so
 * the clock, which is later than their arrival), counted by how it was
 * taken. Never before the transfer's start (a step of the wall clock could
 * move a kernel stamp there). The clock is read once per callback from
 * curl: the bytes curl hands over at once were read together, and one time
 * for all of them lets a read that held several outputs be told from
 * outputs that arrived apart, as one kernel stamp does for one buffer. */
static int64_t arrival(struct http_xfer *x, int64_t t)
{
    struct http_client *c = x->client;
    c->st.unknown = !t && !in_stamped_event(x);
    c->st.shared = !t || c->rx_merged;
    if (t) {
        c->st.counts.kernel++;
    } else {
        c->st.counts.clock++;
        if (!c->read_clock)
            c->read_clock = clock_now_ns();
        t = c->read_clock;
    }
    return t > x->t_start ? t : x->t_start;
}

/* Hands x's body bytes p[0..n), at queue offset off, to on_body: split
 * where their kernel stamps change, each part dated by the segment that
 * holds it (so an SSE event is dated by the part that completes it). */
static void deliver(struct http_xfer *x, const char *p, size_t n, size_t off)
{
    while (n > 0) {
        size_t until = 0;
        int64_t t = kernel_stamp(x, off, &until);
        size_t part = t && until - off < n ? until - off : n;
        x->h->on_body(x->ud, arrival(x, t), p, part);
        p += part;
        n -= part;
        off += part;
    }
}

/* curl's timer. curl runs the transfers whose timeouts expired and reads
 * their sockets itself, unstamped, so the sockets holding bytes are read
 * first, each as a socket event of its own: libevent runs expired timers
 * before it has seen a socket ready when epoll_wait was cut short (a
 * stopped process resumed: EINTR) and when more sockets were ready than
 * one epoll_wait reports. One epoll_wait (timeout 0) on curl's sockets. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct lane *ln = arg;
    struct http_client *c = ln->client;
    struct epoll_event ready[64];
    int n = c->epfd >= 0 ? epoll_wait(c->epfd, ready, 64, 0) : 0;
    for (int i = 0; i < n; i++) {
        int s = ready[i].data.fd;      /* its context is looked up now: an earlier action may have closed it */
        if ((size_t)s < c->n_by_fd && c->by_fd[s])
            socket_action(c, c->by_fd[s], s, CURL_CSELECT_IN);
    }
    int running;
    curl_multi_socket_action(ln->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    drain_done(ln);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct http_client *c = arg;
    for (int i = 0; i < c->n_lanes; i++)
        drain_done(&c->lanes[i]);
}

static int timer_cb(CURLM *multi, long timeout_ms, void *arg)
{
    (void)multi;
    struct lane *ln = arg;
    if (timeout_ms < 0) {
        evtimer_del(ln->timer);
        return 0;
    }
    /* never call back into curl from here: 0 becomes "as soon as the loop runs" */
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(ln->timer, &tv);
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

/* Adds a new socket of curl's to the set on_timer looks at. Failing (out
 * of memory, no epoll set) only leaves its timer-driven reads on the clock. */
static void watch_socket(struct http_client *c, int s, struct sock_ctx *ctx)
{
    if (c->epfd < 0 || s < 0)
        return;
    if (VEC_RESERVE_ZEROED(c->by_fd, c->n_by_fd, (size_t)s + 1, 64) != 0)
        return;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = s};
    if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, s, &ev) == 0)
        c->by_fd[s] = ctx;
}

/* Takes a socket curl is done with out of that set (curl calls this
 * before closing it). */
static void forget_socket(struct http_client *c, int s)
{
    if (s < 0 || (size_t)s >= c->n_by_fd || !c->by_fd[s])
        return;
    epoll_ctl(c->epfd, EPOLL_CTL_DEL, s, NULL);
    c->by_fd[s] = NULL;
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *arg, void *sockp)
{
    (void)easy;
    struct lane *ln = arg;
    struct http_client *c = ln->client;
    struct sock_ctx *ctx = sockp;
    if (what == CURL_POLL_REMOVE) {
        if (ctx) {
            forget_socket(c, s);
            event_free(ctx->ev);
            free(ctx);
            curl_multi_assign(ln->multi, s, NULL);
        }
        return 0;
    }
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        if (!ctx)
            return -1;
        ctx->client = c;
        ctx->lane = ln;
        ctx->segs_seen = rxstamp_segs_in(s);    /* what came before this transfer was read */
        struct sockaddr_storage a;
        socklen_t alen = sizeof a;
        if (getsockname(s, (struct sockaddr *)&a, &alen) == 0)
            ctx->local_port = local_port(&a);
        curl_multi_assign(ln->multi, s, ctx);
        watch_socket(c, s, ctx);
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

struct http_client *http_client_new(struct event_base *base, long max_connections, enum http_transport t)
{
    struct http_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->base = base;
    LIST_INIT(&c->xfers);
    c->epfd = -1;
    if (t == HTTP_TRANSPORT_NATIVE) {
        if (!(c->native = native_new(base, max_connections, &c->st))) {
            free(c);
            return NULL;
        }
        return c;
    }
    c->epfd = epoll_create1(EPOLL_CLOEXEC);
    c->proxy_env = proxy_in_env();     /* with one set, byte offsets are not trusted */
    long n = max_connections > HTTP_LANE_CONNECTIONS
             ? (max_connections + HTTP_LANE_CONNECTIONS - 1) / HTTP_LANE_CONNECTIONS : 1;
    c->drain = evtimer_new(base, on_drain, c);
    c->lanes = calloc((size_t)n, sizeof *c->lanes);
    if (!c->drain || !c->lanes) {
        http_client_free(c);
        return NULL;
    }
    for (; c->n_lanes < n; c->n_lanes++) {
        struct lane *ln = &c->lanes[c->n_lanes];
        ln->client = c;
        ln->multi = curl_multi_init();
        ln->timer = evtimer_new(base, on_timer, ln);
        if (!ln->multi || !ln->timer) {
            c->n_lanes++;       /* freed with the others */
            http_client_free(c);
            return NULL;
        }
        curl_multi_setopt(ln->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        curl_multi_setopt(ln->multi, CURLMOPT_SOCKETDATA, ln);
        curl_multi_setopt(ln->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        curl_multi_setopt(ln->multi, CURLMOPT_TIMERDATA, ln);
        curl_multi_setopt(ln->multi, CURLMOPT_MAXCONNECTS, (max_connections + n - 1) / n);
    }
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

/* curl's own socket() (cf-socket.c), keeping its errno: curl reports a
 * failed socket() as a failed connect. */
static curl_socket_t opensocket_cb(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
    (void)purpose;
    struct http_xfer *x = arg;
    curl_socket_t fd = socket(a->family, a->socktype, a->protocol);
    if (fd == CURL_SOCKET_BAD)
        x->sock_errno = errno;
    return fd;
}

/* Every connection of a streamed transfer gets kernel receive stamps. */
static int sockopt_cb(void *arg, curl_socket_t fd, curlsocktype purpose)
{
    (void)arg;
    if (purpose == CURLSOCKTYPE_IPCXN)
        rxstamp_enable(fd);     /* without it, reads are stamped by the clock and counted so */
    return CURL_SOCKOPT_OK;
}

/* Whether header line p (len bytes) names the chunked transfer coding,
 * read as curl 7.88 reads it (content_encoding.c): "Transfer-Encoding:"
 * whose codings, separated by commas and trimmed of white space, include
 * "chunked". */
static bool names_chunked(const char *p, size_t len)
{
    static const char name[] = "transfer-encoding:";
    size_t i = sizeof name - 1;
    if (len < i || strncasecmp(p, name, i) != 0)
        return false;
    while (i < len) {
        while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == ','))
            i++;
        size_t start = i, n = 0;
        for (; i < len && p[i] != ','; i++)
            if (!isspace((unsigned char)p[i]))
                n = i - start + 1;
        if (n == 7 && strncasecmp(p + start, "chunked", 7) == 0)
            return true;
    }
    return false;
}

/* A header's value (after name, len bytes in all), trimmed, into out. */
static void header_value(const char *p, size_t len, size_t name, char *out, size_t cap)
{
    size_t i = name, k = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t'))
        i++;
    while (i < len && p[i] != '\r' && p[i] != '\n' && k + 1 < cap)
        out[k++] = p[i++];
    while (k && (out[k - 1] == ' ' || out[k - 1] == '\t'))
        k--;
    out[k] = '\0';
}

/* One header line, as received. The final block's end is dated by the
 * segment holding its last byte. */
static size_t header_cb(char *p, size_t size, size_t n, void *arg)
{
    struct http_xfer *x = arg;
    size_t len = size * n;
    size_t off = take(x, len);
    x->client->read_clock = 0;
    if (len == 0)
        return 0;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {      /* a new header block */
        x->http11 = len >= 8 && strncmp(p, "HTTP/1.1", 8) == 0;
        x->chunked = false;
    } else if (x->http11 && names_chunked(p, len)) {   /* curl decodes chunks only for HTTP/1.1 */
        x->chunked = true;
    } else if (len > 13 && !strncasecmp(p, "content-type:", 13)) {
        header_value(p, len, 13, x->content_type, sizeof x->content_type);
    } else if (len > 17 && !strncasecmp(p, "content-encoding:", 17)) {
        header_value(p, len, 17, x->encoding, sizeof x->encoding);
    } else if (len > 9 && !strncasecmp(p, "location:", 9)) {
        header_value(p, len, 9, x->location, sizeof x->location);
    }
    if (len <= 2 && (p[0] == '\r' || p[0] == '\n')) {   /* end of a header block */
        long status = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && x->h->on_content_type)
            x->h->on_content_type(x->ud, x->content_type);
        if (status >= 200) {
            size_t until;
            chunked_init(&x->dec);
            x->h->on_headers(x->ud, arrival(x, kernel_stamp(x, off + len - 1, &until)), status);
        }
        if (status >= 200 && (x->verdict = http_judge_head(status, x->location, x->encoding, x->why, sizeof x->why)))
            return 0;                   /* curl ends the transfer (CURLE_WRITE_ERROR; on_done gets the verdict) */
        x->content_type[0] = x->encoding[0] = x->location[0] = '\0';   /* a later block (after 1xx) sends its own */
    }
    return len;
}

/* Where a raw body read sits, for its decoded chunk data. */
struct raw_read {
    struct http_xfer *x;
    const char *p;      /* the raw bytes curl handed over */
    size_t off;         /* their offset in the peeked queue */
};

static void on_chunk_data(void *ud, const char *q, size_t n)
{
    struct raw_read *r = ud;
    deliver(r->x, q, n, r->off + (size_t)(q - r->p));
}

/* Raw body bytes (transfer decoding is off): chunk data is decoded here,
 * knowing each byte's offset. Bad framing is curl's to report: it still
 * parses the chunks and fails the transfer. */
static size_t write_cb(char *p, size_t size, size_t n, void *arg)
{
    struct http_xfer *x = arg;
    size_t len = size * n;
    size_t off = take(x, len);
    x->client->read_clock = 0;
    if (!x->chunked) {
        deliver(x, p, len, off);
    } else {
        struct raw_read r = {x, p, off};
        chunked_feed(&x->dec, p, len, on_chunk_data, &r);
    }
    return len;
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
    if (c->native)      /* the transfer is its connection: struct conn, converted back in http_cancel */
        return (struct http_xfer *)native_start(c->native, req, h, ud, t_start_ns);
    struct http_xfer *x = calloc(1, sizeof *x);
    if (!x || !(x->easy = curl_easy_init())) {
        free(x);
        return NULL;
    }
    x->client = c;
    x->h = h;
    x->ud = ud;
    x->tls = c->proxy_env || strncasecmp(req->url, "https:", 6) == 0;
    CURL *e = x->easy;
    set_common(e, req->url, req->headers, req->body, req->body_len);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->err);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HTTP_TRANSFER_DECODING, 0L);   /* the raw body: chunks decoded in write_cb */
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, opensocket_cb);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, prereq_cb);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
    if (req->connect_timeout_ms)
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
    if (req->timeout_ms)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, req->timeout_ms);
    /* the lane with the fewest transfers: it has a pre-warmed connection
     * idle when the load is spread as the pre-warm was */
    x->lane = &c->lanes[0];
    for (int i = 1; i < c->n_lanes; i++)
        if (c->lanes[i].in_flight < x->lane->in_flight)
            x->lane = &c->lanes[i];
    *t_start_ns = x->t_start = clock_now_ns();
    if (curl_multi_add_handle(x->lane->multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        free(x);
        return NULL;
    }
    c->in_flight++;
    x->lane->in_flight++;
    LIST_INSERT_HEAD(&c->xfers, x, link);
    /* Start it now rather than on the next loop pass, so that request start
     * is when its bytes go out even when many are launched at once. A
     * transfer that ends right away is reported from the drain event, never
     * from inside this call. */
    int running;
    curl_multi_socket_action(x->lane->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    event_active(c->drain, EV_TIMEOUT, 0);
    return x;
}

void http_cancel(struct http_client *c, struct http_xfer *x)
{
    if (c->native) {
        native_cancel(c->native, (struct conn *)x);
        return;
    }
    curl_multi_remove_handle(x->lane->multi, x->easy);
    unlink_xfer(c, x);
    curl_easy_cleanup(x->easy);
    free(x);
}

bool http_arrival_unknown(const struct http_client *c)
{
    return c->st.unknown;
}

bool http_arrival_shared(const struct http_client *c)
{
    return c->st.shared;
}

struct http_xfer *http_first(const struct http_client *c)
{
    if (c->native)
        return (struct http_xfer *)native_first(c->native);
    return LIST_FIRST(&c->xfers);
}

struct http_rx_counts http_rx_counts(const struct http_client *c)
{
    return c->st.counts;
}

size_t http_in_flight(const struct http_client *c)
{
    if (c->native)
        return native_in_flight(c->native);
    return c->in_flight;
}

void http_client_free(struct http_client *c)
{
    if (!c)
        return;
    native_free(c->native);
    while (!LIST_EMPTY(&c->xfers))
        http_cancel(c, LIST_FIRST(&c->xfers));
    for (int i = 0; i < c->n_lanes; i++) {
        if (c->lanes[i].multi)
            curl_multi_cleanup(c->lanes[i].multi);  /* may call socket_cb: before the timer and base go */
        if (c->lanes[i].timer)
            event_free(c->lanes[i].timer);
    }
    free(c->lanes);
    if (c->drain)
        event_free(c->drain);
    if (c->epfd >= 0)
        close(c->epfd);
    free(c->by_fd);
    free(c);
}

/* A blocking fetch's reply as it comes. */
struct fetch {
    struct buf *out;
    bool over;                  /* the body did not fit in out->max */
    char encoding[40];          /* the final block's Content-Encoding */
    char location[160];         /* and its Location */
};

static size_t fetch_write_cb(char *p, size_t size, size_t n, void *arg)
{
    struct fetch *f = arg;
    size_t len = size * n;
    size_t room = f->out->max - f->out->len;
    buf_append(f->out, p, len < room ? len : room);
    f->over = len > room;
    return f->over ? 0 : len;   /* more than the cap: stop reading (CURLE_WRITE_ERROR) */
}

static size_t fetch_header_cb(char *p, size_t size, size_t n, void *arg)
{
    struct fetch *f = arg;
    size_t len = size * n;
    if (len >= 5 && !strncmp(p, "HTTP/", 5))
        f->encoding[0] = f->location[0] = '\0';
    else if (len > 17 && !strncasecmp(p, "content-encoding:", 17))
        header_value(p, len, 17, f->encoding, sizeof f->encoding);
    else if (len > 9 && !strncasecmp(p, "location:", 9))
        header_value(p, len, 9, f->location, sizeof f->location);
    return len;
}

/* Runs e to its end on a multi handle of its own, polling at most
 * STOP_POLL_MS at a time so that a stop request (core/stop.h) ends it at
 * once: curl_easy_perform would block until its own timeout. */
static CURLcode perform_stoppable(CURL *e, int *stopped)
{
    *stopped = 0;
    CURLM *m = curl_multi_init();
    if (!m || curl_multi_add_handle(m, e) != CURLM_OK) {
        curl_multi_cleanup(m);
        return CURLE_OUT_OF_MEMORY;
    }
    CURLcode rc = CURLE_OK;
    int running = 1;
    while (running) {
        if ((*stopped = stop_requested()) != 0) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            rc = CURLE_RECV_ERROR;
            break;
        }
        if (running && curl_multi_poll(m, NULL, 0, STOP_POLL_MS, NULL) != CURLM_OK && !stop_requested()) {
            rc = CURLE_RECV_ERROR;
            break;
        }
    }
    int left;
    for (CURLMsg *msg; !running && (msg = curl_multi_info_read(m, &left));)
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == e)
            rc = msg->data.result;
    curl_multi_remove_handle(m, e);
    curl_multi_cleanup(m);
    return rc;
}

/* The fetch's verdict on a reply curl took without error (see http.h). */
static CURLcode fetch_verdict(const struct fetch *f, CURLcode rc, long status, char *err, size_t errlen)
{
    if (f->over) {
        char first[100];
        text_escape(first, sizeof first, f->out->data ? f->out->data : "", f->out->len < 40 ? f->out->len : 40);
        snprintf(err, errlen, "the reply is larger than %zu bytes, the most anvil reads from this request "
                 "(it begins: %s)", f->out->max, first);
        return CURLE_FILESIZE_EXCEEDED;
    }
    CURLcode v = rc == CURLE_OK ? http_judge_head(status, f->location, f->encoding, err, errlen) : CURLE_OK;
    return v != CURLE_OK ? v : rc;
}

const char *http_transport_name(enum http_transport t)
{
    return t == HTTP_TRANSPORT_NATIVE ? "native" : t == HTTP_TRANSPORT_CURL ? "curl" : "auto";
}

int http_transport_resolve(enum http_transport want, const char *url, enum http_transport *got, char *err,
                           size_t errlen)
{
    struct url_target t;
    bool plain = url_target(url, &t) == 0;
    *got = want == HTTP_TRANSPORT_CURL || !plain || (want == HTTP_TRANSPORT_AUTO && proxy_in_env())
           ? HTTP_TRANSPORT_CURL : HTTP_TRANSPORT_NATIVE;
    if (want == HTTP_TRANSPORT_NATIVE && !plain) {
        snprintf(err, errlen, "--transport native speaks plain http:// without credentials in the URL; "
                 "use --transport curl (or auto) for this server");
        return -1;
    }
    return 0;
}

bool http_refused(CURLcode rc)
{
    return rc == CURLE_TOO_MANY_REDIRECTS || rc == CURLE_BAD_CONTENT_ENCODING || rc == CURLE_FILESIZE_EXCEEDED;
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
    struct fetch f = {.out = out};
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, fetch_write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &f);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, fetch_header_cb);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &f);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    int stopped;
    CURLcode rc = perform_stoppable(e, &stopped);
    *status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    if (stopped)
        snprintf(err, errlen, "stopped by %s", stop_signal_name(stopped));
    else
        snprintf(err, errlen, "%s", rc == CURLE_OK ? "" : (errbuf[0] ? errbuf : curl_easy_strerror(rc)));
    if (!stopped)
        rc = fetch_verdict(&f, rc, *status, err, errlen);
    curl_easy_cleanup(e);
    return rc;
}
