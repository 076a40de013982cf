/* nvml.c — NVML through dlopen (see nvml.h). The declarations below are
 * NVML's own (nvml.h of the CUDA toolkit, API version 2+): return codes are
 * an int enum (0 = success), devices an opaque pointer, units mW, mJ, MHz,
 * °C, KB/s. */
#include "observe/nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

#define NVML_SUCCESS 0
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1
#define NVML_NAME_LEN 96        /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_UUID_LEN 96        /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

struct nvml_api {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned int *);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned int *);
};

struct nvml {
    void *lib;
    struct nvml_api api;
    int n;
    nvmlDevice_t dev[GPU_MAX];
    struct gpu_info info[GPU_MAX];
};

/* dlsym's object pointer stored as a function pointer (POSIX guarantees
 * the two have the same representation); returns whether it was found. */
static bool load(void *lib, const char *symbol, void *field, size_t size)
{
    void *p = dlsym(lib, symbol);
    if (size == sizeof p)
        memcpy(field, &p, sizeof p);
    return p != NULL;
}

#define LOAD(field, symbol) load(n->lib, symbol, &n->api.field, sizeof n->api.field)

static void load_api(struct nvml *n)
{
    LOAD(init, "nvmlInit_v2");
    LOAD(shutdown, "nvmlShutdown");
    LOAD(error_string, "nvmlErrorString");
    LOAD(count, "nvmlDeviceGetCount_v2");
    LOAD(handle, "nvmlDeviceGetHandleByIndex_v2");
    LOAD(name, "nvmlDeviceGetName");
    LOAD(uuid, "nvmlDeviceGetUUID");
    LOAD(util, "nvmlDeviceGetUtilizationRates");
    LOAD(memory, "nvmlDeviceGetMemoryInfo");
    LOAD(power, "nvmlDeviceGetPowerUsage");
    LOAD(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    LOAD(energy, "nvmlDeviceGetTotalEnergyConsumption");
    LOAD(temperature, "nvmlDeviceGetTemperature");
    LOAD(clock, "nvmlDeviceGetClockInfo");
    /* renamed "clock event reasons" in newer drivers, the old name kept */
    if (!LOAD(throttle, "nvmlDeviceGetCurrentClocksEventReasons"))
        LOAD(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
    LOAD(pcie, "nvmlDeviceGetPcieThroughput");
}

static const char *nvml_error(const struct nvml *n, nvmlReturn_t rc)
{
    const char *s = n->api.error_string ? n->api.error_string(rc) : NULL;
    return s ? s : "error";
}

struct nvml *nvml_open(const char *path, char *err, size_t errlen)
{
    if (!path) {
        const char *env = getenv("ANVIL_NVML_LIBRARY");
        path = env && *env ? env : NVML_DEFAULT_LIBRARY;
    }
    struct nvml *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!(n->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        const char *why = dlerror();
        snprintf(err, errlen, "%s", why ? why : path);
        free(n);
        return NULL;
    }
    load_api(n);
    nvmlReturn_t rc;
    unsigned int count = 0;
    if (!n->api.init || !n->api.shutdown || !n->api.count || !n->api.handle)
        snprintf(err, errlen, "%s lacks nvmlInit_v2/nvmlDeviceGetCount_v2", path);
    else if ((rc = n->api.init()) != NVML_SUCCESS)
        snprintf(err, errlen, "nvmlInit_v2: %s", nvml_error(n, rc));
    else if ((rc = n->api.count(&count)) != NVML_SUCCESS || count == 0) {
        snprintf(err, errlen, "%s", rc != NVML_SUCCESS ? nvml_error(n, rc) : "NVML found no GPU");
        n->api.shutdown();
    } else {
        for (unsigned int i = 0; i < count && n->n < GPU_MAX; i++) {
            if (n->api.handle(i, &n->dev[n->n]) != NVML_SUCCESS)
                continue;
            struct gpu_info *g = &n->info[n->n];
            g->index = (int)i;
            if (!n->api.name || n->api.name(n->dev[n->n], g->name, sizeof g->name) != NVML_SUCCESS)
                g->name[0] = '\0';
            if (!n->api.uuid || n->api.uuid(n->dev[n->n], g->uuid, sizeof g->uuid) != NVML_SUCCESS)
                g->uuid[0] = '\0';
            g->name[sizeof g->name - 1] = g->uuid[sizeof g->uuid - 1] = '\0';
            n->n++;
        }
        if (n->n > 0)
            return n;
        snprintf(err, errlen, "no GPU handle could be had");
        n->api.shutdown();
    }
    dlclose(n->lib);
    free(n);
    return NULL;
}

int nvml_count(const struct nvml *n)
{
    return n->n;
}

const struct gpu_info *nvml_info(const struct nvml *n, int i)
{
    return i >= 0 && i < n->n ? &n->info[i] : NULL;
}

/* An unsigned reading × scale, or NaN when the call is missing or fails. */
static double u(nvmlReturn_t (*f)(nvmlDevice_t, unsigned int *), nvmlDevice_t d, double scale)
{
    unsigned int v;
    return f && f(d, &v) == NVML_SUCCESS ? v * scale : NAN;
}

static double u_arg(nvmlReturn_t (*f)(nvmlDevice_t, int, unsigned int *), nvmlDevice_t d, int arg, double scale)
{
    unsigned int v;
    return f && f(d, arg, &v) == NVML_SUCCESS ? v * scale : NAN;
}

int nvml_read(struct nvml *n, struct gpu_sample *out)
{
    const struct nvml_api *a = &n->api;
    for (int i = 0; i < n->n; i++) {
        nvmlDevice_t d = n->dev[i];
        struct gpu_sample *s = &out[i];
        *s = gpu_sample_none();
        nvmlUtilization_t ut;
        if (a->util && a->util(d, &ut) == NVML_SUCCESS) {
            s->util_pct = ut.gpu;
            s->mem_util_pct = ut.memory;
        }
        nvmlMemory_t mem;
        if (a->memory && a->memory(d, &mem) == NVML_SUCCESS) {
            s->mem_used_mib = (double)mem.used / 1048576.0;
            s->mem_total_mib = (double)mem.total / 1048576.0;
        }
        s->power_w = u(a->power, d, 1e-3);
        s->power_limit_w = u(a->power_limit, d, 1e-3);
        unsigned long long e;
        if (a->energy && a->energy(d, &e) == NVML_SUCCESS)
            s->energy_mj = (double)e;
        s->temp_c = u_arg(a->temperature, d, NVML_TEMPERATURE_GPU, 1);
        s->sm_mhz = u_arg(a->clock, d, NVML_CLOCK_SM, 1);
        s->mem_mhz = u_arg(a->clock, d, NVML_CLOCK_MEM, 1);
        unsigned long long reasons;
        if (a->throttle && a->throttle(d, &reasons) == NVML_SUCCESS) {
            s->has_throttle = true;
            s->throttle = reasons;
        }
        s->pcie_rx_mib_s = u_arg(a->pcie, d, NVML_PCIE_UTIL_RX_BYTES, 1.0 / 1024);
        s->pcie_tx_mib_s = u_arg(a->pcie, d, NVML_PCIE_UTIL_TX_BYTES, 1.0 / 1024);
    }
    return n->n;
}

void nvml_close(struct nvml *n)
{
    if (!n)
        return;
    n->api.shutdown();
    dlclose(n->lib);
    free(n);
}
