/* test_plan.c — sweep plans: built, written and read back through the
 * checked reader, every field; a missing or mistyped key names the file
 * and the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "sweep/plan.h"

static void build(struct sweep_plan *p)
{
    struct sweep_case cases[2] = {
        {.id = "short-128-64-c4", .input_len = 128, .output_len = 64, .concurrency = 4, .request_rate = INFINITY},
        {.id = "rag-4k-128-r2.5", .input_len = 4096, .output_len = 128, .request_rate = 2.5},
    };
    char *extra[] = {"--endpoint", "completions", NULL};
    cases[1].extra = extra;
    struct sweep_target targets[2] = {{"sglang", "http://h1:30000/v1"}, {"", "http://h2:8000/v1"}};
    const char *base[] = {"--num-prompts", "8", NULL};
    cr_assert_eq(sweep_plan_build(cases, 2, targets, 2, 3, "/tmp/sw", base, "ttft:500,tpot:50", p), 0);
}

Test(plan, built_in_round_case_target_order)
{
    struct sweep_plan p;
    build(&p);
    cr_assert_eq(p.n_jobs, 12);
    cr_assert_eq(p.rounds, 3);
    cr_assert_str_eq(p.slo, "ttft:500,tpot:50");
    const struct sweep_job *j = &p.jobs[3];     /* round 1, second case, second target */
    cr_assert_eq(j->round, 1);
    cr_assert_str_eq(j->case_id, "rag-4k-128-r2.5");
    cr_assert_str_eq(j->target, "");
    cr_assert_str_eq(j->artifact, "/tmp/sw/rounds/target/rag-4k-128-r2.5/round-1.json");
    const char *want[] = {"--base-url", "http://h2:8000/v1", "--input-len", "4096", "--output-len", "128",
                          "--request-rate", "2.5", "--goodput", "ttft:500,tpot:50", "--num-prompts", "8",
                          "--endpoint", "completions", "--case-id", "rag-4k-128-r2.5", "--round", "1"};
    cr_assert_eq(j->n_args, sizeof want / sizeof *want);
    for (size_t i = 0; i < j->n_args; i++)
        cr_assert_str_eq(j->args[i], want[i]);
    cr_assert_str_eq(p.jobs[4].args[p.jobs[4].n_args - 1], "sglang", "a labelled target gets --sweep-target");
    cr_assert_eq(p.jobs[11].round, 3);
    sweep_plan_free(&p);
}

Test(plan, read_after_write_is_the_identity)
{
    struct sweep_plan a, b;
    build(&a);
    free(a.slo);
    a.slo = NULL;       /* null as well as a string */
    cJSON *j = sweep_plan_to_json(&a);
    char err[256];
    cr_assert_eq(sweep_plan_from_json(j, "p.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.rounds, a.rounds);
    cr_assert_null(b.slo);
    cr_assert_eq(b.n_jobs, a.n_jobs);
    for (size_t i = 0; i < a.n_jobs; i++) {
        const struct sweep_job *x = &a.jobs[i], *y = &b.jobs[i];
        cr_assert_str_eq(x->target, y->target);
        cr_assert_str_eq(x->base_url, y->base_url);
        cr_assert_str_eq(x->case_id, y->case_id);
        cr_assert_eq(x->round, y->round);
        cr_assert_str_eq(x->artifact, y->artifact);
        cr_assert_eq(x->n_args, y->n_args);
        for (size_t k = 0; k < x->n_args; k++)
            cr_assert_str_eq(x->args[k], y->args[k]);
    }
    cJSON_Delete(j);
    sweep_plan_free(&a);
    sweep_plan_free(&b);
}

Test(plan, missing_or_mistyped_keys_name_the_file_and_the_key)
{
    struct sweep_plan a;
    build(&a);
    struct { int job; const char *key, *value, *want; } cases[] = {
        {-1, "schema", NULL, "p.json: schema: missing"},
        {-1, "schema", "\"anvil-serving.matrix/v1\"", "p.json: schema: expected \"anvil-serving.sweep-plan/v1\""},
        {-1, "rounds", "0", "p.json: rounds: expected a whole number ≥ 1, got 0"},
        {-1, "slo", "5", "p.json: slo: expected a string, got a number"},
        {-1, "jobs", "[]", "p.json: jobs: expected a non-empty array"},
        {2, "case_id", NULL, "p.json: jobs[2].case_id: missing"},
        {5, "round", "\"1\"", "p.json: jobs[5].round: expected a whole number ≥ 1, got a string"},
        {7, "artifact", "\"\"", "p.json: jobs[7].artifact: expected a non-empty string"},
        {0, "args", "\"--x\"", "p.json: jobs[0].args: expected an array, got a string"},
        {-1, "schema", "\"two\\nlines\"", "p.json: schema: expected \"anvil-serving.sweep-plan/v1\", got \"two?lines\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *j = sweep_plan_to_json(&a);
        cJSON *o = cases[i].job < 0 ? j : cJSON_GetArrayItem(cJSON_GetObjectItem(j, "jobs"), cases[i].job);
        if (cases[i].value)
            cJSON_ReplaceItemInObject(o, cases[i].key, cJSON_Parse(cases[i].value));
        else
            cJSON_DeleteItemFromObject(o, cases[i].key);
        struct sweep_plan b;
        char err[256];
        cr_assert_eq(sweep_plan_from_json(j, "p.json", &b, err, sizeof err), -1, "case %zu", i);
        cr_assert(strstr(err, cases[i].want) == err, "case %zu: '%s'", i, err);
        cJSON_Delete(j);
    }
    sweep_plan_free(&a);
}

Test(plan, unreadable_file_is_an_error_naming_it)
{
    struct sweep_plan p;
    char err[256];
    cr_assert_eq(sweep_plan_read_file("/nonexistent/sweep-plan.json", &p, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/sweep-plan.json: cannot read") == err, "%s", err);
}
