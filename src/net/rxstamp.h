/* rxstamp.h — when bytes reached this host, from the kernel, not from the
 * moment the client got around to reading them.
 *
 * The kernel stamps every received TCP segment in its network stack
 * (software receive timestamps, SO_TIMESTAMPNS). Peeking at a socket's
 * receive queue before curl reads it yields those stamps, so a read delayed
 * by the client — a busy loop pass, many streams ready at once, the
 * scheduler waking the process late — still gets the time its bytes
 * arrived.
 *
 * A late read may find several buffers queued. The kernel keeps one stamp
 * per queued buffer (sk_buff), and merges an arriving segment into the
 * buffer before it when it can (not while that buffer's bytes are still
 * unacknowledged on loopback, so separate buffers are common), leaving that
 * buffer with the newest stamp. A peek of L bytes reports the stamp of the
 * buffer holding byte L-1, so peeks of chosen lengths date the queue's
 * bytes by offset: each by the arrival of its segment, or of a later
 * segment merged with it — never earlier. */
#ifndef ANVIL_NET_RXSTAMP_H
#define ANVIL_NET_RXSTAMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Asks the kernel to stamp what fd receives (SO_TIMESTAMPNS). Call before
 * data arrives (e.g. from curl's socket-option callback). Returns 0, or -1
 * with errno set. */
int rxstamp_enable(int fd);

/* The most runs of queued bytes a map tells apart, and how many of the
 * queue's first bytes it reads to find where runs may end. */
#define RXSTAMP_RUNS 16
#define RXSTAMP_LOOK 16384

/* When the bytes a socket's receive queue held arrived, by offset from the
 * queue's head: runs of bytes that share one stamp, in queue order. Run i
 * holds offsets [end[i-1], end[i]) (end[-1] = 0); end[runs-1] == queued. */
struct rxstamp_map {
    size_t queued;                  /* bytes queued at the peek */
    int runs;                       /* 1..RXSTAMP_RUNS after a successful peek */
    size_t end[RXSTAMP_RUNS];
    int64_t t[RXSTAMP_RUNS];        /* CLOCK_MONOTONIC ns, non-decreasing, never later than the peek */
    int peeks;                      /* queue reads made (recvmsg messages): 2 when one stamp */
    uint32_t segs_in;               /* data segments the socket had received by the look (TCP_INFO's
                                       tcpi_data_segs_in); 0 when unknown */
    char look[RXSTAMP_LOOK];        /* scratch: a copy of the queue's first bytes */
};

/* Fills *m from fd's receive queue without consuming it, and m->segs_in
 * (rxstamp_segs_in, read after the peeks). Two peeks read
 * the stamps of the queue's head and of its newest buffer (one byte is
 * copied); when they are equal, every queued byte gets that stamp. When
 * they differ, the queue's first RXSTAMP_LOOK bytes are copied (a third
 * peek) to find where the units a server writes at once end — a header
 * block or an SSE event, with its chunk's CRLF: just past "\n\n" or
 * "\n\r\n" — and one recvmmsg peeks to the first max_runs - 1 of those
 * ends (max_runs 1..RXSTAMP_RUNS), dating each exactly. Every byte gets
 * the stamp of the first such end at or after it (the queue's newest
 * stamp past the last one peeked): its unit's arrival, later for bytes
 * before the unit's last segment, never earlier. A stamp lower than one
 * before it in the queue (a segment received out of order, readable only
 * once the hole was filled) is raised to it. Returns 0, or -1 when there
 * is no stamp: nothing queued, end of stream, an error, timestamps not
 * enabled, or a head stamp after now (the wall clock was stepped). */
int rxstamp_peek(int fd, int max_runs, struct rxstamp_map *m);

/* Data segments fd has received so far (TCP_INFO's tcpi_data_segs_in,
 * Linux 4.6+), or 0 when the kernel does not say. Segments the kernel
 * merged into one buffer count apart: more segments since a look than
 * buffers in the queue means some were merged. */
uint32_t rxstamp_segs_in(int fd);

/* fd's TCP_INFO counters: data segments (tcpi_data_segs_in) and payload
 * bytes (tcpi_bytes_received) received since the connection opened.
 * Returns 0, or -1 when the kernel does not say (older than 4.6). */
int rxstamp_counts(int fd, uint32_t *segs, uint64_t *bytes);

/* Reads (consumes) up to len bytes of fd's queue into buf, nonblocking,
 * with in *t the kernel's stamp of the newest buffer read on the
 * CLOCK_MONOTONIC clock (ns, never later than now), or 0 when there is
 * none. For a read of exactly the bytes of one segment (rxstamp_counts
 * before and after agree on one new segment) that is the segment's own
 * arrival: one syscall where a peek and a read take three. Returns recv's
 * result (errno set on -1). */
ssize_t rxstamp_recv(int fd, void *buf, size_t len, int64_t *t);

/* When the byte at offset off of the queue m describes arrived
 * (CLOCK_MONOTONIC ns), with *run_end set to the end of the run holding it
 * (every offset in [off, *run_end) shares the stamp). Returns 0 for off >=
 * m->queued: a byte that arrived after the peek. */
int64_t rxstamp_at(const struct rxstamp_map *m, size_t off, size_t *run_end);

#endif
