/* floor.c — the floor an SSE client can reach: the smallest libcurl multi
 * + epoll reader that splits a stream into events, nothing else (no JSON,
 * no records; one clock read per read callback, as any timing client
 * needs). Run on the same streams as `anvil run` it gives the ratio
 * anvil ÷ floor in CPU µs per event.
 *
 * Usage: floor URL CONCURRENCY REQUESTS MAX_TOKENS
 *   URL is the chat completions endpoint, e.g. http://127.0.0.1:8000/v1/chat/completions.
 * Prints one line: requests, events, wall s, CPU user s, CPU sys s, µs/event.
 * Build: cc -O2 -o build/floor bench/floor.c -lcurl */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>

#include <curl/curl.h>

static int ep;
static long timeout_ms = -1;
static long events, started, finished, total;
static int64_t last_rx;
static char body[512];
static struct curl_slist *hdrs;
static const char *url;

/* Per transfer: how many bytes of "\n\n" were matched across reads. */
struct xfer {
    CURL *h;
    int tail;   /* 1 when the previous read ended in '\n' */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The SSE split: an event ends at a blank line ("\n\n"). */
static size_t on_write(char *p, size_t sz, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = sz * n;
    last_rx = now_ns();
    if (x->tail && len && p[0] == '\n')
        events++;
    for (const char *q = p, *end = p + len; (q = memchr(q, '\n', (size_t)(end - q))); q++)
        if (q + 1 < end && q[1] == '\n')
            events++;
    x->tail = len && p[len - 1] == '\n';
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
            curl_multi_remove_handle(m, x->h);
            curl_easy_cleanup(x->h);
            free(x);
            finished++;
            if (started < total)
                start(m);
        }
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: floor URL CONCURRENCY REQUESTS MAX_TOKENS\n");
        return 2;
    }
    url = argv[1];
    long c = atol(argv[2]), max_tokens = atol(argv[4]);
    total = atol(argv[3]);
    snprintf(body, sizeof body, "{\"model\":\"anvil-sim\",\"stream\":true,\"max_tokens\":%ld,\"ignore_eos\":true,"
             "\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}", max_tokens);
    hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ep = epoll_create1(0);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(m, CURLMOPT_SOCKETDATA, m);
    curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, c);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    int64_t t0 = now_ns();
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
    double wall = (double)(now_ns() - t0) / 1e9;
    getrusage(RUSAGE_SELF, &r1);
    double us = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6;
    double sy = (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
    printf("requests %ld events %ld wall_s %.3f cpu_user_s %.3f cpu_sys_s %.3f us_per_event %.3f\n", finished,
           events, wall, us, sy, events ? (us + sy) * 1e6 / (double)events : 0);
    curl_multi_cleanup(m);
    curl_slist_free_all(hdrs);
    curl_global_cleanup();
    return 0;
}
