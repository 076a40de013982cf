/* test_nvml.c — the NVML module against the fake library the tests build
 * (tests/fake/nvml_fake.c): scripted values, throttle reasons, the energy
 * counter, unsupported calls, a driver that does not load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "observe/nvml.h"

#define FAKE "build/asan/fake/libnvidia-ml.so.1"

static void script(const char *text, char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/anvil-nvml-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    setenv("ANVIL_FAKE_NVML_SCRIPT", path, 1);
}

Test(nvml, scripted_devices_values_and_throttle_cycle)
{
    char path[64];
    script("devices 2\n* name NVIDIA Fake H100\n0 uuid GPU-zero\n0 util 90,10\n1 util 33\n0 power_w 250\n"
           "1 power_w 125.5\n0 throttle 0x40,0x0,0x4\n* mem_used_mib 2048\n* mem_total_mib 81920\n"
           "0 temp 70\n1 sm_mhz 1755\n* pcie_rx_kb 2048\n", path, sizeof path);
    char err[300];
    struct nvml *n = nvml_open(FAKE, err, sizeof err);
    cr_assert(n, "%s", err);
    cr_assert_eq(nvml_count(n), 2);
    cr_expect_str_eq(nvml_info(n, 0)->name, "NVIDIA Fake H100");
    cr_expect_str_eq(nvml_info(n, 0)->uuid, "GPU-zero");
    cr_expect_eq(nvml_info(n, 1)->index, 1);
    struct gpu_sample s[GPU_MAX];
    uint64_t throttle[3];
    double util[3];
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(nvml_read(n, s), 2);
        throttle[k] = s[0].throttle;
        util[k] = s[0].util_pct;
    }
    cr_expect_eq(throttle[0], GPU_THROTTLE_HW_THERMAL);
    cr_expect_eq(throttle[1], 0);
    cr_expect_eq(throttle[2], GPU_THROTTLE_SW_POWER_CAP);
    cr_expect_eq(util[0], 90);
    cr_expect_eq(util[1], 10);
    cr_expect_eq(util[2], 90);
    cr_expect(s[0].has_throttle);
    cr_expect_eq(s[1].util_pct, 33);
    cr_expect_eq(s[0].power_w, 250);
    cr_expect_eq(s[1].power_w, 125.5);
    cr_expect_eq(s[0].mem_used_mib, 2048);
    cr_expect_eq(s[0].mem_total_mib, 81920);
    cr_expect_eq(s[0].temp_c, 70);
    cr_expect_eq(s[1].sm_mhz, 1755);
    cr_expect_eq(s[0].pcie_rx_mib_s, 2);
    /* the counter advances at the scripted power: 250 W for 50 ms ≈ 12.5 J */
    double e0 = s[0].energy_mj;
    struct timespec t = {0, 50000000};
    nanosleep(&t, NULL);
    nvml_read(n, s);
    double j = (s[0].energy_mj - e0) / 1000;
    cr_expect(j >= 12.5 && j < 12.5 * 1.5, "%g J", j);
    nvml_close(n);
    unlink(path);
}

Test(nvml, unsupported_energy_reads_nan)
{
    char path[64];
    script("devices 1\n0 energy 0\n", path, sizeof path);
    char err[300];
    struct nvml *n = nvml_open(FAKE, err, sizeof err);
    cr_assert(n, "%s", err);
    struct gpu_sample s[1];
    nvml_read(n, s);
    cr_expect(isnan(s[0].energy_mj));
    cr_expect_not(isnan(s[0].power_w));
    nvml_close(n);
    unlink(path);
}

Test(nvml, failures_name_their_cause)
{
    char err[300];
    cr_expect_null(nvml_open("/nonexistent/libnvidia-ml.so.1", err, sizeof err));
    cr_expect(strstr(err, "/nonexistent/libnvidia-ml.so.1"), "%s", err);
    char path[64];
    script("init_error 9\n", path, sizeof path);
    cr_expect_null(nvml_open(FAKE, err, sizeof err));
    cr_expect_str_eq(err, "nvmlInit_v2: Driver Not Loaded");
    unlink(path);
    script("devices 0\n", path, sizeof path);
    cr_expect_null(nvml_open(FAKE, err, sizeof err));
    cr_expect_str_eq(err, "NVML found no GPU");
    unlink(path);
}
