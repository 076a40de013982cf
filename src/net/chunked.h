/* chunked.h — HTTP/1.1 chunked transfer coding (RFC 9112 §7.1), decoded
 * in place: raw body bytes in, the runs of chunk data among them out.
 *
 * The transport hands curl's raw body to this decoder (curl still parses
 * the framing itself, to find the body's end and reject bad framing) so
 * that it knows where each chunk's bytes sit in what was read from the
 * socket, and can date each by the segment that carried it. Bytes may come
 * split at any offset. Chunk extensions and trailer fields are skipped. */
#ifndef ANVIL_NET_CHUNKED_H
#define ANVIL_NET_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

struct chunked {
    int state;          /* where in the framing the next byte falls (chunked.c) */
    uint64_t left;      /* chunk data bytes still to come in the current chunk */
    int digits;         /* hex digits of the current chunk size so far */
};

/* Called for each run of chunk data: p (pointing into the bytes fed) and
 * n > 0 bytes, valid only during the call. */
typedef void (*chunked_data_fn)(void *ud, const char *p, size_t n);

/* Prepares d for a new body. */
void chunked_init(struct chunked *d);

/* Decodes the n raw body bytes at p, calling fn for every run of chunk
 * data among them, in order. Returns 0 while the framing is well formed
 * (bytes after the last chunk's trailer are ignored), -1 at the first
 * malformed byte: a size that is not hex or does not fit 64 bits, or a
 * chunk's data not followed by CRLF. After -1, d stays failed and later
 * calls emit nothing. */
int chunked_feed(struct chunked *d, const char *p, size_t n, chunked_data_fn fn, void *ud);

#endif
