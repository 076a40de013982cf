/* http.h — HTTP transport: one interface over two transports on a libevent
 * loop, so thousands of streams share one thread: anvil's own HTTP/1.1
 * client for plain http:// (net/native.h: a small struct per connection,
 * http_parser framing) and libcurl's multi interface
 * (curl_multi_socket_action) for the rest: https://, proxies.
 * Every callback gets the CLOCK_MONOTONIC time at which the bytes it is
 * handed arrived, never earlier: the kernel's receive stamp of the buffer
 * holding them (net/rxstamp.h), else the clock before any parsing
 * (docs/METHODOLOGY.md, "Arrival timestamps"). Also a blocking fetch for
 * set-up calls. */
#ifndef ANVIL_NET_HTTP_H
#define ANVIL_NET_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "core/buf.h"

struct http_client;
struct http_xfer;

/* Which transport a client's transfers use (--transport). AUTO is resolved
 * by http_transport_resolve before a client is made. */
enum http_transport { HTTP_TRANSPORT_AUTO, HTTP_TRANSPORT_NATIVE, HTTP_TRANSPORT_CURL };

/* "auto", "native" or "curl". */
const char *http_transport_name(enum http_transport t);

/* The transport that serves url when want is asked for: AUTO is NATIVE for
 * a plain http:// URL without credentials when no proxy variable is set
 * (http_proxy, all_proxy, and their upper-case forms), else CURL. Returns
 * 0 with *got set, or -1 with a one-line message in err (errlen bytes)
 * when NATIVE is asked for a URL it does not speak (https://, credentials
 * in the URL, a zone id, a URL curl refuses). */
int http_transport_resolve(enum http_transport want, const char *url, enum http_transport *got, char *err,
                           size_t errlen);

/* Callbacks of one transfer. ud is the caller's; each gets the arrival time. */
struct http_handlers {
    void (*on_headers)(void *ud, int64_t t_ns, long status);   /* final (non-1xx) header block complete */
    /* Body bytes (chunked coding removed), p valid during the call: one
     * HTTP chunk's data as read, split where the arrival time changes. */
    void (*on_body)(void *ud, int64_t t_ns, const char *p, size_t n);
    /* The transfer ended: rc is CURLE_OK or the transport error, err a message
     * ("" when none). Called exactly once unless http_cancel was called. The
     * transfer is freed after it returns. Besides curl's own codes, rc is
     * CURLE_OUT_OF_MEMORY when a limit of this machine's failed it (no
     * descriptor, no local port, no memory for a socket: curl would say
     * "could not connect"), and one of http_refused's codes when the reply
     * was refused (a redirect, after on_headers with its 3xx status; a
     * content coding anvil did not ask for); err then names it and the fix. */
    void (*on_done)(void *ud, int64_t t_ns, CURLcode rc, const char *err);
    /* The final header block's Content-Type ("" when none), just before
     * on_headers; may be NULL. The string is valid during the call only. */
    void (*on_content_type)(void *ud, const char *content_type);
};

struct http_request {
    const char *url;
    const struct curl_slist *headers;   /* not owned; must outlive the transfer */
    const char *body;                   /* POST body (not owned; must outlive the transfer); NULL = GET */
    size_t body_len;
    long connect_timeout_ms;            /* 0 = curl's default */
    long timeout_ms;                    /* whole transfer; 0 = none */
};

/* Creates a client on base (not owned; must outlive the client) that keeps
 * up to max_connections connections alive for reuse, its transfers on
 * transport t (NATIVE or CURL; AUTO is taken as CURL: resolve it first).
 * NULL on failure. */
struct http_client *http_client_new(struct event_base *base, long max_connections, enum http_transport t);

/* Starts a transfer. *t_start_ns receives the instant it was handed to
 * curl. Returns the transfer, or NULL (nothing started, on_done not called). */
struct http_xfer *http_start(struct http_client *c, const struct http_request *req,
                             const struct http_handlers *h, void *ud, int64_t *t_start_ns);

/* Whether the time last handed to an on_headers or on_body of c is the clock
 * at a read curl made outside anvil's look at the socket (as a request
 * starts, on curl's own timer, while another socket was served): its bytes
 * may have waited unread for any time before it, so their arrival is
 * unknown (an upper bound). Bytes that came in during a looked-at read are
 * dated by the clock too, but within that read: not unknown. */
bool http_arrival_unknown(const struct http_client *c);

/* Whether the time last handed to an on_headers or on_body of c may be
 * shared by bytes that arrived apart from them: it is the clock (one time
 * for a read), or the kernel's stamp of a queue into which more segments
 * came since the last look than it has buffers (the kernel merged some,
 * keeping the newest one's stamp). False: bytes with this time arrived
 * together (one segment, or one write of the server's). */
bool http_arrival_shared(const struct http_client *c);

/* Aborts a transfer in flight; its on_done is not called. */
void http_cancel(struct http_client *c, struct http_xfer *x);

/* Some transfer in flight (the newest), or NULL when none. */
struct http_xfer *http_first(const struct http_client *c);

/* How the arrival times handed to on_headers and on_body were taken. */
struct http_rx_counts {
    long kernel;    /* the kernel's receive timestamp */
    long clock;     /* the client's clock at the callback (no kernel stamp for that read) */
};

/* The counts so far for transfers started on c. */
struct http_rx_counts http_rx_counts(const struct http_client *c);

/* Number of transfers in flight. */
size_t http_in_flight(const struct http_client *c);

/* Cancels what is in flight and frees the client (before its event_base). */
void http_client_free(struct http_client *c);

/* Blocking request for set-up work (model discovery, tokenize, probes).
 * body NULL = GET. Appends the response body to out (at most out->max
 * bytes), stores the status in *status. Returns CURLE_OK or the transport
 * error, with a message in err (errlen bytes); or a code of http_refused:
 * CURLE_FILESIZE_EXCEEDED when the body is longer than out->max (out holds
 * its first bytes), CURLE_TOO_MANY_REDIRECTS for a 3xx reply (anvil follows
 * none), CURLE_BAD_CONTENT_ENCODING for a compressed body anvil did not ask
 * for, err naming what and the fix. A stop request (core/stop.h: Ctrl-C,
 * SIGTERM, SIGHUP) ends it within STOP_POLL_MS: CURLE_ABORTED_BY_CALLBACK,
 * err "stopped by SIGINT". */
CURLcode http_fetch(const char *url, const struct curl_slist *headers, const char *body,
                    long timeout_ms, struct buf *out, long *status, char *err, size_t errlen);

/* Whether rc is http.c's refusal of a reply the server did send (a
 * redirect, an unasked-for content coding, a body past the cap), rather than
 * a failure to reach the server. */
bool http_refused(CURLcode rc);

#endif
