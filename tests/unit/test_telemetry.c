/* test_telemetry.c — GPU and host readers that need no GPU (nvidia-smi's
 * CSV, a DCGM exporter's scrape, /proc and /sys trees made up here) and the
 * window summary: seed 004's hardware_run_summary, seed 002's gpu block,
 * energy from the counter at the exact boundaries and from integrated power. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "core/clock.h"
#include "observe/gpuprom.h"
#include "observe/hardware.h"
#include "observe/host.h"
#include "observe/smi.h"

#define S 1000000000LL

Test(smi, parses_csv_with_placeholders_and_throttle_masks)
{
    const char *csv =
        "0, NVIDIA H100 80GB HBM3, GPU-aaaa, 97, 41, 71234, 81559, 612.34, 700.00, 71, 1980, 2619, 0x0000000000000040\n"
        "1, NVIDIA H100 80GB HBM3, GPU-bbbb, 3, 0, 12, 81559, [N/A], 700.00, 35, 345, 2619, [Not Supported]\r\n\n";
    struct gpu_sample s[4];
    struct gpu_info g[4];
    char err[200];
    cr_assert_eq(smi_parse(csv, true, s, g, 4, err, sizeof err), 2, "%s", err);
    cr_expect_eq(g[0].index, 0);
    cr_expect_str_eq(g[0].name, "NVIDIA H100 80GB HBM3");
    cr_expect_str_eq(g[1].uuid, "GPU-bbbb");
    cr_expect_eq(s[0].util_pct, 97);
    cr_expect_eq(s[0].mem_used_mib, 71234);
    cr_expect_eq(s[0].power_w, 612.34);
    cr_expect_eq(s[0].sm_mhz, 1980);
    cr_expect(s[0].has_throttle);
    cr_expect_eq(s[0].throttle, GPU_THROTTLE_HW_THERMAL);
    cr_expect(isnan(s[1].power_w));
    cr_expect_not(s[1].has_throttle);
    cr_expect(isnan(s[0].energy_mj), "nvidia-smi has no energy counter");
    cr_expect_eq(smi_parse("0, A, GPU-x, 1, 2\n", true, s, g, 4, err, sizeof err), -1);
    cr_expect(strstr(err, "line 1: 5 fields, expected 13"), "%s", err);
    cr_expect_eq(smi_parse("0, A, GPU-x, lots, 2, 3, 4, 5, 6, 7, 8, 9\n", false, s, g, 4, err, sizeof err), -1);
    cr_expect(strstr(err, "field 4: 'lots' is not a number"), "%s", err);
}

/* A fake nvidia-smi on PATH: the program run, its output read and parsed;
 * one that fails the full query is asked again without throttle reasons. */
Test(smi, runs_the_program_on_path)
{
    char dir[] = "/tmp/anvil-smi-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/nvidia-smi", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\ncase \"$1\" in *clocks_throttle_reasons*) echo 'Field is not valid' >&2; exit 2;; esac\n"
               "echo '0, Fake, GPU-1, 10, 20, 30, 40, 50, 60, 70, 80, 90'\n");
    fclose(f);
    chmod(path, 0755);
    struct gpu_sample s[2];
    struct gpu_info g[2];
    char err[200];
    bool with_throttle = true;
    cr_assert_eq(smi_read(path, &with_throttle, s, g, 2, err, sizeof err), 1, "%s", err);
    cr_expect_not(with_throttle);
    cr_expect_eq(s[0].temp_c, 70);
    cr_expect_eq(smi_read("/nonexistent/nvidia-smi", &with_throttle, s, g, 2, err, sizeof err), -1);
    cr_expect(strstr(err, "No such file"), "%s", err);
    unlink(path);
    rmdir(dir);
}

/* An nvidia-smi that prints, closes its output and hangs is given up on at
 * SMI_TIMEOUT_MS (its reader waited for the exit as long as it lived). */
Test(smi, a_hung_program_is_given_up_at_the_timeout, .timeout = 60)
{
    char dir[] = "/tmp/anvil-smi-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/nvidia-smi", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\necho '0, Fake, GPU-1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 0'\nexec >&- 2>&-\nsleep 40\n");
    fclose(f);
    chmod(path, 0755);
    struct gpu_sample s[2];
    struct gpu_info g[2];
    char err[200] = "";
    bool with_throttle = true;
    int64_t t0 = clock_now_ns();
    cr_expect_eq(smi_read(path, &with_throttle, s, g, 2, err, sizeof err), -1);
    double secs = (double)(clock_now_ns() - t0) / 1e9;
    cr_expect(strstr(err, "did not finish within 3000 ms"), "%s", err);
    cr_expect_lt(secs, 25, "%.1f s: the program sleeps 40 s", secs);
    unlink(path);
    rmdir(dir);
}

Test(gpuprom, dcgm_exporter_names)
{
    const char *text =
        "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"
        "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",UUID=\"GPU-b\",device=\"nvidia1\",modelName=\"NVIDIA A100\"} 1100\n"
        "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-a\",device=\"nvidia0\",modelName=\"NVIDIA A100\"} 1410\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"} 88\n"
        "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 30000\nDCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-a\"} 10000\n"
        "DCGM_FI_DEV_FB_RESERVED{gpu=\"0\",UUID=\"GPU-a\"} 960\n"
        "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 250.5\n"
        "DCGM_FI_DEV_POWER_MGMT_LIMIT{gpu=\"0\",UUID=\"GPU-a\"} 400\n"
        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-a\"} 123456789\n"
        "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 66\n"
        "DCGM_FI_PROF_PCIE_RX_BYTES{gpu=\"0\",UUID=\"GPU-a\"} 2097152\n"
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu=\"0\",UUID=\"GPU-a\"} 32\n"
        "process_open_fds 12\n";
    struct prom_snapshot snap;
    char err[200];
    cr_assert_eq(prom_parse(text, strlen(text), &snap, err, sizeof err), 0, "%s", err);
    struct gpu_sample s[4];
    struct gpu_info g[4];
    cr_assert_eq(gpuprom_extract(&snap, s, g, 4), 2);
    cr_expect_eq(g[0].index, 0, "ordered by index");
    cr_expect_str_eq(g[0].uuid, "GPU-a");
    cr_expect_str_eq(g[0].name, "NVIDIA A100");
    cr_expect_eq(s[0].sm_mhz, 1410);
    cr_expect_eq(s[1].sm_mhz, 1100);
    cr_expect_eq(s[0].util_pct, 88);
    cr_expect_eq(s[0].mem_total_mib, 40960);
    cr_expect_eq(s[0].power_w, 250.5);
    cr_expect_eq(s[0].power_limit_w, 400);
    cr_expect_eq(s[0].energy_mj, 123456789);
    cr_expect_eq(s[0].pcie_rx_mib_s, 2);
    cr_expect_eq(s[0].throttle, GPU_THROTTLE_SW_THERMAL);
    cr_expect(isnan(s[1].util_pct));
    prom_snapshot_free(&snap);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(host, proc_stat_meminfo_and_the_hottest_cpu_sensor)
{
    char root[] = "/tmp/anvil-host-XXXXXX";
    cr_assert(mkdtemp(root));
    char p[512];
    snprintf(p, sizeof p, "%s/proc", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/sys", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/sys/class", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/sys/class/hwmon", root);
    mkdir(p, 0755);
    const char *mons[][3] = {{"hwmon0", "acpitz", "99000"}, {"hwmon1", "coretemp", "61000"}, {"hwmon2", "k10temp", "67500"}};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/sys/class/hwmon/%s", root, mons[i][0]);
        mkdir(p, 0755);
        char f[600];
        snprintf(f, sizeof f, "%s/name", p);
        char name[64];
        snprintf(name, sizeof name, "%s\n", mons[i][1]);
        write_file(f, name);
        snprintf(f, sizeof f, "%s/temp1_input", p);
        write_file(f, mons[i][2]);
        snprintf(f, sizeof f, "%s/temp2_input", p);
        write_file(f, "40000");
    }
    char stat[512], mem[512];
    snprintf(stat, sizeof stat, "%s/proc/stat", root);
    snprintf(mem, sizeof mem, "%s/proc/meminfo", root);
    write_file(stat, "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n");
    write_file(mem, "MemTotal:       16384000 kB\nMemFree:  100 kB\nMemAvailable:    8192000 kB\n");
    char proc[512], sys[512];
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(sys, sizeof sys, "%s/sys", root);
    struct host_paths hp = {proc, sys};
    struct host_sample a, b;
    cr_assert_eq(host_read(&hp, &a), 0);
    cr_expect_eq(a.cpu_total, 1000);
    cr_expect_eq(a.cpu_busy, 150);
    cr_expect_eq(a.mem_total_mib, 16000);
    cr_expect_eq(a.mem_used_mib, 8000);
    cr_expect_eq(a.cpu_temp_c, 67.5, "the hottest CPU sensor, not the ACPI zone");
    write_file(stat, "cpu  400 0 150 1200 50 0 0 0 0 0\n");
    cr_assert_eq(host_read(&hp, &b), 0);
    cr_expect_float_eq(host_cpu_util(&a, &b), 100.0 * 400 / 800, 1e-12);
    struct host_paths none = {"/nonexistent", "/nonexistent"};
    cr_expect_eq(host_read(&none, &a), -1);
    cr_expect(isnan(a.cpu_temp_c));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    cr_expect_eq(system(cmd), 0);
}

/* Readings every second from 0 to 10 s of two GPUs: GPU 0 draws 200 W with
 * its counter, GPU 1 300 W without one; GPU 0 is thermally throttled every
 * other reading. Each reading takes 1 ms. */
static void two_gpus(struct hw_series *s, bool counter)
{
    *s = (struct hw_series){.n_gpus = 2};
    for (int d = 0; d < 2; d++)
        s->info[d] = (struct gpu_info){.index = d};
    for (int i = 0; i <= 10; i++) {
        struct hw_reading *r = hw_reading_new(2);
        cr_assert(r);
        r->t_due = r->t_sent = i * S;
        r->t_done = i * S + 2000000;
        r->phase = i == 0 ? OBS_PRE_RUN : OBS_PERIODIC;
        r->ok = true;
        r->has_host = true;
        r->host = (struct host_sample){.cpu_busy = 100.0 * i, .cpu_total = 400.0 * i, .mem_used_mib = 1000,
                                       .mem_total_mib = 4000, .cpu_temp_c = 50 + i};
        for (int d = 0; d < 2; d++) {
            struct gpu_sample *g = &r->gpu[d];
            g->util_pct = d ? 20 : 80;
            g->mem_util_pct = 10;
            g->mem_used_mib = 1000 * (d + 1);
            g->mem_total_mib = 10000;
            g->power_w = d ? 300 : 200;
            g->power_limit_w = 400;
            g->temp_c = d ? 40 + i : 60;
            g->sm_mhz = d ? 1000 : 1500;
            g->pcie_rx_mib_s = 10;
            g->pcie_tx_mib_s = 5;
            g->has_throttle = true;
            g->throttle = d == 0 && i % 2 ? GPU_THROTTLE_HW_THERMAL : GPU_THROTTLE_IDLE;
            /* the counter reads 200 W × time at the reading's midpoint */
            g->energy_mj = d == 0 && counter ? 5e6 + 200.0 * ((double)(i * S + 1000000) / 1e9) * 1000 : NAN;
        }
        cr_assert_eq(hw_series_add(s, r), 0);
    }
}

Test(hw_summary, per_device_run_summary_and_seed_blocks)
{
    struct hw_series s;
    two_gpus(&s, true);
    /* window 2.5 s → 7.5 s: readings at 3..7 s inside */
    struct hw_client c = {.window_start = 2 * S + S / 2, .window_end = 7 * S + S / 2, .output_tokens = 5000};
    struct hw_summary o;
    cr_assert_eq(hw_summarize(&s, &c, &o), 0);
    cr_assert(o.available, "%s", o.reason);
    cr_expect_eq(o.run.samples, 5);
    cr_expect_eq(o.run.gpu_count, 2);
    cr_expect_float_eq(o.run.duration_seconds, 5, 1e-12);
    cr_expect_float_eq(o.run.gpu_util_avg_pct, 50, 1e-12);
    cr_expect_eq(o.run.gpu_util_max_pct, 80);
    cr_expect_float_eq(o.run.power_total_avg_w, 500, 1e-12);
    cr_expect_eq(o.run.power_total_max_w, 500);
    cr_expect_eq(o.run.power_limit_total_w, 800);
    cr_expect_float_eq(o.run.vram_used_avg_mb, 3000, 1e-12);
    cr_expect_eq(o.run.vram_total_mb, 20000);
    cr_expect_float_eq(o.run.vram_used_avg_pct, 15, 1e-12);
    cr_expect_float_eq(o.run.temp_avg_c, (60 * 5 + (43 + 44 + 45 + 46 + 47)) / 10.0, 1e-12);
    cr_expect_eq(o.run.temp_max_c, 60);
    cr_expect_float_eq(o.run.pcie_rx_avg_mb_s, 20, 1e-12);
    cr_expect_float_eq(o.run.cpu_util_avg_pct, 25, 1e-12);
    cr_expect_eq(o.run.cpu_temp_max_c, 57);
    cr_expect_eq(o.dev[0].samples, 5);
    cr_expect_float_eq(o.dev[0].thermal_share, 3.0 / 5.0, 1e-12, "throttled at 3, 5, 7 s");
    cr_expect_eq(o.dev[1].thermal_share, 0);
    cr_expect_float_eq(o.thermal_share, 3.0 / 10.0, 1e-12, "over both devices' samples");
    cr_expect_eq(o.median_sm_mhz, 1250);
    cr_expect_eq(o.max_temp_c, 60);
    /* energy over exactly the window: 200 W × 5 s by the counter, 300 W × 5 s integrated */
    cr_expect_str_eq(o.dev[0].energy_source, "energy_counter");
    cr_expect_float_eq(o.dev[0].energy_j, 1000, 1e-6);
    cr_expect_str_eq(o.dev[1].energy_source, "integrated_power");
    cr_expect_float_eq(o.dev[1].energy_j, 1500, 1e-6);
    cr_expect_str_eq(o.energy_source, "mixed");
    cr_expect_float_eq(o.energy_j, 2500, 1e-6);
    cr_expect_float_eq(o.output_tokens_per_joule, 2, 1e-9);
    cr_expect_float_eq(o.joules_per_output_token, 0.5, 1e-12);
    hw_series_free(&s);
}

/* A reading that lands after the window counts only its share inside: the
 * counter's window energy does not grow with a late end reading. */
Test(hw_summary, a_late_reading_is_not_counted_in_the_window)
{
    struct hw_series s;
    two_gpus(&s, true);
    struct hw_client c = {.window_start = 2 * S, .window_end = 2 * S + S / 10, .output_tokens = NAN};
    struct hw_summary o;
    cr_assert_eq(hw_summarize(&s, &c, &o), 0);
    cr_expect_float_eq(o.dev[0].energy_j, 200 * 0.1, 1e-6, "%g J", o.dev[0].energy_j);
    cr_expect_float_eq(o.dev[1].energy_j, 300 * 0.1, 1e-6);
    cr_expect(isnan(o.output_tokens_per_joule));
    hw_series_free(&s);
}

Test(hw_summary, without_readings_in_the_window_it_is_unavailable)
{
    struct hw_series s = {.n_gpus = 1};
    struct hw_reading *r = hw_reading_new(1);
    r->t_sent = r->t_done = S;
    snprintf(r->error, sizeof r->error, "nvidia-smi did not answer within 3000 ms");
    hw_series_add(&s, r);
    struct hw_client c = {.window_start = 0, .window_end = 2 * S, .output_tokens = 10};
    struct hw_summary o;
    cr_assert_eq(hw_summarize(&s, &c, &o), 0);
    cr_expect_not(o.available);
    cr_expect(strstr(o.reason, "last error: nvidia-smi did not answer"), "%s", o.reason);
    cr_expect_eq(o.readings_failed, 1);
    hw_series_free(&s);
}
