/* test_dist.c — percentiles: nearest rank and linear, against hand-computed values. */
#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "stats/dist.h"

Test(dist, nearest_rank_matches_definition)
{
    double v[] = {15, 20, 35, 40, 50};   /* the textbook example */
    cr_assert_eq(pct_sorted(v, 5, 5, PCT_NEAREST), 15);
    cr_assert_eq(pct_sorted(v, 5, 30, PCT_NEAREST), 20);
    cr_assert_eq(pct_sorted(v, 5, 40, PCT_NEAREST), 20);
    cr_assert_eq(pct_sorted(v, 5, 50, PCT_NEAREST), 35);
    cr_assert_eq(pct_sorted(v, 5, 100, PCT_NEAREST), 50);
}

Test(dist, nearest_rank_exact_products_do_not_round_up)
{
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i + 1;
    cr_assert_eq(pct_sorted(v, 16, 25, PCT_NEAREST), 4);   /* ceil(4.0) = 4, not 5 */
    cr_assert_eq(pct_sorted(v, 16, 75, PCT_NEAREST), 12);
    cr_assert_eq(pct_sorted(v, 16, 90, PCT_NEAREST), 15);  /* ceil(14.4) */
    cr_assert_eq(pct_sorted(v, 16, 99, PCT_NEAREST), 16);
}

Test(dist, linear_matches_numpy)
{
    double v[] = {1, 2, 3, 4};
    /* numpy.percentile([1,2,3,4], [25, 50, 90]) = [1.75, 2.5, 3.7] */
    cr_assert_float_eq(pct_sorted(v, 4, 25, PCT_LINEAR), 1.75, 1e-12);
    cr_assert_float_eq(pct_sorted(v, 4, 50, PCT_LINEAR), 2.5, 1e-12);
    cr_assert_float_eq(pct_sorted(v, 4, 90, PCT_LINEAR), 3.7, 1e-12);
    cr_assert_eq(pct_sorted(v, 4, 100, PCT_LINEAR), 4);
    cr_assert_eq(pct_sorted(v, 1, 50, PCT_LINEAR), 1);
}

Test(dist, compute_skips_nan_and_sorts)
{
    double v[] = {3, NAN, 1, 2, NAN};
    struct dist d;
    dist_compute(v, 5, PCT_NEAREST, &d);
    cr_assert_eq(d.samples, 3);
    cr_assert_eq(d.min, 1);
    cr_assert_eq(d.max, 3);
    cr_assert_float_eq(d.mean, 2.0, 1e-12);
    cr_assert_eq(d.p50, 2);
}

Test(dist, empty_is_nan_not_zero)
{
    struct dist d;
    dist_compute(NULL, 0, PCT_NEAREST, &d);
    cr_assert_eq(d.samples, 0);
    cr_assert(isnan(d.mean) && isnan(d.p25) && isnan(d.max));
}

Test(dist, method_names)
{
    enum pct_method m;
    cr_assert_eq(pct_method_parse("linear", &m), 0);
    cr_assert_eq(m, PCT_LINEAR);
    cr_assert_eq(pct_method_parse("median", &m), -1);
    cr_assert_str_eq(pct_method_name(PCT_NEAREST), "nearest-rank");
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Selection gives what a sort then pct_sorted gives, for both methods, on
 * random values with many ties, every size up to 300 and the percentiles
 * the time series and distributions use. */
Test(dist, selection_matches_the_sorted_percentile)
{
    static double v[300], sorted[300];
    const double ps[] = {0, 1, 25, 50, 75, 90, 95, 99, 99.9, 100};
    unsigned long x = 12345;
    for (size_t n = 1; n <= 300; n++) {
        for (int ties = 0; ties < 2; ties++) {
            for (size_t i = 0; i < n; i++) {
                x = x * 6364136223846793005UL + 1442695040888963407UL;
                sorted[i] = ties ? (double)((x >> 33) % 7) : (double)(x >> 11) / 9007199254740992.0 * 100;
            }
            qsort(sorted, n, sizeof *sorted, cmp_d);
            for (size_t k = 0; k < sizeof ps / sizeof *ps; k++) {
                for (int m = 0; m < 2; m++) {
                    for (size_t i = 0; i < n; i++)      /* a shuffled copy (Fisher-Yates) */
                        v[i] = sorted[i];
                    for (size_t i = n - 1; i > 0; i--) {
                        x = x * 6364136223846793005UL + 1442695040888963407UL;
                        size_t j = (size_t)((x >> 33) % (i + 1));
                        double t = v[i];
                        v[i] = v[j];
                        v[j] = t;
                    }
                    double want = pct_sorted(sorted, n, ps[k], (enum pct_method)m);
                    double got = pct_select(v, n, ps[k], (enum pct_method)m);
                    cr_assert_eq(got, want, "n %zu, p %g, method %d, ties %d: %g, want %g", n, ps[k], m, ties, got, want);
                }
            }
        }
    }
}
