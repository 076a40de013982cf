/* benchmark.h — the one-cell artifact, schema anvil-serving.benchmark/v1
 * (every field of seed 001 with the same meaning, plus anvil's additions
 * under new names; docs/ARTIFACTS.md). */
#ifndef ANVIL_ARTIFACT_BENCHMARK_H
#define ANVIL_ARTIFACT_BENCHMARK_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "openai/discover.h"
#include "stats/record.h"
#include "stats/summary.h"
#include "workload/calibrate.h"

#define BENCHMARK_SCHEMA "anvil-serving.benchmark/v1"
/* measurement_protocol, by load shape */
#define PROTOCOL_CLOSED "anvil-closed-loop/v1"
#define PROTOCOL_OPEN "anvil-open-loop/v1"
#define PROTOCOL_DURATION "anvil-duration/v1"

/* Where a run sits in a sweep (anvil sweep sets it); case_id NULL = none. */
struct sweep_place {
    const char *target;     /* the target's label */
    const char *case_id;    /* e.g. "short-128-64-c8" */
    long round;             /* 1-based */
};

/* What the run was: everything in the artifact that is not measured. */
struct bench_meta {
    const char *run_id, *started_at, *finished_at;  /* UTC ISO-8601 */
    const struct server_info *server;
    const char *engine_label;       /* overrides server->engine when set */
    const char *gpu_label;          /* free text, NULL when not given */
    const char *endpoint;           /* "chat" or "completions" */
    int concurrency, num_prompts, warmup;    /* concurrency 0 = no cap (open loop) */
    double request_rate, burstiness;        /* requests/s (INFINITY = closed loop); gamma shape */
    double achieved_rate;                   /* measured sends/s */
    struct slo slo;                         /* goodput bounds (NaN = unset) */
    long input_len, output_len;     /* planned tokens */
    bool ignore_eos;
    uint64_t seed;
    const char *calibration_method; /* "tokenize", "probe" or "none" */
    const struct calibration *calibration;  /* NULL when none */
    const char *calibration_source; /* "measured" or "cache" (--calibration-cache); NULL = neither */
    const char *calibration_cache, *calibration_cache_key;  /* the cache file and entry, or NULL */
    long shared_prefix_tokens;      /* tokens two measured prompts share at their start */
    const char *shared_prefix_method;   /* how that was measured, or why not; NULL: tokens not written */
    int prewarmed_connections;      /* connections opened before measuring */
    double client_cpu_user_s, client_cpu_sys_s; /* anvil's CPU time while requests ran */
    long stamps_kernel, stamps_clock;   /* how arrival times were taken (driver.h) */
    bool incomplete;                /* the run was cut short */
    const char *incomplete_reason;  /* NULL when complete */
    struct sweep_place sweep;
    const char *dataset;            /* "jsonl:FILE"/"sharegpt:FILE", NULL for synthetic */
    double input_range, output_range;   /* ratios */
    long shared_prefix_len;         /* tokens */
    double duration_s, warmup_s;    /* duration mode (0 = off) */
    double window_s;                /* the window's actual length (shorter when cut by a cap or signal) */
    bool cache_contaminated;        /* > 5% of prompt tokens cached though every prompt was unique */
};

/* Builds the artifact. Returns a new cJSON tree the caller deletes, or NULL
 * when memory runs out. */
cJSON *artifact_benchmark(const struct bench_meta *meta, const struct req_record *recs, int n,
                          const struct run_summary *s);

/* Adds k: v to o, with NaN or ±inf (undefined) written as null, never 0. */
void artifact_add_number(cJSON *o, const char *k, double v);

/* Adds one distribution to a metrics object under seed 001's names:
 * <base>_{mean,min,p25,p50,p75,p90,p95,p99,max}_ms when ms, else
 * <base>_<stat>; and <base>_samples. NaN values are written as null. */
void artifact_add_dist(cJSON *o, const char *base, bool ms, const struct dist *d);

/* One request_timings entry of a completed request (seed 001's fields plus
 * the TTFT decomposition and chunk counts). Caller deletes. */
cJSON *artifact_request_timing(const struct req_record *r);

/* One failures entry: request_index, category, http_status, phase, message,
 * elapsed_ms. Caller deletes. */
cJSON *artifact_failure(const struct req_record *r);

/* Checks, before a run, that an artifact can be written at path (creating
 * its parent directories). Returns 0, or -1 with why in err. */
int artifact_check_path(const char *path, char *err, size_t errlen);

/* Renders j pretty-printed with every number in the fewest digits (15 to 17
 * significant) that read back to the same double: cJSON 1.7.15's own printer
 * stops at 15 digits whenever they are within a relative DBL_EPSILON, which
 * can lose the last bit. Returns a malloc'd string, or NULL. */
char *artifact_print(const cJSON *j);

/* Writes j (pretty-printed by artifact_print) to path, creating the parent directory, through
 * a temporary file renamed into place so a reader never sees half a file —
 * unless path is a device, pipe or symlink, which is written in place.
 * Returns 0, or -1 with a message in err. */
int artifact_write_file(const char *path, const cJSON *j, char *err, size_t errlen);

#endif
