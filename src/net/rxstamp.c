/* rxstamp.c — kernel receive timestamps (see rxstamp.h). */
#include "net/rxstamp.h"

#include <string.h>
#include <sys/socket.h>
#include <time.h>

int rxstamp_enable(int fd)
{
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}

static int64_t ts_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* The CLOCK_REALTIME stamp (ns) of the last buffer a peek of len bytes
 * touches, or 0. With MSG_TRUNC, TCP skips the copy (iov is not written). */
static int64_t peek_stamp(int fd, size_t len, int flags)
{
    char byte;
    union {     /* aligned room for one SO_TIMESTAMPNS message */
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {flags & MSG_TRUNC ? NULL : &byte, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                       .msg_controllen = sizeof ctl.buf};
    if (recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT | flags) <= 0)
        return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec rx;
            memcpy(&rx, CMSG_DATA(c), sizeof rx);
            return ts_ns(&rx);
        }
    }
    return 0;
}

int rxstamp_peek(int fd, struct rxstamp *s)
{
    int64_t head = peek_stamp(fd, 1, 0);
    if (!head)
        return -1;
    int64_t newest = peek_stamp(fd, 1 << 30, MSG_TRUNC);
    /* the kernel stamps in CLOCK_REALTIME: move the stamps onto the
     * monotonic clock by the two clocks' offset now (a step of the wall
     * clock between arrival and now is not undone; NTP slews both alike) */
    struct timespec mono, real;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    int64_t now = ts_ns(&mono), offset = ts_ns(&real) - now;
    s->head = head - offset;
    s->newest = newest >= head ? newest - offset : s->head;
    if (s->head <= 0 || s->head > now)
        return -1;
    if (s->newest > now)
        s->newest = now;
    return 0;
}
