/* rxstamp.h — when bytes reached this host, from the kernel, not from the
 * moment the client got around to reading them.
 *
 * The kernel stamps every received TCP segment in its network stack
 * (software receive timestamps, SO_TIMESTAMPNS). Peeking at a socket's
 * receive queue before curl reads it yields those stamps, so a read delayed
 * by the client — a busy loop pass, many streams ready at once, the
 * scheduler waking the process late — still gets the time its bytes
 * arrived. A late read may find several segments queued: the kernel keeps
 * one stamp per queued buffer, and merges a segment into the buffer before
 * it whenever it can, leaving that buffer with the newest stamp. So a peek
 * tells when the head buffer's newest bytes arrived and when the queue's
 * newest segment did — never later than the read, but for segments that
 * queued up together, the newest one's time. */
#ifndef ANVIL_NET_RXSTAMP_H
#define ANVIL_NET_RXSTAMP_H

#include <stdint.h>

/* Asks the kernel to stamp what fd receives (SO_TIMESTAMPNS). Call before
 * data arrives (e.g. from curl's socket-option callback). Returns 0, or -1
 * with errno set. */
int rxstamp_enable(int fd);

/* Arrival times of what a socket holds, CLOCK_MONOTONIC ns, never later
 * than the peek. */
struct rxstamp {
    int64_t head;       /* the buffer at the head of the receive queue */
    int64_t newest;     /* the last buffer queued (== head when there is one) */
};

/* Fills *s from fd's receive queue without consuming it: two
 * recvmsg(MSG_PEEK) calls, one of one byte, one over the whole queue
 * without copying (MSG_TRUNC). Returns 0, or -1 when there is no stamp:
 * nothing queued, end of stream, an error, or timestamps not enabled. */
int rxstamp_peek(int fd, struct rxstamp *s);

#endif
