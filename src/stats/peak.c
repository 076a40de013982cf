/* peak.c — peak output tokens per second over any 1 s window (peak.h). */
#include "stats/peak.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/hist.h"
#include "stats/tokens.h"

#define SECOND_NS 1000000000LL

struct token_event {
    int64_t t_ns;
    double tokens;
};

bool peak_counts(const struct req_record *r)
{
    return r->t_start && r->fail == FAIL_NONE;
}

void peak_census_add(struct peak_census *c, const struct req_record *r)
{
    if (!peak_counts(r) || !r->n_chunks)
        return;
    c->events += r->n_chunks;
    c->most = r->n_chunks > c->most ? r->n_chunks : c->most;
    for (size_t i = 0; i < r->n_chunks; i++) {
        int64_t t = r->chunks[i].t_ns;
        if (!c->first || t < c->first)
            c->first = t;
        if (t > c->last)
            c->last = t;
    }
}

/* The narrowest bin, from PEAK_BIN_MS up through widths that divide 1 s,
 * that keeps a span to PEAK_BINS_MAX bins. */
static int64_t bin_width(int64_t span)
{
    static const int64_t ms[] = {PEAK_BIN_MS, 2, 4, 8, 40, 200, 1000};
    size_t i = 0;
    while (i + 1 < sizeof ms / sizeof *ms && (size_t)(span / (ms[i] * 1000000)) + 1 > PEAK_BINS_MAX)
        i++;
    return ms[i] * 1000000;
}

int peak_init(struct peak *p, const struct peak_census *c)
{
    memset(p, 0, sizeof *p);
    p->census = *c;
    if (c->events == 0)
        return 0;
    p->tokens = malloc(c->most * sizeof *p->tokens);
    if (c->events <= VCOL_EXACT_MAX) {
        p->ev = malloc(c->events * sizeof *p->ev);
        return p->tokens && p->ev ? 0 : -1;
    }
    p->bin_ns = bin_width(c->last - c->first);
    p->n_bins = (size_t)((c->last - c->first) / p->bin_ns) + 1;
    p->bins = calloc(p->n_bins, sizeof *p->bins);
    return p->tokens && p->bins ? 0 : -1;
}

int peak_add(struct peak *p, const struct req_record *r)
{
    if (!peak_counts(r) || !r->n_chunks)
        return 0;
    if (r->n_chunks > p->census.most || (p->ev && p->k + r->n_chunks > p->census.events))
        return -1;
    tokens_of_chunks(r, p->tokens);
    for (size_t i = 0; i < r->n_chunks; i++) {
        int64_t t = r->chunks[i].t_ns;
        if (t < p->census.first || t > p->census.last)
            return -1;
        p->all += p->tokens[i];
        if (p->ev)
            p->ev[p->k++] = (struct token_event){t, p->tokens[i]};
        else
            p->bins[(t - p->census.first) / p->bin_ns] += p->tokens[i];
    }
    return 0;
}

static int cmp_event(const void *a, const void *b)
{
    int64_t x = ((const struct token_event *)a)->t_ns, y = ((const struct token_event *)b)->t_ns;
    return (x > y) - (x < y);
}

/* Exact: the window (ev[hi] − 1 s, ev[hi]] slid over the sorted events. */
static double best_of_events(struct token_event *ev, size_t k)
{
    qsort(ev, k, sizeof *ev, cmp_event);
    double in = 0, best = 0;
    for (size_t lo = 0, hi = 0; hi < k; hi++) {
        in += ev[hi].tokens;
        while (ev[lo].t_ns <= ev[hi].t_ns - SECOND_NS)
            in -= ev[lo++].tokens;
        if (in > best)
            best = in;
    }
    return best;
}

/* Binned: the windows of 1 s / bin_ns whole bins (peak.h's bound). */
static double best_of_bins(const double *bins, size_t n, int64_t bin_ns)
{
    size_t w = (size_t)(SECOND_NS / bin_ns);
    double in = 0, best = 0;
    for (size_t j = 0; j < n; j++) {
        in += bins[j];
        if (j >= w)
            in -= bins[j - w];
        if (in > best)
            best = in;
    }
    return best;
}

double peak_tps(struct peak *p)
{
    const struct peak_census *c = &p->census;
    if (c->events == 0)
        return NAN;
    /* a run shorter than a second is one window, over its own span */
    int64_t span = c->last - c->first;
    if (span < SECOND_NS)
        return span > 0 ? p->all / ((double)span / 1e9) : NAN;
    return p->ev ? best_of_events(p->ev, p->k) : best_of_bins(p->bins, p->n_bins, p->bin_ns);
}

void peak_free(struct peak *p)
{
    free(p->ev);
    free(p->bins);
    free(p->tokens);
    memset(p, 0, sizeof *p);
}
