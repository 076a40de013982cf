/* floor.c — the floor an SSE client can reach: the smallest reader that
 * splits a stream into events, nothing else (no JSON, no records; one
 * clock read per read, as any timing client needs). Run on the same
 * streams as `anvil run` it gives the ratio anvil ÷ floor in CPU µs per
 * event and in memory per idle stream. Two readers:
 *
 *   curl (default): libcurl multi_socket + epoll, one easy handle per
 *     request — the floor of a libcurl transport.
 *   raw: nonblocking TCP sockets + epoll (level-triggered), HTTP/1.1
 *     keep-alive POSTs written by hand, one recvmsg per readiness with
 *     SO_TIMESTAMPNS on (the kernel stamp is read on every read, as a
 *     timing client must), the header block skipped to its blank line, the
 *     chunked coding decoded (Content-Length and read-to-close bodies too),
 *     one shared read buffer — the floor of a native transport.
 *
 * Both count an event at each blank line ("\n\n") of the response body,
 * with the same code, and send the same request. Closed loop: CONCURRENCY
 * requests in flight, the next one sent when one ends (raw: on the same
 * connection once the response has ended), REQUESTS in all.
 *
 * Usage: floor [--curl|--raw] URL CONCURRENCY REQUESTS MAX_TOKENS
 *   (or FLOOR_READER=curl|raw; the flag wins). URL is the chat completions
 *   endpoint, e.g. http://127.0.0.1:8000/v1/chat/completions; raw takes
 *   http:// URLs only. FLOOR_RAW_BUF: the raw reader's read size in bytes
 *   (default 65536; libcurl's own is 16384).
 * Prints one line, the same for both readers: requests, events, wall s,
 * CPU user s, CPU sys s, µs/event. Failed requests (raw: an HTTP status
 * other than 200, a connection lost mid-response) are said on stderr.
 * Build: cc -O2 -Wall -Wextra -Werror -o build/floor bench/floor.c -lcurl */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

static int ep;
static long events, started, finished, failed, total;
static volatile int64_t last_rx;    /* volatile: kept, as a timing client keeps them */
static volatile int64_t last_stamp; /* raw: the kernel's receive stamp of the last read (CLOCK_REALTIME ns) */
static char body[512];
static const char *url;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The SSE split: an event ends at a blank line ("\n\n"); *tail is 1 when
 * the response's previous bytes ended in '\n'. */
static inline void count_events(int *tail, const char *p, size_t len)
{
    if (*tail && len && p[0] == '\n')
        events++;
    for (const char *q = p, *end = p + len; (q = memchr(q, '\n', (size_t)(end - q))); q++)
        if (q + 1 < end && q[1] == '\n')
            events++;
    if (len)
        *tail = p[len - 1] == '\n';
}

/* ---- curl reader ------------------------------------------------------ */

static long timeout_ms = -1;
static struct curl_slist *hdrs;

/* Per transfer: the easy handle and the SSE split's state. */
struct xfer {
    CURL *h;
    int tail; /* 1 when the previous read ended in '\n' */
};

static size_t on_write(char *p, size_t sz, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = sz * n;
    last_rx = now_ns();
    count_events(&x->tail, p, len);
    return len;
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *u, void *sp)
{
    (void)e;
    (void)u;
    struct epoll_event ev = {.data.fd = s};
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL);
        return 0;
    }
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    if (epoll_ctl(ep, sp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0)
        epoll_ctl(ep, EPOLL_CTL_MOD, s, &ev);
    curl_multi_assign(u ? u : NULL, s, (void *)1);
    return 0;
}

static int on_timer(CURLM *m, long ms, void *u)
{
    (void)m;
    (void)u;
    timeout_ms = ms;
    return 0;
}

static void start(CURLM *m)
{
    struct xfer *x = calloc(1, sizeof *x);
    x->h = curl_easy_init();
    curl_easy_setopt(x->h, CURLOPT_URL, url);
    curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(x->h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
    curl_multi_add_handle(m, x->h);
    started++;
}

static void reap(CURLM *m)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE) {
            struct xfer *x;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            long code = 0;
            curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
            if (msg->data.result != CURLE_OK || code != 200)
                failed++;
            curl_multi_remove_handle(m, x->h);
            curl_easy_cleanup(x->h);
            free(x);
            finished++;
            if (started < total)
                start(m);
        }
}

/* The curl reader's whole run: CONCURRENCY transfers, then one more as
 * each ends; returns the multi handle, for the caller to free once the
 * figures are taken (as the raw reader's connections are). */
static CURLM *run_curl(long c)
{
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(m, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, c);
    for (long i = 0; i < c && i < total; i++)
        start(m);
    int running = 1;
    curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT, 0, &running);
    struct epoll_event evs[256];
    while (finished < total) {
        int n = epoll_wait(ep, evs, 256, timeout_ms < 0 ? 1000 : (int)timeout_ms);
        if (n == 0)
            curl_multi_socket_action(m, CURL_SOCKET_TIMEOUT, 0, &running);
        for (int i = 0; i < n; i++) {
            int f = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) | (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                    (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(m, evs[i].data.fd, f, &running);
        }
        reap(m);
    }
    return m;
}

/* ---- raw reader ------------------------------------------------------- */

/* Where a connection is in its request/response cycle. */
enum rstate {
    R_IDLE,       /* no socket, or nothing asked */
    R_CONNECTING, /* connect() in progress */
    R_HEAD,       /* request sent (or being sent); reading the header block */
    R_SIZE,       /* chunked: the chunk-size line's hex digits */
    R_EXT,        /* chunked: the rest of the chunk-size line */
    R_DATA,       /* chunked: chunk data, left bytes to go */
    R_DATA_END,   /* chunked: the CRLF after chunk data */
    R_TRAILER,    /* chunked: after the last chunk, to the blank line */
    R_BODY,       /* Content-Length body, left bytes to go */
    R_TO_CLOSE,   /* body ends when the server closes */
};

/* One keep-alive connection; one slot per unit of CONCURRENCY, reused. */
struct conn {
    int fd;
    int ev;            /* the epoll events registered */
    enum rstate st;
    int tail;          /* SSE split: previous body bytes ended in '\n' */
    int64_t left;      /* bytes of chunk or body still to come */
    size_t woff;       /* bytes of the request written */
    int status;        /* the response's status code */
    int chunked, close_after;
    int64_t clen;      /* Content-Length, or -1 */
    int line_no;       /* header lines seen (0: the status line comes next) */
    unsigned llen;     /* bytes of the current header line kept in line (saturates) */
    char line[48];     /* the start of the current header line */
};

static struct addrinfo *ai;
static char req[1024];
static size_t req_len;
static char *rbuf;
static size_t rbuf_len = 65536;

static int set_ev(struct conn *c, int want)
{
    if (c->ev == want)
        return 0;
    struct epoll_event e = {.events = (uint32_t)want, .data.ptr = c};
    c->ev = want;
    return epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
}

/* A new connection for the slot, carrying one request (counted here). */
static void open_conn(struct conn *c)
{
    started++;
    c->st = R_CONNECTING;
    c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int on = 1;
    if (c->fd < 0 || setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0 ||
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) {
        perror("floor: socket");
        exit(1);
    }
    struct epoll_event e = {.events = EPOLLOUT, .data.ptr = c};
    c->ev = EPOLLOUT;
    if ((connect(c->fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) ||
        epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e) != 0) {
        perror("floor: connect");
        exit(1);
    }
}

static void drop(struct conn *c);

/* Writes what is left of the request; 0 when all or part of it went (the
 * rest waits for EPOLLOUT), -1 when the connection failed (dropped). */
static int send_req(struct conn *c)
{
    while (c->woff < req_len) {
        ssize_t n = send(c->fd, req + c->woff, req_len - c->woff, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return set_ev(c, EPOLLIN | EPOLLOUT);
            drop(c);
            return -1;
        }
        c->woff += (size_t)n;
    }
    return set_ev(c, EPOLLIN);
}

/* Starts the slot's next request on its connection (reset parse state). */
static int begin(struct conn *c)
{
    c->st = R_HEAD;
    c->tail = 0;
    c->woff = 0;
    c->status = 0;
    c->chunked = c->close_after = 0;
    c->clen = -1;
    c->line_no = 0;
    c->llen = 0;
    return send_req(c);
}

/* The connection is lost: a request in flight on it failed (unless its
 * body ends at the close); the slot reconnects while requests remain. */
static void drop(struct conn *c)
{
    if (c->st == R_TO_CLOSE) {
        finished++;
        if (c->status != 200)
            failed++;
    } else if (c->st != R_IDLE) {
        finished++;
        failed++;
    }
    close(c->fd);
    c->fd = -1;
    c->st = R_IDLE;
    if (started < total)
        open_conn(c);
}

/* A response has ended: the next request goes on the same connection. */
static void done(struct conn *c)
{
    finished++;
    if (c->status != 200)
        failed++;
    c->st = R_IDLE;
    if (started < total && !c->close_after) {
        started++;
        begin(c);
    } else if (started < total || c->close_after) {
        close(c->fd);
        c->fd = -1;
        if (started < total)
            open_conn(c);
    } /* else kept open (idle) until the figures are taken */
}

/* One complete header line (its first bytes in c->line). */
static void head_line(struct conn *c)
{
    unsigned n = c->llen < sizeof c->line ? c->llen : (unsigned)sizeof c->line;
    if (n && c->line[n - 1] == '\r' && c->llen <= sizeof c->line)
        n--;
    const char *l = c->line;
    if (c->line_no++ == 0) { /* "HTTP/1.1 200 OK" */
        c->status = n >= 12 ? atoi(l + 9) : 0;
        return;
    }
    if (n == 0) { /* the blank line: the body's framing */
        if (c->chunked) {
            c->st = R_SIZE;
            c->left = 0;
        } else if (c->clen >= 0) {
            c->st = R_BODY;
            c->left = c->clen;
            if (c->left == 0)
                done(c);
        } else {
            c->st = R_TO_CLOSE;
        }
        return;
    }
    if (n >= 18 && !strncasecmp(l, "transfer-encoding:", 18)) {
        for (unsigned i = 18; i + 7 <= n; i++)
            if (!strncasecmp(l + i, "chunked", 7))
                c->chunked = 1;
    } else if (n >= 15 && !strncasecmp(l, "content-length:", 15)) {
        char num[sizeof c->line];
        memcpy(num, l + 15, n - 15);
        num[n - 15] = 0;
        c->clen = strtoll(num, NULL, 10);
    } else if (n >= 11 && !strncasecmp(l, "connection:", 11)) {
        for (unsigned i = 11; i + 5 <= n; i++)
            if (!strncasecmp(l + i, "close", 5))
                c->close_after = 1;
    }
}

/* Feeds one read's bytes to the slot's response parser. */
static void feed(struct conn *c, const char *p, size_t len)
{
    const char *end = p + len;
    while (p < end) {
        switch (c->st) {
        case R_IDLE:
        case R_CONNECTING:
            return; /* bytes no request asked for, or the slot moved on */
        case R_HEAD: {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t k = (size_t)((nl ? nl : end) - p);
            if (c->llen < sizeof c->line) {
                size_t room = sizeof c->line - c->llen;
                memcpy(c->line + c->llen, p, k < room ? k : room);
            }
            c->llen = c->llen + k > sizeof c->line + 1 ? (unsigned)sizeof c->line + 1 : c->llen + (unsigned)k;
            if (!nl)
                return;
            p = nl + 1;
            head_line(c);
            c->llen = 0;
            break;
        }
        case R_SIZE: {
            char ch = *p++;
            int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                                    : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
            if (v >= 0)
                c->left = c->left * 16 + v;
            else if (ch == '\n')
                c->st = c->left ? R_DATA : (c->llen = 0, R_TRAILER);
            else if (ch != '\r')
                c->st = R_EXT;
            break;
        }
        case R_EXT: {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                return;
            p = nl + 1;
            c->st = c->left ? R_DATA : (c->llen = 0, R_TRAILER);
            break;
        }
        case R_DATA:
        case R_BODY: {
            size_t k = (size_t)(end - p) < (uint64_t)c->left ? (size_t)(end - p) : (size_t)c->left;
            count_events(&c->tail, p, k);
            p += k;
            c->left -= (int64_t)k;
            if (c->left == 0) {
                if (c->st == R_BODY)
                    done(c);
                else
                    c->st = R_DATA_END;
            }
            break;
        }
        case R_DATA_END: {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                return;
            p = nl + 1;
            c->st = R_SIZE;
            c->left = 0;
            break;
        }
        case R_TRAILER: {
            char ch = *p++;
            if (ch == '\n') {
                if (c->llen == 0)
                    done(c);
                c->llen = 0;
            } else if (ch != '\r') {
                c->llen = 1;
            }
            break;
        }
        case R_TO_CLOSE:
            count_events(&c->tail, p, (size_t)(end - p));
            return;
        }
    }
}

/* One read: recvmsg with the kernel's receive stamp, one clock read. */
static void on_readable(struct conn *c)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {rbuf, rbuf_len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(c->fd, &m, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        drop(c);
        return;
    }
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(h), sizeof ts);
            last_stamp = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        }
    last_rx = now_ns();
    feed(c, rbuf, (size_t)n);
}

/* http://host[:port][/path] → ai, and the request every connection sends. */
static int parse_url(void)
{
    if (strncmp(url, "http://", 7) != 0) {
        fprintf(stderr, "floor: --raw takes http:// URLs only\n");
        return -1;
    }
    const char *auth = url + 7, *slash = strchr(auth, '/');
    const char *path = slash ? slash : "/";
    size_t alen = slash ? (size_t)(slash - auth) : strlen(auth);
    char host[256], port[16] = "80";
    const char *colon;
    if (alen == 0 || alen >= sizeof host) {
        fprintf(stderr, "floor: bad URL %s\n", url);
        return -1;
    }
    if (auth[0] == '[') { /* [v6]:port */
        const char *rb = memchr(auth, ']', alen);
        if (!rb) {
            fprintf(stderr, "floor: bad URL %s\n", url);
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(rb - auth - 1), auth + 1);
        colon = rb + 1 < auth + alen && rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = memchr(auth, ':', alen);
        snprintf(host, sizeof host, "%.*s", (int)((colon ? colon : auth + alen) - auth), auth);
    }
    if (colon)
        snprintf(port, sizeof port, "%.*s", (int)(auth + alen - colon - 1), colon + 1);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "floor: %s: %s\n", host, gai_strerror(rc));
        return -1;
    }
    int n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: %.*s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     path, (int)alen, auth, strlen(body), body);
    if (n < 0 || (size_t)n >= sizeof req) {
        fprintf(stderr, "floor: request too long\n");
        return -1;
    }
    req_len = (size_t)n;
    return 0;
}

/* The raw reader's whole run: nc (CONCURRENCY, at most REQUESTS)
 * keep-alive connections in conns, each sending its next request when the
 * previous response ends; the caller closes them once the figures are taken. */
static void run_raw(struct conn *conns, long nc)
{
    for (long i = 0; i < nc; i++)
        open_conn(&conns[i]);
    struct epoll_event evs[256];
    while (finished < total) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            struct conn *k = evs[i].data.ptr;
            uint32_t e = evs[i].events;
            if (k->st == R_CONNECTING) {
                int err = 0;
                socklen_t el = sizeof err;
                if (getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
                    drop(k);
                    continue;
                }
                begin(k);
                continue;
            }
            if ((e & EPOLLOUT) && k->st != R_IDLE && k->woff < req_len && send_req(k) != 0)
                continue;
            if (e & (EPOLLIN | EPOLLERR | EPOLLHUP))
                on_readable(k);
        }
    }
}

int main(int argc, char **argv)
{
    const char *reader = getenv("FLOOR_READER");
    if (argc > 1 && (!strcmp(argv[1], "--raw") || !strcmp(argv[1], "--curl"))) {
        reader = argv[1] + 2;
        argc--;
        argv++;
    }
    if (!reader || !*reader)
        reader = "curl";
    if (argc != 5 || (strcmp(reader, "curl") != 0 && strcmp(reader, "raw") != 0)) {
        fprintf(stderr, "usage: floor [--curl|--raw] URL CONCURRENCY REQUESTS MAX_TOKENS\n");
        return 2;
    }
    url = argv[1];
    long c = atol(argv[2]), max_tokens = atol(argv[4]);
    total = atol(argv[3]);
    snprintf(body, sizeof body, "{\"model\":\"anvil-sim\",\"stream\":true,\"max_tokens\":%ld,\"ignore_eos\":true,"
             "\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}", max_tokens);
    int raw = !strcmp(reader, "raw");
    long nc = c < total ? c : total;
    struct conn *conns = NULL;
    CURLM *m = NULL;
    if (raw) {
        const char *b = getenv("FLOOR_RAW_BUF");
        if (b && atol(b) > 0)
            rbuf_len = (size_t)atol(b);
        if (parse_url() != 0)
            return 1;
        rbuf = malloc(rbuf_len);
        conns = calloc((size_t)(nc > 0 ? nc : 1), sizeof *conns);
        if (!rbuf || !conns) {
            perror("floor");
            return 1;
        }
    } else {
        hdrs = curl_slist_append(NULL, "Content-Type: application/json");
        hdrs = curl_slist_append(hdrs, "Expect:");
        curl_global_init(CURL_GLOBAL_DEFAULT);
    }
    ep = epoll_create1(0);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    int64_t t0 = now_ns();
    if (raw)
        run_raw(conns, nc);
    else
        m = run_curl(c);
    double wall = (double)(now_ns() - t0) / 1e9;
    getrusage(RUSAGE_SELF, &r1);
    double us = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6;
    double sy = (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
    printf("requests %ld events %ld wall_s %.3f cpu_user_s %.3f cpu_sys_s %.3f us_per_event %.3f\n", finished,
           events, wall, us, sy, events ? (us + sy) * 1e6 / (double)events : 0);
    if (failed)
        fprintf(stderr, "floor: %ld of %ld requests failed\n", failed, finished);
    if (raw) {
        for (long i = 0; i < nc; i++)
            if (conns[i].fd >= 0)
                close(conns[i].fd);
        free(conns);
        free(rbuf);
        freeaddrinfo(ai);
    } else {
        curl_multi_cleanup(m);
        curl_slist_free_all(hdrs);
        curl_global_cleanup();
    }
    return 0;
}
