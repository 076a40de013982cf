/* chunked.c — chunked transfer decoding (see chunked.h). The grammar
 * (RFC 9112 §7.1):
 *     chunk      = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *     last-chunk = 1*("0") [ chunk-ext ] CRLF
 *     body       = *chunk last-chunk trailer-section CRLF
 * A lone LF is taken for CRLF wherever one ends a line, as curl does. */
#include "net/chunked.h"

#include <stdbool.h>

enum {
    SIZE,           /* hex digits of a chunk size */
    EXT,            /* after the size: extension or whitespace, up to LF */
    DATA,           /* d->left bytes of chunk data */
    DATA_END,       /* the CRLF after chunk data */
    TRAILER_START,  /* start of a trailer line, or the empty line ending the body */
    TRAILER,        /* inside a trailer field, up to LF */
    DONE,           /* the body ended; what follows is ignored */
    FAILED,
};

void chunked_init(struct chunked *d)
{
    *d = (struct chunked){.state = SIZE};
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The state after byte c of the framing (any state but DATA). */
static int step(struct chunked *d, char c)
{
    switch (d->state) {
    case SIZE: {
        int v = hex_value(c);
        if (v >= 0) {
            if (d->left >> 60)
                return FAILED;              /* the size does not fit 64 bits */
            d->left = d->left << 4 | (uint64_t)v;
            d->digits++;
            return SIZE;
        }
        if (d->digits == 0)
            return FAILED;
        return c == '\n' ? (d->left ? DATA : TRAILER_START) : EXT;
    }
    case EXT:
        return c == '\n' ? (d->left ? DATA : TRAILER_START) : EXT;
    case DATA_END:
        if (c == '\r')
            return DATA_END;
        if (c != '\n')
            return FAILED;
        d->digits = 0;
        return SIZE;
    case TRAILER_START:
        return c == '\n' ? DONE : c == '\r' ? TRAILER_START : TRAILER;
    case TRAILER:
        return c == '\n' ? TRAILER_START : TRAILER;
    default:
        return d->state;
    }
}

int chunked_feed(struct chunked *d, const char *p, size_t n, chunked_data_fn fn, void *ud)
{
    size_t i = 0;
    while (i < n && d->state != FAILED && d->state != DONE) {
        if (d->state == DATA) {
            size_t run = n - i < d->left ? n - i : (size_t)d->left;
            fn(ud, p + i, run);
            i += run;
            d->left -= run;
            if (!d->left)
                d->state = DATA_END;
            continue;
        }
        d->state = step(d, p[i++]);
    }
    return d->state == FAILED ? -1 : 0;
}
