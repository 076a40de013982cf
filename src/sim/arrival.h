/* arrival.h — when a request reached the simulator's host: the kernel's
 * receive stamp of its bytes, not the moment the one loop got around to
 * reading them.
 *
 * At 1,024 requests sent at once the loop reads the last of them tens of ms
 * after they arrived (bench/RESULTS.md): stamped by the request callback, a
 * fixed-latency reply was late by that much while its trace called it on
 * time. So every connection that has carried a request sits in a set of
 * our own (an edge-triggered epoll set) watched by one event of the
 * loop's highest priority (0; everything else is at the default, 1): when
 * bytes arrive, it runs before evhttp's read of them and peeks at the
 * socket's receive queue (SO_TIMESTAMPNS, MSG_PEEK of its first 64 KB),
 * keeping the stamp of the newest queued buffer. The request evhttp next
 * parses on that connection takes it as its arrival. A connection's first
 * request (before it is in the set: evhttp does not tell us of accepted
 * sockets) is stamped with the callback's clock, as before. */
#ifndef ANVIL_SIM_ARRIVAL_H
#define ANVIL_SIM_ARRIVAL_H

#include <stdint.h>

struct event_base;
struct sim_arrivals;

/* Watches arrivals on base, which must have been given at least two
 * priorities (event_base_priority_init) before any event was added.
 * Returns NULL when out of memory or descriptors. */
struct sim_arrivals *sim_arrivals_new(struct event_base *base);

/* The arrival (CLOCK_MONOTONIC ns) of the request just parsed on socket fd,
 * given now = clock_now_ns() at its callback: the kernel's stamp of the
 * newest bytes queued when they were last peeked, never later than now;
 * now itself when there is none (the connection's first request, whose
 * socket joins the set here; stamps off; a peek that found nothing). A
 * request whose last bytes arrived between the peek and evhttp's read is
 * dated by the peek's newest bytes (µs early at most). NULL-safe. */
int64_t sim_arrivals_take(struct sim_arrivals *a, int fd, int64_t now);

/* Frees the set and its event (before base). NULL-safe. */
void sim_arrivals_free(struct sim_arrivals *a);

#endif
