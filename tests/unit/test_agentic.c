/* test_agentic.c — agent sessions as a dataset: sub-agents right after the
 * turn that spawns them, branching from its history; the next turn carries
 * their results as task tool calls; think times seeded and in range; bad
 * think times and fan-outs refused. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "workload/agentic.h"

static const char *role_of(const cJSON *msgs, int i)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, i), "role"));
}

Test(agentic_unit, sub_agents_branch_from_the_history_and_their_results_join)
{
    struct agentic_turn turns[2] = {
        {.user_len = 5, .output_len = -1, .sub_agents = 2, .sub_agent_len = 3, .sub_agent_output_len = 7,
         .sub_agent_result_len = 4},
        {.output_len = -1, .think_s = 1.5},
    };
    struct agentic_session s = {.system_len = 2, .turns = turns, .n_turns = 2};
    struct agentic a = {.sessions = &s, .n = 1};
    struct dataset ds = {0};
    cr_assert_eq(agentic_to_dataset(&a, 9, &ds), 0);
    cr_assert_eq(ds.n, 4, "turn 0, its two sub-agents, turn 1");
    long agents[] = {0, 1, 2, 0}, turn[] = {0, 0, 0, 1};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(ds.entries[i].agent, agents[i], "entry %zu", i);
        cr_assert_eq(ds.entries[i].turn, turn[i], "entry %zu", i);
        cr_assert_eq(ds.entries[i].conversation, 0);
    }
    cr_assert_eq(ds.entries[1].max_tokens, 7);
    cr_assert_eq(ds.entries[3].think_s, 1.5);
    cr_assert_eq(ds.entries[0].think_s, 0);
    /* a sub-agent: the turn's messages, then its own task */
    const cJSON *parent = ds.entries[0].messages, *sub = ds.entries[1].messages, *sub2 = ds.entries[2].messages;
    int np = cJSON_GetArraySize(parent);
    cr_assert_eq(cJSON_GetArraySize(sub), np + 1);
    for (int i = 0; i < np; i++)
        cr_assert(cJSON_Compare(cJSON_GetArrayItem(parent, i), cJSON_GetArrayItem(sub, i), 1), "message %d", i);
    cr_assert_str_eq(role_of(sub, np), "user");
    cr_assert(!cJSON_Compare(cJSON_GetArrayItem(sub, np), cJSON_GetArrayItem(sub2, np), 1), "tasks of their own");
    /* the next turn: the history, the assistant's two task calls, two results */
    const cJSON *next = ds.entries[3].messages;
    cr_assert_eq(cJSON_GetArraySize(next), np + 3);
    const cJSON *calls = cJSON_GetObjectItem(cJSON_GetArrayItem(next, np), "tool_calls");
    cr_assert_eq(cJSON_GetArraySize(calls), 2);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(calls, 0),
                                                                                    "function"), "name")), "task");
    cr_assert_str_eq(role_of(next, np + 1), "tool");
    cr_assert_str_eq(role_of(next, np + 2), "tool");
    const char *result = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(next, np + 1), "content"));
    int words = 1;
    for (const char *p = result; *p; p++)
        words += *p == ' ';
    cr_assert_eq(words, 4, "sub_agent_result_len words: '%s'", result);
    dataset_free(&ds);
}

Test(agentic_unit, generated_think_times_are_seeded_and_in_range)
{
    struct agentic_gen g = {.sessions = 20, .turns_min = 2, .turns_max = 4, .user_len = 3, .tool_result_len = 3,
                            .think_min_s = 0.5, .think_max_s = 2, .sub_agents = 3, .seed = 11};
    struct agentic a, b;
    char err[200];
    cr_assert_eq(agentic_generate(&g, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(agentic_generate(&g, &b, err, sizeof err), 0, "%s", err);
    double lo = 10, hi = 0;
    for (size_t s = 0; s < a.n; s++)
        for (size_t k = 0; k < a.sessions[s].n_turns; k++) {
            const struct agentic_turn *t = &a.sessions[s].turns[k];
            cr_assert_eq(t->think_s, b.sessions[s].turns[k].think_s, "the same seed, the same think times");
            cr_assert_eq(t->sub_agents, k + 1 < a.sessions[s].n_turns ? 3 : 0);
            if (k == 0) {
                cr_assert_eq(t->think_s, 0, "a first turn has none");
                continue;
            }
            cr_assert(t->think_s >= 0.5 && t->think_s <= 2, "%g", t->think_s);
            lo = t->think_s < lo ? t->think_s : lo;
            hi = t->think_s > hi ? t->think_s : hi;
        }
    cr_assert_lt(lo, 0.9, "the range is used, not one value");
    cr_assert_gt(hi, 1.6);
    agentic_free(&a);
    agentic_free(&b);
    double x, y;
    cr_assert_eq(agentic_parse_think("0.5..2", &x, &y), 0);
    cr_assert(x == 0.5 && y == 2);
    cr_assert_eq(agentic_parse_think("3", &x, &y), 0);
    cr_assert(x == 3 && y == 3);
    cr_assert_eq(agentic_parse_think("2..1", &x, &y), -1);
    cr_assert_eq(agentic_parse_think("-1", &x, &y), -1);
    cr_assert_eq(agentic_parse_think("1..x", &x, &y), -1);
    g.sub_agents = 65;
    cr_assert_eq(agentic_generate(&g, &a, err, sizeof err), -1);
}

Test(agentic_unit, bad_think_times_and_fan_outs_are_refused_with_the_turn)
{
    const char *bad[] = {"{\"think_time_s\": -1}", "{\"think_time_s\": \"soon\"}", "{\"sub_agents\": 65}",
                         "{\"sub_agents\": 2, \"sub_agent_len\": 0}", "{\"sub_agent_output_len\": 0}"};
    /* the field named (before: every field's rule listed, none named) */
    const char *field[] = {"bad think_time_s", "bad think_time_s", "bad sub_agents", "bad sub_agent_len",
                           "bad sub_agent_output_len"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[] = "/tmp/anvil-agentic-XXXXXX";
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        FILE *f = fdopen(fd, "w");
        fprintf(f, "{\"sessions\": [{\"turns\": [{\"user_len\": 4}, %s]}]}", bad[i]);
        fclose(f);
        struct agentic a;
        char err[600];
        cr_assert_eq(agentic_load(path, &a, err, sizeof err), -1, "%s", bad[i]);
        cr_assert(strstr(err, "sessions[0].turns[1]"), "%s: %s", bad[i], err);
        cr_assert(strstr(err, field[i]), "%s: %s", bad[i], err);
        unlink(path);
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* #17: the agentic file is YAML or JSON; a .yaml file read the same as its
 * JSON twin (it was parsed as JSON only, and refused). */
Test(agentic_unit, a_yaml_file_reads_as_its_json_twin)
{
    char dir[] = "/tmp/anvil-agentic-yaml-XXXXXX", yml[64], json[64], bad[64], err[512];
    cr_assert(mkdtemp(dir));
    snprintf(yml, sizeof yml, "%s/s.yaml", dir);
    snprintf(json, sizeof json, "%s/s.json", dir);
    snprintf(bad, sizeof bad, "%s/bad.yml", dir);
    write_file(yml, "sessions:\n  - system_len: 20\n    turns:\n      - user_len: 8\n        output_len: 16\n"
                    "      - tool_calls: 2\n        tool_result_len: 30\n        think_time_s: 0.5\n"
                    "        sub_agents: 2\n");
    write_file(json, "{\"sessions\": [{\"system_len\": 20, \"turns\": [{\"user_len\": 8, \"output_len\": 16},"
                     " {\"tool_calls\": 2, \"tool_result_len\": 30, \"think_time_s\": 0.5, \"sub_agents\": 2}]}]}");
    write_file(bad, "sessions: [\n");
    struct agentic a = {0}, b = {0}, c = {0};
    cr_assert_eq(agentic_load(yml, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(agentic_load(json, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.n, 1);
    cr_assert_eq(a.sessions[0].system_len, 20);
    cr_assert_eq(a.sessions[0].n_turns, b.sessions[0].n_turns);
    cr_assert_eq(memcmp(a.sessions[0].turns, b.sessions[0].turns, 2 * sizeof *a.sessions[0].turns), 0);
    cr_assert_eq(a.sessions[0].turns[1].sub_agents, 2);
    cr_assert_eq(a.sessions[0].turns[1].think_s, 0.5);
    cr_assert_eq(agentic_load(bad, &c, err, sizeof err), -1);
    cr_assert(strstr(err, bad), "names the file: %s", err);
    agentic_free(&a);
    agentic_free(&b);
    agentic_free(&c);
    unlink(yml);
    unlink(json);
    unlink(bad);
    rmdir(dir);
}
