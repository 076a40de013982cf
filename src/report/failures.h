/* failures.h — what failed, in the terminal: failed requests grouped by
 * HTTP status and failure category, each group with the server's first
 * message, so "every request got 401" is one readable line. */
#ifndef ANVIL_REPORT_FAILURES_H
#define ANVIL_REPORT_FAILURES_H

#include <stdio.h>

#include "stats/record.h"

/* Prints one line per (HTTP status, category) among the failed, measured
 * (not warm-up, not cut) records it reads (one pass): count, status, category
 * and the first message (cut to one line of about 160 characters), in order
 * of first appearance; nothing when none failed. At most 16 groups (the
 * rest summed on a last line). Messages are already scrubbed of secrets by
 * the driver. */
void report_failures(FILE *out, struct rec_iter *it);

#endif
