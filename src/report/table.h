/* table.h — the terminal summary of one run, laid out like vLLM's result block. */
#ifndef ANVIL_REPORT_TABLE_H
#define ANVIL_REPORT_TABLE_H

#include <stdio.h>

#include "report/show.h"
#include "stats/summary.h"

/* Prints the summary of a run to out: requests, duration, throughputs and
 * mean/median/p99 of TTFT, TPOT, ITL and E2E latency (ms), followed by the
 * TTFT decomposition and any warnings. title names the run. */
void report_table(FILE *out, const char *title, const struct run_summary *s, int failed_warmups);

/* Prints the cost section of a run's summary: the price per GPU-hour, the
 * GPUs and USD per million output tokens at output_tps tokens/s
 * (cost_per_mtok, the one formula show, compare, report and the sweep's
 * table use; "n/a" when output_tps is not > 0). Prints nothing when c is
 * NULL or unpriced. */
void report_cost(FILE *out, const struct cost *c, double output_tps);

#endif
