/* benchmark_io.c — struct benchmark to JSON and back. Each block's writer
 * and reader sit next to each other and list the same keys in the same
 * order: a key written is a key read. */
#include "artifact/benchmark.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/sha256.h"

/* Lookup flags of a field anvil writes that a seed-shaped file may lack. */
#define OPT (JR_OPTIONAL | JR_NULLABLE)

/* ---- name → count objects ---- */

static void counts_write(cJSON *o, const char *key, const struct bench_counts *c)
{
    cJSON *j = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; j && i < c->n; i++)
        cJSON_AddNumberToObject(j, c->v[i].key, (double)c->v[i].count);
}

static void counts_free(struct bench_counts *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].key);
    free(c->v);
    *c = (struct bench_counts){0};
}

static void counts_read(struct jread *r, const cJSON *o, const char *key, struct bench_counts *c)
{
    *c = (struct bench_counts){0};
    const cJSON *j = jread_object(r, o, key, OPT), *e;
    if (!j)
        return;
    size_t n = (size_t)cJSON_GetArraySize(j), mark = jread_enter(r, key);
    c->v = calloc(n ? n : 1, sizeof *c->v);
    if (!c->v)
        jread_fail(r, NULL, "out of memory");
    cJSON_ArrayForEach(e, j) {
        if (r->failed)
            break;
        struct bench_count *k = &c->v[c->n];
        if (jread_whole(r, j, e->string, 0, 0, &k->count) == 0 && !(k->key = strdup(e->string)))
            jread_fail(r, e->string, "out of memory");
        if (!r->failed)
            c->n++;
    }
    jread_leave(r, mark);
}

/* Opaque values kept for schema compatibility (seed 001's manifest,
 * source_recipe, tier): written back as read. */
static void opaque_write(cJSON *o, const char *key, const cJSON *v)
{
    cJSON_AddItemToObject(o, key, v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
}

static void opaque_read(struct jread *r, const cJSON *o, const char *key, cJSON **out)
{
    const cJSON *v = jread_item(r, o, key, JR_OPTIONAL);
    *out = v && !cJSON_IsNull(v) ? cJSON_Duplicate(v, true) : NULL;
    if (v && !cJSON_IsNull(v) && !*out)
        jread_fail(r, key, "out of memory");
}

/* ---- distributions ---- */

/* How each distribution is named in `metrics`: seed 001 writes times as
 * <base>_<stat>_ms and other units as <base>_<stat>. */
static const struct dist_name {
    const char *base;
    bool ms;
    size_t off;     /* in struct bench_dists */
} dist_names[] = {
    {"ttft", true, offsetof(struct bench_dists, ttft)},
    {"time_to_first_output", true, offsetof(struct bench_dists, time_to_first_output)},
    {"e2e", true, offsetof(struct bench_dists, e2e)},
    {"generation", true, offsetof(struct bench_dists, generation)},
    {"tpot", true, offsetof(struct bench_dists, tpot)},
    {"mean_inter_token_latency_ms", false, offsetof(struct bench_dists, mean_inter_token_latency)},
    {"decode_tok_s", false, offsetof(struct bench_dists, decode_tok_s)},
    {"effective_prefill_tok_s", false, offsetof(struct bench_dists, effective_prefill_tok_s)},
    {"prompt_tokens", false, offsetof(struct bench_dists, prompt_tokens)},
    /* anvil's additions */
    {"visible_generation", true, offsetof(struct bench_dists, visible_generation)},
    {"output_tokens_per_request", false, offsetof(struct bench_dists, output_tokens_per_request)},
    {"itl", true, offsetof(struct bench_dists, itl)},
    {"itl_per_token", true, offsetof(struct bench_dists, itl_per_token)},
    {"tokens_per_chunk", false, offsetof(struct bench_dists, tokens_per_chunk)},
    {"time_to_headers", true, offsetof(struct bench_dists, time_to_headers)},
    {"time_to_first_byte", true, offsetof(struct bench_dists, time_to_first_byte)},
    {"time_to_first_event", true, offsetof(struct bench_dists, time_to_first_event)},
    {"time_to_second_output", true, offsetof(struct bench_dists, time_to_second_output)},
    /* output tokens / generation time (earlier artifacts: output_tps_per_user, old_base) */
    {"generation_tps_per_user", false, offsetof(struct bench_dists, generation_tps_per_user)},
    {"send_lateness", true, offsetof(struct bench_dists, send_lateness)},
    {"scheduled_ttft", true, offsetof(struct bench_dists, scheduled_ttft)},
    {"scheduled_e2e", true, offsetof(struct bench_dists, scheduled_e2e)},
};

#define N_DISTS (sizeof dist_names / sizeof *dist_names)

static struct dist *dist_at(struct bench_dists *d, size_t i)
{
    return (struct dist *)((char *)d + dist_names[i].off);
}

static const struct dist *dist_of(const struct bench_dists *d, size_t i)
{
    return (const struct dist *)((const char *)d + dist_names[i].off);
}

/* The key of statistic stat of a distribution. */
static void stat_key(char *k, size_t cap, const struct dist_name *n, const char *stat)
{
    snprintf(k, cap, "%s_%s%s", n->base, stat, n->ms ? "_ms" : "");
}

void artifact_add_dist(cJSON *o, const char *base, bool ms, const struct dist *d)
{
    const struct dist_name n = {base, ms, 0};
    const char *names[3] = {"mean", "min", "max"};
    double vals[3] = {d->mean, d->min, d->max};
    char k[96];
    for (int i = 0; i < 3; i++) {
        stat_key(k, sizeof k, &n, names[i]);
        artifact_add_number(o, k, vals[i]);
    }
    for (int i = 0; i < DIST_NPCT; i++) {
        stat_key(k, sizeof k, &n, dist_pct_names[i]);
        artifact_add_number(o, k, dist_pct_of(d, i));
    }
    snprintf(k, sizeof k, "%s_samples", base);
    cJSON_AddNumberToObject(o, k, (double)d->samples);
}

/* Reads the keys artifact_add_dist writes; each may be absent. */
static void dist_read(struct jread *r, const cJSON *m, const struct dist_name *n, struct dist *d)
{
    char k[96];
    stat_key(k, sizeof k, n, "mean");
    jread_number(r, m, k, OPT, &d->mean);
    stat_key(k, sizeof k, n, "min");
    jread_number(r, m, k, OPT, &d->min);
    stat_key(k, sizeof k, n, "max");
    jread_number(r, m, k, OPT, &d->max);
    for (int i = 0; i < DIST_NPCT; i++) {
        stat_key(k, sizeof k, n, dist_pct_names[i]);
        jread_number(r, m, k, OPT, dist_pct(d, i));
    }
    long samples;
    snprintf(k, sizeof k, "%s_samples", n->base);
    jread_whole(r, m, k, OPT, 0, &samples);
    d->samples = samples == ARTIFACT_NONE ? 0 : (size_t)samples;
}

/* ---- metrics ---- */

/* The base an earlier artifact wrote for base, read when base is absent, or
 * NULL: n / generation time was output_tps_per_user until it met seed 004's
 * (n − 1) / (latency − ttft) under that name (docs/METHODOLOGY.md, "The
 * metric registry"). */
static const char *old_base(const char *base)
{
    return !strcmp(base, "generation_tps_per_user") ? "output_tps_per_user" : NULL;
}

static cJSON *metrics_json(const struct bench_metrics *m)
{
    cJSON *j = cJSON_CreateObject();
    for (size_t i = 0; j && i < N_DISTS; i++)
        artifact_add_dist(j, dist_names[i].base, dist_names[i].ms, dist_of(&m->dist, i));
    artifact_add_whole(j, "content_chunks", m->content_chunks);
    artifact_add_number(j, "content_chunks_s", m->content_chunks_s);
    artifact_add_whole(j, "reasoning_chunks", m->reasoning_chunks);
    artifact_add_whole(j, "tool_call_chunks", m->tool_call_chunks);
    artifact_add_whole(j, "tool_calls", m->tool_calls);
    counts_write(j, "output_token_sources", &m->output_token_sources);
    artifact_add_whole(j, "output_tokens", m->output_tokens);
    artifact_add_whole(j, "prompt_tokens", m->prompt_tokens);
    artifact_add_whole(j, "prompt_token_samples", m->prompt_token_samples);
    artifact_add_number(j, "prefix_cache_hit_avg", m->prefix_cache_hit_avg);
    artifact_add_number(j, "throughput_tok_s", m->throughput_tok_s);
    artifact_add_number(j, "request_throughput", m->request_throughput);
    artifact_add_number(j, "output_throughput", m->output_throughput);
    artifact_add_number(j, "total_token_throughput", m->total_token_throughput);
    artifact_add_number(j, "goodput_rps", m->goodput_rps);
    artifact_add_number(j, "aggregate_tps", m->aggregate_tps);
    artifact_add_number(j, "peak_output_tps_1s", m->peak_output_tps_1s);
    if (m->has_energy) {
        artifact_add_number(j, "energy_j", m->energy_j);
        artifact_add_number(j, "output_tokens_per_joule", m->output_tokens_per_joule);
        artifact_add_number(j, "joules_per_output_token", m->joules_per_output_token);
    }
    return j;
}

static void metrics_read(struct jread *r, const cJSON *o, struct bench_metrics *m)
{
    const cJSON *j = jread_object(r, o, "metrics", 0);
    if (!j)
        return;
    size_t mark = jread_enter(r, "metrics");
    for (size_t i = 0; i < N_DISTS; i++) {
        struct dist_name n = dist_names[i];
        char k[96];
        snprintf(k, sizeof k, "%s_samples", n.base);
        if (old_base(n.base) && !cJSON_GetObjectItem(j, k))
            n.base = old_base(n.base);
        dist_read(r, j, &n, dist_at(&m->dist, i));
    }
    jread_whole(r, j, "content_chunks", OPT, 0, &m->content_chunks);
    jread_number(r, j, "content_chunks_s", OPT, &m->content_chunks_s);
    jread_whole(r, j, "reasoning_chunks", OPT, 0, &m->reasoning_chunks);
    jread_whole(r, j, "tool_call_chunks", OPT, 0, &m->tool_call_chunks);
    jread_whole(r, j, "tool_calls", OPT, 0, &m->tool_calls);
    counts_read(r, j, "output_token_sources", &m->output_token_sources);
    jread_whole(r, j, "output_tokens", OPT, 0, &m->output_tokens);
    jread_whole(r, j, "prompt_tokens", OPT, 0, &m->prompt_tokens);
    jread_whole(r, j, "prompt_token_samples", OPT, 0, &m->prompt_token_samples);
    jread_number(r, j, "prefix_cache_hit_avg", OPT, &m->prefix_cache_hit_avg);
    jread_number(r, j, "throughput_tok_s", OPT, &m->throughput_tok_s);
    jread_number(r, j, "request_throughput", OPT, &m->request_throughput);
    jread_number(r, j, "output_throughput", OPT, &m->output_throughput);
    jread_number(r, j, "total_token_throughput", OPT, &m->total_token_throughput);
    jread_number(r, j, "goodput_rps", OPT, &m->goodput_rps);
    jread_number(r, j, "aggregate_tps", OPT, &m->aggregate_tps);
    jread_number(r, j, "peak_output_tps_1s", OPT, &m->peak_output_tps_1s);
    m->has_energy = cJSON_HasObjectItem(j, "energy_j");
    jread_number(r, j, "energy_j", OPT, &m->energy_j);
    jread_number(r, j, "output_tokens_per_joule", OPT, &m->output_tokens_per_joule);
    jread_number(r, j, "joules_per_output_token", OPT, &m->joules_per_output_token);
    jread_leave(r, mark);
}

/* ---- request_timings and failures ---- */

cJSON *benchmark_timing_json(const struct bench_timing *t)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    artifact_add_whole(j, "content_chunks", t->content_chunks);
    artifact_add_number(j, "decode_tok_s", t->decode_tok_s);
    artifact_add_number(j, "e2e_ms", t->e2e_ms);
    artifact_add_number(j, "effective_prefill_tok_s", t->effective_prefill_tok_s);
    artifact_add_number(j, "generation_ms", t->generation_ms);
    artifact_add_number(j, "mean_inter_token_latency_ms", t->mean_inter_token_latency_ms);
    artifact_add_string(j, "output_token_source", t->output_token_source);
    artifact_add_whole(j, "output_tokens", t->output_tokens);
    artifact_add_number(j, "planned_context_tokens", t->planned_context_tokens);
    artifact_add_number(j, "prompt_tokens", t->prompt_tokens);
    artifact_add_whole(j, "reasoning_chunks", t->reasoning_chunks);
    artifact_add_whole(j, "request_index", t->request_index);
    artifact_add_number(j, "time_to_first_output_ms", t->time_to_first_output_ms);
    artifact_add_number(j, "tpot_ms", t->tpot_ms);
    artifact_add_number(j, "ttft_ms", t->ttft_ms);
    artifact_add_number(j, "visible_generation_ms", t->visible_generation_ms);
    /* anvil's additions: the TTFT decomposition and what the stream held */
    artifact_add_number(j, "time_to_headers_ms", t->time_to_headers_ms);
    artifact_add_number(j, "time_to_first_byte_ms", t->time_to_first_byte_ms);
    artifact_add_number(j, "time_to_first_event_ms", t->time_to_first_event_ms);
    artifact_add_number(j, "time_to_second_output_ms", t->time_to_second_output_ms);
    artifact_add_number(j, "generation_tps_per_user", t->generation_tps_per_user);
    artifact_add_number(j, "send_lateness_ms", t->send_lateness_ms);
    artifact_add_number(j, "scheduled_ttft_ms", t->scheduled_ttft_ms);
    artifact_add_number(j, "scheduled_e2e_ms", t->scheduled_e2e_ms);
    artifact_add_number(j, "e2e_output_tps_per_user", t->e2e_output_tps_per_user);
    artifact_add_whole(j, "output_chunks", t->output_chunks);
    artifact_add_whole(j, "tool_call_chunks", t->tool_call_chunks);
    artifact_add_whole(j, "tool_calls", t->tool_calls);
    artifact_add_number(j, "cached_tokens", t->cached_tokens);
    artifact_add_string(j, "finish_reason", t->finish_reason);
    artifact_add_whole(j, "max_tokens", t->max_tokens);
    artifact_add_number(j, "start_monotonic_ns", t->start_monotonic_ns);
    cJSON_AddBoolToObject(j, "first_output_merged", t->first_output_merged);
    return j;
}

/* Seed 001's fields are required in an entry, anvil's additions optional. */
static void timing_read(struct jread *r, const cJSON *j, struct bench_timing *t)
{
    jread_whole(r, j, "content_chunks", 0, 0, &t->content_chunks);
    jread_number(r, j, "decode_tok_s", 0, &t->decode_tok_s);
    jread_number(r, j, "e2e_ms", 0, &t->e2e_ms);
    jread_number(r, j, "effective_prefill_tok_s", 0, &t->effective_prefill_tok_s);
    jread_number(r, j, "generation_ms", 0, &t->generation_ms);
    jread_number(r, j, "mean_inter_token_latency_ms", 0, &t->mean_inter_token_latency_ms);
    jread_string(r, j, "output_token_source", 0, &t->output_token_source);
    jread_whole(r, j, "output_tokens", 0, 0, &t->output_tokens);
    jread_number(r, j, "planned_context_tokens", 0, &t->planned_context_tokens);
    jread_number(r, j, "prompt_tokens", 0, &t->prompt_tokens);
    jread_whole(r, j, "reasoning_chunks", 0, 0, &t->reasoning_chunks);
    jread_whole(r, j, "request_index", 0, 0, &t->request_index);
    jread_number(r, j, "time_to_first_output_ms", 0, &t->time_to_first_output_ms);
    jread_number(r, j, "tpot_ms", 0, &t->tpot_ms);
    jread_number(r, j, "ttft_ms", 0, &t->ttft_ms);
    jread_number(r, j, "visible_generation_ms", 0, &t->visible_generation_ms);
    jread_number(r, j, "time_to_headers_ms", OPT, &t->time_to_headers_ms);
    jread_number(r, j, "time_to_first_byte_ms", OPT, &t->time_to_first_byte_ms);
    jread_number(r, j, "time_to_first_event_ms", OPT, &t->time_to_first_event_ms);
    jread_number(r, j, "time_to_second_output_ms", OPT, &t->time_to_second_output_ms);
    jread_number(r, j, cJSON_GetObjectItem(j, "generation_tps_per_user") ? "generation_tps_per_user"
                 : old_base("generation_tps_per_user"), OPT, &t->generation_tps_per_user);
    jread_number(r, j, "send_lateness_ms", OPT, &t->send_lateness_ms);
    jread_number(r, j, "scheduled_ttft_ms", OPT, &t->scheduled_ttft_ms);
    jread_number(r, j, "scheduled_e2e_ms", OPT, &t->scheduled_e2e_ms);
    jread_number(r, j, "e2e_output_tps_per_user", OPT, &t->e2e_output_tps_per_user);
    jread_whole(r, j, "output_chunks", OPT, 0, &t->output_chunks);
    jread_whole(r, j, "tool_call_chunks", OPT, 0, &t->tool_call_chunks);
    jread_whole(r, j, "tool_calls", OPT, 0, &t->tool_calls);
    jread_number(r, j, "cached_tokens", OPT, &t->cached_tokens);
    jread_string(r, j, "finish_reason", OPT, &t->finish_reason);
    jread_whole(r, j, "max_tokens", OPT, 0, &t->max_tokens);
    jread_number(r, j, "start_monotonic_ns", OPT, &t->start_monotonic_ns);
    jread_bool(r, j, "first_output_merged", JR_OPTIONAL, &t->first_output_merged);
}

static void timing_free(struct bench_timing *t)
{
    free(t->output_token_source);
    free(t->finish_reason);
}

cJSON *benchmark_failure_json(const struct bench_failure *f)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    artifact_add_whole(j, "request_index", f->request_index);
    artifact_add_string(j, "category", f->category);
    artifact_add_whole(j, "http_status", f->http_status);
    artifact_add_string(j, "phase", f->phase);
    artifact_add_string(j, "message", f->message);
    artifact_add_number(j, "elapsed_ms", f->elapsed_ms);
    return j;
}

static void failure_read(struct jread *r, const cJSON *j, struct bench_failure *f)
{
    jread_whole(r, j, "request_index", 0, 0, &f->request_index);
    jread_string(r, j, "category", 0, &f->category);
    jread_whole(r, j, "http_status", JR_NULLABLE, 0, &f->http_status);
    jread_string(r, j, "phase", 0, &f->phase);
    jread_string(r, j, "message", 0, &f->message);
    jread_number(r, j, "elapsed_ms", 0, &f->elapsed_ms);
}

static void failure_free(struct bench_failure *f)
{
    free(f->category);
    free(f->phase);
    free(f->message);
}

/* entries_read's state for jread_each: the array being filled. */
struct entries {
    void (*read_one)(struct jread *, const cJSON *, void *);
    char *v;
    size_t elem_size, *n;
};

static void entry_read_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct entries *es = ctx;
    es->read_one(r, o, es->v + (size_t)i * es->elem_size);
    (*es->n)++;     /* counted even when it failed halfway: what it holds is freed */
}

/* Reads the optional array key of objects, each by read_one into a new
 * array of elem_size bytes per element (*out, *n). */
static void entries_read(struct jread *r, const cJSON *o, const char *key, size_t elem_size,
                         void (*read_one)(struct jread *, const cJSON *, void *), void **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const cJSON *a = jread_array(r, o, key, OPT);
    if (!a)
        return;
    size_t len = (size_t)cJSON_GetArraySize(a);
    char *v = calloc(len ? len : 1, elem_size);
    if (!v)
        jread_fail(r, key, "out of memory");
    *out = v;
    struct entries es = {read_one, v, elem_size, n};
    jread_each(r, key, a, entry_read_at, &es);
}

static void timing_read_any(struct jread *r, const cJSON *j, void *t)
{
    timing_read(r, j, t);
}

static void failure_read_any(struct jread *r, const cJSON *j, void *f)
{
    failure_read(r, j, f);
}

/* ---- anvil's blocks ---- */

static void slo_write(cJSON *o, const struct bench_slo *s)
{
    if (!s->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "slo");
    artifact_add_number(j, "ttft_ms", s->ttft_ms);
    artifact_add_number(j, "tpot_ms", s->tpot_ms);
    artifact_add_number(j, "e2el_ms", s->e2el_ms);
}

static void slo_read(struct jread *r, const cJSON *o, struct bench_slo *s)
{
    const cJSON *j = jread_object(r, o, "slo", JR_OPTIONAL);
    *s = (struct bench_slo){j != NULL, NAN, NAN, NAN};
    if (!j)
        return;
    size_t mark = jread_enter(r, "slo");
    jread_number(r, j, "ttft_ms", 0, &s->ttft_ms);
    jread_number(r, j, "tpot_ms", 0, &s->tpot_ms);
    jread_number(r, j, "e2el_ms", 0, &s->e2el_ms);
    jread_leave(r, mark);
}

static void invariants_write(cJSON *o, const struct invariants *inv)
{
    cJSON *j = cJSON_AddObjectToObject(o, "invariants");
    cJSON_AddNumberToObject(j, "checked", inv->checked);
    cJSON *v = cJSON_AddObjectToObject(j, "violations");
    for (int i = 0; i < INV_COUNT; i++)
        cJSON_AddNumberToObject(v, invariant_name((enum invariant)i), inv->violations[i]);
    cJSON *ex = cJSON_AddArrayToObject(j, "examples");
    for (int i = 0; ex && i < inv->n_examples; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "request_index", inv->examples[i].request_index);
        cJSON_AddStringToObject(e, "invariant", invariant_name(inv->examples[i].what));
        cJSON_AddStringToObject(e, "detail", inv->examples[i].detail);
        cJSON_AddItemToArray(ex, e);
    }
}

static int invariant_of(const char *name, enum invariant *out)
{
    for (int i = 0; i < INV_COUNT; i++)
        if (!strcmp(name, invariant_name((enum invariant)i))) {
            *out = (enum invariant)i;
            return 0;
        }
    return -1;
}

static void example_read(struct jread *r, const cJSON *e, struct inv_example *x)
{
    long index;
    char *what = NULL, *detail = NULL;
    jread_whole(r, e, "request_index", 0, 0, &index);
    jread_string(r, e, "invariant", 0, &what);
    jread_string(r, e, "detail", 0, &detail);
    if (!r->failed && invariant_of(what, &x->what) != 0)
        jread_fail(r, "invariant", "unknown invariant \"%s\"", what);
    if (!r->failed) {
        x->request_index = (int)index;
        snprintf(x->detail, sizeof x->detail, "%s", detail);
    }
    free(what);
    free(detail);
}

/* Violation counts are by name; a name the file lacks counts 0. */
static void invariants_read(struct jread *r, const cJSON *o, bool *present, struct invariants *inv)
{
    *inv = (struct invariants){0};
    const cJSON *j = jread_object(r, o, "invariants", JR_OPTIONAL);
    *present = j != NULL;
    if (!j)
        return;
    size_t mark = jread_enter(r, "invariants");
    long n;
    jread_whole(r, j, "checked", 0, 0, &n);
    inv->checked = (int)n;
    const cJSON *v = jread_object(r, j, "violations", 0);
    size_t vm = jread_enter(r, "violations");
    for (int i = 0; v && i < INV_COUNT; i++) {
        jread_whole(r, v, invariant_name((enum invariant)i), OPT, 0, &n);
        inv->violations[i] = n == ARTIFACT_NONE ? 0 : (int)n;
    }
    jread_leave(r, vm);
    const cJSON *ex = jread_array(r, j, "examples", 0), *e;
    if (cJSON_GetArraySize(ex) > INV_EXAMPLES)
        jread_fail(r, "examples", "expected at most %d entries", INV_EXAMPLES);
    size_t em = jread_enter(r, "examples");
    cJSON_ArrayForEach(e, ex) {
        if (r->failed)
            break;
        size_t m = jread_enter_index(r, inv->n_examples);
        example_read(r, e, &inv->examples[inv->n_examples++]);
        jread_leave(r, m);
    }
    jread_leave(r, em);
    jread_leave(r, mark);
}

static void calibration_write(cJSON *o, const struct bench_calibration *c)
{
    if (!c->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "calibration");
    artifact_add_string(j, "method", c->method);
    artifact_add_string(j, "source", c->source);
    artifact_add_string(j, "cache_file", c->cache_file);
    artifact_add_string(j, "cache_key", c->cache_key);
    artifact_add_string(j, "shared_prefix_method", c->shared_prefix_method);
    if (!c->searched)
        return;
    cJSON_AddNumberToObject(j, "target_tokens", (double)c->c.target_tokens);
    cJSON_AddNumberToObject(j, "tolerance_tokens", (double)c->c.tolerance_tokens);
    cJSON_AddNumberToObject(j, "filler_words", (double)c->c.words);
    cJSON_AddNumberToObject(j, "measured_tokens", (double)c->c.tokens);
    cJSON_AddBoolToObject(j, "converged", c->c.converged);
    cJSON *steps = cJSON_AddArrayToObject(j, "steps");
    for (int i = 0; steps && i < c->c.n_steps; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "filler_words", (double)c->c.steps[i].words);
        artifact_add_number(s, "tokens", c->c.steps[i].tokens >= 0 ? (double)c->c.steps[i].tokens : NAN);
        if (c->c.steps[i].truncated)    /* counted, but cut by the server: not used */
            cJSON_AddBoolToObject(s, "truncated", 1);
        cJSON_AddItemToArray(steps, s);
    }
}

/* The search's fields are there when target_tokens is. */
static void calibration_read(struct jread *r, const cJSON *o, struct bench_calibration *c)
{
    *c = (struct bench_calibration){0};
    const cJSON *j = jread_object(r, o, "calibration", JR_OPTIONAL);
    if (!j)
        return;
    c->present = true;
    size_t mark = jread_enter(r, "calibration");
    jread_string(r, j, "method", 0, &c->method);
    jread_string(r, j, "source", OPT, &c->source);
    jread_string(r, j, "cache_file", OPT, &c->cache_file);
    jread_string(r, j, "cache_key", OPT, &c->cache_key);
    jread_string(r, j, "shared_prefix_method", OPT, &c->shared_prefix_method);
    c->searched = cJSON_GetObjectItemCaseSensitive(j, "target_tokens") != NULL;
    if (c->searched) {
        bool converged;
        jread_whole(r, j, "target_tokens", 0, 0, &c->c.target_tokens);
        jread_whole(r, j, "tolerance_tokens", 0, 0, &c->c.tolerance_tokens);
        jread_whole(r, j, "filler_words", 0, 0, &c->c.words);
        jread_whole(r, j, "measured_tokens", 0, 0, &c->c.tokens);
        jread_bool(r, j, "converged", 0, &converged);
        c->c.converged = converged;
        const cJSON *steps = jread_array(r, j, "steps", 0), *s;
        if (cJSON_GetArraySize(steps) > CALIB_MAX_STEPS)
            jread_fail(r, "steps", "expected at most %d entries", CALIB_MAX_STEPS);
        size_t sm = jread_enter(r, "steps");
        cJSON_ArrayForEach(s, steps) {
            if (r->failed)
                break;
            size_t m = jread_enter_index(r, c->c.n_steps);
            jread_whole(r, s, "filler_words", 0, 0, &c->c.steps[c->c.n_steps].words);
            struct calib_step *st = &c->c.steps[c->c.n_steps];
            double tokens;
            bool truncated;
            jread_number(r, s, "tokens", 0, &tokens);  /* null: the server refused the probe */
            st->tokens = isnan(tokens) ? -1 : (long)tokens;
            if (!isnan(tokens) && (tokens < 0 || tokens != floor(tokens)))
                jread_fail(r, "tokens", "expected a whole number ≥ 0 or null");
            jread_bool(r, s, "truncated", JR_OPTIONAL, &truncated);
            st->truncated = truncated;
            c->c.n_steps++;
            jread_leave(r, m);
        }
        jread_leave(r, sm);
    }
    jread_leave(r, mark);
}

static void server_gone_write(cJSON *o, const struct bench_server_gone *g)
{
    if (!g->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "server_gone");
    artifact_add_number(j, "first_failure_s", g->first_failure_s);
    artifact_add_whole(j, "connect_failures", g->connect_failures);
    artifact_add_whole(j, "truncated", g->truncated);
}

static void server_gone_read(struct jread *r, const cJSON *o, struct bench_server_gone *g)
{
    *g = (struct bench_server_gone){0};
    const cJSON *j = jread_object(r, o, "server_gone", JR_OPTIONAL);
    if (!j)
        return;
    g->present = true;
    size_t mark = jread_enter(r, "server_gone");
    jread_number(r, j, "first_failure_s", 0, &g->first_failure_s);
    jread_whole(r, j, "connect_failures", 0, 0, &g->connect_failures);
    jread_whole(r, j, "truncated", 0, 0, &g->truncated);
    jread_leave(r, mark);
}

static void server_stalled_write(cJSON *o, const struct bench_server_stalled *g)
{
    if (!g->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "server_stalled");
    artifact_add_number(j, "stall_timeout_s", g->stall_timeout_s);
    artifact_add_number(j, "detected_s", g->detected_s);
    artifact_add_number(j, "silent_s", g->silent_s);
    artifact_add_whole(j, "in_flight", g->in_flight);
}

static void server_stalled_read(struct jread *r, const cJSON *o, struct bench_server_stalled *g)
{
    *g = (struct bench_server_stalled){0};
    const cJSON *j = jread_object(r, o, "server_stalled", JR_OPTIONAL);
    if (!j)
        return;
    g->present = true;
    size_t mark = jread_enter(r, "server_stalled");
    jread_number(r, j, "stall_timeout_s", 0, &g->stall_timeout_s);
    jread_number(r, j, "detected_s", 0, &g->detected_s);
    jread_number(r, j, "silent_s", 0, &g->silent_s);
    jread_whole(r, j, "in_flight", 0, 0, &g->in_flight);
    jread_leave(r, mark);
}

static void duration_write(cJSON *o, const struct bench_duration_mode *d)
{
    if (!d->present) {
        cJSON_AddNullToObject(o, "duration_mode");
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "duration_mode");
    artifact_add_number(j, "duration_s", d->duration_s);
    artifact_add_number(j, "warmup_s", d->warmup_s);
    artifact_add_number(j, "window_s", d->window_s);
    artifact_add_number(j, "tokens_in_window", d->tokens_in_window);
    artifact_add_number(j, "aggregate_tps", d->aggregate_tps);
    artifact_add_whole(j, "requests_started_in_window", d->requests_started_in_window);
    artifact_add_whole(j, "incomplete_requests", d->incomplete_requests);
    artifact_add_whole(j, "warmup_requests", d->warmup_requests);
    artifact_add_number(j, "window_start_ns", d->window_start_ns);
    artifact_add_number(j, "window_end_ns", d->window_end_ns);
    artifact_add_string(j, "token_source", d->token_source);
    artifact_add_number(j, "server_tokens_in_window", d->server_tokens_in_window);
}

static void duration_read(struct jread *r, const cJSON *o, struct bench_duration_mode *d)
{
    *d = (struct bench_duration_mode){0};
    const cJSON *j = jread_object(r, o, "duration_mode", OPT);
    if (!j)
        return;
    d->present = true;
    size_t mark = jread_enter(r, "duration_mode");
    jread_number(r, j, "duration_s", 0, &d->duration_s);
    jread_number(r, j, "warmup_s", 0, &d->warmup_s);
    jread_number(r, j, "window_s", 0, &d->window_s);
    jread_number(r, j, "tokens_in_window", 0, &d->tokens_in_window);
    jread_number(r, j, "aggregate_tps", 0, &d->aggregate_tps);
    jread_whole(r, j, "requests_started_in_window", 0, 0, &d->requests_started_in_window);
    jread_whole(r, j, "incomplete_requests", 0, 0, &d->incomplete_requests);
    jread_whole(r, j, "warmup_requests", 0, 0, &d->warmup_requests);
    jread_number(r, j, "window_start_ns", OPT, &d->window_start_ns);
    jread_number(r, j, "window_end_ns", OPT, &d->window_end_ns);
    jread_string(r, j, "token_source", OPT, &d->token_source);
    jread_number(r, j, "server_tokens_in_window", OPT, &d->server_tokens_in_window);
    jread_leave(r, mark);
}

static void workload_write(cJSON *o, const struct bench_workload *w)
{
    if (!w->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "workload");
    artifact_add_string(j, "dataset", w->dataset);
    artifact_add_number(j, "input_len_range", w->input_len_range);
    artifact_add_number(j, "output_len_range", w->output_len_range);
    artifact_add_whole(j, "shared_prefix_len", w->shared_prefix_len);
    const struct bench_images *im = &w->images;
    if (im->present) {
        cJSON *k = cJSON_AddObjectToObject(j, "images");
        artifact_add_whole(k, "per_request", im->per_request);
        artifact_add_whole(k, "width", im->width);
        artifact_add_whole(k, "height", im->height);
        artifact_add_string(k, "format", im->format ? im->format : "png");
        artifact_add_number(k, "tokens_per_image", im->tokens_per_image);
    }
    const struct bench_agentic *ag = &w->agentic;
    if (ag->present) {
        cJSON *k = cJSON_AddObjectToObject(j, "agentic");
        artifact_add_string(k, "source", ag->source);
        artifact_add_whole(k, "sessions", ag->sessions);
        artifact_add_whole(k, "turns", ag->turns);
        artifact_add_whole(k, "sub_agent_requests", ag->sub_agent_requests);
        artifact_add_whole(k, "sessions_completed", ag->sessions_completed);
        artifact_add_number(k, "session_wall_ms_mean", ag->session_wall_ms_mean);
        artifact_add_number(k, "session_wall_ms_p50", ag->session_wall_ms_p50);
        artifact_add_number(k, "session_wall_ms_max", ag->session_wall_ms_max);
        cJSON *pt = cJSON_AddArrayToObject(k, "per_turn");
        for (size_t i = 0; i < ag->n_per_turn; i++) {
            const struct bench_agentic_turn *t = &ag->per_turn[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddItemToArray(pt, e);
            artifact_add_whole(e, "turn", t->turn);
            artifact_add_whole(e, "requests", t->requests);
            artifact_add_number(e, "time_to_first_output_ms", t->time_to_first_output_ms);
            artifact_add_number(e, "ttft_ms", t->ttft_ms);
            artifact_add_number(e, "prompt_tokens", t->prompt_tokens);
            artifact_add_number(e, "cached_tokens", t->cached_tokens);
            artifact_add_number(e, "think_time_ms", t->think_time_ms);
            artifact_add_number(e, "gap_ms", t->gap_ms);
            artifact_add_whole(e, "sub_agent_requests", t->sub_agent_requests);
            artifact_add_number(e, "sub_agent_time_to_first_output_ms", t->sub_agent_time_to_first_output_ms);
            artifact_add_number(e, "sub_agent_prompt_tokens", t->sub_agent_prompt_tokens);
            artifact_add_number(e, "sub_agent_cached_tokens", t->sub_agent_cached_tokens);
        }
    }
    const struct bench_prefix_cache *pc = &w->prefix_cache;
    if (pc->present) {
        cJSON *k = cJSON_AddObjectToObject(j, "prefix_cache");
        artifact_add_string(k, "flush", pc->flush);
        artifact_add_string(k, "flush_endpoint", pc->flush_endpoint);
        artifact_add_number(k, "target_hit_rate", pc->target_hit_rate);
        artifact_add_whole(k, "groups", pc->groups);
        artifact_add_whole(k, "primed_requests", pc->primed_requests);
        artifact_add_whole(k, "prefix_tokens", pc->prefix_tokens);
        artifact_add_number(k, "achieved_hit_rate", pc->achieved_hit_rate);
        artifact_add_number(k, "tolerance", pc->tolerance);
        cJSON_AddBoolToObject(k, "met", pc->met);
        artifact_add_number(k, "server_hit_rate", pc->server_hit_rate);
        artifact_add_string(k, "server_hit_rate_source", pc->server_hit_rate_source);
        if (pc->server_met < 0)
            cJSON_AddNullToObject(k, "server_met");
        else
            cJSON_AddBoolToObject(k, "server_met", pc->server_met);
    }
    const struct bench_trace *t = &w->trace;
    if (!t->present)
        return;
    cJSON *k = cJSON_AddObjectToObject(j, "trace");
    artifact_add_string(k, "format", t->format);
    artifact_add_whole(k, "lines", t->lines);
    artifact_add_whole(k, "requests", t->requests);
    artifact_add_whole(k, "block_tokens", t->block_tokens);
    artifact_add_number(k, "speed", t->speed);
    artifact_add_number(k, "start_s", t->start_s);
    artifact_add_number(k, "duration_s", t->duration_s);
    artifact_add_number(k, "span_s", t->span_s);
    artifact_add_number(k, "theoretical_prefix_hit_rate", t->theoretical_prefix_hit_rate);
    artifact_add_number(k, "measured_prefix_hit_rate", t->measured_prefix_hit_rate);
    artifact_add_number(k, "server_prefix_hit_rate", t->server_prefix_hit_rate);
    artifact_add_string(k, "server_prefix_hit_rate_source", t->server_prefix_hit_rate_source);
    artifact_add_whole(k, "late_sends", t->late_sends);
    artifact_add_number(k, "late_send_threshold_ms", t->late_send_threshold_ms);
}

static void images_read(struct jread *r, const cJSON *o, struct bench_images *im)
{
    *im = (struct bench_images){0};
    const cJSON *k = jread_object(r, o, "images", JR_OPTIONAL);
    if (!k)
        return;
    im->present = true;
    size_t mark = jread_enter(r, "images");
    jread_whole(r, k, "per_request", 0, 0, &im->per_request);
    jread_whole(r, k, "width", 0, 0, &im->width);
    jread_whole(r, k, "height", 0, 0, &im->height);
    jread_string(r, k, "format", 0, &im->format);
    jread_number(r, k, "tokens_per_image", JR_NULLABLE, &im->tokens_per_image);
    jread_leave(r, mark);
}

static void agentic_read(struct jread *r, const cJSON *o, struct bench_agentic *a)
{
    *a = (struct bench_agentic){0};
    const cJSON *k = jread_object(r, o, "agentic", JR_OPTIONAL);
    if (!k)
        return;
    a->present = true;
    size_t mark = jread_enter(r, "agentic");
    jread_string(r, k, "source", JR_NULLABLE, &a->source);
    jread_whole(r, k, "sessions", 0, 0, &a->sessions);
    jread_whole(r, k, "turns", 0, 0, &a->turns);
    jread_whole(r, k, "sub_agent_requests", 0, 0, &a->sub_agent_requests);
    jread_whole(r, k, "sessions_completed", 0, 0, &a->sessions_completed);
    jread_number(r, k, "session_wall_ms_mean", 0, &a->session_wall_ms_mean);
    jread_number(r, k, "session_wall_ms_p50", 0, &a->session_wall_ms_p50);
    jread_number(r, k, "session_wall_ms_max", 0, &a->session_wall_ms_max);
    const cJSON *pt = cJSON_GetObjectItemCaseSensitive(k, "per_turn");
    if (!cJSON_IsArray(pt)) {
        jread_fail(r, "per_turn", "expected an array");
    } else if ((a->per_turn = calloc((size_t)cJSON_GetArraySize(pt) + 1, sizeof *a->per_turn))) {
        const cJSON *e;
        size_t em = jread_enter(r, "per_turn");
        cJSON_ArrayForEach(e, pt) {
            struct bench_agentic_turn *t = &a->per_turn[a->n_per_turn++];
            jread_whole(r, e, "turn", 0, 0, &t->turn);
            jread_whole(r, e, "requests", 0, 0, &t->requests);
            jread_number(r, e, "time_to_first_output_ms", 0, &t->time_to_first_output_ms);
            jread_number(r, e, "ttft_ms", 0, &t->ttft_ms);
            jread_number(r, e, "prompt_tokens", 0, &t->prompt_tokens);
            jread_number(r, e, "cached_tokens", 0, &t->cached_tokens);
            jread_number(r, e, "think_time_ms", 0, &t->think_time_ms);
            jread_number(r, e, "gap_ms", 0, &t->gap_ms);
            jread_whole(r, e, "sub_agent_requests", 0, 0, &t->sub_agent_requests);
            jread_number(r, e, "sub_agent_time_to_first_output_ms", 0, &t->sub_agent_time_to_first_output_ms);
            jread_number(r, e, "sub_agent_prompt_tokens", 0, &t->sub_agent_prompt_tokens);
            jread_number(r, e, "sub_agent_cached_tokens", 0, &t->sub_agent_cached_tokens);
        }
        jread_leave(r, em);
    }
    jread_leave(r, mark);
}

static void prefix_cache_read(struct jread *r, const cJSON *o, struct bench_prefix_cache *p)
{
    *p = (struct bench_prefix_cache){0};
    const cJSON *k = jread_object(r, o, "prefix_cache", JR_OPTIONAL);
    if (!k)
        return;
    p->present = true;
    size_t mark = jread_enter(r, "prefix_cache");
    jread_string(r, k, "flush", 0, &p->flush);
    jread_string(r, k, "flush_endpoint", JR_NULLABLE, &p->flush_endpoint);
    jread_number(r, k, "target_hit_rate", JR_NULLABLE, &p->target_hit_rate);
    jread_whole(r, k, "groups", 0, 0, &p->groups);
    jread_whole(r, k, "primed_requests", 0, 0, &p->primed_requests);
    jread_whole(r, k, "prefix_tokens", 0, 0, &p->prefix_tokens);
    jread_number(r, k, "achieved_hit_rate", JR_NULLABLE, &p->achieved_hit_rate);
    jread_number(r, k, "tolerance", 0, &p->tolerance);
    jread_bool(r, k, "met", 0, &p->met);
    jread_number(r, k, "server_hit_rate", JR_NULLABLE, &p->server_hit_rate);
    jread_string(r, k, "server_hit_rate_source", JR_NULLABLE, &p->server_hit_rate_source);
    const cJSON *sm = jread_item(r, k, "server_met", 0);
    p->server_met = cJSON_IsTrue(sm) ? 1 : cJSON_IsFalse(sm) ? 0 : -1;
    if (sm && !cJSON_IsBool(sm) && !cJSON_IsNull(sm))
        jread_fail(r, "server_met", "expected true, false or null");
    jread_leave(r, mark);
}

static void trace_read(struct jread *r, const cJSON *o, struct bench_trace *t)
{
    *t = (struct bench_trace){0};
    const cJSON *k = jread_object(r, o, "trace", JR_OPTIONAL);
    if (!k)
        return;
    t->present = true;
    size_t mark = jread_enter(r, "trace");
    jread_string(r, k, "format", 0, &t->format);
    jread_whole(r, k, "lines", 0, 0, &t->lines);
    jread_whole(r, k, "requests", 0, 0, &t->requests);
    jread_whole(r, k, "block_tokens", 0, 0, &t->block_tokens);
    jread_number(r, k, "speed", 0, &t->speed);
    jread_number(r, k, "start_s", 0, &t->start_s);
    jread_number(r, k, "duration_s", JR_NULLABLE, &t->duration_s);
    jread_number(r, k, "span_s", 0, &t->span_s);
    jread_number(r, k, "theoretical_prefix_hit_rate", 0, &t->theoretical_prefix_hit_rate);
    jread_number(r, k, "measured_prefix_hit_rate", JR_NULLABLE, &t->measured_prefix_hit_rate);
    jread_whole(r, k, "late_sends", 0, 0, &t->late_sends);
    jread_number(r, k, "late_send_threshold_ms", 0, &t->late_send_threshold_ms);
    jread_number(r, k, "server_prefix_hit_rate", JR_NULLABLE, &t->server_prefix_hit_rate);
    jread_string(r, k, "server_prefix_hit_rate_source", JR_NULLABLE, &t->server_prefix_hit_rate_source);
    jread_leave(r, mark);
}

static void workload_read(struct jread *r, const cJSON *o, struct bench_workload *w)
{
    *w = (struct bench_workload){0};
    const cJSON *j = jread_object(r, o, "workload", JR_OPTIONAL);
    if (!j)
        return;
    w->present = true;
    size_t mark = jread_enter(r, "workload");
    jread_string(r, j, "dataset", JR_NULLABLE, &w->dataset);
    jread_number(r, j, "input_len_range", 0, &w->input_len_range);
    jread_number(r, j, "output_len_range", 0, &w->output_len_range);
    jread_whole(r, j, "shared_prefix_len", 0, 0, &w->shared_prefix_len);
    trace_read(r, j, &w->trace);
    prefix_cache_read(r, j, &w->prefix_cache);
    agentic_read(r, j, &w->agentic);
    images_read(r, j, &w->images);
    jread_leave(r, mark);
}

static void sweep_write(cJSON *o, const struct bench_sweep *s)
{
    if (!s->present) {
        cJSON_AddNullToObject(o, "sweep");
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "sweep");
    artifact_add_string(j, "target", s->target);
    artifact_add_string(j, "case_id", s->case_id);
    artifact_add_whole(j, "round", s->round);
}

static void sweep_read(struct jread *r, const cJSON *o, struct bench_sweep *s)
{
    *s = (struct bench_sweep){0};
    const cJSON *j = jread_object(r, o, "sweep", OPT);
    if (!j)
        return;
    s->present = true;
    size_t mark = jread_enter(r, "sweep");
    jread_string(r, j, "target", JR_NONEMPTY, &s->target);
    jread_string(r, j, "case_id", JR_NONEMPTY, &s->case_id);
    jread_whole(r, j, "round", 0, 1, &s->round);
    jread_leave(r, mark);
}

static void client_write(cJSON *o, const struct bench_client *c)
{
    if (!c->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "client");
    artifact_add_number(j, "cpu_user_s", c->cpu_user_s);
    artifact_add_number(j, "cpu_sys_s", c->cpu_sys_s);
    artifact_add_whole(j, "sse_events", c->sse_events);
    artifact_add_number(j, "cpu_us_per_event", c->cpu_us_per_event);
    artifact_add_number(j, "cpu_utilization", c->cpu_utilization);
    cJSON *lag = cJSON_AddObjectToObject(j, "loop_lag_ms");
    artifact_add_number(lag, "p50", c->loop_lag_p50_ms);
    artifact_add_number(lag, "p99", c->loop_lag_p99_ms);
    artifact_add_number(lag, "max", c->loop_lag_max_ms);
    artifact_add_whole(lag, "samples", c->loop_lag_samples);
    artifact_add_number(j, "send_lateness_p99_ms", c->send_lateness_p99_ms);
    cJSON *rx = cJSON_AddObjectToObject(j, "arrival_stamps");
    artifact_add_whole(rx, "kernel_rx", c->arrival_stamps_kernel_rx);
    artifact_add_whole(rx, "client_clock", c->arrival_stamps_client_clock);
    if (c->threads > 0)
        artifact_add_whole(j, "threads", c->threads);
    else
        cJSON_AddNullToObject(j, "threads");
    if (!c->per_thread)
        return;
    cJSON *a = cJSON_AddArrayToObject(j, "per_thread");
    for (size_t i = 0; a && i < c->n_per_thread; i++) {
        const struct bench_thread *t = &c->per_thread[i];
        cJSON *e = cJSON_CreateObject();
        if (!cJSON_AddItemToArray(a, e))
            break;
        artifact_add_whole(e, "requests", t->requests);
        cJSON *tl = cJSON_AddObjectToObject(e, "loop_lag_ms");
        artifact_add_number(tl, "p99", t->loop_lag_p99_ms);
        artifact_add_number(tl, "max", t->loop_lag_max_ms);
        artifact_add_whole(tl, "samples", t->loop_lag_samples);
    }
}

static void thread_read(struct jread *r, const cJSON *j, void *v)
{
    struct bench_thread *t = v;
    jread_whole(r, j, "requests", 0, 0, &t->requests);
    const cJSON *lag = jread_object(r, j, "loop_lag_ms", 0);
    size_t m = jread_enter(r, "loop_lag_ms");
    jread_number(r, lag, "p99", 0, &t->loop_lag_p99_ms);
    jread_number(r, lag, "max", 0, &t->loop_lag_max_ms);
    jread_whole(r, lag, "samples", 0, 0, &t->loop_lag_samples);
    jread_leave(r, m);
}

static void client_read(struct jread *r, const cJSON *o, struct bench_client *c)
{
    *c = (struct bench_client){0};
    const cJSON *j = jread_object(r, o, "client", JR_OPTIONAL);
    if (!j)
        return;
    c->present = true;
    size_t mark = jread_enter(r, "client");
    jread_number(r, j, "cpu_user_s", 0, &c->cpu_user_s);
    jread_number(r, j, "cpu_sys_s", 0, &c->cpu_sys_s);
    jread_whole(r, j, "sse_events", 0, 0, &c->sse_events);
    jread_number(r, j, "cpu_us_per_event", 0, &c->cpu_us_per_event);
    jread_number(r, j, "cpu_utilization", 0, &c->cpu_utilization);
    const cJSON *lag = jread_object(r, j, "loop_lag_ms", 0);
    size_t m = jread_enter(r, "loop_lag_ms");
    jread_number(r, lag, "p50", 0, &c->loop_lag_p50_ms);
    jread_number(r, lag, "p99", 0, &c->loop_lag_p99_ms);
    jread_number(r, lag, "max", 0, &c->loop_lag_max_ms);
    jread_whole(r, lag, "samples", 0, 0, &c->loop_lag_samples);
    jread_leave(r, m);
    jread_number(r, j, "send_lateness_p99_ms", 0, &c->send_lateness_p99_ms);
    const cJSON *rx = jread_object(r, j, "arrival_stamps", 0);
    m = jread_enter(r, "arrival_stamps");
    jread_whole(r, rx, "kernel_rx", 0, 0, &c->arrival_stamps_kernel_rx);
    jread_whole(r, rx, "client_clock", 0, 0, &c->arrival_stamps_client_clock);
    jread_leave(r, m);
    /* threads and per_thread: absent or null in artifacts older than them */
    jread_whole(r, j, "threads", JR_OPTIONAL | JR_NULLABLE, 1, &c->threads);
    if (c->threads < 0)
        c->threads = 0;
    void *pt;
    entries_read(r, j, "per_thread", sizeof *c->per_thread, thread_read, &pt, &c->n_per_thread);
    c->per_thread = pt;
    if (c->per_thread && c->n_per_thread != (size_t)c->threads)
        jread_fail(r, "per_thread", "has %zu entries for %ld threads", c->n_per_thread, c->threads);
    jread_leave(r, mark);
}

/* The methodology's entries in anvil's order (a file may hold any of them). */
#define METHODOLOGY(X) X(clock) X(request_start) X(ttft) X(time_to_first_output) X(e2e) \
    X(generation) X(tpot) X(mean_inter_token_latency) X(decode) X(effective_prefill)      \
    X(output_tokens) X(itl) X(throughput) X(distributions) X(percentile_method)

static void methodology_write(cJSON *o, const struct bench_methodology *t)
{
    if (!t->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "timing_methodology");
#define WRITE_ENTRY(k) if (t->k) cJSON_AddStringToObject(j, #k, t->k);
    METHODOLOGY(WRITE_ENTRY)
#undef WRITE_ENTRY
}

static void methodology_read(struct jread *r, const cJSON *o, struct bench_methodology *t)
{
    *t = (struct bench_methodology){0};
    const cJSON *j = jread_object(r, o, "timing_methodology", JR_OPTIONAL);
    if (!j)
        return;
    t->present = true;
    size_t mark = jread_enter(r, "timing_methodology");
#define READ_ENTRY(k) jread_string(r, j, #k, JR_OPTIONAL, &t->k);
    METHODOLOGY(READ_ENTRY)
#undef READ_ENTRY
    jread_leave(r, mark);
}

static void methodology_free(struct bench_methodology *t)
{
#define FREE_ENTRY(k) free(t->k);
    METHODOLOGY(FREE_ENTRY)
#undef FREE_ENTRY
}

static void serve_flags_write(cJSON *o, const struct bench_serve_flags *f)
{
    if (!f->present)
        return;
    cJSON *j = cJSON_AddObjectToObject(o, "serve_flags");
    cJSON_AddBoolToObject(j, "no_thinking", f->no_thinking);
    artifact_add_string(j, "reasoning_effort", f->reasoning_effort);
    cJSON_AddBoolToObject(j, "shared_prefix_burst", f->shared_prefix_burst);
    artifact_add_string(j, "thinking_mode", f->thinking_mode);
}

static void serve_flags_read(struct jread *r, const cJSON *o, struct bench_serve_flags *f)
{
    *f = (struct bench_serve_flags){0};
    const cJSON *j = jread_object(r, o, "serve_flags", JR_OPTIONAL);
    if (!j)
        return;
    f->present = true;
    size_t mark = jread_enter(r, "serve_flags");
    jread_bool(r, j, "no_thinking", 0, &f->no_thinking);
    jread_string(r, j, "reasoning_effort", JR_NULLABLE, &f->reasoning_effort);
    jread_bool(r, j, "shared_prefix_burst", 0, &f->shared_prefix_burst);
    jread_string(r, j, "thinking_mode", JR_NULLABLE, &f->thinking_mode);
    jread_leave(r, mark);
}

/* ---- the document ---- */

/* Seed 001's top level, in its order of anvil's writing. */
static void run_fields_write(cJSON *o, const struct benchmark *b)
{
    artifact_add_string(o, "schema", b->schema);
    artifact_add_string(o, "measurement_protocol", b->measurement_protocol);
    artifact_add_string(o, "run_id", b->run_id);
    artifact_add_string(o, "started_at", b->started_at);
    artifact_add_string(o, "finished_at", b->finished_at);
    artifact_add_string(o, "base_url", b->base_url);
    artifact_add_string(o, "model", b->model);
    artifact_add_string(o, "engine", b->engine);
    artifact_add_string(o, "gpu", b->gpu);
    artifact_add_whole(o, "concurrency", b->concurrency);
    artifact_add_whole(o, "requests", b->requests);
    artifact_add_whole(o, "completed", b->completed);
    artifact_add_whole(o, "failed", b->failed);
    artifact_add_number(o, "context_tokens", b->context_tokens);
    artifact_add_number(o, "context_tokens_measured", b->context_tokens_measured);
    artifact_add_whole(o, "context_seed", b->context_seed);
    artifact_add_number(o, "max_context_tokens", b->max_context_tokens);
    artifact_add_string(o, "max_context_source", b->max_context_source);
    artifact_add_number(o, "max_input_tokens", b->max_input_tokens);
    artifact_add_whole(o, "max_tokens", b->max_tokens);
    artifact_add_number(o, "wall_clock_ms", b->wall_clock_ms);
    opaque_write(o, "manifest", b->manifest);
    opaque_write(o, "source_recipe", b->source_recipe);
    opaque_write(o, "tier", b->tier);
    serve_flags_write(o, &b->serve_flags);
    counts_write(o, "context_distribution", &b->context_distribution);
}

static void run_fields_read(struct jread *r, const cJSON *o, struct benchmark *b)
{
    jread_string(r, o, "measurement_protocol", OPT, &b->measurement_protocol);
    jread_string(r, o, "run_id", OPT, &b->run_id);
    jread_string(r, o, "started_at", OPT, &b->started_at);
    jread_string(r, o, "finished_at", OPT, &b->finished_at);
    jread_string(r, o, "base_url", OPT, &b->base_url);
    jread_string(r, o, "model", OPT, &b->model);
    jread_string(r, o, "engine", JR_NONEMPTY, &b->engine);
    jread_string(r, o, "gpu", OPT, &b->gpu);
    jread_whole(r, o, "concurrency", 0, 0, &b->concurrency);
    jread_whole(r, o, "requests", OPT, 0, &b->requests);
    jread_whole(r, o, "completed", 0, 0, &b->completed);
    jread_whole(r, o, "failed", 0, 0, &b->failed);
    jread_number(r, o, "context_tokens", 0, &b->context_tokens);
    jread_number(r, o, "context_tokens_measured", OPT, &b->context_tokens_measured);
    jread_whole(r, o, "context_seed", OPT, 0, &b->context_seed);
    jread_number(r, o, "max_context_tokens", OPT, &b->max_context_tokens);
    jread_string(r, o, "max_context_source", OPT, &b->max_context_source);
    jread_number(r, o, "max_input_tokens", OPT, &b->max_input_tokens);
    jread_whole(r, o, "max_tokens", 0, 0, &b->max_tokens);
    jread_number(r, o, "wall_clock_ms", OPT, &b->wall_clock_ms);
    opaque_read(r, o, "manifest", &b->manifest);
    opaque_read(r, o, "source_recipe", &b->source_recipe);
    opaque_read(r, o, "tier", &b->tier);
    serve_flags_read(r, o, &b->serve_flags);
    counts_read(r, o, "context_distribution", &b->context_distribution);
}

static void burstiness_write(cJSON *o, double v)
{
    if (isinf(v))
        cJSON_AddStringToObject(o, "burstiness", "inf");     /* constant gaps */
    else
        artifact_add_number(o, "burstiness", v);
}

static void anvil_fields_write(cJSON *o, const struct benchmark *b)
{
    artifact_add_string(o, "endpoint", b->endpoint);
    artifact_add_string(o, "engine_detected", b->engine_detected);
    artifact_add_string(o, "engine_version", b->engine_version);
    artifact_add_whole(o, "warmup_requests", b->warmup_requests);
    artifact_add_number(o, "request_rate", b->request_rate);
    burstiness_write(o, b->burstiness);
    artifact_add_number(o, "achieved_request_rate", b->achieved_request_rate);
    artifact_add_string(o, "load_mode", b->load_mode);
    slo_write(o, &b->slo);
    if (b->good_requests != ARTIFACT_NONE) {    /* only with SLOs */
        artifact_add_whole(o, "good_requests", b->good_requests);
        artifact_add_number(o, "good_request_share", b->good_request_share);
    }
    artifact_add_whole(o, "prewarmed_connections", b->prewarmed_connections);
    cJSON_AddBoolToObject(o, "ignore_eos", b->ignore_eos);
    artifact_add_whole(o, "not_sent", b->not_sent);
    cJSON_AddBoolToObject(o, "incomplete", b->incomplete);
    artifact_add_string(o, "incomplete_reason", b->incomplete_reason);
    artifact_add_whole(o, "ignore_eos_violations", b->ignore_eos_violations);
    if (b->has_invariants)
        invariants_write(o, &b->invariants);
    artifact_add_whole(o, "prompt_token_mismatches", b->prompt_token_mismatches);
    artifact_add_whole(o, "usage_over_max_tokens", b->usage_over_max_tokens);
    cJSON_AddBoolToObject(o, "cache_contaminated", b->cache_contaminated);
    artifact_add_whole(o, "journal_lines_lost", b->journal_lines_lost);
    artifact_add_number(o, "shared_prefix_tokens", b->shared_prefix_tokens);
    server_gone_write(o, &b->server_gone);
    server_stalled_write(o, &b->server_stalled);
    counts_write(o, "failed_by_category", &b->failed_by_category);
    calibration_write(o, &b->calibration);
    duration_write(o, &b->duration_mode);
    workload_write(o, &b->workload);
    sweep_write(o, &b->sweep);
    client_write(o, &b->client);
    cJSON_AddBoolToObject(o, "client_bound", b->client_bound);
    artifact_add_string(o, "client_bound_reason", b->client_bound_reason);
    artifact_add_whole(o, "first_output_merged_requests", b->first_output_merged_requests);
    provenance_write(o, &b->provenance);
}

static void anvil_fields_read(struct jread *r, const cJSON *o, struct benchmark *b)
{
    jread_string(r, o, "endpoint", OPT, &b->endpoint);
    jread_string(r, o, "engine_detected", OPT, &b->engine_detected);
    jread_string(r, o, "engine_version", OPT, &b->engine_version);
    jread_whole(r, o, "warmup_requests", OPT, 0, &b->warmup_requests);
    jread_number(r, o, "request_rate", OPT, &b->request_rate);
    jread_number(r, o, "burstiness", OPT | JR_INF, &b->burstiness);
    jread_number(r, o, "achieved_request_rate", OPT, &b->achieved_request_rate);
    jread_string(r, o, "load_mode", OPT, &b->load_mode);
    slo_read(r, o, &b->slo);
    jread_whole(r, o, "good_requests", OPT, 0, &b->good_requests);
    jread_number(r, o, "good_request_share", OPT, &b->good_request_share);
    jread_whole(r, o, "prewarmed_connections", OPT, 0, &b->prewarmed_connections);
    jread_bool(r, o, "ignore_eos", JR_OPTIONAL, &b->ignore_eos);
    jread_whole(r, o, "not_sent", OPT, 0, &b->not_sent);
    jread_bool(r, o, "incomplete", JR_OPTIONAL, &b->incomplete);
    jread_string(r, o, "incomplete_reason", OPT, &b->incomplete_reason);
    jread_whole(r, o, "ignore_eos_violations", OPT, 0, &b->ignore_eos_violations);
    invariants_read(r, o, &b->has_invariants, &b->invariants);
    jread_whole(r, o, "prompt_token_mismatches", OPT, 0, &b->prompt_token_mismatches);
    jread_whole(r, o, "usage_over_max_tokens", OPT, 0, &b->usage_over_max_tokens);
    jread_bool(r, o, "cache_contaminated", JR_OPTIONAL, &b->cache_contaminated);
    jread_whole(r, o, "journal_lines_lost", OPT, 0, &b->journal_lines_lost);
    jread_number(r, o, "shared_prefix_tokens", OPT, &b->shared_prefix_tokens);
    server_gone_read(r, o, &b->server_gone);
    server_stalled_read(r, o, &b->server_stalled);
    counts_read(r, o, "failed_by_category", &b->failed_by_category);
    calibration_read(r, o, &b->calibration);
    duration_read(r, o, &b->duration_mode);
    workload_read(r, o, &b->workload);
    sweep_read(r, o, &b->sweep);
    client_read(r, o, &b->client);
    jread_bool(r, o, "client_bound", JR_OPTIONAL, &b->client_bound);
    jread_string(r, o, "client_bound_reason", OPT, &b->client_bound_reason);
    jread_whole(r, o, "first_output_merged_requests", OPT, 0, &b->first_output_merged_requests);
    provenance_read(r, o, &b->provenance);
}

static void entries_write(cJSON *o, const char *key, size_t n, const void *v, size_t elem_size,
                          cJSON *(*to_json)(const void *))
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, to_json((const char *)v + i * elem_size));
}

static cJSON *timing_json_any(const void *t)
{
    return benchmark_timing_json(t);
}

static cJSON *failure_json_any(const void *f)
{
    return benchmark_failure_json(f);
}

/* The observation blocks (see struct benchmark): kept when present, an
 * object (or, for hardware_run_summary, null too). */
static void observed_read(struct jread *r, const cJSON *o, const char *key, bool nullable, cJSON **out)
{
    const cJSON *v = jread_item(r, o, key, JR_OPTIONAL);
    if (!v)
        return;
    if (!cJSON_IsObject(v) && !(nullable && cJSON_IsNull(v))) {
        jread_fail(r, key, "expected an object%s", nullable ? " or null" : "");
        return;
    }
    if (!(*out = cJSON_Duplicate(v, true)))
        jread_fail(r, key, "out of memory");
}

static void observed_write(cJSON *o, const struct benchmark *b)
{
    const char *keys[] = {"server_metrics", "hardware", "hardware_run_summary"};
    const cJSON *v[] = {b->server_metrics, b->hardware, b->hardware_run_summary};
    for (size_t i = 0; i < 3; i++)
        if (v[i])
            cJSON_AddItemToObject(o, keys[i], cJSON_Duplicate(v[i], true));
}

/* One per_rank entry: the fields every rank has, with their types. */
static void rank_entry_read(struct jread *r, const cJSON *e, int i, void *ctx)
{
    (void)i;
    (void)ctx;
    long whole;
    double num;
    char *host = NULL;
    jread_whole(r, e, "rank", 0, 0, &whole);
    jread_string(r, e, "host", 0, &host);
    free(host);
    const char *wholes[] = {"pid", "threads", "requests", "sent", "completed", "failed"};
    for (size_t k = 0; k < sizeof wholes / sizeof *wholes; k++)
        jread_whole(r, e, wholes[k], JR_OPTIONAL, 0, &whole);
    const char *nums[] = {"cpu_user_s", "cpu_sys_s", "loop_lag_p50_ms", "loop_lag_p99_ms", "loop_lag_max_ms",
                          "clock_offset_ms", "clock_offset_uncertainty_ms", "clock_drift_ms", "start_late_ms"};
    for (size_t k = 0; k < sizeof nums / sizeof *nums; k++)
        jread_number(r, e, nums[k], JR_OPTIONAL, &num);
}

/* The ranks block, when present: checked, then kept as found. */
static void ranks_read(struct jread *r, const cJSON *j, cJSON **out)
{
    const cJSON *v = jread_object(r, j, "ranks", JR_OPTIONAL);
    if (!v)
        return;
    size_t mark = jread_enter(r, "ranks");
    long count;
    char *alignment = NULL;
    jread_whole(r, v, "count", 0, 1, &count);
    jread_string(r, v, "alignment", JR_NONEMPTY, &alignment);
    free(alignment);
    double unc;
    jread_number(r, v, "max_offset_uncertainty_ms", JR_OPTIONAL, &unc);
    jread_array(r, v, "missing", 0);
    const cJSON *plan = jread_object(r, v, "plan", 0);
    if (plan) {
        size_t m2 = jread_enter(r, "plan");
        long n;
        jread_whole(r, plan, "num_prompts", 0, 0, &n);
        jread_whole(r, plan, "warmup", 0, 0, &n);
        jread_whole(r, plan, "concurrency", 0, 0, &n);
        jread_leave(r, m2);
    }
    jread_each(r, "per_rank", jread_array(r, v, "per_rank", 0), rank_entry_read, NULL);
    jread_leave(r, mark);
    if (!r->failed && !(*out = cJSON_Duplicate(v, true)))
        jread_fail(r, "ranks", "out of memory");
}

cJSON *benchmark_to_json(const struct benchmark *b)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    run_fields_write(o, b);
    anvil_fields_write(o, b);
    methodology_write(o, &b->timing_methodology);
    cJSON_AddItemToObject(o, "metrics", metrics_json(&b->metrics));
    entries_write(o, "request_timings", b->n_request_timings, b->request_timings,
                  sizeof *b->request_timings, timing_json_any);
    entries_write(o, "failures", b->n_failures, b->failures, sizeof *b->failures, failure_json_any);
    observed_write(o, b);
    if (b->ranks)
        cJSON_AddItemToObject(o, "ranks", cJSON_Duplicate(b->ranks, true));
    return o;
}

int benchmark_from_json(const cJSON *j, const char *name, struct benchmark *out, char *err,
                        size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    *out = (struct benchmark){0};
    if (!cJSON_IsObject(j)) {
        jread_fail(&r, NULL, "not a JSON object");
        return -1;
    }
    jread_schema(&r, j, 0, BENCHMARK_SCHEMA, &out->schema);
    run_fields_read(&r, j, out);
    anvil_fields_read(&r, j, out);
    methodology_read(&r, j, &out->timing_methodology);
    metrics_read(&r, j, &out->metrics);
    void *v;
    entries_read(&r, j, "request_timings", sizeof *out->request_timings, timing_read_any, &v,
                 &out->n_request_timings);
    out->request_timings = v;
    entries_read(&r, j, "failures", sizeof *out->failures, failure_read_any, &v, &out->n_failures);
    out->failures = v;
    observed_read(&r, j, "server_metrics", false, &out->server_metrics);
    observed_read(&r, j, "hardware", false, &out->hardware);
    observed_read(&r, j, "hardware_run_summary", true, &out->hardware_run_summary);
    ranks_read(&r, j, &out->ranks);
    if (r.failed) {
        benchmark_free(out);
        return -1;
    }
    return 0;
}

int benchmark_read_file(const char *path, struct benchmark *out, char *sha_out, char *err,
                        size_t errlen)
{
    *out = (struct benchmark){0};
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read", path);
        return -1;
    }
    if (sha_out && sha256_hex(text, len, sha_out) != 0)
        sha_out[0] = '\0';
    cJSON *j = artifact_parse(text, len, path, err, errlen);
    int rc = j ? benchmark_from_json(j, path, out, err, errlen) : -1;
    cJSON_Delete(j);
    free(text);
    return rc;
}

void benchmark_free(struct benchmark *b)
{
    char **strings[] = {
        &b->schema, &b->measurement_protocol, &b->run_id, &b->started_at, &b->finished_at,
        &b->base_url, &b->model, &b->engine, &b->gpu, &b->max_context_source, &b->endpoint, &b->engine_detected,
        &b->engine_version, &b->load_mode, &b->incomplete_reason, &b->client_bound_reason,
        &b->serve_flags.reasoning_effort,
        &b->serve_flags.thinking_mode, &b->calibration.method, &b->calibration.source,
        &b->calibration.cache_file, &b->calibration.cache_key, &b->calibration.shared_prefix_method,
        &b->workload.dataset, &b->workload.trace.format, &b->workload.prefix_cache.flush,
        &b->workload.prefix_cache.flush_endpoint, &b->workload.agentic.source,
        &b->workload.images.format, &b->workload.trace.server_prefix_hit_rate_source,
        &b->workload.prefix_cache.server_hit_rate_source, &b->sweep.target, &b->sweep.case_id,
        &b->duration_mode.token_source,
    };
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        free(*strings[i]);
    free(b->workload.agentic.per_turn);
    free(b->client.per_thread);
    cJSON_Delete(b->manifest);
    cJSON_Delete(b->server_metrics);
    cJSON_Delete(b->hardware);
    cJSON_Delete(b->hardware_run_summary);
    cJSON_Delete(b->ranks);
    cJSON_Delete(b->source_recipe);
    cJSON_Delete(b->tier);
    counts_free(&b->context_distribution);
    counts_free(&b->failed_by_category);
    counts_free(&b->metrics.output_token_sources);
    provenance_free(&b->provenance);
    methodology_free(&b->timing_methodology);
    for (size_t i = 0; i < b->n_request_timings; i++)
        timing_free(&b->request_timings[i]);
    free(b->request_timings);
    for (size_t i = 0; i < b->n_failures; i++)
        failure_free(&b->failures[i]);
    free(b->failures);
    *b = (struct benchmark){0};
}
