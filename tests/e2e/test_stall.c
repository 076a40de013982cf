/* test_stall.c — a server that stops answering (SIGSTOP) ends the run
 * within --stall-timeout-s + 5 s: exit 1, an incomplete artifact with
 * incomplete_reason "server_stalled", one clear line, the requests the
 * server had finished kept with their measurements (checked against its
 * trace); silence shorter than the timeout (a long prefill, idle gaps
 * between open-loop sends) does not end it. */
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int count_lines(const char *path)
{
    char *text = harness_read_file(path, NULL);
    int n = 0;
    for (const char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

/* Waits up to limit_ms for child pid; returns its status, or -1 (then it
 * is killed and reaped) when it ran longer. */
static int wait_for(pid_t pid, long limit_ms)
{
    int st;
    for (long i = 0; i < limit_ms / 10; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        harness_sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* Failures whose message contains what. */
static int failures_saying(const cJSON *a, const char *what)
{
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(a, "failures"))
        n += strstr(cJSON_GetStringValue(cJSON_GetObjectItem(f, "message")), what) != NULL;
    return n;
}

/* Every request the server finished before it was stopped is in the
 * artifact, completed, as the trace has it; nothing completed that the
 * server had not finished by then. */
static void check_kept(const cJSON *a, const char *trace, double t_stop)
{
    enum { CAP = 4000 };
    static struct harness_traced t[CAP];
    harness_read_trace(trace, t, CAP);
    static bool done[CAP];
    memset(done, 0, sizeof done);
    const cJSON *r;
    int kept = 0;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings")) {
        int i = (int)harness_num(r, "request_index");
        cr_assert(i >= 0 && i < CAP);
        done[i] = true;
        kept++;
        cr_assert(!isnan(t[i].finished), "request %d completed but the server never finished it", i);
        cr_assert_lt(t[i].finished, t_stop + 5e6, "request %d completed, finished by the server %.1f ms after "
                     "it was stopped", i, (t[i].finished - t_stop) / 1e6);
        cr_assert_eq(harness_num(r, "output_tokens"), 40, "request %d", i);
        /* its measurements are the stream's: the end within the server's last write and a margin */
        double end = harness_num(r, "start_monotonic_ns") + harness_num(r, "e2e_ms") * 1e6;
        cr_assert(end >= t[i].finished - 1e6 && end < t[i].finished + 50e6,
                  "request %d: client end %.3f ms from the server's last write", i, (end - t[i].finished) / 1e6);
        double ttft = harness_num(r, "start_monotonic_ns") + harness_num(r, "ttft_ms") * 1e6;
        cr_assert(ttft >= t[i].first && ttft < t[i].first + 50e6,
                  "request %d: first token %.3f ms from the server's write", i, (ttft - t[i].first) / 1e6);
    }
    int finished_before = 0;
    for (int i = 0; i < CAP; i++) {
        if (isnan(t[i].finished) || t[i].finished >= t_stop - 20e6)
            continue;
        finished_before++;
        cr_assert(done[i], "request %d, finished by the server %.1f ms before the stop, was not kept", i,
                  (t_stop - t[i].finished) / 1e6);
    }
    cr_assert_geq(kept, 8, "only %d requests completed before the stop", kept);
    cr_assert_geq(kept, finished_before);
}

/* A run of `threads` loops at concurrency 4, the simulator stopped once
 * at least 8 requests have ended; --stall-timeout-s 2 against the default
 * --idle-timeout-s 120. */
static void stopped_simulator(const char *threads)
{
    char trace[64], art[64], errf[64], cmd[1024];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(errf, sizeof errf), 0);
    struct sim_proc sim;
    /* 40 tokens at 10 ms: ~0.4 s a request */
    const char *sa[] = {"--ttft-ms", "10", "--itl-ms", "10", "--trace", trace, NULL};
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    snprintf(cmd, sizeof cmd, "exec %s run --base-url %s --concurrency 4 --num-prompts 2000 --threads %s "
             "--input-len 16 --output-len 40 --calibration none --stall-timeout-s 2 --out %s 2>%s",
             harness_anvil_bin(), sim.base_url, threads, art, errf);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    pid_t pid = harness_spawn(argv, 0);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 3000 && count_lines(trace) < 8; i++)
        harness_sleep_ms(10);
    cr_assert_geq(count_lines(trace), 8, "the run never got going");
    double t_stop = mono_ns();
    kill(sim.pid, SIGSTOP);
    int st = wait_for(pid, 7000);
    double took_s = (mono_ns() - t_stop) / 1e9;
    kill(sim.pid, SIGCONT);
    sim_stop(&sim);
    char *err = harness_read_file(errf, NULL);
    cr_assert(err);
    cr_assert_neq(st, -1, "still running 7 s (--stall-timeout-s 2 + 5) after the server stopped; stderr:\n%s", err);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit %d; stderr:\n%s", WEXITSTATUS(st), err);
    cr_assert(strstr(err, "anvil: server stalled: no byte on any of 4 in-flight requests for 2."),
              "stderr:\n%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert(a, "no artifact; stderr:\n%s", err);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "incomplete")));
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(a, "incomplete_reason")), "server_stalled");
    const cJSON *s = cJSON_GetObjectItem(a, "server_stalled");
    cr_assert(cJSON_IsObject(s), "no server_stalled block");
    cr_assert_eq(harness_num(s, "stall_timeout_s"), 2);
    cr_assert_geq(harness_num(s, "silent_s"), 2);
    cr_assert_eq(harness_num(s, "in_flight"), 4);
    /* the requests in flight failed, naming the stall; none timed out on its own (120 s) */
    cr_assert_eq(failures_saying(a, "server stalled"), 4);
    cr_assert_eq(harness_num(a, "failed"), 4);
    cr_assert_gt(harness_num(a, "not_sent"), 0);
    check_kept(a, trace, t_stop);
    cr_assert_lt(took_s, 7);
    free(err);
    cJSON_Delete(a);
    unlink(art);
    unlink(errf);
    unlink(trace);
}

Test(stall, stopped_simulator_ends_the_run_incomplete, .timeout = 90)
{
    stopped_simulator("1");
}

/* The silence is the server's over both loops: each loop's own streams
 * are not enough to say it. */
Test(stall, stopped_simulator_ends_a_two_thread_run, .timeout = 90)
{
    stopped_simulator("2");
}

/* The stall timeout defaults to the idle timeout, and requests that time
 * out one after another (idle 1 s) add up to the stall (2.5 s) even when
 * none is in flight between them: at concurrency 1 each timed-out request
 * is followed by the next. */
Test(stall, timed_out_requests_add_up_to_a_stall, .timeout = 90)
{
    char trace[64], art[64], errf[64], cmd[1024];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(errf, sizeof errf), 0);
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "10", "--itl-ms", "10", "--trace", trace, NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    snprintf(cmd, sizeof cmd, "exec %s run --base-url %s --concurrency 1 --num-prompts 2000 --input-len 16 "
             "--output-len 40 --calibration none --idle-timeout-s 1 --stall-timeout-s 2.5 --out %s 2>%s",
             harness_anvil_bin(), sim.base_url, art, errf);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    pid_t pid = harness_spawn(argv, 0);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 3000 && count_lines(trace) < 2; i++)
        harness_sleep_ms(10);
    cr_assert_geq(count_lines(trace), 2, "the run never got going");
    double t_stop = mono_ns();
    kill(sim.pid, SIGSTOP);
    int st = wait_for(pid, 7500);
    double took_s = (mono_ns() - t_stop) / 1e9;
    kill(sim.pid, SIGCONT);
    sim_stop(&sim);
    char *err = harness_read_file(errf, NULL);
    cr_assert_neq(st, -1, "still running 7.5 s after the server stopped; stderr:\n%s", err);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit %d; stderr:\n%s", WEXITSTATUS(st), err);
    cr_assert_geq(took_s, 2.4, "ended %.2f s after the stop, before 2.5 s of silence", took_s);
    cJSON *a = harness_load_json(art);
    cr_assert(a, "no artifact; stderr:\n%s", err);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(a, "incomplete_reason")), "server_stalled");
    cr_assert_geq(failures_saying(a, "idle timeout"), 2, "two requests timed out on their own first");
    cr_assert_eq(failures_saying(a, "idle timeout") + failures_saying(a, "server stalled"), harness_num(a, "failed"));
    cr_assert_geq(harness_num(a, "completed"), 2);
    free(err);
    cJSON_Delete(a);
    unlink(art);
    unlink(errf);
    unlink(trace);
}

/* --stall-timeout-s 0 turns the rule off: against a stopped server the
 * requests time out wave after wave, each on its own idle timer and on
 * time — also those sent after the stop, on connections the stopped
 * server's kernel accepted (the wait is the waves', not late timers). */
Test(stall, zero_turns_it_off_and_idle_timeouts_fire_on_time_wave_after_wave, .timeout = 90)
{
    char trace[64], art[64], errf[64], cmd[1024];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(errf, sizeof errf), 0);
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "10", "--itl-ms", "10", "--trace", trace, NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    snprintf(cmd, sizeof cmd, "exec %s run --base-url %s --concurrency 2 --num-prompts 10 --input-len 16 "
             "--output-len 40 --calibration none --idle-timeout-s 1 --stall-timeout-s 0 --out %s 2>%s",
             harness_anvil_bin(), sim.base_url, art, errf);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    pid_t pid = harness_spawn(argv, 0);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 3000 && count_lines(trace) < 2; i++)
        harness_sleep_ms(10);
    cr_assert_geq(count_lines(trace), 2, "the run never got going");
    kill(sim.pid, SIGSTOP);
    int st = wait_for(pid, 30000);
    kill(sim.pid, SIGCONT);
    sim_stop(&sim);
    char *err = harness_read_file(errf, NULL);
    cr_assert_neq(st, -1, "still running 30 s after the stop; stderr:\n%s", err);
    cr_assert(!strstr(err, "stalled"), "stderr:\n%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert(a, "no artifact; stderr:\n%s", err);
    cr_assert_null(cJSON_GetObjectItem(a, "server_stalled"));
    cr_assert_eq(harness_num(a, "not_sent"), 0, "every request was sent");
    int failed = (int)harness_num(a, "failed"), waited = 0;
    cr_assert_geq(failed, 4, "at least two waves timed out");
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(a, "failures")) {
        cr_assert(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(f, "message")), "idle timeout"));
        /* nothing arrived on those waiting for a response: their silence is their whole life */
        bool none = !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "phase")), "before_response");
        double ms = harness_num(f, "elapsed_ms");
        cr_assert(ms >= 1000 && (!none || ms < 1300), "request %g: idle timeout of 1 s fired after %.0f ms",
                  harness_num(f, "request_index"), ms);
        waited += none;
    }
    cr_assert_geq(waited, 2, "requests sent after the stop timed out too");
    free(err);
    cJSON_Delete(a);
    unlink(art);
    unlink(errf);
    unlink(trace);
}

/* Silence shorter than the timeout is not a stall: each request waits 1 s
 * for its headers and 1.2 s for its first token, of the 1.5 s allowed, and
 * the open-loop sends 2.5 s apart leave nothing in flight for longer than
 * the timeout between them (which is no silence of the server's: counted
 * from the previous reply's last byte, the second request would stall). */
Test(stall, silent_prefills_and_gaps_shorter_than_the_timeout_do_not_stall, .timeout = 90)
{
    char art[64], errf[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(errf, sizeof errf), 0);
    struct sim_proc sim;
    const char *sa[] = {"--slow-headers-ms", "1000", "--ttft-ms", "1200", "--itl-ms", "10", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--request-rate", "0.4",
                          "--burstiness", "inf", "--num-prompts", "3", "--input-len", "16", "--output-len", "5",
                          "--calibration", "none", "--stall-timeout-s", "1.5", "--out", art, NULL};
    static char out[65536], err[65536];
    int st;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &st), 0);
    sim_stop(&sim);
    cr_assert_eq(st, 0, "exit %d; stderr:\n%s", st, err);
    cr_assert(!strstr(err, "stalled"), "stderr:\n%s", err);
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    cr_assert_eq(harness_num(a, "completed"), 3);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "incomplete")));
    cr_assert_null(cJSON_GetObjectItem(a, "server_stalled"));
    /* the prefills were as silent as planned: the test says what it claims */
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings"))
        cr_assert_geq(harness_num(r, "ttft_ms"), 1200);
    cJSON_Delete(a);
    unlink(art);
    unlink(errf);
}

static void tmpdir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/anvil-stall-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

static cJSON *load_in(const char *dir, const char *rel)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return harness_load_json(p);
}

/* A sweep whose server stalls in its second case: that round ends
 * incomplete (the flag reaches it after "--"), the sweep goes on, and its
 * matrix says which round did not complete and why. */
Test(stall, a_stalled_sweep_round_is_reported_incomplete, .timeout = 120)
{
    char trace[64], dir[64], round_glob[128];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    tmpdir(dir, sizeof dir);
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "10", "--itl-ms", "10", "--trace", trace, NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    /* case c1: 8 requests one after another (~3.3 s); case c2: 8 two at a time */
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "1,2",
                          "--input-len", "16", "--output-len", "40", "--rounds", "1", "--num-prompts", "8",
                          "--out-dir", dir, "--", "--calibration", "none", "--stall-timeout-s", "1", NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 6000 && count_lines(trace) < 10; i++)
        harness_sleep_ms(10);
    cr_assert_geq(count_lines(trace), 10, "the second case never got going");
    kill(sim.pid, SIGSTOP);
    int st = wait_for(pid, 30000);
    kill(sim.pid, SIGCONT);
    sim_stop(&sim);
    cr_assert_neq(st, -1, "the sweep still ran 30 s after its server stopped");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit status %d", st);
    cJSON *m = load_in(dir, "matrix.json");
    cr_assert(m, "no matrix");
    cr_assert_neq(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "status")), "PASS"), 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(m, "rows")), 1, "the first case's round is kept");
    char *text = cJSON_PrintUnformatted(m);
    cr_assert(strstr(text, "did not complete (incomplete: server_stalled)"), "%s", text);
    free(text);
    cJSON_Delete(m);
    glob_t g;
    snprintf(round_glob, sizeof round_glob, "%s/rounds/target/*-c2/round-1.json", dir);
    cr_assert_eq(glob(round_glob, 0, NULL, &g), 0, "no artifact of the stalled round");
    cJSON *round = harness_load_json(g.gl_pathv[0]);
    globfree(&g);
    cr_assert(round, "no artifact of the stalled round");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(round, "incomplete_reason")), "server_stalled");
    cJSON_Delete(round);
    rmtree(dir);
    unlink(trace);
}

static bool file_says(const char *path, const char *what)
{
    char *text = harness_read_file(path, NULL);
    bool yes = text && strstr(text, what);
    free(text);
    return yes;
}

/* anvil decode: the cell whose server stalls is not measured, and the
 * matrix stops there, incomplete with the reason; the cell before it is
 * kept. */
Test(stall, a_stalled_decode_cell_leaves_the_matrix_incomplete, .timeout = 120)
{
    char dir[64], events[128];
    tmpdir(dir, sizeof dir);
    snprintf(events, sizeof events, "%s/events.log", dir);
    struct sim_proc sim;
    const char *sa[] = {"--flavor", "vllm", "--max-model-len", "4096", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,2",
                          "--contexts", "0", "--duration", "3", "--max-tokens", "1024", "--ready-stable-s", "0.2",
                          "--cell-warmup-timeout-s", "3", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--stall-timeout-s", "1", "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    /* the second cell has begun (its calibration is the first's, cached): its streams run */
    for (int i = 0; i < 6000 && !file_says(events, "cell start C=2"); i++)
        harness_sleep_ms(10);
    cr_assert(file_says(events, "cell start C=2"), "the second cell never started");
    harness_sleep_ms(1500);
    double t_stop = mono_ns();
    kill(sim.pid, SIGSTOP);
    int st = wait_for(pid, 20000);
    double took_s = (mono_ns() - t_stop) / 1e9;
    kill(sim.pid, SIGCONT);
    sim_stop(&sim);
    cr_assert_neq(st, -1, "anvil decode still ran 20 s after its server stopped");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit status %d", st);
    cr_assert_lt(took_s, 6, "ended %.1f s after the stop (--stall-timeout-s 1)", took_s);
    cJSON *doc = load_in(dir, "decode.json");
    cr_assert(doc, "no decode.json");
    cr_assert(cJSON_IsTrue(harness_json_path(doc, "metadata.incomplete")));
    const char *why = cJSON_GetStringValue(harness_json_path(doc, "metadata.incomplete_reason"));
    cr_assert(why && !strncmp(why, "server_stalled", 14), "incomplete_reason %s", why ? why : "null");
    cr_assert_eq(harness_num(cJSON_GetObjectItem(doc, "metadata"), "cells_done"), 1);
    cr_assert(file_says(events, "cell incomplete C=2 ctx=0: server_stalled"));
    cJSON_Delete(doc);
    cJSON *bench = load_in(dir, "cells/c2-ctx0.bench.json");
    cr_assert(bench, "no benchmark artifact of the cell");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(bench, "incomplete_reason")), "server_stalled");
    cJSON_Delete(bench);
    rmtree(dir);
}

/* A burst (anvil decode --run-burst) whose server stalls after some of its
 * requests completed is not written as measured: the phase stops there,
 * the matrix incomplete with the reason. */
Test(stall, a_stalled_burst_is_not_measured, .timeout = 120)
{
    char dir[64], events[128];
    tmpdir(dir, sizeof dir);
    snprintf(events, sizeof events, "%s/events.log", dir);
    struct sim_proc sim;
    const char *sa[] = {"--flavor", "vllm", "--max-model-len", "4096", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    const char *argv[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1",
                          "--contexts", "0", "--duration", "1", "--max-tokens", "64", "--ready-stable-s", "0.2",
                          "--cell-warmup-timeout-s", "3", "--decode-warmup-s", "0", "--telemetry", "off",
                          "--run-burst", "--burst-requests-per-concurrency", "40", "--stall-timeout-s", "1",
                          "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    for (int i = 0; i < 6000 && !file_says(events, "burst start C=1"); i++)
        harness_sleep_ms(10);
    cr_assert(file_says(events, "burst start C=1"), "the burst never started");
    harness_sleep_ms(1500);     /* some of its 40 requests one after another have completed */
    kill(sim.pid, SIGSTOP);
    int st = wait_for(pid, 20000);
    kill(sim.pid, SIGCONT);
    sim_stop(&sim);
    cr_assert_neq(st, -1, "anvil decode still ran 20 s after its server stopped");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "exit status %d", st);
    cr_assert(file_says(events, "burst failed C=1 ctx=0: server_stalled"));
    cJSON *doc = load_in(dir, "decode.json");
    cr_assert(doc, "no decode.json");
    const char *why = cJSON_GetStringValue(harness_json_path(doc, "metadata.incomplete_reason"));
    cr_assert(why && !strncmp(why, "server_stalled", 14), "incomplete_reason %s", why ? why : "null");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "burst_results")), 0);
    cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(doc, "metadata.burst_e2e_status")), "incomplete");
    cJSON_Delete(doc);
    rmtree(dir);
}
