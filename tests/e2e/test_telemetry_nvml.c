/* test_telemetry_nvml.c — `anvil run --telemetry` with NVML: the tests'
 * fake libnvidia-ml.so.1 (tests/fake/nvml_fake.c) loaded through
 * $ANVIL_NVML_LIBRARY, its script's values checked in the artifact: per
 * device, seed 004's hardware_run_summary, seed 002's gpu block, throttle
 * shares, and the window's energy from the counter (exactly power × window
 * for the fake's linear counter, to the mJ it counts in). Left out of NVML=0
 * builds with the module. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

Test(telemetry_nvml_e2e, fake_nvml_figures_reach_the_artifact, .timeout = 90)
{
    char lib[PATH_MAX], script[64], art[64];
    cr_assert(realpath("build/asan/fake/libnvidia-ml.so.1", lib), "the fake NVML is built with the tests");
    cr_assert_eq(harness_tmpfile(script, sizeof script), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    FILE *f = fopen(script, "w");
    fputs("devices 2\n* name NVIDIA Fake H100\n0 uuid GPU-0000\n1 uuid GPU-0001\n"
          "0 util 40\n1 util 60\n0 power_w 250\n1 power_w 150\n* power_limit_w 300\n"
          "0 throttle 0x40,0x0\n1 throttle 0x0\n0 temp 70\n1 temp 50\n0 sm_mhz 1410\n1 sm_mhz 1200\n"
          "* mem_used_mib 4096\n* mem_total_mib 81920\n", f);
    fclose(f);
    setenv("ANVIL_NVML_LIBRARY", lib, 1);
    setenv("ANVIL_FAKE_NVML_SCRIPT", script, 1);
    const char *sim_args[] = {"--ttft-ms", "20", "--itl-ms", "5", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "4",
                          "--num-prompts", "32", "--input-len", "32", "--output-len", "64",
                          "--telemetry-interval-ms", "50", "--out", art, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *a = harness_load_json(art);
    unlink(art);
    unlink(script);
    const cJSON *h = cJSON_GetObjectItem(a, "hardware");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(h, "available")), "%s", jstr(h, "reason"));
    cr_expect_str_eq(jstr(h, "source"), "nvml");
    cr_expect_str_eq(jstr(h, "source_detail"), lib);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(h, "devices")), 2);
    cr_expect_str_eq(jstr(h, "devices.0.name"), "NVIDIA Fake H100");
    cr_expect_str_eq(jstr(h, "devices.1.uuid"), "GPU-0001");
    cr_expect_eq(jnum(h, "devices.0.gpu_util_avg_pct"), 40);
    cr_expect_eq(jnum(h, "devices.1.gpu_util_avg_pct"), 60);
    cr_expect_eq(jnum(h, "devices.0.power_avg_w"), 250);
    cr_expect_eq(jnum(h, "devices.0.sm_clock_median_mhz"), 1410);
    const cJSON *r = cJSON_GetObjectItem(a, "hardware_run_summary");
    cr_assert(cJSON_IsObject(r));
    int samples = (int)jnum(r, "samples");
    cr_expect_geq(samples, 10, "readings every 50 ms over the window");
    cr_expect_eq(jnum(r, "gpu_count"), 2);
    cr_expect_eq(jnum(r, "gpu_util_avg_pct"), 50);
    cr_expect_eq(jnum(r, "gpu_util_max_pct"), 60);
    cr_expect_eq(jnum(r, "power_total_avg_w"), 400);
    cr_expect_eq(jnum(r, "power_limit_total_w"), 600);
    cr_expect_eq(jnum(r, "vram_total_mb"), 2 * 81920);
    cr_expect_eq(jnum(r, "vram_used_avg_mb"), 2 * 4096);
    cr_expect_eq(jnum(r, "temp_max_c"), 70);
    cr_expect_eq(jnum(r, "temp_avg_c"), 60);
    /* every other reading of GPU 0 is thermally throttled */
    int d0 = (int)jnum(h, "devices.0.samples");
    cr_expect_leq(fabs(jnum(h, "devices.0.thermal_share") - 0.5), 0.5 / d0 + 1e-9, "%g of %d",
                  jnum(h, "devices.0.thermal_share"), d0);
    cr_expect_eq(jnum(h, "devices.1.thermal_share"), 0);
    cr_expect_leq(fabs(jnum(h, "gpu.thermal_share") - 0.25), 0.25 / d0 + 1e-9);
    cr_expect_eq(jnum(h, "gpu.median_sm_mhz"), 1305);
    cr_expect_eq(jnum(h, "gpu.max_temp_c"), 70);
    /* the energy counter over exactly the window */
    cr_expect_str_eq(jstr(h, "energy.source"), "energy_counter");
    double window = jnum(h, "energy.window_s"), joules = jnum(h, "energy.joules");
    cr_expect_leq(fabs(joules - 400 * window), 400 * window * 1e-4 + 0.01, "%g J over %g s", joules, window);
    cr_expect_leq(fabs(jnum(h, "devices.0.energy_j") - 250 * window), 250 * window * 1e-4 + 0.01);
    cr_expect_eq(jnum(h, "energy.output_tokens"), 32 * 64);
    cr_expect_float_eq(jnum(a, "metrics.output_tokens_per_joule"), 32 * 64 / joules, 1e-9);
    cr_expect_float_eq(jnum(a, "metrics.joules_per_output_token"), joules / (32 * 64), 1e-9);
    cr_expect(strstr(out, "Hardware (nvml, 2 GPUs)") && strstr(out, "Output tokens per joule"), "%s", out);
    cJSON_Delete(a);
}

/* anvil sweep --slo: the load curve's gpu block (seed 002) from the rounds'
 * telemetry and each target's kv_pool_tokens from their server metrics. */
Test(telemetry_nvml_e2e, load_curve_gets_the_gpu_block_and_the_kv_pool, .timeout = 120)
{
    char lib[PATH_MAX], script[64], dir[] = "/tmp/anvil-sweep-XXXXXX";
    cr_assert(realpath("build/asan/fake/libnvidia-ml.so.1", lib));
    cr_assert_eq(harness_tmpfile(script, sizeof script), 0);
    cr_assert(mkdtemp(dir));
    FILE *f = fopen(script, "w");
    fputs("devices 1\n0 sm_mhz 375\n0 temp 88,80\n0 throttle 0x40\n", f);
    fclose(f);
    setenv("ANVIL_NVML_LIBRARY", lib, 1);
    setenv("ANVIL_FAKE_NVML_SCRIPT", script, 1);
    const char *sim_args[] = {"--kv-cache-tokens", "65536", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char targets[200];
    snprintf(targets, sizeof targets, "l4=%s", sim.base_url);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--targets", targets, "--concurrency", "1,2",
                          "--input-len", "32", "--output-len", "16", "--rounds", "1", "--num-prompts", "4",
                          "--slo", "ttft:1000,tpot:100", "--out-dir", dir, "--", "--telemetry-interval-ms", "20", NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    char path[128];
    snprintf(path, sizeof path, "%s/load-curve.json", dir);
    cJSON *c = harness_load_json(path);
    const cJSON *g = harness_json_path(c, "load.l4");
    cr_expect_eq(jnum(g, "kv_pool_tokens"), 65536);
    cr_expect_eq(jnum(g, "points.0.gpu.median_sm_mhz.median"), 375);
    cr_expect_eq(jnum(g, "points.0.gpu.median_sm_mhz.n"), 1);
    cr_expect_eq(jnum(g, "points.1.gpu.max_temp_c"), 88);
    cr_expect_eq(jnum(g, "points.1.gpu.thermal_share"), 1);
    cJSON_Delete(c);
    unlink(script);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}
