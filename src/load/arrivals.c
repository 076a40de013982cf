/* arrivals.c — open-loop arrival schedules. */
#include "load/arrivals.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

int arrivals_schedule(double rate, double burstiness, uint64_t seed, bool fixed_span,
                      int64_t *offsets_ns, size_t n)
{
    if (!(rate > 0) || !(burstiness > 0))
        return -1;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return -1;
    gsl_rng_set(rng, (unsigned long)seed);
    double mean_s = isinf(rate) ? 0 : 1.0 / rate;
    double *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) {
        gsl_rng_free(rng);
        return -1;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        t[i] = sum;
        if (isinf(burstiness))
            sum += mean_s;
        else if (mean_s > 0)    /* shape B, scale θ = mean / B */
            sum += gsl_ran_gamma(rng, burstiness, mean_s / burstiness);
    }
    /* Rescale so the n arrivals span exactly (n − 1)/rate: the offered rate
     * is the one asked for, not a sample of it. For B = 1 this is a Poisson
     * process conditioned on its count (uniform order statistics). */
    double span = n > 1 ? t[n - 1] : 0, want = n > 1 ? (double)(n - 1) * mean_s : 0;
    double k = !fixed_span ? 1 : span > 0 ? want / span : 0;
    for (size_t i = 0; i < n; i++)
        offsets_ns[i] = (int64_t)llround(t[i] * k * 1e9);
    free(t);
    gsl_rng_free(rng);
    return 0;
}

double arrivals_ramp_rate(const struct load_ramp *r, size_t i, size_t n)
{
    double p = (double)i / (double)(n > 1 ? n - 1 : 1);
    if (r->strategy == RAMP_EXPONENTIAL)
        return r->start_rps * pow(r->end_rps / r->start_rps, p);
    return r->start_rps + (r->end_rps - r->start_rps) * p;
}

int arrivals_ramp_schedule(const struct load_ramp *r, double burstiness, uint64_t seed, int64_t *offsets_ns,
                           size_t n)
{
    if (r->strategy == RAMP_NONE || !(burstiness > 0) || !(r->end_rps > 0) || !(r->start_rps >= 0) ||
        (r->strategy == RAMP_EXPONENTIAL && !(r->start_rps > 0)) || !isfinite(r->start_rps) ||
        !isfinite(r->end_rps))
        return -1;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return -1;
    gsl_rng_set(rng, (unsigned long)seed);
    double t = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        double rate = i ? arrivals_ramp_rate(r, i, n) : 0;
        if (i && !(rate > 0))
            rc = -1;
        else if (i)     /* shape B, scale θ = mean / B */
            t += isinf(burstiness) ? 1 / rate : gsl_ran_gamma(rng, burstiness, 1 / (rate * burstiness));
        offsets_ns[i] = (int64_t)llround(t * 1e9);
    }
    gsl_rng_free(rng);
    return rc;
}
