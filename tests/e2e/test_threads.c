/* test_threads.c — the thread count changes nothing but who does the work:
 * the same plan with 1 and 2 measuring threads gives the same requests,
 * the same token counts and the same artifact shape, and an open-loop
 * plan's send times are the same schedule. Not timed. */
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
#include <curl/curl.h>

#include "harness.h"
#include "load/driver.h"
#include "openai/request.h"

/* Runs `anvil run` against a fresh simulator with run_args and --threads
 * threads; returns the artifact. */
static cJSON *run_with_threads(const char *const run_args[], const char *threads)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[64] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--out", art,
                            "--threads", threads};
    int n = 8;
    for (int i = 0; run_args[i]; i++)
        argv[n++] = run_args[i];
    argv[n] = NULL;
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "anvil run --threads %s exited %d:\n%s", threads, status, out);
    char said[64];
    snprintf(said, sizeof said, "%s measuring thread%s", threads, strcmp(threads, "1") ? "s" : "");
    cr_assert(strstr(err, said), "the run does not say '%s':\n%s", said, err);
    char *text = harness_read_file(art, NULL);
    cJSON *a = cJSON_Parse(text);
    free(text);
    unlink(art);
    cr_assert(a);
    return a;
}

/* The same keys at every level (values aside; arrays by their first item).
 * What the run measured may differ between two runs, the artifact's shape
 * may not: a figure undefined in one (null: e.g. a decode rate of a
 * request whose tokens one read took at once) is a number in the other,
 * and a list of what happened (invariant examples, failures) may be empty
 * in one of them. */
static void same_shape(const cJSON *a, const cJSON *b, const char *path)
{
    if ((cJSON_IsNull(a) && cJSON_IsNumber(b)) || (cJSON_IsNumber(a) && cJSON_IsNull(b)))
        return;
    /* true and false are one type here (cJSON gives them two) */
    int ta = cJSON_IsBool(a) ? cJSON_True : a->type & 0xff, tb = cJSON_IsBool(b) ? cJSON_True : b->type & 0xff;
    cr_assert_eq(ta, tb, "%s: types differ", path);
    if (cJSON_IsArray(a)) {
        if (cJSON_GetArraySize(a) > 0 && cJSON_GetArraySize(b) > 0)
            same_shape(cJSON_GetArrayItem(a, 0), cJSON_GetArrayItem(b, 0), path);
        return;
    }
    if (!cJSON_IsObject(a))
        return;
    cr_assert_eq(cJSON_GetArraySize(a), cJSON_GetArraySize(b), "%s: key counts differ", path);
    for (const cJSON *k = a->child; k; k = k->next) {
        const cJSON *o = cJSON_GetObjectItem(b, k->string);
        cr_assert(o, "%s.%s: only with one thread", path, k->string);
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%s", path, k->string);
        same_shape(k, o, sub);
    }
}

/* Per request index: output and prompt tokens, and whether it completed. */
static void same_requests(const cJSON *a, const cJSON *b, int n)
{
    const cJSON *ta = cJSON_GetObjectItem(a, "request_timings"), *tb = cJSON_GetObjectItem(b, "request_timings");
    cr_assert_eq(cJSON_GetArraySize(ta), n);
    cr_assert_eq(cJSON_GetArraySize(tb), n);
    static double tok[2][512], prompt[2][512];
    for (int k = 0; k < 2; k++) {
        const cJSON *t = k ? tb : ta;
        for (int i = 0; i < n; i++)
            tok[k][i] = prompt[k][i] = -1;
        const cJSON *r;
        cJSON_ArrayForEach(r, t) {
            int i = (int)harness_num(r, "request_index");
            cr_assert(i >= 0 && i < n && tok[k][i] < 0, "request_index %d twice or out of range", i);
            tok[k][i] = harness_num(r, "output_tokens");
            prompt[k][i] = harness_num(r, "planned_context_tokens");
        }
    }
    for (int i = 0; i < n; i++) {
        cr_assert_eq(tok[0][i], tok[1][i], "request %d: %g output tokens with 1 thread, %g with 2", i,
                     tok[0][i], tok[1][i]);
        cr_assert_eq(prompt[0][i], prompt[1][i], "request %d: planned prompt differs", i);
    }
}

Test(threads, closed_loop_same_requests_tokens_and_shape_with_1_and_2_threads, .timeout = 120)
{
    const char *args[] = {"--concurrency", "6", "--num-prompts", "60", "--warmup", "4", "--input-len", "16",
                          "--output-len", "12", "--input-len-range", "0.5", "--random-range-ratio", "0.5",
                          "--seed", "3", NULL};
    cJSON *one = run_with_threads(args, "1"), *two = run_with_threads(args, "2");
    same_shape(one, two, "$");
    same_requests(one, two, 60);
    cr_assert_eq(harness_num(one, "completed"), 60);
    cr_assert_eq(harness_num(two, "completed"), 60);
    cr_assert_eq(harness_num(two, "warmup_requests"), 4);
    /* the thread count and what each loop carried */
    for (int k = 0; k < 2; k++) {
        const cJSON *c = cJSON_GetObjectItem(k ? two : one, "client");
        cr_assert_eq(harness_num(c, "threads"), k + 1);
        const cJSON *pt = cJSON_GetObjectItem(c, "per_thread"), *t;
        cr_assert_eq(cJSON_GetArraySize(pt), k + 1);
        double requests = 0;
        cJSON_ArrayForEach(t, pt) {
            cr_assert_gt(harness_num(t, "requests"), 0, "a thread carried no request");
            requests += harness_num(t, "requests");
            cr_assert(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "loop_lag_ms"), "samples"));
        }
        cr_assert_eq(requests, 60, "the threads carried %g measured requests of 60", requests);
    }
    cJSON_Delete(one);
    cJSON_Delete(two);
}

/* Scheduled send time of each request relative to request 0's, ns: the
 * send time minus its lateness. */
static void schedule_of(const cJSON *a, int n, double *off)
{
    const cJSON *r;
    double t0 = NAN;
    static double at[512];
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings")) {
        int i = (int)harness_num(r, "request_index");
        at[i] = harness_num(r, "start_monotonic_ns") - harness_num(r, "send_lateness_ms") * 1e6;
        if (i == 0)
            t0 = at[i];
    }
    for (int i = 0; i < n; i++)
        off[i] = at[i] - t0;
}

Test(threads, poisson_plan_is_the_same_schedule_with_1_and_2_threads, .timeout = 120)
{
    const char *args[] = {"--request-rate", "400", "--burstiness", "1", "--num-prompts", "200",
                          "--input-len", "16", "--output-len", "4", "--seed", "11", NULL};
    cJSON *one = run_with_threads(args, "1"), *two = run_with_threads(args, "2");
    same_shape(one, two, "$");
    same_requests(one, two, 200);
    static double a[200], b[200];
    schedule_of(one, 200, a);
    schedule_of(two, 200, b);
    for (int i = 1; i < 200; i++) {
        cr_assert_gt(a[i], a[i - 1] - 1, "the schedule never goes back");
        /* the artifact's ms carry 6 decimals: equal to the ns, give or take rounding */
        cr_assert(fabs(a[i] - b[i]) <= 2, "request %d scheduled %.0f ns after request 0 with 1 thread, "
                  "%.0f with 2", i, a[i], b[i]);
    }
    cJSON_Delete(one);
    cJSON_Delete(two);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A signal reaches thread 0; every thread stops sending and cancels what
 * it runs after the grace period. */
Test(threads, sigint_stops_both_threads, .timeout = 60)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    unlink(art);
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "20", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "4",
                          "--threads", "2", "--num-prompts", "40", "--input-len", "32", "--output-len", "20",
                          "--grace-s", "0.1", "--out", art, NULL};
    pid_t pid = harness_spawn(argv, 0);
    cr_assert_gt(pid, 0);
    harness_sleep_ms(2500);     /* calibration, then a few requests finish (each ≈ 0.4 s) */
    kill(pid, SIGINT);
    int st;
    double t0 = now_s();
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_lt(now_s() - t0, 5.0, "stops promptly");
    sim_stop(&sim);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    cJSON *a = harness_load_json(art);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "incomplete")));
    cr_assert_gt(harness_num(a, "completed"), 0, "what was measured is kept");
    cr_assert_gt(harness_num(a, "not_sent"), 0);
    int cancelled = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(a, "failures")) {
        cr_assert_str_eq(cJSON_GetObjectItem(f, "category")->valuestring, "cancelled");
        cancelled++;
    }
    cr_assert_eq(harness_num(a, "completed") + cancelled + harness_num(a, "not_sent"), 40,
                 "every request is accounted for");
    cJSON_Delete(a);
    unlink(art);
}

/* Duration mode over two threads: one window, the tokens inside it, the
 * requests running at its end kept as incomplete, on both threads. */
Test(threads, duration_window_over_two_threads, .timeout = 60)
{
    const char *args[] = {"--concurrency", "8", "--duration", "1", "--warmup-s", "0.2", "--input-len", "16",
                          "--output-len", "30", NULL};
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "5", NULL};
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[32] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--out", art, "--threads", "2"};
    int n = 8;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    const cJSON *dm = cJSON_GetObjectItem(a, "duration_mode");
    cr_assert(cJSON_IsObject(dm));
    double window = harness_num(dm, "window_s");
    cr_assert(fabs(window - 1.0) < 0.05, "window of %.3f s", window);
    /* a request lasts ≈ 5 + 29·5 = 150 ms: about 8 × 1.2 / 0.15 ≈ 64 sent, 8 of them cut */
    cr_assert_gt(harness_num(a, "completed"), 30);
    cr_assert_geq(harness_num(dm, "incomplete_requests"), 4, "the requests running at the end are kept");
    cJSON_Delete(a);
    unlink(art);
}

/* A caller's schedule (a trace's send times) replaces the drawn one: every
 * request is scheduled at its own offset, whatever thread sends it. */
static char *fixed_body(void *ud, long seq, long *planned, long *max_tokens)
{
    (void)ud;
    (void)seq;
    *planned = -1;
    *max_tokens = 2;
    struct request_opts o = {.endpoint = EP_CHAT, .model = "anvil-sim", .max_tokens = 2, .stream = true};
    return request_body(&o, "one two three four");
}

Test(threads, a_callers_send_times_are_the_schedule, .timeout = 60)
{
    enum { N = 40 };
    static int64_t send_ns[N];
    for (int i = 0; i < N; i++)     /* bursts of four, 20 ms apart, and a pause */
        send_ns[i] = (int64_t)(i / 4) * 20000000 + (i >= 20 ? 100000000 : 0);
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    static char url[256], models[256];
    snprintf(url, sizeof url, "%s/chat/completions", sim.base_url);
    snprintf(models, sizeof models, "%s/models", sim.base_url);
    for (int threads = 1; threads <= 2; threads++) {
        struct driver_cfg cfg = {
            .url = url, .prewarm_url = models, .concurrency = 0, .request_rate = INFINITY, .burstiness = 1,
            .num_prompts = N, .timeout_ms = 30000, .grace_s = 1, .make_body = fixed_body, .threads = threads,
            .send_ns = send_ns,
        };
        struct driver_result r;
        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), 0);
        cr_assert_eq(driver_run(&cfg, &r), 0);
        cr_assert_eq(r.threads, threads);
        for (int i = 0; i < N; i++) {
            const struct req_record *q = &r.records[i];
            cr_assert_eq(q->fail, FAIL_NONE, "request %d: %s", i, q->fail_msg);
            cr_assert_eq(q->t_scheduled - r.records[0].t_scheduled, send_ns[i],
                         "request %d scheduled %lld ns after request 0, not %lld (%d threads)", i,
                         (long long)(q->t_scheduled - r.records[0].t_scheduled), (long long)send_ns[i], threads);
            cr_assert_geq(q->t_start, q->t_scheduled, "request %d sent before its time", i);
        }
        driver_result_free(&r);
        curl_global_cleanup();
    }
    cr_assert_eq(sim_stop(&sim), 0);
}

/* Agent sessions with think time and sub-agent fan-out: the waits are over
 * every loop (a turn ends on one, its sub-agents go on others, the next
 * turn waits for all), and the requests are the same ones whatever the
 * thread count — each index the same prompt (its session's history) and
 * the same output tokens. */
Test(threads, agent_sessions_with_think_time_and_fan_out_the_same_with_1_and_2_threads, .timeout = 120)
{
    const char *args[] = {"--agentic-sessions", "4", "--turns", "2..4", "--sub-agents", "3", "--think-time",
                          "0.005..0.02", "--concurrency", "4", "--output-len", "6", "--tool-result-len", "30",
                          "--user-len", "20", "--seed", "5", NULL};
    cJSON *one = run_with_threads(args, "1"), *two = run_with_threads(args, "2");
    same_shape(one, two, "$");
    int n = (int)harness_num(one, "completed");
    cr_assert_gt(n, 8);
    cr_assert_eq(harness_num(two, "completed"), n);
    cr_assert_eq(harness_num(one, "failed") + harness_num(two, "failed"), 0);
    static double tok[2][512], prompt[2][512];
    cr_assert_leq(n, 512);
    for (int k = 0; k < 2; k++) {
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(k ? two : one, "request_timings")) {
            int i = (int)harness_num(r, "request_index");
            cr_assert(i >= 0 && i < n);
            tok[k][i] = harness_num(r, "output_tokens");
            prompt[k][i] = harness_num(r, "prompt_tokens");
        }
    }
    for (int i = 0; i < n; i++) {
        cr_assert_eq(tok[0][i], tok[1][i], "request %d: output tokens differ", i);
        cr_assert_eq(prompt[0][i], prompt[1][i], "request %d: %g prompt tokens with 1 thread, %g with 2", i,
                     prompt[0][i], prompt[1][i]);
    }
    for (int k = 0; k < 2; k++) {
        const cJSON *ag = harness_json_path(k ? two : one, "workload.agentic");
        cr_assert_eq(harness_num(ag, "sessions_completed"), 4);
        cr_assert_gt(harness_num(ag, "sub_agent_requests"), 0);
    }
    cr_assert_eq(harness_num(harness_json_path(two, "client"), "threads"), 2);
    cJSON_Delete(one);
    cJSON_Delete(two);
}
