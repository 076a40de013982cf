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
