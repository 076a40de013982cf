/* test_workload.c — which request a multi-turn turn waits for. */
#include <criterion/criterion.h>

#include "workload/workload.h"

Test(workload, a_turn_follows_the_previous_turn_of_its_conversation_in_the_same_pass)
{
    /* conversations 0 (2 turns), 1 (1 turn), 2 (2 turns); requests cycle over the 5 entries */
    struct dataset_entry e[5] = {{.conversation = 0}, {.conversation = 0}, {.conversation = 1},
                                 {.conversation = 2}, {.conversation = 2}};
    struct dataset ds = {.entries = e, .n = 5};
    struct workload_cfg cfg = {.ds = &ds, .input_len = 16, .output_len = 4};
    struct workload *w = workload_new(&cfg);
    cr_assert(w);
    long want[] = {-1, 0, -1, -1, 3, -1, 5, -1, -1, 8};
    for (long seq = 0; seq < 10; seq++)
        cr_assert_eq(workload_follows(w, seq), want[seq], "request %ld", seq);
    workload_free(w);

    struct dataset_entry one[3] = {{.conversation = 7}, {.conversation = 7}, {.conversation = 7}};
    struct dataset single = {.entries = one, .n = 3};     /* one conversation: a new pass starts over */
    cfg.ds = &single;
    w = workload_new(&cfg);
    cr_assert(w);
    long want1[] = {-1, 0, 1, -1, 3, 4, -1};
    for (long seq = 0; seq < 7; seq++)
        cr_assert_eq(workload_follows(w, seq), want1[seq], "request %ld", seq);
    workload_free(w);

    cfg.ds = NULL;      /* synthetic prompts: nothing waits */
    w = workload_new(&cfg);
    cr_assert_eq(workload_follows(w, 1), -1);
    workload_free(w);
}

/* Agentic fan-out: turn 0 of session 0 spawns two sub-agents; its turn 1
 * waits for both and for turn 0; each sub-agent waits for turn 0 only.
 * Think times count only where a request waits. */
Test(workload, a_turn_waits_for_its_previous_turn_and_the_sub_agents_it_spawned)
{
    struct dataset_entry e[6] = {{.conversation = 0}, {.conversation = 0, .agent = 1},
                                 {.conversation = 0, .agent = 2}, {.conversation = 0, .turn = 1, .think_s = 0.25},
                                 {.conversation = 1, .think_s = 3}, {.conversation = 1, .turn = 1}};
    struct dataset ds = {.entries = e, .n = 6};
    struct workload_cfg cfg = {.ds = &ds, .input_len = 16, .output_len = 4};
    struct workload *w = workload_new(&cfg);
    cr_assert(w);
    long out[8];
    cr_assert_eq(workload_waits(w, 0, out, 8), 0);
    cr_assert_eq(workload_waits(w, 1, out, 8), 1);
    cr_assert_eq(out[0], 0);
    cr_assert_eq(workload_waits(w, 2, out, 8), 1, "a sub-agent does not wait for its sibling");
    cr_assert_eq(out[0], 0);
    cr_assert_eq(workload_waits(w, 3, out, 8), 3);
    cr_assert(out[0] == 2 && out[1] == 1 && out[2] == 0, "%ld %ld %ld", out[0], out[1], out[2]);
    cr_assert_eq(workload_waits(w, 4, out, 8), 0, "another session");
    cr_assert_eq(workload_waits(w, 5, out, 8), 1);
    cr_assert_eq(out[0], 4);
    cr_assert_eq(workload_waits(w, 9, out, 8), 3, "the second pass");
    cr_assert_eq(out[2], 6);
    cr_assert_eq(workload_waits(w, 6, out, 8), 0, "a pass starts afresh");
    cr_assert_eq(workload_think_ns(w, 3), 250000000);
    workload_free(w);
}
