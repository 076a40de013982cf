/* hist.c — the log-linear histogram and the value column (hist.h). */
#include "stats/hist.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = h->max = NAN;
}

/* Where a value x ≠ 0 falls: sign (0 positive, 1 negative), binade index
 * (E − HIST_EXP_MIN, clamped to the kept range) and sub-bucket. */
struct slot {
    int sign, exp, sub;
};

static struct slot slot_of(double x)
{
    struct slot s = {.sign = x < 0};
    double a = fabs(x);
    if (isinf(a))
        return (struct slot){s.sign, HIST_EXPS - 1, HIST_SUBS - 1};
    int e;
    double m = frexp(a, &e);        /* a = m·2^e, m in [0.5, 1): M = 2m, E = e − 1 */
    int idx = e - 1 - HIST_EXP_MIN;
    if (idx < 0)
        return (struct slot){s.sign, 0, 0};
    if (idx >= HIST_EXPS)
        return (struct slot){s.sign, HIST_EXPS - 1, HIST_SUBS - 1};
    s.exp = idx;
    s.sub = (int)((2 * m - 1) * HIST_SUBS);    /* exact: 2m − 1 in [0, 1), times a power of two */
    return s;
}

/* The midpoint of a slot's bucket: ±(1 + (s + ½)/1024)·2^E. */
static double slot_mid(int sign, int exp, int sub)
{
    double v = ldexp(1.0 + ((double)sub + 0.5) / HIST_SUBS, exp + HIST_EXP_MIN);
    return sign ? -v : v;
}

int hist_add(struct hist *h, double x)
{
    if (isnan(x))
        return 0;
    if (x != 0) {
        struct slot s = slot_of(x);
        uint64_t **b = &h->bins[s.sign][s.exp];
        if (!*b && !(*b = calloc(HIST_SUBS, sizeof **b)))
            return -1;
        (*b)[s.sub]++;
    } else {
        h->zeros++;
    }
    h->count++;
    h->sum += x;
    if (h->count == 1 || x < h->min)
        h->min = x;
    if (h->count == 1 || x > h->max)
        h->max = x;
    return 0;
}

/* Visits the buckets in ascending order of value until the running count
 * reaches rank; returns that bucket's value. */
double hist_at_rank(const struct hist *h, uint64_t rank)
{
    if (rank <= 1)
        return h->min;
    if (rank >= h->count)
        return h->max;
    uint64_t seen = 0;
    double v = h->max;
    bool found = false;
    for (int e = HIST_EXPS - 1; e >= 0 && !found; e--)      /* negatives: largest magnitude first */
        for (int s = HIST_SUBS - 1; h->bins[1][e] && s >= 0 && !found; s--)
            if ((seen += h->bins[1][e][s]) >= rank) {
                v = slot_mid(1, e, s);
                found = true;
            }
    if (!found && (seen += h->zeros) >= rank) {
        v = 0;
        found = true;
    }
    for (int e = 0; e < HIST_EXPS && !found; e++)
        for (int s = 0; h->bins[0][e] && s < HIST_SUBS && !found; s++)
            if ((seen += h->bins[0][e][s]) >= rank) {
                v = slot_mid(0, e, s);
                found = true;
            }
    /* the true value lies in [min, max]: clamping only moves toward it */
    return v < h->min ? h->min : v > h->max ? h->max : v;
}

/* The p-th percentile by m: the ranks pct_sorted would read (same
 * formulas), each read from the buckets. */
static double hist_pct(const struct hist *h, double p, enum pct_method m)
{
    uint64_t n = h->count;
    if (m == PCT_NEAREST) {
        double exact = p * (double)n / 100.0;
        double rank = ceil(exact - 1e-9 * exact);
        return hist_at_rank(h, rank < 1 ? 1 : (uint64_t)rank);
    }
    double pos = (double)(n - 1) * p / 100.0;
    uint64_t lo = (uint64_t)floor(pos);
    if (lo + 1 >= n)
        return h->max;
    double a = hist_at_rank(h, lo + 1), b = hist_at_rank(h, lo + 2), frac = pos - (double)lo;
    return a + (b - a) * frac;
}

void hist_dist(const struct hist *h, enum pct_method m, struct dist *out)
{
    out->samples = (size_t)h->count;
    out->rel_error = HIST_REL_ERROR;
    if (h->count == 0) {
        out->mean = out->min = out->max = NAN;
        for (int i = 0; i < DIST_NPCT; i++)
            *dist_pct(out, i) = NAN;
        return;
    }
    out->mean = h->sum / (double)h->count;
    out->min = h->min;
    out->max = h->max;
    for (int i = 0; i < DIST_NPCT; i++)
        *dist_pct(out, i) = hist_pct(h, dist_pcts[i], m);
}

void hist_free(struct hist *h)
{
    for (int s = 0; s < 2; s++)
        for (int e = 0; e < HIST_EXPS; e++)
            free(h->bins[s][e]);
    hist_init(h);
}

void vcol_init(struct vcol *c)
{
    memset(c, 0, sizeof *c);
}

/* Moves c's exact values into a new histogram and frees the array. */
static int vcol_to_hist(struct vcol *c)
{
    struct hist *h = malloc(sizeof *h);
    if (!h)
        return -1;
    hist_init(h);
    for (size_t i = 0; i < c->n; i++)
        if (hist_add(h, c->v[i]) != 0) {
            hist_free(h);
            free(h);
            return -1;
        }
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
    c->h = h;
    return 0;
}

int vcol_add(struct vcol *c, double x)
{
    if (isnan(x))
        return 0;
    if (!c->h && c->n == VCOL_EXACT_MAX && vcol_to_hist(c) != 0)
        return -1;
    if (c->h)
        return hist_add(c->h, x);
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        double *v = realloc(c->v, (cap < VCOL_EXACT_MAX ? cap : VCOL_EXACT_MAX) * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap < VCOL_EXACT_MAX ? cap : VCOL_EXACT_MAX;
    }
    c->v[c->n++] = x;
    return 0;
}

void vcol_dist(struct vcol *c, enum pct_method m, struct dist *out)
{
    if (c->h)
        hist_dist(c->h, m, out);
    else
        dist_compute(c->v, c->n, m, out);
}

void vcol_free(struct vcol *c)
{
    free(c->v);
    if (c->h) {
        hist_free(c->h);
        free(c->h);
    }
    vcol_init(c);
}
