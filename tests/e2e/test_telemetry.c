/* test_telemetry.c — `anvil run --telemetry` without NVML: a fake
 * nvidia-smi on PATH (energy integrated from its power), a DCGM exporter's
 * scrape through --gpu-metrics-url, the host alone with --telemetry on, and
 * --telemetry off. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static double jnum(const cJSON *o, const char *path)
{
    const cJSON *v = harness_json_path(o, path);
    cr_assert(cJSON_IsNumber(v), "%s is not a number", path);
    return v->valuedouble;
}

static const char *jstr(const cJSON *o, const char *path)
{
    const cJSON *v = harness_json_path(o, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A short closed-loop run with extra flags; the artifact. */
static cJSON *run(const char *const extra[], char *out, size_t cap)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--ttft-ms", "10", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *argv[32] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "2",
                            "--num-prompts", "12", "--input-len", "32", "--output-len", "40",
                            "--telemetry-interval-ms", "50", "--out", art};
    int n = 16;
    for (int i = 0; extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    int status;
    cr_assert_eq(run_cmd(argv, out, cap, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *a = harness_load_json(art);
    unlink(art);
    return a;
}

Test(telemetry_e2e, nvidia_smi_fallback_integrates_power, .timeout = 60)
{
    char dir[] = "/tmp/anvil-smi-XXXXXX", path[128], env[1024];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/nvidia-smi", dir);
    FILE *f = fopen(path, "w");
    fputs("#!/bin/sh\necho '0, NVIDIA Fake L4, GPU-smi0, 71, 33, 2048, 23034, 72.50, 72.00, 88, 375, 6251, "
          "0x0000000000000040'\n", f);
    fclose(f);
    chmod(path, 0755);
    snprintf(env, sizeof env, "%s:%s", dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", env, 1);
    setenv("ANVIL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    static char out[65536];
    const char *extra[] = {NULL};
    cJSON *a = run(extra, out, sizeof out);
    unlink(path);
    rmdir(dir);
    const cJSON *h = cJSON_GetObjectItem(a, "hardware");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(h, "available")), "%s", jstr(h, "reason"));
    cr_expect_str_eq(jstr(h, "source"), "nvidia-smi");
    cr_expect_str_eq(jstr(h, "devices.0.name"), "NVIDIA Fake L4");
    cr_expect_eq(jnum(h, "devices.0.sm_clock_median_mhz"), 375);
    cr_expect_eq(jnum(h, "gpu.thermal_share"), 1, "seed 002's L4: throttled in every sample");
    cr_expect_eq(jnum(h, "gpu.max_temp_c"), 88);
    cr_expect_str_eq(jstr(h, "energy.source"), "integrated_power", "nvidia-smi has no energy counter");
    cr_expect_float_eq(jnum(h, "energy.joules"), 72.5 * jnum(h, "energy.window_s"), 1e-6);
    cr_expect_eq(jnum(a, "hardware_run_summary.power_total_avg_w"), 72.5);
    cr_expect_eq(jnum(a, "hardware_run_summary.gpu_count"), 1);
    cr_expect(cJSON_IsNull(harness_json_path(a, "hardware_run_summary.pcie_rx_avg_mb_s")),
              "nvidia-smi reports no PCIe throughput");
    cJSON_Delete(a);
}

Test(telemetry_e2e, dcgm_exporter_through_gpu_metrics_url, .timeout = 60)
{
    char file[64], url[128];
    cr_assert_eq(harness_tmpfile(file, sizeof file), 0);
    FILE *f = fopen(file, "w");
    fputs("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
          "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-d0\",modelName=\"NVIDIA A100-SXM4-80GB\"} 91\n"
          "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-d0\"} 310.5\n"
          "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-d0\"} 1410\n"
          "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-d0\"} 61\n"
          "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-d0\"} 70000\nDCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-d0\"} 11920\n", f);
    fclose(f);
    snprintf(url, sizeof url, "file://%s", file);
    static char out[65536];
    const char *extra[] = {"--gpu-metrics-url", url, NULL};
    cJSON *a = run(extra, out, sizeof out);
    unlink(file);
    const cJSON *h = cJSON_GetObjectItem(a, "hardware");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(h, "available")), "%s", jstr(h, "reason"));
    cr_expect_str_eq(jstr(h, "source"), "prometheus");
    cr_expect_str_eq(jstr(h, "source_detail"), url);
    cr_expect_str_eq(jstr(h, "devices.0.name"), "NVIDIA A100-SXM4-80GB");
    cr_expect_eq(jnum(h, "devices.0.gpu_util_avg_pct"), 91);
    cr_expect_eq(jnum(h, "devices.0.vram_total_mb"), 81920);
    cr_expect_str_eq(jstr(h, "energy.source"), "integrated_power");
    cr_expect_float_eq(jnum(h, "energy.joules"), 310.5 * jnum(h, "energy.window_s"), 1e-6);
    cJSON_Delete(a);
}

Test(telemetry_e2e, on_without_a_gpu_samples_the_host_off_samples_nothing, .timeout = 60)
{
    setenv("ANVIL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    setenv("PATH", "/nonexistent", 1);      /* no nvidia-smi either */
    static char out[65536];
    const char *on[] = {"--telemetry", "on", NULL};
    cJSON *a = run(on, out, sizeof out);
    const cJSON *h = cJSON_GetObjectItem(a, "hardware");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(h, "enabled")));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(h, "source")));
    cr_expect(jstr(h, "note") && strstr(jstr(h, "note"), "no GPU found"), "%s", jstr(h, "note"));
    cr_expect_gt(jnum(h, "host.mem_total_mb"), 0);
    cr_expect_geq(jnum(h, "host.samples"), 1);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(a, "hardware_run_summary")));
    cr_expect(cJSON_IsNull(harness_json_path(a, "metrics.output_tokens_per_joule")));
    cJSON_Delete(a);
    const char *off[] = {"--telemetry", "off", NULL};
    a = run(off, out, sizeof out);
    h = cJSON_GetObjectItem(a, "hardware");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(h, "enabled")));
    cr_expect_str_eq(jstr(h, "reason"), "--telemetry off");
    cr_expect_null(strstr(out, "Hardware ("), "nothing printed when off");
    cJSON_Delete(a);
}
