/* test_mpi.c — `mpirun -np N anvil run` (the MPI build, make test-mpi):
 * 2 and 3 ranks on this host against `anvil sim` make the artifact a single
 * process makes of the same plan; a Poisson plan's merged send times are
 * the schedule; the clocks of one host come out at 0 within their stated
 * uncertainty; shards merged with `anvil merge` give the MPI run's artifact;
 * a rank killed mid-run leaves an incomplete artifact naming it, with every
 * other rank's records, and rank 0 exits non-zero.
 *
 * The ranks run with ASan but without LeakSanitizer: Open MPI keeps memory
 * in plugins it has unloaded by exit, which no suppression can name. The
 * merge and shard code they run is leak-checked by suite shard. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"
#include "scaleout.h"

static const char *const sim_args[] = {"--ttft-ms", "15", "--itl-ms", "2", NULL};

/* mpirun -np n [extra] [wrapper] anvil run <tail> --out out; returns mpirun's status. */
static int mpirun(int n, const char *extra, const char *wrapper, const char *const tail[], const char *out,
                  char *err, size_t errcap)
{
    char np[16];
    snprintf(np, sizeof np, "%d", n);
    const char *argv[64] = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "ASAN_OPTIONS=detect_leaks=0",
                            "-np", np};
    int k = 7;
    if (extra)
        argv[k++] = extra;
    if (wrapper)
        argv[k++] = wrapper;
    argv[k++] = harness_anvil_bin();
    argv[k++] = "run";
    for (int i = 0; tail[i]; i++)
        argv[k++] = tail[i];
    argv[k++] = "--out";
    argv[k++] = out;
    argv[k] = NULL;
    static char o[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, err, errcap, &status), 0, "mpirun did not start");
    return status;
}

/* Each rank's offset is 0 within its uncertainty (one host: one clock), and
 * the block states the largest. */
static void assert_offsets(const cJSON *art, int n)
{
    const cJSON *ranks = harness_json_path(art, "ranks");
    cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(ranks, "alignment")), "mpi-ping-pong");
    cr_assert_eq(harness_num(ranks, "count"), n);
    double worst = harness_num(ranks, "max_offset_uncertainty_ms");
    for (int r = 0; r < n; r++) {
        char p[32];
        snprintf(p, sizeof p, "per_rank.%d", r);
        const cJSON *e = harness_json_path(ranks, p);
        double off = harness_num(e, "clock_offset_ms"), unc = harness_num(e, "clock_offset_uncertainty_ms");
        cr_assert_eq(harness_num(e, "rank"), r);
        cr_assert(fabs(off) <= unc, "rank %d: offset %.6f ms outside ± %.6f ms of 0", r, off, unc);
        cr_assert_leq(unc, worst);
        cr_assert_lt(unc, 1, "rank %d: a round trip on one host under 2 ms (%.6f)", r, unc);
    }
}

static void dir_path(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

Test(mpi, two_and_three_ranks_equal_the_single_process_run, .timeout = 180)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-mpi-XXXXXX", single[128], out[128], err[16384];
    cr_assert(mkdtemp(dir));
    dir_path(single, sizeof single, dir, "single.json");
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "24", "--concurrency", "6",
                          "--input-len", "32", "--output-len", "8", NULL};
    const char *argv[32] = {harness_anvil_bin(), "run", "--out", single};
    for (int i = 0; tail[i]; i++)
        argv[4 + i] = tail[i];
    int status;
    char o[16384];
    cr_assert_eq(run_cmd(argv, o, sizeof o, &status), 0);
    cr_assert_eq(status, 0);
    cJSON *a = harness_load_json(single);
    for (int n = 2; n <= 3; n++) {
        snprintf(out, sizeof out, "%s/np%d.json", dir, n);
        cr_assert_eq(mpirun(n, NULL, NULL, tail, out, err, sizeof err), 0, "%s", err);
        cJSON *m = harness_load_json(out);
        scaleout_assert_same_requests(a, m, 10);
        cr_assert_not(cJSON_IsTrue(harness_json_path(m, "incomplete")));
        cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(m, "calibration.source")), "cache",
                         "every rank takes rank 0's calibration");
        assert_offsets(m, n);
        cJSON_Delete(m);
    }
    cJSON_Delete(a);
    sim_stop(&sim);
}

Test(mpi, poisson_merged_send_times_are_the_single_process_schedule, .timeout = 120)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-mpi-XXXXXX", out[128], err[16384];
    cr_assert(mkdtemp(dir));
    dir_path(out, sizeof out, dir, "poisson.json");
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "30", "--request-rate", "60", "--seed", "5",
                          "--input-len", "16", "--output-len", "4", "--calibration", "none", NULL};
    cr_assert_eq(mpirun(3, NULL, NULL, tail, out, err, sizeof err), 0, "%s", err);
    cJSON *m = harness_load_json(out);
    cr_assert_eq(harness_num(m, "completed"), 30);
    /* on rank 0's timeline each send is where the schedule puts it, up to the offsets' uncertainty */
    double unc = harness_num(harness_json_path(m, "ranks"), "max_offset_uncertainty_ms");
    scaleout_assert_schedule(m, 30, 60, 5, 2 * unc + 0.01);
    cJSON_Delete(m);
    sim_stop(&sim);
}

Test(mpi, shards_merged_give_the_mpi_runs_artifact, .timeout = 120)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-mpi-XXXXXX", out[128], merged[128], s0[128], s1[128], err[16384];
    cr_assert(mkdtemp(dir));
    dir_path(out, sizeof out, dir, "mpi.json");
    dir_path(merged, sizeof merged, dir, "merged.json");
    dir_path(s0, sizeof s0, dir, "s0.json");
    dir_path(s1, sizeof s1, dir, "s1.json");
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "20", "--concurrency", "4",
                          "--input-len", "16", "--output-len", "6", "--calibration", "none", NULL};
    cr_assert_eq(mpirun(2, NULL, NULL, tail, out, err, sizeof err), 0, "%s", err);
    scaleout_run_shards(dir, 2, tail);
    const char *margv[] = {harness_anvil_bin(), "merge", s0, s1, "--out", merged, NULL};
    int status;
    char o[16384];
    cr_assert_eq(run_cmd(margv, o, sizeof o, &status), 0);
    cr_assert_eq(status, 0);
    cJSON *m = harness_load_json(out), *g = harness_load_json(merged);
    scaleout_assert_same_requests(m, g, 10);
    const char *same[] = {"ranks.count", "ranks.plan.num_prompts", "ranks.plan.concurrency", "ranks.per_rank.0.requests",
                          "ranks.per_rank.1.requests", "warmup_requests", "max_tokens"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++)
        cr_assert_eq(cJSON_GetNumberValue(harness_json_path(m, same[i])), cJSON_GetNumberValue(harness_json_path(g, same[i])),
                     "%s", same[i]);
    cJSON_Delete(m);
    cJSON_Delete(g);
    sim_stop(&sim);
}

Test(mpi, a_killed_rank_leaves_an_incomplete_artifact_with_the_rest, .timeout = 120)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-mpi-XXXXXX", out[128], wrap[128], err[16384];
    cr_assert(mkdtemp(dir));
    dir_path(out, sizeof out, dir, "killed.json");
    dir_path(wrap, sizeof wrap, dir, "wrap.sh");
    /* rank 1 is killed (its own process, by pid) once the load runs: a
     * journal holds two requests (every rank starts at the same instant).
     * Each rank's own exit status is kept, since mpirun --enable-recovery
     * passes on none. */
    FILE *f = fopen(wrap, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\n"
               "if [ \"$OMPI_COMM_WORLD_RANK\" != 1 ]; then \"$@\"; echo $? > %s/rc.$OMPI_COMM_WORLD_RANK; exit 0; fi\n"
               "\"$@\" & p=$!\n"
               "i=0; while [ $i -lt 1500 ]; do\n"
               "  for j in %s/.killed.ranks/*.requests.jsonl; do [ -f \"$j\" ] && [ $(wc -l < \"$j\") -ge 3 ] && break 2; done\n"
               "  sleep 0.02; i=$((i+1))\n"
               "done\n"
               "kill -9 $p; wait $p; echo $? > %s/rc.1\n", dir, dir, dir);
    fclose(f);
    chmod(wrap, 0700);
    const char *tail[] = {"--base-url", sim.base_url, "--num-prompts", "90", "--concurrency", "3",
                          "--input-len", "16", "--output-len", "30", "--calibration", "none", "--rank-timeout", "2", NULL};
    mpirun(3, "--enable-recovery", wrap, tail, out, err, sizeof err);
    char rc[3][160];
    int codes[3];
    for (int r = 0; r < 3; r++) {
        snprintf(rc[r], sizeof rc[r], "%s/rc.%d", dir, r);
        char *t = harness_read_file(rc[r], NULL);
        cr_assert(t, "rank %d left no status: %s", r, err);
        codes[r] = atoi(t);
        free(t);
    }
    cr_assert_eq(codes[1], 137, "rank 1 was killed");
    cr_assert_eq(codes[0], 1, "rank 0 exits non-zero for an incomplete run");
    cr_assert_eq(codes[2], 0, "rank 2's own shard is whole");
    cJSON *m = harness_load_json(out);
    cr_assert(cJSON_IsTrue(harness_json_path(m, "incomplete")));
    const char *why = cJSON_GetStringValue(harness_json_path(m, "incomplete_reason"));
    cr_assert(why && strstr(why, "rank 1 of 3 missing"), "%s", why ? why : "(none)");
    cr_assert_eq(harness_num(harness_json_path(m, "ranks.missing.0"), "rank"), 1);
    char s0[160], s2[160];
    snprintf(s0, sizeof s0, "%s/.killed.ranks/rank0.json", dir);
    snprintf(s2, sizeof s2, "%s/.killed.ranks/rank2.json", dir);
    cJSON *a0 = harness_load_json(s0), *a2 = harness_load_json(s2);
    double kept = harness_num(a0, "completed") + harness_num(a2, "completed");
    cr_assert_eq(kept, 60, "ranks 0 and 2 finished their shares");
    cr_assert_eq(harness_num(m, "completed"), kept, "every record of the surviving ranks is kept");
    cr_assert_eq(harness_num(m, "requests"), 90);
    cJSON_Delete(a0);
    cJSON_Delete(a2);
    cJSON_Delete(m);
    sim_stop(&sim);
}

Test(mpi, a_sweep_launcher_makes_every_round_one_run_over_the_ranks, .timeout = 120)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[] = "/tmp/anvil-mpi-XXXXXX", out[128], round[256], err[16384];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/sweep", dir);
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "2,4",
                          "--input-len", "16", "--output-len", "4", "--rounds", "1", "--num-prompts", "8",
                          "--out-dir", out, "--launcher",
                          "mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0 -np 2", NULL};
    char o[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    const char *cases[] = {"short-16-4-c2", "short-16-4-c4"};
    for (int i = 0; i < 2; i++) {
        snprintf(round, sizeof round, "%s/rounds/target/%s/round-1.json", out, cases[i]);
        cJSON *r = harness_load_json(round);
        cr_assert_eq(harness_num(r, "completed"), 8);
        cr_assert_eq(harness_num(harness_json_path(r, "ranks"), "count"), 2, "%s", round);
        cJSON_Delete(r);
    }
    cJSON *m = harness_load_json(strcat(out, "/matrix.json"));
    cr_assert_eq(cJSON_GetArraySize(harness_json_path(m, "rows")), 2, "one row per round: the shards are not rounds");
    cJSON_Delete(m);
    sim_stop(&sim);
}

/* Rank 0 exits by anvil run's rule (README, "Exit status"): a --duration
 * window whose streams all outlast it is measured by the window's tokens,
 * exit 0 as in one process (before: 1, rank 0 asked for a completed
 * request). */
Test(mpi, a_window_whose_streams_outlast_it_exits_0_as_one_process_does, .timeout = 120)
{
    struct sim_proc sim;
    const char *slow[] = {"--ttft-ms", "15", "--itl-ms", "20", NULL};
    cr_assert_eq(sim_start_reference(&sim, slow), 0);
    char dir[] = "/tmp/anvil-mpi-XXXXXX", single[128], out[128], err[16384];
    cr_assert(mkdtemp(dir));
    dir_path(single, sizeof single, dir, "single.json");
    dir_path(out, sizeof out, dir, "np2.json");
    /* 500 tokens at 20 ms each: no stream ends inside the 1 s window */
    const char *tail[] = {"--base-url", sim.base_url, "--duration", "1", "--concurrency", "2", "--input-len", "16",
                          "--output-len", "500", "--calibration", "none", NULL};
    const char *argv[32] = {harness_anvil_bin(), "run", "--out", single};
    for (int i = 0; tail[i]; i++)
        argv[4 + i] = tail[i];
    int status;
    char o[16384];
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert_eq(mpirun(2, NULL, NULL, tail, out, err, sizeof err), 0, "%s", err);
    cJSON *m = harness_load_json(out);
    cr_assert_eq(harness_num(m, "completed"), 0, "the case this test is about: no request completed");
    cr_assert_gt(harness_num(harness_json_path(m, "duration_mode"), "tokens_in_window"), 0, "%s", err);
    cJSON_Delete(m);
    sim_stop(&sim);
}

/* More ranks than --concurrency is a usage error before any request:
 * exit 2, as anvil run --shard says it (before: 1). */
Test(mpi, more_ranks_than_concurrency_is_a_usage_error, .timeout = 60)
{
    const char *tail[] = {"--base-url", "http://127.0.0.1:9/v1", "--concurrency", "2", NULL};
    char err[16384];
    int status = mpirun(3, NULL, NULL, tail, "/tmp/anvil-mpi-never.json", err, sizeof err);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "3 shards (ranks) each take a share of --concurrency 2"), "%s", err);
}
