/* gate.c — the decode cell's readiness gate. */
#include "decode/gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/engines.h"

static void *scrape_sample(void *ud, const struct sampler_tick *tick)
{
    struct decode_gate *g = ud;
    if (tick->hurry)    /* the server stopped answering: a scrape would wait its timeout */
        return NULL;
    return srv_scrape(&g->scraper, tick->t_due, tick->phase);
}

/* Keeps r's prefill figures for the scout's validation. */
static void keep_prefill(struct decode_gate *g, const struct srv_reading *r)
{
    const struct srv_hist *h = r->detail ? &r->detail->hist[SVH_PREFILL] : NULL;
    if (g->n_prefill < DECODE_GATE_READINGS)
        g->prefill[g->n_prefill++] = (struct decode_gate_prefill){
            r->t_sent, r->t_done, h && h->n ? h->count : NAN, h && h->n ? h->sum : NAN,
            r->v[SV_PROMPT_TOKENS], r->v[SV_PREFIX_HITS]};
}

/* On the measuring loop: the newest counts. A failed scrape leaves the
 * previous ones, which go stale only until the next scrape. */
static void scrape_collect(void *ud, const struct sampler_tick *tick, void *result)
{
    (void)tick;
    struct decode_gate *g = ud;
    struct srv_reading *r = result;
    if (r->ok) {
        g->running = r->v[SV_RUNNING];
        g->queued = r->v[SV_WAITING];
        keep_prefill(g, r);
    }
    srv_reading_free(r);
    free(r);
}

static void scrape_discard(void *ud, void *result)
{
    (void)ud;
    srv_reading_free(result);
    free(result);
}

void decode_gate_init(struct decode_gate *g, long want, double stable_s, const char *metrics_url,
                      const struct curl_slist *headers)
{
    memset(g, 0, sizeof *g);
    g->want = want;
    g->stable_s = stable_s;
    g->running = g->queued = NAN;
    g->server = metrics_url != NULL;
    if (!g->server)
        return;
    srv_scraper_init(&g->scraper, metrics_url, headers);
    g->sampler = (struct sampler){
        .name = "decode_gate", .period_ns = DECODE_GATE_SCRAPE_NS, .may_block = true,
        .sample = scrape_sample, .collect = scrape_collect, .discard = scrape_discard, .ud = g,
    };
}

struct sampler *decode_gate_sampler(struct decode_gate *g)
{
    return g->server ? &g->sampler : NULL;
}

static void note(struct decode_gate *g, const struct driver_gate *dg, bool met)
{
    const struct decode_gate_obs *p = g->n_trace ? &g->trace[g->n_trace - 1] : NULL;
    bool same = p && p->active == dg->in_flight && p->decoding == dg->decoding && p->met == met &&
                (p->running == g->running || (isnan(p->running) && isnan(g->running))) &&
                (p->queued == g->queued || (isnan(p->queued) && isnan(g->queued)));
    if (same || g->n_trace == DECODE_GATE_TRACE)
        return;
    g->trace[g->n_trace++] = (struct decode_gate_obs){dg->now, g->running, g->queued, dg->in_flight,
                                                      dg->decoding, met};
}

bool decode_gate_ready(void *ud, const struct driver_gate *dg)
{
    struct decode_gate *g = ud;
    bool met;
    if (g->server) {
        met = g->running == (double)g->want && g->queued == 0 && dg->in_flight == g->want;
        snprintf(g->last, sizeof g->last, "running_reqs=%.0f/%ld, queue_reqs=%.0f, active_streams=%d/%ld",
                 g->running, g->want, g->queued, dg->in_flight, g->want);
    } else {
        met = dg->in_flight == g->want && dg->decoding == g->want;
        snprintf(g->last, sizeof g->last, "active_streams=%d/%ld, decoding_streams=%d/%ld", dg->in_flight,
                 g->want, dg->decoding, g->want);
    }
    note(g, dg, met);
    if (!met) {
        g->met_since = 0;
        return false;
    }
    if (!g->met_since)
        g->met_since = dg->now;
    double held = (double)(dg->now - g->met_since) / 1e9;
    if (held > g->longest_s)
        g->longest_s = held;
    if (held < g->stable_s)
        return false;
    g->opened = true;
    g->t_open = dg->now;
    snprintf(g->ready_reason, sizeof g->ready_reason, "%s, stable=%.1fs", g->last, g->stable_s);
    return true;
}

/* The last scrape that ended by t0 and the first that began after t1 (t1 0:
 * none after). */
static void bracket(const struct decode_gate *g, int64_t t0, int64_t t1, const struct decode_gate_prefill **before,
                    const struct decode_gate_prefill **after)
{
    *before = *after = NULL;
    for (int i = 0; i < g->n_prefill; i++) {
        const struct decode_gate_prefill *p = &g->prefill[i];
        if (p->t_done <= t0)
            *before = p;
        if (!*after && t1 && p->t_sent >= t1)
            *after = p;
    }
}

int decode_gate_scout_report(const struct decode_gate *g, int64_t t_start, int64_t t_first, int64_t t_end,
                             struct observe_report *out)
{
    if (!g->server)
        return -1;
    memset(out, 0, sizeof *out);
    out->server_enabled = true;
    snprintf(out->server_url, sizeof out->server_url, "%s", g->scraper.shown);
    struct srv_summary *s = &out->server;
    for (int k = 0; k < SV_N; k++)
        s->delta[k] = s->run_delta[k] = NAN;
    const struct decode_gate_prefill *c0, *c1, *h0, *h1;
    bracket(g, t_start, t_first, &c0, &c1);
    bracket(g, t_first, t_end, &h0, &h1);
    if (!t_end)
        snprintf(s->reason, sizeof s->reason, "the scout did not finish before its cell ended (the server "
                 "observes a prefill time at the request's end)");
    else if (!h0 || !h1)
        snprintf(s->reason, sizeof s->reason, "no /metrics reading %s the scout", !h0 ? "before" : "after");
    if (*s->reason)
        return 0;
    s->available = true;
    if (c0 && c1) {     /* the cell's first scrape usually goes out with the scout: then no counter figure */
        s->delta[SV_PROMPT_TOKENS] = c1->prompt_tokens - c0->prompt_tokens;
        s->delta[SV_PREFIX_HITS] = c1->prefix_hits - c0->prefix_hits;
    }
    double n = h1->count - h0->count;   /* NaN without the histogram: counts none */
    if (n > 0) {
        s->hist[SVH_PREFILL].count = n;
        s->hist[SVH_PREFILL].mean = (h1->sum - h0->sum) / n;
    }
    return 0;
}

void decode_gate_free(struct decode_gate *g)
{
    if (g->server)
        srv_scraper_free(&g->scraper);
}
