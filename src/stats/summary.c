/* summary.c — run-level numbers from per-request records (docs/METHODOLOGY.md, "Per run"). */
#include "stats/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "stats/hist.h"
#include "stats/metrics.h"
#include "stats/pass.h"
#include "stats/peak.h"

/* Per-request values of every distribution: an exact column of up to
 * `cap` values (the records' count) per dist_id, but the per-chunk ITL,
 * which goes to value columns (stats/hist.h) — a run of millions of chunks
 * must not keep one double per chunk. NaNs (undefined values) are not kept. */
struct columns {
    double *v[D_COUNT];
    size_t n[D_COUNT], cap;
    struct vcol itl_chunk, itl_token;
};

static void push(struct columns *c, enum dist_id id, double x)
{
    if (!isnan(x))
        c->v[id][c->n[id]++] = x;
}

static int push_request(struct columns *c, const struct req_record *r, const struct req_metrics *m)
{
    push(c, D_TTFT, m->ttft_ms);
    push(c, D_TTFO, m->time_to_first_output_ms);
    push(c, D_E2E, m->e2e_ms);
    push(c, D_GENERATION, m->generation_ms);
    push(c, D_VISIBLE_GENERATION, m->visible_generation_ms);
    push(c, D_TPOT, m->tpot_ms);
    push(c, D_DECODE_TOK_S, m->decode_tok_s);
    push(c, D_PREFILL_TOK_S, m->effective_prefill_tok_s);
    push(c, D_PROMPT_TOKENS, r->prompt_tokens >= 0 ? (double)r->prompt_tokens : NAN);
    push(c, D_OUTPUT_TOKENS, (double)m->output_tokens);
    push(c, D_HEADERS, m->headers_ms);
    push(c, D_FIRST_BYTE, m->first_byte_ms);
    push(c, D_FIRST_EVENT, m->first_event_ms);
    push(c, D_SECOND_OUTPUT, m->time_to_second_output_ms);
    push(c, D_TPS_PER_USER, m->generation_tps_per_user);
    push(c, D_SEND_LATENESS, m->send_lateness_ms);
    push(c, D_SCHED_TTFT, m->scheduled_ttft_ms);
    push(c, D_SCHED_E2E, m->scheduled_e2e_ms);
    push(c, D_TOKENS_PER_CHUNK, r->n_chunks ? (double)m->output_tokens / (double)r->n_chunks : NAN);
    for (size_t i = 1; i < r->n_chunks; i++)
        if (vcol_add(&c->itl_chunk, ns_to_ms(r->chunks[i].t_ns - r->chunks[i - 1].t_ns)) != 0 ||
            vcol_add(&c->itl_token, metrics_itl_per_token_ms(r, i, m->output_tokens)) != 0)
            return -1;
    return 0;
}

static bool per_chunk(int id)
{
    return id == D_ITL_CHUNK || id == D_ITL_TOKEN;
}

/* Columns for n records: one double per record per per-request metric
 * (allocated by the count, not grown: doubling would hold up to twice
 * that, and three times while a column is copied). */
static int alloc_columns(struct columns *c, size_t n)
{
    memset(c, 0, sizeof *c);
    c->cap = n;
    for (int id = 0; id < D_COUNT; id++)
        if (!per_chunk(id) && !(c->v[id] = malloc((n ? n : 1) * sizeof(double))))
            return -1;
    return 0;
}

static void free_columns(struct columns *c)
{
    for (int id = 0; id < D_COUNT; id++)
        free(c->v[id]);
    vcol_free(&c->itl_chunk);
    vcol_free(&c->itl_token);
}

static void dist_columns(struct columns *c, enum pct_method m, struct dist *d)
{
    for (int id = 0; id < D_COUNT; id++)
        if (!per_chunk(id))
            dist_compute(c->v[id], c->n[id], m, &d[id]);
    vcol_dist(&c->itl_chunk, m, &d[D_ITL_CHUNK]);
    vcol_dist(&c->itl_token, m, &d[D_ITL_TOKEN]);
}

int slo_parse(const char *spec, struct slo *s)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':'), *end;
        if (!colon)
            return -1;
        *colon = '\0';
        double v = strtod(colon + 1, &end);
        if (*end || end == colon + 1 || !(v > 0) || isinf(v))
            return -1;
        double *bound = !strcmp(tok, "ttft") ? &s->ttft_ms : !strcmp(tok, "tpot") ? &s->tpot_ms
                      : !strcmp(tok, "e2el") ? &s->e2el_ms : NULL;
        if (!bound || !isnan(*bound))   /* unknown, or given twice: which one was meant? */
            return -1;
        *bound = v;
    }
    return 0;
}

bool slo_any(const struct slo *s)
{
    return !isnan(s->ttft_ms) || !isnan(s->tpot_ms) || !isnan(s->e2el_ms);
}

/* vLLM's goodput: a request is good when it meets every bound given. */
static bool is_good(const struct slo *s, const struct req_metrics *m)
{
    return (isnan(s->ttft_ms) || m->ttft_ms <= s->ttft_ms) &&
           (isnan(s->tpot_ms) || isnan(m->tpot_ms) || m->tpot_ms <= s->tpot_ms) &&
           (isnan(s->e2el_ms) || m->e2e_ms <= s->e2el_ms);
}

/* Pass 1: the records' count (the columns' size) and peak_tps's census. */
static int census(struct rec_iter *it, size_t *n, struct peak_census *pc)
{
    *n = 0;
    *pc = (struct peak_census){0};
    if (pass_begin(it) != 0)
        return -1;
    for (const struct req_record *r; (r = it->next(it));) {
        ++*n;
        peak_census_add(pc, r);
    }
    return pass_end(it);
}

/* Counts one measured record into out and its columns; first/last the
 * run's span so far. Returns 0, or -1 when memory runs out. */
static int add_record(const struct req_record *r, const struct summary_opts *o, struct run_summary *out,
                      struct columns *c, int64_t *first, int64_t *last)
{
    if (r->warmup) {        /* duration mode: sent before the window opened */
        out->requests--;
        out->warmup_requests++;
        return 0;
    }
    if (!r->t_start)
        return 0;
    out->sent++;
    out->events += r->events;
    if (!*first || r->t_start < *first)
        *first = r->t_start;
    if (r->t_end > *last)
        *last = r->t_end;
    if (r->cut) {           /* incomplete by design: neither failed nor measured */
        out->cut++;
        return 0;
    }
    if (r->fail != FAIL_NONE) {
        out->failed++;
        out->failed_by[r->fail]++;
        return 0;
    }
    struct req_metrics rm;
    metrics_derive(r, &rm);
    out->completed++;
    out->first_output_merged += r->first_output_merged;
    out->output_tokens += rm.output_tokens;
    if (r->prompt_tokens >= 0) {
        out->prompt_tokens += r->prompt_tokens;
        out->prompt_token_reports++;
    }
    if (r->cached_tokens >= 0) {
        out->cached_tokens += r->cached_tokens;
        out->cached_reports++;
    }
    out->content_chunks += r->content_chunks;
    out->reasoning_chunks += r->reasoning_chunks;
    out->tool_call_chunks += r->tool_call_chunks;
    out->tool_calls += r->tool_calls;
    out->by_source[rm.output_token_source]++;
    if (r->max_tokens > 0 && rm.output_tokens > r->max_tokens)
        out->usage_over_max++;
    if (o->check_prompt_tokens && r->planned_prompt_tokens >= 0 && (r->prompt_tokens < 0 ||
        labs(r->prompt_tokens - r->planned_prompt_tokens) > record_prompt_tolerance(r->planned_prompt_tokens)))
        out->prompt_mismatch++;
    if (slo_any(&o->slo) && is_good(&o->slo, &rm))
        out->good++;
    return push_request(c, r, &rm);
}

/* Pass 2: every record into out, its columns, the invariants, the
 * duration-mode window and the peak. Returns 0, or -1 (memory, the
 * iterator, or records that changed since pass 1: it->err). */
static int measure(struct rec_iter *it, const struct summary_opts *o, struct run_summary *out,
                   struct columns *c, struct peak *pk, int64_t *first, int64_t *last)
{
    bool window = o->window_end > o->window_start && o->window_start > 0;
    size_t seen = 0;
    int rc = pass_begin(it);
    for (const struct req_record *r; rc == 0 && (r = it->next(it));) {
        if (++seen > c->cap || peak_add(pk, r) != 0) {
            snprintf(it->err, sizeof it->err, "the records changed between two passes");
            return -1;
        }
        invariants_add(r, o->ignore_eos, &out->inv);
        if (window)
            tokens_window_add(r, o->window_start, o->window_end, &out->window);
        rc = add_record(r, o, out, c, first, last);
    }
    return rc == 0 ? pass_end(it) : rc;
}

/* The figures of the whole run once every record is counted. */
static void conclude(const struct summary_opts *o, int64_t first, int64_t last, struct run_summary *out)
{
    out->duration_ms = last > first ? ns_to_ms(last - first) : 0;
    double s = out->duration_ms / 1000.0;
    out->output_throughput = s > 0 ? (double)out->output_tokens / s : NAN;
    out->total_token_throughput = s > 0 ? (double)(out->output_tokens + out->prompt_tokens) / s : NAN;
    out->request_throughput = s > 0 ? out->completed / s : NAN;
    out->goodput_rps = slo_any(&o->slo) && s > 0 ? out->good / s : NAN;
    double *lag = malloc((o->n_loop_lag ? o->n_loop_lag : 1) * sizeof *lag);
    if (lag) {
        if (o->n_loop_lag)
            memcpy(lag, o->loop_lag_ms, o->n_loop_lag * sizeof *lag);
        dist_compute(lag, o->n_loop_lag, PCT_NEAREST, &out->loop_lag);
        free(lag);
    }
    out->aggregate_tps = out->window_tokens = NAN;
    if (o->window_end > o->window_start && o->window_start > 0) {
        out->window_tokens = out->window.tokens;
        out->aggregate_tps = out->window_tokens / ((double)(o->window_end - o->window_start) / 1e9);
    }
    /* a p99 needs 100 samples (1 s of probing) before one stall is not "the 99th percentile" */
    out->loop_lagged = out->loop_lag.samples >= 100 && out->loop_lag.p99 > 1.0;
    /* with a cap, a late send waited for a slot: the plan's doing, not the client's */
    out->sends_late = o->lateness_is_client && out->d[D_SEND_LATENESS].p99 > 1.0;
    /* a lagging loop changes numbers only through arrivals dated by the client's clock: kernel
     * receive stamps date bytes when they arrived, however late the loop read them */
    long stamps = o->stamps_kernel + o->stamps_clock;
    out->clock_stamps_lagged = out->loop_lagged && stamps > 0 &&
                               (double)o->stamps_clock > SUMMARY_CLOCK_STAMP_SHARE * (double)stamps;
    /* a first answer read with later output was dated by the later one: the loop was late */
    out->client_bound = out->sends_late || out->clock_stamps_lagged || out->first_output_merged > 0;
}

/* Passes: two here (the count, the measures) and steady_detect_iter's
 * at most three. */
int summary_compute_iter(struct rec_iter *it, const struct summary_opts *o, struct run_summary *out)
{
    memset(out, 0, sizeof *out);
    out->method = o->method;
    size_t n;
    struct peak_census pc;
    if (census(it, &n, &pc) != 0)
        return -1;
    out->requests = (int)n;
    struct columns c;
    struct peak pk;
    int64_t first = 0, last = 0;
    int rc = alloc_columns(&c, n);
    if (peak_init(&pk, &pc) != 0)
        rc = -1;
    if (rc == 0)
        rc = measure(it, o, out, &c, &pk, &first, &last);
    if (rc == 0) {
        out->peak_output_tps_1s = peak_tps(&pk);
        dist_columns(&c, o->method, out->d);
        conclude(o, first, last, out);
    }
    free_columns(&c);
    peak_free(&pk);
    return rc == 0 ? steady_detect_iter(it, &o->steady, o->method, &out->steady) : rc;
}

int summary_compute(const struct req_record *recs, int n, const struct summary_opts *o,
                    struct run_summary *out)
{
    struct rec_iter it;
    rec_iter_array(&it, recs, n);
    return summary_compute_iter(&it, o, out);
}
