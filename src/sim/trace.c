/* trace.c — JSON-lines trace writer (see trace.h). */
#include "sim/trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct sim_trace {
    FILE *f;
    int failed;    /* a write or flush failed at some point */
};

struct sim_trace *sim_trace_open(const char *path)
{
    struct sim_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->f = fopen(path, "w");
    if (!t->f) {
        free(t);
        return NULL;
    }
    return t;
}

/* A JSON string from arbitrary header bytes: escapes quotes, backslashes,
 * control bytes and bytes >= 0x80 (so the line stays valid JSON/UTF-8). */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void put_ns(FILE *f, const char *key, int64_t ns)
{
    if (ns)
        fprintf(f, ",\"%s\":%" PRId64, key, ns);
    else
        fprintf(f, ",\"%s\":null", key);
}

/* The keys added with the engine model, after "chunks" so that readers of
 * the older keys are unaffected: admission, prefix-cache hits, reasoning,
 * preemption times, prefill chunks (step start/end and tokens), fault,
 * speculative-decoding counters. */
static void put_engine_fields(FILE *f, const struct sim_trace_rec *r)
{
    put_ns(f, "admitted_ns", r->admitted_ns);
    fprintf(f, ",\"cached_tokens\":%" PRId64 ",\"reasoning_tokens\":%" PRId64 ",\"preemptions\":[",
            r->cached_tokens, r->reasoning_tokens);
    int n = 0;
    for (size_t i = 0; i < r->n_events; i++)
        if (r->events[i].preemption)
            fprintf(f, "%s%" PRId64, n++ ? "," : "", r->events[i].start_ns);
    fputs("],\"prefill_chunks\":[", f);
    n = 0;
    for (size_t i = 0; i < r->n_events; i++)
        if (!r->events[i].preemption)
            fprintf(f, "%s{\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64 ",\"tokens\":%" PRId64 "}",
                    n++ ? "," : "", r->events[i].start_ns, r->events[i].end_ns, r->events[i].tokens);
    fputs("],\"fault\":", f);
    if (r->fault)
        put_string(f, r->fault);
    else
        fputs("null", f);
    const struct sim_seq *s = r->seq;
    if (!s) {
        fputs(",\"spec\":null", f);
        return;
    }
    fprintf(f, ",\"spec\":{\"drafts\":%" PRIu64 ",\"draft_tokens\":%" PRIu64 ",\"accepted\":%" PRIu64
            ",\"accepted_per_pos\":[", s->spec_drafts, s->spec_draft_tokens, s->spec_accepted);
    int last = SIM_SPEC_MAX;
    while (last > 0 && !s->spec_accepted_pos[last - 1])
        last--;
    for (int i = 0; i < last; i++)
        fprintf(f, "%s%" PRIu64, i ? "," : "", s->spec_accepted_pos[i]);
    fprintf(f, "],\"decode_steps\":%" PRIu64 "}", s->decode_steps);
}

/* One entry of "chunks": write time (0: never written, null), tokens, and
 * the generation times of its tokens, the next ones from r->gen_ns (*g is
 * the cursor). */
static void put_chunk(FILE *f, bool comma, int64_t t_ns, int64_t tokens,
                      const struct sim_trace_rec *r, size_t *g)
{
    fprintf(f, "%s{\"t_ns\":", comma ? "," : "");
    if (t_ns)
        fprintf(f, "%" PRId64, t_ns);
    else
        fputs("null", f);       /* queued or held, never written: the reply was cut */
    fprintf(f, ",\"tokens\":%" PRId64 ",\"gen_ns\":[", tokens);
    for (int64_t k = 0; k < tokens && *g < r->n_gen; k++, (*g)++)
        fprintf(f, "%s%" PRId64, k ? "," : "", r->gen_ns[*g]);
    fputs("]}", f);
}

int sim_trace_write(struct sim_trace *t, const struct sim_trace_rec *r)
{
    FILE *f = t->f;
    fputs("{\"request_id\":", f);
    if (r->request_id)
        put_string(f, r->request_id);
    else
        fputs("null", f);
    fputs(",\"path\":", f);
    put_string(f, r->path);
    fprintf(f, ",\"status\":%d,\"received_ns\":%" PRId64, r->status, r->received_ns);
    put_ns(f, "first_token_ns", r->first_token_ns);
    put_ns(f, "finished_ns", r->finished_ns);
    if (r->prompt_tokens >= 0)
        fprintf(f, ",\"prompt_tokens\":%" PRId64, r->prompt_tokens);
    else
        fputs(",\"prompt_tokens\":null", f);
    fprintf(f, ",\"completion_tokens\":%" PRId64 ",\"stream\":%s,\"client_closed\":%s",
            r->completion_tokens, r->stream ? "true" : "false", r->client_closed ? "true" : "false");
    fputs(",\"finish_reason\":", f);
    if (r->finish_reason)
        put_string(f, r->finish_reason);
    else
        fputs("null", f);
    fputs(",\"chunks\":[", f);
    size_t g = 0;
    for (size_t i = 0; i < r->n_chunks; i++)
        put_chunk(f, i > 0, r->chunks[i].t_ns, r->chunks[i].tokens, r, &g);
    if (r->unsent_tokens > 0)
        put_chunk(f, r->n_chunks > 0, 0, r->unsent_tokens, r, &g);
    fputs("]", f);
    put_engine_fields(f, r);
    if (r->late_ns >= 0)
        fprintf(f, ",\"late_ns\":%" PRId64, r->late_ns);
    else
        fputs(",\"late_ns\":null", f);
    fputs(",\"traceparent\":", f);
    if (r->traceparent)
        put_string(f, r->traceparent);
    else
        fputs("null", f);
    fputs("}\n", f);
    if (fflush(f) != 0 || ferror(f)) {
        t->failed = 1;
        return -1;
    }
    return 0;
}

int sim_trace_close(struct sim_trace *t)
{
    if (!t)
        return 0;
    int rc = t->failed ? -1 : 0;
    if (fclose(t->f) != 0)
        rc = -1;
    free(t);
    return rc;
}
