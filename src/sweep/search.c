/* search.c — the SLO search's rule: bracket by doubling, then bisect. */
#include "sweep/search.h"

#include <math.h>

void search_wilson(long good, long n, double z, double out[2])
{
    if (n <= 0) {
        out[0] = 0;
        out[1] = 1;
        return;
    }
    double dn = (double)n, p = (double)good / dn, z2 = z * z;
    double denom = 1 + z2 / dn;
    double centre = (p + z2 / (2 * dn)) / denom;
    double half = z * sqrt(p * (1 - p) / dn + z2 / (4 * dn * dn)) / denom;
    out[0] = fmax(0, centre - half);
    out[1] = fmin(1, centre + half);
}

enum probe_verdict search_verdict(long good, long n, double target, long extra_rounds, long repeats,
                                  bool *by_interval)
{
    double ci[2];
    search_wilson(good, n, SEARCH_Z95, ci);
    *by_interval = n > 0 && (ci[0] > target || ci[1] < target);
    if (n <= 0)
        return PROBE_FAIL;
    if (*by_interval)
        return ci[0] > target ? PROBE_PASS : PROBE_FAIL;
    if (extra_rounds < repeats)
        return PROBE_UNCERTAIN;
    return (double)good / (double)n >= target ? PROBE_PASS : PROBE_FAIL;
}

void search_start(struct search_state *s)
{
    *s = (struct search_state){.pass = NAN, .fail = NAN};
}

/* x rounded to 4 significant digits: rates whose case names (%g) stay apart. */
static double four_digits(double x)
{
    if (x <= 0)
        return x;
    double scale = pow(10, 3 - floor(log10(x)));
    return round(x * scale) / scale;
}

static bool converged(const struct search_state *s, const struct search_rule *r)
{
    return r->whole ? s->fail - s->pass <= 1 : (s->fail - s->pass) / s->pass <= r->tolerance;
}

double search_next(struct search_state *s, const struct search_rule *r)
{
    if (!s->stopped && !isnan(s->pass) && !isnan(s->fail) && converged(s, r))
        s->stopped = "converged";
    if (!s->stopped && s->probes >= r->max_probes)
        s->stopped = "probe limit";
    if (s->stopped)
        return NAN;
    if (isnan(s->pass) && isnan(s->fail))
        return r->lo;
    if (isnan(s->fail))
        return fmin(r->whole ? floor(s->pass * 2) : four_digits(s->pass * 2), r->hi);
    double mid = (s->pass + s->fail) / 2;
    return r->whole ? floor(mid) : four_digits(mid);
}

void search_record(struct search_state *s, const struct search_rule *r, double load, bool pass)
{
    s->probes++;
    if (pass && (isnan(s->pass) || load > s->pass))
        s->pass = load;
    if (!pass && (isnan(s->fail) || load < s->fail))
        s->fail = load;
    if (!pass && isnan(s->pass) && load <= r->lo)
        s->stopped = "LO fails";
    else if (pass && isnan(s->fail) && load >= r->hi)
        s->stopped = "HI passes";
}
