/* test_progress_pty.c — `anvil run` on a terminal draws a progress line
 * that says how long: an ETA in a request-count run, the phase and the
 * window's time left in duration mode, and tok/s while tokens stream
 * (before any request has ended). Run on a pseudo-terminal, as a user
 * sees it; the line is off when stderr is not a terminal. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

/* Runs argv with stdout and stderr on a new pseudo-terminal, reading all
 * it writes into out (cap bytes, NUL-terminated). Returns the exit status. */
static int run_on_pty(const char *const argv[], char *out, size_t cap)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
    const char *name = ptsname(m);
    cr_assert(name);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        setsid();
        int s = open(name, O_RDWR);
        int null = open("/dev/null", O_RDONLY);
        if (s < 0 || null < 0)
            _exit(127);
        dup2(null, 0);
        dup2(s, 1);
        dup2(s, 2);
        close(m);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    size_t n = 0;
    for (;;) {
        struct pollfd p = {m, POLLIN, 0};
        if (poll(&p, 1, 60000) <= 0)
            break;
        ssize_t k = read(m, out + n, cap - 1 - n);
        if (k <= 0)
            break;      /* EIO: the child closed the terminal */
        n += (size_t)k;
        if (n == cap - 1)
            break;
    }
    out[n] = '\0';
    close(m);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

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
    int rc = run_on_pty(argv, screen, sizeof screen);
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
    int rc = run_on_pty(argv, screen, sizeof screen);
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
