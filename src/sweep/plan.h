/* plan.h — a sweep's plan: cases × targets × rounds, flattened into round
 * jobs (each one `anvil run`), interleaved round by round so that drift over
 * time hits every case alike. Saved as JSON in the sweep's directory so a
 * cut sweep can be resumed. */
#ifndef ANVIL_SWEEP_PLAN_H
#define ANVIL_SWEEP_PLAN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define PLAN_SCHEMA "anvil-serving.sweep-plan/v1"

/* One load point of one workload shape. */
struct sweep_case {
    char id[96];            /* e.g. "short-128-64-c8", "rag-4k-128-r2" */
    long input_len, output_len;
    long concurrency;       /* 0 = not given (open loop without a cap) */
    double request_rate;    /* requests/s; INFINITY = closed loop */
    char **extra;           /* more `anvil run` flags (the array owned, NULL-terminated), or NULL */
    cJSON *extra_text;      /* owns strings of extra that are not in the plan file's tree */
};

struct sweep_target {
    char label[64];         /* "" = unlabelled: the engine anvil run detects names it */
    char base_url[512];
};

/* The case name for a shape and load point, after seed 003: "short" when
 * output ≤ input < 2048, "rag" when input ≥ 2048 (and ≥ output), "decode"
 * when output > input; lengths as 128, 4k, 1k (multiples of 1024 get "k");
 * then "-c<concurrency>" (closed loop) or "-r<rate>" (open loop). Writes
 * into out (cap bytes). */
void sweep_case_name(char *out, size_t cap, long input_len, long output_len, long concurrency,
                     double request_rate);

/* Builds the jobs document: {"schema", "rounds", "slo", "jobs": [{"target",
 * "base_url", "case_id", "round", "artifact", "args": [...]}]} with jobs in
 * the order round → case → target. args are the `anvil run` flags of the
 * job (without --out); artifact is its path below dir. base_args are flags
 * every run gets (NULL-terminated; may be NULL). Returns a new document (the
 * caller deletes) or NULL when memory runs out. */
cJSON *sweep_plan_build(const struct sweep_case *cases, size_t n_cases,
                        const struct sweep_target *targets, size_t n_targets, long rounds,
                        const char *dir, const char *const *base_args, const char *slo);

#endif
