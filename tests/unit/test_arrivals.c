/* test_arrivals.c — open-loop schedules: rate, burstiness, determinism. */
#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "load/arrivals.h"

#define N 2000

/* mean and coefficient of variation of the N−1 gaps, in seconds */
static void gap_stats(const int64_t *t, double *mean, double *cv)
{
    double sum = 0, sq = 0;
    for (int i = 1; i < N; i++) {
        double g = (double)(t[i] - t[i - 1]) / 1e9;
        sum += g;
        sq += g * g;
    }
    *mean = sum / (N - 1);
    double var = sq / (N - 1) - *mean * *mean;
    *cv = sqrt(var > 0 ? var : 0) / *mean;
}

Test(arrivals, poisson_rate_and_cv)
{
    static int64_t t[N];
    cr_assert_eq(arrivals_schedule(10, 1, 42, true, t, N), 0);
    double mean, cv;
    gap_stats(t, &mean, &cv);
    cr_assert_eq(t[0], 0, "the first request is due at once");
    cr_assert_float_eq(mean, 0.1, 1e-9, "the arrivals span exactly (N−1)/rate: mean gap %.9f s", mean);
    cr_assert(fabs(cv - 1.0) < 0.05, "Poisson gaps have CV 1, got %.3f", cv);
}

Test(arrivals, burstiness_sets_the_gamma_shape)
{
    static int64_t t[N];
    double mean, cv;
    cr_assert_eq(arrivals_schedule(4, 4, 7, true, t, N), 0);     /* CV = 1/sqrt(4) = 0.5 */
    gap_stats(t, &mean, &cv);
    cr_assert(fabs(mean - 0.25) / 0.25 < 0.02, "mean gap %.5f", mean);
    cr_assert(fabs(cv - 0.5) < 0.04, "CV %.3f", cv);
    cr_assert_eq(arrivals_schedule(4, 0.25, 7, true, t, N), 0);  /* burstier: CV 2 */
    gap_stats(t, &mean, &cv);
    cr_assert(fabs(cv - 2.0) < 0.2, "CV %.3f", cv);
}

Test(arrivals, constant_and_infinite_rates)
{
    static int64_t t[N];
    cr_assert_eq(arrivals_schedule(8, INFINITY, 1, true, t, N), 0);
    for (int i = 0; i < N; i++)
        cr_assert_eq(t[i], (int64_t)i * 125000000, "constant gaps of 125 ms");
    cr_assert_eq(arrivals_schedule(INFINITY, 1, 1, true, t, N), 0);
    for (int i = 0; i < N; i++)
        cr_assert_eq(t[i], 0, "inf: everything due at once");
}

Test(arrivals, deterministic_per_seed_and_rejects_bad_input)
{
    static int64_t a[N], b[N], c[N];
    arrivals_schedule(5, 1, 3, true, a, N);
    arrivals_schedule(5, 1, 3, true, b, N);
    arrivals_schedule(5, 1, 4, true, c, N);
    cr_assert_arr_eq(a, b, sizeof a);
    cr_assert(a[N / 2] != c[N / 2], "another seed, another schedule");
    cr_assert_eq(a[N - 1], c[N - 1], "both span exactly (N−1)/rate");
    cr_assert_eq(arrivals_schedule(0, 1, 1, true, a, N), -1);
    cr_assert_eq(arrivals_schedule(1, 0, 1, true, a, N), -1);
    cr_assert_eq(arrivals_schedule(NAN, 1, 1, true, a, N), -1);
}

Test(arrivals, without_fixed_span_the_rate_is_sampled)
{
    static int64_t t[N];
    cr_assert_eq(arrivals_schedule(10, 1, 42, false, t, N), 0);
    double mean, cv;
    gap_stats(t, &mean, &cv);
    cr_assert(fabs(mean - 0.1) / 0.1 < 0.05, "mean gap %.5f s", mean);
    cr_assert(mean != 0.1, "a sample, not the exact span");
}
