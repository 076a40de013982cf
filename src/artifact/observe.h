/* observe.h — the benchmark artifact's blocks from what the server and the
 * hardware said (observe/observe.h): `server_metrics`, `hardware`,
 * `hardware_run_summary` (seed 004's names) and the energy figures in
 * `metrics`. Fields are described in docs/ARTIFACTS.md; undefined numbers
 * are null, never 0. */
#ifndef ANVIL_ARTIFACT_OBSERVE_H
#define ANVIL_ARTIFACT_OBSERVE_H

#include <cjson/cJSON.h>

#include "artifact/benchmark.h"
#include "observe/observe.h"

/* The blocks' rows (docs/ARTIFACTS.md): server_metrics, a gauge and a
 * histogram under it, hardware, hardware_run_summary, the head of a
 * `series` and the energy figures artifact_add_observe adds to `metrics`. The writers below fill a struct shaped like each and walk
 * these; the round-trip test walks them too. */
struct field_table;
extern const struct field_table observe_server_metrics_table, observe_gauge_table, observe_hist_table,
    observe_hardware_table, observe_run_summary_table, observe_series_table, observe_energy_metrics_table;

/* The server_metrics block. Caller deletes; NULL when memory runs out. */
cJSON *artifact_server_metrics(const struct observe_report *r);

/* The hardware block (devices, host, seed 002's gpu block, energy). Caller
 * deletes; NULL when memory runs out. */
cJSON *artifact_hardware(const struct observe_report *r);

/* Seed 004's hardware_run_summary over the window, or a JSON null when
 * there is no GPU reading in it. Caller deletes. */
cJSON *artifact_hardware_run_summary(const struct observe_report *r);

/* The figures of a round's observation blocks an `anvil sweep` load curve
 * uses (NaN / false when the round has none). */
struct observe_figures {
    double kv_pool_tokens;      /* server_metrics.derived.kv_pool_tokens */
    bool gpu;                   /* hardware.gpu has a figure */
    double median_sm_mhz, max_temp_c, thermal_share;    /* hardware.gpu (seed 002) */
    double gpu_samples;         /* hardware_run_summary.samples × gpu_count: thermal_share's weight */
};

/* Reads b's server_metrics and hardware blocks (struct benchmark keeps them
 * as found) into *out. */
void observe_figures_of(const struct benchmark *b, struct observe_figures *out);

/* The `series` object of a server_metrics or hardware block (hardware:
 * the hardware block's, whose devices are named by gpu_index[d], the
 * index of series device d; NULL = d): points, readings, stride,
 * max_points, t0_monotonic_ns (the first point's midpoint) and t_ms (each
 * point's offset from it, ms rounded to µs); then the columns — the
 * server's at the top, the hardware's host columns under "host" and its
 * GPUs' under "devices": [{"index", columns...}]. NaN values are null.
 * Returns a new object (caller deletes), or NULL when t has no point or
 * memory runs out. docs/ARTIFACTS.md describes every field. */
cJSON *artifact_series(const struct obs_timeline *t, bool hardware, const int *gpu_index);

/* Reads the `series` of block (a server_metrics or hardware block as the
 * benchmark keeps it; hardware says which) into *out: absent, null or a
 * block without one reads as no point (0). t_ms must hold increasing
 * numbers (each sample after the one before), every
 * column an array of as many numbers or nulls, and at most
 * OBS_TIMELINE_COLS columns. A hardware column's device is its device's
 * "index"; a server or host column's -1. Returns 0, or -1 with
 * "name: key.path: what" in err (*out then empty). Release with
 * obs_timeline_free. */
int artifact_series_read(const cJSON *block, bool hardware, const char *name, struct obs_timeline *out,
                         char *err, size_t errlen);

/* Adds server_metrics, hardware and hardware_run_summary to the artifact
 * root art, and energy_j, output_tokens_per_joule and
 * joules_per_output_token to its metrics object. Returns 0, or -1 when
 * memory runs out. */
int artifact_add_observe(cJSON *art, const struct observe_report *r);

#endif
