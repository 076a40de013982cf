/* test_child.c — programs anvil starts die with the thread that started
 * them (core/child.h), and an exec failure reads as posix_spawn's did. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "core/buf.h"
#include "core/child.h"
#include "core/clock.h"

/* Whether pid is a live process (a zombie counts as gone). */
static bool alive(pid_t pid)
{
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *end = strrchr(stat, ')');
    return end && end[2] != 'Z' && end[2] != 'X';
}

Test(child, dies_with_its_parent_killed_by_sigkill, .timeout = 30)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t parent = fork();
    if (parent == 0) {      /* stands for anvil: starts a long program, then is killed */
        char *argv[] = {"sleep", "60", NULL};
        struct child_opts o = {.in = -1, .out = -1, .err = -1, .keep_fd = -1};
        char err[200];
        pid_t c = child_spawn(argv, &o, err, sizeof err);
        (void)!write(p[1], &c, sizeof c);
        pause();
        _exit(0);
    }
    close(p[1]);
    pid_t c = 0;
    cr_assert_eq(read(p[0], &c, sizeof c), (ssize_t)sizeof c);
    cr_assert_gt(c, 0);
    cr_assert(alive(c));
    kill(parent, SIGKILL);
    waitpid(parent, NULL, 0);
    for (int i = 0; i < 500 && alive(c); i++) {
        struct timespec t = {0, 10000000};
        nanosleep(&t, NULL);
    }
    bool gone = !alive(c);
    if (!gone)
        kill(c, SIGKILL);
    cr_assert(gone, "the child (pid %d) outlived its parent's kill -9 by 5 s", (int)c);
}

Test(child, runs_and_reports_exec_failure_and_exit_status)
{
    struct child_opts o = {.in = -1, .out = -1, .err = -1, .keep_fd = -1};
    char err[200] = "";
    char *missing[] = {"anvil-no-such-program", NULL};
    cr_assert_eq(child_spawn(missing, &o, err, sizeof err), -1);
    cr_assert(strstr(err, "anvil-no-such-program: No such file"), "%s", err);
    char *exit3[] = {"sh", "-c", "exit 3", NULL};
    pid_t pid = child_spawn(exit3, &o, err, sizeof err);
    cr_assert_gt(pid, 0, "%s", err);
    cr_assert_eq(child_wait(pid), 3);
}

Test(child, run_captures_both_streams_and_the_exit_status)
{
    struct buf out, err;
    buf_init(&out, 1 << 16);
    buf_init(&err, 1 << 16);
    char msg[200] = "";
    bool late = true;
    char *argv[] = {"sh", "-c", "echo to-out; echo to-err >&2; exit 7", NULL};
    cr_assert_eq(child_run(argv, 10000, &out, &err, &late, msg, sizeof msg), 7, "%s", msg);
    cr_assert_not(late);
    cr_assert_str_eq(out.data, "to-out\n");
    cr_assert_str_eq(err.data, "to-err\n");
    buf_reset(&out);
    char *killed[] = {"sh", "-c", "echo before; kill -TERM $$", NULL};
    cr_assert_eq(child_run(killed, 10000, &out, NULL, NULL, msg, sizeof msg), 128 + SIGTERM, "%s", msg);
    cr_assert_str_eq(out.data, "before\n");
    char *missing[] = {"anvil-no-such-program", NULL};
    cr_assert_eq(child_run(missing, 10000, &out, &err, &late, msg, sizeof msg), -1);
    cr_assert_not(late);
    cr_assert(strstr(msg, "anvil-no-such-program: No such file"), "%s", msg);
    buf_free(&out);
    buf_free(&err);
}

Test(child, run_reads_past_the_cap_so_a_chatty_program_finishes, .timeout = 60)
{
    struct buf out;
    buf_init(&out, 1000);
    char msg[200] = "";
    /* 4 MiB, far past a pipe's 64 KiB: a reader that stopped at the cap would leave it blocked */
    char *argv[] = {"sh", "-c", "head -c 4194304 /dev/zero | tr '\\0' x; exit 0", NULL};
    bool late = true;
    cr_assert_eq(child_run(argv, 30000, &out, NULL, &late, msg, sizeof msg), 0, "%s", msg);
    cr_assert_not(late);
    cr_assert_leq(out.len, 1000);
    for (size_t i = 0; i < out.len; i++)
        cr_assert_eq(out.data[i], 'x');
    buf_free(&out);
}

/* A program past its time is killed, also one that closed its output and
 * lingers (which a reader waiting for the exit after end of file would wait
 * out: nvidia-smi's reader did, for as long as the program lived). */
Test(child, run_kills_a_program_past_its_time, .timeout = 60)
{
    static const char *const scripts[] = {"echo partial; sleep 30", "echo partial; exec >&- 2>&-; sleep 30"};
    for (size_t i = 0; i < 2; i++) {
        struct buf out;
        buf_init(&out, 1 << 16);
        char msg[200] = "";
        bool late = false;
        char *argv[] = {"sh", "-c", (char *)scripts[i], NULL};
        int64_t t0 = clock_now_ns();
        cr_assert_eq(child_run(argv, 300, &out, NULL, &late, msg, sizeof msg), -1, "%s", scripts[i]);
        double s = (double)(clock_now_ns() - t0) / 1e9;
        cr_assert(late, "%s", scripts[i]);
        cr_assert_str_eq(msg, "sh did not finish within 300 ms");
        cr_assert_str_eq(out.data, "partial\n");
        cr_assert_lt(s, 20, "%s: %.1f s, the program sleeps 30 s", scripts[i], s);
        buf_free(&out);
    }
}
