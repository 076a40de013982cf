/* test_sse.c — SSE framing: whole, split at every byte, byte by byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "net/sse.h"

#define MAXEV 16

struct seen {
    int n;
    char *data[MAXEV];
    char type[MAXEV][32];
};

static int collect(void *ud, const struct sse_event *ev)
{
    struct seen *s = ud;
    cr_assert_lt(s->n, MAXEV);
    cr_assert_eq(strlen(ev->data), ev->data_len, "data must be NUL-terminated at data_len");
    s->data[s->n] = strndup(ev->data, ev->data_len);
    snprintf(s->type[s->n], sizeof s->type[0], "%s", ev->type);
    s->n++;
    return 0;
}

static void seen_free(struct seen *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->data[i]);
    s->n = 0;
}

/* Feeds input in pieces: split at every offset pair (a, b) when `pieces` is
 * 3, or once at each offset when 2, and checks the events each time. */
static void check_splits(const char *in, int n_expect, const char *const expect[])
{
    size_t len = strlen(in);
    for (size_t a = 0; a <= len; a++) {
        struct sse_parser p;
        struct seen s = {0};
        sse_init(&p, 1 << 20);
        cr_assert_eq(sse_feed(&p, in, a, collect, &s), 0);
        cr_assert_eq(sse_feed(&p, in + a, len - a, collect, &s), 0);
        cr_assert_eq(s.n, n_expect, "split at %zu: %d events, want %d", a, s.n, n_expect);
        for (int i = 0; i < n_expect; i++)
            cr_assert_str_eq(s.data[i], expect[i], "split at %zu, event %d", a, i);
        seen_free(&s);
        sse_free(&p);
    }
    /* byte by byte */
    struct sse_parser p;
    struct seen s = {0};
    sse_init(&p, 1 << 20);
    for (size_t i = 0; i < len; i++)
        cr_assert_eq(sse_feed(&p, in + i, 1, collect, &s), 0);
    cr_assert_eq(s.n, n_expect);
    for (int i = 0; i < n_expect; i++)
        cr_assert_str_eq(s.data[i], expect[i]);
    seen_free(&s);
    sse_free(&p);
}

Test(sse, lf_events_at_every_split)
{
    const char *in = "data: {\"a\":1}\n\ndata: {\"b\":\"\xc3\xa9\"}\n\ndata: [DONE]\n\n";
    const char *want[] = {"{\"a\":1}", "{\"b\":\"\xc3\xa9\"}", "[DONE]"};
    check_splits(in, 3, want);
}

Test(sse, leading_byte_order_mark_is_dropped)
{
    const char *in = "\xef\xbb\xbf" "data: first\n\ndata: second\n\n";
    const char *want[] = {"first", "second"};
    check_splits(in, 2, want);
}

Test(sse, crlf_and_cr_line_ends)
{
    const char *in = "data: one\r\n\r\ndata: two\r\rdata: three\n\r\n";
    const char *want[] = {"one", "two", "three"};
    check_splits(in, 3, want);
}

Test(sse, comments_ids_and_unknown_fields_are_ignored)
{
    const char *in = ": keep-alive\n\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n:ping\n\n";
    const char *want[] = {"x"};
    check_splits(in, 1, want);
}

/* Unknown fields are ignored, as the format says, but counted: "dat:" and
 * a line with no colon are events the server meant; comments, id and retry
 * are not. */
Test(sse, lines_of_no_field_are_counted)
{
    const char *in = ": keep-alive\nid: 7\nretry: 100\ndat: {\"a\":1}\n\ndata: x\n\nnonsense\n\n";
    struct sse_parser p;
    struct seen s = {0};
    sse_init(&p, 1 << 20);
    cr_assert_eq(sse_feed(&p, in, strlen(in), collect, &s), 0);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(p.unknown_lines, 2);
    seen_free(&s);
    sse_free(&p);
}

Test(sse, multi_line_data_is_joined_with_newlines)
{
    const char *in = "data: a\ndata:b\ndata\n\n";
    const char *want[] = {"a\nb\n"};
    check_splits(in, 1, want);
}

Test(sse, event_type_is_reported)
{
    struct sse_parser p;
    struct seen s = {0};
    sse_init(&p, 1 << 20);
    const char *in = "event: error\ndata: {\"message\":\"boom\"}\n\ndata: next\n\n";
    cr_assert_eq(sse_feed(&p, in, strlen(in), collect, &s), 0);
    cr_assert_eq(s.n, 2);
    cr_assert_str_eq(s.type[0], "error");
    cr_assert_str_eq(s.type[1], "", "the type resets after each event");
    seen_free(&s);
    sse_free(&p);
}

Test(sse, no_event_without_data_and_partial_event_is_held)
{
    struct sse_parser p;
    struct seen s = {0};
    sse_init(&p, 1 << 20);
    const char *in = "event: x\n\ndata: pending";
    cr_assert_eq(sse_feed(&p, in, strlen(in), collect, &s), 0);
    cr_assert_eq(s.n, 0);
    cr_assert_eq(sse_feed(&p, "\n\n", 2, collect, &s), 0);
    cr_assert_eq(s.n, 1);
    cr_assert_str_eq(s.data[0], "pending");
    seen_free(&s);
    sse_free(&p);
}

Test(sse, event_of_300_kb_in_many_reads)
{
    size_t big = 300 * 1024;
    char *in = malloc(big + 16);
    memcpy(in, "data: ", 6);
    memset(in + 6, 'x', big);
    memcpy(in + 6 + big, "\n\n", 3);
    struct sse_parser p;
    struct seen s = {0};
    sse_init(&p, 1 << 20);
    size_t len = big + 8;
    for (size_t off = 0; off < len; off += 4096) {
        size_t n = len - off < 4096 ? len - off : 4096;
        cr_assert_eq(sse_feed(&p, in + off, n, collect, &s), 0);
    }
    cr_assert_eq(s.n, 1);
    cr_assert_eq(strlen(s.data[0]), big);
    seen_free(&s);
    sse_free(&p);
    free(in);
}

Test(sse, event_over_the_cap_is_refused)
{
    struct sse_parser p;
    struct seen s = {0};
    sse_init(&p, 64);
    char in[200];
    memset(in, 'y', sizeof in);
    memcpy(in, "data: ", 6);
    cr_assert_eq(sse_feed(&p, in, sizeof in, collect, &s), SSE_TOO_LARGE);
    cr_assert_eq(s.n, 0);
    sse_free(&p);
}

static int stop_after_first(void *ud, const struct sse_event *ev)
{
    (void)ev;
    (*(int *)ud)++;
    return 42;
}

Test(sse, callback_can_stop_the_feed)
{
    struct sse_parser p;
    int calls = 0;
    sse_init(&p, 1 << 20);
    const char *in = "data: a\n\ndata: b\n\n";
    cr_assert_eq(sse_feed(&p, in, strlen(in), stop_after_first, &calls), 42);
    cr_assert_eq(calls, 1);
    sse_free(&p);
}
