/* observe.h — the terminal's short server and hardware section, printed
 * after the run's table when the server's /metrics or the GPUs said
 * anything (observe/observe.h). */
#ifndef ANVIL_REPORT_OBSERVE_H
#define ANVIL_REPORT_OBSERVE_H

#include <stdio.h>

#include "observe/observe.h"

/* Prints to out what r has: server figures when its metrics are
 * available, hardware figures when telemetry is, a line of reason when an
 * enabled source gave nothing, and nothing at all when both are off. */
void report_observe(FILE *out, const struct observe_report *r);

#endif
