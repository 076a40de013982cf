/* sweep_table.h — the table `anvil sweep` ends with: per target and load
 * point (case) the medians across rounds of throughput, TTFT p50/p99,
 * TPOT p50/p99 and goodput, the SLO attainment, and a verdict that keeps
 * apart the two ways a sweep can go wrong: requests failed, or SLOs missed. */
#ifndef ANVIL_REPORT_SWEEP_TABLE_H
#define ANVIL_REPORT_SWEEP_TABLE_H

#include <stdio.h>

#include "report/rtable.h"
#include "report/show.h"

/* Prints the results of the sweep in dir (its round artifacts under
 * dir/rounds, its matrix's status and reasons from dir/matrix.json) to out
 * as f through report_results (report/results.h; cost NULL or unpriced: no
 * cost column), then two verdict lines: "requests: PASS|FAIL|INCOMPLETE (...)" (the
 * matrix's status: a failed request or a cut round fails it) and "SLO (slo):
 * MET|MISSED (...)" — MISSED when a load point's attainment is below 100%,
 * or "SLO: not set" when slo is NULL. SLO attainment is good requests /
 * (completed + failed) over the point's rounds. Returns 0, or -1 with err set
 * when the rounds or the matrix cannot be read. */
int report_sweep_results(FILE *out, const char *dir, const char *slo, const struct cost *cost, enum rformat f,
                         char *err, size_t errlen);

#endif
