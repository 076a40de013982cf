/* test_decode.c — `anvil decode` against `anvil sim` (vLLM flavor,
 * speculative decoding, prefix caching off, a KV cache too small for the
 * largest cell, the tests' fake NVML): every key path of seed 004 with the
 * seed's JSON type; steps/s = aggregate tok/s / effective acceptance length
 * exactly; the capacity-limited cell flagged; the readiness gate waiting
 * for the server's running count (the simulator's trace); a killed
 * simulator leaving an incomplete matrix that the same command resumes. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/json.h"
#include "harness.h"

/* Seed paths whose number this setup cannot have: the value is null
 * ("not reported"), never made up. Each says why. */
static const char *const may_be_null[] = {
    "results[].server_utilization",                 /* SGLang's gauge; vLLM has none */
    "prefill.*.server_validation.cached_tokens",    /* the simulator reports no cached tokens */
    "hardware_run_summary.cpu_temp_max_c",          /* no CPU temperature sensor on a VM */
    "results[].hardware_summary.cpu_temp_max_c",
    "hardware_run_summary.pcie_rx_avg_mb_s", "hardware_run_summary.pcie_rx_max_mb_s",   /* not in the fake */
    "hardware_run_summary.pcie_tx_avg_mb_s", "hardware_run_summary.pcie_tx_max_mb_s",
    "results[].hardware_summary.pcie_rx_avg_mb_s", "results[].hardware_summary.pcie_rx_max_mb_s",
    "results[].hardware_summary.pcie_tx_avg_mb_s", "results[].hardware_summary.pcie_tx_max_mb_s",
    NULL,
};

/* Keys of a results[] cell that a burst does not have: the server's and the
 * gate's figures of a window (burst.h: a burst is what the client sees). */
static bool not_a_burst_key(const char *key)
{
    static const char *const gate[] = {"accept_norm_tps", "accept_norm_ref_len", "avg_running_reqs",
                                       "max_running_reqs", "effective_concurrency", "avg_queue_reqs",
                                       "max_queue_reqs", "queue_fraction", "underfilled", "warmup_timed_out",
                                       "warmup_duration", "ready_reason", "timeout_reason", "capacity_limited",
                                       "hardware_summary", NULL};
    if (!strncmp(key, "server_", 7))
        return true;
    for (int i = 0; gate[i]; i++)
        if (!strcmp(gate[i], key))
            return true;
    return false;
}

/* Objects whose keys are data (contexts, concurrencies, values read from
 * the host), not names: each of ours is checked against the seed's first. */
static const char *const data_keyed[] = {"prefill", "summary_table", "summary_table.*", NULL};
/* Objects holding what was read on the host: nothing to compare. */
static const char *const host_read[] = {"startup_diagnostics.nvidia_p2p_override.runtime",
                                        "nvidia_p2p_override.runtime", "startup_diagnostics.args", NULL};

static bool listed(const char *const *l, const char *p)
{
    for (; *l; l++)
        if (!strcmp(*l, p))
            return true;
    return false;
}

static const char *type_name(const cJSON *v)
{
    return cJSON_IsNumber(v) ? "number" : cJSON_IsString(v) ? "string" : cJSON_IsBool(v) ? "bool"
         : cJSON_IsNull(v) ? "null" : cJSON_IsArray(v) ? "array" : cJSON_IsObject(v) ? "object" : "?";
}

static void walk(const cJSON *s, const cJSON *o, const char *p, int *checked);

/* The seed's burst_results is [] (it ran none): each of ours is walked
 * against the seed's first results[] cell, the keys a burst has. */
static void walk_bursts(const cJSON *seed, const cJSON *o, int *checked)
{
    const cJSON *ref = cJSON_GetArrayItem(cJSON_GetObjectItem(seed, "results"), 0), *b, *e;
    cr_assert(cJSON_IsObject(ref));
    cJSON_ArrayForEach(b, o) {
        cJSON_ArrayForEach(e, ref) {
            if (not_a_burst_key(e->string))
                continue;
            char q[512];
            snprintf(q, sizeof q, "burst_results[].%s", e->string);
            walk(e, cJSON_GetObjectItemCaseSensitive(b, e->string), q, checked);
        }
    }
}

/* Walks seed s at path p against ours o; counts the paths checked. */
static void walk(const cJSON *s, const cJSON *o, const char *p, int *checked)
{
    (*checked)++;
    if (cJSON_IsNull(s))
        return;     /* the seed's null (temperature not sent): any value */
    bool same = !strcmp(type_name(s), type_name(o)) || (cJSON_IsBool(s) && cJSON_IsBool(o));
    if (!same && cJSON_IsNumber(s) && cJSON_IsNull(o) && listed(may_be_null, p))
        return;
    cr_expect(same, "%s: the seed has a %s, ours is %s", p, type_name(s), o ? type_name(o) : "absent");
    if (!same || listed(host_read, p))
        return;
    char q[512];
    if (cJSON_IsObject(s) && listed(data_keyed, p)) {
        const cJSON *first = s->child, *e;
        cr_expect(o->child != NULL || !first, "%s: empty", p);
        snprintf(q, sizeof q, "%s.*", p);
        cJSON_ArrayForEach(e, o) walk(first, e, q, checked);
    } else if (cJSON_IsObject(s)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, s) {
            snprintf(q, sizeof q, "%s%s%s", p, *p ? "." : "", e->string);
            walk(e, cJSON_GetObjectItemCaseSensitive(o, e->string), q, checked);
        }
    } else if (cJSON_IsArray(s) && s->child) {
        const cJSON *e;
        snprintf(q, sizeof q, "%s[]", p);
        cr_expect(o->child != NULL, "%s: empty where the seed has elements", p);
        if (cJSON_IsObject(s->child) || cJSON_IsArray(s->child))
            cJSON_ArrayForEach(e, o) walk(s->child, e, q, checked);
    }
}

static void fake_nvml(char *script, size_t cap)
{
    char lib[PATH_MAX];
    cr_assert(realpath("build/asan/fake/libnvidia-ml.so.1", lib), "the fake NVML is built with the tests");
    cr_assert_eq(harness_tmpfile(script, cap), 0);
    FILE *f = fopen(script, "w");
    fputs("devices 1\n* name NVIDIA Fake H100\n0 uuid GPU-0000\n0 util 70\n0 power_w 300\n* power_limit_w 700\n"
          "0 temp 60\n0 sm_mhz 1800\n* mem_used_mib 40000\n* mem_total_mib 81920\n", f);
    fclose(f);
    setenv("ANVIL_NVML_LIBRARY", lib, 1);
    setenv("ANVIL_FAKE_NVML_SCRIPT", script, 1);
}

static void tmpdir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/anvil-decode-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

static cJSON *load_dir(const char *dir, const char *rel)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return harness_load_json(p);
}

static const cJSON *cell(const cJSON *doc, long conc, long ctx)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results")) {
        if (harness_num(r, "concurrency") == conc && harness_num(r, "context_tokens") == ctx)
            return r;
    }
    cr_assert_fail("no cell C=%ld ctx=%ld", conc, ctx);
    return NULL;
}

/* The simulator every test runs: vLLM names, 3 draft tokens, no prefix
 * caching (its default), a KV cache of 5120 tokens: 4 streams of 2k
 * contexts do not fit (not even their 4 × 1792-token prompts). */
static void start_sim(struct sim_proc *sim, const char *const more[])
{
    const char *args[24] = {"--flavor", "vllm", "--num-speculative-tokens", "3", "--kv-cache-tokens", "5120",
                            "--max-model-len", "4096"};
    int n = 8;
    for (int i = 0; more && more[i]; i++)
        args[n++] = more[i];
    args[n] = NULL;
    cr_assert_eq(sim_start_reference(sim, args), 0);
}

Test(decode_e2e, seed_key_paths_steps_per_s_and_the_capacity_limited_cell, .timeout = 120)
{
    char script[64], dir[64];
    fake_nvml(script, sizeof script);
    tmpdir(dir, sizeof dir);
    struct sim_proc sim;
    start_sim(&sim, NULL);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,4",
                          "--contexts", "0,2k", "--duration", "1.5", "--max-tokens", "256", "--ready-stable-s", "0.3",
                          "--cell-warmup-timeout-s", "2", "--decode-warmup-s", "0.3", "--telemetry-interval-ms", "100",
                          "--scrape-interval-ms", "100", "--standalone-prefill", "--prefill-samples", "2",
                          "--run-burst", "--burst-requests-per-concurrency", "1", "--out-dir", dir, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    cr_expect(strstr(out, "Sustained decode"), "the terminal table: %s", out);
    /* the terminal gets `anvil show`'s tables: the timed-out, capacity-limited cell says so */
    cr_expect(strstr(out, "Sustained decode per cell") && strstr(out, "capacity-limited, underfilled, warm-up timed out"),
              "the table marks the timed-out cell: %s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *seed = harness_load_json("tests/data/seed-004.json");
    cJSON *doc = load_dir(dir, "decode.json");
    int checked = 0;
    walk(seed, doc, "", &checked);
    cr_expect_geq(checked, 280, "key paths checked: %d", checked);
    int burst_paths = 0;
    walk_bursts(seed, cJSON_GetObjectItem(doc, "burst_results"), &burst_paths);
    cr_expect_geq(burst_paths, 4 * 60, "burst key paths checked: %d", burst_paths);

    /* the capacity-limited cell: 4 × 2048 tokens > the 5120-token KV cache */
    const cJSON *big = cell(doc, 4, 2048);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(big, "capacity_limited")));
    cr_expect(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(big, "capacity_reason")), "KV budget 5120"));
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(big, "warmup_timed_out")), "the server never runs 4 of them");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(big, "underfilled")));
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(big, "ready_reason")), "warmup_timeout");
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(big, "timeout_reason"));
    cr_expect(strstr(why, "running_reqs=") && strstr(why, "/4, queue_reqs=") && !strstr(why, "running_reqs=4/4"),
              "%s", why);
    cr_expect(strstr(why, "; the condition held 0.00 s at most, 0.3 s asked (--ready-stable-s)"), "%s", why);
    cr_expect_lt(harness_num(big, "effective_concurrency"), 4);
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results")) {
        if (r != big)
            cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(r, "capacity_limited")), "C=%g ctx=%g",
                      harness_num(r, "concurrency"), harness_num(r, "context_tokens"));
        /* steps/s = aggregate tok/s / effective acceptance length, exactly (seed's formula) */
        double sps = harness_num(r, "server_steps_per_s");
        cr_expect_eq(sps, harness_num(r, "aggregate_tps") / harness_num(r, "server_accept_len_effective"));
        cr_expect_gt(harness_num(r, "server_accept_len_effective"), 1.2, "3 draft tokens at 0.7 acceptance");
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "aggregate_source")),
                         "openai_continuous_usage");
        double client = harness_num(r, "client_output_tokens"), server = harness_num(r, "server_output_tokens");
        cr_expect_leq(fabs(client - server), fmax(32, 0.05 * client),
                      "the server generated what the client received in the window: %g vs %g", server, client);
        cr_expect(cJSON_IsObject(cJSON_GetObjectItem(r, "hardware_summary")), "the fake GPU was read");
    }
    /* the window's figures */
    const cJSON *c1 = cell(doc, 1, 0);
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(c1, "warmup_timed_out")));
    cr_expect(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c1, "ready_reason")),
                     "running_reqs=1/1, queue_reqs=0, active_streams=1/1, stable=0.3s"));
    cr_expect_leq(harness_num(c1, "measurement_seconds"), harness_num(c1, "measurement_wall_seconds"));
    cr_expect_eq(harness_num(cJSON_GetObjectItem(c1, "hardware_summary"), "gpu_util_avg_pct"), 70);
    cr_expect_eq(harness_num(cJSON_GetObjectItem(doc, "hardware_run_summary"), "power_total_avg_w"), 300);
    /* --standalone-prefill: the prefill section is the cold prefills at 2k (the non-zero context), each
     * one alone on the server: validated by its prefill-time histogram, its hardware read as the cells' */
    const cJSON *pre = cJSON_GetObjectItem(doc, "prefill");
    cr_expect_eq(cJSON_GetArraySize(pre), 1);
    const cJSON *p2k = cJSON_GetObjectItem(pre, "2048");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(p2k, "method")), "standalone");
    cr_expect_eq(harness_num(p2k, "samples"), 2);
    cr_expect_eq(harness_num(p2k, "client_tok_per_sec"),
                 harness_num(p2k, "prompt_tokens") / harness_num(p2k, "client_ttft_seconds"));
    const cJSON *v = cJSON_GetObjectItem(p2k, "server_validation");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(v, "invalid_reason")), "");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(v, "method")), "prometheus:kv_computed");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(v, "token_source")), "prompt_tokens_counter");
    cr_expect_eq(harness_num(v, "samples"), 2);
    cr_expect_gt(harness_num(v, "prefill_seconds"), 0);
    cr_expect_leq(harness_num(v, "prefill_seconds"), harness_num(p2k, "client_ttft_seconds"), "inside the TTFT");
    cr_expect_eq(harness_num(cJSON_GetObjectItem(p2k, "hardware_summary"), "gpu_util_avg_pct"), 70);
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "metadata.prefill_mode")), "standalone_cold_prefill");
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "methodology.prefill.mode")),
                     "standalone_cold_prefill");
    cr_expect(cJSON_IsTrue(harness_json_path(doc, "startup_diagnostics.args.standalone_prefill")));
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "startup_diagnostics.args.prefill_contexts")), "2k");
    /* the 2k cell's first request still timed its prefill (kept in its cell file): the integrated scout,
     * validated by the server's prefill-time histogram from the gate's scrapes around it (alone: C=1) */
    cJSON *cf = load_dir(dir, "cells/c1-ctx2048.json");
    const cJSON *sc = cJSON_GetObjectItem(cf, "scout");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(sc, "method")), "integrated_scout");
    cr_expect_eq(harness_num(sc, "tok_per_sec"), harness_num(sc, "prompt_tokens") / harness_num(sc, "ttft_seconds"));
    v = cJSON_GetObjectItem(sc, "server_validation");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(v, "method")), "prometheus:kv_computed",
                     "%s", cJSON_GetStringValue(cJSON_GetObjectItem(v, "invalid_reason")));
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(v, "invalid_reason")), "");
    cr_expect_eq(harness_num(v, "samples"), 1);
    cr_expect_gt(harness_num(v, "prefill_seconds"), 0);
    cr_expect_leq(harness_num(v, "prefill_seconds"), harness_num(sc, "ttft_seconds"), "inside the client's TTFT");
    cJSON_Delete(cf);
    /* context 0 is anvil run's minimal prompt (--input-len 0), not a 1-token one */
    cJSON *b0 = load_dir(dir, "cells/c1-ctx0.bench.json");
    cr_expect_eq(harness_num(b0, "context_tokens"), 0);
    cJSON_Delete(b0);
    /* --run-burst: one burst per context x concurrency (C x 1 requests each), and the summary table */
    const cJSON *bursts = cJSON_GetObjectItem(doc, "burst_results"), *bt = cJSON_GetObjectItem(doc, "burst_summary_table");
    cr_expect_eq(cJSON_GetArraySize(bursts), 4);
    const long bctx[] = {0, 0, 2048, 2048}, bconc[] = {1, 4, 1, 4};
    for (int i = 0; i < 4; i++) {
        const cJSON *b = cJSON_GetArrayItem(bursts, i);
        cr_expect_eq(harness_num(b, "context_tokens"), bctx[i], "burst %d: context-major", i);
        cr_expect_eq(harness_num(b, "concurrency"), bconc[i], "burst %d", i);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(b, "benchmark_mode")), "burst");
        cr_expect_eq(harness_num(b, "request_count"), bconc[i]);
        cr_expect_eq(harness_num(b, "completed_request_count"), bconc[i]);
        cr_expect_gt(harness_num(b, "aggregate_tps"), 0);
        char ck[16], cc[16];
        snprintf(ck, sizeof ck, "%ld", bctx[i]);
        snprintf(cc, sizeof cc, "%ld", bconc[i]);
        cr_expect_eq(harness_num(cJSON_GetObjectItem(bt, ck), cc), harness_num(b, "aggregate_tps"));
    }
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "metadata.burst_e2e_status")), "measured");
    cr_expect(cJSON_IsTrue(harness_json_path(doc, "metadata.run_burst")));
    cr_expect(cJSON_IsTrue(harness_json_path(doc, "methodology.burst_e2e_decode.present")));
    cr_expect_eq(harness_num(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary_table"), "2048"), "4"),
                 harness_num(big, "aggregate_tps"));
    cr_expect_geq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "event_log")), 15);
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "p2pmark.status")), "not_run");
    /* anvil show reads it */
    char art[600];
    snprintf(art, sizeof art, "%s/decode.json", dir);
    const char *show[] = {harness_anvil_bin(), "show", art, NULL};
    cr_assert_eq(run_cmd(show, out, sizeof out, &status), 0);
    cr_expect_eq(status, 0, "%s", out);
    cJSON_Delete(seed);
    cJSON_Delete(doc);
    unlink(script);
    rmtree(dir);
}

/* The largest admission instant of the first n requests in the
 * simulator's trace (CLOCK_MONOTONIC ns, the client's clock). */
static double admitted_by(const char *trace, int n)
{
    cJSON *lines[64];
    int k = harness_read_jsonl(trace, lines, 64);
    cr_assert_geq(k, n, "trace lines: %d", k);
    double t[64];
    for (int i = 0; i < k; i++) {
        t[i] = harness_num(lines[i], "admitted_ns");
        cJSON_Delete(lines[i]);
    }
    /* requests in order of admission: the n-th is the last of the first n */
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[n - 1];
}

Test(decode_e2e, the_gate_waits_for_the_servers_running_count, .timeout = 90)
{
    char dir[64], trace[64];
    tmpdir(dir, sizeof dir);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    /* a serial frontend of 300 ms: the server runs the 3rd stream ~0.9 s after the client sent it */
    const char *more[] = {"--frontend-ms", "300", "--trace", trace, NULL};
    struct sim_proc sim;
    start_sim(&sim, more);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "3",
                          "--contexts", "0", "--duration", "0.5", "--max-tokens", "2048", "--ready-stable-s", "0.3",
                          "--cell-warmup-timeout-s", "10", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--out-dir", dir, NULL};
    static char out[65536];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *doc = load_dir(dir, "decode.json");
    const cJSON *c = cell(doc, 3, 0);
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(c, "warmup_timed_out")));
    double ws = harness_num(c, "window_start_monotonic_ns");
    double third = admitted_by(trace, 3);
    cr_expect_geq(ws - third, 0.3e9, "the window opened %.3f s after the server ran the 3rd stream",
                  (ws - third) / 1e9);
    /* while the client had its 3 streams out, the server ran fewer: the gate waited */
    bool waited = false;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(c, "ready_trace")) {
        if (harness_num(o, "active_streams") == 3 && harness_num(o, "running_reqs") < 3) {
            waited = true;
            cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(o, "met")));
        }
    }
    cr_expect(waited, "the trace shows 3 streams in flight with fewer running on the server");
    cr_expect_geq(harness_num(c, "warmup_duration"), 0.9, "three 300 ms frontend turns, then 0.3 s stable");
    cJSON_Delete(doc);
    unlink(trace);
    rmtree(dir);
}

static int count_cells(const char *dir)
{
    int n = 0;
    const char *names[] = {"c1-ctx0", "c1-ctx256", "c2-ctx0", "c2-ctx256"};
    for (int i = 0; i < 4; i++) {
        char p[600];
        struct stat st;
        snprintf(p, sizeof p, "%s/cells/%s.json", dir, names[i]);
        n += stat(p, &st) == 0;
    }
    return n;
}

Test(decode_e2e, a_killed_server_leaves_an_incomplete_matrix_that_resumes, .timeout = 120)
{
    char dir[64], port[16];
    tmpdir(dir, sizeof dir);
    struct sim_proc sim;
    start_sim(&sim, NULL);
    snprintf(port, sizeof port, "%d", sim.port);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,2",
                          "--contexts", "0,256", "--duration", "1", "--max-tokens", "512", "--ready-stable-s", "0.2",
                          "--cell-warmup-timeout-s", "3", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 600 && count_cells(dir) < 1; i++)
        harness_sleep_ms(50);
    cr_assert_geq(count_cells(dir), 1, "the first cell was written");
    kill(sim.pid, SIGKILL);
    sim_stop(&sim);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "incomplete: exit 1 (status %d)", st);
    int done = count_cells(dir);
    cr_expect(done >= 1 && done < 4, "cells done before the kill: %d", done);
    cJSON *doc = load_dir(dir, "decode.json");
    cr_expect(cJSON_IsTrue(harness_json_path(doc, "metadata.incomplete")));
    cr_expect_eq(harness_num(cJSON_GetObjectItem(doc, "metadata"), "cells_done"), done);
    double first_tps = harness_num(cell(doc, 1, 0), "aggregate_tps");
    cJSON_Delete(doc);
    /* the same command against the server back on its port: only the rest runs */
    const char *again[] = {"--port", port, NULL};
    start_sim(&sim, again);
    static char out[65536];
    cr_assert_eq(run_cmd(argv, out, sizeof out, &st), 0);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_expect_eq(count_cells(dir), 4);
    doc = load_dir(dir, "decode.json");
    cr_expect(cJSON_IsFalse(harness_json_path(doc, "metadata.incomplete")));
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "results")), 4);
    cr_expect_eq(harness_num(cell(doc, 1, 0), "aggregate_tps"), first_tps, "the first cell was kept, not re-run");
    bool resumed = false, incomplete = false;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "event_log")) {
        resumed |= strstr(e->valuestring, "cell resumed C=1 ctx=0") != NULL;
        incomplete |= strstr(e->valuestring, "matrix incomplete") != NULL;
    }
    cr_expect(resumed && incomplete, "the event log keeps both runs");
    /* the default prefill: the 256 context's integrated scout (kept from the cut run or measured now) */
    const cJSON *p256 = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "prefill"), "256");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(p256, "method")), "integrated_scout");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "prefill")), 1, "none at context 0");
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "metadata.prefill_mode")), "integrated_decode_scout");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "burst_results")), 0);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "burst_summary_table")), 0);
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "metadata.burst_e2e_status")),
                     "not_run_use_--run-burst");
    cr_expect(cJSON_IsFalse(harness_json_path(doc, "methodology.burst_e2e_decode.present")));
    cr_expect(cJSON_IsFalse(harness_json_path(doc, "startup_diagnostics.args.run_burst")));
    cJSON_Delete(doc);
    rmtree(dir);
}

static bool exists(const char *dir, const char *rel)
{
    char p[600];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

static bool logged(const cJSON *doc, const char *what)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "event_log")) {
        if (strstr(e->valuestring, what))
            return true;
    }
    return false;
}

Test(decode_e2e, a_resumed_run_keeps_the_prefill_and_bursts_measured_before_the_kill, .timeout = 120)
{
    char dir[64], port[16];
    tmpdir(dir, sizeof dir);
    struct sim_proc sim;
    start_sim(&sim, NULL);
    snprintf(port, sizeof port, "%d", sim.port);
    /* the second burst (C=2: 2 x 3 requests of 512 tokens) lasts long enough to be cut */
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,2",
                          "--contexts", "256", "--duration", "0.5", "--max-tokens", "512", "--ready-stable-s", "0.1",
                          "--cell-warmup-timeout-s", "3", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--standalone-prefill", "--prefill-contexts", "1k", "--prefill-samples", "2", "--run-burst",
                          "--burst-requests-per-concurrency", "3", "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 600 && !exists(dir, "burst/c1-ctx256.json"); i++)
        harness_sleep_ms(20);
    cr_assert(exists(dir, "burst/c1-ctx256.json"), "the first burst was written");
    cr_assert(exists(dir, "prefill/standalone-ctx1024.json"), "the prefill was written before the cells");
    kill(sim.pid, SIGKILL);
    sim_stop(&sim);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "incomplete: exit 1 (status %d)", st);
    cr_expect(!exists(dir, "burst/c2-ctx256.json"), "the cut burst is not kept");
    cJSON *doc = load_dir(dir, "decode.json");
    cr_expect(cJSON_IsTrue(harness_json_path(doc, "metadata.incomplete")));
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "metadata.burst_e2e_status")), "incomplete");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "burst_results")), 1, "the burst done is reported");
    cJSON *pre1 = cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "prefill"), "1024"), 1);
    cJSON *b1 = cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "burst_results"), 0), 1);
    cr_assert(cJSON_IsObject(pre1) && cJSON_IsObject(b1));
    cJSON_Delete(doc);
    /* the same command against the server back: only the cut burst runs */
    const char *again[] = {"--port", port, NULL};
    start_sim(&sim, again);
    static char out[65536];
    cr_assert_eq(run_cmd(argv, out, sizeof out, &st), 0);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    doc = load_dir(dir, "decode.json");
    cr_expect(cJSON_IsFalse(harness_json_path(doc, "metadata.incomplete")));
    cr_expect(cJSON_Compare(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "prefill"), "1024"), pre1, 1), "the prefill was kept, not re-measured");
    const cJSON *bursts = cJSON_GetObjectItem(doc, "burst_results");
    cr_expect_eq(cJSON_GetArraySize(bursts), 2);
    cr_expect(cJSON_Compare(cJSON_GetArrayItem(bursts, 0), b1, 1), "the first burst was kept, not re-measured");
    cr_expect_eq(harness_num(cJSON_GetArrayItem(bursts, 1), "completed_request_count"), 6);
    cr_expect(logged(doc, "prefill standalone resumed ctx=1k"), "the event log says the prefill was resumed");
    cr_expect(logged(doc, "burst resumed C=1 ctx=256"));
    cr_expect(logged(doc, "burst start C=2 ctx=256"));
    cr_expect_str_eq(cJSON_GetStringValue(harness_json_path(doc, "metadata.burst_e2e_status")), "measured");
    cJSON_Delete(pre1);
    cJSON_Delete(b1);
    cJSON_Delete(doc);
    rmtree(dir);
}

Test(decode_e2e, without_server_metrics_the_gate_counts_decoding_streams, .timeout = 60)
{
    char dir[64];
    tmpdir(dir, sizeof dir);
    struct sim_proc sim;
    start_sim(&sim, NULL);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,2",
                          "--contexts", "256", "--duration", "0.5", "--max-tokens", "128", "--ready-stable-s", "0.2",
                          "--cell-warmup-timeout-s", "5", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--server-metrics", "off", "--header", "X-Team-Token: hdr-secret-4711",
                          "--api-key-env", "ANVIL_TEST_DECODE_KEY", "--out-dir", dir, NULL};
    setenv("ANVIL_TEST_DECODE_KEY", "sk-decode-secret-0815", 1);
    static char out[65536], err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s%s", out, err);
    cr_assert_eq(sim_stop(&sim), 0);
    /* no secret reaches a file of the directory or the terminal */
    cr_expect(!strstr(out, "secret") && !strstr(err, "secret"), "a secret was printed");
    const char *grep[] = {"grep", "-rl", "-e", "hdr-secret-4711", "-e", "sk-decode-secret-0815", dir, NULL};
    char found[4096];
    cr_assert_eq(run_cmd(grep, found, sizeof found, &status), 0);
    cr_expect_eq(status, 1, "secrets in: %s", found);
    cJSON *doc = load_dir(dir, "decode.json");
    cr_expect(cJSON_IsFalse(harness_json_path(doc, "metadata.metrics_available")));
    cr_expect(strstr(cJSON_GetStringValue(harness_json_path(doc, "metadata.metrics_warning")), "--server-metrics off"));
    const cJSON *c = cell(doc, 2, 256);
    cr_expect(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c, "ready_reason")),
                     "active_streams=2/2, decoding_streams=2/2, stable=0.2s"),
              "%s", cJSON_GetStringValue(cJSON_GetObjectItem(c, "ready_reason")));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(c, "server_output_tokens")), "no server figure is made up");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(c, "server_steps_per_s")));
    cr_expect_gt(harness_num(c, "aggregate_tps"), 0);
    cJSON_Delete(doc);
    rmtree(dir);
    /* the terminal says which cell of how many, and how long still (from the second on) */
    cr_expect(strstr(err, "anvil decode: cell 1 of 2 (C=1 ctx=256), 0.0 s so far, ETA ?\n"), "%s", err);
    const char *second = strstr(err, "anvil decode: cell 2 of 2 (C=2 ctx=256), ");
    cr_assert(second, "%s", err);
    const char *eta = strstr(second, ", ETA ");
    cr_expect(eta && eta[6] >= '0' && eta[6] <= '9', "%s", second);
}

Test(decode_e2e, bad_input_is_refused_naming_what_and_where, .timeout = 60)
{
    static char out[8192], err[8192];
    int status;
    const char *bad_list[] = {harness_anvil_bin(), "decode", "--contexts", "0,8m", NULL};
    cr_assert_eq(run_cmd_err(bad_list, out, sizeof out, err, sizeof err, &status), 0);
    cr_expect_eq(status, 2);
    cr_expect(strstr(err, "--contexts: '0,8m': unexpected 'm'"), "%s", err);
    const char *twice[] = {harness_anvil_bin(), "decode", "--concurrency", "1,2,1", NULL};
    cr_assert_eq(run_cmd_err(twice, out, sizeof out, err, sizeof err, &status), 0);
    cr_expect_eq(status, 2);
    cr_expect(strstr(err, "--concurrency: '1,2,1': 1 is listed twice"), "%s", err);
    /* a context the model cannot hold, before anything is sent */
    char dir[64];
    tmpdir(dir, sizeof dir);
    struct sim_proc sim;
    start_sim(&sim, NULL);
    const char *too_long[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--contexts", "0,8k",
                              "--max-tokens", "64", "--out-dir", dir, NULL};
    cr_assert_eq(run_cmd_err(too_long, out, sizeof out, err, sizeof err, &status), 0);
    cr_expect_eq(status, 2, "refused before any request");
    cr_expect(strstr(err, "--contexts 8192 (--max-tokens 64): prompt of 8128 tokens cannot fit: the server's "
                          "context is 4096 tokens (/models max_model_len)"), "%s", err);
    /* a directory holding another plan is not mixed with this one */
    const char *one[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1",
                         "--contexts", "0", "--duration", "0.3", "--max-tokens", "64", "--ready-stable-s", "0.1",
                         "--decode-warmup-s", "0", "--telemetry", "off", "--out-dir", dir, NULL};
    cr_assert_eq(run_cmd_err(one, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    const char *other[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1",
                           "--contexts", "0", "--duration", "0.3", "--max-tokens", "32", "--ready-stable-s", "0.1",
                           "--decode-warmup-s", "0", "--telemetry", "off", "--out-dir", dir, NULL};
    cr_assert_eq(run_cmd_err(other, out, sizeof out, err, sizeof err, &status), 0);
    cr_expect_eq(status, 1);
    cr_expect(strstr(err, "holds a decode matrix of another plan"), "%s", err);
    cr_assert_eq(sim_stop(&sim), 0);
    rmtree(dir);
}

/* llama.cpp's context is its slot's n_ctx (/props): a context cell that
 * cannot fit refuses the whole matrix before any request, exit 2, naming
 * the prompt, the limit and its field (its /v1/models has no max_model_len,
 * so this was found only when the cell ran). */
Test(decode_e2e, a_cell_past_the_llamacpp_slot_context_is_refused_before_any_request, .timeout = 60)
{
    char dir[64], trace[64], out[16384], err[16384];
    tmpdir(dir, sizeof dir);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sa[] = {"--flavor", "llamacpp", "--max-model-len", "2048", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sa), 0);
    const char *args[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1",
                          "--contexts", "1k,4k", "--duration", "0.3", "--max-tokens", "64", "--telemetry", "off",
                          "--out-dir", dir, NULL};
    int status;
    cr_assert_eq(run_cmd_err(args, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_expect_eq(status, 2, "%s", err);
    cr_expect(strstr(err, "--contexts 4096 (--max-tokens 64): prompt of 4032 tokens cannot fit: the server's context "
                          "is 2048 tokens (/props default_generation_settings.n_ctx)"), "%s", err);
    cJSON *lines[8];
    cr_expect_eq(harness_read_jsonl(trace, lines, 8), 0, "no request reached the server");
    unlink(trace);
    rmtree(dir);
}

Test(decode_e2e, ctrl_c_keeps_the_cells_done_and_says_why, .timeout = 60)
{
    char dir[64], first[600];
    tmpdir(dir, sizeof dir);
    snprintf(first, sizeof first, "%s/cells/c1-ctx0.json", dir);
    struct sim_proc sim;
    start_sim(&sim, NULL);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1",
                          "--contexts", "0,3k", "--duration", "0.5", "--max-tokens", "2048", "--ready-stable-s", "0.1",
                          "--cell-warmup-timeout-s", "30", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    struct stat st;
    for (int i = 0; i < 600 && stat(first, &st) != 0; i++)
        harness_sleep_ms(50);
    cr_assert_eq(stat(first, &st), 0, "the first cell was written");
    harness_sleep_ms(300);     /* inside the second cell's warm-up or window */
    kill(pid, SIGINT);
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 1, "status %d", ws);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *doc = load_dir(dir, "decode.json");
    cr_expect(cJSON_IsTrue(harness_json_path(doc, "metadata.incomplete")));
    cr_expect(strstr(cJSON_GetStringValue(harness_json_path(doc, "metadata.incomplete_reason")), "signal"), "%s",
              cJSON_GetStringValue(harness_json_path(doc, "metadata.incomplete_reason")));
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "results")), 1);
    cJSON_Delete(doc);
    rmtree(dir);
}

/* A cell measured while its directory cannot take it (a full disk; here a
 * directory in its file's place) goes to its fallback: the matrix stops at
 * once naming it, and the same command resumes with the cell taken from
 * there, not measured again. */
Test(decode_e2e, an_unwritable_cell_stops_the_matrix_and_resumes_from_its_fallback, .timeout = 90)
{
    char dir[64], trace[64], cellfile[600], fb[1200];
    tmpdir(dir, sizeof dir);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *more[] = {"--trace", trace, NULL};
    struct sim_proc sim;
    start_sim(&sim, more);
    snprintf(cellfile, sizeof cellfile, "%s/cells/c1-ctx0.json", dir);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", cellfile);
    cr_assert_eq(system(cmd), 0);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,2",
                          "--contexts", "0", "--duration", "0.5", "--max-tokens", "512", "--ready-stable-s", "0.1",
                          "--cell-warmup-timeout-s", "3", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--out-dir", dir, NULL};
    static char out[65536], err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_neq(status, 0, "the matrix stops: %s", err);
    cr_assert(strstr(err, "cannot keep cell C=1 ctx=0") && strstr(err, "written to"), "the fallback is named: %s", err);
    artifact_fallback_path(cellfile, fb, sizeof fb);
    cr_assert_eq(access(fb, F_OK), 0, "the cell is at its fallback %s", fb);
    snprintf(cmd, sizeof cmd, "%s/cells/c2-ctx0.json", dir);
    cr_assert_neq(access(cmd, F_OK), 0, "no cell after it was measured");
    cJSON *lines[256];
    int before = harness_read_jsonl(trace, lines, 256);
    for (int i = 0; i < before; i++)
        cJSON_Delete(lines[i]);
    cr_assert_eq(rmdir(cellfile), 0);   /* the disk has room again */
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(err, "cell resumed C=1 ctx=0") || strstr(out, "cell resumed C=1 ctx=0"), "%s%s", out, err);
    cr_assert_neq(access(fb, F_OK), 0, "the fallback was moved into place");
    cr_assert_eq(access(cellfile, F_OK), 0);
    int after = harness_read_jsonl(trace, lines, 256);
    for (int i = 0; i < after; i++)
        cJSON_Delete(lines[i]);
    cr_assert_gt(after, before, "the second cell was measured");
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(trace);
    rmtree(dir);
}
