/* table.h — the decode matrix's terminal table: context × concurrency. */
#ifndef ANVIL_DECODE_TABLE_H
#define ANVIL_DECODE_TABLE_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* Prints the table of a decode matrix doc (seed 004's shape) to out: one
 * row per metadata.context_lengths entry, one column per
 * metadata.concurrency_levels entry, each cell's aggregate tok/s,
 * capacity-limited cells marked "*", cells not run "-". */
void decode_print_table(FILE *out, const cJSON *doc);

#endif
