/* host.h — facts about the machine anvil runs on, recorded in every
 * artifact's provenance: host name, kernel release, CPU model, online cores. */
#ifndef ANVIL_CORE_HOST_H
#define ANVIL_CORE_HOST_H

#include <stddef.h>

struct host_facts {
    char host[256];         /* gethostname(); "" when unknown */
    char kernel[256];       /* uname(2) release, as `uname -r` prints it; "" when unknown */
    char cpu_model[256];    /* /proc/cpuinfo's first "model name" (else "Hardware", as some arm
                               kernels write); "" when it has neither */
    long cpu_cores;         /* online CPUs, sysconf(_SC_NPROCESSORS_ONLN); -1 when unknown */
};

/* Fills *out from the running system. Never fails: a fact the system does
 * not tell is "" (or -1). Reads /proc/cpuinfo (a few kB): not for hot paths. */
void host_facts_get(struct host_facts *out);

/* The CPU model in cpuinfo (the text of a /proc/cpuinfo; NUL-terminated):
 * the value of the first "model name" line, else of the first "Hardware"
 * line, with surrounding blanks removed, into out (cap bytes, truncated).
 * Returns 0, or -1 when neither line is there (out is then ""). */
int host_cpu_model(const char *cpuinfo, char *out, size_t cap);

#endif
