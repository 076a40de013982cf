/* results.h — the results table a command that measures several load
 * points ends with (`anvil sweep`, `anvil decode`): per load point the
 * medians across its rounds of output throughput, TTFT p50/p99, TPOT
 * p50/p99 and goodput, the SLO attainment and, when priced, the cost per
 * million output tokens; then two verdict lines that keep apart the two
 * ways a run of load points goes wrong: requests failed (or rounds were cut
 * short), or SLOs were missed. */
#ifndef ANVIL_REPORT_RESULTS_H
#define ANVIL_REPORT_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "artifact/benchmark.h"
#include "report/rtable.h"
#include "report/show.h"

/* One load point. Labels are borrowed (they must outlive the print); NaN =
 * not measured (prints "n/a"). */
struct results_row {
    const char *target;         /* the server's label (sweep target, engine) */
    const char *point;          /* the load point's name (case id, "ctx 4096 × c8"); "" = none */
    char load[48];              /* the offered load: "c8" (closed loop) or "2 req/s" */
    long rounds;
    long completed, failed;     /* requests, summed over the rounds */
    long failed_rounds;         /* rounds with a failed request */
    long outlasted_window;      /* duration-mode rounds where nothing completed but the window
                                   counted tokens (matrix_round_outlasted_window) */
    long good;                  /* good requests summed over the rounds; < 0 = no SLO was set */
    bool cut;                   /* a round was cut short (incomplete, or requests not sent) */
    double output_tps;          /* output tokens/s */
    double ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, tpot_p99_ms;
    double goodput_rps;         /* good requests/s; NaN without an SLO */
};

/* Fills *out from the n ≥ 1 rounds of one load point (benchmark/v1, as read
 * or as a run wrote them): each figure is the median across the rounds
 * (of an even count the mean of the middle two; NaN values left out),
 * counts are summed, target and point are the first round's sweep target
 * and case id (else its engine and ""), and load its concurrency or request
 * rate. The labels borrow from rounds[0]. */
void results_row_of(const struct benchmark *const *rounds, size_t n, struct results_row *out);

/* How to print the table. */
struct results_opts {
    const char *title;          /* NULL: "Results per load point (medians across rounds)" */
    const char *slo;            /* the SLO as given ("ttft:100,tpot:20"), NULL = none set */
    const struct cost *cost;    /* NULL or unpriced: no cost column */
    enum rformat format;
    /* The requests verdict: NULL derives it from the rows (FAIL when a
     * request failed, INCOMPLETE when a round was cut, else PASS); else the
     * caller's (a matrix's status) with its first reason, if any. */
    const char *status;
    const char *reason;
};

/* Prints the n rows as one table (columns: target, load point, load,
 * rounds, completed, failed, out tok/s, TTFT p50/p99 ms, TPOT p50/p99 ms,
 * goodput req/s, SLO attainment, and "USD / M out tok" when priced) in
 * o->format, then the verdict lines
 *   requests: PASS (every request of every round completed)
 *   requests: FAIL|INCOMPLETE (N failed requests in R rounds[; reason]), or
 *   requests: INCOMPLETE (reason; no request failed)
 *   SLO (slo): MET at every load point (...) | MISSED at K of M load points (...)
 *   SLO: not set (...)
 * SLO attainment = good / (completed + failed) over the point's rounds.
 * Cost = cost_per_mtok(o->cost, output_tps). Returns 0, or -1 with err set
 * when memory runs out or writing fails. */
int report_results(FILE *out, const struct results_row *rows, size_t n, const struct results_opts *o, char *err,
                   size_t errlen);

#endif
