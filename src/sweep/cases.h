/* cases.h — the cases of a sweep's plan file (`anvil sweep --plan FILE`,
 * JSON or YAML): every key checked, run flags as keys, names unique. */
#ifndef ANVIL_SWEEP_CASES_H
#define ANVIL_SWEEP_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sweep/plan.h"

/* Whether s may name a directory: letters, digits, '.', '_' and '-', not
 * starting with '.' (case names and target labels). */
bool sweep_safe_name(const char *s);

/* Reads a plan file (JSON, else YAML) into a JSON tree (caller deletes).
 * NULL when it cannot be read or parsed (printed as "anvil sweep: --plan
 * FILE: why"). */
cJSON *sweep_read_plan_file(const char *path);

/* The cases of plan (read from file, for messages) into a new array *out
 * of *n (release with sweep_cases_free): input_len, output_len,
 * concurrency or request_rate, name, args, and any other key as an anvil
 * run flag (true = the bare flag, false/null = left out); defaults 128 → 64
 * tokens at concurrency 1. The plan's rounds and num_prompts, when given,
 * go to *rounds and *num_prompts. Case args point into plan, which must
 * outlive the cases. Returns 0, or -1 (printed, naming file and key). */
int sweep_cases_from_plan(const char *file, const cJSON *plan, long *rounds, long *num_prompts,
                          struct sweep_case **out, size_t *n);

/* Frees n cases of the array and the array. */
void sweep_cases_free(struct sweep_case *cases, size_t n);

#endif
