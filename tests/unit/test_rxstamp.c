/* test_rxstamp.c — the receive-queue map against real loopback TCP: a
 * server writes a response's header block and chunked SSE events as
 * separate segments at known times while nothing reads; then the map must
 * date every queued byte no earlier than the write that sent it, end its
 * runs on segment boundaries, agree with the kernel's stamp of every byte
 * (read by a peek of each length), date a unit split over two writes by
 * its last, and, told apart fewer runs than there are segments, still date
 * nothing early.
 *
 * The client first makes one request/response exchange, as a reused HTTP
 * connection has: Linux then delays its ACKs (40 ms), so segments that
 * arrive a few ms apart stay separate buffers with their own stamps, not
 * merged (on a fresh connection every segment is ACKed at once and the
 * kernel merges the next one into it). */
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "core/clock.h"
#include "net/rxstamp.h"

struct pair {
    int client, server;
};

static void sleep_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

static struct pair connect_pair(void)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(ls, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(ls, 1), 0);
    cr_assert_eq(getsockname(ls, (struct sockaddr *)&a, &alen), 0);
    struct pair p = {socket(AF_INET, SOCK_STREAM, 0), -1};
    cr_assert_eq(rxstamp_enable(p.client), 0);
    cr_assert_eq(connect(p.client, (struct sockaddr *)&a, sizeof a), 0);
    p.server = accept(ls, NULL, NULL);
    cr_assert_geq(p.server, 0);
    close(ls);
    int on = 1;
    setsockopt(p.server, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    setsockopt(p.client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    /* one exchange, then a request: the client now delays its ACKs */
    char buf[16];
    cr_assert_eq(write(p.client, "GET", 3), 3);
    cr_assert_eq(read(p.server, buf, sizeof buf), 3);
    sleep_us(1000);
    cr_assert_eq(write(p.server, "200", 3), 3);
    sleep_us(2000);
    cr_assert_eq(read(p.client, buf, sizeof buf), 3);
    cr_assert_eq(write(p.client, "GET", 3), 3);
    cr_assert_eq(read(p.server, buf, sizeof buf), 3);
    return p;
}

/* The segments a test server writes: a header block (150 bytes), then
 * SSE events in HTTP chunks (18 bytes each). */
static const char headers[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
                              "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
                              "Date: Tue, 01 Dec 2026 08:00:00 GMT\r\n\r\n";
static const char event[] = "d\r\ndata: token\n\n\r\n";

/* Writes n segments gap_us apart: the header block, then events (or, for
 * split >= 1, event `split` in two writes gap_us apart, cut after its
 * "data: "); fills when each write began (CLOCK_MONOTONIC ns) and where
 * each ends in the stream. Returns the number of writes. */
static int send_segments(struct pair p, int n, int split, long gap_us, int64_t *sent, size_t *end)
{
    size_t at = 0;
    int w = 0;
    for (int i = 0; i < n; i++) {
        const char *s = i == 0 ? headers : event;
        size_t len = i == 0 ? sizeof headers - 1 : sizeof event - 1;
        for (size_t cut = split > 0 && i == split ? 9 : len, done = 0; done < len; cut = len) {
            if (w > 0)
                sleep_us(gap_us);
            sent[w] = clock_now_ns();
            cr_assert_eq(write(p.server, s + done, cut - done), (ssize_t)(cut - done));
            end[w++] = at += cut - done;
            done = cut;
        }
    }
    sleep_us(5000);
    return w;
}

/* The kernel's stamp (CLOCK_REALTIME ns) of the buffer holding byte
 * len-1 of fd's queue, by one peek of len bytes: the reference the map is
 * checked against, byte by byte. */
static int64_t kernel_stamp_of(int fd, size_t len)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {NULL, len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                       .msg_controllen = sizeof ctl.buf};
    cr_assert_eq(recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC), (ssize_t)len);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
            struct timespec t;
            memcpy(&t, CMSG_DATA(c), sizeof t);
            return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
        }
    }
    cr_assert_fail("no receive timestamp");
    return 0;
}

/* Every queued byte is dated no earlier than the write of its segment and
 * no later than the peek; stamps never decrease; a byte past the queue has
 * no stamp (it arrived after the peek). */
static void check_never_early(const struct rxstamp_map *m, int n, const int64_t *sent, const size_t *end,
                              int64_t peeked)
{
    cr_assert_eq(m->queued, end[n - 1], "%zu bytes queued, %zu sent", m->queued, end[n - 1]);
    cr_assert(m->runs >= 1 && m->runs <= RXSTAMP_RUNS, "%d runs", m->runs);
    cr_assert_eq(m->end[m->runs - 1], m->queued);
    int seg = 0;
    for (size_t off = 0; off < m->queued; off++) {
        while (off >= end[seg])
            seg++;
        size_t until;
        int64_t t = rxstamp_at(m, off, &until);
        cr_assert_geq(t, sent[seg], "byte %zu (segment %d) dated %.3f ms before its write", off, seg,
                      (double)(sent[seg] - t) / 1e6);
        cr_assert_leq(t, peeked);
        cr_assert_gt(until, off);
    }
    for (int i = 1; i < m->runs; i++)
        cr_assert_geq(m->t[i], m->t[i - 1]);
    size_t until;
    cr_assert_eq(rxstamp_at(m, m->queued, &until), 0);
}

/* The map's runs against the kernel's stamp of every byte (by a peek of
 * each length): the first max_runs - 1 runs exactly, the last the newest
 * stamp. Stamps are compared as differences from the newest (the map's
 * are on CLOCK_MONOTONIC, the kernel's on CLOCK_REALTIME). */
static void check_against_kernel(int fd, const struct rxstamp_map *m)
{
    int64_t newest = kernel_stamp_of(fd, m->queued);
    for (size_t off = 0; off < m->queued; off++) {
        size_t until;
        int64_t got = rxstamp_at(m, off, &until) - m->t[m->runs - 1];
        int64_t want = until == m->queued ? 0 : kernel_stamp_of(fd, off + 1) - newest;
        cr_assert_eq(got, want, "byte %zu dated %+" PRId64 " ns from the newest, the kernel says %+" PRId64,
                     off, got, want);
    }
}

Test(rxstamp, one_segment_one_run_two_peeks)
{
    struct pair p = connect_pair();
    int64_t sent[1];
    size_t end[1];
    send_segments(p, 1, 0, 0, sent, end);
    struct rxstamp_map m;
    cr_assert_eq(rxstamp_peek(p.client, RXSTAMP_RUNS, &m), 0);
    check_never_early(&m, 1, sent, end, clock_now_ns());
    cr_assert_eq(m.runs, 1);
    cr_assert_eq(m.peeks, 2);
    close(p.client);
    close(p.server);
}

/* Buffers with distinct stamps in fd's queue of queued bytes, by the
 * kernel's stamp of every byte. */
static int kernel_runs(int fd, size_t queued)
{
    int runs = 0;
    int64_t prev = 0;
    for (size_t len = 1; len <= queued; len++) {
        int64_t t = kernel_stamp_of(fd, len);
        runs += t != prev;
        prev = t;
    }
    return runs;
}

/* Connects and queues the header block and four events 2 ms apart. A
 * stall of this process longer than the ACK delay lets the kernel merge
 * them; the scenario is then set up again, up to three times, until the
 * kernel keeps all five apart. Returns the pair and the number of
 * separately stamped buffers (at least 2). */
static struct pair queue_five(int64_t *sent, size_t *end, int *buffers)
{
    for (int attempt = 1;; attempt++) {
        struct pair p = connect_pair();
        send_segments(p, 5, 0, 2000, sent, end);
        *buffers = kernel_runs(p.client, end[4]);
        if (*buffers == 5 || attempt == 3) {
            cr_assert_geq(*buffers, 2, "the kernel merged all five segments (three tries)");
            return p;
        }
        close(p.client);
        close(p.server);
    }
}

/* Each run ends on a segment boundary. */
static void check_run_ends(const struct rxstamp_map *m, int w, const size_t *end)
{
    for (int i = 0; i + 1 < m->runs; i++) {
        bool on_boundary = false;
        for (int k = 0; k < w; k++)
            on_boundary |= m->end[i] == end[k];
        cr_assert(on_boundary, "run %d ends at %zu, inside a segment", i, m->end[i]);
    }
}

/* Headers, then events 2 ms apart, all queued: each run is one buffer,
 * dated by its own arrival — not by the head's, not by a later segment's —
 * for two peeks, a copy of the queue and one recvmmsg of four peeks. */
Test(rxstamp, queued_segments_each_get_their_own_stamp)
{
    int64_t sent[5];
    size_t end[5];
    int buffers;
    struct pair p = queue_five(sent, end, &buffers);
    struct rxstamp_map m;
    cr_assert_eq(rxstamp_peek(p.client, RXSTAMP_RUNS, &m), 0);
    check_never_early(&m, 5, sent, end, clock_now_ns());
    check_against_kernel(p.client, &m);
    check_run_ends(&m, 5, end);
    cr_assert_eq(m.runs, buffers);
    cr_assert_eq(m.peeks, 2 + 1 + 4, "%d peeks", m.peeks);
    close(p.client);
    close(p.server);
}

/* Fewer runs allowed than buffers queued: the first max_runs - 1 units
 * are dated exactly, the rest of the queue by the newest stamp — late,
 * never early. max_runs 1 costs the two peeks only. */
Test(rxstamp, past_max_runs_the_rest_gets_the_newest_stamp)
{
    int64_t sent[5];
    size_t end[5];
    int buffers;
    struct pair p = queue_five(sent, end, &buffers);
    for (int max = 1; max <= 5; max++) {
        struct rxstamp_map m;
        cr_assert_eq(rxstamp_peek(p.client, max, &m), 0);
        check_never_early(&m, 5, sent, end, clock_now_ns());
        check_run_ends(&m, 5, end);
        cr_assert_leq(m.runs, max);
        if (max == 5)
            check_against_kernel(p.client, &m);
        if (max == 1)
            cr_assert_eq(m.peeks, 2, "one run costs the two peeks");
        /* the first max - 1 units' ends are dated as the kernel dates them */
        int64_t newest = kernel_stamp_of(p.client, m.queued);
        for (int u = 0; u < max - 1 && u < 4; u++) {
            size_t until;
            int64_t got = rxstamp_at(&m, end[u] - 1, &until) - m.t[m.runs - 1];
            cr_assert_eq(got, kernel_stamp_of(p.client, end[u]) - newest, "unit %d, max_runs %d", u, max);
        }
    }
    close(p.client);
    close(p.server);
}

/* An event written in two parts 2 ms apart: its first part is dated by
 * the second's arrival (the event is complete only then), never by its
 * own earlier one's being taken for the whole event's. */
Test(rxstamp, a_unit_split_over_two_writes_is_dated_by_its_last)
{
    for (int attempt = 1;; attempt++) {
        struct pair p = connect_pair();
        int64_t sent[8];
        size_t end[8];
        int w = send_segments(p, 3, 1, 2000, sent, end);     /* headers, event 1 in two, event 2 */
        cr_assert_eq(w, 4);
        if (kernel_runs(p.client, end[3]) < 4 && attempt < 3) {
            close(p.client);
            close(p.server);
            continue;
        }
        struct rxstamp_map m;
        cr_assert_eq(rxstamp_peek(p.client, RXSTAMP_RUNS, &m), 0);
        check_never_early(&m, w, sent, end, clock_now_ns());
        size_t until;
        int64_t first_part = rxstamp_at(&m, end[0], &until);
        cr_assert_eq(until, end[2], "event 1's run ends with the event");
        cr_assert_geq(first_part, sent[2], "event 1's first part is dated by its last");
        cr_assert_eq(rxstamp_at(&m, end[2] - 1, &until), first_part);
        close(p.client);
        close(p.server);
        return;
    }
}

Test(rxstamp, an_empty_queue_has_no_stamp)
{
    struct pair p = connect_pair();
    struct rxstamp_map m;
    cr_assert_eq(rxstamp_peek(p.client, RXSTAMP_RUNS, &m), -1);
    close(p.client);
    close(p.server);
}

/* The one-segment read: the counters say one new segment of the bytes
 * sent; one read of exactly those bytes returns them with a stamp no
 * earlier than their write and no later than the read, and the counters
 * then hold nothing unread. */
Test(rxstamp, one_counted_segment_is_read_with_its_stamp)
{
    struct pair p = connect_pair();
    uint32_t segs0, segs1, segs2;
    uint64_t bytes0, bytes1, bytes2;
    cr_assert_eq(rxstamp_counts(p.client, &segs0, &bytes0), 0);
    int64_t sent[1];
    size_t end[1];
    send_segments(p, 1, 0, 0, sent, end);
    cr_assert_eq(rxstamp_counts(p.client, &segs1, &bytes1), 0);
    cr_assert_eq(segs1 - segs0, 1, "one data segment counted, not %u", segs1 - segs0);
    cr_assert_eq(bytes1 - bytes0, end[0], "its bytes counted: %" PRIu64 ", sent %zu", bytes1 - bytes0, end[0]);
    char buf[256];
    int64_t t;
    ssize_t got = rxstamp_recv(p.client, buf, (size_t)(bytes1 - bytes0), &t);
    int64_t now = clock_now_ns();
    cr_assert_eq(got, (ssize_t)end[0]);
    cr_assert(t >= sent[0] && t <= now, "stamp %" PRId64 " outside [write %" PRId64 ", read %" PRId64 "]", t, sent[0],
              now);
    cr_assert_eq(rxstamp_counts(p.client, &segs2, &bytes2), 0);
    cr_assert_eq(bytes2, bytes1, "nothing came after");
    cr_assert_eq(rxstamp_recv(p.client, buf, sizeof buf, &t), -1, "the queue is empty");
    close(p.client);
    close(p.server);
}
