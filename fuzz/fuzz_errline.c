/* fuzz_errline.c — libFuzzer target: llama.cpp's "error:" line is found at
 * the same place, with the same value, whether the bytes arrive whole or
 * split at an offset taken from the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "openai/errline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

/* Where the error line starts in the whole input (len when none). */
static size_t scan(const char *p, size_t len, size_t split, struct errline *e)
{
    errline_init(e);
    size_t a = errline_scan(e, p, split);
    bool began = e->capturing;      /* the line began in the first part */
    if (e->complete)
        return a;
    size_t b = errline_scan(e, p + split, len - split);
    return began ? a : split + b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len < 1)
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = len - 1, split = data[0] % len;
    if (split > n)
        split = n;
    struct errline whole, parts;
    size_t a = scan(p, n, n, &whole), b = scan(p, n, split, &parts);
    /* a line that began before the split is reported at offset 0 of the second part */
    bool same = whole.capturing == parts.capturing && whole.complete == parts.complete &&
                !strcmp(errline_value(&whole), errline_value(&parts)) &&
                (!whole.capturing || a == b || (b == split && a < split));
    errline_free(&whole);
    errline_free(&parts);
    if (!same)
        abort();
    return 0;
}
