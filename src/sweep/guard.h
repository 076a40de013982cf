/* guard.h — what keeps a sweep's files safe: no header value in the plan,
 * no earlier sweep replaced in place. */
#ifndef ANVIL_SWEEP_GUARD_H
#define ANVIL_SWEEP_GUARD_H

#include "sweep/plan.h"

/* Rewrites every --header NAME: VALUE (or --header=...) of plan's jobs into
 * --header-env NAME=ANVIL_SWEEP_HEADER_<k>, sets that environment variable
 * (the rounds inherit it) and says on stderr which variable a later
 * --resume needs. At most 16 distinct values. Returns 0, or -1 (printed). */
int sweep_hide_headers(struct sweep_plan *plan);

/* Moves an earlier sweep's files in dir (plan, matrix, load curve, rounds,
 * logs, calibration) to dir/replaced-<UTC time>/, never deleting them, and
 * says where. Returns 0, or -1 (printed). */
int sweep_set_aside(const char *dir);

#endif
