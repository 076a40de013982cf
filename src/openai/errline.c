/* errline.c — finds llama.cpp's "error:" stream line (see errline.h). One
 * pass over each read, no allocation until an error line is found. */
#include "openai/errline.h"

#include <string.h>

#define ERRLINE_NO 7u   /* past strlen("error:"): this line cannot be an error line */

static const char field[] = "error:";

void errline_init(struct errline *e)
{
    buf_init(&e->value, ERRLINE_MAX);
    e->matched = 0;     /* the stream starts at a line start */
    e->capturing = e->complete = e->leading = false;
}

void errline_free(struct errline *e)
{
    buf_free(&e->value);
}

const char *errline_value(const struct errline *e)
{
    return e->value.len ? e->value.data : "";
}

/* Appends one value byte; what does not fit under ERRLINE_MAX is dropped
 * (buf_append then fails and leaves the buffer as it was). */
static void keep(struct errline *e, char c)
{
    bool first = e->leading;
    e->leading = false;
    if (!(first && c == ' '))
        (void)buf_append(&e->value, &c, 1);
}

/* The first '\n' or '\r' in [p, end), or NULL: two memchr passes, the
 * second bounded by the first's find (SSE lines end in "\n" or "\r\n"). */
static const char *find_eol(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *cr = memchr(p, '\r', (size_t)((nl ? nl : end) - p));
    return cr ? cr : nl;
}

size_t errline_scan(struct errline *e, const char *p, size_t n)
{
    size_t start = 0;   /* where the error line began in p (0: in an earlier call) */
    bool began_here = false;
    const char *end = p + n;
    for (const char *q = p; q < end && !e->complete; q++) {
        char c = *q;
        if (e->capturing) {
            if (c == '\n' || c == '\r')
                e->complete = true;
            else
                keep(e, c);
        } else if (c == '\n' || c == '\r') {
            e->matched = 0;
        } else if (e->matched < sizeof field - 1 && c == field[e->matched]) {
            if (e->matched == 0) {
                start = (size_t)(q - p);
                began_here = true;
            }
            if (++e->matched == sizeof field - 1)
                e->capturing = e->leading = true;
        } else {
            /* not an error line: on to the next line's start (the hot path) */
            e->matched = ERRLINE_NO;
            began_here = false;
            const char *eol = find_eol(q, end);
            if (!eol)
                break;
            q = eol - 1;
        }
    }
    if (!e->capturing)
        return n;
    return began_here ? start : 0;
}
