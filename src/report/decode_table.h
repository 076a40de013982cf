/* decode_table.h — the one renderer of a sustained-decode matrix
 * (artifact/decode_matrix.h): `anvil show` of a decode.json and the end of
 * `anvil decode` print the same tables. */
#ifndef ANVIL_REPORT_DECODE_TABLE_H
#define ANVIL_REPORT_DECODE_TABLE_H

#include "artifact/decode_matrix.h"
#include "report/rtable.h"
#include "report/show.h"

/* Adds m's tables to doc: the run's facts (engine, model, server, when
 * written, window per cell, max_tokens), one row per cell (context,
 * concurrency, aggregate and per-request tok/s, TTFT and ITL p50/p99 in
 * ms, completed, errors, limits; USD per million output tokens with a
 * cost), the prefill entries when there are any, and a note on the limits.
 * path names the file in the first table's title; cost may be NULL. */
void decode_table(struct rdoc *doc, const char *path, const struct decode_matrix *m, const struct cost *cost);

#endif
