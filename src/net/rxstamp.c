/* rxstamp.c — kernel receive timestamps (see rxstamp.h). */
#include "net/rxstamp.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
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

/* Aligned room for one SO_TIMESTAMPNS control message. */
union rx_ctl {
    char buf[CMSG_SPACE(sizeof(struct timespec))];
    struct cmsghdr align;
};

/* The CLOCK_REALTIME stamp (ns) in a received message's control data, or 0. */
static int64_t stamp_of(struct msghdr *m)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec rx;
            memcpy(&rx, CMSG_DATA(c), sizeof rx);
            return ts_ns(&rx);
        }
    }
    return 0;
}

/* One peek of up to len bytes into buf (NULL: counted, not copied —
 * MSG_TRUNC): the stamp of the buffer holding the last byte it covered, or
 * 0; *got receives how many it covered. */
static int64_t peek_stamp(int fd, void *buf, size_t len, size_t *got)
{
    union rx_ctl ctl;
    struct iovec iov = {buf, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                       .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT | (buf ? 0 : MSG_TRUNC));
    *got = n > 0 ? (size_t)n : 0;
    return n > 0 ? stamp_of(&m) : 0;
}

/* Peek lengths, in p[0..n), that end a unit a server writes at once: a
 * header block or an SSE event, just past "\n\n" or "\n\r\n" — but when
 * "\r\n" follows (the CRLF closing the event's HTTP chunk), past that. At
 * most cap of them, in order, each < n. */
static int unit_ends(const char *p, size_t n, size_t *ends, int cap)
{
    int k = 0;
    for (size_t i = 1; i + 1 < n && k < cap; i++) {
        const char *nl = memchr(p + i, '\n', n - 1 - i);
        if (!nl)
            break;
        i = (size_t)(nl - p);
        bool blank = p[i - 1] == '\n' || (i >= 2 && p[i - 1] == '\r' && p[i - 2] == '\n');
        bool crlf_follows = i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n';
        if (blank && !crlf_follows)
            ends[k++] = i + 1;
    }
    return k;
}

/* Peeks to each of the k lengths in one recvmmsg (MSG_TRUNC: counted, not
 * copied) and stores each one's stamp in t (0 for any not read). */
static void peek_lengths(int fd, const size_t *len, int64_t *t, int k)
{
    struct mmsghdr mm[RXSTAMP_RUNS];
    struct iovec iov[RXSTAMP_RUNS];
    union rx_ctl ctl[RXSTAMP_RUNS];
    for (int i = 0; i < k; i++) {
        iov[i] = (struct iovec){NULL, len[i]};
        mm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1, .msg_control = ctl[i].buf,
                                             .msg_controllen = sizeof ctl[i].buf}};
    }
    int got = recvmmsg(fd, mm, (unsigned)k, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC, NULL);
    for (int i = 0; i < k; i++)
        t[i] = i < got && mm[i].msg_len == len[i] ? stamp_of(&mm[i].msg_hdr) : 0;
}

/* Appends the run ending at end with stamp t, merged into the run before
 * it when their stamps agree. */
static void add_run(struct rxstamp_map *m, size_t end, int64_t t)
{
    if (m->runs > 0 && m->t[m->runs - 1] == t)
        m->runs--;
    m->end[m->runs] = end;
    m->t[m->runs++] = t;
}

/* Splits the queue into runs at the unit ends among its first bytes, each
 * dated by a peek to it; the last run, to the queue's end, gets newest. */
static void find_runs(int fd, int max_runs, int64_t newest, struct rxstamp_map *m)
{
    size_t look;
    size_t ends[RXSTAMP_RUNS];
    int64_t t[RXSTAMP_RUNS];
    int k = 0;
    m->peeks++;
    if (peek_stamp(fd, m->look, m->queued < RXSTAMP_LOOK ? m->queued : RXSTAMP_LOOK, &look))
        k = unit_ends(m->look, look, ends, max_runs - 1);
    if (k > 0) {
        peek_lengths(fd, ends, t, k);
        m->peeks += k;
    }
    for (int i = 0; i < k && t[i]; i++)
        add_run(m, ends[i], t[i]);
    add_run(m, m->queued, newest);
}

uint32_t rxstamp_segs_in(int fd)
{
    uint32_t segs;
    uint64_t bytes;
    return rxstamp_counts(fd, &segs, &bytes) == 0 ? segs : 0;
}

int rxstamp_counts(int fd, uint32_t *segs, uint64_t *bytes)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_data_segs_in) + sizeof ti.tcpi_data_segs_in)
        return -1;
    *segs = ti.tcpi_data_segs_in;
    *bytes = ti.tcpi_bytes_received;    /* before tcpi_data_segs_in in the struct: present too */
    return 0;
}

/* The kernel's CLOCK_REALTIME stamp t (ns) on the CLOCK_MONOTONIC clock,
 * by the two clocks' offset now, and now; 0 when the stamp is not of the
 * past (the wall clock was stepped). The wall clock is read first: a
 * pause between the two reads (this process preempted) then makes the
 * offset smaller than the truth and the stamp later, never earlier. */
static int64_t to_monotonic(int64_t t, int64_t *now)
{
    struct timespec mono, real;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    *now = ts_ns(&mono);
    int64_t m = t - (ts_ns(&real) - *now);
    return m > 0 && m <= *now ? m : 0;
}

ssize_t rxstamp_recv(int fd, void *buf, size_t len, int64_t *t)
{
    union rx_ctl ctl;
    struct iovec iov = {buf, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);
    int64_t now, stamp = n > 0 ? stamp_of(&m) : 0;
    *t = stamp ? to_monotonic(stamp, &now) : 0;
    return n;
}

int rxstamp_peek(int fd, int max_runs, struct rxstamp_map *m)
{
    char byte;
    size_t got;
    m->runs = 0;
    m->peeks = 2;
    m->segs_in = 0;
    int64_t head = peek_stamp(fd, &byte, 1, &got);
    if (!head)
        return -1;
    int64_t newest = peek_stamp(fd, NULL, (size_t)1 << 30, &m->queued);
    if (!newest || m->queued == 0)
        return -1;
    if (max_runs > RXSTAMP_RUNS)
        max_runs = RXSTAMP_RUNS;
    if (newest != head && max_runs > 1)
        find_runs(fd, max_runs, newest, m);
    else
        add_run(m, m->queued, newest);
    /* after the peeks: a segment that came in since counts, but is not in the map (more
     * segments than buffers reads as merged, never the other way) */
    m->segs_in = rxstamp_segs_in(fd);
    /* the kernel stamps in CLOCK_REALTIME: move the stamps onto the
     * monotonic clock by the two clocks' offset now (a step of the wall
     * clock between arrival and now is not undone; NTP slews both alike).
     * The wall clock is read first: a pause between the two reads (this
     * process preempted) then makes the offset smaller than the truth and
     * the stamps later, never earlier. */
    struct timespec mono, real;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    int64_t now = ts_ns(&mono), offset = ts_ns(&real) - now;
    if (head - offset <= 0 || head - offset > now)
        return -1;
    for (int i = 0; i < m->runs; i++) {
        int64_t t = m->t[i] - offset;
        if (i > 0 && t < m->t[i - 1])
            t = m->t[i - 1];        /* readable only once what came before it was */
        m->t[i] = t < now ? t : now;
    }
    return 0;
}

int64_t rxstamp_at(const struct rxstamp_map *m, size_t off, size_t *run_end)
{
    for (int i = 0; i < m->runs; i++) {
        if (off < m->end[i]) {
            *run_end = m->end[i];
            return m->t[i];
        }
    }
    *run_end = off;
    return 0;
}
