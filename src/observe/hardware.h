/* hardware.h — a run's GPU and host readings and what they say over its
 * measurement window: per-device summaries, seed 004's hardware_run_summary,
 * seed 002's gpu block, and the energy the GPUs drew in exactly the window
 * (docs/METHODOLOGY.md, "Hardware telemetry and energy"). The series lives
 * on the measuring loop's thread; hw_summarize is a pure function of it. */
#ifndef ANVIL_OBSERVE_HARDWARE_H
#define ANVIL_OBSERVE_HARDWARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "observe/gpu.h"
#include "observe/window.h"

/* One telemetry reading: every GPU and the host at about one instant. */
struct hw_reading {
    int64_t t_due;              /* the instant it stands for (CLOCK_MONOTONIC ns) */
    int64_t t_sent, t_done;     /* the reads began / ended */
    int phase;                  /* enum obs_phase */
    bool ok;                    /* the GPUs were read */
    char error[200];            /* why not */
    bool has_host;
    struct host_sample host;
    int n_gpus;
    struct gpu_sample gpu[];    /* n_gpus */
};

/* A zeroed reading with room for n_gpus devices (every one gpu_sample_none),
 * or NULL when memory runs out. Free with free(). */
struct hw_reading *hw_reading_new(int n_gpus);

/* The readings of one run and what produced them. */
struct hw_series {
    struct hw_reading **r;      /* owned, in the order collected */
    size_t n, cap;
    int n_gpus;
    struct gpu_info info[GPU_MAX];
};

/* Appends r (the series owns it now). Returns 0, or -1 when memory runs
 * out (r is freed then). */
int hw_series_add(struct hw_series *s, struct hw_reading *r);

void hw_series_free(struct hw_series *s);

struct hw_device_summary {
    struct gpu_info info;
    int samples;                /* readings of this device inside the window */
    struct obs_gauge util_pct, mem_util_pct, mem_used_mib, power_w, temp_c, sm_mhz, mem_mhz;
    struct obs_gauge pcie_rx_mib_s, pcie_tx_mib_s;
    double mem_total_mib, power_limit_w;    /* the newest reading's */
    double thermal_share;       /* samples with a thermal slowdown / samples with throttle data */
    double power_cap_share;     /* ... with the power cap or brake */
    double slowdown_share;      /* ... with any reason that slows a busy GPU */
    double energy_j;            /* over exactly the window */
    const char *energy_source;  /* "energy_counter", "integrated_power", NULL = none */
};

/* Seed 004's hardware_run_summary, same names and units (MB = MiB). */
struct hw_run_summary {
    int samples;
    double duration_seconds;
    int gpu_count;
    double cpu_util_avg_pct, cpu_temp_max_c;
    double gpu_util_avg_pct, gpu_util_max_pct, mem_util_avg_pct, mem_util_max_pct;
    double temp_avg_c, temp_max_c;
    double power_total_avg_w, power_total_max_w, power_limit_total_w;
    double vram_used_avg_mb, vram_used_max_mb, vram_total_mb, vram_used_avg_pct, vram_used_max_pct;
    double pcie_rx_avg_mb_s, pcie_rx_max_mb_s, pcie_tx_avg_mb_s, pcie_tx_max_mb_s;
};

struct hw_summary {
    bool available;             /* some reading of the GPUs lies in the window */
    char reason[300];           /* why not */
    int readings_ok, readings_failed;
    char last_error[200];
    double max_read_ms, max_late_ms;
    double window_s;
    int n_gpus;
    struct hw_device_summary dev[GPU_MAX];
    bool host;                  /* host figures present */
    struct obs_gauge cpu_util_pct, host_mem_used_mib, cpu_temp_c;
    double host_mem_total_mib;
    struct hw_run_summary run;
    /* seed 002's gpu block */
    double median_sm_mhz, max_temp_c, thermal_share;
    /* energy over the window, all GPUs */
    double energy_j;
    const char *energy_source;  /* "energy_counter", "integrated_power", "mixed", NULL */
    double output_tokens, output_tokens_per_joule, joules_per_output_token;
};

/* What the client measured over the window. */
struct hw_client {
    int64_t window_start, window_end;   /* CLOCK_MONOTONIC ns */
    double output_tokens;               /* NaN unknown */
};

/* Computes *out over c's window. Energy: each device's counter at the
 * window's exact boundaries, interpolated between the readings around each
 * (a reading after the window counts only its share inside); where a device
 * has no counter (or it went backwards), its power integrated over the
 * window (trapezoids between readings, interpolated at the boundaries,
 * held constant past the first and last). Returns 0, or -1 when memory
 * runs out. */
int hw_summarize(const struct hw_series *s, const struct hw_client *c, struct hw_summary *out);

#endif
