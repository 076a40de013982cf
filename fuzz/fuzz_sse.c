/* fuzz_sse.c — libFuzzer target: SSE framing gives the same events whether
 * the bytes arrive whole or split at an offset taken from the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

struct log {
    char buf[1 << 16];
    size_t len;
};

static int record(void *ud, const struct sse_event *ev)
{
    struct log *l = ud;
    size_t tl = strlen(ev->type);
    if (l->len + tl + ev->data_len + 2 < sizeof l->buf) {
        memcpy(l->buf + l->len, ev->type, tl);
        l->buf[l->len + tl] = 1;
        memcpy(l->buf + l->len + tl + 1, ev->data, ev->data_len);
        l->buf[l->len + tl + 1 + ev->data_len] = 2;
        l->len += tl + ev->data_len + 2;
    }
    return 0;
}

static int feed(const char *p, size_t len, size_t split, struct log *l)
{
    struct sse_parser s;
    sse_init(&s, 1 << 14);
    int a = sse_feed(&s, p, split, record, l);
    int b = a ? a : sse_feed(&s, p + split, len - split, record, l);
    sse_free(&s);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len < 1)
        return 0;
    size_t split = data[0] % len;
    static struct log whole, parts;
    whole.len = parts.len = 0;
    int a = feed((const char *)data + 1, len - 1, 0, &whole);
    int b = feed((const char *)data + 1, len - 1, split < len - 1 ? split : 0, &parts);
    if (a != b || (a == 0 && (whole.len != parts.len || memcmp(whole.buf, parts.buf, whole.len))))
        abort();
    return 0;
}
