/* journal.c — journal lines ⇄ records and settings (journal.h). */
#include "artifact/journal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/fields.h"
#include "artifact/json.h"

/* ---- codecs ---- */

/* Writes v in decimal at p; returns the end. */
static char *put_int(char *p, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* A time of a request line: ns after t0_ns, or null when the event did not
 * happen. Written as chunks_json writes its numbers: no printf/sscanf. */
struct jtime {
    bool set;
    int64_t ns;
};

static void time_write(cJSON *o, const char *key, const void *value)
{
    const struct jtime *t = value;
    char num[24];
    if (!t->set) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    *put_int(num, t->ns) = '\0';
    cJSON_AddRawToObject(o, key, num);
}

static void time_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct jtime *t = value;
    double v;
    *t = (struct jtime){0};
    if (jread_number(r, o, key, flags, &v) != 0 || isnan(v))
        return;
    if (v != floor(v) || fabs(v) > 9.0e15)
        jread_fail(r, key, "expected whole ns after t0_ns, got %g", v);
    else
        *t = (struct jtime){true, (int64_t)v};
}

static const struct field_codec time_codec = {time_write, time_read, NULL};

/* The chunks of a request line: written from rec (chunks_json), read as
 * the array item (borrowed from the line: read_chunks turns it into chunks). */
struct jchunks {
    const struct req_record *rec;   /* writing; NULL: none */
    int64_t t0_ns;
    const cJSON *item;              /* reading */
};

static char *chunks_json(const struct req_record *r, int64_t t0_ns);

static void chunks_write(cJSON *o, const char *key, const void *value)
{
    const struct jchunks *c = value;
    char *text = c->rec ? chunks_json(c->rec, c->t0_ns) : NULL;
    if (text)
        cJSON_AddRawToObject(o, key, text);
    else if (!c->rec)
        cJSON_AddArrayToObject(o, key);
    free(text);     /* out of memory: the key is left out, which journal_record checks */
}

static void chunks_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    ((struct jchunks *)value)->item = jread_array(r, o, key, flags);
}

static const struct field_codec chunks_codec = {chunks_write, chunks_read, NULL};

/* A member of the header kept as the item itself (borrowed: the reader
 * hands it out pointing into the parsed line). */
static void item_write(cJSON *o, const char *key, const void *value)
{
    const cJSON *v = *(const cJSON *const *)value;
    cJSON_AddItemToObject(o, key, v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
}

static void item_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    *(const cJSON **)value = jread_item(r, o, key, flags);
}

static void object_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    *(const cJSON **)value = jread_object(r, o, key, flags);
}

static const struct field_codec item_codec = {item_write, item_read, NULL};
static const struct field_codec object_codec = {item_write, object_read, NULL};

/* The three SLO bounds, [ttft, tpot, e2el] in ms, null when not set. */
static void slo_write(cJSON *o, const char *key, const void *value)
{
    const double *v = value;
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int i = 0; a && i < 3; i++)
        cJSON_AddItemToArray(a, isnan(v[i]) ? cJSON_CreateNull() : cJSON_CreateNumber(v[i]));
}

static void slo_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    jread_numbers(r, o, key, flags, value, 3);
}

static const struct field_codec slo_codec = {slo_write, slo_read, NULL};

/* ---- the header line ---- */

struct summary_opts_v {
    char *percentile_method;
    bool ignore_eos, lateness_is_client, check_prompt_tokens;
    double slo_ms[3];
};
static const struct field summary_opts_rows[] = {
    F_STR(struct summary_opts_v, percentile_method, 0),
    F_BOOL(struct summary_opts_v, ignore_eos, 0),
    F_BOOL(struct summary_opts_v, lateness_is_client, 0),
    F_BOOL(struct summary_opts_v, check_prompt_tokens, 0),
    F_CUSTOM_U(struct summary_opts_v, slo_ms, 0, "ms", &slo_codec),
};
static const struct field_table summary_opts_t = FIELD_TABLE_ALWAYS("summary_opts", struct summary_opts_v,
                                                                    summary_opts_rows);

/* journal (JOURNAL_SCHEMA), run_id, artifact and t0_ns are strings (t0_ns
 * a decimal CLOCK_MONOTONIC ns, past what a double holds); the reader
 * checks them itself, and hands them out pointing into the line. */
struct header_v {
    const cJSON *journal, *run_id, *artifact, *t0_ns;
    struct summary_opts_v summary_opts;
    const cJSON *settings;
};
static const struct field header_rows[] = {
    F_CUSTOM(struct header_v, journal, 0, &item_codec),
    F_CUSTOM(struct header_v, run_id, 0, &item_codec),
    F_CUSTOM(struct header_v, artifact, 0, &item_codec),
    F_CUSTOM_U(struct header_v, t0_ns, 0, "ns", &item_codec),
    F_OBJ(struct header_v, summary_opts, 0, &summary_opts_t),
    F_CUSTOM(struct header_v, settings, JR_NULLABLE, &object_codec),     /* null: refused by the reader */
};
const struct field_table journal_header_table = FIELD_TABLE_ALWAYS("journal header", struct header_v, header_rows);

cJSON *journal_header(const char *run_id, const char *artifact, int64_t t0_ns,
                      const struct journal_opts *o, const cJSON *settings)
{
    char t0[24];
    snprintf(t0, sizeof t0, "%" PRId64, t0_ns);
    cJSON *schema = cJSON_CreateString(JOURNAL_SCHEMA), *id = cJSON_CreateString(run_id);
    cJSON *art = cJSON_CreateString(artifact), *t = cJSON_CreateString(t0);
    struct header_v v = {schema, id, art, t,
                         {o->method == PCT_LINEAR ? "linear" : "nearest", o->ignore_eos, o->lateness_is_client,
                          o->check_prompt_tokens, {o->slo.ttft_ms, o->slo.tpot_ms, o->slo.e2el_ms}},
                         settings};
    cJSON *h = schema && id && art && t ? fields_to_json(&journal_header_table, &v) : NULL;
    cJSON_Delete(schema);
    cJSON_Delete(id);
    cJSON_Delete(art);
    cJSON_Delete(t);
    /* any allocation that failed left a member out or null: check the last one */
    if (h && !cJSON_IsObject(cJSON_GetArrayItem(h, cJSON_GetArraySize(h) - 1))) {
        cJSON_Delete(h);
        return NULL;
    }
    return h;
}

/* ---- request lines ---- */

struct line_v {
    long index;
    bool warmup;
    long planned_prompt_tokens, max_tokens;
    struct jtime t_scheduled, t_start, t_headers, t_first_byte, t_first_event, t_first_output,
        t_first_content, t_end;
    long http_status, prompt_tokens, completion_tokens, cached_tokens;
    long content_chunks, reasoning_chunks, tool_call_chunks, tool_calls, events, unknown_lines;
    bool done_seen, cut, first_output_merged;
    char *finish_reason, *fail, *fail_msg;
    char *trace_id;                     /* NULL: none sent (left out) */
    struct jchunks chunks;
};
#define TIME(m) F_CUSTOM_U(struct line_v, m, 0, "ns", &time_codec)
#define COUNT(m, R, unit) F_WHOLE(struct line_v, m, R, unit)
static const struct field line_rows[] = {
    COUNT(index, 0, NULL),
    F_BOOL(struct line_v, warmup, 0),
    COUNT(planned_prompt_tokens, JR_NULLABLE, "tokens"),
    COUNT(max_tokens, JR_NULLABLE, "tokens"),
    TIME(t_scheduled), TIME(t_start), TIME(t_headers), TIME(t_first_byte),
    TIME(t_first_event), TIME(t_first_output), TIME(t_first_content), TIME(t_end),
    COUNT(http_status, JR_NULLABLE, NULL),
    COUNT(prompt_tokens, JR_NULLABLE, "tokens"),
    COUNT(completion_tokens, JR_NULLABLE, "tokens"),
    COUNT(cached_tokens, JR_NULLABLE, "tokens"),
    COUNT(content_chunks, 0, "chunks"),
    COUNT(reasoning_chunks, 0, "chunks"),
    COUNT(tool_call_chunks, JR_OPTIONAL, "chunks"),
    COUNT(tool_calls, JR_OPTIONAL, "calls"),
    COUNT(events, 0, "events"),
    COUNT(unknown_lines, JR_OPTIONAL, "lines"),
    F_BOOL(struct line_v, done_seen, 0),
    F_BOOL(struct line_v, cut, 0),
    F_BOOL(struct line_v, first_output_merged, JR_OPTIONAL),
    F_STR(struct line_v, finish_reason, 0),
    F_STR(struct line_v, fail, 0),
    F_STR(struct line_v, fail_msg, 0),
    F_STR_W(struct line_v, trace_id, JR_OPTIONAL, FW_OMIT_NONE),
    F_CUSTOM(struct line_v, chunks, 0, &chunks_codec),  /* last: journal_line checks it */
};
#undef TIME
#undef COUNT
const struct field_table journal_line_table = FIELD_TABLE_ALWAYS("journal line", struct line_v, line_rows);

/* The array of the record's times, in line_rows' order. */
#define N_TIMES 8
static void times_of(struct req_record *r, int64_t *out[N_TIMES])
{
    int64_t *f[N_TIMES] = {&r->t_scheduled, &r->t_start, &r->t_headers, &r->t_first_byte,
                           &r->t_first_event, &r->t_first_output, &r->t_first_content, &r->t_end};
    memcpy(out, f, sizeof f);
}

static struct jtime *line_times(struct line_v *v)
{
    return &v->t_scheduled;     /* the eight jtime members follow each other */
}

_Static_assert(offsetof(struct line_v, t_end) - offsetof(struct line_v, t_scheduled) ==
               (N_TIMES - 1) * sizeof(struct jtime), "the times are one array");

/* A count that may be unknown (-1): null then. */
static long count(long v)
{
    return v < 0 ? ARTIFACT_NONE : v;
}

/* The chunks array as JSON text, [[t, tokens, content, bytes], ...] (malloc'd, or
 * NULL). Formatted here, not by cJSON: it prints every ns offset past 2^31
 * with printf("%.15g") and reads it back with sscanf to check it — most of
 * the client's CPU per event on fast streams, for hundreds of chunks a
 * request. Whole numbers as cJSON would print them below 10^15 ns (11
 * days), exact beyond. */
static char *chunks_json(const struct req_record *r, int64_t t0_ns)
{
    /* '[' + per chunk "[" 20 digits "," 20 digits ",false," 5 digits "]," + ']' + NUL */
    char *s = malloc(r->n_chunks * 58 + 3), *p = s;
    if (!s)
        return NULL;
    *p++ = '[';
    for (size_t i = 0; i < r->n_chunks; i++) {
        const struct out_chunk *c = &r->chunks[i];
        if (i)
            *p++ = ',';
        *p++ = '[';
        p = put_int(p, c->t_ns - t0_ns);
        *p++ = ',';
        p = put_int(p, c->tokens);
        memcpy(p, c->content ? ",true," : ",false,", c->content ? 6 : 7);
        p += c->content ? 6 : 7;
        p = put_int(p, c->bytes);
        *p++ = ']';
    }
    *p++ = ']';
    *p = '\0';
    return s;
}

cJSON *journal_record(const struct req_record *r, int64_t t0_ns)
{
    struct line_v v = {
        .index = r->index, .warmup = r->warmup, .planned_prompt_tokens = count(r->planned_prompt_tokens),
        .max_tokens = count(r->max_tokens), .http_status = count(r->http_status),
        .prompt_tokens = count(r->prompt_tokens), .completion_tokens = count(r->completion_tokens),
        .cached_tokens = count(r->cached_tokens), .content_chunks = r->content_chunks,
        .reasoning_chunks = r->reasoning_chunks, .tool_call_chunks = r->tool_call_chunks,
        .tool_calls = r->tool_calls, .events = r->events, .unknown_lines = r->unknown_lines,
        .done_seen = r->done_seen, .cut = r->cut, .first_output_merged = r->first_output_merged,
        .finish_reason = (char *)r->finish_reason, .fail = (char *)fail_kind_name(r->fail),
        .fail_msg = (char *)r->fail_msg, .chunks = {r, t0_ns, NULL},
        .trace_id = r->trace_id[0] ? (char *)r->trace_id : NULL};
    int64_t *t[N_TIMES];
    times_of((struct req_record *)r, t);
    for (size_t i = 0; i < N_TIMES; i++)
        line_times(&v)[i] = (struct jtime){*t[i] != 0, *t[i] - t0_ns};
    cJSON *j = fields_to_json(&journal_line_table, &v);
    /* any allocation that failed left a member out: check the last one */
    if (j && !cJSON_IsRaw(cJSON_GetArrayItem(j, cJSON_GetArraySize(j) - 1))) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

int journal_header_read(const cJSON *h, const char *name, int64_t *t0_ns, struct journal_opts *o,
                        const cJSON **settings, const char **run_id, const char **artifact,
                        char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    struct header_v v;
    *o = (struct journal_opts){0};
    fields_read(&r, h, &journal_header_table, &v);
    if (!r.failed && (!cJSON_IsString(v.journal) || strcmp(v.journal->valuestring, JOURNAL_SCHEMA) != 0))
        jread_fail(&r, "journal", "expected \"%s\" (is this a journal's first line?)", JOURNAL_SCHEMA);
    else if (!r.failed && !v.settings)
        jread_fail(&r, "settings", "expected an object, got null");
    else if (!r.failed && (!cJSON_IsString(v.run_id) || !cJSON_IsString(v.artifact) || !cJSON_IsString(v.t0_ns)))
        jread_fail(&r, NULL, "run_id, artifact and t0_ns must be strings");
    char *end = NULL;
    if (!r.failed && ((*t0_ns = strtoll(v.t0_ns->valuestring, &end, 10)), *end || end == v.t0_ns->valuestring))
        jread_fail(&r, "t0_ns", "expected a whole number of ns, got '%s'", v.t0_ns->valuestring);
    const char *method = v.summary_opts.percentile_method;
    if (!r.failed && pct_method_parse(method, &o->method) != 0) {
        size_t m = jread_enter(&r, "summary_opts");
        jread_fail(&r, "percentile_method", "expected nearest or linear, got '%s'", method);
        jread_leave(&r, m);
    }
    if (!r.failed) {
        const struct summary_opts_v *so = &v.summary_opts;
        o->ignore_eos = so->ignore_eos;
        o->lateness_is_client = so->lateness_is_client;
        o->check_prompt_tokens = so->check_prompt_tokens;
        o->slo = (struct slo){so->slo_ms[0], so->slo_ms[1], so->slo_ms[2]};
        *settings = v.settings;
        *run_id = v.run_id->valuestring;
        *artifact = v.artifact->valuestring;
    }
    fields_free(&journal_header_table, &v);
    return r.failed ? -1 : 0;
}

static int read_fail_kind(struct jread *r, const char *name, enum fail_kind *out)
{
    for (int k = FAIL_NONE; k <= FAIL_OTHER; k++)
        if (!strcmp(name, fail_kind_name((enum fail_kind)k))) {
            *out = (enum fail_kind)k;
            return 0;
        }
    return jread_fail(r, "fail", "unknown failure category '%s'", name);
}

static int read_chunks(struct jread *r, const cJSON *list, int64_t t0_ns, struct req_record *rec)
{
    const cJSON *c;
    int i = 0;
    cJSON_ArrayForEach(c, list) {
        /* bytes, the 4th, is absent from journals written before it was */
        const cJSON *t = cJSON_GetArrayItem(c, 0), *k = cJSON_GetArrayItem(c, 1), *v = cJSON_GetArrayItem(c, 2);
        const cJSON *b = cJSON_GetArrayItem(c, 3);
        int size = cJSON_GetArraySize(c);
        if (!cJSON_IsArray(c) || size < 3 || size > 4 || !cJSON_IsNumber(t) || !cJSON_IsNumber(k)
            || !cJSON_IsBool(v) || t->valuedouble != floor(t->valuedouble) || fabs(t->valuedouble) > 9.0e15
            || k->valuedouble < -1 || k->valuedouble > INT32_MAX
            || (b && (!cJSON_IsNumber(b) || b->valuedouble < 0 || b->valuedouble > UINT16_MAX)))
            return jread_fail(r, "chunks", "entry %d: expected [ns after t0_ns, tokens, content, bytes]", i);
        if (record_add_chunk(rec, t0_ns + (int64_t)t->valuedouble, (int32_t)k->valuedouble,
                             b ? (size_t)b->valuedouble : 0, cJSON_IsTrue(v)) != 0)
            return jread_fail(r, "chunks", "out of memory");
        i++;
    }
    return r->failed ? -1 : 0;
}

/* An optional count read as 0 when absent. */
static int count_or_0(long v)
{
    return v == ARTIFACT_NONE ? 0 : (int)v;
}

/* v's figures into rec (record_init'ed). */
static void line_to_record(struct jread *r, struct line_v *v, int64_t t0_ns, struct req_record *rec)
{
    int64_t *t[N_TIMES];
    times_of(rec, t);
    for (size_t i = 0; i < N_TIMES; i++)
        *t[i] = line_times(v)[i].set ? t0_ns + line_times(v)[i].ns : 0;
    rec->http_status = v->http_status < 0 ? 0 : v->http_status;
    rec->prompt_tokens = v->prompt_tokens;
    rec->completion_tokens = v->completion_tokens;
    rec->cached_tokens = v->cached_tokens;
    const long counts[] = {v->content_chunks, v->reasoning_chunks, v->tool_call_chunks, v->tool_calls,
                           v->events, v->unknown_lines};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if (counts[i] > INT32_MAX)
            jread_fail(r, NULL, "a chunk or event count is too large");
    rec->content_chunks = (int)v->content_chunks;
    rec->reasoning_chunks = (int)v->reasoning_chunks;
    rec->tool_call_chunks = count_or_0(v->tool_call_chunks);
    rec->tool_calls = count_or_0(v->tool_calls);
    rec->events = (int)v->events;
    rec->unknown_lines = count_or_0(v->unknown_lines);
    rec->done_seen = v->done_seen;
    rec->cut = v->cut;
    rec->first_output_merged = v->first_output_merged;
    snprintf(rec->finish_reason, sizeof rec->finish_reason, "%s", v->finish_reason);
    if (!r->failed)
        read_fail_kind(r, v->fail, &rec->fail);
    snprintf(rec->fail_msg, sizeof rec->fail_msg, "%s", v->fail_msg);
    snprintf(rec->trace_id, sizeof rec->trace_id, "%s", v->trace_id ? v->trace_id : "");
    if (!r->failed)
        read_chunks(r, v->chunks.item, t0_ns, rec);
}

int journal_record_read(const cJSON *j, const char *name, int64_t t0_ns, struct req_record *rec,
                        char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    struct line_v v;
    fields_read(&r, j, &journal_line_table, &v);
    if (!r.failed && v.index > INT32_MAX)
        jread_fail(&r, "index", "too large: %ld", v.index);
    record_init(rec, r.failed ? 0 : (int)v.index, v.warmup, r.failed ? -1 : v.planned_prompt_tokens,
                r.failed ? -1 : v.max_tokens);
    if (!r.failed)
        line_to_record(&r, &v, t0_ns, rec);
    fields_free(&journal_line_table, &v);
    if (r.failed) {
        record_free(rec);
        return -1;
    }
    return 0;
}
