/* table.h — the terminal summary of one run, laid out like vLLM's result block. */
#ifndef ANVIL_REPORT_TABLE_H
#define ANVIL_REPORT_TABLE_H

#include <stdio.h>

#include "stats/summary.h"

/* Prints the summary of a run to out: requests, duration, throughputs and
 * mean/median/p99 of TTFT, TPOT, ITL and E2E latency (ms), followed by the
 * TTFT decomposition and any warnings. title names the run. */
void report_table(FILE *out, const char *title, const struct run_summary *s, int failed_warmups);

#endif
