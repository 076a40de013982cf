/* nvml.h — NVIDIA GPUs through NVML, loaded at run time with dlopen, so
 * anvil builds and runs on machines without the driver (the NVML=0 build
 * switch leaves this module out; callers test ANVIL_WITH_NVML). The few
 * NVML functions used are declared in nvml.c from NVML's documented
 * signatures (Debian packages no NVML header). */
#ifndef ANVIL_OBSERVE_NVML_H
#define ANVIL_OBSERVE_NVML_H

#include <stddef.h>

#include "observe/gpu.h"

/* The library loaded when $ANVIL_NVML_LIBRARY is unset or empty. */
#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"

struct nvml;

/* Loads the library at path (NULL: $ANVIL_NVML_LIBRARY, else
 * NVML_DEFAULT_LIBRARY), initializes NVML and reads each device's name and
 * UUID. Returns the handle, or NULL with the reason in err ("libnvidia-ml.so.1:
 * cannot open shared object file", "nvmlInit_v2: Driver Not Loaded", "no
 * GPU"). */
struct nvml *nvml_open(const char *path, char *err, size_t errlen);

/* Devices found (1 .. GPU_MAX). */
int nvml_count(const struct nvml *n);

/* Device i's index, name and UUID. */
const struct gpu_info *nvml_info(const struct nvml *n, int i);

/* Reads every device into out[0 .. nvml_count): utilization, memory,
 * power and its limit, the energy counter, temperature, SM and memory
 * clocks, throttle reasons, PCIe rx/tx. A value a device does not support
 * stays NaN. Cost: about a dozen driver calls per device (µs to ms; may
 * block: call it off the measuring loop). Returns the count. */
int nvml_read(struct nvml *n, struct gpu_sample *out);

/* Shuts NVML down and unloads it. NULL-safe. */
void nvml_close(struct nvml *n);

#endif
