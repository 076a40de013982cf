/* test_outcome.c — the one exit-status rule (run/outcome.h) every command
 * that measures maps its result through: each class, its order, and the
 * reason it gives. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "run/outcome.h"

static int status_of(struct outcome o, char *why, size_t cap)
{
    return outcome_exit_status(&o, why, cap);
}

Test(outcome, a_complete_measured_result_within_the_failure_rate_is_0)
{
    char why[200];
    cr_assert_eq(status_of((struct outcome){.counted = true, .completed = 95, .failed_requests = 5,
                                            .max_failure_rate = 0.05, .window_tokens = NAN}, why, sizeof why), 0);
    cr_assert_str_eq(why, "");
    /* decode's and sweep's results carry no request counts */
    cr_assert_eq(status_of((struct outcome){0}, NULL, 0), 0);
}

Test(outcome, more_failures_than_the_rate_is_1_with_the_counts)
{
    char why[200];
    cr_assert_eq(status_of((struct outcome){.counted = true, .completed = 94, .failed_requests = 6,
                                            .max_failure_rate = 0.05, .window_tokens = NAN}, why, sizeof why), 1);
    cr_assert_str_eq(why, "6 of 100 requests failed (6.0%), more than --max-failure-rate 0.05 allows");
    /* said even when the result is also incomplete, as anvil run always said it */
    cr_assert_eq(status_of((struct outcome){.incomplete = true, .counted = true, .completed = 1, .failed_requests = 1,
                                            .max_failure_rate = 0.05}, why, sizeof why), 1);
    cr_assert(strstr(why, "1 of 2 requests failed"), "%s", why);
}

Test(outcome, nothing_measured_is_1_unless_the_window_got_tokens)
{
    char why[200];
    cr_assert_eq(status_of((struct outcome){.counted = true, .max_failure_rate = 0.05, .window_tokens = NAN},
                           why, sizeof why), 1);
    cr_assert_str_eq(why, "no request completed: nothing was measured");
    /* duration mode: streams that all outlast the window are measured by its tokens */
    cr_assert_eq(status_of((struct outcome){.counted = true, .max_failure_rate = 0.05, .window_tokens = 812},
                           why, sizeof why), 0);
}

Test(outcome, usage_comes_first_then_failed_and_incomplete)
{
    char why[200];
    cr_assert_eq(status_of((struct outcome){.usage = true, .failed = true}, why, sizeof why), 2);
    cr_assert_eq(status_of((struct outcome){.failed = true, .counted = true, .failed_requests = 9}, why, sizeof why), 1);
    cr_assert_str_eq(why, "", "a failed result says why itself");
    cr_assert_eq(status_of((struct outcome){.incomplete = true}, why, sizeof why), 1);
}

Test(outcome, a_run_result_and_a_merge_result_read_the_same)
{
    struct run_result r = {.status = RUN_OK, .summarized = true};
    r.summary.completed = 10;
    r.summary.failed = 2;
    r.summary.window_tokens = NAN;
    struct merge_result m = {.summarized = true};
    m.summary = r.summary;
    struct outcome a = outcome_of_run(&r, 0.05), b = outcome_of_merge(0, &m, 0.05);
    cr_assert_eq(outcome_exit_status(&a, NULL, 0), 1);
    cr_assert_eq(outcome_exit_status(&b, NULL, 0), 1);
    a = outcome_of_run(&r, 0.2);
    b = outcome_of_merge(0, &m, 0.2);
    cr_assert_eq(outcome_exit_status(&a, NULL, 0), 0);
    cr_assert_eq(outcome_exit_status(&b, NULL, 0), 0);
    r.status = RUN_FAILED;
    r.refused = true;
    a = outcome_of_run(&r, 0.2);
    cr_assert_eq(outcome_exit_status(&a, NULL, 0), 2, "a refused run is a usage error");
    b = outcome_of_merge(-1, &m, 0.2);
    cr_assert_eq(outcome_exit_status(&b, NULL, 0), 1, "a merge that could not be made");
}
