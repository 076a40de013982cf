/* test_dirlock.c — one measurement per directory (core/dirlock.h): a second
 * taker is refused with the holders named, the lock lasts while any copy of
 * its descriptor is open (a sweep's round keeps it), and it is free again
 * once every copy is closed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "core/dirlock.h"

static void tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/anvil-lock-XXXXXX");
    cr_assert(mkdtemp(out));
}

Test(dirlock, a_second_taker_is_refused_naming_the_holders)
{
    char dir[64], err[1400], sub[96];
    tmpdir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/new/dir", dir);
    int fd = dirlock_take(sub, "anvil sweep", err, sizeof err);
    cr_assert_geq(fd, 0, "%s", err);
    dirlock_note(fd, 999999, "anvil run (a round of the sweep)");
    cr_assert_eq(dirlock_take(sub, "anvil sweep", err, sizeof err), -1);
    char self[64];
    snprintf(self, sizeof self, "anvil sweep (pid %d, still running)", (int)getpid());
    cr_assert(strstr(err, self) && strstr(err, "anvil run (a round of the sweep) (pid 999999, gone)") &&
              strstr(err, "is being measured"), "%s", err);
    dirlock_note(fd, 0, NULL);
    cr_assert_eq(dirlock_take(sub, "anvil sweep", err, sizeof err), -1);
    cr_assert_null(strstr(err, "999999"), "the ended round is no longer named: %s", err);
    dirlock_release(fd);
    int again = dirlock_take(sub, "anvil decode", err, sizeof err);
    cr_assert_geq(again, 0, "free once released: %s", err);
    dirlock_release(again);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(dirlock, a_copy_held_by_a_child_keeps_the_directory_locked)
{
    char dir[64], err[1400];
    tmpdir(dir, sizeof dir);
    int fd = dirlock_take(dir, "anvil sweep", err, sizeof err);
    cr_assert_geq(fd, 0, "%s", err);
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t child = fork();
    if (child == 0) {       /* the round: holds its copy until told */
        char c;
        close(go[1]);
        (void)!read(go[0], &c, 1);
        _exit(0);
    }
    close(go[0]);
    dirlock_release(fd);    /* the sweep is gone */
    cr_assert_eq(dirlock_take(dir, "anvil sweep", err, sizeof err), -1, "the round still holds it");
    close(go[1]);
    waitpid(child, NULL, 0);
    int again = dirlock_take(dir, "anvil sweep", err, sizeof err);
    cr_assert_geq(again, 0, "free once the round ended: %s", err);
    dirlock_release(again);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
