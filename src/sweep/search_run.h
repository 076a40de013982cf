/* search_run.h — runs an SLO search (`anvil sweep --search`): per target,
 * probe after probe as the rule of sweep/search.h asks, each probe one or
 * more ordinary rounds of the sweep (artifact, journal, log; resumable),
 * and the answer in DIR/search.json (artifact/search.h). */
#ifndef ANVIL_SWEEP_SEARCH_RUN_H
#define ANVIL_SWEEP_SEARCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "artifact/search.h"
#include "sweep/plan.h"

/* Runs the search of plan->search (on) for every target of plan, one
 * target after the other. Each target's first job is its template (its
 * probe at lo, round 1); a probe at load L round R is the template with
 * the load, --case-id (the template's shape with "-cL"/"-rL") and --round
 * replaced, its artifact DIR/rounds/<target>/<case>/round-R.json. A job
 * the plan already has (same target, case and round: a resumed search) is
 * taken as it is, and its round is not run again when its artifact is
 * complete. New jobs are appended to plan and the plan saved to
 * DIR/sweep-plan.json before they run. Rounds run as sweep_execute_launched
 * runs them (anvil_bin, launcher, lock_fd). Each probe's verdict is printed
 * on out as it is decided, and DIR/search.json rewritten after each probe
 * (so a cut search leaves what it found). The document goes to *doc
 * (release with search_doc_free). Sets *interrupted when a signal stopped
 * it. Returns 0 (a probe whose round did not complete stops that target's
 * search, "round failed"), or -1 with err set (a round could not start or
 * rejected its flags, a file could not be written, memory ran out). */
int sweep_search_run(struct sweep_plan *plan, const char *anvil_bin, const char *launcher, const char *dir,
                     int lock_fd, FILE *out, bool *interrupted, struct search_doc *doc, char *err,
                     size_t errlen);

#endif
