/* fuzz_sim_script.c — libFuzzer target: `anvil sim --script` files on any
 * bytes. Loading must never crash or read past the input: it gives a
 * script, or NULL with a message that names the line (docs/SCRIPT.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    /* the loader reads a path: the input goes into an anonymous file */
    int fd = memfd_create("script", 0);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len)
        abort();
    char path[64], err[512] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct sim_script *sc = sim_script_load(path, err, sizeof err);
    if (!sc && !err[0])
        abort();        /* a refusal always says why */
    sim_script_free(sc);
    close(fd);
    return 0;
}
