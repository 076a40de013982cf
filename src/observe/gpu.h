/* gpu.h — one GPU's readings, whatever reports them (NVML, nvidia-smi, a
 * Prometheus GPU exporter), in one set of units, and the host's. */
#ifndef ANVIL_OBSERVE_GPU_H
#define ANVIL_OBSERVE_GPU_H

#include <stdbool.h>
#include <stdint.h>

#define GPU_MAX 16      /* devices read per host */

/* What a device is; read once. */
struct gpu_info {
    int index;
    char name[96];      /* "NVIDIA H100 80GB HBM3", "" when unknown */
    char uuid[96];      /* "GPU-…", "" when unknown */
};

/* One device at one instant. NaN = not reported by this source or device. */
struct gpu_sample {
    double util_pct;        /* GPU (SM) utilization, % */
    double mem_util_pct;    /* memory-controller utilization, % */
    double mem_used_mib, mem_total_mib;
    double power_w, power_limit_w;  /* draw and the enforced limit, W */
    double energy_mj;       /* the total-energy counter since the driver loaded, mJ */
    double temp_c;          /* GPU core temperature, °C */
    double sm_mhz, mem_mhz; /* SM and memory clocks, MHz */
    double pcie_rx_mib_s, pcie_tx_mib_s;    /* PCIe throughput, MiB/s */
    bool has_throttle;
    uint64_t throttle;      /* clock-throttle (clock-event) reasons, NVML's bits */
};

/* NVML's clock-throttle reason bits (nvmlClocksThrottleReason*). */
#define GPU_THROTTLE_IDLE           0x1ull
#define GPU_THROTTLE_APP_CLOCKS     0x2ull
#define GPU_THROTTLE_SW_POWER_CAP   0x4ull
#define GPU_THROTTLE_HW_SLOWDOWN    0x8ull
#define GPU_THROTTLE_SYNC_BOOST     0x10ull
#define GPU_THROTTLE_SW_THERMAL     0x20ull
#define GPU_THROTTLE_HW_THERMAL     0x40ull
#define GPU_THROTTLE_HW_POWER_BRAKE 0x80ull
#define GPU_THROTTLE_DISPLAY_CLOCKS 0x100ull
/* Thermal: the software or hardware thermal slowdown. */
#define GPU_THROTTLE_THERMAL (GPU_THROTTLE_SW_THERMAL | GPU_THROTTLE_HW_THERMAL)
/* Power: the software power cap or the hardware power brake. */
#define GPU_THROTTLE_POWER (GPU_THROTTLE_SW_POWER_CAP | GPU_THROTTLE_HW_POWER_BRAKE)
/* Reasons that slow a busy GPU down (idle, application and display clocks do not count). */
#define GPU_THROTTLE_SLOWING (GPU_THROTTLE_POWER | GPU_THROTTLE_HW_SLOWDOWN | GPU_THROTTLE_SYNC_BOOST | \
                              GPU_THROTTLE_THERMAL)

/* A sample with every field NaN and no throttle reasons. */
struct gpu_sample gpu_sample_none(void);

/* The host at one instant. NaN = not readable. */
struct host_sample {
    double cpu_busy, cpu_total;     /* /proc/stat "cpu" jiffies: busy (all but idle and iowait), all */
    double mem_used_mib, mem_total_mib;   /* MemTotal − MemAvailable, MemTotal */
    double cpu_temp_c;              /* the hottest CPU sensor in /sys/class/hwmon, °C */
};

#endif
