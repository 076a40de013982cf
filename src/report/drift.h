/* drift.h — whether a run drifted: the first and the last quarter of its
 * time series (the artifact's `timeseries`) compared metric by metric
 * (docs/METHODOLOGY.md, "The run over time"). */
#ifndef ANVIL_REPORT_DRIFT_H
#define ANVIL_REPORT_DRIFT_H

#include <stdbool.h>
#include <stddef.h>

#include "artifact/benchmark.h"

/* Full rows (every row but the last, which the run's end cuts short) a
 * series needs before drift is judged: two per quarter. */
#define DRIFT_MIN_ROWS 8

/* The most metrics compared. */
#define DRIFT_MAX 16

/* One metric compared. */
struct drift {
    const char *label;          /* "TTFT p50", "output tok/s", ... (static) */
    const char *unit;           /* "ms", "tok/s", ... (static) */
    double first, last;         /* medians (nearest rank) of the quarters' row values */
    double noise;               /* the larger of 10% of the larger median and each quarter's
                                   spread (p75 − p25 of its rows) */
    bool drifted;               /* |last − first| > noise */
};

/* Compares the first and the last quarter (⌊full rows / 4⌋ rows each) of
 * t's full rows that start at or after from_s (s on the series' clock: a
 * ramp's end, whose rows rise by design; 0 = all) for every metric with at
 * least two values in each quarter, into out (at most cap). A p99 is
 * compared only when the first quarter starts at or after exact_from_s (a
 * merged row's p99 is an upper bound). Returns how many were compared; -1
 * when t is absent or has fewer than DRIFT_MIN_ROWS full rows from from_s
 * (not judged). *quarter_s, when not NULL, gets a quarter's length in
 * seconds. */
int drift_compare(const struct bench_timeseries *t, double from_s, struct drift *out, int cap,
                  double *quarter_s);

/* drift_compare of b's time series from its ramp's end (the steady
 * state's not_before_s; 0 without one): what show and report judge. */
int drift_of_run(const struct benchmark *b, struct drift *out, int cap, double *quarter_s);

#endif
