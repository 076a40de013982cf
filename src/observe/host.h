/* host.h — the host's CPU and memory: /proc/stat's cpu line (jiffies, so
 * utilization is the change between two readings), /proc/meminfo, and the
 * hottest CPU temperature sensor under /sys/class/hwmon (drivers coretemp,
 * k10temp, zenpower, cpu_thermal, ...). Roots are parameters so tests can
 * point them at a made-up tree. */
#ifndef ANVIL_OBSERVE_HOST_H
#define ANVIL_OBSERVE_HOST_H

#include "observe/gpu.h"

struct host_paths {
    const char *proc;   /* "/proc" */
    const char *sys;    /* "/sys" */
};

/* The real roots. */
#define HOST_PATHS_DEFAULT ((struct host_paths){"/proc", "/sys"})

/* Reads one host sample (fields it cannot read are NaN). Cost: three small
 * file reads plus one per hwmon sensor. Returns 0, or -1 when /proc/stat
 * cannot be read (no field could be). */
int host_read(const struct host_paths *p, struct host_sample *out);

/* CPU utilization in % between two samples (a before b), NaN when either
 * lacks the jiffies or no time passed. */
double host_cpu_util(const struct host_sample *a, const struct host_sample *b);

#endif
