/* test_child.c — programs anvil starts die with the thread that started
 * them (core/child.h), and an exec failure reads as posix_spawn's did. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "core/child.h"

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
