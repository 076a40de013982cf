/* test_chunked.c — chunked transfer decoding: the data runs come out whole
 * and in order however the raw bytes are split, extensions and trailers are
 * skipped, bad framing fails, and every run points into the bytes fed (the
 * transport dates each by its offset). */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "net/chunked.h"

struct out {
    char data[512];
    size_t len;
    int runs;
    const char *fed;        /* the piece being fed: runs must point into it */
    size_t fed_len;
};

static void collect(void *ud, const char *p, size_t n)
{
    struct out *o = ud;
    cr_assert_gt(n, 0);
    cr_assert(p >= o->fed && p + n <= o->fed + o->fed_len, "a run outside the bytes fed");
    cr_assert_lt(o->len + n, sizeof o->data);
    memcpy(o->data + o->len, p, n);
    o->len += n;
    o->runs++;
}

static int feed(struct chunked *d, struct out *o, const char *p, size_t n)
{
    o->fed = p;
    o->fed_len = n;
    return chunked_feed(d, p, n, collect, o);
}

/* Decodes raw whole, split once at every offset, and byte by byte; each
 * time the data is want and the return codes rc. */
static void check(const char *raw, const char *want, int rc)
{
    size_t len = strlen(raw);
    for (size_t a = 0; a <= len; a++) {
        struct chunked d;
        struct out o = {0};
        chunked_init(&d);
        int r1 = feed(&d, &o, raw, a);
        int r2 = feed(&d, &o, raw + a, len - a);
        cr_assert_eq(r1 == -1 || r2 == -1 ? -1 : 0, rc, "split at %zu", a);
        cr_assert_eq(o.len, strlen(want), "split at %zu: %zu bytes of data, want %zu", a, o.len, strlen(want));
        cr_assert_eq(memcmp(o.data, want, o.len), 0, "split at %zu", a);
    }
    struct chunked d;
    struct out o = {0};
    chunked_init(&d);
    int r = 0;
    for (size_t i = 0; i < len; i++)
        r |= feed(&d, &o, raw + i, 1);
    cr_assert_eq(r, rc);
    cr_assert_eq(o.len, strlen(want));
    cr_assert_eq(memcmp(o.data, want, o.len), 0);
}

Test(chunked, chunks_and_last_chunk)
{
    check("5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n", "hello, world", 0);
}

Test(chunked, hex_sizes_in_either_case)
{
    check("A\r\n0123456789\r\nb\r\nabcdefghijk\r\n0\r\n\r\n", "0123456789abcdefghijk", 0);
}

Test(chunked, extensions_and_trailers_are_skipped)
{
    check("4;name=\"v;1\"\r\ndata\r\n3 ; x\r\nabc\r\n0;end\r\nExpires: never\r\nX-A: b\r\n\r\n", "dataabc", 0);
}

Test(chunked, lf_only_line_ends)
{
    check("3\nabc\n2\nde\n0\n\n", "abcde", 0);
}

Test(chunked, leading_zeros_in_a_size)
{
    check("000000000000000000004\r\nabcd\r\n0\r\n\r\n", "abcd", 0);
}

Test(chunked, bytes_after_the_end_are_ignored)
{
    check("2\r\nok\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n", "ok", 0);
}

Test(chunked, data_that_holds_crlf_and_digits)
{
    check("6\r\n\r\n0\r\n\r\r\n0\r\n\r\n", "\r\n0\r\n\r", 0);
}

Test(chunked, a_size_that_is_not_hex_fails)
{
    check("zz\r\nabc\r\n", "", -1);
}

Test(chunked, data_longer_than_its_size_fails)
{
    check("2\r\nabc\r\n0\r\n\r\n", "ab", -1);
}

Test(chunked, a_size_over_64_bits_fails)
{
    check("10000000000000000\r\n", "", -1);
}

Test(chunked, nothing_is_emitted_after_a_failure)
{
    struct chunked d;
    struct out o = {0};
    chunked_init(&d);
    cr_assert_eq(feed(&d, &o, "2\r\nabX", 6), -1);
    cr_assert_eq(feed(&d, &o, "\r\n3\r\nxyz\r\n", 10), -1);
    cr_assert_eq(o.len, 2);
}

/* One run per chunk when a read holds whole chunks; a chunk split across
 * reads comes out in two runs, each inside its own read. */
Test(chunked, one_run_per_chunk_in_a_read)
{
    const char *raw = "3\r\nabc\r\n4\r\ndefg\r\n";
    struct chunked d;
    struct out o = {0};
    chunked_init(&d);
    cr_assert_eq(feed(&d, &o, raw, strlen(raw)), 0);
    cr_assert_eq(o.runs, 2);
    cr_assert_eq(feed(&d, &o, "5\r\nhi", 5), 0);
    cr_assert_eq(feed(&d, &o, "jkl\r\n", 5), 0);
    cr_assert_eq(o.runs, 4);
    cr_assert_eq(memcmp(o.data, "abcdefghijkl", 12), 0);
}
