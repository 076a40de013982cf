/* outcome.h — the exit status of every command that measures (run, an MPI
 * run's ranks, merge, decode, sweep) from one rule, so the commands cannot
 * disagree on what a result is worth (README, "Exit status"):
 *   0  the result is complete, something was measured, and at most
 *      --max-failure-rate of the ended requests failed (sweep: the matrix
 *      is PASS);
 *   1  it is not: incomplete (a cut, a shard or cell missing: what was
 *      measured is still written), nothing measured, too many failures, or
 *      nothing could be measured or written;
 *   2  a usage error: refused before any request (a bad flag or input, a
 *      planned case that cannot fit the server's context). */
#ifndef ANVIL_RUN_OUTCOME_H
#define ANVIL_RUN_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>

#include "run/merge.h"
#include "run/run.h"

#define OUTCOME_EXIT_OK 0
#define OUTCOME_EXIT_NOT_MET 1
#define OUTCOME_EXIT_USAGE 2

/* What a command's result says, as the exit status reads it. */
struct outcome {
    bool usage;                 /* refused before any request */
    bool failed;                /* nothing could be measured or written */
    bool incomplete;            /* cut short or a part missing; what was measured is written */
    bool counted;               /* completed and failed count the measured requests (a summary) */
    long completed, failed_requests;
    double window_tokens;       /* duration mode: output tokens inside the window, which measure
                                   a window whose streams all outlasted it (NaN: not duration mode) */
    double max_failure_rate;    /* the largest share of ended requests that may fail (default 0.05) */
};

/* The exit status of o by the rule above, in this order: usage 2; failed
 * 1; counted with more than max_failure_rate of completed + failed_requests
 * failed 1; incomplete 1; counted with no completed request and no window
 * tokens 1; else 0. why (cap bytes; may be NULL) gets the reason of a 1
 * that the result does not say itself ("N of M requests failed (P%), more
 * than --max-failure-rate R allows", "no request completed: nothing was
 * measured"), else "". */
int outcome_exit_status(const struct outcome *o, char *why, size_t cap);

/* The outcome of a run (run_execute's result). */
struct outcome outcome_of_run(const struct run_result *r, double max_failure_rate);

/* The outcome of a merge of shards (run_merge): rc is run_merge's return. */
struct outcome outcome_of_merge(int rc, const struct merge_result *m, double max_failure_rate);

#endif
