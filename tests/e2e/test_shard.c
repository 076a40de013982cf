/* test_shard.c — a run split into shards (`anvil run --shard I/N
 * --start-at T`) and merged (`anvil merge`) is the single-process run:
 * the same requests, counts and per-request numbers within the
 * simulator's jitter, the same open-loop schedule; a missing shard makes
 * the merged artifact incomplete and names it, keeping the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "harness.h"
#include "scaleout.h"

/* Fixed latency, so every request's numbers are known up to the jitter. */
static const char *const sim_args[] = {"--ttft-ms", "15", "--itl-ms", "2", NULL};

static int merge(const char *dir, const char *out, int status_want, const char *const inputs[])
{
    const char *argv[16] = {harness_anvil_bin(), "merge", "--out", out};
    int k = 4;
    for (int i = 0; inputs[i]; i++)
        argv[k++] = inputs[i];
    argv[k] = NULL;
    char o[16384], e[4096];
    int status;
    (void)dir;
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, status_want, "anvil merge exited %d: %s", status, e);
    return status;
}

/* Reading the merged artifact and writing it back gives its bytes (the ranks block included). */
static void assert_round_trip(const char *path)
{
    size_t len;
    char *text = harness_read_file(path, &len), err[512];
    cJSON *in = cJSON_Parse(text);
    struct benchmark b;
    cr_assert_eq(benchmark_from_json(in, path, &b, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(b.ranks);
    cJSON *out = benchmark_to_json(&b);
    char *again = artifact_print(out);
    cr_assert(again && strlen(again) + 1 == len && !strncmp(again, text, len - 1), "%s differs when written back", path);
    free(again);
    cJSON_Delete(out);
    benchmark_free(&b);
    cJSON_Delete(in);
    free(text);
}

Test(shard, closed_loop_shards_merged_equal_the_single_process_run, .timeout = 120)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-shard-XXXXXX", single[128], merged[128], s0[128], s1[128];
    cr_assert(mkdtemp(dir));
    snprintf(single, sizeof single, "%s/single.json", dir);
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    snprintf(s0, sizeof s0, "%s/s0.json", dir);
    snprintf(s1, sizeof s1, "%s/s1.json", dir);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "24", "--concurrency", "4",
                          "--warmup", "2", "--input-len", "32", "--output-len", "8", "--calibration", "none", NULL};
    const char *argv[32] = {harness_anvil_bin(), "run", "--out", single};
    int k = 4;
    for (int i = 0; tail[i]; i++)
        argv[k++] = tail[i];
    argv[k] = NULL;
    int status;
    char o[16384];
    cr_assert_eq(run_cmd(argv, o, sizeof o, &status), 0);
    cr_assert_eq(status, 0);
    scaleout_run_shards(dir, 2, tail);
    merge(dir, merged, 0, (const char *const[]){s0, s1, NULL});
    cJSON *a = harness_load_json(single), *m = harness_load_json(merged);
    cr_assert_eq(harness_num(m, "requests"), 24);
    cr_assert_eq(harness_num(m, "warmup_requests"), 2);
    cr_assert_eq(harness_num(m, "completed"), 24);
    scaleout_assert_same_requests(a, m, 10);
    cr_assert_eq(cJSON_IsTrue(harness_json_path(m, "incomplete")), 0);
    cJSON *ranks = harness_json_path(m, "ranks");
    cr_assert_eq(harness_num(ranks, "count"), 2);
    cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(ranks, "alignment")), "wall-clock");
    cr_assert(cJSON_IsNull(harness_json_path(ranks, "max_offset_uncertainty_ms")), "nothing measured it");
    cr_assert_eq(cJSON_GetArraySize(harness_json_path(ranks, "missing")), 0);
    cr_assert_eq(harness_num(harness_json_path(ranks, "plan"), "concurrency"), 4);
    double requests = 0;
    for (int r = 0; r < 2; r++) {
        char p[32];
        snprintf(p, sizeof p, "per_rank.%d", r);
        const cJSON *e = harness_json_path(ranks, p);
        cr_assert_eq(harness_num(e, "rank"), r);
        requests += harness_num(e, "requests");
        cr_assert_eq(harness_num(e, "threads"), 1);
        cr_assert_geq(harness_num(e, "start_late_ms"), 0);
        cr_assert_lt(harness_num(e, "start_late_ms"), 50, "the shards began at the agreed instant");
    }
    cr_assert_eq(requests, 24, "the shards' requests are the plan's");
    assert_round_trip(merged);
    cJSON_Delete(a);
    cJSON_Delete(m);
    sim_stop(&sim);
}

Test(shard, poisson_shards_merged_send_at_the_single_process_schedule, .timeout = 120)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-shard-XXXXXX", merged[128], s[3][128];
    cr_assert(mkdtemp(dir));
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    for (int i = 0; i < 3; i++)
        snprintf(s[i], sizeof s[i], "%s/s%d.json", dir, i);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "30", "--request-rate", "60",
                          "--seed", "11", "--input-len", "16", "--output-len", "4", "--calibration", "none", NULL};
    scaleout_run_shards(dir, 3, tail);
    merge(dir, merged, 0, (const char *const[]){s[0], s[1], s[2], NULL});
    cJSON *m = harness_load_json(merged);
    cr_assert_eq(harness_num(m, "completed"), 30);
    /* the shards' clocks meet through the wall clock: on one host, exactly up to
     * the reading of the two clocks (µs); the sends themselves are as late as the loops */
    scaleout_assert_schedule(m, 30, 60, 11, 0.05);
    cJSON_Delete(m);
    sim_stop(&sim);
}

Test(shard, a_missing_shard_makes_the_merge_incomplete_and_keeps_the_rest, .timeout = 120)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-shard-XXXXXX", merged[128], s[3][128];
    cr_assert(mkdtemp(dir));
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    for (int i = 0; i < 3; i++)
        snprintf(s[i], sizeof s[i], "%s/s%d.json", dir, i);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "12", "--concurrency", "3",
                          "--input-len", "16", "--output-len", "4", "--calibration", "none", NULL};
    scaleout_run_shards(dir, 3, tail);
    merge(dir, merged, 1, (const char *const[]){s[2], s[0], NULL});
    cJSON *m = harness_load_json(merged), *a0 = harness_load_json(s[0]), *a2 = harness_load_json(s[2]);
    cr_assert(cJSON_IsTrue(harness_json_path(m, "incomplete")));
    const char *why = cJSON_GetStringValue(harness_json_path(m, "incomplete_reason"));
    cr_assert(why && strstr(why, "rank 1 of 3 missing"), "%s", why ? why : "(none)");
    cr_assert_eq(harness_num(harness_json_path(m, "ranks.missing.0"), "rank"), 1);
    cr_assert_eq(harness_num(m, "requests"), 12, "the plan's requests, some never seen");
    double kept = harness_num(a0, "completed") + harness_num(a2, "completed");
    cr_assert_eq(harness_num(m, "completed"), kept, "every surviving record is kept");
    cr_assert_eq(cJSON_GetArraySize(harness_json_path(m, "request_timings")), (int)kept);
    cJSON_Delete(m);
    cJSON_Delete(a0);
    cJSON_Delete(a2);
    /* an artifact that is no shard, or a shard given twice, is refused */
    merge(dir, merged, 1, (const char *const[]){s[0], s[0], NULL});
    sim_stop(&sim);
}

Test(shard, more_shards_than_concurrency_is_a_usage_error_before_any_request)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1", "--concurrency", "2",
                          "--shard", "0/3", "--out", "/tmp/anvil-shard-never.json", NULL};
    char o[4096], e[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 2, "%s", e);
    cr_assert(strstr(e, "3 shards (ranks) each take a share of --concurrency 2"), "%s", e);
    const char *bad[] = {harness_anvil_bin(), "run", "--shard", "3/3", NULL};
    cr_assert_eq(run_cmd_err(bad, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 2);
    cr_assert(strstr(e, "--shard: expected I/N"), "%s", e);
    /* a session's turns wait for their sub-agents, which the split does not keep together */
    const char *agents[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1", "--concurrency", "4",
                            "--agentic-sessions", "4", "--shard", "0/2", "--out", "/tmp/anvil-shard-never.json", NULL};
    cr_assert_eq(run_cmd_err(agents, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 2, "%s", e);
    cr_assert(strstr(e, "agentic sessions are not split over shards"), "%s", e);
}

/* --start-at T ahead says that it waits, and until when, as a past one
 * warns (before: silent until T); no request starts before T. */
Test(shard, a_start_at_ahead_says_it_waits_and_nothing_starts_before_it, .timeout = 60)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char path[64], at[32];
    cr_assert_eq(harness_tmpfile(path, sizeof path), 0);
    struct timeval now;
    struct timespec mono;
    gettimeofday(&now, NULL);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    double unix_now = (double)now.tv_sec + now.tv_usec / 1e6;
    snprintf(at, sizeof at, "%.3f", unix_now + 1.5);
    /* T on CLOCK_MONOTONIC, the clock of the artifact's start_monotonic_ns */
    double t_mono_ns = (double)mono.tv_sec * 1e9 + (double)mono.tv_nsec + (strtod(at, NULL) - unix_now) * 1e9;
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--start-at", at,
                          "--num-prompts", "2", "--input-len", "16", "--output-len", "2", "--calibration",
                          "none", "--out", path, NULL};
    char err[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    time_t secs = (time_t)strtod(at, NULL);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char want[96], iso[32];
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(want, sizeof want, "anvil run: waiting until %s.%s", iso, strchr(at, '.') + 1);
    const char *line = strstr(err, want);
    cr_assert(line, "'%s' not in:\n%s", want, err);
    double wait_s = -1;
    cr_assert(sscanf(strstr(line, "Z ("), "Z (%lf s) for --start-at", &wait_s) == 1 &&
              strstr(line, " s) for --start-at\n"), "%s", line);
    cr_assert(wait_s > 0 && wait_s <= 1.5, "waits %g s of the 1.5 s ahead", wait_s);
    cJSON *a = harness_load_json(path);
    cr_assert_eq(harness_num(a, "completed"), 2);
    for (int i = 0; i < 2; i++) {
        char k[48];
        snprintf(k, sizeof k, "request_timings.%d", i);
        double start = harness_num(harness_json_path(a, k), "start_monotonic_ns");
        /* the clocks' pairing (µs) and the ms of --start-at's text aside */
        cr_assert_geq(start, t_mono_ns - 1e6, "request %d began %.3f ms before --start-at", i,
                      (t_mono_ns - start) / 1e6);
    }
    cJSON_Delete(a);
    unlink(path);
    sim_stop(&sim);
}

/* Two shards of one run on one server: each one's start line gives its own
 * share of the prompts (before: the whole run's "8 prompts"), and the
 * server's tokens beyond this shard's are the other shard's, not "other
 * traffic" (before: every shard warned that other traffic shared the
 * server): the artifact leaves the check out with a note. */
Test(shard, a_shard_counts_its_own_prompts_and_does_not_call_the_other_shards_other_traffic, .timeout = 90)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-shard-XXXXXX", s0[128], s1[128], at[32];
    cr_assert(mkdtemp(dir));
    snprintf(s0, sizeof s0, "%s/s0.json", dir);
    snprintf(s1, sizeof s1, "%s/s1.json", dir);
    struct timeval now;
    gettimeofday(&now, NULL);
    snprintf(at, sizeof at, "%.3f", (double)now.tv_sec + now.tv_usec / 1e6 + 1.5);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "8", "--concurrency", "2", "--input-len",
                          "16", "--output-len", "16", "--calibration", "none", "--start-at", at, NULL};
    const char *a1[32] = {harness_anvil_bin(), "run", "--shard", "1/2", "--out", s1};
    const char *a0[32] = {harness_anvil_bin(), "run", "--shard", "0/2", "--out", s0};
    for (int i = 0; tail[i]; i++)
        a1[6 + i] = a0[6 + i] = tail[i];
    pid_t other = harness_spawn(a1, 1);
    cr_assert_gt(other, 0);
    static char out[65536], err[16384];
    int status, ws;
    cr_assert_eq(run_cmd_err(a0, out, sizeof out, err, sizeof err, &status), 0);
    waitpid(other, &ws, 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "shard 1/2 did not exit 0");
    cr_assert(strstr(err, ", 4 of 8 prompts (shard 0/2) at concurrency 1 of 2,"), "%s", err);
    cJSON *a = harness_load_json(s0);
    const cJSON *cc = harness_json_path(a, "server_metrics.cross_checks");
    cr_assert_not_null(cc, "no server cross-checks in %s", s0);
    /* the case arose: the server made the other shard's tokens too */
    cr_assert_gt(harness_num(cc, "excess_tokens"), 16, "the shards did not overlap");
    cr_assert_null(strstr(out, "other traffic shared it"), "%s", out);
    cr_assert(strstr(err, "note: the server generated") && strstr(err, "tokens more than this shard received: the "
              "other shard of this run shares the server"), "%s", err);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(cc, "other_traffic")), "other_traffic is not known per shard");
    const char *note = cJSON_GetStringValue(cJSON_GetObjectItem(cc, "other_traffic_note"));
    cr_assert(note && strstr(note, "shard 0/2"), "%s", note ? note : "(no note)");
    cJSON_Delete(a);
    unlink(s0);
    unlink(s1);
    rmdir(dir);
    sim_stop(&sim);
}

/* anvil merge DIR... with extra flags; its exit status and stderr. */
static int merge_err(const char *out, const char *flag, const char *value, const char *const inputs[], char *e,
                     size_t ecap)
{
    const char *argv[16] = {harness_anvil_bin(), "merge", "--out", out};
    int k = 4, status;
    if (flag) {
        argv[k++] = flag;
        argv[k++] = value;
    }
    for (int i = 0; inputs[i]; i++)
        argv[k++] = inputs[i];
    argv[k] = NULL;
    char o[16384];
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, e, ecap, &status), 0);
    return status;
}

/* A merge's exit status follows anvil run's rule (README, "Exit status"):
 * more than --max-failure-rate of the requests failed is exit 1 with the
 * counts, as the same run in one process exits. Before, the merge looked
 * only at incompleteness and exited 0. */
Test(shard, a_merge_with_too_many_failures_exits_1_as_the_run_would, .timeout = 120)
{
    struct sim_proc sim;
    const char *faulty[] = {"--ttft-ms", "15", "--itl-ms", "2", "--fail-rate", "0.5", "--fail-status", "500", NULL};
    cr_assert_eq(sim_start_reference(&sim, faulty), 0);
    char dir[] = "/tmp/anvil-shard-XXXXXX", merged[128], single[128], s0[128], s1[128], e[4096];
    cr_assert(mkdtemp(dir));
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    snprintf(single, sizeof single, "%s/single.json", dir);
    snprintf(s0, sizeof s0, "%s/s0.json", dir);
    snprintf(s1, sizeof s1, "%s/s1.json", dir);
    /* the shards themselves let every failure pass: the merge judges the whole run */
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "16", "--concurrency", "4",
                          "--input-len", "16", "--output-len", "4", "--calibration", "none",
                          "--max-failure-rate", "1", NULL};
    scaleout_run_shards(dir, 2, tail);
    const char *const inputs[] = {s0, s1, NULL};
    int status = merge_err(merged, NULL, NULL, inputs, e, sizeof e);
    cJSON *m = harness_load_json(merged);
    int failed = cJSON_GetArraySize(harness_json_path(m, "failures"));
    int completed = cJSON_GetArraySize(harness_json_path(m, "request_timings"));
    cr_assert_gt(failed * 20, 16, "the simulator failed more than 5%% of the requests (%d)", failed);
    cr_assert_eq(status, 1, "%s", e);
    char want[128];
    snprintf(want, sizeof want, "%d of %d requests failed", failed, failed + completed);
    if (completed)
        cr_assert(strstr(e, want) && strstr(e, "--max-failure-rate 0.05"), "want '%s' in: %s", want, e);
    else
        cr_assert(strstr(e, "no request completed"), "%s", e);
    cr_assert_eq(merge_err(merged, "--max-failure-rate", "1", inputs, e, sizeof e), completed ? 0 : 1, "%s", e);
    /* the same run in one process: the same rule */
    const char *argv[32] = {harness_anvil_bin(), "run", "--out", single};
    int k = 4;
    for (int i = 0; tail[i] && strcmp(tail[i], "--max-failure-rate"); i++)
        argv[k++] = tail[i];
    argv[k] = NULL;
    char o[16384];
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 1, "%s", e);
    cJSON_Delete(m);
    sim_stop(&sim);
}

/* Shards none of whose requests completed each exit 1 (nothing measured);
 * their merge did exit 0. */
Test(shard, a_merge_where_no_request_completed_exits_1, .timeout = 120)
{
    struct sim_proc sim;
    const char *faulty[] = {"--fail-rate", "1", "--fail-status", "500", NULL};
    cr_assert_eq(sim_start_reference(&sim, faulty), 0);
    char dir[] = "/tmp/anvil-shard-XXXXXX", merged[128], s0[128], s1[128], e[4096];
    cr_assert(mkdtemp(dir));
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    snprintf(s0, sizeof s0, "%s/s0.json", dir);
    snprintf(s1, sizeof s1, "%s/s1.json", dir);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "6", "--concurrency", "2",
                          "--input-len", "16", "--output-len", "4", "--calibration", "none",
                          "--max-failure-rate", "1", NULL};
    scaleout_run_shards_exit(dir, 2, tail, 1);
    const char *const inputs[] = {s0, s1, NULL};
    cr_assert_eq(merge_err(merged, "--max-failure-rate", "1", inputs, e, sizeof e), 1, "%s", e);
    cr_assert(strstr(e, "no request completed"), "%s", e);
    cJSON *m = harness_load_json(merged);
    cr_assert_eq(harness_num(m, "completed"), 0);
    cr_assert_eq(cJSON_GetArraySize(harness_json_path(m, "failures")), 6);
    cJSON_Delete(m);
    sim_stop(&sim);
}
