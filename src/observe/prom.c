/* prom.c — Prometheus / OpenMetrics text parser (see prom.h). One pass over
 * the lines; strings are copied (label values unescaped) into one arena
 * sized from the input, so no string outlives or overruns it. */
#include "observe/prom.h"

#include "core/vec.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parse in progress. */
struct parser {
    struct prom_snapshot *s;
    char *arena_end;        /* next free byte of s->arena */
    size_t cap_samples, cap_families, n_labels, cap_labels;
    size_t *label_first;    /* per sample: index of its first label in s->label_store */
    uint32_t *table;        /* family hash table: index + 1, 0 = empty */
    size_t table_cap;       /* power of two */
    int line;
    char *err;
    size_t errlen;
};

static const char *const type_names[] = {
    [PROM_UNTYPED] = "untyped", [PROM_COUNTER] = "counter", [PROM_GAUGE] = "gauge",
    [PROM_HISTOGRAM] = "histogram", [PROM_SUMMARY] = "summary", [PROM_INFO] = "info",
    [PROM_STATESET] = "stateset", [PROM_GAUGEHISTOGRAM] = "gaugehistogram",
};

const char *prom_type_name(enum prom_type t)
{
    return (unsigned)t < sizeof type_names / sizeof *type_names ? type_names[t] : "untyped";
}

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "line %d: %s", p->line, msg);
    return -1;
}

static bool is_ws(char c) { return c == ' ' || c == '\t'; }
static bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
static bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
static bool label_start(char c) { return name_start(c) && c != ':'; }
static bool label_char(char c) { return name_char(c) && c != ':'; }

static const char *skip_ws(const char *q, const char *end)
{
    while (q < end && is_ws(*q))
        q++;
    return q;
}

/* Copies n bytes into the arena as a NUL-terminated string. The arena holds
 * 2·len + 64 bytes: every copied string is a part of the input, at most one
 * per input byte, so copies and their NULs always fit. */
static char *arena_copy(struct parser *p, const char *src, size_t n)
{
    char *d = p->arena_end;
    memcpy(d, src, n);
    d[n] = '\0';
    p->arena_end += n + 1;
    return d;
}

/* ---- families ---------------------------------------------------------------- */

static uint32_t hash_name(const char *s, size_t n)
{
    uint32_t h = 2166136261u;                   /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void table_put(struct parser *p, size_t idx)
{
    const char *name = p->s->families[idx].name;
    size_t i = hash_name(name, strlen(name)) & (p->table_cap - 1);
    while (p->table[i])
        i = (i + 1) & (p->table_cap - 1);
    p->table[i] = (uint32_t)idx + 1;
}

/* The family named exactly name[0..n), or -1. */
static long family_find(const struct parser *p, const char *name, size_t n)
{
    if (!p->table_cap)
        return -1;
    for (size_t i = hash_name(name, n) & (p->table_cap - 1); p->table[i]; i = (i + 1) & (p->table_cap - 1)) {
        const char *f = p->s->families[p->table[i] - 1].name;
        if (!strncmp(f, name, n) && f[n] == '\0')
            return (long)p->table[i] - 1;
    }
    return -1;
}

/* Adds family name (copied unless it is already an arena string). Returns
 * its index or -1 when memory runs out. */
static long family_add(struct parser *p, const char *name, size_t n, bool in_arena)
{
    struct prom_snapshot *s = p->s;
    if (VEC_RESERVE(s->families, p->cap_families, s->n_families + 1, 64) != 0)
        return -1;
    if ((s->n_families + 1) * 2 > p->table_cap) {     /* keep the table at most half full */
        size_t cap = p->table_cap ? p->table_cap * 2 : 128;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        free(p->table);
        p->table = t;
        p->table_cap = cap;
        for (size_t i = 0; i < s->n_families; i++)
            table_put(p, i);
    }
    s->families[s->n_families] = (struct prom_family){
        .name = in_arena ? name : arena_copy(p, name, n), .type = PROM_UNTYPED};
    table_put(p, s->n_families);
    return (long)s->n_families++;
}

/* The family a sample named name[0..n) belongs to (see prom.h); -1 = none. */
static long family_of_sample(const struct parser *p, const char *name, size_t n)
{
    static const struct { const char *suffix; unsigned types; } rules[] = {
        {"_bucket", 1u << PROM_HISTOGRAM | 1u << PROM_GAUGEHISTOGRAM},
        {"_count", 1u << PROM_HISTOGRAM | 1u << PROM_SUMMARY},
        {"_sum", 1u << PROM_HISTOGRAM | 1u << PROM_SUMMARY},
        {"_gcount", 1u << PROM_GAUGEHISTOGRAM}, {"_gsum", 1u << PROM_GAUGEHISTOGRAM},
        {"_total", 1u << PROM_COUNTER},
        {"_created", 1u << PROM_COUNTER | 1u << PROM_HISTOGRAM | 1u << PROM_SUMMARY},
        {"_info", 1u << PROM_INFO},
    };
    long f = family_find(p, name, n);
    if (f >= 0)
        return f;
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        size_t k = strlen(rules[i].suffix);
        if (n <= k || memcmp(name + n - k, rules[i].suffix, k) != 0)
            continue;
        f = family_find(p, name, n - k);
        if (f >= 0 && (rules[i].types >> p->s->families[f].type & 1u))
            return f;
    }
    return -1;
}

/* ---- comment lines ------------------------------------------------------------- */

static int parse_type_word(const char *w, size_t n, enum prom_type *out)
{
    for (size_t t = 0; t < sizeof type_names / sizeof *type_names; t++)
        if (strlen(type_names[t]) == n && !memcmp(type_names[t], w, n)) {
            *out = (enum prom_type)t;
            return 0;
        }
    if (n == 7 && !memcmp(w, "unknown", 7)) {    /* OpenMetrics' name for untyped */
        *out = PROM_UNTYPED;
        return 0;
    }
    return -1;
}

/* Unescapes HELP text (\\ and \n; any other backslash stays) into the arena. */
static char *copy_help(struct parser *p, const char *q, const char *end)
{
    char *d = p->arena_end, *o = d;
    while (q < end) {
        if (*q == '\\' && q + 1 < end && (q[1] == '\\' || q[1] == 'n')) {
            *o++ = q[1] == 'n' ? '\n' : '\\';
            q += 2;
        } else {
            *o++ = *q++;
        }
    }
    *o = '\0';
    p->arena_end = o + 1;
    return d;
}

/* "# HELP name text", "# TYPE name type", "# EOF", or another comment. */
static int parse_comment(struct parser *p, const char *q, const char *end)
{
    q = skip_ws(q + 1, end);
    const char *w = q;
    while (q < end && !is_ws(*q))
        q++;
    size_t wn = (size_t)(q - w);
    if (wn == 3 && !memcmp(w, "EOF", 3) && skip_ws(q, end) == end) {
        p->s->eof = true;
        return 0;
    }
    bool help = wn == 4 && !memcmp(w, "HELP", 4), type = wn == 4 && !memcmp(w, "TYPE", 4);
    if (!help && !type)
        return 0;                       /* UNIT and free comments */
    q = skip_ws(q, end);
    const char *name = q;
    if (q == end || !name_start(*q))
        return fail(p, "# %s without a valid metric name", help ? "HELP" : "TYPE");
    while (q < end && name_char(*q))
        q++;
    size_t nn = (size_t)(q - name);
    if (q < end && !is_ws(*q))
        return fail(p, "invalid character in the metric name of # %s", help ? "HELP" : "TYPE");
    long f = family_find(p, name, nn);
    if (f < 0 && (f = family_add(p, name, nn, false)) < 0)
        return fail(p, "out of memory");
    struct prom_family *fam = &p->s->families[f];
    if (q < end)
        q++;                            /* the one separator before the text */
    if (help) {
        if (!fam->help)
            fam->help = copy_help(p, q, end);
        return 0;
    }
    q = skip_ws(q, end);
    const char *tw = q;
    while (q < end && !is_ws(*q))
        q++;
    enum prom_type t;
    if (parse_type_word(tw, (size_t)(q - tw), &t) != 0 || skip_ws(q, end) != end)
        return fail(p, "unknown metric type '%.*s'", (int)((q - tw) > 40 ? 40 : (q - tw)), tw);
    fam->type = t;
    return 0;
}

/* ---- samples ------------------------------------------------------------------- */

/* A float token [q, end): what strtod reads, all of it, no "nan(...)". */
static int parse_float(const char *q, const char *end, double *out)
{
    char tmp[64];
    size_t n = (size_t)(end - q);
    if (n == 0 || n >= sizeof tmp || memchr(q, '(', n))
        return -1;
    memcpy(tmp, q, n);
    tmp[n] = '\0';
    char *e;
    *out = strtod(tmp, &e);
    return e == tmp + n ? 0 : -1;
}

static int push_label(struct parser *p, const char *name, const char *value)
{
    if (VEC_RESERVE(p->s->label_store, p->cap_labels, p->n_labels + 1, 256) != 0)
        return -1;
    p->s->label_store[p->n_labels++] = (struct prom_label){name, value};
    return 0;
}

/* A quoted label value starting at the opening quote: unescaped into the
 * arena. Returns the position after the closing quote, or NULL. */
static const char *parse_label_value(struct parser *p, const char *q, const char *end, const char **value)
{
    char *d = p->arena_end, *o = d;
    for (q++; q < end && *q != '"'; q++) {
        if (*q != '\\') {
            *o++ = *q;
            continue;
        }
        if (++q == end)
            break;
        if (*q == 'n')
            *o++ = '\n';
        else if (*q == '\\' || *q == '"')
            *o++ = *q;
        else {
            fail(p, "invalid escape '\\%c' in a label value", *q);
            return NULL;
        }
    }
    if (q == end) {
        fail(p, "unterminated label value");
        return NULL;
    }
    *o = '\0';
    p->arena_end = o + 1;
    *value = d;
    return q + 1;
}

/* {name="value",...} starting at '{'. Returns the position after '}', or NULL. */
static const char *parse_labels(struct parser *p, const char *q, const char *end, size_t first)
{
    q = skip_ws(q + 1, end);
    while (q < end && *q != '}') {
        const char *ln = q;
        if (!label_start(*q)) {
            fail(p, "invalid label name");
            return NULL;
        }
        while (q < end && label_char(*q))
            q++;
        const char *name = arena_copy(p, ln, (size_t)(q - ln));
        for (size_t i = first; i < p->n_labels; i++)
            if (!strcmp(p->s->label_store[i].name, name)) {
                fail(p, "label '%.40s' given twice", name);
                return NULL;
            }
        q = skip_ws(q, end);
        if (q == end || *q != '=') {
            fail(p, "expected '=' after label '%.40s'", name);
            return NULL;
        }
        q = skip_ws(q + 1, end);
        if (q == end || *q != '"') {
            fail(p, "expected a quoted value for label '%.40s'", name);
            return NULL;
        }
        const char *value;
        if (!(q = parse_label_value(p, q, end, &value)))
            return NULL;
        if (push_label(p, name, value) != 0) {
            fail(p, "out of memory");
            return NULL;
        }
        q = skip_ws(q, end);
        if (q < end && *q == ',')
            q = skip_ws(q + 1, end);
        else if (q < end && *q != '}') {
            fail(p, "expected ',' or '}' in the label set");
            return NULL;
        }
    }
    if (q == end) {
        fail(p, "unterminated label set");
        return NULL;
    }
    return q + 1;
}

static int parse_sample(struct parser *p, const char *q, const char *end)
{
    struct prom_snapshot *s = p->s;
    if (!name_start(*q))
        return fail(p, "a sample must start with a metric name");
    const char *name = q;
    while (q < end && name_char(*q))
        q++;
    size_t nn = (size_t)(q - name);
    size_t cap_s = p->cap_samples, cap_l = p->cap_samples;    /* the two arrays share cap_samples */
    if (VEC_RESERVE(s->samples, cap_s, s->n_samples + 1, 256) != 0 ||
        VEC_RESERVE(p->label_first, cap_l, s->n_samples + 1, 256) != 0)
        return fail(p, "out of memory");
    p->cap_samples = cap_s;
    struct prom_sample *smp = &s->samples[s->n_samples];
    *smp = (struct prom_sample){.name = arena_copy(p, name, nn)};
    size_t first = p->n_labels;
    const char *r = skip_ws(q, end);
    if (r < end && *r == '{' && !(q = parse_labels(p, r, end, first)))
        return -1;
    if (q == end || !is_ws(*q))
        return fail(p, "expected a space before the value of '%.60s'", smp->name);
    q = skip_ws(q, end);
    const char *v = q;
    while (q < end && !is_ws(*q))
        q++;
    if (parse_float(v, q, &smp->value) != 0)
        return fail(p, "invalid value '%.*s' for '%.60s'", (int)((q - v) > 40 ? 40 : (q - v)), v, smp->name);
    q = skip_ws(q, end);
    if (q < end && *q != '#') {
        const char *t = q;
        while (q < end && !is_ws(*q))
            q++;
        if (parse_float(t, q, &smp->timestamp) != 0)
            return fail(p, "invalid timestamp '%.*s'", (int)((q - t) > 40 ? 40 : (q - t)), t);
        smp->has_timestamp = true;
        q = skip_ws(q, end);
    }
    if (q < end && *q != '#')           /* '#': an OpenMetrics exemplar, not kept */
        return fail(p, "unexpected text after the value of '%.60s'", smp->name);
    long f = family_of_sample(p, smp->name, nn);
    if (f < 0 && (f = family_add(p, smp->name, nn, true)) < 0)
        return fail(p, "out of memory");
    smp->family = s->families[f].name;
    smp->type = s->families[f].type;
    smp->n_labels = p->n_labels - first;
    p->label_first[s->n_samples++] = first;
    return 0;
}

static int parse_line(struct parser *p, const char *q, const char *end)
{
    if (end > q && end[-1] == '\r')
        end--;
    q = skip_ws(q, end);
    if (q == end)
        return 0;
    if (p->s->eof)
        return fail(p, "text after # EOF");
    return *q == '#' ? parse_comment(p, q, end) : parse_sample(p, q, end);
}

int prom_parse(const char *text, size_t len, struct prom_snapshot *out, char *err, size_t errlen)
{
    *out = (struct prom_snapshot){0};
    struct parser p = {.s = out, .err = err, .errlen = errlen};
    int rc = 0;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *c = text; c < nul; c++)
            line += *c == '\n';
        snprintf(err, errlen, "line %d: NUL byte in the text", line);
        return -1;
    }
    if (len > SIZE_MAX / 2 - 64 || !(out->arena = malloc(2 * len + 64))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p.arena_end = out->arena;
    const char *q = text, *end = text + len;
    while (rc == 0 && q < end) {
        p.line++;
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        const char *le = nl ? nl : end;
        rc = parse_line(&p, q, le);
        q = nl ? nl + 1 : end;
    }
    for (size_t i = 0; rc == 0 && i < out->n_samples; i++)     /* label_store is final now */
        out->samples[i].labels = out->samples[i].n_labels ? out->label_store + p.label_first[i] : NULL;
    free(p.label_first);
    free(p.table);
    if (rc != 0)
        prom_snapshot_free(out);
    return rc;
}

void prom_snapshot_free(struct prom_snapshot *s)
{
    if (!s)
        return;
    free(s->samples);
    free(s->families);
    free(s->label_store);
    free(s->arena);
    *s = (struct prom_snapshot){0};
}

const char *prom_label(const struct prom_sample *s, const char *name)
{
    for (size_t i = 0; i < s->n_labels; i++)
        if (!strcmp(s->labels[i].name, name))
            return s->labels[i].value;
    return NULL;
}

int prom_series_key(const struct prom_sample *s, struct buf *out)
{
    int rc = buf_append(out, s->name, strlen(s->name));
    for (size_t i = 0; i < s->n_labels; i++) {
        rc |= buf_printf(out, "%s%s=\"", i ? "," : "{", s->labels[i].name);
        for (const char *v = s->labels[i].value; *v; v++) {
            if (*v == '\\' || *v == '"')
                rc |= buf_printf(out, "\\%c", *v);
            else if (*v == '\n')
                rc |= buf_append(out, "\\n", 2);
            else
                rc |= buf_append(out, v, 1);
        }
        rc |= buf_append(out, "\"", 1);
    }
    if (s->n_labels)
        rc |= buf_append(out, "}", 1);
    return rc ? -1 : 0;
}
