/* smi.h — NVIDIA GPUs through `nvidia-smi --query-gpu=... --format=csv,
 * noheader,nounits` as a subprocess: the fallback when NVML cannot be
 * loaded. nvidia-smi has no energy counter, so energy is integrated from
 * power.draw; it reports no PCIe throughput either. */
#ifndef ANVIL_OBSERVE_SMI_H
#define ANVIL_OBSERVE_SMI_H

#include <stdbool.h>
#include <stddef.h>

#include "observe/gpu.h"

/* The fields asked for, in order; the last is dropped (SMI_FIELDS_BASIC)
 * when this nvidia-smi does not know it. */
#define SMI_FIELDS_BASIC "index,name,uuid,utilization.gpu,utilization.memory,memory.used,memory.total," \
                         "power.draw,power.limit,temperature.gpu,clocks.sm,clocks.mem"
#define SMI_FIELDS SMI_FIELDS_BASIC ",clocks_throttle_reasons.active"

/* How long one nvidia-smi may run before it is killed, ms. */
#define SMI_TIMEOUT_MS 3000

/* Parses nvidia-smi's CSV (one line per GPU, the fields of SMI_FIELDS or
 * SMI_FIELDS_BASIC as with_throttle says) into out/info (up to cap
 * devices). "[N/A]", "[Not Supported]" and blanks read as NaN; the
 * throttle reasons as the hex bitmask nvidia-smi prints. Returns the
 * devices read, or -1 with the line and field in err. */
int smi_parse(const char *csv, bool with_throttle, struct gpu_sample *out, struct gpu_info *info, int cap,
              char *err, size_t errlen);

/* Runs `program --query-gpu=FIELDS --format=csv,noheader,nounits`
 * (program looked up in PATH, e.g. "nvidia-smi"; stdin and stderr on
 * /dev/null; killed after SMI_TIMEOUT_MS) and parses its output; tries the
 * fields without throttle reasons once when the full query fails, and
 * remembers in *with_throttle. Blocks: call off the measuring loop. Returns
 * the devices read, or -1 with the reason in err. */
int smi_read(const char *program, bool *with_throttle, struct gpu_sample *out, struct gpu_info *info, int cap,
             char *err, size_t errlen);

#endif
