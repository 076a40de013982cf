/* diag.h — seed 004's startup diagnostics, from what this host lets anvil
 * read: the NVIDIA P2P override (the driver's runtime RegistryDwords in
 * /proc/driver/nvidia/params, the modprobe file that configures it),
 * the environment variables that choose GPUs and links (CUDA_VISIBLE_DEVICES,
 * NCCL_P2P_*, ...), `nvidia-smi --query-gpu` and `nvidia-smi topo -m` as run (command, exit
 * status, output), and p2pmark / AMD fabric, which anvil does not run
 * (status "not_run"). Nothing is filled in that was not read: a missing
 * file is params_available false, a missing program returncode -1 with
 * the reason in stderr. */
#ifndef ANVIL_DECODE_DIAG_H
#define ANVIL_DECODE_DIAG_H

#include <stdbool.h>

#include "artifact/decode_matrix.h"

/* Where the facts are read; NULL fields take the defaults. */
struct decode_diag_paths {
    const char *params;         /* /proc/driver/nvidia/params */
    const char *modprobe;       /* /etc/modprobe.d/nvidia-p2p-override.conf */
    const char *smi;            /* nvidia-smi (looked up in PATH) */
};

/* The nvidia_p2p_override object (seed 004's keys) into *out (owned:
 * decode_p2p_free). Returns 0, or -1 when memory runs out. */
int decode_p2p_override(const struct decode_diag_paths *p, struct decode_p2p *out);

/* {"cmd": [...], "returncode": N, "stdout": "...", "stderr": "..."} of
 * running argv (NULL-terminated; argv[0] looked up in PATH), bounded to
 * 10 s and 1 MiB of each output, into *out (owned: decode_capture_free).
 * returncode -1 when it could not run, the reason in stderr. Returns 0, or
 * -1 when memory runs out. */
int decode_run_capture(const char *const argv[], struct decode_capture *out);

/* The startup_diagnostics object into *out (owned: decode_diag_free):
 * version, server_url, hostname, uname, args (moved from *args, which is
 * left empty), the P2P override, p2pmark, amd_fabric and the two
 * nvidia-smi runs. Returns 0, or -1 when memory runs out. */
int decode_startup_diagnostics(const struct decode_diag_paths *p, const char *server_url, struct decode_args *args,
                               struct decode_diag *out);

#endif
