/* timeseries.h — the run over time: rows of a fixed interval, built as
 * requests end (docs/METHODOLOGY.md, "The run over time").
 *
 * Time is seconds since the origin, the run's first measured send. A
 * request counts as started in the row of its t_start and as completed,
 * failed (or cut) and for its output tokens, TTFT and ITL in the row of its
 * t_end. Only the open rows keep their TTFT and ITL values: a row is closed
 * (its p50 and p99 computed, its values freed) once a request ends two rows
 * later, so memory holds the values of about two intervals whatever the
 * run's length. Counts stay in every row (a request ending late still
 * counts where it started).
 *
 * Rows stay few: once the run passes 10 minutes its rows are merged to the
 * smallest multiple of the interval that is at least 10 s, and past 10 hours
 * to the smallest multiple of that at least 60 s. Merged counts are sums;
 * a merged row's p50 is the median (nearest rank) of its rows' p50s and its
 * p99 the largest of their p99s (an upper bound of the merged interval's
 * p99). Rows made after the last merge keep exact percentiles
 * (ts_series.exact_from_s).
 *
 * ts_add may be called from several threads at once (one mutex, held for a
 * few appends per request). */
#ifndef ANVIL_STATS_TIMESERIES_H
#define ANVIL_STATS_TIMESERIES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/dist.h"
#include "stats/record.h"

/* When the rows are merged to coarser intervals: past 10 min, past 10 h
 * (ns after the origin, before rounding up to a whole coarse row). */
#define TS_MERGE1_AFTER_NS 600000000000LL
#define TS_MERGE1_WIDTH_NS 10000000000LL
#define TS_MERGE2_AFTER_NS 36000000000000LL
#define TS_MERGE2_WIDTH_NS 60000000000LL

/* One finished row. Percentiles are NaN when no value fell in it. */
struct ts_point {
    double t_s;                 /* the interval's start, s after the origin */
    long started;               /* measured requests sent in it */
    long completed, failed;     /* requests that ended in it, completed / failed */
    long cut;                   /* duration mode: cut at the window's end in it (neither) */
    long output_tokens;         /* Σ output tokens (tokens_of) of the completed ones */
    long in_flight;             /* started by its end and not ended by then */
    double ttft_p50_ms, ttft_p99_ms;    /* TTFT of the completed requests ending in it */
    double itl_p50_ms, itl_p99_ms;      /* per-chunk ITL of every gap of those requests */
    long ttft_samples, itl_samples;
};

/* The series a run's accumulator ends with. */
struct ts_series {
    double interval_s;          /* the rows' interval (after merges) */
    int64_t interval_ns;        /* the same in ns */
    double requested_interval_s;/* the interval asked for */
    double exact_from_s;        /* rows from here on have exact percentiles; before: merged */
    int64_t origin_ns;          /* CLOCK_MONOTONIC of t_s = 0; 0 when no request was added */
    long late;                  /* requests whose values came after their row closed: counted,
                                   left out of the percentiles */
    struct ts_point *rows;      /* owned */
    size_t n_rows;
};

struct ts_open;                 /* an open row's values */

struct ts_row {
    struct ts_point p;
    struct ts_open *open;       /* owned while the row is open; NULL once closed */
};

/* The accumulator. Initialize with ts_init; every member is private. */
struct ts_acc {
    pthread_mutex_t mu;
    enum pct_method method;
    double requested_s;
    int64_t width_ns;           /* the rows' width now */
    int stage;                  /* merges done: 0, 1, 2 */
    int64_t next_at_ns;         /* the next merge when a request ends at or past it; 0 = none */
    int64_t exact_from_ns;
    int64_t origin;             /* 0 = not set */
    long late;
    size_t first_open;          /* rows below are closed */
    struct ts_row *rows;
    size_t n, cap;
    int failed;                 /* memory ran out: ts_finish fails */
};

/* Sets up a for rows of interval_s > 0 seconds (at least 1 ms), percentiles
 * by method (dist.h). Returns 0, or -1 when interval_s is out of range. */
int ts_init(struct ts_acc *a, double interval_s, enum pct_method method);

/* Sets the origin (CLOCK_MONOTONIC ns of the first measured send), before
 * any ts_add; one given later, or a second one, is ignored. Thread-safe. */
void ts_begin(struct ts_acc *a, int64_t origin_ns);

/* Counts one ended request: warm-ups and requests never sent are skipped.
 * Without ts_begin the first request added sets the origin to its t_start.
 * Thread-safe; never fails (memory running out is reported by ts_finish). */
void ts_add(struct ts_acc *a, const struct req_record *r);

/* Closes every row and hands the series to *out (rows from the first to
 * the last with a request ending or starting in it; in_flight computed).
 * Returns 0, or -1 when memory ran out at any point (*out then empty). The
 * accumulator is left empty; ts_free is still safe. */
int ts_finish(struct ts_acc *a, struct ts_series *out);

/* Frees the accumulator's rows and values. */
void ts_free(struct ts_acc *a);

/* Adds delta output tokens to the row where a request that ended at
 * t_end_ns (CLOCK_MONOTONIC) was counted: a count that changed after the
 * request ended (the engine's tokenize count of a stream without usage,
 * taken after the load). */
void ts_series_add_tokens(struct ts_series *s, int64_t t_end_ns, long delta);

/* Frees the rows of s and empties it. */
void ts_series_free(struct ts_series *s);

#endif
