/* load_curve.h — the load-curve artifact, schema anvil-serving.load-curve/v1
 * (seed 002's shape; docs/ARTIFACTS.md): per target and load point x,
 * median/min/max across repeats of throughput and latency figures, plus
 * 51-point TTFT and TPOT quantile curves over every request. struct
 * load_curve holds every field; load_curve_point_of builds a point from
 * round artifacts, load_curve_to_json writes and load_curve_from_json reads
 * (checked). */
#ifndef ANVIL_ARTIFACT_LOAD_CURVE_H
#define ANVIL_ARTIFACT_LOAD_CURVE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "artifact/provenance.h"

#define LOAD_CURVE_SCHEMA "anvil-serving.load-curve/v1"
#define LOAD_CURVE_QUANTILES 51     /* 0, 0.02, ..., 1 */

/* The figures of a point summarized across repeats, in seed 002's order:
 * X(enum, key, unit), one line each; the enum, the names and the field
 * rows come from it. Sources: output_throughput metrics.output_throughput
 * (a duration round's window), the TTFT/TPOT/ITL figures metrics.*_p50/p99
 * (ITL per chunk), goodput_rps and request_throughput. */
#define LOAD_CURVE_METRICS(X) \
    X(LC_OUTPUT_THROUGHPUT, output_throughput, "tok/s") X(LC_MEDIAN_TTFT_MS, median_ttft_ms, "ms") \
    X(LC_P99_TTFT_MS, p99_ttft_ms, "ms") X(LC_MEDIAN_TPOT_MS, median_tpot_ms, "ms") \
    X(LC_P99_TPOT_MS, p99_tpot_ms, "ms") X(LC_P99_ITL_MS, p99_itl_ms, "ms") \
    X(LC_MEDIAN_ITL_MS, median_itl_ms, "ms") X(LC_GOODPUT_RPS, goodput_rps, "req/s") \
    X(LC_REQUEST_THROUGHPUT, request_throughput, "req/s")
#define LOAD_CURVE_METRIC_ENUM(e, key, unit) e,
enum load_curve_metric { LOAD_CURVE_METRICS(LOAD_CURVE_METRIC_ENUM) LC_N_METRICS };
extern const char *const load_curve_metric_names[LC_N_METRICS];     /* "output_throughput", ... */

/* Median, min and max across the repeats that have the figure, and how
 * many do (n); NaN (null) when none does. */
struct load_curve_range {
    double median, min, max;
    long n;
};

/* Seed 002's GPU telemetry of a point; null (present false) until anvil
 * samples GPUs. */
struct load_curve_gpu {
    bool present;
    struct load_curve_range median_sm_mhz;
    double max_temp_c, thermal_share;   /* °C; share of samples thermally throttled */
};

struct load_curve_point {
    double x;                   /* concurrency, or request rate (requests/s) for open-loop cases */
    struct load_curve_range metric[LC_N_METRICS];   /* by enum load_curve_metric */
    long *completed;            /* completed requests per repeat */
    size_t n_completed;
    struct load_curve_gpu gpu;
    double ttft_quantiles_ms[LOAD_CURVE_QUANTILES];     /* NaN = null (no request) */
    double tpot_quantiles_ms[LOAD_CURVE_QUANTILES];
};

/* One curve: a target (or target/shape/load kind) and its points. */
struct load_curve_target {
    char *name;                 /* its key in `load` */
    double kv_pool_tokens;      /* the server's KV pool, tokens; NaN = null (not read) */
    struct load_curve_point *points;
    size_t n_points;
};

struct load_curve {
    char *schema;               /* LOAD_CURVE_SCHEMA; NULL when absent (seed 002) */
    char *profile;
    double slo_ttft_ms, slo_tpot_ms;    /* NaN = null */
    cJSON *environment;         /* kept as found; NULL = null (anvil records none) */
    double quantiles[LOAD_CURVE_QUANTILES];
    struct load_curve_target *load;
    size_t n_load;
    struct provenance provenance;
};

/* The point at x of n ≥ 1 round artifacts of one curve: each figure's
 * median/min/max/n over the rounds that have it, completed per round, and
 * the 51 nearest-rank quantiles (quantile 0 is the minimum) of every
 * request's TTFT and TPOT over all rounds; gpu absent. Returns 0, or -1
 * when memory runs out (*out then empty; release with
 * load_curve_point_free). */
int load_curve_point_of(const struct benchmark *const *rounds, size_t n, double x,
                        struct load_curve_point *out);

/* Writes the document: schema, profile, slo {ttft_ms, tpot_ms},
 * environment, quantiles, load {name: {kv_pool_tokens, points}},
 * provenance. Returns a new tree (caller deletes) or NULL. */
cJSON *load_curve_to_json(const struct load_curve *c);

/* Reads a load-curve document: schema (when present) LOAD_CURVE_SCHEMA;
 * profile, slo, quantiles (51 numbers) and load required, each point with
 * x, every figure {median, min, max, n}, completed, gpu (null or seed 002's
 * telemetry) and both quantile curves (51 numbers or nulls). Returns 0, or
 * -1 with "NAME: key.path: what" in err (*out then empty). */
int load_curve_from_json(const cJSON *j, const char *name, struct load_curve *out, char *err,
                         size_t errlen);

/* The rows of the document, a target (one entry of `load`) and a point
 * (load_curve_to_json and load_curve_from_json walk them). */
struct field_table;
extern const struct field_table load_curve_table, load_curve_target_table, load_curve_point_table;

/* Frees what *p owns and empties it. */
void load_curve_point_free(struct load_curve_point *p);

/* Frees what *c owns and empties it. */
void load_curve_free(struct load_curve *c);

#endif
