/* search.h — the rule of an SLO search (`anvil sweep --search`,
 * docs/METHODOLOGY.md "SLO search"): which load to probe next, and when a
 * probe's SLO attainment is decided. Pure: no rounds are run here
 * (sweep/search_run.h runs them). */
#ifndef ANVIL_SWEEP_SEARCH_H
#define ANVIL_SWEEP_SEARCH_H

#include <stdbool.h>

/* z of a two-sided 95 % normal interval: Φ⁻¹(0.975). */
#define SEARCH_Z95 1.959963984540054

/* The Wilson score interval of a binomial share good/n at z (Wilson 1927;
 * Brown, Cai & DasGupta 2001): centre (p̂ + z²/2n)/(1 + z²/n), half-width
 * z·√(p̂(1−p̂)/n + z²/4n²)/(1 + z²/n), p̂ = good/n; into out[0] ≤ out[1],
 * within [0, 1]. n = 0 gives [0, 1]. */
void search_wilson(long good, long n, double z, double out[2]);

enum probe_verdict { PROBE_PASS, PROBE_FAIL, PROBE_UNCERTAIN };

/* The verdict on a probe whose rounds so far pooled good of n requests,
 * for the target attainment target: decided by the interval when its 95 %
 * Wilson interval leaves target out (*by_interval true); else uncertain
 * while extra_rounds < repeats; else decided by good/n ≥ target. No
 * request (n = 0) fails. */
enum probe_verdict search_verdict(long good, long n, double target, long extra_rounds, long repeats,
                                  bool *by_interval);

/* Where the search looks: [lo, hi]; whole loads (concurrency) or rates,
 * which stop once (fail − pass)/pass ≤ tolerance; at most max_probes. */
struct search_rule {
    bool whole;
    double lo, hi, tolerance;
    long max_probes;
};

/* What the search knows: the largest load that passed and the smallest
 * that failed (NaN: none yet), probes taken, and, once it stopped, why. */
struct search_state {
    double pass, fail;
    long probes;
    const char *stopped;        /* NULL while running; a static string */
};

/* An empty state. */
void search_start(struct search_state *s);

/* The next load to probe: lo first; while every probe passed, twice the
 * last (at most hi); then the middle of pass and fail (whole: rounded
 * down; rates: to 4 significant digits). NaN when the search has stopped;
 * s->stopped then says why: "converged" (fail − pass ≤ 1 whole, or
 * (fail − pass)/pass ≤ tolerance), "HI passes", "LO fails", "probe limit". */
double search_next(struct search_state *s, const struct search_rule *r);

/* Records the decided verdict of the probe at load. */
void search_record(struct search_state *s, const struct search_rule *r, double load, bool pass);

#endif
