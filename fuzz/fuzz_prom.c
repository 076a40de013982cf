/* fuzz_prom.c — libFuzzer target: the Prometheus text parser on any bytes.
 * It must never crash or read past the input; a text it accepts must give
 * back the same samples when re-rendered from their series keys and values
 * (names, unescaped label values and values, NaN included) and parsed again. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static bool same_value(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    struct prom_snapshot s;
    char err[256];
    if (prom_parse((const char *)data, len, &s, err, sizeof err) != 0) {
        if (!strstr(err, "line ") && !strstr(err, "out of memory"))
            abort();    /* every error names its line */
        return 0;
    }
    struct buf b;
    buf_init(&b, (size_t)1 << 30);
    for (size_t i = 0; i < s.n_samples; i++) {
        const struct prom_sample *m = &s.samples[i];
        if (!m->name[0] || !m->family || !m->family[0])
            abort();
        if (prom_series_key(m, &b) != 0)
            abort();
        double v = m->value;
        if (isnan(v))
            buf_printf(&b, " NaN\n");
        else if (isinf(v))
            buf_printf(&b, " %sInf\n", v > 0 ? "+" : "-");
        else
            buf_printf(&b, " %.17g\n", v);
    }
    struct prom_snapshot again;
    if (prom_parse(b.data ? b.data : "", b.len, &again, err, sizeof err) != 0 || again.n_samples != s.n_samples)
        abort();
    for (size_t i = 0; i < s.n_samples; i++) {
        const struct prom_sample *x = &s.samples[i], *y = &again.samples[i];
        if (strcmp(x->name, y->name) || x->n_labels != y->n_labels || !same_value(x->value, y->value))
            abort();
        for (size_t k = 0; k < x->n_labels; k++)
            if (strcmp(x->labels[k].name, y->labels[k].name) || strcmp(x->labels[k].value, y->labels[k].value))
                abort();
    }
    prom_snapshot_free(&again);
    prom_snapshot_free(&s);
    buf_free(&b);
    return 0;
}
