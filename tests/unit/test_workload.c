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
