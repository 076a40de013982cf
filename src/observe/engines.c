/* engines.c — per-engine name tables and the extraction of one scrape
 * (see engines.h). */
#include "observe/engines.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum agg { AGG_SUM, AGG_MAX, AGG_MEAN };

/* A scalar concept read from every sample named exactly `name`. */
struct row {
    enum srv_value what;
    const char *name;
    enum agg agg;
};

/* A histogram concept read from family's _bucket, _sum and _count samples. */
struct hrow {
    enum srv_hist_id what;
    const char *family;
};

struct table {
    enum srv_engine engine;
    const char *prefix;
    const struct row *rows;
    const struct hrow *hrows;
    const char *per_pos;        /* per-position accepted counter (label "position"), or NULL */
    const char *cache_info;     /* vLLM's cache_config_info, or NULL */
};

static const struct row vllm_rows[] = {
    {SV_RUNNING, "vllm:num_requests_running", AGG_SUM},
    {SV_WAITING, "vllm:num_requests_waiting", AGG_SUM},
    {SV_KV_USAGE, "vllm:kv_cache_usage_perc", AGG_MAX},
    {SV_KV_USAGE, "vllm:gpu_cache_usage_perc", AGG_MAX},          /* before v0.9 */
    {SV_PROMPT_TOKENS, "vllm:prompt_tokens_total", AGG_SUM},
    {SV_GEN_TOKENS, "vllm:generation_tokens_total", AGG_SUM},
    {SV_REQUESTS, "vllm:request_success_total", AGG_SUM},
    {SV_PREEMPTIONS, "vllm:num_preemptions_total", AGG_SUM},
    {SV_PREFIX_QUERIES, "vllm:prefix_cache_queries_total", AGG_SUM},
    {SV_PREFIX_QUERIES, "vllm:gpu_prefix_cache_queries_total", AGG_SUM},   /* before v0.9 */
    {SV_PREFIX_HITS, "vllm:prefix_cache_hits_total", AGG_SUM},
    {SV_PREFIX_HITS, "vllm:gpu_prefix_cache_hits_total", AGG_SUM},
    {SV_SPEC_DRAFTS, "vllm:spec_decode_num_drafts_total", AGG_SUM},
    {SV_SPEC_DRAFT_TOKENS, "vllm:spec_decode_num_draft_tokens_total", AGG_SUM},
    {SV_SPEC_ACCEPTED, "vllm:spec_decode_num_accepted_tokens_total", AGG_SUM},
    {SV_BATCH_STEPS, "vllm:iteration_tokens_total_count", AGG_SUM},
    {SV_BATCH_TOKENS, "vllm:iteration_tokens_total_sum", AGG_SUM},
    {SV_N, NULL, AGG_SUM},
};

static const struct hrow vllm_hrows[] = {
    {SVH_QUEUE, "vllm:request_queue_time_seconds"},
    {SVH_PREFILL, "vllm:request_prefill_time_seconds"},
    {SVH_DECODE, "vllm:request_decode_time_seconds"},
    {SVH_INFERENCE, "vllm:request_inference_time_seconds"},
    {SVH_TTFT, "vllm:time_to_first_token_seconds"},
    {SVH_ITL, "vllm:inter_token_latency_seconds"},
    {SVH_ITL, "vllm:time_per_output_token_seconds"},              /* before v0.11 */
    {SVH_E2E, "vllm:e2e_request_latency_seconds"},
    {SVH_N, NULL},
};

static const struct row sglang_rows[] = {
    {SV_RUNNING, "sglang:num_running_reqs", AGG_SUM},
    {SV_WAITING, "sglang:num_queue_reqs", AGG_SUM},
    {SV_KV_USAGE, "sglang:token_usage", AGG_MAX},
    {SV_KV_USED_TOKENS, "sglang:num_used_tokens", AGG_SUM},
    {SV_KV_POOL_TOKENS, "sglang:max_total_num_tokens", AGG_SUM},
    {SV_GEN_THROUGHPUT, "sglang:gen_throughput", AGG_SUM},
    {SV_UTILIZATION, "sglang:utilization", AGG_MEAN},
    {SV_SPEC_ACCEPT_LEN, "sglang:spec_accept_length", AGG_MEAN},
    {SV_SPEC_ACCEPT_RATE, "sglang:spec_accept_rate", AGG_MEAN},
    {SV_CACHE_HIT_RATE, "sglang:cache_hit_rate", AGG_MEAN},
    {SV_PROMPT_TOKENS, "sglang:prompt_tokens_total", AGG_SUM},
    {SV_GEN_TOKENS, "sglang:generation_tokens_total", AGG_SUM},
    {SV_REQUESTS, "sglang:num_requests_total", AGG_SUM},
    {SV_PREEMPTIONS, "sglang:num_retracted_requests_total", AGG_SUM},
    /* SGLang's hit rate is cached prompt tokens over prompt tokens */
    {SV_PREFIX_QUERIES, "sglang:prompt_tokens_total", AGG_SUM},
    {SV_PREFIX_HITS, "sglang:cached_tokens_total", AGG_SUM},
    {SV_SPEC_VERIFY_CALLS, "sglang:spec_verify_calls_total", AGG_SUM},
    {SV_N, NULL, AGG_SUM},
};

static const struct hrow sglang_hrows[] = {
    {SVH_QUEUE, "sglang:queue_time_seconds"},
    {SVH_TTFT, "sglang:time_to_first_token_seconds"},
    {SVH_ITL, "sglang:inter_token_latency_seconds"},
    {SVH_E2E, "sglang:e2e_request_latency_seconds"},
    {SVH_N, NULL},
};

static const struct row llamacpp_rows[] = {
    {SV_RUNNING, "llamacpp:requests_processing", AGG_SUM},
    {SV_WAITING, "llamacpp:requests_deferred", AGG_SUM},
    {SV_KV_USAGE, "llamacpp:kv_cache_usage_ratio", AGG_MAX},
    {SV_KV_USED_TOKENS, "llamacpp:kv_cache_tokens", AGG_SUM},
    {SV_PROMPT_TOKENS, "llamacpp:prompt_tokens_total", AGG_SUM},
    {SV_GEN_TOKENS, "llamacpp:tokens_predicted_total", AGG_SUM},
    {SV_BATCH_STEPS, "llamacpp:n_decode_total", AGG_SUM},
    {SV_PROMPT_SECONDS, "llamacpp:prompt_seconds_total", AGG_SUM},
    {SV_N, NULL, AGG_SUM},
};

static const struct hrow no_hrows[] = {{SVH_N, NULL}};

/* TGI's exporter (metrics-rs) writes counters without _total, newer ones with. */
static const struct row tgi_rows[] = {
    {SV_RUNNING, "tgi_batch_current_size", AGG_SUM},
    {SV_WAITING, "tgi_queue_size", AGG_SUM},
    {SV_PROMPT_TOKENS, "tgi_request_input_length_sum", AGG_SUM},
    {SV_GEN_TOKENS, "tgi_request_generated_tokens_sum", AGG_SUM},
    {SV_REQUESTS, "tgi_request_success", AGG_SUM},
    {SV_REQUESTS, "tgi_request_success_total", AGG_SUM},
    {SV_BATCH_STEPS, "tgi_batch_inference_count", AGG_SUM},
    {SV_BATCH_STEPS, "tgi_batch_inference_count_total", AGG_SUM},
    {SV_N, NULL, AGG_SUM},
};

static const struct hrow tgi_hrows[] = {
    {SVH_QUEUE, "tgi_request_queue_duration"},
    {SVH_INFERENCE, "tgi_request_inference_duration"},
    {SVH_E2E, "tgi_request_duration"},
    {SVH_N, NULL},
};

static const struct table tables[] = {
    {SRV_VLLM, "vllm:", vllm_rows, vllm_hrows, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
     "vllm:cache_config_info"},
    {SRV_SGLANG, "sglang:", sglang_rows, sglang_hrows, NULL, NULL},
    {SRV_LLAMACPP, "llamacpp:", llamacpp_rows, no_hrows, NULL, NULL},
    {SRV_TGI, "tgi_", tgi_rows, tgi_hrows, NULL, NULL},
};

static const char *const value_names[SV_N] = {
    [SV_RUNNING] = "running_requests", [SV_WAITING] = "waiting_requests",
    [SV_KV_USAGE] = "kv_cache_usage", [SV_KV_USED_TOKENS] = "kv_used_tokens",
    [SV_KV_POOL_TOKENS] = "kv_pool_tokens", [SV_KV_BLOCK_SIZE] = "kv_block_size",
    [SV_GEN_THROUGHPUT] = "gen_throughput", [SV_UTILIZATION] = "utilization",
    [SV_SPEC_ACCEPT_LEN] = "spec_accept_length", [SV_SPEC_ACCEPT_RATE] = "spec_accept_rate",
    [SV_CACHE_HIT_RATE] = "cache_hit_rate", [SV_PROMPT_TOKENS] = "prompt_tokens",
    [SV_GEN_TOKENS] = "generation_tokens", [SV_REQUESTS] = "requests",
    [SV_PREEMPTIONS] = "preemptions", [SV_PREFIX_QUERIES] = "prefix_cache_queries",
    [SV_PREFIX_HITS] = "prefix_cache_hits", [SV_SPEC_DRAFTS] = "spec_drafts",
    [SV_SPEC_DRAFT_TOKENS] = "spec_draft_tokens", [SV_SPEC_ACCEPTED] = "spec_accepted_tokens",
    [SV_SPEC_VERIFY_CALLS] = "spec_verify_calls", [SV_BATCH_STEPS] = "batch_steps",
    [SV_BATCH_TOKENS] = "batch_tokens", [SV_PROMPT_SECONDS] = "prompt_seconds",
};

static const char *const hist_names[SVH_N] = {
    [SVH_QUEUE] = "queue_time", [SVH_PREFILL] = "prefill_time", [SVH_DECODE] = "decode_time",
    [SVH_INFERENCE] = "inference_time", [SVH_TTFT] = "ttft", [SVH_ITL] = "itl", [SVH_E2E] = "e2e",
};

const char *srv_value_name(enum srv_value v)
{
    return (unsigned)v < SV_N && value_names[v] ? value_names[v] : "?";
}

const char *srv_hist_name(enum srv_hist_id h)
{
    return (unsigned)h < SVH_N ? hist_names[h] : "?";
}

bool srv_gen_counted_at_end(enum srv_engine e)
{
    return e == SRV_LLAMACPP;
}

const char *srv_iterations_name(enum srv_engine e)
{
    return e == SRV_LLAMACPP ? "n_decode_total" : e == SRV_VLLM ? "iteration_tokens_total_count"
         : e == SRV_TGI ? "batch_inference_count" : NULL;
}

const char *srv_engine_name(enum srv_engine e)
{
    switch (e) {
    case SRV_VLLM: return "vllm";
    case SRV_SGLANG: return "sglang";
    case SRV_LLAMACPP: return "llama.cpp";
    case SRV_TGI: return "tgi";
    default: return "unknown";
    }
}

static const struct table *table_of(enum srv_engine e)
{
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        if (tables[i].engine == e)
            return &tables[i];
    return NULL;
}

enum srv_engine srv_engine_detect(const struct prom_snapshot *s)
{
    for (size_t i = 0; i < s->n_samples; i++)
        for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
            if (!strncmp(s->samples[i].name, tables[t].prefix, strlen(tables[t].prefix)))
                return tables[t].engine;
    return SRV_UNKNOWN;
}

/* A series repeated per tensor/pipeline/expert-parallel rank other than 0:
 * the same figure again, not more of it. */
static bool duplicate_rank(const struct prom_sample *m)
{
    static const char *const ranks[] = {"tp_rank", "pp_rank", "moe_ep_rank", "attn_tp_rank"};
    for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
        const char *v = prom_label(m, ranks[i]);
        if (v && strcmp(v, "0") != 0)
            return true;
    }
    return false;
}

/* Σ / max / mean of the samples named row->name; NaN when there is none. */
static double read_row(const struct prom_snapshot *s, const struct row *row)
{
    double acc = NAN;
    int n = 0;
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *m = &s->samples[i];
        if (strcmp(m->name, row->name) || duplicate_rank(m) || isnan(m->value))
            continue;
        if (n++ == 0)
            acc = m->value;
        else if (row->agg == AGG_MAX)
            acc = fmax(acc, m->value);
        else
            acc += m->value;
    }
    return row->agg == AGG_MEAN && n > 0 ? acc / n : acc;
}

/* Adds count at upper bound le to h (bounds kept ascending). */
static void hist_add(struct srv_hist *h, double le, double count)
{
    int i = 0;
    while (i < h->n && h->le[i] < le)
        i++;
    if (i < h->n && h->le[i] == le) {
        h->cum[i] += count;
        return;
    }
    if (h->n == SRV_HIST_MAX)
        return;         /* more bounds than anyone uses: the rest is dropped */
    memmove(&h->le[i + 1], &h->le[i], (size_t)(h->n - i) * sizeof *h->le);
    memmove(&h->cum[i + 1], &h->cum[i], (size_t)(h->n - i) * sizeof *h->cum);
    h->le[i] = le;
    h->cum[i] = count;
    h->n++;
}

/* Reads family's buckets, sum and count over every label set into h.
 * Returns whether any sample was found. */
static bool read_hist(const struct prom_snapshot *s, const char *family, struct srv_hist *h)
{
    size_t fl = strlen(family);
    bool found = false;
    *h = (struct srv_hist){0};
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *m = &s->samples[i];
        if (strncmp(m->name, family, fl) || duplicate_rank(m) || !isfinite(m->value))
            continue;
        const char *suffix = m->name + fl;
        if (!strcmp(suffix, "_bucket")) {
            const char *le = prom_label(m, "le");
            char *e;
            double b = le ? strtod(le, &e) : NAN;
            if (le && *e == '\0' && !isnan(b)) {
                hist_add(h, b, m->value);
                found = true;
            }
        } else if (!strcmp(suffix, "_sum")) {
            h->sum += m->value;
            found = true;
        } else if (!strcmp(suffix, "_count")) {
            h->count += m->value;
            found = true;
        }
    }
    return found;
}

/* vLLM's cache_config_info: Σ num_gpu_blocks × block_size, and block_size. */
static void read_cache_info(const struct prom_snapshot *s, const char *name, struct srv_reading *r)
{
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *m = &s->samples[i];
        if (strcmp(m->name, name))
            continue;
        const char *nb = prom_label(m, "num_gpu_blocks"), *bs = prom_label(m, "block_size");
        char *e1, *e2;
        double blocks = nb ? strtod(nb, &e1) : NAN, size = bs ? strtod(bs, &e2) : NAN;
        if (!nb || !bs || *e1 || *e2 || !isfinite(blocks) || !isfinite(size) || blocks <= 0)
            continue;           /* "None" (or 0) before the cache is allocated */
        r->v[SV_KV_POOL_TOKENS] = (isnan(r->v[SV_KV_POOL_TOKENS]) ? 0 : r->v[SV_KV_POOL_TOKENS]) + blocks * size;
        r->v[SV_KV_BLOCK_SIZE] = size;
    }
}

static void read_positions(const struct prom_snapshot *s, const char *name, struct srv_reading *r)
{
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *m = &s->samples[i];
        const char *pos = strcmp(m->name, name) ? NULL : prom_label(m, "position");
        char *e;
        long p = pos ? strtol(pos, &e, 10) : -1;
        if (!pos || *e || p < 0 || p >= SRV_MAX_POS || !isfinite(m->value))
            continue;
        while (r->n_pos <= p)
            r->pos[r->n_pos++] = 0;
        r->pos[p] += m->value;
    }
}

static int cmp_key(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every counter sample of prefix (NULL: any), keys sorted with their values. */
static int read_raw(const struct prom_snapshot *s, const char *prefix, struct srv_detail *d)
{
    size_t cap = 0;
    for (size_t i = 0; i < s->n_samples && cap < SRV_MAX_RAW; i++)
        cap += s->samples[i].type == PROM_COUNTER;
    if (!cap)
        return 0;
    char **keys = calloc(cap, sizeof *keys);
    struct { char *key; double v; } *pairs = calloc(cap, sizeof *pairs);
    d->raw_keys = keys;
    d->raw = calloc(cap, sizeof *d->raw);
    if (!keys || !pairs || !d->raw) {
        free(pairs);
        return -1;
    }
    struct buf k;
    buf_init(&k, 1u << 16);
    for (size_t i = 0; i < s->n_samples && d->n_raw < cap; i++) {
        const struct prom_sample *m = &s->samples[i];
        size_t nl = strlen(m->name);
        if (m->type != PROM_COUNTER || (prefix && strncmp(m->name, prefix, strlen(prefix))) ||
            (nl > 8 && !strcmp(m->name + nl - 8, "_created")))
            continue;
        buf_reset(&k);
        if (prom_series_key(m, &k) != 0 || !(pairs[d->n_raw].key = strdup(k.data)))
            continue;   /* a key over 64 KiB is not worth keeping */
        pairs[d->n_raw++].v = m->value;
    }
    buf_free(&k);
    qsort_r(pairs, d->n_raw, sizeof *pairs, cmp_key, NULL);
    for (size_t i = 0; i < d->n_raw; i++) {
        keys[i] = pairs[i].key;
        d->raw[i] = pairs[i].v;
    }
    free(pairs);
    return 0;
}

int srv_extract(enum srv_engine e, const struct prom_snapshot *s, struct srv_reading *r)
{
    srv_reading_drop_detail(r);
    for (int i = 0; i < SV_N; i++)
        r->v[i] = NAN;
    r->n_pos = 0;
    r->engine = e;
    if (!(r->detail = calloc(1, sizeof *r->detail))) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    const struct table *t = table_of(e);
    if (t) {
        bool seen[SV_N] = {false}, hseen[SVH_N] = {false};
        for (const struct row *row = t->rows; row->name; row++)
            if (!seen[row->what] && !isnan(r->v[row->what] = read_row(s, row)))
                seen[row->what] = true;
        for (const struct hrow *h = t->hrows; h->family; h++)
            if (!hseen[h->what])
                hseen[h->what] = read_hist(s, h->family, &r->detail->hist[h->what]);
        if (t->per_pos)
            read_positions(s, t->per_pos, r);
        if (t->cache_info)
            read_cache_info(s, t->cache_info, r);
    }
    if (read_raw(s, t ? t->prefix : NULL, r->detail) != 0) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    return 0;
}

void srv_reading_drop_detail(struct srv_reading *r)
{
    struct srv_detail *d = r->detail;
    if (!d)
        return;
    for (size_t i = 0; d->raw_keys && i < d->n_raw; i++)
        free(d->raw_keys[i]);
    free(d->raw_keys);
    free(d->raw);
    free(d);
    r->detail = NULL;
}

void srv_reading_free(struct srv_reading *r)
{
    srv_reading_drop_detail(r);
}

double srv_hist_quantile(const struct srv_hist *h, double q, double *lo, double *hi)
{
    if (h->n == 0 || !(h->cum[h->n - 1] > 0) || isnan(q))
        return NAN;
    double rank = q * h->cum[h->n - 1];
    int b = 0;
    while (b < h->n - 1 && h->cum[b] < rank)
        b++;
    double start = b == 0 ? fmin(0, h->le[0]) : h->le[b - 1], end = h->le[b];
    if (lo)
        *lo = start;
    if (hi)
        *hi = end;
    if (isinf(end))         /* in the +Inf bucket: the largest finite bound */
        return b > 0 ? h->le[b - 1] : NAN;
    if (b == 0 && h->le[0] <= 0)
        return h->le[0];
    double below = b == 0 ? 0 : h->cum[b - 1], in = h->cum[b] - below;
    return in > 0 ? start + (end - start) * (rank - below) / in : end;
}
