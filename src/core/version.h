/* version.h — which anvil this is: the version it was built from and the
 * optional components built into it (docs/ARCHITECTURE.md, "Version" and
 * "Optional components"). Artifacts and `anvil --version` take it from
 * here, so only version.c is recompiled when the version changes. */
#ifndef ANVIL_CORE_VERSION_H
#define ANVIL_CORE_VERSION_H

/* The version the binary was built from: `git describe --tags --dirty` at
 * build time (e.g. "0.3.0-12-gabc1234"), the VERSION file's number plus
 * "-g<commit>" when no tag was reachable, or the VERSION file alone in a
 * release tarball (scripts/version). A static string: never NULL, never
 * freed; "unknown" when the build could not tell. */
const char *anvil_version(void);

/* The optional components as built, e.g. "mpi: off, nvml: dlopen": MPI
 * "on" when compiled with MPI=1 and src/mpi/ (ANVIL_WITH_MPI), NVML
 * "dlopen" when its module is compiled in (ANVIL_WITH_NVML; it loads
 * libnvidia-ml at run time), else "off". A static string. */
const char *anvil_components(void);

#endif
