/* arrival.c — kernel receive stamps of requests (see arrival.h). */
#include "sim/arrival.h"

#include "core/vec.h"

#include <errno.h>
#include <stdbool.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PEEK_BYTES (64u << 10)
#define READY_BATCH 256

struct sim_arrivals {
    int epfd;
    struct event *ev;
    int64_t *stamp;         /* by descriptor: the last peek's newest stamp (monotonic ns), 0 = none */
    size_t n_stamp;
    char peek[PEEK_BYTES];  /* the peeked bytes: only their stamp is kept */
};

static int64_t ts_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* The newest kernel stamp (CLOCK_REALTIME ns) of fd's first queued bytes,
 * or 0: TCP reports the stamp of the last buffer a read copied from. */
static int64_t peek_newest(struct sim_arrivals *a, int fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {a->peek, sizeof a->peek};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    if (recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT) <= 0)
        return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec rx;
            memcpy(&rx, CMSG_DATA(c), sizeof rx);
            return ts_ns(&rx);
        }
    return 0;
}

/* Stores fd's stamp on the monotonic clock. The wall clock is read first,
 * as in the client (net/rxstamp.c): a pause between the two reads makes
 * the stamp later, never earlier. */
static void note(struct sim_arrivals *a, int fd)
{
    int64_t real_stamp = peek_newest(a, fd);
    if (!real_stamp || fd < 0 || (size_t)fd >= a->n_stamp)
        return;
    struct timespec real, mono;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    int64_t now = ts_ns(&mono), t = real_stamp - (ts_ns(&real) - now);
    a->stamp[fd] = t > 0 && t <= now ? t : 0;
}

static void on_ready(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct sim_arrivals *a = arg;
    struct epoll_event ready[READY_BATCH];
    int n;
    do {
        n = epoll_wait(a->epfd, ready, READY_BATCH, 0);
        for (int i = 0; i < n; i++)
            note(a, ready[i].data.fd);
    } while (n == READY_BATCH);
}

struct sim_arrivals *sim_arrivals_new(struct event_base *base)
{
    struct sim_arrivals *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (a->epfd < 0 || !(a->ev = event_new(base, a->epfd, EV_READ | EV_PERSIST, on_ready, a)) ||
        event_priority_set(a->ev, 0) != 0 || event_add(a->ev, NULL) != 0) {
        sim_arrivals_free(a);
        return NULL;
    }
    return a;
}

/* Room for descriptor fd in the stamp table; false when out of memory. */
static bool grow(struct sim_arrivals *a, int fd)
{
    return VEC_RESERVE_ZEROED(a->stamp, a->n_stamp, (size_t)fd + 1, 64) == 0;
}

int64_t sim_arrivals_take(struct sim_arrivals *a, int fd, int64_t now)
{
    if (!a || fd < 0 || !grow(a, fd))
        return now;
    /* a socket not in the set yet is a new connection (a closed one leaves
     * the set with its descriptor): whatever its number held is stale */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.fd = fd};
    if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) == 0) {
        int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
        a->stamp[fd] = 0;
        return now;
    }
    int64_t t = errno == EEXIST ? a->stamp[fd] : 0;
    a->stamp[fd] = 0;
    return t && t <= now ? t : now;
}

void sim_arrivals_free(struct sim_arrivals *a)
{
    if (!a)
        return;
    if (a->ev)
        event_free(a->ev);
    if (a->epfd >= 0)
        close(a->epfd);
    free(a->stamp);
    free(a);
}
