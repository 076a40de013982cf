/* grid.c — lists, labels, order and warm-up timeouts of the decode grid. */
#include "decode/grid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int decode_parse_sizes(const char *s, long min, long *out, size_t cap, char *err, size_t errlen)
{
    size_t n = 0;
    const char *p = s;
    if (!s || !*s) {
        snprintf(err, errlen, "expected a comma-separated list, got an empty value");
        return -1;
    }
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0) {
            snprintf(err, errlen, "'%s': expected whole numbers (k = 1024) separated by commas", s);
            return -1;
        }
        if (*end == 'k' || *end == 'K') {
            if (v > 100000000L / 1024) {
                snprintf(err, errlen, "'%s': %ldk is too large", s, v);
                return -1;
            }
            v *= 1024;
            end++;
        }
        if (*end != ',' && *end) {
            snprintf(err, errlen, "'%s': unexpected '%c'", s, *end);
            return -1;
        }
        if (v < min) {
            snprintf(err, errlen, "'%s': %ld is below %ld", s, v, min);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            if (out[i] == v) {
                snprintf(err, errlen, "'%s': %ld is listed twice", s, v);
                return -1;
            }
        if (n == cap) {
            snprintf(err, errlen, "'%s': at most %zu values", s, cap);
            return -1;
        }
        out[n++] = v;
        if (!*end)
            return (int)n;
        p = end + 1;
    }
}

void decode_size_label(long tokens, char *out, size_t cap)
{
    if (tokens > 0 && tokens % 1024 == 0)
        snprintf(out, cap, "%ldk", tokens / 1024);
    else
        snprintf(out, cap, "%ld", tokens);
}

double decode_warmup_timeout_s(long context_tokens, double override_s)
{
    if (override_s > 0)
        return override_s;
    if (context_tokens <= 32 * 1024)
        return 60;
    return context_tokens < 128 * 1024 ? 120 : 180;
}

/* Index of the smallest value of v. */
static size_t smallest(const long *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] < v[m])
            m = i;
    return m;
}

/* The indexes of v in ascending order of value, into idx. */
static void ascending(const long *v, size_t n, size_t *idx)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[idx[j - 1]] > v[idx[j]]; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}

size_t decode_cell_order(const long *conc, size_t n_conc, const long *ctx, size_t n_ctx,
                         struct decode_cell_ref *out)
{
    size_t ci[DECODE_MAX_LIST], xi[DECODE_MAX_LIST], n = 0;
    if (!n_conc || !n_ctx || n_conc > DECODE_MAX_LIST || n_ctx > DECODE_MAX_LIST)
        return 0;
    ascending(conc, n_conc, ci);
    ascending(ctx, n_ctx, xi);
    size_t low = smallest(conc, n_conc);
    for (size_t j = 0; j < n_ctx; j++)
        out[n++] = (struct decode_cell_ref){low, xi[j]};
    for (size_t j = 0; j < n_ctx; j++)
        for (size_t i = 0; i < n_conc; i++)
            if (ci[i] != low)
                out[n++] = (struct decode_cell_ref){ci[i], xi[j]};
    return n;
}
