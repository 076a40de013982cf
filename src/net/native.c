/* native.c — anvil's own HTTP/1.1 transport (native.h). After wrk's
 * struct connection: a connection is one small struct with its socket's
 * event; reads go into one buffer per loop and are framed at once by
 * http_parser (the parser wrk uses), so nothing of a reply is kept between
 * reads here (the SSE framer above keeps what an event needs). */
#include "net/native.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <http_parser.h>

#include "core/clock.h"
#include "core/escape.h"
#include "net/rxstamp.h"
#include "net/url.h"
#include "net/verdict.h"

/* One read's room. A read takes what the socket holds up to this; a longer
 * queue is read on the next pass of the loop. */
#define NATIVE_READ 65536

/* curl's limits on a reply's head: one header line (CURL_MAX_HTTP_HEADER,
 * over it curl reports CURLE_OUT_OF_MEMORY) and the whole head
 * (MAX_HTTP_RESP_HEADER_SIZE, over it CURLE_RECV_ERROR). */
#define NATIVE_MAX_LINE (100 * 1024)
#define NATIVE_MAX_HEAD (300 * 1024)

/* Where a connection is. */
enum conn_state { C_CONNECTING, C_SENDING, C_READING, C_IDLE, C_FAILED };

/* The header whose value is being read. */
enum hdr { HDR_OTHER, HDR_CONTENT_TYPE, HDR_ENCODING, HDR_LOCATION, HDR_TE };

/* A host and port as resolved once for every connection to it. */
struct origin {
    struct origin *next;
    char host[256], port[8];
    struct addrinfo *ai;        /* NULL: it did not resolve (gai holds why) */
    int gai;
};

struct conn {
    struct native *n;
    struct origin *o;
    const struct addrinfo *addr;    /* the address being connected to */
    int fd;
    enum conn_state state;
    short watching;             /* EV_READ | EV_WRITE the event waits for */
    struct event *ev;           /* the socket's, persistent */
    struct event *timer;        /* the transfer's time limits; NULL while none */
    LIST_ENTRY(conn) link;      /* n->busy, n->idle or n->failed */
    const struct http_handlers *h;
    void *ud;
    http_parser p;
    int64_t t_start;            /* CLOCK_MONOTONIC ns, before the first byte was written */
    int64_t connect_deadline, deadline;     /* 0 = none */
    int64_t connect_start;      /* CLOCK_MONOTONIC ns, when its connection began connecting */
    long timeout_ms, connect_timeout_ms;
    uint32_t segs_seen;         /* data segments it had received at the last look (rxstamp_counts) */
    uint64_t consumed;          /* bytes read from the socket since it opened */
    bool aligned;               /* consumed is every byte it had received at that look */
    /* the request: head (owned) then body (the caller's); kept until the
     * reply's first byte (and the head all written), for a resend on a
     * fresh connection */
    char *head;
    size_t head_len, body_len, sent;
    const char *body;
    uint64_t received;          /* reply bytes read in this transfer */
    uint64_t body_bytes;        /* of them, body bytes after the chunked coding (curl's download size) */
    long status;                /* the final header block's, 0 before it */
    bool reused;                /* the connection served a transfer before this one */
    bool resent;                /* this transfer already moved to a fresh connection once */
    bool complete;              /* the final reply's message ended */
    bool in_value;              /* the last header callback was a value */
    enum hdr hdr;
    size_t line_len;            /* bytes of the header line being read (name and value) */
    unsigned char field_len;    /* of field (lower case), or sizeof field + 1 when longer */
    char field[18];
    char content_type[80], encoding[40], location[160];
    char te[64];                /* Transfer-Encoding, every header of it joined by ", " */
    CURLcode rc;                /* a failure waiting for the drain event (state C_FAILED) */
    char *why;                  /* its message (owned), or NULL */
};

LIST_HEAD(conn_list, conn);

struct native {
    struct event_base *base;
    struct http_rx *rx;
    long max_idle;
    struct conn_list busy, idle, failed;
    size_t n_busy, n_idle;
    struct event *drain;        /* reports failures found while a transfer started */
    struct origin *origins;
    char *url;                  /* the last URL started (owned) and its parts */
    struct url_target target;
    /* inside a read of cur's socket */
    struct conn *cur;           /* NULL once cancelled from a callback */
    struct rxstamp_map map;
    bool map_valid;             /* the kernel stamped what the queue held */
    bool merged;                /* ... and more segments came than it has buffers */
    int64_t read_clock;         /* the clock for unstamped bytes of this read (0: not read yet) */
    size_t hdr_end;             /* offset just past the last status or header byte seen in this read */
    char why[400];              /* a verdict's message, while it is handed on */
    char buf[NATIVE_READ];
};

static const http_parser_settings settings;

/* --- arrival times ------------------------------------------------------ */

/* The kernel's stamp of the read's byte at offset off, *until the end of
 * its run; 0 when there is none (no stamp, or a byte that came after the
 * peek). */
static int64_t kernel_stamp(const struct native *n, size_t off, size_t *until)
{
    if (!n->map_valid) {
        *until = off;
        return 0;
    }
    return rxstamp_at(&n->map, off, until);
}

/* The time handed to a callback for bytes the kernel stamped t (0: none,
 * so the clock at the read, read once per read), counted by how it was
 * taken; never before the transfer's start. Every read is a looked-at
 * one: the arrival is never unknown (http.h). */
static int64_t arrival(struct conn *c, int64_t t)
{
    struct native *n = c->n;
    n->rx->unknown = false;
    n->rx->shared = !t || n->merged;
    if (t) {
        n->rx->counts.kernel++;
    } else {
        n->rx->counts.clock++;
        if (!n->read_clock)
            n->read_clock = clock_now_ns();
        t = n->read_clock;
    }
    return t > c->t_start ? t : c->t_start;
}

/* --- connections -------------------------------------------------------- */

static void on_event(evutil_socket_t fd, short what, void *arg);
static void on_timer(evutil_socket_t fd, short what, void *arg);

/* Makes c's event wait for what (EV_READ and/or EV_WRITE). Returns 0 or -1. */
static int watch(struct conn *c, short what)
{
    if (c->watching == what)
        return 0;
    if (c->ev) {
        event_del(c->ev);
        if (event_assign(c->ev, c->n->base, c->fd, EV_PERSIST | what, on_event, c) != 0)
            return -1;
    } else if (!(c->ev = event_new(c->n->base, c->fd, EV_PERSIST | what, on_event, c))) {
        return -1;
    }
    if (event_add(c->ev, NULL) != 0)
        return -1;
    c->watching = what;
    return 0;
}

static void close_socket(struct conn *c)
{
    if (c->ev) {
        event_free(c->ev);
        c->ev = NULL;
    }
    c->watching = 0;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

static void free_conn(struct conn *c)
{
    close_socket(c);
    if (c->timer)
        event_free(c->timer);
    free(c->head);
    free(c->why);
    free(c);
}

/* Opens a nonblocking socket to c->addr and starts connecting. Returns 0,
 * or an errno. */
static int open_socket(struct conn *c)
{
    const struct addrinfo *a = c->addr;
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0)
        return errno;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rxstamp_enable(fd);         /* without it, reads are dated by the clock and counted so */
    c->fd = fd;
    c->segs_seen = 0;
    c->consumed = 0;
    c->aligned = true;          /* nothing received yet */
    c->state = C_CONNECTING;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS)
        return errno;
    return watch(c, EV_WRITE) == 0 ? 0 : ENOMEM;
}

/* Connects c to the first address of its origin that takes a socket,
 * from c->addr on. Returns 0, or the errno of the last attempt. */
static int connect_from(struct conn *c)
{
    int e = 0;
    for (; c->addr; c->addr = c->addr->ai_next) {
        close_socket(c);
        if ((e = open_socket(c)) == 0)
            return 0;
        if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM)
            break;          /* this machine's limit: another address will not help */
    }
    close_socket(c);
    return e ? e : ECONNREFUSED;
}

/* --- ending a transfer -------------------------------------------------- */

static void unlink_busy(struct conn *c)
{
    LIST_REMOVE(c, link);
    c->n->n_busy--;
}

/* Ends c's transfer with rc and message why (copied), closing its
 * connection: on_done is called, then c is freed. Not from inside a
 * parser callback (the read's caller ends it once the parser returns). */
static void fail(struct conn *c, CURLcode rc, const char *why)
{
    const struct http_handlers *h = c->h;
    void *ud = c->ud;
    char msg[400];
    snprintf(msg, sizeof msg, "%s", why);
    unlink_busy(c);
    free_conn(c);
    h->on_done(ud, clock_now_ns(), rc, msg);
}

/* Fails c from the drain event: for what went wrong while it started, so
 * that on_done never runs inside native_start. */
static void fail_later(struct conn *c, CURLcode rc, const char *why)
{
    unlink_busy(c);
    c->n->n_busy++;             /* still counted in flight until it is reported */
    LIST_INSERT_HEAD(&c->n->failed, c, link);
    close_socket(c);
    c->state = C_FAILED;
    c->rc = rc;
    c->why = strdup(why);
    event_active(c->n->drain, EV_TIMEOUT, 0);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct native *n = arg;
    struct conn *c;
    while ((c = LIST_FIRST(&n->failed))) {
        const struct http_handlers *h = c->h;
        void *ud = c->ud;
        CURLcode rc = c->rc;
        char msg[400];
        snprintf(msg, sizeof msg, "%s", c->why ? c->why : curl_easy_strerror(rc));
        unlink_busy(c);
        free_conn(c);
        h->on_done(ud, clock_now_ns(), rc, msg);
    }
}

/* The message and code for a connection that failed with errno e. */
static CURLcode connect_failure(const struct conn *c, int e, char *why, size_t cap)
{
    if (http_limit_reason(e, why, cap))
        return CURLE_OUT_OF_MEMORY;
    snprintf(why, cap, "Failed to connect to %s port %s after %lld ms: %s", c->o->host, c->o->port,
             (long long)((clock_now_ns() - c->connect_start) / 1000000), strerror(e));
    return CURLE_COULDNT_CONNECT;
}

/* A reply ended well: the connection goes back to the idle ones when the
 * server keeps it (and nothing follows the reply), then on_done. A reply
 * that came before the whole request was written (an early error) ends
 * the connection: the rest of the body would open the next request. */
static void finish(struct conn *c, bool keep)
{
    struct native *n = c->n;
    const struct http_handlers *h = c->h;
    void *ud = c->ud;
    keep = keep && c->sent == c->head_len + c->body_len;
    unlink_busy(c);
    free(c->head);
    c->head = NULL;
    if (c->timer)
        event_del(c->timer);
    if (keep && n->n_idle < (size_t)n->max_idle && watch(c, EV_READ) == 0) {
        c->state = C_IDLE;
        LIST_INSERT_HEAD(&n->idle, c, link);
        n->n_idle++;
    } else {
        free_conn(c);
    }
    h->on_done(ud, clock_now_ns(), CURLE_OK, "");
}

/* --- the request -------------------------------------------------------- */

/* Writes what is left of c's request. Returns 0 (all written, or the
 * socket is full and the event waits for room), or an errno. */
static int send_more(struct conn *c)
{
    while (c->sent < c->head_len + c->body_len) {
        struct iovec iov[2];
        int k = 0;
        if (c->sent < c->head_len)
            iov[k++] = (struct iovec){c->head + c->sent, c->head_len - c->sent};
        size_t b = c->sent > c->head_len ? c->sent - c->head_len : 0;
        if (c->body_len > b)
            iov[k++] = (struct iovec){(char *)c->body + b, c->body_len - b};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return watch(c, EV_READ | EV_WRITE) == 0 ? 0 : ENOMEM;
        if (w < 0)
            return errno;
        c->sent += (size_t)w;
    }
    c->state = C_READING;
    return watch(c, EV_READ) == 0 ? 0 : ENOMEM;
}

/* The request head: request line, Host, Accept (as curl sends them), the
 * caller's headers (a "Name:" with nothing after it is curl's way of
 * leaving a header out), Content-Length. Returns it (malloc'd), or NULL. */
static char *build_head(const struct url_target *t, const struct http_request *req, size_t *len)
{
    size_t cap = 128 + strlen(t->target) + strlen(t->host_header);
    for (const struct curl_slist *h = req->headers; h; h = h->next)
        cap += strlen(h->data) + 2;
    char *p = malloc(cap);
    if (!p)
        return NULL;
    int k = snprintf(p, cap, "%s %s HTTP/1.1\r\nHost: %s\r\nAccept: */*\r\n", req->body ? "POST" : "GET",
                     t->target, t->host_header);
    for (const struct curl_slist *h = req->headers; h; h = h->next) {
        const char *colon = strchr(h->data, ':');
        if (colon && colon[1 + strspn(colon + 1, " \t")] == '\0')
            continue;
        k += snprintf(p + k, cap - (size_t)k, "%s\r\n", h->data);
    }
    if (req->body)
        k += snprintf(p + k, cap - (size_t)k, "Content-Length: %zu\r\n", req->body_len);
    k += snprintf(p + k, cap - (size_t)k, "\r\n");
    *len = (size_t)k;
    return p;
}

/* The origin for host and port, resolved on first use (getaddrinfo, on
 * the loop: a run has one or two origins, and a numeric address resolves
 * at once). NULL when memory runs out. */
static struct origin *origin_of(struct native *n, const char *host, const char *port)
{
    struct origin *o = n->origins;
    while (o && (strcmp(o->host, host) || strcmp(o->port, port)))
        o = o->next;
    if (o && o->ai)
        return o;
    if (!o) {
        if (!(o = calloc(1, sizeof *o)))
            return NULL;
        snprintf(o->host, sizeof o->host, "%s", host);
        snprintf(o->port, sizeof o->port, "%s", port);
        o->next = n->origins;
        n->origins = o;
    }
    /* a failed lookup is tried again by the next request, as curl looks a name up for each
     * connection: one that failed for a moment does not fail the rest of the run */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    o->gai = getaddrinfo(host, port, &hints, &o->ai);
    if (o->gai)
        o->ai = NULL;
    return o;
}

/* A parser for c's reply that reads what curl reads: Content-Length beside
 * Transfer-Encoding: chunked (the chunks frame the body), the header
 * repeated (on_header_field lets the last one count), control bytes in a
 * header's value. */
static void parser_init(struct conn *c)
{
    http_parser_init(&c->p, HTTP_RESPONSE);
    c->p.data = c;
    c->p.allow_chunked_length = 1;
    c->p.lenient_http_headers = 1;      /* control bytes in a value, as curl takes them */
}

/* Arms c's timer for the nearest of its time limits: the connect's while
 * it connects, the whole transfer's. */
static void arm_timer(struct conn *c)
{
    int64_t at = c->deadline;
    if (c->state == C_CONNECTING && c->connect_deadline && (!at || c->connect_deadline < at))
        at = c->connect_deadline;
    if (!c->timer)
        return;
    if (!at) {
        event_del(c->timer);
        return;
    }
    int64_t left = at - clock_now_ns();
    if (left < 0)
        left = 0;
    struct timeval tv = {(time_t)(left / 1000000000), (suseconds_t)(left % 1000000000 / 1000)};
    evtimer_add(c->timer, &tv);
}

/* Starts c's request on a fresh connection. Returns 0, or -1 when c was
 * failed (fail_later). */
static int connect_fresh(struct conn *c)
{
    char why[400];
    c->addr = c->o->ai;
    c->reused = false;
    c->connect_start = clock_now_ns();      /* a resend's connection has its own connect time limit, as curl */
    c->connect_deadline = c->connect_timeout_ms > 0 ? c->connect_start + (int64_t)c->connect_timeout_ms * 1000000 : 0;
    int e = connect_from(c);
    if (e) {
        CURLcode rc = connect_failure(c, e, why, sizeof why);
        fail_later(c, rc, why);
        return -1;
    }
    arm_timer(c);
    return 0;
}

/* The idle connection to o used most recently, taken off the idle list. */
static struct conn *take_idle(struct native *n, const struct origin *o)
{
    struct conn *c;
    LIST_FOREACH(c, &n->idle, link)
        if (c->o == o) {
            LIST_REMOVE(c, link);
            n->n_idle--;
            return c;
        }
    return NULL;
}

struct conn *native_start(struct native *n, const struct http_request *req, const struct http_handlers *h,
                          void *ud, int64_t *t_start_ns)
{
    if (!n->url || strcmp(n->url, req->url) != 0) {
        free(n->url);
        if (!(n->url = strdup(req->url)) || url_target(req->url, &n->target) != 0) {
            free(n->url);
            n->url = NULL;
            return NULL;
        }
    }
    struct origin *o = origin_of(n, n->target.host, n->target.port);
    size_t head_len;
    char *head = o ? build_head(&n->target, req, &head_len) : NULL;
    if (!head)
        return NULL;
    struct conn *c = take_idle(n, o);
    if (!c && (c = calloc(1, sizeof *c))) {
        c->n = n;
        c->o = o;
        c->fd = -1;
    }
    if (!c) {
        free(head);
        return NULL;
    }
    bool reused = c->fd >= 0;
    *c = (struct conn){.n = n, .o = o, .fd = c->fd, .ev = c->ev, .watching = c->watching, .timer = c->timer,
                       .h = h, .ud = ud, .head = head, .head_len = head_len, .body = req->body,
                       .body_len = req->body ? req->body_len : 0, .reused = reused, .segs_seen = c->segs_seen,
                       .consumed = c->consumed, .aligned = c->aligned, .timeout_ms = req->timeout_ms,
                       .connect_timeout_ms = req->connect_timeout_ms};
    parser_init(c);
    LIST_INSERT_HEAD(&n->busy, c, link);
    n->n_busy++;
    *t_start_ns = c->t_start = clock_now_ns();
    if ((req->timeout_ms > 0 || req->connect_timeout_ms > 0) && !c->timer &&
        !(c->timer = evtimer_new(n->base, on_timer, c))) {
        fail_later(c, CURLE_OUT_OF_MEMORY, "out of memory for a timer");
        return c;
    }
    if (req->timeout_ms > 0)
        c->deadline = c->t_start + (int64_t)req->timeout_ms * 1000000;
    if (!o->ai) {
        char why[400];
        snprintf(why, sizeof why, "Could not resolve host: %s (%s)", o->host, gai_strerror(o->gai));
        fail_later(c, CURLE_COULDNT_RESOLVE_HOST, why);
        return c;
    }
    if (!reused) {
        connect_fresh(c);
        return c;
    }
    c->state = C_SENDING;
    arm_timer(c);
    if (send_more(c) != 0) {    /* the server closed it while it was idle: a fresh one */
        c->resent = true;
        c->sent = 0;
        connect_fresh(c);
    }
    return c;
}

/* --- the reply ---------------------------------------------------------- */

/* Resends c's request on a fresh connection: a reused one the server had
 * closed (no byte of the reply came), as curl does once. Returns 0, or -1
 * when c was failed. */
static int resend(struct conn *c)
{
    c->resent = true;
    c->sent = 0;
    parser_init(c);
    return connect_fresh(c);
}

/* The socket closed (got == 0) or failed (e) before the reply ended. */
static void ended_early(struct conn *c, int e)
{
    if (!c->received && c->reused && !c->resent) {
        resend(c);
        return;
    }
    char why[200];
    if (e)
        snprintf(why, sizeof why, "Recv failure: %s", strerror(e));
    if (e)
        fail(c, CURLE_RECV_ERROR, why);
    else if (!c->received)
        fail(c, CURLE_GOT_NOTHING, "Empty reply from server");
    else
        fail(c, CURLE_PARTIAL_FILE, "transfer closed with outstanding read data remaining");
}

/* What the parser refused, as the transfer's end. */
static void malformed(struct conn *c)
{
    enum http_errno e = HTTP_PARSER_ERRNO(&c->p);
    char why[300];
    if (e == HPE_HEADER_OVERFLOW) {     /* as curl */
        snprintf(why, sizeof why, "Too large response headers: over %d bytes", NATIVE_MAX_HEAD);
        fail(c, CURLE_RECV_ERROR, why);
        return;
    }
    snprintf(why, sizeof why, "the reply is not HTTP/1.1 as anvil reads it: %s (%s)", http_errno_description(e),
             http_errno_name(e));
    /* as curl: a bad head is a weird reply, bad chunk framing a failed receive */
    fail(c, c->status ? CURLE_RECV_ERROR : CURLE_WEIRD_SERVER_REPLY, why);
}

/* Reads what c's socket holds into n->buf, with the stamps of its bytes in
 * n->map. When the kernel's counters say one segment came since the last
 * look and every byte before it was read, the queue is that segment: one
 * read takes it with its stamp (rxstamp_recv). Else the queue is peeked
 * first, its runs dated by offset (rxstamp_peek), then read, and the
 * counters looked at again so that the next read may be the one-segment
 * kind. Returns recv's result. */
static ssize_t read_stamped(struct conn *c)
{
    struct native *n = c->n;
    uint32_t segs;
    uint64_t bytes;
    bool counted = rxstamp_counts(c->fd, &segs, &bytes) == 0;
    uint64_t queued = counted ? bytes - c->consumed : 0;
    ssize_t got;
    if (counted && c->aligned && segs - c->segs_seen == 1 && queued > 0 && queued <= sizeof n->buf) {
        int64_t t;
        got = rxstamp_recv(c->fd, n->buf, (size_t)queued, &t);
        n->map_valid = got > 0 && t;
        n->merged = false;
        if (n->map_valid) {     /* field by field: the map's look buffer is 16 KB */
            n->map.queued = n->map.end[0] = (size_t)got;
            n->map.runs = 1;
            n->map.t[0] = t;
        }
        c->segs_seen = segs;
        c->aligned = got == (ssize_t)queued;
    } else {
        n->map_valid = rxstamp_peek(c->fd, RXSTAMP_RUNS, &n->map) == 0;
        if (n->map_valid) {     /* every buffer its own segment, unless more came than there are runs */
            n->merged = !n->map.segs_in || n->map.segs_in - c->segs_seen > (uint32_t)n->map.runs;
            c->segs_seen = n->map.segs_in;
        }
        got = recv(c->fd, n->buf, sizeof n->buf, MSG_DONTWAIT);
        int e = errno;
        c->aligned = got > 0 && rxstamp_counts(c->fd, &segs, &bytes) == 0 &&
                     bytes == c->consumed + (uint64_t)got;
        if (c->aligned)
            c->segs_seen = segs;
        errno = e;
    }
    if (got > 0)
        c->consumed += (uint64_t)got;
    return got;
}

/* One read of c's socket, framed and handed to the callbacks. */
static void on_readable(struct conn *c)
{
    struct native *n = c->n;
    ssize_t got = read_stamped(c);
    n->read_clock = 0;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (got < 0) {
        ended_early(c, errno);
        return;
    }
    n->cur = c;
    n->hdr_end = 0;
    if (got == 0) {
        http_parser_execute(&c->p, &settings, NULL, 0);    /* a body that ends with the connection */
        n->cur = NULL;
        if (c->complete)
            finish(c, false);
        else
            ended_early(c, 0);
        return;
    }
    if (!c->received && c->sent >= c->head_len) {  /* a reply has begun: no resend from here on */
        free(c->head);
        c->head = NULL;
    }
    c->received += (uint64_t)got;
    size_t used = http_parser_execute(&c->p, &settings, n->buf, (size_t)got);
    bool cancelled = !n->cur;
    n->cur = NULL;
    if (cancelled) {
        free_conn(c);
        return;
    }
    enum http_errno e = HTTP_PARSER_ERRNO(&c->p);
    if (c->rc != CURLE_OK)
        fail(c, c->rc, n->why);
    else if (c->complete)       /* bytes past the reply: the connection cannot be trusted again */
        finish(c, used == (size_t)got && http_should_keep_alive(&c->p));
    else if (e != HPE_OK)
        malformed(c);
}

/* An idle connection became readable: the server closed it, or sent what
 * no request asked for. Either way it is not used again. */
static void idle_readable(struct conn *c)
{
    char b;
    ssize_t got = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    LIST_REMOVE(c, link);
    c->n->n_idle--;
    free_conn(c);
}

static void connected(struct conn *c)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err == EINPROGRESS)
        return;
    if (err) {
        c->addr = c->addr->ai_next;
        int e = c->addr ? connect_from(c) : err;
        if (e) {
            char why[400];
            CURLcode rc = connect_failure(c, e, why, sizeof why);
            fail(c, rc, why);
        }
        return;
    }
    c->connect_deadline = 0;
    c->state = C_SENDING;
    arm_timer(c);
    uint64_t bytes;
    c->aligned = rxstamp_counts(c->fd, &c->segs_seen, &bytes) == 0 && bytes == 0;
    int e = send_more(c);
    if (e) {
        char why[200];
        snprintf(why, sizeof why, "Send failure: %s", strerror(e));
        fail(c, CURLE_SEND_ERROR, why);
    }
}

static void on_event(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    struct conn *c = arg;
    switch (c->state) {
    case C_CONNECTING:
        if (what & EV_WRITE)
            connected(c);
        return;
    case C_SENDING:
        if (what & EV_READ) {       /* a reply before the request is all out (an early error) */
            on_readable(c);
            return;
        }
        if (what & EV_WRITE) {
            int e = send_more(c);
            if (e && c->reused && !c->received && !c->resent) {
                resend(c);      /* the server had closed the kept connection */
            } else if (e) {
                char why[200];
                snprintf(why, sizeof why, "Send failure: %s", strerror(e));
                fail(c, CURLE_SEND_ERROR, why);
            }
        }
        return;
    case C_READING:
        on_readable(c);
        return;
    case C_IDLE:
        idle_readable(c);
        return;
    case C_FAILED:
        return;
    }
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    char why[200];
    int64_t now = clock_now_ns();
    if (c->state == C_CONNECTING && c->connect_deadline && now >= c->connect_deadline) {
        snprintf(why, sizeof why, "Connection timed out after %lld milliseconds",
                 (long long)((now - c->connect_start) / 1000000));
        fail(c, CURLE_OPERATION_TIMEDOUT, why);
    } else if (c->deadline && now >= c->deadline) {
        snprintf(why, sizeof why, "Operation timed out after %lld milliseconds with %llu bytes received",
                 (long long)((now - c->t_start) / 1000000), (unsigned long long)c->body_bytes);
        fail(c, CURLE_OPERATION_TIMEDOUT, why);
    } else {
        arm_timer(c);
    }
}

/* --- parser callbacks --------------------------------------------------- */

/* Hands the body bytes p[0..len) of the current read to on_body, split
 * where their kernel stamps change, each part dated by the segment that
 * holds it (so an SSE event is dated by the part that completes it). */
static int on_body(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    struct native *n = c->n;
    size_t off = (size_t)(at - n->buf);
    c->body_bytes += len;
    while (len > 0 && n->cur) {
        size_t until = 0;
        int64_t t = kernel_stamp(n, off, &until);
        size_t part = t && until - off < len ? until - off : len;
        c->h->on_body(c->ud, arrival(c, t), at, part);
        at += part;
        len -= part;
        off += part;
    }
    if (!n->cur)
        http_parser_pause(p, 1);    /* cancelled from the callback: stop */
    return 0;
}

static int on_message_begin(http_parser *p)
{
    struct conn *c = p->data;
    c->content_type[0] = c->encoding[0] = c->location[0] = c->te[0] = '\0';
    c->in_value = true;         /* the first field starts a new name */
    return 0;
}

static int on_status(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    c->n->hdr_end = (size_t)(at + len - c->n->buf);
    return 0;
}

static bool field_is(const struct conn *c, const char *name)
{
    size_t n = strlen(name);
    return c->field_len == n && memcmp(c->field, name, n) == 0;
}

/* Counts len more bytes of the header line; true (the transfer failed, the
 * parser paused) when the line is longer than curl takes. */
static bool line_too_long(struct conn *c, size_t len)
{
    c->line_len += len;
    if (c->line_len <= NATIVE_MAX_LINE)
        return false;
    c->rc = CURLE_OUT_OF_MEMORY;
    snprintf(c->n->why, sizeof c->n->why, "a header line of the reply is over %d bytes, more than curl takes "
             "(which reports it as out of memory)", NATIVE_MAX_LINE);
    http_parser_pause(&c->p, 1);
    return true;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    c->n->hdr_end = (size_t)(at + len - c->n->buf);
    if (c->in_value) {
        c->in_value = false;
        c->field_len = 0;
        c->line_len = 0;
    }
    if (line_too_long(c, len))
        return 0;
    for (size_t i = 0; i < len && c->field_len <= sizeof c->field; i++) {
        if (c->field_len == sizeof c->field)
            c->field_len++;     /* longer than any name looked for */
        else
            c->field[c->field_len++] = (char)(at[i] | 0x20);
    }
    /* the name is whole before its value starts: a repeated Content-Length
     * (which http_parser refuses) is read as curl does, the last one counting */
    if (field_is(c, "content-length"))
        p->flags &= ~F_CONTENTLENGTH;
    return 0;
}

/* Appends len bytes to the value v (cap bytes, NUL-terminated), cut at cap. */
static void append(char *v, size_t cap, const char *at, size_t len)
{
    size_t k = strlen(v);
    size_t room = cap - 1 - k;
    memcpy(v + k, at, len < room ? len : room);
    v[k + (len < room ? len : room)] = '\0';
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    c->n->hdr_end = (size_t)(at + len - c->n->buf);
    if (line_too_long(c, len))
        return 0;
    if (!c->in_value) {         /* a new value: which header, and the last of a repeated one wins */
        c->in_value = true;
        c->hdr = field_is(c, "content-type") ? HDR_CONTENT_TYPE : field_is(c, "content-encoding") ? HDR_ENCODING
               : field_is(c, "location") ? HDR_LOCATION : field_is(c, "transfer-encoding") ? HDR_TE : HDR_OTHER;
        if (c->hdr == HDR_CONTENT_TYPE)
            c->content_type[0] = '\0';
        else if (c->hdr == HDR_ENCODING)
            c->encoding[0] = '\0';
        else if (c->hdr == HDR_LOCATION)
            c->location[0] = '\0';
        else if (c->hdr == HDR_TE && c->te[0])
            append(c->te, sizeof c->te, ", ", 2);
    }
    if (c->hdr == HDR_CONTENT_TYPE)
        append(c->content_type, sizeof c->content_type, at, len);
    else if (c->hdr == HDR_ENCODING)
        append(c->encoding, sizeof c->encoding, at, len);
    else if (c->hdr == HDR_LOCATION)
        append(c->location, sizeof c->location, at, len);
    else if (c->hdr == HDR_TE)
        append(c->te, sizeof c->te, at, len);
    return 0;
}

/* A value's trailing white space off (http_parser drops the leading). */
static void trim(char *v)
{
    size_t k = strlen(v);
    while (k && (v[k - 1] == ' ' || v[k - 1] == '\t'))
        v[--k] = '\0';
}

/* Whether te (a Transfer-Encoding value) names no coding but chunked and
 * identity. */
static bool plain_transfer(const char *te)
{
    for (const char *p = te; *p;) {
        p += strspn(p, " \t,");
        size_t k = strcspn(p, " \t,;");
        if (k && !(k == 7 && !strncasecmp(p, "chunked", 7)) && !(k == 8 && !strncasecmp(p, "identity", 8)))
            return false;
        p += k;
        p += strcspn(p, ",");   /* parameters */
    }
    return true;
}

/* A header block ended: the final one (not 1xx) is handed on, dated by
 * the segment holding its end (its last bytes share the run of its last
 * header: no unit of the server's ends in between). */
static int on_headers_complete(http_parser *p)
{
    struct conn *c = p->data;
    struct native *n = c->n;
    if (p->status_code < 200)
        return 0;
    c->status = p->status_code;
    trim(c->content_type);
    trim(c->encoding);
    trim(c->location);
    if (c->h->on_content_type)
        c->h->on_content_type(c->ud, c->content_type);
    size_t until;
    c->h->on_headers(c->ud, arrival(c, kernel_stamp(n, n->hdr_end, &until)), c->status);
    if (!n->cur) {
        http_parser_pause(p, 1);    /* cancelled from the callback: stop */
        return 0;
    }
    c->rc = http_judge_head(c->status, c->location, c->encoding, n->why, sizeof n->why);
    if (c->rc == CURLE_OK && !plain_transfer(c->te)) {
        /* curl fails a transfer coding it does not know, and decodes one it
         * does (gzip...) that anvil never asked for: neither is read here */
        char shown[80];
        text_escape(shown, sizeof shown, c->te, strlen(c->te));
        snprintf(n->why, sizeof n->why, "the body is in a transfer coding anvil did not ask for "
                 "(Transfer-Encoding: %s)", shown);
        c->rc = CURLE_BAD_CONTENT_ENCODING;
    }
    if (c->rc != CURLE_OK)
        http_parser_pause(p, 1);
    /* as curl: a 204 or 304 has no body, whatever Content-Length says */
    return c->status == 204 || c->status == 304 ? 1 : 0;
}

static int on_message_complete(http_parser *p)
{
    struct conn *c = p->data;
    if (p->status_code >= 200) {
        c->complete = true;
        http_parser_pause(p, 1);    /* what follows belongs to no request */
    }
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin, .on_status = on_status, .on_header_field = on_header_field,
    .on_header_value = on_header_value, .on_headers_complete = on_headers_complete, .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* --- the transport ------------------------------------------------------ */

/* http_parser's limit on a head is one setting for the process (only this
 * file parses with it): set once, whichever thread makes a transport. */
static pthread_once_t head_limit_once = PTHREAD_ONCE_INIT;

static void set_head_limit(void)
{
    http_parser_set_max_header_size(NATIVE_MAX_HEAD);
}

struct native *native_new(struct event_base *base, long max_idle, struct http_rx *rx)
{
    struct native *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->base = base;
    n->rx = rx;
    n->max_idle = max_idle > 0 ? max_idle : 1;
    pthread_once(&head_limit_once, set_head_limit);
    LIST_INIT(&n->busy);
    LIST_INIT(&n->idle);
    LIST_INIT(&n->failed);
    if (!(n->drain = evtimer_new(base, on_drain, n))) {
        free(n);
        return NULL;
    }
    return n;
}

void native_cancel(struct native *n, struct conn *x)
{
    if (n->cur == x) {          /* inside one of its callbacks: the read's caller frees it */
        n->cur = NULL;
        unlink_busy(x);
        return;
    }
    unlink_busy(x);
    free_conn(x);
}

size_t native_in_flight(const struct native *n)
{
    return n->n_busy;
}

struct conn *native_first(const struct native *n)
{
    struct conn *c = LIST_FIRST(&n->busy);
    return c ? c : LIST_FIRST(&n->failed);
}

void native_free(struct native *n)
{
    if (!n)
        return;
    struct conn *c;
    while ((c = LIST_FIRST(&n->busy)) || (c = LIST_FIRST(&n->failed)))
        native_cancel(n, c);
    while ((c = LIST_FIRST(&n->idle))) {
        LIST_REMOVE(c, link);
        free_conn(c);
    }
    while (n->origins) {
        struct origin *o = n->origins;
        n->origins = o->next;
        if (o->ai)
            freeaddrinfo(o->ai);
        free(o);
    }
    event_free(n->drain);
    free(n->url);
    free(n);
}
