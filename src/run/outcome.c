/* outcome.c — results → exit status (outcome.h). */
#include "run/outcome.h"

#include <math.h>
#include <stdio.h>

int outcome_exit_status(const struct outcome *o, char *why, size_t cap)
{
    if (why && cap)
        why[0] = '\0';
    if (o->usage)
        return OUTCOME_EXIT_USAGE;
    if (o->failed)
        return OUTCOME_EXIT_NOT_MET;
    long ended = o->completed + o->failed_requests;
    if (o->counted && ended && (double)o->failed_requests > o->max_failure_rate * (double)ended) {
        if (why && cap)
            snprintf(why, cap, "%ld of %ld requests failed (%.1f%%), more than --max-failure-rate %g allows",
                     o->failed_requests, ended, 100.0 * (double)o->failed_requests / (double)ended,
                     o->max_failure_rate);
        return OUTCOME_EXIT_NOT_MET;
    }
    if (o->incomplete)
        return OUTCOME_EXIT_NOT_MET;
    if (o->counted && o->completed == 0 && !(o->window_tokens > 0)) {
        if (why && cap)
            snprintf(why, cap, "no request completed: nothing was measured");
        return OUTCOME_EXIT_NOT_MET;
    }
    return OUTCOME_EXIT_OK;
}

struct outcome outcome_of_run(const struct run_result *r, double max_failure_rate)
{
    return (struct outcome){
        .usage = r->status == RUN_FAILED && r->refused, .failed = r->status == RUN_FAILED,
        .incomplete = r->status == RUN_INCOMPLETE, .counted = r->summarized, .completed = r->summary.completed,
        .failed_requests = r->summary.failed, .window_tokens = r->summary.window_tokens,
        .max_failure_rate = max_failure_rate,
    };
}

struct outcome outcome_of_merge(int rc, const struct merge_result *m, double max_failure_rate)
{
    return (struct outcome){
        .failed = rc != 0, .incomplete = m->incomplete, .counted = rc == 0 && m->summarized,
        .completed = m->summary.completed, .failed_requests = m->summary.failed,
        .window_tokens = m->summary.window_tokens, .max_failure_rate = max_failure_rate,
    };
}
