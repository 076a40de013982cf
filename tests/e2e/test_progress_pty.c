/* test_progress_pty.c — `anvil run` on a terminal draws a progress line
 * that says how long: an ETA in a request-count run, the phase and the
 * window's time left in duration mode, and tok/s while tokens stream
 * (before any request has ended). Run on a pseudo-terminal, as a user
 * sees it; the line is off when stderr is not a terminal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static char screen[1 << 18];

Test(progress_pty, a_count_run_shows_eta_and_streaming_tok_per_s)
{
    struct sim_proc sim;
    /* 40 tokens at 20 ms: each request takes about 0.8 s, so the first
     * progress ticks (250 ms) come while every request is still streaming */
    const char *sa[] = {"--ttft-ms", "5", "--itl-ms", "20", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "4",
                          "--num-prompts", "12", "--input-len", "16", "--output-len", "40", "--out", art,
                          NULL};
    int rc = harness_run_on_pty(argv, screen, sizeof screen);
    sim_stop(&sim);
    unlink(art);
    cr_assert_eq(rc, 0, "%s", screen);
    cr_assert(strstr(screen, "\r[                    ] 0/12 done, 0 failed, 4 in flight, "), "%s", screen);
    cr_assert(strstr(screen, "ETA ?"), "no ETA before the first request ended:\n%s", screen);
    /* tokens counted as they stream: a tick with 0 done shows a rate > 0 */
    bool streaming = false;
    for (const char *p = screen; (p = strstr(p, "0/12 done, 0 failed, 4 in flight, ")); p++) {
        long tps = strtol(p + strlen("0/12 done, 0 failed, 4 in flight, "), NULL, 10);
        streaming |= tps > 0;
    }
    cr_assert(streaming, "tok/s stayed 0 while 4 streams produced tokens:\n%s", screen);
    cr_assert(strstr(screen, "] 12/12 done, 0 failed, 0 in flight"), "%s", screen);
    const char *eta = strstr(screen, "ETA ");
    bool timed = false;
    for (; eta; eta = strstr(eta + 1, "ETA "))
        timed |= eta[4] >= '0' && eta[4] <= '9';
    cr_assert(timed, "no ETA in seconds:\n%s", screen);
}

Test(progress_pty, duration_mode_shows_the_phase_and_the_time_left)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "5", "--itl-ms", "20", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "4",
                          "--duration", "2", "--warmup-s", "1", "--input-len", "16", "--output-len", "40",
                          "--out", art, NULL};
    int rc = harness_run_on_pty(argv, screen, sizeof screen);
    sim_stop(&sim);
    unlink(art);
    cr_assert_eq(rc, 0, "%s", screen);
    cr_assert(strstr(screen, "\rwarm-up ["), "%s", screen);
    cr_assert(strstr(screen, " of 1.0 s, "), "%s", screen);
    cr_assert(strstr(screen, "\rwindow ["), "%s", screen);
    cr_assert(strstr(screen, " of 2.0 s, "), "%s", screen);
    cr_assert(strstr(screen, " left, "), "%s", screen);
    cr_assert_null(strstr(screen, "/200000"), "the bar is sized by time, not the request cap:\n%s", screen);
}

/* A sweep on a terminal shows how far the round in flight has got, read
 * from the round's journal: "  N/12 requests ended, S s" redrawn while it
 * runs (it printed nothing inside a round before). */
Test(progress_pty, a_sweep_shows_progress_inside_a_round)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "5", "--itl-ms", "20", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-sweep-pty-XXXXXX";
    cr_assert(mkdtemp(dir));
    /* 12 requests at concurrency 2, each 40 tokens at 20 ms: a round takes about 5 s */
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "2",
                          "--num-prompts", "12", "--input-len", "16", "--output-len", "40", "--rounds", "1",
                          "--out-dir", dir, NULL};
    int rc = harness_run_on_pty(argv, screen, sizeof screen);
    sim_stop(&sim);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    cr_assert_eq(system(rm), 0);
    cr_assert_eq(rc, 0, "%s", screen);
    cr_assert(strstr(screen, "\r  12/12 requests ended, "), "%s", screen);
    long during = -1;   /* a count drawn while the round still ran */
    for (const char *p = screen; (p = strstr(p, "\r  ")); p++) {
        long k = strtol(p + 3, NULL, 10);
        if (k > 0 && k < 12 && !strncmp(strchr(p + 3, '/'), "/12 requests ended, ", 20))
            during = k;
    }
    cr_assert(during > 0, "no count while the round ran:\n%s", screen);
}
