/* window.h — readings taken at instants around a measurement window, turned
 * into figures over exactly that window: the value of a counter at each
 * boundary, and summaries of a gauge sampled inside it. Shared by the
 * server's /metrics and the hardware telemetry. Pure functions; times are
 * CLOCK_MONOTONIC ns.
 *
 * A reading is taken between t_sent (the request went out, the first NVML
 * call began) and t_done (the answer arrived): it shows the state at some
 * instant in between, which this module takes to be the midpoint. */
#ifndef ANVIL_OBSERVE_WINDOW_H
#define ANVIL_OBSERVE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a reading was taken, as the run tells its samplers (load/sampler.h's
 * boundaries), plus the two readings the run takes itself, synchronously,
 * before the load starts and after it has ended. */
enum obs_phase {
    OBS_PRE_RUN,        /* before driver_run: no request of the run has been sent */
    OBS_BEFORE_WARMUP, OBS_WINDOW_START, OBS_WINDOW_END, OBS_AFTER_LAST,
    OBS_PERIODIC,
    OBS_POST_RUN,       /* after driver_run returned: every request has ended */
};

/* The phase's name for artifacts: "pre_run", "before_warmup", ... Static. */
const char *obs_phase_name(enum obs_phase p);

/* How a counter's value at a boundary is taken from the readings around it. */
enum obs_rule {
    /* The covering span: at the window's start the last reading done at or
     * before it, at its end the first reading sent at or after it. Nothing
     * inside the window is missed; traffic just outside it is counted too.
     * Exact when the server does nothing of the run's around the window:
     * closed and open loop with --num-prompts (nothing is sent before the
     * first measured request but warm-ups, nothing after the last ends). */
    OBS_COVER,
    /* Linear interpolation at the boundary between the readings just before
     * and just after it (midpoints), for a load that runs through both
     * boundaries (duration mode): a reading after the window counts only the
     * part of its change that falls inside. */
    OBS_INTERPOLATE,
};

/* One reading's times, and whether it can be used (the scrape succeeded and
 * still holds what the caller needs). */
struct obs_time {
    int64_t sent, done;
    bool usable;
};

/* A counter's value at a boundary: v = v[lo] + w·(v[hi] − v[lo]), lo or hi
 * -1 when there is no reading on that side (v is then the other's, w 0 or 1).
 * Both -1: nothing usable. */
struct obs_pick {
    long lo, hi;
    double w;
    int64_t lo_ns, hi_ns;       /* the readings' midpoints (0 when absent) */
};

/* Chooses the readings for boundary b (start true for the window's start)
 * by rule among t[0..n). lo: the usable reading done at or before b with the
 * latest midpoint; hi: the usable reading sent at or after b with the
 * earliest. OBS_COVER: w = 0 at the start, 1 at the end (the outer reading;
 * the other side when it is missing). OBS_INTERPOLATE: w = (b − m_lo) /
 * (m_hi − m_lo). Cost O(n). */
struct obs_pick obs_pick_boundary(const struct obs_time *t, size_t n, int64_t b, bool start,
                                  enum obs_rule rule);

/* The value the pick gives, from v[lo] and v[hi] (either NaN: the other;
 * both: NaN). */
double obs_pick_value(const struct obs_pick *p, double v_lo, double v_hi);

/* A gauge over the window, from the readings whose midpoint lies in it. */
struct obs_gauge {
    int samples;                /* readings that answered with a value */
    int missed;                 /* readings inside the window that did not (failed, timed out) */
    double mean;                /* arithmetic mean of the samples */
    double max, min;
    double time_weighted;       /* each sample held until the next reading, answered or not (the
                                   last until the window's end), over the time samples held */
    double coverage;            /* share 0..1 of the window the samples held: a missed reading's
                                   stretch is nobody's, not the sample before it held on */
    double nonzero_share;       /* share of samples above 0 */
    double median;
};

/* Below this coverage a gauge's summary is not reported (obs_gauge_require). */
#define OBS_GAUGE_MIN_COVERAGE 0.5

/* Summarizes the gauge whose value at reading i is v[i] (NaN = the reading
 * did not answer, or did not report it) with midpoints m[i], over [ws, we].
 * Readings may come in any order. An answered reading holds its value from
 * its midpoint to the next reading's midpoint, answered or not (the last
 * to we): time_weighted = Σ v·held / Σ held, coverage = Σ held / (we − ws)
 * (NaN when we <= ws). Every field NaN (samples 0) when no answered
 * reading lies inside. Returns 0, or -1 when memory runs out. Cost
 * O(n log n). */
int obs_gauge_summary(const int64_t *m, const double *v, size_t n, int64_t ws, int64_t we,
                      struct obs_gauge *out);

/* Marks g unavailable when its coverage is under min_coverage: the
 * summaries (mean, time_weighted, max, min, median, nonzero_share) become
 * NaN, samples, missed and coverage stay, so a gauge read over too little
 * of the window reads as unknown rather than as a low value. Returns
 * whether g is still available. */
bool obs_gauge_require(struct obs_gauge *g, double min_coverage);

#endif
