/* trace.c — Mooncake and Azure traces: reading, the replay window, and the
 * hit rate their block ids promise. */
#include "workload/trace.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/file.h"
#include "core/vec.h"

bool trace_spec_is_trace(const char *spec)
{
    return spec && (!strncmp(spec, "mooncake:", 9) || !strncmp(spec, "azure:", 6));
}

/* A request as read, before the window: time in ms of the file's clock. */
struct raw {
    double t_ms;
    long input_len, output_len;
    size_t first_id, n_hash;
    long line;
};

struct reader {
    struct raw *r;
    size_t n, cap;
    int64_t *ids;
    size_t n_ids, cap_ids;
};

static int push_raw(struct reader *rd, const struct raw *x)
{
    if (VEC_RESERVE(rd->r, rd->cap, rd->n + 1, 256) != 0)
        return -1;
    rd->r[rd->n++] = *x;
    return 0;
}

static int push_id(struct reader *rd, int64_t id)
{
    if (VEC_RESERVE(rd->ids, rd->cap_ids, rd->n_ids + 1, 1024) != 0)
        return -1;
    rd->ids[rd->n_ids++] = id;
    return 0;
}

/* A whole non-negative number at key, else -1. */
static long whole(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e15 || v->valuedouble != floor(v->valuedouble))
        return -1;
    return (long)v->valuedouble;
}

static int mooncake_line(struct reader *rd, const char *path, long line, const char *text, size_t len,
                         char *err, size_t errlen)
{
    cJSON *o = cJSON_ParseWithLength(text, len);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o, "timestamp");
    struct raw x = {.line = line, .first_id = rd->n_ids, .input_len = whole(o, "input_length"),
                    .output_len = whole(o, "output_length")};
    const char *bad = !cJSON_IsObject(o) ? "is not a JSON object"
                      : !cJSON_IsNumber(ts) || ts->valuedouble < 0 ? "needs \"timestamp\" (ms, >= 0)"
                      : x.input_len < 1 ? "needs \"input_length\" (a whole number >= 1)"
                      : x.output_len < 0 ? "needs \"output_length\" (a whole number >= 0)" : NULL;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "hash_ids"), *id;
    if (!bad && h && !cJSON_IsArray(h))
        bad = "\"hash_ids\" must be an array of block ids";
    const cJSON *list = bad ? NULL : h;
    cJSON_ArrayForEach(id, list) {
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > 9e15 ||
            id->valuedouble != floor(id->valuedouble)) {
            bad = "\"hash_ids\" must hold whole numbers >= 0";
            break;
        }
        if (push_id(rd, (int64_t)id->valuedouble) != 0)
            bad = "out of memory";
    }
    if (!bad) {
        x.t_ms = ts->valuedouble;
        x.n_hash = rd->n_ids - x.first_id;
        if (push_raw(rd, &x) != 0)
            bad = "out of memory";
    }
    cJSON_Delete(o);
    if (bad)
        snprintf(err, errlen, "%s:%ld: %s", path, line, bad);
    return bad ? -1 : 0;
}

/* "2023-11-16 18:15:46.6805900" (UTC) or plain seconds, into ms. */
static int azure_time(const char *s, double *ms)
{
    int y, mo, d, h, mi;
    double sec;
    char *end;
    if (sscanf(s, "%d-%d-%d %d:%d:%lf", &y, &mo, &d, &h, &mi, &sec) == 6) {
        struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi};
        *ms = ((double)timegm(&tm) + sec) * 1000;
        return 0;
    }
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    *ms = v * 1000;
    return 0;
}

/* Splits a CSV row (no quoting: the Azure trace has none) in place. */
static int split_row(char *row, char **cols, int cap)
{
    int n = 0;
    for (char *p = row; n < cap;) {
        cols[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    for (int i = 0; i < n; i++) {       /* trim */
        while (isspace((unsigned char)*cols[i]))
            cols[i]++;
        size_t k = strlen(cols[i]);
        while (k && isspace((unsigned char)cols[i][k - 1]))
            cols[i][--k] = '\0';
    }
    return n;
}

struct azure_cols {
    int t, in, out;
};

static int azure_header(char *row, struct azure_cols *c)
{
    char *cols[16];
    int n = split_row(row, cols, 16);
    *c = (struct azure_cols){-1, -1, -1};
    for (int i = 0; i < n; i++) {
        if (!strcasecmp(cols[i], "TIMESTAMP"))
            c->t = i;
        else if (!strcasecmp(cols[i], "ContextTokens"))
            c->in = i;
        else if (!strcasecmp(cols[i], "GeneratedTokens"))
            c->out = i;
    }
    return c->t >= 0 && c->in >= 0 && c->out >= 0 ? 0 : -1;
}

static int azure_line(struct reader *rd, const struct azure_cols *c, const char *path, long line, char *row,
                      char *err, size_t errlen)
{
    char *cols[16], *end;
    int n = split_row(row, cols, 16);
    int need = c->t > c->in ? c->t : c->in;
    need = need > c->out ? need : c->out;
    struct raw x = {.line = line, .first_id = rd->n_ids};
    if (n <= need || azure_time(cols[c->t], &x.t_ms) != 0) {
        snprintf(err, errlen, "%s:%ld: expected TIMESTAMP, ContextTokens and GeneratedTokens", path, line);
        return -1;
    }
    x.input_len = strtol(cols[c->in], &end, 10);
    bool ok = *end == '\0' && x.input_len >= 1;
    x.output_len = strtol(cols[c->out], &end, 10);
    if (!ok || *end != '\0' || x.output_len < 0) {
        snprintf(err, errlen, "%s:%ld: ContextTokens must be a whole number >= 1 and GeneratedTokens >= 0",
                 path, line);
        return -1;
    }
    if (push_raw(rd, &x) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int read_lines(struct reader *rd, bool azure, const char *path, char *text, char *err, size_t errlen)
{
    struct azure_cols cols = {-1, -1, -1};
    bool header = azure;
    long line = 0;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *next = nl ? nl + 1 : p + len;
        line++;
        if (len && p[len - 1] == '\r')
            len--;
        p[len] = '\0';
        size_t k = strspn(p, " \t");
        if (p[k] != '\0') {
            int rc;
            if (header) {
                rc = azure_header(p, &cols);
                if (rc != 0)
                    snprintf(err, errlen, "%s:%ld: the header must name TIMESTAMP, ContextTokens and "
                             "GeneratedTokens", path, line);
                header = false;
            } else {
                rc = azure ? azure_line(rd, &cols, path, line, p, err, errlen)
                           : mooncake_line(rd, path, line, p, len, err, errlen);
            }
            if (rc != 0)
                return -1;
        }
        p = next;
    }
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct raw *x = a, *y = b;
    if (x->t_ms != y->t_ms)
        return x->t_ms < y->t_ms ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;      /* stable: file order */
}

/* Keeps the window's requests, with scaled offsets. */
static int cut_window(struct reader *rd, const struct trace_window *w, struct trace *out, char *err,
                      size_t errlen)
{
    qsort(rd->r, rd->n, sizeof *rd->r, by_time);
    double t0 = rd->n ? rd->r[0].t_ms : 0, from = t0 + w->start_s * 1000;
    double to = w->duration_s > 0 ? from + w->duration_s * 1000 : INFINITY;
    double speed = w->speed > 0 ? w->speed : 1;
    out->reqs = calloc(rd->n ? rd->n : 1, sizeof *out->reqs);
    if (!out->reqs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double first = NAN;
    for (size_t i = 0; i < rd->n; i++) {
        const struct raw *x = &rd->r[i];
        if (x->t_ms < from || x->t_ms >= to)
            continue;
        if (isnan(first))
            first = x->t_ms;
        double off_ns = (x->t_ms - first) / speed * 1e6;
        out->reqs[out->n++] = (struct trace_req){
            .t_ns = (int64_t)llround(off_ns), .input_len = x->input_len,
            .output_len = x->output_len > 0 ? x->output_len : 1,
            .hash_ids = rd->ids ? rd->ids + x->first_id : NULL, .n_hash = x->n_hash,
        };
    }
    if (!out->n) {
        snprintf(err, errlen, "%s: no request in the window [%g s, %s) of the trace's %zu", out->spec,
                 w->start_s, w->duration_s > 0 ? "the given duration" : "its end", rd->n);
        return -1;
    }
    out->span_s = (double)out->reqs[out->n - 1].t_ns / 1e9;
    return 0;
}

int trace_load(const char *spec, const struct trace_window *w, struct trace *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    bool azure = !strncmp(spec, "azure:", 6);
    if (!trace_spec_is_trace(spec)) {
        snprintf(err, errlen, "'%s' is not mooncake:FILE or azure:FILE", spec);
        return -1;
    }
    const char *path = spec + (azure ? 6 : 9);
    snprintf(out->spec, sizeof out->spec, "%s", spec);
    snprintf(out->format, sizeof out->format, "%s", azure ? "azure" : "mooncake");
    char *text = file_read_all(path, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read the file", path);
        return -1;
    }
    struct reader rd = {0};
    int rc = read_lines(&rd, azure, path, text, err, errlen);
    free(text);
    out->lines = (long)rd.n;
    if (rc == 0 && rd.n == 0) {
        snprintf(err, errlen, "%s: the trace holds no request", path);
        rc = -1;
    }
    if (rc == 0)
        rc = cut_window(&rd, w, out, err, errlen);
    free(rd.r);
    out->ids = rd.ids;
    out->n_ids = rd.n_ids;
    if (rc != 0)
        trace_free(out);
    return rc;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

double trace_theoretical_hit_rate(const struct trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->reqs[i].n_hash;
    int64_t *ids = n ? malloc(n * sizeof *ids) : NULL;
    long *seen = n ? calloc(n, sizeof *seen) : NULL;   /* per id: the most of its tokens a request had */
    double hit = 0, total = 0;
    size_t k = 0;
    for (size_t i = 0; ids && i < t->n; i++)
        for (size_t j = 0; j < t->reqs[i].n_hash; j++)
            ids[k++] = t->reqs[i].hash_ids[j];
    if (ids && seen) {      /* the distinct ids, sorted: one seen flag each */
        qsort(ids, n, sizeof *ids, cmp_id);
        size_t u = 0;
        for (size_t i = 0; i < n; i++)
            if (!u || ids[u - 1] != ids[i])
                ids[u++] = ids[i];
        n = u;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct trace_req *r = &t->reqs[i];
        total += (double)r->input_len;
        if (!ids || !seen)
            continue;
        long cached = 0;
        bool chain = true;
        for (size_t j = 0; j < r->n_hash; j++) {
            const int64_t *at = bsearch(&r->hash_ids[j], ids, n, sizeof *ids, cmp_id);
            size_t idx = (size_t)(at - ids);
            /* a block's tokens here: the last one may be cut by input_len */
            long left = r->input_len - (long)j * TRACE_BLOCK_TOKENS;
            long len = left < TRACE_BLOCK_TOKENS ? (left > 0 ? left : 0) : TRACE_BLOCK_TOKENS;
            if (chain)      /* what an earlier request held of it, and the chain goes on only past a whole match */
                cached += seen[idx] < len ? seen[idx] : len;
            chain = chain && seen[idx] >= len;
            if (seen[idx] < len)
                seen[idx] = len;
        }
        hit += (double)(cached < r->input_len ? cached : r->input_len - 1);
    }
    free(ids);
    free(seen);
    return total > 0 ? hit / total : 0;
}

void trace_free(struct trace *t)
{
    free(t->reqs);
    free(t->ids);
    memset(t, 0, sizeof *t);
}
