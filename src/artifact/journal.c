/* journal.c — journal lines ⇄ records and settings (journal.h). */
#include "artifact/journal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"

static const char *const times[] = {"t_scheduled", "t_start", "t_headers", "t_first_byte",
                                    "t_first_event", "t_first_output", "t_first_content", "t_end"};
#define N_TIMES (sizeof times / sizeof *times)

static int64_t *time_field(struct req_record *r, size_t i)
{
    int64_t *f[N_TIMES] = {&r->t_scheduled, &r->t_start, &r->t_headers, &r->t_first_byte,
                           &r->t_first_event, &r->t_first_output, &r->t_first_content, &r->t_end};
    return f[i];
}

cJSON *journal_header(const char *run_id, const char *artifact, int64_t t0_ns,
                      const struct journal_opts *o, const cJSON *settings)
{
    char t0[24];
    snprintf(t0, sizeof t0, "%" PRId64, t0_ns);
    cJSON *h = cJSON_CreateObject(), *so = cJSON_CreateObject();
    cJSON *copy = cJSON_Duplicate(settings, true);
    if (!h || !so || !copy) {
        cJSON_Delete(h);
        cJSON_Delete(so);
        cJSON_Delete(copy);
        return NULL;
    }
    cJSON_AddStringToObject(h, "journal", JOURNAL_SCHEMA);
    cJSON_AddStringToObject(h, "run_id", run_id);
    cJSON_AddStringToObject(h, "artifact", artifact);
    cJSON_AddStringToObject(h, "t0_ns", t0);
    cJSON_AddStringToObject(so, "percentile_method", o->method == PCT_LINEAR ? "linear" : "nearest");
    cJSON_AddBoolToObject(so, "ignore_eos", o->ignore_eos);
    cJSON_AddBoolToObject(so, "lateness_is_client", o->lateness_is_client);
    cJSON_AddBoolToObject(so, "check_prompt_tokens", o->check_prompt_tokens);
    double slo[3] = {o->slo.ttft_ms, o->slo.tpot_ms, o->slo.e2el_ms};
    cJSON *a = cJSON_AddArrayToObject(so, "slo_ms");
    for (int i = 0; a && i < 3; i++)
        cJSON_AddItemToArray(a, isnan(slo[i]) ? cJSON_CreateNull() : cJSON_CreateNumber(slo[i]));
    cJSON_AddItemToObject(h, "summary_opts", so);
    cJSON_AddItemToObject(h, "settings", copy);
    return h;
}

/* A count that may be unknown (-1): null then. */
static void add_count(cJSON *o, const char *k, long v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, (double)v);
}

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
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddNumberToObject(j, "index", r->index);
    cJSON_AddBoolToObject(j, "warmup", r->warmup);
    add_count(j, "planned_prompt_tokens", r->planned_prompt_tokens);
    add_count(j, "max_tokens", r->max_tokens);
    for (size_t i = 0; i < N_TIMES; i++) {
        int64_t t = *time_field((struct req_record *)r, i);
        if (t) {
            char num[24];
            *put_int(num, t - t0_ns) = '\0';
            cJSON_AddRawToObject(j, times[i], num);    /* as chunks_json: no printf/sscanf */
        } else
            cJSON_AddNullToObject(j, times[i]);
    }
    add_count(j, "http_status", r->http_status);
    add_count(j, "prompt_tokens", r->prompt_tokens);
    add_count(j, "completion_tokens", r->completion_tokens);
    add_count(j, "cached_tokens", r->cached_tokens);
    cJSON_AddNumberToObject(j, "content_chunks", r->content_chunks);
    cJSON_AddNumberToObject(j, "reasoning_chunks", r->reasoning_chunks);
    cJSON_AddNumberToObject(j, "tool_call_chunks", r->tool_call_chunks);
    cJSON_AddNumberToObject(j, "tool_calls", r->tool_calls);
    cJSON_AddNumberToObject(j, "events", r->events);
    cJSON_AddNumberToObject(j, "unknown_lines", r->unknown_lines);
    cJSON_AddBoolToObject(j, "done_seen", r->done_seen);
    cJSON_AddBoolToObject(j, "cut", r->cut);
    cJSON_AddBoolToObject(j, "first_output_merged", r->first_output_merged);
    cJSON_AddStringToObject(j, "finish_reason", r->finish_reason);
    cJSON_AddStringToObject(j, "fail", fail_kind_name(r->fail));
    cJSON_AddStringToObject(j, "fail_msg", r->fail_msg);
    char *chunks = chunks_json(r, t0_ns);
    cJSON *raw = chunks ? cJSON_AddRawToObject(j, "chunks", chunks) : NULL;
    free(chunks);
    /* any allocation that failed left a member out: check the last one */
    if (!raw) {
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
    const cJSON *schema = jread_item(&r, h, "journal", 0);
    if (!r.failed && (!cJSON_IsString(schema) || strcmp(schema->valuestring, JOURNAL_SCHEMA)))
        return jread_fail(&r, "journal", "expected \"%s\" (is this a journal's first line?)", JOURNAL_SCHEMA);
    const cJSON *id = jread_item(&r, h, "run_id", 0), *art = jread_item(&r, h, "artifact", 0);
    const cJSON *t0 = jread_item(&r, h, "t0_ns", 0);
    const cJSON *so = jread_object(&r, h, "summary_opts", 0);
    *settings = jread_object(&r, h, "settings", 0);
    if (r.failed)
        return -1;
    if (!cJSON_IsString(id) || !cJSON_IsString(art) || !cJSON_IsString(t0))
        return jread_fail(&r, NULL, "run_id, artifact and t0_ns must be strings");
    char *end;
    *t0_ns = strtoll(t0->valuestring, &end, 10);
    if (*end || end == t0->valuestring)
        return jread_fail(&r, "t0_ns", "expected a whole number of ns, got '%s'", t0->valuestring);
    *run_id = id->valuestring;
    *artifact = art->valuestring;
    size_t m = jread_enter(&r, "summary_opts");
    char *method = NULL;
    double slo[3];
    *o = (struct journal_opts){0};
    jread_string(&r, so, "percentile_method", 0, &method);
    jread_bool(&r, so, "ignore_eos", 0, &o->ignore_eos);
    jread_bool(&r, so, "lateness_is_client", 0, &o->lateness_is_client);
    jread_bool(&r, so, "check_prompt_tokens", 0, &o->check_prompt_tokens);
    jread_numbers(&r, so, "slo_ms", 0, slo, 3);
    if (!r.failed && pct_method_parse(method, &o->method) != 0)
        jread_fail(&r, "percentile_method", "expected nearest or linear, got '%s'", method);
    jread_leave(&r, m);
    free(method);
    o->slo = (struct slo){slo[0], slo[1], slo[2]};
    return r.failed ? -1 : 0;
}

/* A time of the line: ns after t0, or 0 (null: did not happen). */
static int read_time(struct jread *r, const cJSON *j, const char *key, int64_t t0_ns, int64_t *out)
{
    double v;
    if (jread_number(r, j, key, 0, &v) != 0)
        return -1;
    if (isnan(v)) {
        *out = 0;
        return 0;
    }
    if (v != floor(v) || fabs(v) > 9.0e15)
        return jread_fail(r, key, "expected whole ns after t0_ns, got %g", v);
    *out = t0_ns + (int64_t)v;
    return 0;
}

static long read_count(struct jread *r, const cJSON *j, const char *key)
{
    long v;
    jread_whole(r, j, key, JR_NULLABLE, 0, &v);
    return v == ARTIFACT_NONE ? -1 : v;
}

static int read_fail_kind(struct jread *r, const cJSON *j, enum fail_kind *out)
{
    char *name = NULL;
    if (jread_string(r, j, "fail", 0, &name) != 0)
        return -1;
    for (int k = FAIL_NONE; k <= FAIL_OTHER; k++)
        if (!strcmp(name, fail_kind_name((enum fail_kind)k))) {
            *out = (enum fail_kind)k;
            free(name);
            return 0;
        }
    jread_fail(r, "fail", "unknown failure category '%s'", name);
    free(name);
    return -1;
}

static void read_text(struct jread *r, const cJSON *j, const char *key, char *out, size_t cap)
{
    char *s = NULL;
    if (jread_string(r, j, key, 0, &s) == 0)
        snprintf(out, cap, "%s", s);
    free(s);
}

static int read_chunks(struct jread *r, const cJSON *j, int64_t t0_ns, struct req_record *rec)
{
    const cJSON *list = jread_array(r, j, "chunks", 0), *c;
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

int journal_record_read(const cJSON *j, const char *name, int64_t t0_ns, struct req_record *rec,
                        char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    long index, content, reasoning, events, tool_chunks = 0, tool_calls = 0, unknown = 0;
    jread_whole(&r, j, "index", 0, 0, &index);
    if (!r.failed && index > INT32_MAX)
        jread_fail(&r, "index", "too large: %ld", index);
    bool warmup = false;
    jread_bool(&r, j, "warmup", 0, &warmup);
    record_init(rec, r.failed ? 0 : (int)index, warmup, read_count(&r, j, "planned_prompt_tokens"),
                read_count(&r, j, "max_tokens"));
    for (size_t i = 0; i < N_TIMES; i++)
        read_time(&r, j, times[i], t0_ns, time_field(rec, i));
    rec->http_status = read_count(&r, j, "http_status");
    if (rec->http_status < 0)
        rec->http_status = 0;
    rec->prompt_tokens = read_count(&r, j, "prompt_tokens");
    rec->completion_tokens = read_count(&r, j, "completion_tokens");
    rec->cached_tokens = read_count(&r, j, "cached_tokens");
    jread_whole(&r, j, "content_chunks", 0, 0, &content);
    jread_whole(&r, j, "reasoning_chunks", 0, 0, &reasoning);
    jread_whole(&r, j, "tool_call_chunks", JR_OPTIONAL, 0, &tool_chunks);
    jread_whole(&r, j, "tool_calls", JR_OPTIONAL, 0, &tool_calls);
    jread_whole(&r, j, "events", 0, 0, &events);
    jread_whole(&r, j, "unknown_lines", JR_OPTIONAL, 0, &unknown);
    if (!r.failed && (content > INT32_MAX || reasoning > INT32_MAX || events > INT32_MAX ||
                      tool_chunks > INT32_MAX || tool_calls > INT32_MAX || unknown > INT32_MAX))
        jread_fail(&r, NULL, "a chunk or event count is too large");
    rec->content_chunks = (int)content;
    rec->reasoning_chunks = (int)reasoning;
    rec->tool_call_chunks = (int)tool_chunks;
    rec->tool_calls = (int)tool_calls;
    rec->events = (int)events;
    rec->unknown_lines = (int)unknown;
    jread_bool(&r, j, "done_seen", 0, &rec->done_seen);
    jread_bool(&r, j, "cut", 0, &rec->cut);
    jread_bool(&r, j, "first_output_merged", JR_OPTIONAL, &rec->first_output_merged);
    read_text(&r, j, "finish_reason", rec->finish_reason, sizeof rec->finish_reason);
    if (!r.failed)
        read_fail_kind(&r, j, &rec->fail);
    read_text(&r, j, "fail_msg", rec->fail_msg, sizeof rec->fail_msg);
    if (!r.failed)
        read_chunks(&r, j, t0_ns, rec);
    if (r.failed) {
        record_free(rec);
        return -1;
    }
    return 0;
}
