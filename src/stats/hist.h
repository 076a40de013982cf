/* hist.h — a log-linear histogram (HdrHistogram's scheme) for columns of
 * values too many to keep one by one (per-chunk ITL over millions of
 * chunks), and the value column that keeps them exactly until they are.
 *
 * Buckets: a value |x| = M·2^E with M in [1, 2) falls in binade E and, in
 * it, in sub-bucket s = ⌊(M − 1)·1024⌋ (the top 10 bits of the mantissa):
 * the bucket [L, L + w) with L = (1 + s/1024)·2^E and w = 2^E/1024. The
 * value it reports is its midpoint L + w/2, so for any x in it
 *     |reported − x| ≤ w/2 = 2^E/2048 ≤ x/2048,   as x ≥ 2^E:
 * a relative error of at most 2^-11 ≈ 0.049 %, under HIST_REL_ERROR. A
 * percentile by nearest rank is the value of one rank, so it keeps that
 * bound; a linear one interpolates two ranks' values with weights a, 1 − a
 * ≥ 0, and |a·e1 + (1 − a)·e2| ≤ 2^-11·(a·x1 + (1 − a)·x2) for values of
 * one sign: the bound holds too. Clamping a reported value to the exact
 * [min, max] only moves it toward the true one.
 *
 * Zero is a bucket of its own (exact); negative values mirror positive
 * ones (gaps between arrival stamps are never negative, but a histogram
 * must not lie if one is). Binades are kept for |x| in [2^-64, 2^64) — in
 * ms, 5·10^-20 ms to 5·10^8 years; a value outside (or infinite) is counted
 * in the nearest end binade, where the bound no longer holds.
 *
 * Memory: 8 KiB (1024 counts of 8 bytes) per binade that holds a value,
 * allocated when its first value comes: values from 1 µs to 10 s in ms span
 * 24 binades, 192 KiB; 1 ns to 1 h, 42 binades, 336 KiB; the most any
 * histogram can take is 256 binades, 2 MiB. */
#ifndef ANVIL_STATS_HIST_H
#define ANVIL_STATS_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "stats/dist.h"

/* Bound on the relative error of any percentile a histogram reports (the
 * proof above gives 2^-11). */
#define HIST_REL_ERROR 0.001
#define HIST_SUB_BITS 10                    /* mantissa bits per sub-bucket: 1024 per binade */
#define HIST_SUBS (1 << HIST_SUB_BITS)
#define HIST_EXP_MIN (-64)                  /* binades 2^-64 .. 2^63 */
#define HIST_EXPS 128

struct hist {
    uint64_t *bins[2][HIST_EXPS];   /* owned; [0] positive, [1] negative values; NULL = none yet */
    uint64_t zeros;                 /* values equal to 0 */
    uint64_t count;                 /* every value counted */
    double sum, min, max;           /* exact; min, max NaN while count is 0 */
};

/* An empty histogram (allocates nothing). */
void hist_init(struct hist *h);

/* Counts x (NaN is skipped). Returns 0, or -1 when memory runs out (x not
 * counted). */
int hist_add(struct hist *h, double x);

/* The value at 1-based rank 1 ≤ rank ≤ h->count (the rank-th smallest):
 * its bucket's midpoint clamped to [min, max], exact for rank 1 (min) and
 * rank count (max) and for zeros. */
double hist_at_rank(const struct hist *h, uint64_t rank);

/* Distribution of what h counted: mean from the exact sum, min and max
 * exact, percentiles by m over the bucket counts (nearest rank, or linear
 * between the two ranks' values as pct_sorted does), rel_error
 * HIST_REL_ERROR. All NaN with samples 0 when h is empty. */
void hist_dist(const struct hist *h, enum pct_method m, struct dist *out);

/* Frees h's binades; h is empty again. */
void hist_free(struct hist *h);

/* Values kept exactly up to this many per column: 2 MiB of doubles. Below
 * it percentiles are exact (a run of 1000 requests × 256 chunks); above,
 * the histogram (at most a few hundred KiB for real ITL) is already
 * smaller than the array, and a column of millions of chunks cannot grow
 * past a few MiB. */
#define VCOL_EXACT_MAX 262144

/* A column of values: exact while at most VCOL_EXACT_MAX came, then all
 * moved into a histogram (the array freed). Zero-initialise, or
 * vcol_init. */
struct vcol {
    double *v;                      /* owned; the exact values while h is NULL */
    size_t n, cap;
    struct hist *h;                 /* owned; NULL while exact */
};

void vcol_init(struct vcol *c);

/* Adds x (NaN skipped). Returns 0, or -1 when memory runs out (x lost). */
int vcol_add(struct vcol *c, double x);

/* The distribution of c's values under m: exactly dist_compute's (which
 * sorts the kept values in place) while exact, rel_error 0; else
 * hist_dist's, rel_error HIST_REL_ERROR. */
void vcol_dist(struct vcol *c, enum pct_method m, struct dist *out);

/* Frees c's values; c is empty again. */
void vcol_free(struct vcol *c);

#endif
