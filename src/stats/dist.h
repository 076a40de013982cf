/* dist.h — distributions of per-request values: mean, min, percentiles, max. */
#ifndef ANVIL_STATS_DIST_H
#define ANVIL_STATS_DIST_H

#include <stddef.h>

enum pct_method {
    PCT_NEAREST,    /* nearest rank: element ceil(p·n/100) of n sorted values, 1-based (docs/METHODOLOGY.md) */
    PCT_LINEAR,     /* linear interpolation between closest ranks: numpy's default, (n−1)·p/100 */
};

/* Parses "nearest" or "linear". Returns 0, or -1 for anything else. */
int pct_method_parse(const char *s, enum pct_method *out);

/* Name as written in artifacts: "nearest-rank" or "linear". */
const char *pct_method_name(enum pct_method m);

/* The p-th percentile (0 ≤ p ≤ 100) of n ≥ 1 values sorted ascending. */
double pct_sorted(const double *sorted, size_t n, double p, enum pct_method m);

/* The p-th percentile (0 ≤ p ≤ 100) of n ≥ 1 values in any order, equal
 * to pct_sorted's of the same values sorted, found by selection in O(n)
 * (Hoare's quickselect, median-of-three pivots) where a sort takes
 * O(n log n): for a loop that cannot stall on a sort. Reorders v[0..n).
 * The values must not be NaN. */
double pct_select(double *v, size_t n, double p, enum pct_method m);

/* Percentiles every distribution reports, in this order. */
#define DIST_NPCT 6
extern const double dist_pcts[DIST_NPCT];       /* 25, 50, 75, 90, 95, 99 */
extern const char *const dist_pct_names[DIST_NPCT]; /* "p25", ..., "p99" */

struct dist {
    size_t samples;             /* values counted (NaNs are skipped) */
    double mean, min, max;      /* NaN when samples == 0 */
    double p25, p50, p75, p90, p95, p99;   /* percentiles (dist_pcts); NaN when samples == 0 */
    double rel_error;   /* 0: percentiles exact; else the bound of their relative error (a histogram, stats/hist.h) */
};

/* The i-th percentile field of d (0 ≤ i < DIST_NPCT, in dist_pcts order),
 * for the code that loops over the list (computing, writing and reading
 * them); everywhere else names the field (d->p50). */
double *dist_pct(struct dist *d, int i);

/* dist_pct for reading. */
double dist_pct_of(const struct dist *d, int i);

/* Computes the distribution of n values. Drops NaNs (undefined values, e.g.
 * TPOT of a one-token reply: not counted in samples) and sorts the rest in
 * place at the front of vals. Percentiles are exact: rel_error 0. */
void dist_compute(double *vals, size_t n, enum pct_method m, struct dist *out);

#endif
