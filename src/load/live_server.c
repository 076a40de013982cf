/* live_server.c — GET /metrics on a thread of its own (evhttp). */
#include "load/live_server.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

struct live_server {
    const struct live_metrics *m;
    struct event_base *base;
    struct evhttp *http;
    struct event *quit;
    int fd, quit_fd, port;
    pthread_t thread;
    bool started;
};

/* The text of one scrape: 64 KiB holds the four histograms many times over. */
#define LIVE_TEXT_MAX (64u << 10)

int live_listen_parse(const char *spec, char *host, size_t hostcap, int *port, char *err, size_t errlen)
{
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    if (!colon) {
        snprintf(err, errlen, "expected HOST:PORT (127.0.0.1:9400, :9400), got '%s'", spec ? spec : "");
        return -1;
    }
    const char *h = spec;
    size_t n = (size_t)(colon - spec);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {     /* [::1]:9400 */
        h++;
        n -= 2;
    } else if (memchr(h, ':', n)) {
        snprintf(err, errlen, "an IPv6 address goes in brackets ([::1]:9400), got '%s'", spec);
        return -1;
    }
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 1 || p > 65535) {
        snprintf(err, errlen, "expected a port from 1 to 65535 after the last ':', got '%s'", spec);
        return -1;
    }
    if (n >= hostcap) {
        snprintf(err, errlen, "host name too long in '%s'", spec);
        return -1;
    }
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (int)p;
    return 0;
}

/* A listening socket on host:port (host "" = every interface), or -1 with
 * why in err. */
static int listen_on(const char *spec, const char *host, int port, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *ai = NULL;
    char ps[8];
    snprintf(ps, sizeof ps, "%d", port);
    int gai = getaddrinfo(host[0] ? host : NULL, ps, &hints, &ai);
    if (gai != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", spec, gai_strerror(gai));
        return -1;
    }
    int fd = -1, why = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        int one = 1;
        if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
                        bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 64) != 0)) {
            why = errno;
            close(fd);
            fd = -1;
        } else if (fd < 0) {
            why = errno;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        snprintf(err, errlen, "cannot listen on %s: %s", spec, strerror(why));
    return fd;
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
    struct live_server *s = arg;
    struct buf text;
    buf_init(&text, LIVE_TEXT_MAX);
    struct evbuffer *body = evbuffer_new();
    if (!body || live_render(s->m, &text) != 0 || evbuffer_add(body, text.data, text.len) != 0) {
        evhttp_send_error(req, 500, "out of memory");
    } else {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                          "text/plain; version=0.0.4; charset=utf-8");
        evhttp_send_reply(req, 200, "OK", body);
    }
    if (body)
        evbuffer_free(body);
    buf_free(&text);
}

static void on_other(struct evhttp_request *req, void *arg)
{
    (void)arg;
    evhttp_send_error(req, 404, "only /metrics here");
}

static void on_quit(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(arg);
}

static void *serve(void *arg)
{
    struct live_server *s = arg;
    event_base_dispatch(s->base);
    return NULL;
}

static void free_server(struct live_server *s)
{
    if (s->http)
        evhttp_free(s->http);   /* closes the socket it accepts on */
    if (s->fd >= 0)             /* not handed to evhttp */
        close(s->fd);
    if (s->quit)
        event_free(s->quit);
    if (s->base)
        event_base_free(s->base);
    if (s->quit_fd >= 0)
        close(s->quit_fd);
    free(s);
}

/* The thread, with the stop signals blocked: they belong to the measuring
 * loop's thread 0 (driver.h). */
static int start_thread(struct live_server *s)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(&s->thread, NULL, serve, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    s->started = rc == 0;
    return rc;
}

struct live_server *live_server_start(const char *spec, const struct live_metrics *m, char *err,
                                      size_t errlen)
{
    char host[256];
    int port;
    if (live_listen_parse(spec, host, sizeof host, &port, err, errlen) != 0)
        return NULL;
    struct live_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    *s = (struct live_server){.m = m, .fd = -1, .quit_fd = -1, .port = port};
    if ((s->fd = listen_on(spec, host, port, err, errlen)) < 0) {
        free_server(s);
        return NULL;
    }
    s->base = event_base_new();
    s->http = s->base ? evhttp_new(s->base) : NULL;
    s->quit_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->quit = s->base && s->quit_fd >= 0 ? event_new(s->base, s->quit_fd, EV_READ, on_quit, s->base) : NULL;
    if (!s->http || !s->quit || event_add(s->quit, NULL) != 0 ||
        evhttp_set_cb(s->http, "/metrics", on_metrics, s) != 0 ||
        !evhttp_accept_socket_with_handle(s->http, s->fd)) {
        snprintf(err, errlen, "cannot serve on %s: out of memory", spec);
        free_server(s);
        return NULL;
    }
    s->fd = -1;     /* evhttp owns it now */
    evhttp_set_gencb(s->http, on_other, NULL);
    evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET);
    evhttp_set_timeout(s->http, 10);
    evhttp_set_max_headers_size(s->http, 16384);   /* a scraper sends a few short lines */
    evhttp_set_max_body_size(s->http, 0);
    if (start_thread(s) != 0) {
        snprintf(err, errlen, "cannot start the metrics thread for %s", spec);
        free_server(s);
        return NULL;
    }
    return s;
}

int live_server_port(const struct live_server *s)
{
    return s->port;
}

void live_server_stop(struct live_server *s)
{
    if (!s)
        return;
    if (s->started) {
        uint64_t one = 1;
        ssize_t w = write(s->quit_fd, &one, sizeof one);
        (void)w;
        pthread_join(s->thread, NULL);
    }
    free_server(s);
}
