/* buf.h — a growable byte buffer with a hard size cap (after curl's dynbuf). */
#ifndef ANVIL_CORE_BUF_H
#define ANVIL_CORE_BUF_H

#include <stddef.h>

struct buf {
    char *data;     /* owned; always NUL-terminated when len > 0 or after an append */
    size_t len;     /* bytes used, excluding the terminating NUL */
    size_t cap;     /* bytes allocated */
    size_t max;     /* hard cap on len; an append past it fails */
};

/* Initializes an empty buffer that may grow to max bytes. Allocates nothing. */
void buf_init(struct buf *b, size_t max);

/* Appends n bytes. Returns 0, or -1 when len would exceed max or memory runs
 * out (the buffer is then unchanged). */
int buf_append(struct buf *b, const void *p, size_t n);

/* Appends a printf-formatted string. Returns 0 or -1 as buf_append. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Forgets the contents but keeps the allocation for reuse. */
static inline void buf_reset(struct buf *b) { b->len = 0; if (b->data) b->data[0] = '\0'; }

/* Frees the allocation; the buffer is empty and reusable afterwards. */
void buf_free(struct buf *b);

#endif
