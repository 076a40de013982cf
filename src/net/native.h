/* native.h — anvil's own HTTP/1.1 transport for plain http:// targets: one
 * small struct per connection, nonblocking sockets on the measuring loop's
 * libevent base, keep-alive, responses framed by http_parser (chunked
 * coding removed), the kernel's receive stamps taken on every read. It
 * serves net/http.h's interface (http.c hands a client's transfers here
 * when its transport is HTTP_TRANSPORT_NATIVE) with the same callbacks,
 * the same result codes and the same arrival rules as the curl transport:
 * a transfer is one connection's turn, and a connection is its transfer. */
#ifndef ANVIL_NET_NATIVE_H
#define ANVIL_NET_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "net/http.h"

/* What the last callback's arrival time was, shared with http.c, which
 * answers http_arrival_unknown, http_arrival_shared and http_rx_counts. */
struct http_rx {
    struct http_rx_counts counts;
    bool unknown, shared;
};

struct native;
struct conn;

/* A transport on base (not owned; outlives it) keeping up to max_idle
 * connections open between requests, reporting arrivals into *rx (not
 * owned; outlives it). NULL when memory runs out. */
struct native *native_new(struct event_base *base, long max_idle, struct http_rx *rx);

/* Starts req (req->url must be a url_target one: http://, no credentials)
 * on an idle connection or a new one. *t_start_ns gets the instant before
 * its first byte is written. Returns the transfer, or NULL (nothing
 * started, on_done not called). Failures found at once (a host that does
 * not resolve, no descriptor) reach on_done from the loop, never from
 * inside this call. */
struct conn *native_start(struct native *n, const struct http_request *req, const struct http_handlers *h,
                          void *ud, int64_t *t_start_ns);

/* Aborts x (closes its connection); its on_done is not called. */
void native_cancel(struct native *n, struct conn *x);

/* Transfers in flight, and one of them (NULL when none). */
size_t native_in_flight(const struct native *n);
struct conn *native_first(const struct native *n);

/* Cancels what is in flight, closes idle connections, frees n. */
void native_free(struct native *n);

#endif
