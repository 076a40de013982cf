/* sse.c — Server-Sent Events framing. Hot path: one memchr-style scan per
 * read, a copy of each data value, no allocation in the steady state. */
#include "net/sse.h"

#include <string.h>

void sse_init(struct sse_parser *p, size_t max_event)
{
    buf_init(&p->line, max_event);
    buf_init(&p->data, max_event);
    buf_init(&p->type, 256);
    p->have_data = false;
    p->skip_lf = false;
    p->bom = 0;
    p->unknown_lines = 0;
}

void sse_reset(struct sse_parser *p)
{
    buf_reset(&p->line);
    buf_reset(&p->data);
    buf_reset(&p->type);
    p->have_data = false;
    p->skip_lf = false;
    p->bom = 0;
}

void sse_free(struct sse_parser *p)
{
    buf_free(&p->line);
    buf_free(&p->data);
    buf_free(&p->type);
}

static int dispatch(struct sse_parser *p, sse_event_fn fn, void *ud)
{
    if (!p->have_data) {        /* spec: no data, no event */
        buf_reset(&p->type);
        return 0;
    }
    if (p->data.len > 0)        /* spec: drop the final '\n' joiner */
        p->data.len--;
    if (buf_append(&p->data, "", 0) != 0)   /* keeps data NUL-terminated */
        return SSE_TOO_LARGE;
    struct sse_event ev = {
        .type = p->type.len ? p->type.data : "",
        .data = p->data.data,
        .data_len = p->data.len,
    };
    int rc = fn(ud, &ev);
    buf_reset(&p->data);
    buf_reset(&p->type);
    p->have_data = false;
    return rc;
}

/* Interprets one complete line (without its terminator). */
static int process_line(struct sse_parser *p, const char *s, size_t n, sse_event_fn fn, void *ud)
{
    if (n == 0)
        return dispatch(p, fn, ud);
    if (s[0] == ':')
        return 0;
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon ? (size_t)(colon - s) : n;
    const char *val = colon ? colon + 1 : s + n;
    size_t val_len = (size_t)(s + n - val);
    if (val_len && *val == ' ') {
        val++;
        val_len--;
    }
    if (name_len == 4 && memcmp(s, "data", 4) == 0) {
        p->have_data = true;
        if (buf_append(&p->data, val, val_len) != 0 || buf_append(&p->data, "\n", 1) != 0)
            return SSE_TOO_LARGE;
    } else if (name_len == 5 && memcmp(s, "event", 5) == 0) {
        buf_reset(&p->type);
        if (buf_append(&p->type, val, val_len) != 0)
            return SSE_TOO_LARGE;
    } else if (!(name_len == 2 && memcmp(s, "id", 2) == 0) && !(name_len == 5 && memcmp(s, "retry", 5) == 0)) {
        p->unknown_lines++;     /* e.g. "dat: {...}": an event the server meant, lost */
    }
    return 0;
}

/* Finds the first '\r' or '\n' in [s, end), or NULL: two memchr (libc's
 * vector scans) rather than one byte loop, which was a tenth of the client's
 * profile on bulk arrival. */
static const char *find_eol(const char *s, const char *end)
{
    const char *lf = memchr(s, '\n', (size_t)(end - s));
    const char *cr = memchr(s, '\r', (size_t)((lf ? lf : end) - s));
    return cr ? cr : lf;
}

/* Passes over a UTF-8 byte order mark at the start of the stream (WHATWG:
 * one leading BOM is dropped), even when it arrives split across reads. The
 * first byte that does not continue a BOM ends the check (a lone partial
 * BOM, invalid UTF-8 anyway, is dropped with it). */
static const char *skip_bom(struct sse_parser *p, const char *s, const char *end)
{
    static const char bom[] = "\xef\xbb\xbf";
    for (; p->bom < 3 && s < end; s++, p->bom++)
        if (*s != bom[p->bom]) {
            p->bom = 3;
            return s;
        }
    return s;
}

int sse_feed(struct sse_parser *p, const char *bytes, size_t n, sse_event_fn fn, void *ud)
{
    const char *s = bytes, *end = bytes + n;
    if (p->bom < 3)
        s = skip_bom(p, s, end);
    if (p->skip_lf && s < end && *s == '\n')
        s++;
    p->skip_lf = false;
    while (s < end) {
        const char *eol = find_eol(s, end);
        if (!eol)
            return buf_append(&p->line, s, (size_t)(end - s)) == 0 ? 0 : SSE_TOO_LARGE;
        int rc;
        if (p->line.len) {      /* finish a line begun in an earlier read */
            if (buf_append(&p->line, s, (size_t)(eol - s)) != 0)
                return SSE_TOO_LARGE;
            rc = process_line(p, p->line.data, p->line.len, fn, ud);
            buf_reset(&p->line);
        } else {
            rc = process_line(p, s, (size_t)(eol - s), fn, ud);
        }
        s = eol + 1;
        if (*eol == '\r') {
            if (s < end && *s == '\n')
                s++;
            else if (s == end)
                p->skip_lf = true;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}
