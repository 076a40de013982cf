/* scan.c — strict, allocation-free JSON scanning of OpenAI stream chunks.
 * A cursor walks the event once; values not needed are validated and
 * skipped. Any construct where cJSON's reading could differ from a strict
 * reading returns DECLINE, and the caller uses cJSON instead. */
#include "openai/scan.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DECLINE (-1)
#define MAX_DEPTH 64        /* chunks nest 4 deep; deeper input goes to cJSON */
#define MAX_NUMBER 40       /* longer number literals go to cJSON */

struct cur {
    const char *p, *end;
    int depth;
};

/* A scanned string: raw bytes between the quotes and its decoded length. */
struct str {
    const char *raw;
    size_t raw_len;
    size_t bytes;           /* UTF-8 bytes after unescaping */
    bool escaped;
};

static void ws(struct cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char h = p[i];
        v <<= 4;
        if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
        else return DECLINE;
    }
    *out = v;
    return 0;
}

/* \uXXXX at p (after the backslash-u); adds its UTF-8 length to *bytes and
 * returns the escape's length past "\u", or DECLINE. */
static int unicode_escape(const char *p, const char *end, size_t *bytes)
{
    unsigned u, lo;
    if (end - p < 4 || hex4(p, &u) != 0 || u == 0 || (u >= 0xDC00 && u <= 0xDFFF))
        return DECLINE;     /* "\u0000" ends a C string in cJSON; a lone low surrogate fails there */
    if (u < 0xD800 || u > 0xDBFF) {
        *bytes += u < 0x80 ? 1 : u < 0x800 ? 2 : 3;
        return 4;
    }
    if (end - p < 10 || p[4] != '\\' || p[5] != 'u' || hex4(p + 6, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
        return DECLINE;
    *bytes += 4;
    return 10;
}

/* How many of the 8 bytes at p come before the first '"', '\\' or control
 * character (below 0x20): the bytes a string's scan must stop at; 8 when
 * none is there. Word at a time: the "has zero byte" and "has byte less
 * than n" tests of Sean Anderson's Bit Twiddling Hacks flag every such byte
 * and may flag bytes after the first, never one before it, so the lowest
 * flag (the first byte in memory order of a little-endian load) is exact. */
static int plain8(const char *p)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t w, q, b;
    memcpy(&w, p, 8);
    q = w ^ (ones * '"');
    b = w ^ (ones * '\\');
    uint64_t flags = (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w)) & highs;
    if (!flags)
        return 8;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_ctzll(flags) >> 3;
#else
    int k = 0;
    while (k < 8 && (unsigned char)p[k] >= 0x20 && p[k] != '"' && p[k] != '\\')
        k++;
    return k;
#endif
}

static int scan_string(struct cur *c, struct str *s)
{
    if (c->p >= c->end || *c->p != '"')
        return DECLINE;
    const char *p = ++c->p;
    *s = (struct str){.raw = p};
    while (p < c->end) {
        for (int k = 8; k == 8 && c->end - p >= 8;) {     /* plain bytes, eight at a time */
            k = plain8(p);
            p += k;
            s->bytes += (size_t)k;
        }
        if (p >= c->end)
            break;
        unsigned char ch = (unsigned char)*p;
        if (ch == '"') {
            s->raw_len = (size_t)(p - s->raw);
            c->p = p + 1;
            return 0;
        }
        if (ch < 0x20)
            return DECLINE;
        if (ch != '\\') {
            s->bytes++;
            p++;
            continue;
        }
        s->escaped = true;
        if (++p >= c->end)
            return DECLINE;
        if (*p == 'u') {
            int n = unicode_escape(p + 1, c->end, &s->bytes);
            if (n < 0)
                return DECLINE;
            p += 1 + n;
        } else if (strchr("\"\\/bfnrt", *p) && *p) {
            s->bytes++;
            p++;
        } else {
            return DECLINE;
        }
    }
    return DECLINE;
}

/* A strict JSON number; *v receives its value (strtod, as cJSON uses), or
 * nothing when v is NULL (a value skipped). */
static int scan_number(struct cur *c, double *v)
{
    const char *p = c->p, *e = c->end;
    if (p < e && *p == '-')
        p++;
    if (p >= e || *p < '0' || *p > '9' || (*p == '0' && p + 1 < e && p[1] >= '0' && p[1] <= '9'))
        return DECLINE;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    bool integer = !(p < e && (*p == '.' || *p == 'e' || *p == 'E'));
    if (p < e && *p == '.') {
        if (++p >= e || *p < '0' || *p > '9')
            return DECLINE;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        if (++p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || *p < '0' || *p > '9')
            return DECLINE;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    size_t n = (size_t)(p - c->p);
    if (n > MAX_NUMBER)
        return DECLINE;
    if (v && n <= 15 && integer) {
        /* an integer of at most 15 characters: exact in a double, as strtod reads it */
        bool neg = *c->p == '-';
        double x = 0;
        for (const char *q = c->p + neg; q < p; q++)
            x = x * 10 + (*q - '0');
        *v = neg ? -x : x;
    } else if (v) {
        char tmp[MAX_NUMBER + 1];
        memcpy(tmp, c->p, n);
        tmp[n] = '\0';
        *v = strtod(tmp, NULL);
    }
    c->p = p;
    return 0;
}

static int literal(struct cur *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return DECLINE;
    c->p += n;
    return 0;
}

static int skip_value(struct cur *c);

/* After a member or element: the container's closing character (returns 0,
 * the container done), a comma (returns 1, another item follows), else
 * DECLINE. */
static int after_item(struct cur *c, char close)
{
    ws(c);
    if (c->p >= c->end)
        return DECLINE;
    if (*c->p == close) {
        c->p++;
        c->depth--;
        return 0;
    }
    if (*c->p++ != ',')
        return DECLINE;
    ws(c);
    return 1;
}

/* Walks an object, calling member() on each key (cursor at its value, which
 * member must consume). Keys with escapes are declined: cJSON would match
 * them after unescaping. */
static int each_member(struct cur *c, int (*member)(struct cur *, const struct str *key, void *), void *ud)
{
    if (c->p >= c->end || *c->p != '{' || ++c->depth > MAX_DEPTH)
        return DECLINE;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        c->depth--;
        return 0;
    }
    for (;;) {
        struct str key;
        if (scan_string(c, &key) != 0 || key.escaped)
            return DECLINE;
        ws(c);
        if (c->p >= c->end || *c->p++ != ':')
            return DECLINE;
        ws(c);
        if (member(c, &key, ud) != 0)
            return DECLINE;
        int next = after_item(c, '}');
        if (next <= 0)
            return next;
    }
}

static int skip_member(struct cur *c, const struct str *key, void *ud)
{
    (void)key;
    (void)ud;
    return skip_value(c);
}

/* Walks an array, calling element() on each (cursor at the value, which
 * element must consume), with its index. */
static int each_element(struct cur *c, int (*element)(struct cur *, int, void *), void *ud)
{
    if (c->p >= c->end || *c->p != '[' || ++c->depth > MAX_DEPTH)
        return DECLINE;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        c->depth--;
        return 0;
    }
    for (int i = 0;; i++) {
        if (element(c, i, ud) != 0)
            return DECLINE;
        int next = after_item(c, ']');
        if (next <= 0)
            return next;
    }
}

static int skip_element(struct cur *c, int i, void *ud)
{
    (void)i;
    (void)ud;
    return skip_value(c);
}

static int skip_value(struct cur *c)
{
    if (c->p >= c->end)
        return DECLINE;
    struct str s;
    switch (*c->p) {
    case '{': return each_member(c, skip_member, NULL);
    case '[': return each_element(c, skip_element, NULL);
    case '"': return scan_string(c, &s);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default: return scan_number(c, NULL);
    }
}

static bool key_is(const struct str *k, const char *name)
{
    size_t n = strlen(name);
    return k->raw_len == n && memcmp(k->raw, name, n) == 0;
}

/* Which keys were already seen: cJSON reads the first of duplicate keys. */
enum {
    SEEN_CHOICES = 1, SEEN_USAGE = 2, SEEN_ERROR = 4, SEEN_OBJECT = 8, SEEN_DELTA = 16,
    SEEN_CONTENT = 32, SEEN_REASONING = 64, SEEN_REASONING_CONTENT = 128, SEEN_TEXT = 256,
    SEEN_FINISH = 512, SEEN_PROMPT = 1024, SEEN_COMPLETION = 2048, SEEN_DETAILS = 4096,
    SEEN_CACHED = 8192, SEEN_TOOL_CALLS = 16384, SEEN_FUNCTION_CALL = 32768,
};

/* A string field's raw contents (escaped, between the quotes) and decoded length. */
struct span {
    const char *raw;
    size_t raw_len, bytes;
};

struct state {
    struct chunk *out;
    unsigned seen;
    bool delta_is_object;
    struct span delta_content, delta_reasoning, delta_reasoning_content, text;
};

static bool first(struct state *st, unsigned bit)
{
    if (st->seen & bit)
        return false;
    st->seen |= bit;
    return true;
}

/* A string value's raw contents and decoded length; anything else is
 * validated, skipped and read as the empty string. */
static int string_span(struct cur *c, struct span *sp)
{
    *sp = (struct span){0};
    if (c->p < c->end && *c->p == '"') {
        struct str s;
        if (scan_string(c, &s) != 0)
            return DECLINE;
        *sp = (struct span){s.raw, s.raw_len, s.bytes};
        return 0;
    }
    return skip_value(c);
}

/* A string's decoded length when the value is a string, else 0 (skipped). */
static int string_bytes(struct cur *c, size_t *bytes)
{
    struct span sp;
    int rc = string_span(c, &sp);
    *bytes = sp.bytes;
    return rc;
}

/* usage numbers: a non-negative number, else absent (-1), as chunk.c reads them */
static int count_value(struct cur *c, long *out)
{
    if (c->p < c->end && (*c->p == '-' || (*c->p >= '0' && *c->p <= '9'))) {
        double v;
        if (scan_number(c, &v) != 0)
            return DECLINE;
        *out = chunk_count_from_double(v);
        return 0;
    }
    *out = -1;
    return skip_value(c);
}

static int details_member(struct cur *c, const struct str *k, void *ud)
{
    struct state *st = ud;
    if (key_is(k, "cached_tokens") && first(st, SEEN_CACHED))
        return count_value(c, &st->out->cached_tokens);
    return skip_value(c);
}

static int usage_member(struct cur *c, const struct str *k, void *ud)
{
    struct state *st = ud;
    if (key_is(k, "prompt_tokens") && first(st, SEEN_PROMPT))
        return count_value(c, &st->out->prompt_tokens);
    if (key_is(k, "completion_tokens") && first(st, SEEN_COMPLETION))
        return count_value(c, &st->out->completion_tokens);
    if (key_is(k, "prompt_tokens_details") && first(st, SEEN_DETAILS) && c->p < c->end && *c->p == '{')
        return each_member(c, details_member, st);
    return skip_value(c);
}

/* One tool call's delta: its own first-of-duplicates bits, as cJSON reads
 * each object's first key of a name. */
struct tool_call {
    struct chunk *out;
    bool legacy;            /* function_call: name and arguments at the top */
    unsigned seen;
    size_t id, name, args;
};

enum { TC_ID = 1, TC_FUNCTION = 2, TC_NAME = 4, TC_ARGS = 8 };

static bool tc_first(struct tool_call *tc, unsigned bit)
{
    if (tc->seen & bit)
        return false;
    tc->seen |= bit;
    return true;
}

static int function_member(struct cur *c, const struct str *k, void *ud)
{
    struct tool_call *tc = ud;
    if (key_is(k, "name") && tc_first(tc, TC_NAME))
        return string_bytes(c, &tc->name);
    if (key_is(k, "arguments") && tc_first(tc, TC_ARGS))
        return string_bytes(c, &tc->args);
    return skip_value(c);
}

static int tool_call_member(struct cur *c, const struct str *k, void *ud)
{
    struct tool_call *tc = ud;
    if (tc->legacy)
        return function_member(c, k, ud);
    if (key_is(k, "id") && tc_first(tc, TC_ID))
        return string_bytes(c, &tc->id);
    if (key_is(k, "function") && tc_first(tc, TC_FUNCTION) && c->p < c->end && *c->p == '{')
        return each_member(c, function_member, tc);
    return skip_value(c);
}

/* A tool call object (else skipped): adds its bytes, counts it opened. */
static int scan_tool_call(struct cur *c, struct chunk *out, bool legacy)
{
    if (c->p >= c->end || *c->p != '{')
        return skip_value(c);
    struct tool_call tc = {.out = out, .legacy = legacy};
    if (each_member(c, tool_call_member, &tc) != 0)
        return DECLINE;
    out->tool_call_bytes += tc.id + tc.name + tc.args;
    if (tc.id || tc.name)
        out->tool_calls_started++;
    return 0;
}

static int tool_call_element(struct cur *c, int i, void *ud)
{
    (void)i;
    return scan_tool_call(c, ud, false);
}

static int delta_member(struct cur *c, const struct str *k, void *ud)
{
    struct state *st = ud;
    if (key_is(k, "tool_calls") && first(st, SEEN_TOOL_CALLS) && c->p < c->end && *c->p == '[')
        return each_element(c, tool_call_element, st->out);
    if (key_is(k, "function_call") && first(st, SEEN_FUNCTION_CALL))
        return scan_tool_call(c, st->out, true);
    if (key_is(k, "content") && first(st, SEEN_CONTENT))
        return string_span(c, &st->delta_content);
    if (key_is(k, "reasoning") && first(st, SEEN_REASONING))
        return string_span(c, &st->delta_reasoning);
    if (key_is(k, "reasoning_content") && first(st, SEEN_REASONING_CONTENT))
        return string_span(c, &st->delta_reasoning_content);
    return skip_value(c);
}

static int choice_member(struct cur *c, const struct str *k, void *ud)
{
    struct state *st = ud;
    if (key_is(k, "delta") && first(st, SEEN_DELTA)) {
        if (c->p < c->end && *c->p == '{') {
            st->delta_is_object = true;
            return each_member(c, delta_member, st);
        }
        return skip_value(c);
    }
    if (key_is(k, "text") && first(st, SEEN_TEXT))
        return string_span(c, &st->text);
    if (key_is(k, "finish_reason") && first(st, SEEN_FINISH) && c->p < c->end && *c->p == '"') {
        struct str s;
        if (scan_string(c, &s) != 0 || s.escaped || s.raw_len >= sizeof st->out->finish_reason)
            return DECLINE;
        memcpy(st->out->finish_reason, s.raw, s.raw_len);
        st->out->finish_reason[s.raw_len] = '\0';
        return 0;
    }
    return skip_value(c);
}

/* choices: only element 0 matters, and only when it is an object; the
 * rest are validated and passed over. */
static int choice_element(struct cur *c, int i, void *ud)
{
    if (i == 0 && c->p < c->end && *c->p == '{')
        return each_member(c, choice_member, ud);
    return skip_value(c);
}

static int scan_choices(struct cur *c, struct state *st)
{
    if (c->p >= c->end || *c->p != '[')
        return skip_value(c);
    return each_element(c, choice_element, st);
}

static int root_member(struct cur *c, const struct str *k, void *ud)
{
    struct state *st = ud;
    if (key_is(k, "error") && first(st, SEEN_ERROR)) {
        if (literal(c, "null") == 0)
            return 0;
        return DECLINE;     /* an error object: rare, decoded by cJSON */
    }
    if (key_is(k, "object") && first(st, SEEN_OBJECT) && c->p < c->end && *c->p == '"') {
        struct str s;
        if (scan_string(c, &s) != 0 || s.escaped || (s.raw_len == 5 && !memcmp(s.raw, "error", 5)))
            return DECLINE;
        return 0;
    }
    if (key_is(k, "choices") && first(st, SEEN_CHOICES))
        return scan_choices(c, st);
    if (key_is(k, "usage") && first(st, SEEN_USAGE) && c->p < c->end && *c->p == '{')
        return each_member(c, usage_member, st);
    return skip_value(c);
}

int chunk_scan(const char *data, size_t len, struct chunk *out)
{
    memset(out, 0, sizeof *out);
    out->prompt_tokens = out->completion_tokens = out->cached_tokens = -1;
    struct state st = {.out = out};
    struct cur c = {data, data + len, 0};
    ws(&c);
    if (each_member(&c, root_member, &st) != 0)
        return DECLINE;
    out->kind = CHUNK_DATA;
    struct span content = st.delta_is_object ? st.delta_content : st.text;
    struct span reasoning = !st.delta_is_object ? (struct span){0}
                          : st.delta_reasoning.bytes ? st.delta_reasoning : st.delta_reasoning_content;
    out->content_bytes = content.bytes;
    out->reasoning_bytes = reasoning.bytes;
    out->text_spanned = true;
    out->text_raw[0] = content.raw;
    out->text_raw_len[0] = content.raw_len;
    out->text_raw[1] = reasoning.raw;
    out->text_raw_len[1] = reasoning.raw_len;
    return 0;
}
