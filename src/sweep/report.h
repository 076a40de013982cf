/* report.h — what a sweep writes from its round artifacts: the matrix
 * (seed 003's shape, artifact/matrix.h) and, with SLOs, the load curve
 * (seed 002's shape). */
#ifndef ANVIL_SWEEP_REPORT_H
#define ANVIL_SWEEP_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define LOAD_CURVE_SCHEMA "anvil-serving.load-curve/v1"
#define LOAD_CURVE_QUANTILES 51     /* 0, 0.02, ..., 1 */

/* Reads the complete round artifacts of plan's jobs and writes DIR/matrix.json.
 * interrupted marks the status INCOMPLETE (every finished round is kept).
 * Copies the status into status (cap bytes). Returns 0, or -1 with a
 * message in err (no complete round, unreadable artifact, ...). */
int sweep_write_matrix(const cJSON *plan, const char *dir, bool interrupted, char *status,
                       size_t cap, char *err, size_t errlen);

/* Builds the load-curve document from plan's complete round artifacts:
 * per target (and workload shape, when a sweep has several) and load point
 * x (concurrency, or request rate for open-loop cases): median/min/max/n of
 * output_throughput, median and p99 of TTFT and TPOT, median and p99 ITL,
 * goodput_rps and request_throughput across repeats; `completed` per
 * repeat; ttft_quantiles_ms and tpot_quantiles_ms at 51 evenly spaced
 * quantiles of every request of every repeat (nearest rank; quantile 0 is
 * the minimum); `gpu` (seed 002's median_sm_mhz range, max_temp_c,
 * thermal_share) from the rounds' hardware blocks and each group's
 * kv_pool_tokens from their server_metrics, null when no round has them.
 * slo_ttft_ms / slo_tpot_ms may be NaN.
 * Returns a new document (caller deletes) or NULL with err set. */
cJSON *sweep_load_curve(const cJSON *plan, const char *profile, double slo_ttft_ms,
                        double slo_tpot_ms, char *err, size_t errlen);

#endif
