/* summary.c — run-level numbers from per-request records (docs/METHODOLOGY.md, "Per run"). */
#include "stats/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "stats/metrics.h"

/* Per-request values of every distribution, one column per dist_id. */
struct columns {
    double *v[D_COUNT];
    size_t n[D_COUNT];
};

static void push(struct columns *c, enum dist_id id, double x)
{
    c->v[id][c->n[id]++] = x;
}

static void push_request(struct columns *c, const struct req_record *r, const struct req_metrics *m)
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
    for (size_t i = 1; i < r->n_chunks; i++) {
        push(c, D_ITL_CHUNK, ns_to_ms(r->chunks[i].t_ns - r->chunks[i - 1].t_ns));
        push(c, D_ITL_TOKEN, metrics_itl_per_token_ms(r, i, m->output_tokens));
    }
}

static int alloc_columns(struct columns *c, const struct req_record *recs, int n)
{
    size_t gaps = 0;
    for (int i = 0; i < n; i++)
        gaps += recs[i].n_chunks;
    memset(c, 0, sizeof *c);
    for (int id = 0; id < D_COUNT; id++) {
        size_t cap = (id == D_ITL_CHUNK || id == D_ITL_TOKEN) ? gaps : (size_t)n;
        c->v[id] = malloc((cap ? cap : 1) * sizeof(double));
        if (!c->v[id])
            return -1;
    }
    return 0;
}

static void free_columns(struct columns *c)
{
    for (int id = 0; id < D_COUNT; id++)
        free(c->v[id]);
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

struct token_event {
    int64_t t_ns;
    double tokens;
};

static int cmp_event(const void *a, const void *b)
{
    int64_t x = ((const struct token_event *)a)->t_ns, y = ((const struct token_event *)b)->t_ns;
    return (x > y) - (x < y);
}

/* The most output tokens that arrived within any 1 s window, per second:
 * counted from tokens (a chunk's own count, or its share of its request's
 * usage), never from chunk counts. Failed requests are left out. NaN when
 * memory runs out or nothing arrived. */
static double peak_tps_1s(const struct req_record *recs, int n)
{
    size_t total = 0, most = 0, k = 0;
    for (int i = 0; i < n; i++)
        if (recs[i].t_start && recs[i].fail == FAIL_NONE) {
            total += recs[i].n_chunks;
            most = recs[i].n_chunks > most ? recs[i].n_chunks : most;
        }
    struct token_event *ev = malloc((total ? total : 1) * sizeof *ev);
    double *tokens = malloc((most ? most : 1) * sizeof *tokens);
    if (!ev || !tokens || total == 0) {
        free(ev);
        free(tokens);
        return NAN;
    }
    for (int i = 0; i < n; i++) {
        if (!recs[i].t_start || recs[i].fail != FAIL_NONE)
            continue;
        tokens_of_chunks(&recs[i], tokens);
        for (size_t c = 0; c < recs[i].n_chunks; c++)
            ev[k++] = (struct token_event){recs[i].chunks[c].t_ns, tokens[c]};
    }
    free(tokens);
    qsort(ev, k, sizeof *ev, cmp_event);
    /* a run shorter than a second is one window, over its own span */
    int64_t span = ev[k - 1].t_ns - ev[0].t_ns;
    if (span < 1000000000) {
        double all = 0;
        for (size_t i = 0; i < k; i++)
            all += ev[i].tokens;
        free(ev);
        return span > 0 ? all / ((double)span / 1e9) : NAN;
    }
    double in = 0, best = 0;
    for (size_t lo = 0, hi = 0; hi < k; hi++) {     /* window (ev[hi] − 1 s, ev[hi]] */
        in += ev[hi].tokens;
        while (ev[lo].t_ns <= ev[hi].t_ns - 1000000000)
            in -= ev[lo++].tokens;
        if (in > best)
            best = in;
    }
    free(ev);
    return best;
}

int summary_compute(const struct req_record *recs, int n, const struct summary_opts *o,
                    struct run_summary *out)
{
    enum pct_method m = o->method;
    memset(out, 0, sizeof *out);
    out->requests = n;
    out->method = m;
    struct columns c;
    if (alloc_columns(&c, recs, n) != 0) {
        free_columns(&c);
        return -1;
    }
    int64_t first = 0, last = 0;
    for (int i = 0; i < n; i++) {
        const struct req_record *r = &recs[i];
        if (r->warmup) {        /* duration mode: sent before the window opened */
            out->requests--;
            out->warmup_requests++;
            continue;
        }
        if (!r->t_start)
            continue;
        out->sent++;
        out->events += r->events;
        if (!first || r->t_start < first)
            first = r->t_start;
        if (r->t_end > last)
            last = r->t_end;
        if (r->cut) {           /* incomplete by design: neither failed nor measured */
            out->cut++;
            continue;
        }
        if (r->fail != FAIL_NONE) {
            out->failed++;
            out->failed_by[r->fail]++;
            continue;
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
        push_request(&c, r, &rm);
    }
    out->duration_ms = last > first ? ns_to_ms(last - first) : 0;
    double s = out->duration_ms / 1000.0;
    out->output_throughput = s > 0 ? (double)out->output_tokens / s : NAN;
    out->total_token_throughput = s > 0 ? (double)(out->output_tokens + out->prompt_tokens) / s : NAN;
    out->request_throughput = s > 0 ? out->completed / s : NAN;
    out->goodput_rps = slo_any(&o->slo) && s > 0 ? out->good / s : NAN;
    invariants_check(recs, n, o->ignore_eos, &out->inv);
    double *lag = malloc((o->n_loop_lag ? o->n_loop_lag : 1) * sizeof *lag);
    if (lag) {
        if (o->n_loop_lag)
            memcpy(lag, o->loop_lag_ms, o->n_loop_lag * sizeof *lag);
        dist_compute(lag, o->n_loop_lag, PCT_NEAREST, &out->loop_lag);
        free(lag);
    }
    out->peak_output_tps_1s = peak_tps_1s(recs, n);
    out->aggregate_tps = out->window_tokens = NAN;
    if (o->window_end > o->window_start && o->window_start > 0) {
        tokens_in_window(recs, n, o->window_start, o->window_end, &out->window);
        out->window_tokens = out->window.tokens;
        out->aggregate_tps = out->window_tokens / ((double)(o->window_end - o->window_start) / 1e9);
    }
    for (int id = 0; id < D_COUNT; id++)
        dist_compute(c.v[id], c.n[id], m, &out->d[id]);
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
    free_columns(&c);
    return steady_detect(recs, n, &o->steady, m, &out->steady);
}
