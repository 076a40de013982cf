/* rxstamp-cost.c — CPU cost of one rxstamp_peek (net/rxstamp.h): the
 * look at a socket's receive queue anvil makes before every read. A
 * loopback connection is given a queue of K separately stamped segments
 * (a response's header block, then SSE events)
 * (the client delays its ACKs, as a reused HTTP connection does, so the
 * kernel keeps them apart), which is then peeked N times; prints the CPU
 * time (user + system, getrusage) per peek and the recvmsg calls it made.
 * Usage: bench/rxstamp-cost [N]   (builds build/bench/rxstamp-cost first)
 *        bench/rxstamp-cost knowable   (what a late look still knows of a
 *        first event with later ones queued behind it) */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/rxstamp.h"

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
           u.ru_stime.tv_usec / 1e6;
}

static int must(int rc, const char *what)
{
    if (rc < 0) {
        perror(what);
        exit(1);
    }
    return rc;
}

/* A connected loopback pair whose client delays its ACKs: one exchange,
 * then a request. */
static void connect_pair(int *client, int *server)
{
    int ls = must(socket(AF_INET, SOCK_STREAM, 0), "socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    must(bind(ls, (struct sockaddr *)&a, sizeof a), "bind");
    must(listen(ls, 1), "listen");
    must(getsockname(ls, (struct sockaddr *)&a, &alen), "getsockname");
    *client = must(socket(AF_INET, SOCK_STREAM, 0), "socket");
    must(rxstamp_enable(*client), "SO_TIMESTAMPNS");
    must(connect(*client, (struct sockaddr *)&a, sizeof a), "connect");
    *server = must(accept(ls, NULL, NULL), "accept");
    close(ls);
    int on = 1;
    setsockopt(*server, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    char buf[16];
    must((int)write(*client, "GET", 3), "write");
    must((int)read(*server, buf, sizeof buf), "read");
    sleep_us(1000);
    must((int)write(*server, "200", 3), "write");
    sleep_us(2000);
    must((int)read(*client, buf, sizeof buf), "read");
    must((int)write(*client, "GET", 3), "write");
    must((int)read(*server, buf, sizeof buf), "read");
}

/* One row: K segments 1 ms apart — a header block, then SSE events in
 * HTTP chunks of the simulator's size (~290 bytes) — peeked N times
 * telling apart up to max_runs runs. */
static void row(int k, int max_runs, long n)
{
    int client, server;
    connect_pair(&client, &server);
    static const char headers[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
                                  "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
                                  "Date: Tue, 01 Dec 2026 08:00:00 GMT\r\n\r\n";
    char event[300];
    char data[280];
    memset(data, 'x', sizeof data);
    int len = snprintf(event, sizeof event, "%zx\r\ndata: %.*s\n\n\r\n", (size_t)270 + 8, 270, data);
    for (int i = 0; i < k; i++) {
        if (i == 0)
            must((int)write(server, headers, sizeof headers - 1), "write");
        else
            must((int)write(server, event, (size_t)len), "write");
        sleep_us(1000);
    }
    sleep_us(5000);
    struct rxstamp_map m;
    if (rxstamp_peek(client, max_runs, &m) != 0) {
        fprintf(stderr, "rxstamp-cost: no stamp\n");
        exit(1);
    }
    int runs = m.runs, peeks = m.peeks;
    double t0 = cpu_s();
    for (long i = 0; i < n; i++)
        rxstamp_peek(client, max_runs, &m);
    double ns = (cpu_s() - t0) / (double)n * 1e9;
    printf("| %d | %zu | %d | %d | %d | %.0f |\n", k, m.queued, max_runs, runs, peeks, ns);
    close(client);
    close(server);
}

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The stamp (CLOCK_MONOTONIC ns) a MSG_PEEK of len bytes reports: the
 * buffer holding byte len-1 (0: none). */
static int64_t raw_peek_ns(int fd, size_t len)
{
    char buf[4096];
    union {
        char b[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr a;
    } ctl;
    struct iovec iov = {buf, len < sizeof buf ? len : sizeof buf};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
    if (recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT) <= 0)
        return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec rx, real, mono;
            memcpy(&rx, CMSG_DATA(c), sizeof rx);
            clock_gettime(CLOCK_REALTIME, &real);
            clock_gettime(CLOCK_MONOTONIC, &mono);
            int64_t off = ((int64_t)real.tv_sec - mono.tv_sec) * 1000000000 + (real.tv_nsec - mono.tv_nsec);
            return (int64_t)rx.tv_sec * 1000000000 + rx.tv_nsec - off;
        }
    return 0;
}

/* What the queue still tells of its first event when later ones queued
 * behind it gap_ms apart while nothing read the socket: three SSE events
 * written gap_ms apart, then one look (max runs 16). Prints the error of
 * the first event's stamp (its run) against its write, of the stamps a
 * peek of the head byte and one ending inside the event report, the runs
 * found and how many later events share the first one's stamp. */
static void knowable_row(int gap_ms)
{
    int client, server;
    connect_pair(&client, &server);
    char event[300], data[280];
    memset(data, 'x', sizeof data);
    int len = snprintf(event, sizeof event, "%zx\r\ndata: %.*s\n\n\r\n", (size_t)270 + 8, 270, data);
    int64_t wrote[3];
    for (int i = 0; i < 3; i++) {
        wrote[i] = mono_ns();
        must((int)write(server, event, (size_t)len), "write");
        sleep_us(gap_ms * 1000L);
    }
    struct rxstamp_map m;
    if (rxstamp_peek(client, RXSTAMP_RUNS, &m) != 0) {
        fprintf(stderr, "rxstamp-cost: no stamp\n");
        exit(1);
    }
    size_t end;
    int64_t first = rxstamp_at(&m, 0, &end);
    int64_t head = raw_peek_ns(client, 1), half = raw_peek_ns(client, (size_t)len / 2);
    int later = first == rxstamp_at(&m, (size_t)len, &end) ? (first == rxstamp_at(&m, 2 * (size_t)len, &end) ? 2 : 1) : 0;
    printf("| %d | %d | %.3f | %.3f | %.3f | %d |\n", gap_ms, m.runs, (double)(first - wrote[0]) / 1e6,
           (double)(head - wrote[0]) / 1e6, (double)(half - wrote[0]) / 1e6, later);
    close(client);
    close(server);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "knowable")) {
        printf("| gap between the 3 events (ms) | runs | first event's stamp − its write (ms) | head byte's stamp − write (ms) | "
               "stamp of a peek ending inside it − write (ms) | later events sharing its stamp |\n");
        printf("| --- | --- | --- | --- | --- | --- |\n");
        static const int gaps[] = {1, 10, 30, 50, 100, 200};
        for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++)
            knowable_row(gaps[i]);
        return 0;
    }
    long n = argc > 1 ? atol(argv[1]) : 200000;
    printf("| segments queued | bytes | max runs | runs | recvmsg calls | CPU ns per peek |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    static const int ks[] = {1, 2, 3, 5, 8};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        row(ks[i], RXSTAMP_RUNS, n);
        if (ks[i] > 1)
            row(ks[i], 1, n);
    }
    return 0;
}
