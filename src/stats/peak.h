/* peak.h — a run's peak output tokens per second: the most output tokens
 * that arrived within any 1 s window (peak_output_tps_1s), counted from
 * tokens (a chunk's own count, or its share of its stream's: tokens.h),
 * never from chunk counts, over the records fed one at a time.
 *
 * Exact while the run has at most VCOL_EXACT_MAX chunk events (stats/hist.h):
 * every event kept (16 bytes), sorted, and a window slid over them. Past
 * that, tokens are summed into bins of PEAK_BIN_MS (1 ms) from the first
 * chunk's arrival and the window slides over 1000 bins: every binned
 * window is a real 1 s window, and the best real window is covered by a
 * binned one but for the part of it in the bin before, so
 *     binned ≤ exact ≤ binned + the most tokens of any one bin:
 * the figure is exact to within one bin's tokens. The bins cost 8 bytes
 * per ms of the run's output; a run over PEAK_BINS_MAX ms (about 70
 * min) takes the next wider bin of 2, 4, 8, 40, 200 or 1000 ms (each
 * divides 1 s) that keeps to PEAK_BINS_MAX bins (32 MiB). */
#ifndef ANVIL_STATS_PEAK_H
#define ANVIL_STATS_PEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats/record.h"

#define PEAK_BIN_MS 1
#define PEAK_BINS_MAX ((size_t)1 << 22)

/* Which records count: started and not failed (warm-ups and cut ones too:
 * what the server produced). */
bool peak_counts(const struct req_record *r);

/* What a first pass over the records learned: the chunk events of those
 * that count, the most in one record, the first and last arrival. */
struct peak_census {
    size_t events, most;
    int64_t first, last;        /* CLOCK_MONOTONIC ns; 0 = no event */
};

/* Adds r to the census (zeroed first). */
void peak_census_add(struct peak_census *c, const struct req_record *r);

struct token_event;

struct peak {
    struct peak_census census;
    struct token_event *ev;     /* owned; the exact events, when not binned */
    size_t k;
    double *bins;               /* owned; tokens per bin from census.first, when binned */
    size_t n_bins;
    int64_t bin_ns;             /* their width */
    double *tokens;             /* owned; one record's chunk tokens (census.most) */
    double all;                 /* every token counted */
};

/* Prepares to count the records a census described: exact or binned.
 * Returns 0, or -1 when memory runs out (p then needs peak_free). */
int peak_init(struct peak *p, const struct peak_census *c);

/* Counts r's tokens (nothing when it does not count). Returns 0, or -1
 * when r has more chunks than the census said (the records changed). */
int peak_add(struct peak *p, const struct req_record *r);

/* The peak in tokens/s: the best 1 s window, or, for a run whose events
 * span under 1 s, every token over that span; NaN when nothing arrived.
 * p->bin_ns is 0 when exact, else the bin width of the bound above. */
double peak_tps(struct peak *p);

void peak_free(struct peak *p);

#endif
