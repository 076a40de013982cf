/* test_progress.c — the progress line: ETA from the rate so far, the
 * phase and the window's time left in duration mode, cut to the width. */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>

#include "load/progress.h"

Test(progress, count_run_shows_eta_from_the_rate_so_far)
{
    char b[256];
    struct progress_view v = {.elapsed_s = 12, .done = 120, .total = 500, .failed = 2, .in_flight = 64,
                              .tok_per_s = 3456.4};
    progress_line(b, sizeof b, &v, 0);
    /* 120 done in 12 s: the other 380 take 38 s at that rate */
    cr_assert_str_eq(b, "[####                ] 120/500 done, 2 failed, 64 in flight, 3456 tok/s, 12 s, ETA 38 s");
    v.done = 0;
    v.tok_per_s = NAN;
    progress_line(b, sizeof b, &v, 0);
    cr_assert(strstr(b, "0/500 done, 2 failed, 64 in flight, - tok/s, 12 s, ETA ?"), "%s", b);
}

Test(progress, duration_mode_names_the_phase_and_the_time_left)
{
    char b[256];
    struct progress_view v = {.elapsed_s = 4.1, .duration_s = 60, .warmup_s = 10, .window_s = -1,
                              .done = 3, .in_flight = 8, .tok_per_s = 100};
    progress_line(b, sizeof b, &v, 0);
    cr_assert_str_eq(b, "warm-up [########            ] 4.1 s of 10 s, 3 done, 0 failed, 8 in flight, 100 tok/s");
    v.elapsed_s = 33;
    v.window_s = 23;
    progress_line(b, sizeof b, &v, 0);
    cr_assert_str_eq(b, "window [#######             ] 23 s of 1m00s, 37 s left, 3 done, 0 failed, 8 in flight, 100 tok/s");
    v.window_s = 61;    /* the window is over, requests are being cut */
    progress_line(b, sizeof b, &v, 0);
    cr_assert(strstr(b, "[####################] 1m01s of 1m00s, 0.0 s left"), "%s", b);
}

Test(progress, long_runs_read_in_minutes_and_hours)
{
    char b[32];
    progress_duration(b, sizeof b, 725);
    cr_assert_str_eq(b, "12m05s");
    progress_duration(b, sizeof b, 7380);
    cr_assert_str_eq(b, "2h03m");
    progress_duration(b, sizeof b, INFINITY);
    cr_assert_str_eq(b, "?");
}

Test(progress, a_narrow_terminal_gets_a_line_that_does_not_wrap)
{
    char b[256];
    struct progress_view v = {.elapsed_s = 1, .done = 1, .total = 2, .tok_per_s = 5};
    size_t n = progress_line(b, sizeof b, &v, 40);
    cr_assert_eq(n, 39);
    cr_assert_eq(strlen(b), 39);
    cr_assert(strncmp(b, "[##########          ] 1/2 done", 31) == 0, "%s", b);
}
