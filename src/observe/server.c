/* server.c — the /metrics series of a run and its summary over the window
 * (see server.h; formulas in docs/METHODOLOGY.md, "Server metrics"). */
#include "observe/server.h"

#include "core/vec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int srv_series_add(struct srv_series *s, struct srv_reading *r)
{
    size_t cap_r = s->cap, cap_k = s->cap;     /* the two arrays share s->cap */
    if (VEC_RESERVE(s->r, cap_r, s->n + 1, 64) != 0 || VEC_RESERVE(s->keep, cap_k, s->n + 1, 64) != 0) {
        srv_reading_free(r);
        return -1;
    }
    s->cap = cap_r;
    bool boundary = r->phase != OBS_PERIODIC;
    s->r[s->n] = *r;
    s->keep[s->n] = boundary;
    *r = (struct srv_reading){0};
    for (size_t i = s->n > SRV_SERIES_KEEP ? s->n - SRV_SERIES_KEEP : 0; boundary && i < s->n; i++)
        s->keep[i] = true;      /* the readings just before a boundary: its "before" side */
    s->n++;
    if (s->n > SRV_SERIES_KEEP + 1 && !s->keep[s->n - 2 - SRV_SERIES_KEEP])
        srv_reading_drop_detail(&s->r[s->n - 2 - SRV_SERIES_KEEP]);
    return 0;
}

void srv_series_free(struct srv_series *s)
{
    for (size_t i = 0; i < s->n; i++)
        srv_reading_free(&s->r[i]);
    free(s->r);
    free(s->keep);
    *s = (struct srv_series){0};
}

void srv_summary_free(struct srv_summary *s)
{
    for (size_t i = 0; i < s->n_raw; i++)
        free(s->raw[i].key);
    free(s->raw);
    s->raw = NULL;
    s->n_raw = 0;
}

static double ms_from(int64_t t, int64_t ref, bool present)
{
    return present ? (double)(t - ref) / 1e6 : NAN;
}

/* Scrape statistics and the engine every usable reading shares. Returns
 * -1 when two ok readings were read with different tables. */
static int scrape_stats(const struct srv_series *s, struct srv_summary *o)
{
    bool engine_set = false;
    for (size_t i = 0; i < s->n; i++) {
        const struct srv_reading *r = &s->r[i];
        if (!r->ok) {
            o->scrapes_failed++;
            snprintf(o->last_error, sizeof o->last_error, "%s", r->error);
            continue;
        }
        o->scrapes_ok++;
        o->max_bytes = fmax(o->max_bytes, (double)r->bytes);
        o->max_scrape_ms = fmax(o->max_scrape_ms, (double)(r->t_done - r->t_sent) / 1e6);
        if (r->t_due)
            o->max_late_ms = fmax(o->max_late_ms, (double)(r->t_sent - r->t_due) / 1e6);
        if (engine_set && r->engine != o->engine)
            return -1;
        o->engine = r->engine;
        engine_set = true;
    }
    return 0;
}

struct bounds {
    const struct srv_series *s;
    struct obs_pick start, end;
};

static double at(const struct bounds *b, const struct obs_pick *p, enum srv_value v)
{
    double lo = p->lo >= 0 ? b->s->r[p->lo].v[v] : NAN, hi = p->hi >= 0 ? b->s->r[p->hi].v[v] : NAN;
    return obs_pick_value(p, lo, hi);
}

/* Δ over the window of a counter; a counter absent at the start and present
 * at the end was created in between (from 0). NaN when absent at the end. */
static double delta_of(double vs, double ve)
{
    if (isnan(ve))
        return NAN;
    return ve - (isnan(vs) ? 0 : vs);
}

static int counter_deltas(const struct bounds *b, struct srv_summary *o)
{
    for (int v = 0; v < SV_N; v++)
        o->delta[v] = NAN;
    for (int v = SV_GAUGE_END_; v < SV_N; v++) {
        double vs = at(b, &b->start, v), ve = at(b, &b->end, v);
        o->delta[v] = delta_of(vs, ve);
        if (o->delta[v] < -1e-9 * fabs(vs)) {
            snprintf(o->reason, sizeof o->reason, "counter %s went backwards over the window (%.17g → "
                     "%.17g): the server restarted?", srv_value_name(v), vs, ve);
            return -1;
        }
    }
    const struct srv_reading *ends[] = {b->end.lo >= 0 ? &b->s->r[b->end.lo] : NULL,
                                        b->end.hi >= 0 ? &b->s->r[b->end.hi] : NULL};
    for (int k = 0; k < 2; k++)
        if (ends[k] && ends[k]->n_pos > o->n_pos)
            o->n_pos = ends[k]->n_pos;
    for (int i = 0; i < o->n_pos; i++) {
        const struct obs_pick *ps[] = {&b->start, &b->end};
        double val[2];
        for (int k = 0; k < 2; k++) {
            const struct obs_pick *p = ps[k];
            const struct srv_reading *lo = p->lo >= 0 ? &b->s->r[p->lo] : NULL, *hi = p->hi >= 0 ? &b->s->r[p->hi] : NULL;
            val[k] = obs_pick_value(p, lo && i < lo->n_pos ? lo->pos[i] : NAN, hi && i < hi->n_pos ? hi->pos[i] : NAN);
        }
        o->pos_delta[i] = delta_of(val[0], val[1]);
    }
    return 0;
}

static bool same_bounds(const struct srv_hist *a, const struct srv_hist *b)
{
    if (a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++)
        if (a->le[i] != b->le[i])
            return false;
    return true;
}

/* The histogram at a pick (buckets interpolated like any counter); n = 0
 * when absent or when the two readings' bounds differ. */
static struct srv_hist hist_at(const struct bounds *b, const struct obs_pick *p, int h)
{
    const struct srv_hist *lo = p->lo >= 0 && b->s->r[p->lo].detail ? &b->s->r[p->lo].detail->hist[h] : NULL;
    const struct srv_hist *hi = p->hi >= 0 && b->s->r[p->hi].detail ? &b->s->r[p->hi].detail->hist[h] : NULL;
    if (lo && !lo->n)
        lo = NULL;
    if (hi && !hi->n)
        hi = NULL;
    struct srv_hist out = {0};
    if (lo && hi && !same_bounds(lo, hi))
        return out;
    const struct srv_hist *shape = lo ? lo : hi;
    if (!shape)
        return out;
    out = *shape;
    struct obs_pick q = *p;
    if (!lo)
        q.lo = -1;
    if (!hi)
        q.hi = -1;
    for (int i = 0; i < out.n; i++)
        out.cum[i] = obs_pick_value(&q, lo ? lo->cum[i] : NAN, hi ? hi->cum[i] : NAN);
    out.count = obs_pick_value(&q, lo ? lo->count : NAN, hi ? hi->count : NAN);
    out.sum = obs_pick_value(&q, lo ? lo->sum : NAN, hi ? hi->sum : NAN);
    return out;
}

static void hist_summaries(const struct bounds *b, struct srv_summary *o)
{
    for (int h = 0; h < SVH_N; h++) {
        struct srv_hist_summary *hs = &o->hist[h];
        *hs = (struct srv_hist_summary){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
        struct srv_hist s = hist_at(b, &b->start, h), e = hist_at(b, &b->end, h);
        if (!e.n || (s.n && !same_bounds(&s, &e)))
            continue;
        struct srv_hist d = e;
        for (int i = 0; s.n && i < d.n; i++)
            d.cum[i] -= s.cum[i];
        d.count -= s.n ? s.count : 0;
        d.sum -= s.n ? s.sum : 0;
        hs->count = d.count;
        if (d.count > 0) {
            hs->mean = d.sum / d.count;
            hs->p50 = srv_hist_quantile(&d, 0.50, NULL, NULL);
            hs->p90 = srv_hist_quantile(&d, 0.90, NULL, NULL);
            hs->p99 = srv_hist_quantile(&d, 0.99, &hs->p99_lo, &hs->p99_hi);
        }
    }
}

static int gauge_summaries(const struct srv_series *s, const struct srv_client *c, struct srv_summary *o)
{
    int64_t *m = malloc((s->n ? s->n : 1) * sizeof *m);
    double *v = malloc((s->n ? s->n : 1) * sizeof *v);
    int rc = m && v ? 0 : -1;
    for (int g = 0; rc == 0 && g < SV_GAUGE_END_; g++) {
        for (size_t i = 0; i < s->n; i++) {
            const struct srv_reading *r = &s->r[i];
            m[i] = r->t_sent + (r->t_done - r->t_sent) / 2;
            v[i] = r->ok ? r->v[g] : NAN;
        }
        rc = obs_gauge_summary(m, v, s->n, c->window_start, c->window_end, &o->gauge[g]);
        struct obs_gauge *q = &o->gauge[g];
        if (rc == 0 && q->samples > 0 && !obs_gauge_require(q, OBS_GAUGE_MIN_COVERAGE) && !o->gauge_reason[0])
            snprintf(o->gauge_reason, sizeof o->gauge_reason, "the scrapes that answered held %.0f%% of the window "
                     "(%d of %d readings inside it failed), under the %.0f%% a gauge needs: %s and the other "
                     "gauges so read are unavailable", 100 * q->coverage, q->missed, q->missed + q->samples,
                     100 * OBS_GAUGE_MIN_COVERAGE, srv_value_name(g));
    }
    o->gauge_coverage = o->gauge[SV_RUNNING].coverage;
    free(m);
    free(v);
    return rc;
}

/* Binary search of key among a detail's sorted raw keys; NaN when absent. */
static double raw_value(const struct srv_reading *r, const char *key)
{
    if (!r || !r->detail)
        return NAN;
    size_t lo = 0, hi = r->detail->n_raw;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(r->detail->raw_keys[mid], key);
        if (c == 0)
            return r->detail->raw[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NAN;
}

static int raw_deltas(const struct bounds *b, struct srv_summary *o)
{
    const struct srv_reading *keys = b->end.hi >= 0 ? &b->s->r[b->end.hi] : &b->s->r[b->end.lo];
    if (!keys->detail || !keys->detail->n_raw)
        return 0;
    if (!(o->raw = calloc(keys->detail->n_raw, sizeof *o->raw)))
        return -1;
    const struct obs_pick *ps[] = {&b->start, &b->end};
    for (size_t i = 0; i < keys->detail->n_raw; i++) {
        const char *k = keys->detail->raw_keys[i];
        double val[2];
        for (int j = 0; j < 2; j++) {
            const struct obs_pick *p = ps[j];
            val[j] = obs_pick_value(p, raw_value(p->lo >= 0 ? &b->s->r[p->lo] : NULL, k),
                                    raw_value(p->hi >= 0 ? &b->s->r[p->hi] : NULL, k));
        }
        if (!(o->raw[o->n_raw].key = strdup(k)))
            return -1;
        o->raw[o->n_raw++].delta = delta_of(val[0], val[1]);
    }
    return 0;
}

static double ratio(double a, double b)
{
    return b > 0 && !isnan(a) ? a / b : NAN;
}

/* Speculative decoding: vLLM's counters, or SGLang's verify calls / server
 * info / gauges (seed 004's methodology, acceptance_normalization). */
static void speculative(const struct srv_summary *in, const struct srv_info *info, double out_tokens,
                        struct srv_summary *o)
{
    double drafts = in->delta[SV_SPEC_DRAFTS], accepted = in->delta[SV_SPEC_ACCEPTED];
    double verify = in->delta[SV_SPEC_VERIFY_CALLS];
    if (!isnan(drafts)) {
        o->spec_source = "counters";
        o->spec_accept_rate = ratio(accepted, in->delta[SV_SPEC_DRAFT_TOKENS]);
        o->spec_accept_length = drafts > 0 && !isnan(accepted) ? 1 + accepted / drafts : NAN;
        o->n_pos_accept = in->n_pos;
        for (int i = 0; i < in->n_pos; i++)
            o->pos_accept[i] = ratio(in->pos_delta[i], drafts);
        double a = isnan(accepted) ? 0 : accepted;
        o->engine_steps = isnan(out_tokens) ? NAN : drafts + fmax(0, out_tokens - (a + drafts));
    } else if (o->engine == SRV_SGLANG && (verify > 0 || (info && !isnan(info->avg_spec_accept_length)) ||
                                           o->gauge[SV_SPEC_ACCEPT_LEN].samples > 0)) {
        if (verify > 0 && !isnan(in->delta[SV_GEN_TOKENS])) {
            o->spec_accept_length = in->delta[SV_GEN_TOKENS] / verify;
            o->spec_source = "counters";
        } else if (info && !isnan(info->avg_spec_accept_length)) {
            o->spec_accept_length = info->avg_spec_accept_length;
            o->spec_source = "server_info";
        } else {
            o->spec_accept_length = o->gauge[SV_SPEC_ACCEPT_LEN].time_weighted;
            o->spec_source = "gauge";
        }
        o->spec_accept_rate = o->gauge[SV_SPEC_ACCEPT_RATE].time_weighted;
        o->engine_steps = o->spec_accept_length >= 1 ? out_tokens / o->spec_accept_length : NAN;
    } else {
        o->engine_steps = out_tokens;   /* no speculation: one token per step */
    }
    o->accept_len_effective = ratio(out_tokens, o->engine_steps);
}

/* llama.cpp has no prefix-cache counters and no prefill histogram; its
 * prompt_tokens_total counts the prompt tokens it processed, not those its
 * slot cache kept, and prompt_seconds_total the time it spent on them. Over
 * the window, against the client's Σ prompt tokens of the requests whose
 * prompt was processed then: hit rate = 1 − Δprocessed / Σ prompt, prefill
 * = Δ seconds / requests. NaN where a figure is missing or the counter
 * exceeds the client's sum by more than 1% (other traffic). */
static void llamacpp_prompts(const struct srv_client *c, struct srv_summary *o)
{
    double processed = o->delta[SV_PROMPT_TOKENS], seconds = o->delta[SV_PROMPT_SECONDS];
    if (c->prompt_tokens > 0 && !isnan(processed) && processed <= 1.01 * c->prompt_tokens) {
        o->prefix_cache_hit_rate = fmax(0, 1 - processed / c->prompt_tokens);
        o->prefix_source = "llamacpp:prompt_tokens_total vs usage.prompt_tokens";
    }
    if (c->prompt_requests > 0 && !isnan(seconds))
        o->prefill_ms = seconds / c->prompt_requests * 1e3;
}

static void derive(const struct srv_client *c, const struct srv_info *info, struct srv_summary *o)
{
    double out = o->delta[SV_GEN_TOKENS];
    /* a counter that grows at completion says nothing of a window that cut streams */
    if (c->rule == OBS_INTERPOLATE && srv_gen_counted_at_end(o->engine))
        out = NAN;
    o->server_output_tokens = out;
    o->server_gen_throughput = ratio(out, o->window_s);
    speculative(o, info, isnan(out) ? c->output_tokens : out, o);
    o->steps_per_s = ratio(o->engine_steps, o->window_s);
    o->batch_steps = o->delta[SV_BATCH_STEPS];
    o->batch_steps_per_s = ratio(o->batch_steps, o->window_s);
    o->tokens_per_batch_step = ratio(o->delta[SV_BATCH_TOKENS], o->batch_steps);
    o->prefix_cache_hit_rate = ratio(o->delta[SV_PREFIX_HITS], o->delta[SV_PREFIX_QUERIES]);
    o->prefix_source = isnan(o->prefix_cache_hit_rate) ? NULL : "counters";
    if (isnan(o->prefix_cache_hit_rate) && o->engine == SRV_LLAMACPP)
        llamacpp_prompts(c, o);
    if (isnan(o->kv_pool_tokens) && info)
        o->kv_pool_tokens = info->max_total_num_tokens;
    const struct obs_gauge *run = &o->gauge[SV_RUNNING], *wait = &o->gauge[SV_WAITING];
    o->avg_running_reqs = run->time_weighted;
    o->max_running_reqs = run->max;
    o->avg_queue_reqs = wait->time_weighted;
    o->max_queue_reqs = wait->max;
    o->queue_fraction = wait->nonzero_share;
    o->underfilled = c->concurrency > 0 && !isnan(run->max) ? run->max < (double)c->concurrency : -1;
    o->capacity_limited = c->concurrency > 0 && c->tokens_per_request > 0 && !isnan(o->kv_pool_tokens)
                              ? o->kv_pool_tokens < (double)c->concurrency * (double)c->tokens_per_request
                              : -1;
    o->client_output_tokens = c->output_tokens;
    o->token_excess = out - c->output_tokens;
    o->other_traffic = o->token_excess > fmax(0.01 * c->output_tokens, 16);
    o->ttft_client_ms = c->ttft_mean_ms;
    o->ttft_server_ms = o->hist[SVH_TTFT].mean * 1e3;
    o->queue_ms = o->hist[SVH_QUEUE].mean * 1e3;
    if (isnan(o->prefill_ms))
        o->prefill_ms = o->hist[SVH_PREFILL].mean * 1e3;
    o->transfer_ms = !isnan(o->queue_ms) && !isnan(o->prefill_ms) ? c->ttft_mean_ms - o->queue_ms - o->prefill_ms
                                                                   : c->ttft_mean_ms - o->ttft_server_ms;
}

static void init_summary(struct srv_summary *o, const struct srv_client *c)
{
    double *nans[] = {
        &o->server_output_tokens, &o->server_gen_throughput, &o->spec_accept_rate, &o->spec_accept_length,
        &o->engine_steps, &o->accept_len_effective, &o->steps_per_s, &o->batch_steps, &o->batch_steps_per_s,
        &o->tokens_per_batch_step, &o->prefix_cache_hit_rate, &o->kv_pool_tokens, &o->kv_block_size,
        &o->avg_running_reqs, &o->max_running_reqs, &o->avg_queue_reqs, &o->max_queue_reqs,
        &o->queue_fraction, &o->client_output_tokens, &o->token_excess, &o->ttft_client_ms,
        &o->ttft_server_ms, &o->queue_ms, &o->prefill_ms, &o->transfer_ms, &o->start_lo_ms,
        &o->start_hi_ms, &o->start_w, &o->end_lo_ms, &o->end_hi_ms, &o->end_w, &o->gauge_coverage,
    };
    *o = (struct srv_summary){.rule = c->rule, .underfilled = -1, .capacity_limited = -1,
                              .window_s = (double)(c->window_end - c->window_start) / 1e9};
    for (size_t i = 0; i < sizeof nans / sizeof *nans; i++)
        *nans[i] = NAN;
    for (int v = 0; v < SV_N; v++)
        o->delta[v] = o->run_delta[v] = NAN;
    for (int h = 0; h < SVH_N; h++)
        o->hist[h] = (struct srv_hist_summary){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
}

/* The newest usable reading's value of a constant gauge (pool size). */
static double last_value(const struct srv_series *s, enum srv_value v)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->r[i].ok && !isnan(s->r[i].v[v]))
            return s->r[i].v[v];
    return NAN;
}

/* o->run_delta: the last good post-run reading less the first good
 * pre-run one, counter by counter. */
static void run_deltas(const struct srv_series *s, struct srv_summary *o)
{
    const struct srv_reading *pre = NULL, *post = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const struct srv_reading *r = &s->r[i];
        if (r->ok && r->phase == OBS_PRE_RUN && !pre)
            pre = r;
        if (r->ok && r->phase == OBS_POST_RUN)
            post = r;
    }
    for (int v = SV_GAUGE_END_; pre && post && pre->engine == post->engine && v < SV_N; v++) {
        double d = post->v[v] - pre->v[v];
        o->run_delta[v] = d >= 0 ? d : NAN;
    }
}

int srv_summarize(const struct srv_series *s, const struct srv_client *c, const struct srv_info *info,
                  struct srv_summary *o)
{
    init_summary(o, c);
    run_deltas(s, o);
    if (scrape_stats(s, o) != 0) {
        snprintf(o->reason, sizeof o->reason, "the server's metrics changed engine during the run");
        return 0;
    }
    struct obs_time *t = calloc(s->n ? s->n : 1, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->n; i++)
        t[i] = (struct obs_time){s->r[i].t_sent, s->r[i].t_done, s->r[i].ok && s->r[i].detail};
    struct bounds b = {.s = s};
    b.start = obs_pick_boundary(t, s->n, c->window_start, true, c->rule);
    b.end = obs_pick_boundary(t, s->n, c->window_end, false, c->rule);
    free(t);
    o->start_lo_ms = ms_from(b.start.lo_ns, c->window_start, b.start.lo >= 0);
    o->start_hi_ms = ms_from(b.start.hi_ns, c->window_start, b.start.hi >= 0);
    o->end_lo_ms = ms_from(b.end.lo_ns, c->window_end, b.end.lo >= 0);
    o->end_hi_ms = ms_from(b.end.hi_ns, c->window_end, b.end.hi >= 0);
    o->start_w = b.start.w;
    o->end_w = b.end.w;
    o->kv_pool_tokens = last_value(s, SV_KV_POOL_TOKENS);
    o->kv_block_size = last_value(s, SV_KV_BLOCK_SIZE);
    if (gauge_summaries(s, c, o) != 0)
        return -1;
    if (b.start.lo < 0 || b.end.hi < 0) {
        snprintf(o->reason, sizeof o->reason, "no scrape succeeded %s the window's %s%s%s",
                 b.start.lo < 0 ? "before" : "after", b.start.lo < 0 ? "start" : "end",
                 o->last_error[0] ? "; last error: " : "", o->last_error);
        return 0;
    }
    if (counter_deltas(&b, o) != 0)
        return 0;
    hist_summaries(&b, o);
    if (raw_deltas(&b, o) != 0)
        return -1;
    derive(c, info, o);
    o->available = true;
    return 0;
}
