/* test_agentic.c — agentic sessions against `anvil sim --enable-prefix-caching`:
 * the turns of a session go out in order, each after the one before it has
 * ended, with a context that grows by the tool calls and results and is
 * served from the cache up to the previous turn; sessions share nothing;
 * per-turn and per-session figures are in the artifact. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static char err_text[65536];

static cJSON *run_agentic(const char *const extra[], int *status)
{
    const char *sim_args[] = {"--enable-prefix-caching", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[40] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--out", art,
                            "--output-len", "8", "--concurrency", "3"};
    int n = 10;
    for (int i = 0; extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    static char out[16384];
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err_text, sizeof err_text, status), 0);
    sim_stop(&sim);
    cJSON *a = *status == 0 ? harness_load_json(art) : NULL;
    unlink(art);
    return a;
}

/* The file's sessions have 2, 3 and 4 turns: request i is (session, turn). */
static const int session_of[] = {0, 0, 1, 1, 1, 2, 2, 2, 2}, turn_of[] = {0, 1, 0, 1, 2, 0, 1, 2, 3};

Test(agentic, file_sessions_in_order_with_growing_cached_context, .timeout = 60)
{
    const char *extra[] = {"--agentic", "tests/data/workloads/agentic_3.json", NULL};
    int status;
    cJSON *a = run_agentic(extra, &status);
    cr_assert_eq(status, 0, "%s", err_text);
    cr_assert_eq(harness_num(a, "completed"), 9);
    double start[9], end[9], prompt[9], cached[9];
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        int i = (int)harness_num(t, "request_index");
        start[i] = harness_num(t, "start_monotonic_ns") / 1e6;
        end[i] = start[i] + harness_num(t, "e2e_ms");
        prompt[i] = harness_num(t, "prompt_tokens");
        cached[i] = harness_num(t, "cached_tokens");
    }
    for (int i = 0; i < 9; i++) {
        if (turn_of[i] == 0) {
            cr_assert_eq(cached[i], 0, "session %d shares nothing with another", session_of[i]);
            continue;
        }
        cr_assert_geq(start[i], end[i - 1], "session %d turn %d went out before turn %d ended", session_of[i],
                      turn_of[i], turn_of[i] - 1);
        cr_assert_gt(prompt[i], prompt[i - 1] + 50, "the context grows by the tool round");
        /* the previous turn's prompt, bar its last partial cache block and the generation prompt */
        cr_assert_geq(cached[i], prompt[i - 1] - 32, "turn %d of session %d: %g cached of the previous %g",
                      turn_of[i], session_of[i], cached[i], prompt[i - 1]);
    }
    const cJSON *ag = harness_json_path(a, "workload.agentic");
    cr_assert(ag);
    cr_assert_eq(harness_num(ag, "sessions"), 3);
    cr_assert_eq(harness_num(ag, "turns"), 9);
    cr_assert_eq(harness_num(ag, "sessions_completed"), 3);
    const cJSON *pt = cJSON_GetObjectItem(ag, "per_turn");
    cr_assert_eq(cJSON_GetArraySize(pt), 4);
    const int per_turn[] = {3, 3, 2, 1};
    for (int k = 0; k < 4; k++) {
        const cJSON *e = cJSON_GetArrayItem(pt, k);
        cr_assert_eq(harness_num(e, "turn"), k);
        cr_assert_eq(harness_num(e, "requests"), per_turn[k]);
        cr_assert_gt(harness_num(e, "time_to_first_output_ms"), 0);
        cr_assert_gt(harness_num(e, "prompt_tokens"), 0);
    }
    /* session 2 (4 turns) lasts longest: at least its four turns back to back */
    double s2 = end[8] - start[5];
    cr_assert_geq(harness_num(ag, "session_wall_ms_max") + 0.01, s2);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "cache_contaminated")));
    cJSON_Delete(a);
}

Test(agentic, generated_sessions_are_seeded, .timeout = 60)
{
    const char *extra[] = {"--agentic-sessions", "5", "--turns", "2..4", "--tool-result-len", "50", "--user-len",
                           "40", "--seed", "7", NULL};
    int status;
    cJSON *a = run_agentic(extra, &status);
    cr_assert_eq(status, 0, "%s", err_text);
    cJSON *b = run_agentic(extra, &status);
    const cJSON *x = harness_json_path(a, "workload.agentic"), *y = harness_json_path(b, "workload.agentic");
    cr_assert_eq(harness_num(x, "sessions"), 5);
    long turns = (long)harness_num(x, "turns");
    cr_assert(turns >= 10 && turns <= 20, "%ld turns", turns);
    cr_assert_eq(turns, (long)harness_num(y, "turns"), "the same seed gives the same sessions");
    cr_assert_eq(harness_num(a, "completed"), turns);
    for (int k = 0; k < cJSON_GetArraySize(cJSON_GetObjectItem(x, "per_turn")); k++)
        cr_assert_eq(harness_num(cJSON_GetArrayItem(cJSON_GetObjectItem(x, "per_turn"), k), "prompt_tokens"),
                     harness_num(cJSON_GetArrayItem(cJSON_GetObjectItem(y, "per_turn"), k), "prompt_tokens"));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

Test(agentic, bad_files_are_refused, .timeout = 30)
{
    char bad[64];
    cr_assert_eq(harness_tmpfile(bad, sizeof bad), 0);
    FILE *f = fopen(bad, "w");
    fputs("{\"sessions\": [{\"turns\": [{\"user_len\": 5}]}, {\"turns\": [{\"user_len\": -1}]}]}", f);
    fclose(f);
    const char *extra[] = {"--agentic", bad, NULL};
    int status;
    cJSON *a = run_agentic(extra, &status);
    unlink(bad);
    cr_assert_null(a);
    cr_assert_neq(status, 0);
    cr_assert(strstr(err_text, "sessions[1].turns[0]"), "%s", err_text);
}

/* Each request's start, end (ms, monotonic), prompt and cached tokens. */
struct timing {
    double start, end, prompt, cached;
};

static int timings_of(const cJSON *a, struct timing *t, int cap)
{
    const cJSON *r;
    int n = 0;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings")) {
        int i = (int)harness_num(r, "request_index");
        cr_assert(i >= 0 && i < cap);
        t[i].start = harness_num(r, "start_monotonic_ns") / 1e6;
        t[i].end = t[i].start + harness_num(r, "e2e_ms");
        t[i].prompt = harness_num(r, "prompt_tokens");
        t[i].cached = harness_num(r, "cached_tokens");
        n++;
    }
    return n;
}

/* A turn's think time: sent that long after the reply before it ended, and
 * the slot is free meanwhile (another session's turn goes out in it). */
Test(agentic, think_time_holds_the_turn_not_the_slot, .timeout = 60)
{
    const char *extra[] = {"--agentic", "tests/data/workloads/agentic_think.json", "--concurrency", "1", NULL};
    int status;
    cJSON *a = run_agentic(extra, &status);
    cr_assert_eq(status, 0, "%s", err_text);
    struct timing t[3];
    cr_assert_eq(timings_of(a, t, 3), 3);
    /* requests: session 0 turns 0 and 1, session 1 turn 0 */
    cr_assert_geq(t[1].start - t[0].end, 400, "turn 1 went out %.1f ms after turn 0 ended, not 400",
                  t[1].start - t[0].end);
    cr_assert_lt(t[1].start - t[0].end, 2400, "held %.1f ms for a think time of 400", t[1].start - t[0].end);
    cr_assert_lt(t[2].start, t[1].start, "session 1 used the slot during session 0's think time");
    const cJSON *pt = cJSON_GetArrayItem(harness_json_path(a, "workload.agentic.per_turn"), 1);
    cr_assert_eq(harness_num(pt, "think_time_ms"), 400);
    cr_assert_geq(harness_num(pt, "gap_ms"), 400);
    cr_assert(fabs(harness_num(pt, "gap_ms") - (t[1].start - t[0].end)) < 0.01);
    cJSON_Delete(a);
}

/* A turn that spawns three sub-agents: they go out together after it, each
 * the session's history plus its task (served from the cache up to the
 * turn's prompt); the next turn waits for all of them (and its think
 * time) and carries their results. */
Test(agentic, sub_agents_fan_out_in_parallel_and_join, .timeout = 60)
{
    const char *extra[] = {"--agentic", "tests/data/workloads/agentic_fanout.json", "--concurrency", "4", NULL};
    int status;
    cJSON *a = run_agentic(extra, &status);
    cr_assert_eq(status, 0, "%s", err_text);
    struct timing t[5];
    cr_assert_eq(timings_of(a, t, 5), 5);
    double first_sub_end = t[1].end, last_sub_end = t[1].end, last_sub_start = t[1].start;
    for (int j = 1; j <= 3; j++) {
        cr_assert_geq(t[j].start, t[0].end, "sub-agent %d went out before the turn that spawned it ended", j);
        first_sub_end = fmin(first_sub_end, t[j].end);
        last_sub_end = fmax(last_sub_end, t[j].end);
        last_sub_start = fmax(last_sub_start, t[j].start);
        cr_assert_gt(t[j].prompt, t[0].prompt, "the history plus a task");
        cr_assert_geq(t[j].cached, t[0].prompt - 32, "sub-agent %d: %g cached of the turn's %g", j, t[j].cached,
                      t[0].prompt);
    }
    cr_assert_lt(last_sub_start, first_sub_end, "the three sub-agents were in flight at once");
    cr_assert_geq(t[4].start - last_sub_end, 100, "the next turn waits for every sub-agent and its think time");
    cr_assert_gt(t[4].prompt, t[0].prompt + 3 * 80, "the next turn carries the three results");
    cr_assert_geq(t[4].cached, t[0].prompt - 32);
    const cJSON *ag = harness_json_path(a, "workload.agentic");
    cr_assert_eq(harness_num(ag, "turns"), 2);
    cr_assert_eq(harness_num(ag, "sub_agent_requests"), 3);
    cr_assert_eq(harness_num(ag, "sessions_completed"), 1);
    cr_assert_geq(harness_num(ag, "session_wall_ms_max") + 0.01, t[4].end - t[0].start);
    const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItem(ag, "per_turn"), 0);
    const cJSON *p1 = cJSON_GetArrayItem(cJSON_GetObjectItem(ag, "per_turn"), 1);
    cr_assert_eq(harness_num(p0, "requests"), 1, "sub-agents are not turns of the agent");
    cr_assert_eq(harness_num(p0, "sub_agent_requests"), 3);
    cr_assert_gt(harness_num(p0, "sub_agent_cached_tokens"), 0);
    cr_assert_eq(harness_num(p1, "sub_agent_requests"), 0);
    cr_assert(fabs(harness_num(p1, "gap_ms") - (t[4].start - last_sub_end)) < 0.01,
              "gap from the last sub-agent's end: %g vs %g", harness_num(p1, "gap_ms"), t[4].start - last_sub_end);
    cJSON_Delete(a);
}

/* The generator's think times and sub-agents, seeded. */
Test(agentic, generated_think_time_and_sub_agents, .timeout = 60)
{
    const char *extra[] = {"--agentic-sessions", "3", "--turns", "2..3", "--tool-result-len", "30", "--user-len",
                           "30", "--think-time", "0.05..0.1", "--sub-agents", "2", "--seed", "3", NULL};
    int status;
    cJSON *a = run_agentic(extra, &status);
    cr_assert_eq(status, 0, "%s", err_text);
    const cJSON *ag = harness_json_path(a, "workload.agentic");
    long turns = (long)harness_num(ag, "turns");
    cr_assert_eq(harness_num(ag, "sub_agent_requests"), 2 * (turns - 3), "two per turn but each session's last");
    cr_assert_eq(harness_num(a, "completed"), turns + 2 * (turns - 3));
    const cJSON *pt;
    cJSON_ArrayForEach(pt, cJSON_GetObjectItem(ag, "per_turn")) {
        if (harness_num(pt, "turn") == 0) {
            cr_assert_eq(harness_num(pt, "think_time_ms"), 0);
            continue;
        }
        double think = harness_num(pt, "think_time_ms");
        cr_assert(think >= 50 && think <= 100, "%g ms", think);
        cr_assert_geq(harness_num(pt, "gap_ms"), think - 0.01);
    }
    cJSON_Delete(a);
}

Test(agentic, think_time_needs_generated_sessions)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1", "--think-time", "1",
                          NULL};
    static char out[4096], err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_neq(status, 0);
    cr_assert(strstr(err, "--think-time and --sub-agents go with --agentic-sessions"), "%s", err);
}

/* A bad --think-time or --turns is a usage error (exit 2), found before
 * the server is asked anything (the URL has no server); it was exit 1, after
 * discovery failed or, with a server, after discovery. */
Test(agentic, a_bad_range_is_a_usage_error)
{
    const char *cases[][2] = {{"--think-time", "5..1"}, {"--think-time", "1..x"}, {"--turns", "0..3"}};
    const char *want[] = {"--think-time: expected A..B seconds with 0 <= A <= B <= 86400, got '5..1'",
                          "got '1..x'", "--turns: expected A..B with 1 <= A <= B <= 10000, got '0..3'"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "http://127.0.0.1:9/v1",
                              "--agentic-sessions", "2", cases[i][0], cases[i][1], NULL};
        static char out[4096], err[4096];
        int status;
        cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "%s %s: exit %d: %s", cases[i][0], cases[i][1], status, err);
        cr_assert(strstr(err, want[i]), "'%s' not in: %s", want[i], err);
    }
}

/* Open loop with a cap of 2 over two loops (two slots each): a turn whose
 * think time ends while two long replies fill the cap waits for the next
 * end without a timer spinning meanwhile on a loop with free slots (the
 * long replies take about 2 s; a spinning loop would burn that much CPU). */
Test(agentic, a_think_time_under_a_full_cap_waits_without_spinning, .timeout = 60)
{
    const char *extra[] = {"--agentic", "tests/data/workloads/agentic_think_capped.json", "--request-rate", "1000",
                           "--concurrency", "2", "--threads", "2", NULL};
    int status;
    cJSON *a = run_agentic(extra, &status);
    cr_assert_eq(status, 0, "%s", err_text);
    struct timing t[4];
    cr_assert_eq(timings_of(a, t, 4), 4);
    /* requests: session 0 turns 0 and 1, sessions 1 and 2 (long) */
    double first_long_end = fmin(t[2].end, t[3].end);
    cr_assert_geq(t[1].start, first_long_end, "the full cap held the thought-out turn until a long reply ended");
    double cpu = harness_num(harness_json_path(a, "client"), "cpu_user_s") +
                 harness_num(harness_json_path(a, "client"), "cpu_sys_s");
    cr_assert_lt(cpu, 0.15 * (first_long_end - t[0].end) / 1000, "%.3f s of CPU over a %.0f ms wait", cpu,
                 first_long_end - t[0].end);
    cJSON_Delete(a);
}
