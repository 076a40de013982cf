/* dist.c — percentiles and distributions. */
#include "stats/dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const double dist_pcts[DIST_NPCT] = {25, 50, 75, 90, 95, 99};
const char *const dist_pct_names[DIST_NPCT] = {"p25", "p50", "p75", "p90", "p95", "p99"};

double *dist_pct(struct dist *d, int i)
{
    switch (i) {
    case 0: return &d->p25;
    case 1: return &d->p50;
    case 2: return &d->p75;
    case 3: return &d->p90;
    case 4: return &d->p95;
    default: return &d->p99;
    }
}

double dist_pct_of(const struct dist *d, int i)
{
    return *dist_pct((struct dist *)d, i);
}

int pct_method_parse(const char *s, enum pct_method *out)
{
    if (!strcmp(s, "nearest"))
        *out = PCT_NEAREST;
    else if (!strcmp(s, "linear"))
        *out = PCT_LINEAR;
    else
        return -1;
    return 0;
}

const char *pct_method_name(enum pct_method m)
{
    return m == PCT_LINEAR ? "linear" : "nearest-rank";
}

double pct_sorted(const double *sorted, size_t n, double p, enum pct_method m)
{
    if (m == PCT_NEAREST) {
        /* rank = ceil(p·n/100), computed so that exact products (25·16/100 = 4)
         * are not pushed up by floating-point noise */
        double exact = p * (double)n / 100.0;
        size_t rank = (size_t)ceil(exact - 1e-9 * exact);
        if (rank < 1)
            rank = 1;
        if (rank > n)
            rank = n;
        return sorted[rank - 1];
    }
    double pos = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(pos);
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

/* The 0-based rank of the value nearest-rank reads, or the lower of the
 * two that linear interpolation reads (pct_sorted's arithmetic). */
static size_t pct_rank(size_t n, double p, enum pct_method m, double *frac)
{
    *frac = 0;
    if (m == PCT_NEAREST) {
        double exact = p * (double)n / 100.0;
        size_t rank = (size_t)ceil(exact - 1e-9 * exact);
        return rank < 1 ? 0 : rank > n ? n - 1 : rank - 1;
    }
    double pos = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(pos);
    if (lo + 1 >= n)
        return n - 1;
    *frac = pos - (double)lo;
    return lo;
}

static void swap_d(double *v, ptrdiff_t i, ptrdiff_t j)
{
    double t = v[i];
    v[i] = v[j];
    v[j] = t;
}

/* Puts the k-th smallest of v[0..n) at v[k], none larger before it and
 * none smaller after it. */
static void select_kth(double *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k;
    while (hi > lo) {
        ptrdiff_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo])
            swap_d(v, mid, lo);
        if (v[hi] < v[lo])
            swap_d(v, hi, lo);
        if (v[hi] < v[mid])
            swap_d(v, hi, mid);
        double pivot = v[mid];
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (i <= hi && v[i] < pivot)
                i++;
            while (j >= lo && v[j] > pivot)
                j--;
            if (i <= j)
                swap_d(v, i++, j--);
        }
        /* v[lo..j] ≤ pivot ≤ v[i..hi], and what lies between equals it */
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            return;
    }
}

double pct_select(double *v, size_t n, double p, enum pct_method m)
{
    double frac;
    size_t k = pct_rank(n, p, m, &frac);
    select_kth(v, n, k);
    if (frac == 0)
        return v[k];
    double next = v[k + 1];         /* the smallest of what lies above rank k */
    for (size_t i = k + 2; i < n; i++)
        if (v[i] < next)
            next = v[i];
    return v[k] + (next - v[k]) * frac;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void dist_compute(double *vals, size_t n, enum pct_method m, struct dist *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)      /* keep defined values, in order */
        if (!isnan(vals[i]))
            vals[k++] = vals[i];
    out->samples = k;
    out->rel_error = 0;
    if (k == 0) {
        out->mean = out->min = out->max = NAN;
        for (int i = 0; i < DIST_NPCT; i++)
            *dist_pct(out, i) = NAN;
        return;
    }
    qsort(vals, k, sizeof *vals, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < k; i++)
        sum += vals[i];
    out->mean = sum / (double)k;
    out->min = vals[0];
    out->max = vals[k - 1];
    for (int i = 0; i < DIST_NPCT; i++)
        *dist_pct(out, i) = pct_sorted(vals, k, dist_pcts[i], m);
}
