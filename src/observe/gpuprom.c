/* gpuprom.c — DCGM exporter series as GPU samples (see gpuprom.h). */
#include "observe/gpuprom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum field {
    F_UTIL, F_MEM_UTIL, F_FB_USED, F_FB_FREE, F_FB_RESERVED, F_POWER, F_POWER_LIMIT, F_ENERGY, F_TEMP,
    F_SM, F_MEM, F_PCIE_RX, F_PCIE_TX, F_THROTTLE, F_N
};

static const struct { const char *name; enum field f; } names[] = {
    {"DCGM_FI_DEV_GPU_UTIL", F_UTIL}, {"DCGM_FI_DEV_MEM_COPY_UTIL", F_MEM_UTIL},
    {"DCGM_FI_DEV_FB_USED", F_FB_USED}, {"DCGM_FI_DEV_FB_FREE", F_FB_FREE},
    {"DCGM_FI_DEV_FB_RESERVED", F_FB_RESERVED}, {"DCGM_FI_DEV_POWER_USAGE", F_POWER},
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", F_POWER_LIMIT}, {"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", F_POWER_LIMIT},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", F_ENERGY}, {"DCGM_FI_DEV_GPU_TEMP", F_TEMP},
    {"DCGM_FI_DEV_SM_CLOCK", F_SM}, {"DCGM_FI_DEV_MEM_CLOCK", F_MEM},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", F_PCIE_RX}, {"DCGM_FI_PROF_PCIE_TX_BYTES", F_PCIE_TX},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", F_THROTTLE}, {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", F_THROTTLE},
};

struct dev {
    char key[96];
    double v[F_N];
    struct gpu_info info;
};

static int by_index(const void *a, const void *b)
{
    const struct dev *x = a, *y = b;
    return (x->info.index > y->info.index) - (x->info.index < y->info.index);
}

int gpuprom_extract(const struct prom_snapshot *s, struct gpu_sample *out, struct gpu_info *info, int cap)
{
    struct dev *devs = calloc(GPU_MAX, sizeof *devs);
    if (!devs)
        return 0;
    int n = 0;
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *m = &s->samples[i];
        int f = -1;
        for (size_t k = 0; k < sizeof names / sizeof *names && f < 0; k++)
            if (!strcmp(m->name, names[k].name))
                f = (int)names[k].f;
        const char *gpu = prom_label(m, "gpu"), *uuid = prom_label(m, "UUID");
        const char *key = gpu ? gpu : uuid;
        if (f < 0 || !key)
            continue;
        int d = 0;
        while (d < n && strcmp(devs[d].key, key))
            d++;
        if (d == n) {
            if (n == GPU_MAX || n == cap)
                continue;
            snprintf(devs[d].key, sizeof devs[d].key, "%s", key);
            for (int k = 0; k < F_N; k++)
                devs[d].v[k] = NAN;
            char *e;
            long idx = gpu ? strtol(gpu, &e, 10) : n;
            devs[d].info.index = gpu && *e ? n : (int)idx;
            n++;
        }
        const char *model = prom_label(m, "modelName");
        if (model && !devs[d].info.name[0])
            snprintf(devs[d].info.name, sizeof devs[d].info.name, "%s", model);
        if (uuid && !devs[d].info.uuid[0])
            snprintf(devs[d].info.uuid, sizeof devs[d].info.uuid, "%s", uuid);
        devs[d].v[f] = m->value;
    }
    qsort(devs, (size_t)n, sizeof *devs, by_index);
    for (int d = 0; d < n; d++) {
        const double *v = devs[d].v;
        struct gpu_sample *g = &out[d];
        *g = gpu_sample_none();
        g->util_pct = v[F_UTIL];
        g->mem_util_pct = v[F_MEM_UTIL];
        g->mem_used_mib = v[F_FB_USED];
        g->mem_total_mib = v[F_FB_USED] + v[F_FB_FREE] + (isnan(v[F_FB_RESERVED]) ? 0 : v[F_FB_RESERVED]);
        g->power_w = v[F_POWER];
        g->power_limit_w = v[F_POWER_LIMIT];
        g->energy_mj = v[F_ENERGY];
        g->temp_c = v[F_TEMP];
        g->sm_mhz = v[F_SM];
        g->mem_mhz = v[F_MEM];
        g->pcie_rx_mib_s = v[F_PCIE_RX] / 1048576.0;
        g->pcie_tx_mib_s = v[F_PCIE_TX] / 1048576.0;
        if (v[F_THROTTLE] >= 0 && v[F_THROTTLE] < 18446744073709551616.0) {   /* NaN fails both */
            g->has_throttle = true;
            g->throttle = (uint64_t)v[F_THROTTLE];
        }
        info[d] = devs[d].info;
    }
    free(devs);
    return n;
}
