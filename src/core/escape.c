/* escape.c — control characters of others' text made visible (escape.h). */
#include "core/escape.h"

#include <stdio.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at p (n bytes left), 0 when the
 * byte at p does not start one (RFC 3629, table 3-7 of Unicode 15). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!k || n < k)
        return 0;
    unsigned char lo = 0x80, hi = 0xBF;    /* the second byte's range */
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return k;
}

size_t text_escape(char *out, size_t cap, const char *text, size_t len)
{
    if (!cap)
        return 0;
    const unsigned char *p = (const unsigned char *)text;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        char esc[8];
        const char *piece = esc;
        size_t n, step = 1;
        unsigned char c = p[i];
        size_t u = c >= 0x80 ? utf8_len(p + i, len - i) : 0;
        if (c == '\n' || c == '\t' || c == '\r')
            n = (size_t)snprintf(esc, sizeof esc, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
        else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !u))
            n = (size_t)snprintf(esc, sizeof esc, "\\x%02x", c);
        else if (u == 2 && c == 0xC2 && p[i + 1] <= 0x9F)    /* C1: U+0080..U+009F */
            n = (size_t)snprintf(esc, sizeof esc, "\\u%04x", p[i + 1]), step = 2;
        else
            piece = (const char *)p + i, n = step = u ? u : 1;
        if (o + n >= cap)
            break;
        memcpy(out + o, piece, n);
        o += n;
        i += step;
    }
    out[o] = '\0';
    return o;
}
