/* nvml_fake.c — a stand-in libnvidia-ml.so.1 for tests on machines without
 * a GPU (built by the Makefile as build/asan/fake/libnvidia-ml.so.1; anvil
 * loads it when $ANVIL_NVML_LIBRARY names it). Every value comes from the
 * script in $ANVIL_FAKE_NVML_SCRIPT, one setting per line:
 *
 *   devices N                 how many GPUs (default 1, at most 16)
 *   init_error CODE           nvmlInit_v2 fails with CODE (e.g. 9, driver not loaded)
 *   D KEY V[,V...]            device D (or * for every device): a value, or a list
 *                             the device's readings cycle through
 *
 * KEYs: name, uuid, util, mem_util (%), mem_used_mib, mem_total_mib,
 * power_w, power_limit_w, temp (°C), sm_mhz, mem_mhz, pcie_rx_kb, pcie_tx_kb
 * (KB/s), throttle (hex bitmask), energy (1: the total-energy counter is
 * supported, 0: NVML_ERROR_NOT_SUPPORTED). A device's reading number k
 * advances each time its utilization is read (the first call of a
 * reading); list values are taken at k mod their length. The energy
 * counter is power_w's first value × the time since nvmlInit_v2 (mJ), so a
 * window's energy is exactly power × its length. Lines starting with # are
 * comments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXD 16
#define MAXV 32

typedef int nvmlReturn_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

enum key { K_UTIL, K_MEM_UTIL, K_MEM_USED, K_MEM_TOTAL, K_POWER, K_LIMIT, K_TEMP, K_SM, K_MEM, K_RX, K_TX,
           K_THROTTLE, K_ENERGY, K_N };
static const char *const keys[K_N] = {"util", "mem_util", "mem_used_mib", "mem_total_mib", "power_w",
                                      "power_limit_w", "temp", "sm_mhz", "mem_mhz", "pcie_rx_kb",
                                      "pcie_tx_kb", "throttle", "energy"};

struct dev {
    char name[96], uuid[96];
    double v[K_N][MAXV];
    int n[K_N];
    long k;     /* reading number */
};

static struct dev devs[MAXD];
static int n_devs = 1, init_error;
static struct timespec t_init;

static void set(struct dev *d, int key, const char *list)
{
    d->n[key] = 0;
    for (const char *p = list; *p && d->n[key] < MAXV;) {
        char *e;
        double x = key == K_THROTTLE ? (double)strtoull(p, &e, 16) : strtod(p, &e);
        if (e == p)
            break;
        d->v[key][d->n[key]++] = x;
        p = *e == ',' ? e + 1 : e;
    }
}

static void defaults(void)
{
    for (int i = 0; i < MAXD; i++) {
        struct dev *d = &devs[i];
        snprintf(d->name, sizeof d->name, "Fake GPU");
        snprintf(d->uuid, sizeof d->uuid, "GPU-fake-%d", i);
        const double def[K_N] = {50, 10, 1024, 16384, 100, 300, 50, 1500, 5000, 1024, 1024, 0, 1};
        for (int k = 0; k < K_N; k++) {
            d->v[k][0] = def[k];
            d->n[k] = 1;
        }
    }
}

static void load_script(void)
{
    defaults();
    const char *path = getenv("ANVIL_FAKE_NVML_SCRIPT");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char a[64], b[64], c[900] = "";
        int got = sscanf(line, "%63s %63s %899[^\n]", a, b, c);
        if (got < 2 || a[0] == '#')
            continue;
        if (!strcmp(a, "devices")) {
            n_devs = atoi(b);
            n_devs = n_devs < 0 ? 0 : n_devs > MAXD ? MAXD : n_devs;
            continue;
        }
        if (!strcmp(a, "init_error")) {
            init_error = atoi(b);
            continue;
        }
        for (int i = 0; i < MAXD; i++) {
            if (strcmp(a, "*") && atoi(a) != i)
                continue;
            if (!strcmp(b, "name"))
                snprintf(devs[i].name, sizeof devs[i].name, "%.95s", c);
            else if (!strcmp(b, "uuid"))
                snprintf(devs[i].uuid, sizeof devs[i].uuid, "%.95s", c);
            for (int k = 0; k < K_N; k++)
                if (!strcmp(b, keys[k]))
                    set(&devs[i], k, c);
        }
    }
    fclose(f);
}

static struct dev *dev_of(void *h)
{
    return (struct dev *)h;
}

static double val(const struct dev *d, int key)
{
    long k = d->k > 0 ? d->k - 1 : 0;   /* the current reading's */
    return d->v[key][k % d->n[key]];
}

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h);
nvmlReturn_t nvmlDeviceGetName(void *h, char *out, unsigned int len);
nvmlReturn_t nvmlDeviceGetUUID(void *h, char *out, unsigned int len);
nvmlReturn_t nvmlDeviceGetUtilizationRates(void *h, nvmlUtilization_t *u);
nvmlReturn_t nvmlDeviceGetMemoryInfo(void *h, nvmlMemory_t *m);
nvmlReturn_t nvmlDeviceGetPowerUsage(void *h, unsigned int *mw);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned int *mw);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj);
nvmlReturn_t nvmlDeviceGetTemperature(void *h, int sensor, unsigned int *c);
nvmlReturn_t nvmlDeviceGetClockInfo(void *h, int type, unsigned int *mhz);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *r);
nvmlReturn_t nvmlDeviceGetPcieThroughput(void *h, int counter, unsigned int *kb);

nvmlReturn_t nvmlInit_v2(void)
{
    load_script();
    clock_gettime(CLOCK_MONOTONIC, &t_init);
    return init_error;
}

nvmlReturn_t nvmlShutdown(void) { return 0; }

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == 9 ? "Driver Not Loaded" : r == 3 ? "Not Supported" : r == 0 ? "Success" : "Unknown Error";
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
    *n = (unsigned int)n_devs;
    return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h)
{
    if (i >= (unsigned int)n_devs)
        return 2;   /* invalid argument */
    *h = &devs[i];
    return 0;
}

nvmlReturn_t nvmlDeviceGetName(void *h, char *out, unsigned int len)
{
    snprintf(out, len, "%s", dev_of(h)->name);
    return 0;
}

nvmlReturn_t nvmlDeviceGetUUID(void *h, char *out, unsigned int len)
{
    snprintf(out, len, "%s", dev_of(h)->uuid);
    return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(void *h, nvmlUtilization_t *u)
{
    struct dev *d = dev_of(h);
    d->k++;
    u->gpu = (unsigned int)val(d, K_UTIL);
    u->memory = (unsigned int)val(d, K_MEM_UTIL);
    return 0;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(void *h, nvmlMemory_t *m)
{
    const struct dev *d = dev_of(h);
    m->total = (unsigned long long)(val(d, K_MEM_TOTAL) * 1048576);
    m->used = (unsigned long long)(val(d, K_MEM_USED) * 1048576);
    m->free = m->total - m->used;
    return 0;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(void *h, unsigned int *mw)
{
    *mw = (unsigned int)(val(dev_of(h), K_POWER) * 1000);
    return 0;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned int *mw)
{
    *mw = (unsigned int)(val(dev_of(h), K_LIMIT) * 1000);
    return 0;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj)
{
    const struct dev *d = dev_of(h);
    if (!val(d, K_ENERGY))
        return 3;   /* NVML_ERROR_NOT_SUPPORTED */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double s = (double)(now.tv_sec - t_init.tv_sec) + (double)(now.tv_nsec - t_init.tv_nsec) / 1e9;
    *mj = 1000000ull + (unsigned long long)(d->v[K_POWER][0] * s * 1000);
    return 0;
}

nvmlReturn_t nvmlDeviceGetTemperature(void *h, int sensor, unsigned int *c)
{
    (void)sensor;
    *c = (unsigned int)val(dev_of(h), K_TEMP);
    return 0;
}

nvmlReturn_t nvmlDeviceGetClockInfo(void *h, int type, unsigned int *mhz)
{
    *mhz = (unsigned int)val(dev_of(h), type == 2 ? K_MEM : K_SM);
    return 0;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *r)
{
    *r = (unsigned long long)val(dev_of(h), K_THROTTLE);
    return 0;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(void *h, int counter, unsigned int *kb)
{
    *kb = (unsigned int)val(dev_of(h), counter == 1 ? K_RX : K_TX);
    return 0;
}
