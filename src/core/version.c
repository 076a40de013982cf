/* version.c — the build's version and components. The Makefile compiles
 * this one file with -DANVIL_VERSION from scripts/version, so a new commit
 * recompiles it alone. */
#include "core/version.h"

#ifndef ANVIL_VERSION
#define ANVIL_VERSION "unknown"   /* compiled outside the Makefile */
#endif

#ifdef ANVIL_WITH_MPI
#define MPI_STATE "on"
#else
#define MPI_STATE "off"
#endif

#ifdef ANVIL_WITH_NVML
#define NVML_STATE "dlopen"
#else
#define NVML_STATE "off"
#endif

const char *anvil_version(void)
{
    return ANVIL_VERSION[0] ? ANVIL_VERSION : "unknown";
}

const char *anvil_components(void)
{
    return "mpi: " MPI_STATE ", nvml: " NVML_STATE;
}
