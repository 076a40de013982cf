/* timeline.h — a run's server and hardware readings over time, kept small
 * for the artifact and the report's charts: at most OBS_TIMELINE_MAX points
 * per run (every k-th usable reading, the last always kept), each at its
 * reading's midpoint on CLOCK_MONOTONIC (the clock of the requests' start
 * stamps, so the charts share the client's time axis). Gauges are the
 * values read; counters stay cumulative (a rate is the change between two
 * points over their time apart, exact whatever the thinning). */
#ifndef ANVIL_OBSERVE_TIMELINE_H
#define ANVIL_OBSERVE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "observe/hardware.h"
#include "observe/server.h"

#define OBS_TIMELINE_MAX 512        /* points kept per run */
#define OBS_TIMELINE_COLS 96        /* columns: the server's 6, the host's 2 + 5 per GPU (16) */

/* One quantity at every point (NaN = not reported at that reading). */
struct obs_column {
    char name[32];              /* the artifact's key: "running_requests", "util_pct", ... */
    int device;                 /* the GPU's index in the series' device list; -1 = server or host */
    double *v;                  /* n values; owned */
};

struct obs_timeline {
    size_t n;                   /* points */
    size_t readings;            /* usable readings they were taken from */
    size_t stride;              /* every stride-th usable reading was kept (and the last) */
    int64_t *t_ns;              /* n midpoints, CLOCK_MONOTONIC ns; owned */
    int n_cols;
    struct obs_column col[OBS_TIMELINE_COLS];
};

/* The server's readings that succeeded as a timeline: gauges
 * running_requests, waiting_requests, kv_cache_usage (0..1) and counters
 * generation_tokens, prompt_tokens, requests (cumulative, as the server
 * reports them); a column only when some reading has it. Returns 0 (n 0
 * when no reading succeeded), or -1 when memory runs out (*out then empty). */
int srv_timeline_of(const struct srv_series *s, struct obs_timeline *out);

/* The telemetry readings as a timeline: the host's cpu_util_pct (the
 * change of /proc/stat's jiffies since the previous point, NaN at the
 * first) and mem_used_mb (MiB), and per GPU (device = its index in
 * s->info) util_pct, power_w, temp_c, sm_mhz and mem_used_mb (MiB); a
 * column only when some reading has it. A reading counts when its GPUs
 * were read or it has the host. Returns 0, or -1 when memory runs out. */
int hw_timeline_of(const struct hw_series *s, struct obs_timeline *out);

/* Adds a column (name copied, truncated to fit) of n NaN values. Returns
 * it, or NULL when the columns are full or memory runs out. */
struct obs_column *obs_timeline_add(struct obs_timeline *t, const char *name, int device);

/* Frees what t owns and empties it. */
void obs_timeline_free(struct obs_timeline *t);

#endif
