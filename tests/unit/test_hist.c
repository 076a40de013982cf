/* test_hist.c — the log-linear histogram and the value column against a
 * full sort of the same values (dist_compute, pct_sorted). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core/rand.h"
#include "stats/dist.h"
#include "stats/hist.h"

/* Uniform in (0, 1). */
static double uniform(uint64_t *st)
{
    return ((double)(splitmix64_next(st) >> 11) + 0.5) / 9007199254740992.0;
}

/* Log-normal in ms around 20 ms, spread over 1 µs .. 10 s (clamped there). */
static double lognormal_ms(uint64_t *st)
{
    double z = sqrt(-2 * log(uniform(st))) * cos(2 * M_PI * uniform(st));  /* Box-Muller */
    double x = exp(log(20.0) + 2.5 * z);
    return x < 1e-3 ? 1e-3 : x > 1e4 ? 1e4 : x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The proof's bound (hist.h): 2^-11 of the true value, with room for the
 * rounding of one multiplication. */
static void assert_within(double got, double want, const char *what)
{
    double bound = ldexp(fabs(want), -11) * (1 + 1e-12);
    cr_assert(fabs(got - want) <= bound, "%s: %.17g against %.17g (error %.3g of it)", what, got, want,
              want != 0 ? fabs(got - want) / fabs(want) : fabs(got - want));
    cr_assert(fabs(got - want) <= HIST_REL_ERROR * fabs(want));
}

static void assert_same_dist(const struct dist *a, const struct dist *b)
{
    cr_assert_eq(a->samples, b->samples);
    cr_assert(a->mean == b->mean && a->min == b->min && a->max == b->max);
    for (int i = 0; i < DIST_NPCT; i++)
        cr_assert(dist_pct_of(a, i) == dist_pct_of(b, i), "%s: %.17g vs %.17g", dist_pct_names[i],
                  dist_pct_of(a, i), dist_pct_of(b, i));
    cr_assert_eq(a->rel_error, b->rel_error);
}

Test(hist, vcol_below_the_bound_is_dist_compute)
{
    uint64_t st = 7;
    size_t n = 100000;
    double *copy = malloc(n * sizeof *copy);
    for (int m = PCT_NEAREST; m <= PCT_LINEAR; m++) {
        struct vcol c;
        vcol_init(&c);
        for (size_t i = 0; i < n; i++) {
            copy[i] = i % 97 == 0 ? NAN : lognormal_ms(&st);
            cr_assert_eq(vcol_add(&c, copy[i]), 0);
        }
        cr_assert_null(c.h, "still exact");
        struct dist got, want;
        vcol_dist(&c, (enum pct_method)m, &got);
        dist_compute(copy, n, (enum pct_method)m, &want);
        assert_same_dist(&got, &want);
        cr_assert_eq(got.rel_error, 0);
        vcol_free(&c);
    }
    free(copy);
}

Test(hist, vcol_at_the_bound_stays_exact_and_one_past_it_does_not)
{
    struct vcol c;
    vcol_init(&c);
    for (size_t i = 0; i < VCOL_EXACT_MAX; i++)
        cr_assert_eq(vcol_add(&c, (double)i), 0);
    cr_assert_null(c.h);
    struct dist d;
    vcol_dist(&c, PCT_NEAREST, &d);
    cr_assert_eq(d.rel_error, 0);
    cr_assert_eq(vcol_add(&c, NAN), 0, "NaN is skipped, not counted");
    cr_assert_null(c.h);
    cr_assert_eq(vcol_add(&c, 1.0), 0);
    cr_assert_not_null(c.h);
    cr_assert_null(c.v, "the exact array is freed");
    vcol_dist(&c, PCT_NEAREST, &d);
    cr_assert_eq(d.samples, VCOL_EXACT_MAX + 1);
    cr_assert_eq(d.rel_error, HIST_REL_ERROR);
    cr_assert_eq(d.min, 0);
    cr_assert_eq(d.max, VCOL_EXACT_MAX - 1);
    vcol_free(&c);
}

/* A million values over 1 µs .. 10 s and 2 % zeros: every percentile, by
 * both methods, within 2^-11 of the sort's; mean, min and max exact. */
Test(hist, past_the_bound_percentiles_within_the_error, .timeout = 120)
{
    size_t n = 1000000;
    uint64_t st = 42;
    double *all = malloc(n * sizeof *all);
    struct vcol c;
    vcol_init(&c);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        all[i] = splitmix64_next(&st) % 50 == 0 ? 0.0 : lognormal_ms(&st);
        sum += all[i];
        cr_assert_eq(vcol_add(&c, all[i]), 0);
    }
    cr_assert_not_null(c.h);
    int binades = 0;
    for (int e = 0; e < HIST_EXPS; e++)
        binades += (c.h->bins[0][e] != NULL) + (c.h->bins[1][e] != NULL);
    /* 1e-3 .. 1e4 ms: 2^-10 .. 2^13.3, 24 binades of 8 KiB (hist.h) */
    cr_assert_leq(binades, 24, "%d binades allocated", binades);
    qsort(all, n, sizeof *all, cmp_double);
    cr_assert_eq(all[0], 0);
    for (int m = PCT_NEAREST; m <= PCT_LINEAR; m++) {
        struct dist d;
        vcol_dist(&c, (enum pct_method)m, &d);
        cr_assert_eq(d.samples, n);
        cr_assert_eq(d.rel_error, HIST_REL_ERROR);
        cr_assert_eq(d.min, all[0]);
        cr_assert_eq(d.max, all[n - 1]);
        cr_assert_float_eq(d.mean, sum / (double)n, 1e-12 * sum / (double)n);
        for (int i = 0; i < DIST_NPCT; i++)
            assert_within(dist_pct_of(&d, i), pct_sorted(all, n, dist_pcts[i], (enum pct_method)m),
                          dist_pct_names[i]);
    }
    /* the tail ranks and a sweep over every rank's neighbourhood, zeros included */
    const double tail[] = {0.5, 1, 1.5, 2.5, 10, 99.9, 99.99, 99.999, 100};
    for (size_t i = 0; i < sizeof tail / sizeof *tail; i++)
        for (int m = PCT_NEAREST; m <= PCT_LINEAR; m++) {
            double want = pct_sorted(all, n, tail[i], (enum pct_method)m);
            double exact = tail[i] * (double)n / 100.0, pos = (double)(n - 1) * tail[i] / 100.0;
            double got;
            if (m == PCT_NEAREST) {
                got = hist_at_rank(c.h, (uint64_t)ceil(exact - 1e-9 * exact));
            } else {
                uint64_t lo = (uint64_t)floor(pos);
                double a = hist_at_rank(c.h, lo + 1), b = lo + 1 < n ? hist_at_rank(c.h, lo + 2) : a;
                got = a + (b - a) * (pos - (double)lo);
            }
            assert_within(got, want, "tail");
        }
    for (size_t rank = 1; rank <= n; rank += 997)
        assert_within(hist_at_rank(c.h, rank), all[rank - 1], "rank");
    vcol_free(&c);
    free(all);
}

/* Zero is exact, negatives are ordered below it, and each value sits in
 * the bucket whose midpoint is within 2^-11 of it. */
Test(hist, zeros_negatives_and_bucket_edges)
{
    struct hist h;
    hist_init(&h);
    double v[] = {-3.0, -1e-3, 0, 0, 1.0, 1.0 + 1.0 / 1024, 2.0 - 1e-12, 1e-9, 4e6};
    size_t n = sizeof v / sizeof *v;
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(hist_add(&h, v[i]), 0);
    cr_assert_eq(hist_add(&h, NAN), 0);
    cr_assert_eq(h.count, n);
    double sorted[sizeof v / sizeof *v];
    memcpy(sorted, v, sizeof v);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    for (size_t r = 1; r <= n; r++)
        assert_within(hist_at_rank(&h, r), sorted[r - 1], "rank");
    cr_assert_eq(hist_at_rank(&h, 3), 0.0);
    cr_assert_eq(hist_at_rank(&h, 4), 0.0);
    cr_assert_eq(hist_at_rank(&h, 1), -3.0, "the minimum is exact");
    cr_assert_eq(hist_at_rank(&h, n), 4e6, "the maximum is exact");
    hist_free(&h);
    struct dist d;
    hist_dist(&h, PCT_NEAREST, &d);
    cr_assert_eq(d.samples, 0);
    cr_assert(isnan(d.p50) && isnan(d.mean) && isnan(d.min));
}
