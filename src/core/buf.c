/* buf.c — growable byte buffer with a cap. */
#include "core/buf.h"

#include "core/vec.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->max = max;
}

static int buf_reserve(struct buf *b, size_t need)
{
    return need == SIZE_MAX ? -1 : VEC_RESERVE(b->data, b->cap, need + 1, 256);
}

int buf_append(struct buf *b, const void *p, size_t n)
{
    if (n > b->max - b->len || buf_reserve(b, b->len + n) != 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n > b->max - b->len || buf_reserve(b, b->len + (size_t)n) != 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
