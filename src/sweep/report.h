/* report.h — what a sweep writes from its round artifacts: the matrix
 * (seed 003's shape, artifact/matrix.h) and, with SLOs, the load curve
 * (seed 002's shape, artifact/load_curve.h). Round artifacts are read
 * through the benchmark reader. */
#ifndef ANVIL_SWEEP_REPORT_H
#define ANVIL_SWEEP_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "artifact/load_curve.h"
#include "artifact/provenance.h"
#include "sweep/plan.h"

/* Reads the complete round artifacts of plan's jobs and writes DIR/matrix.json
 * with provenance prov (copied). A round that is missing, incomplete or not
 * a valid artifact is a status reason (with the reader's message when the
 * file exists). interrupted marks the status INCOMPLETE (every finished
 * round is kept). Copies the status into status (cap bytes). Returns 0, or
 * -1 with a message in err (no complete round, a round without a planned
 * prompt length, the file cannot be written, ...). */
int sweep_write_matrix(const struct sweep_plan *plan, const char *dir, bool interrupted,
                       const struct provenance *prov, char *status, size_t cap, char *err,
                       size_t errlen);

/* Builds the load curve of plan's complete round artifacts into *out: per
 * target (and workload shape, when a sweep has several; and load kind, when
 * it mixes concurrency and request-rate cases) and load point x
 * (concurrency, or request rate for open-loop cases) a point
 * (load_curve_point_of) over that point's rounds; slo_ttft_ms / slo_tpot_ms
 * may be NaN; profile names the sweep; provenance prov (copied). Returns 0,
 * or -1 with err set (no complete round, out of memory; *out then empty). */
int sweep_load_curve(const struct sweep_plan *plan, const char *profile, double slo_ttft_ms,
                     double slo_tpot_ms, const struct provenance *prov, struct load_curve *out,
                     char *err, size_t errlen);

#endif
