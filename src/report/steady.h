/* steady.h — the steady state as a person reads it: one line saying
 * whether it was reached, and the headline figures of the stretch beside
 * the whole run's where they differ beyond noise (stats/steady.h's
 * steady_differs). The run's end summary (report/table.c) and `anvil show`
 * (report/show.c) both print through it. */
#ifndef ANVIL_REPORT_STEADY_H
#define ANVIL_REPORT_STEADY_H

#include <stdbool.h>
#include <stddef.h>

#include "artifact/benchmark.h"
#include "stats/summary.h"

/* One headline figure, over the whole run and over the steady stretch. */
struct steady_figure {
    const char *label;          /* "Median TTFT (ms)", ... */
    double whole, steady;       /* NaN = none */
};

#define STEADY_FIGURES 10

struct steady_view {
    bool present;               /* false: an artifact from before steady_state */
    bool reached;
    const char *reason;         /* a STEADY_* key (borrowed), NULL when reached */
    const char *basis;          /* "in_flight", "completion_rate", "none" (borrowed) */
    double target, start_s, end_s, length_s, share;
    struct steady_figure fig[STEADY_FIGURES];
};

/* The view of a run's summary. */
void steady_view_of_summary(const struct run_summary *s, struct steady_view *v);

/* The view of an artifact (present false when it has no steady_state). */
void steady_view_of_bench(const struct benchmark *b, struct steady_view *v);

/* The one line (no newline) into out (cap bytes): "reached: 11.5 s from
 * 1.0 s to 12.5 s after the first send (85 % of the run), in flight within
 * 10 % of 8" or "not reached: <reason in words>". Returns out. */
const char *steady_line(const struct steady_view *v, char *out, size_t cap);

/* Whether figure i is to be shown beside the whole run's: reached and
 * steady_differs. */
bool steady_figure_differs(const struct steady_view *v, int i);

#endif
