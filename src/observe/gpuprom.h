/* gpuprom.h — GPU samples from a Prometheus GPU exporter's scrape
 * (`--gpu-metrics-url`), under NVIDIA DCGM exporter's names
 * (etc/default-counters.csv): DCGM_FI_DEV_GPU_UTIL, _MEM_COPY_UTIL,
 * _FB_USED/_FB_FREE/_FB_RESERVED (MiB), _POWER_USAGE and _POWER_MGMT_LIMIT
 * (W), _TOTAL_ENERGY_CONSUMPTION (mJ), _GPU_TEMP, _SM_CLOCK, _MEM_CLOCK,
 * DCGM_FI_PROF_PCIE_RX_BYTES/_TX_BYTES (bytes/s), and the throttle bitmask
 * DCGM_FI_DEV_CLOCK_THROTTLE_REASONS (newer: _CLOCKS_EVENT_REASONS). Each
 * device is the set of samples with one `gpu` label (else one `UUID`);
 * `modelName` and `UUID` name it. */
#ifndef ANVIL_OBSERVE_GPUPROM_H
#define ANVIL_OBSERVE_GPUPROM_H

#include "observe/gpu.h"
#include "observe/prom.h"

/* Fills out/info with the devices of s (up to cap), ordered by index.
 * Returns how many (0: the scrape names no GPU). Cost O(samples × devices). */
int gpuprom_extract(const struct prom_snapshot *s, struct gpu_sample *out, struct gpu_info *info, int cap);

#endif
