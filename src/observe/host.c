/* host.c — host CPU, memory and CPU temperature (see host.h). */
#include "observe/host.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* hwmon drivers whose sensors are the CPU's. */
static const char *const cpu_drivers[] = {"coretemp", "k10temp", "zenpower", "cpu_thermal", "soc_thermal",
                                          "x86_pkg_temp", "cpu-thermal"};

static int read_small(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(out, 1, cap - 1, f);
    fclose(f);
    out[n] = '\0';
    return 0;
}

static void read_stat(const char *proc, struct host_sample *s)
{
    char path[512], text[1024];
    snprintf(path, sizeof path, "%s/stat", proc);
    if (read_small(path, text, sizeof text) != 0 || strncmp(text, "cpu ", 4) != 0)
        return;
    /* user nice system idle iowait irq softirq steal (guest and guest_nice are inside user and nice) */
    double v[8] = {0};
    char *p = text + 4, *e;
    int k = 0;
    for (; k < 8; k++, p = e) {
        v[k] = strtod(p, &e);
        if (e == p)
            break;
    }
    if (k < 4)
        return;
    double total = 0;
    for (int i = 0; i < k; i++)
        total += v[i];
    s->cpu_total = total;
    s->cpu_busy = total - v[3] - (k > 4 ? v[4] : 0);
}

static void read_meminfo(const char *proc, struct host_sample *s)
{
    char path[512], text[8192];
    snprintf(path, sizeof path, "%s/meminfo", proc);
    if (read_small(path, text, sizeof text) != 0)
        return;
    const char *t = strstr(text, "MemTotal:"), *a = strstr(text, "MemAvailable:");
    if (!t || !a)
        return;
    double total = strtod(t + 9, NULL), avail = strtod(a + 13, NULL);   /* kB */
    s->mem_total_mib = total / 1024;
    s->mem_used_mib = (total - avail) / 1024;
}

static bool cpu_driver(const char *name)
{
    for (size_t i = 0; i < sizeof cpu_drivers / sizeof *cpu_drivers; i++)
        if (!strcmp(name, cpu_drivers[i]))
            return true;
    return false;
}

/* The hottest temp*_input of every CPU hwmon device, °C. */
static void read_hwmon(const char *sys, struct host_sample *s)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/class/hwmon", sys);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[1024], name[64];
        snprintf(path, sizeof path, "%s/%s/name", dir, de->d_name);
        if (read_small(path, name, sizeof name) != 0)
            continue;
        name[strcspn(name, "\n")] = '\0';
        if (!cpu_driver(name))
            continue;
        for (int i = 1; i <= 64; i++) {
            char v[32];
            snprintf(path, sizeof path, "%s/%s/temp%d_input", dir, de->d_name, i);
            if (read_small(path, v, sizeof v) != 0)
                continue;
            char *e;
            double milli = strtod(v, &e);
            if (e != v && isfinite(milli))
                s->cpu_temp_c = isnan(s->cpu_temp_c) ? milli / 1000 : fmax(s->cpu_temp_c, milli / 1000);
        }
    }
    closedir(d);
}

int host_read(const struct host_paths *p, struct host_sample *out)
{
    *out = (struct host_sample){NAN, NAN, NAN, NAN, NAN};
    read_stat(p->proc, out);
    read_meminfo(p->proc, out);
    read_hwmon(p->sys, out);
    return isnan(out->cpu_total) ? -1 : 0;
}

double host_cpu_util(const struct host_sample *a, const struct host_sample *b)
{
    double dt = b->cpu_total - a->cpu_total;
    return dt > 0 ? 100 * (b->cpu_busy - a->cpu_busy) / dt : NAN;
}
