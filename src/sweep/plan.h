/* plan.h — a sweep's plan: cases × targets × rounds, flattened into round
 * jobs (each one `anvil run`), interleaved round by round so that drift over
 * time hits every case alike. Saved as JSON in the sweep's directory so a
 * cut sweep can be resumed. */
#ifndef ANVIL_SWEEP_PLAN_H
#define ANVIL_SWEEP_PLAN_H

#include <stdbool.h>
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

/* One round job: one `anvil run` writing one artifact. */
struct sweep_job {
    char *target;           /* the target's label; "" = unlabelled */
    char *base_url, *case_id;
    long round;             /* 1-based */
    char *artifact;         /* the round artifact's path, below the sweep's directory */
    char **args;            /* the `anvil run` flags (without --out) */
    size_t n_args;
};

/* An SLO search's settings (`anvil sweep --search`, sweep/search_run.h):
 * absent (on false) for a sweep of fixed load points. */
struct sweep_search {
    bool on;
    bool rate;              /* request rate (open loop), else concurrency */
    double lo, hi;          /* the range searched */
    double attainment;      /* the SLO attainment a probe must reach (ratio) */
    long repeats;           /* extra rounds an uncertain probe may get */
    double tolerance;       /* rates: stop when (fail − pass)/pass ≤ it */
    long max_probes;        /* probes per target at most */
};

/* The plan of a sweep (DIR/sweep-plan.json, schema PLAN_SCHEMA). Strings
 * and arrays are owned; release with sweep_plan_free. A search's plan
 * holds the jobs made so far: each target's first is its probe at lo,
 * round 1, the template of the rest. */
struct sweep_plan {
    long rounds;
    char *slo;              /* the --slo text ("ttft:MS,tpot:MS"); NULL = none */
    struct sweep_search search;
    struct sweep_job *jobs; /* in the order they run: round → case → target */
    size_t n_jobs;
};

/* Builds the plan of cases × targets × rounds into *out, jobs in the order
 * round → case → target. A job's args are its `anvil run` flags (without
 * --out): --base-url, --input-len, --output-len, --concurrency and/or
 * --request-rate, --goodput when slo is set, base_args (NULL-terminated;
 * may be NULL: flags every run gets), the case's extra flags, --case-id,
 * --round and --sweep-target for a labelled target; artifact is
 * DIR/rounds/<target or "target">/<case>/round-<r>.json. Returns 0, or -1
 * when memory runs out (*out then empty). */
int sweep_plan_build(const struct sweep_case *cases, size_t n_cases, const struct sweep_target *targets,
                     size_t n_targets, long rounds, const char *dir, const char *const *base_args,
                     const char *slo, struct sweep_plan *out);

/* The plan document: {"schema", "rounds", "slo", "search" (only for a
 * search: {"kind": "concurrency"|"request_rate", "lo", "hi", "attainment",
 * "repeats", "tolerance", "max_probes"}), "jobs": [{"target", "base_url",
 * "case_id", "round", "artifact", "args"}]}. Returns a new tree
 * (caller deletes) or NULL when memory runs out. */
cJSON *sweep_plan_to_json(const struct sweep_plan *p);

/* Reads a plan document into *out, checking every key: schema PLAN_SCHEMA;
 * rounds a whole number ≥ 1; slo null or SLOs as --slo takes them; search
 * absent or its keys (0 < lo ≤ hi, 0 < attainment ≤ 1; slo then set); jobs a
 * non-empty array of jobs with target a string, base_url, case_id and
 * artifact non-empty strings, round a whole number ≥ 1 and args an array
 * of strings. Returns 0, or -1 with "NAME: key.path: what" in err (one
 * line; *out then empty). */
int sweep_plan_from_json(const cJSON *j, const char *name, struct sweep_plan *out, char *err,
                         size_t errlen);

/* Reads the plan file at path (sweep_plan_from_json; messages name path).
 * Returns 0, or -1 with err set (cannot read, not JSON, invalid). */
int sweep_plan_read_file(const char *path, struct sweep_plan *out, char *err, size_t errlen);

/* Frees what *p owns and empties it. */
void sweep_plan_free(struct sweep_plan *p);

#endif
