/* child.h — child processes that die with their parent. Every program anvil
 * starts (a sweep's rounds and their launchers, nvidia-smi, the decode
 * matrix's diagnostics) is started here: the kernel sends it SIGTERM when
 * the thread that started it ends, however that ends (kill -9 included),
 * so no round goes on loading a server, and no sampler lingers, after the
 * anvil that started it is gone. */
#ifndef ANVIL_CORE_CHILD_H
#define ANVIL_CORE_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Where the child's standard streams go and what else it keeps. */
struct child_opts {
    int in, out, err;       /* descriptors to put at 0, 1 and 2; -1 = /dev/null */
    int keep_fd;            /* one more descriptor the program keeps open (the directory lock), or -1 */
    bool new_group;         /* a process group of its own: a terminal's Ctrl-C reaches the parent only */
};

/* Starts argv[0] (looked up in PATH when it has no '/') with argv and the
 * environment, its signal mask empty and SIGINT, SIGTERM and SIGPIPE at
 * their defaults (SIGHUP as inherited: ignored under nohup), every inherited descriptor beyond 2 closed at exec but
 * o->keep_fd, and PR_SET_PDEATHSIG = SIGTERM (checked against the parent's
 * pid after it is set, so a parent that died before then is noticed too).
 * Must be called from the thread that waits for the child: the death signal
 * follows that thread. Returns the child's pid, or -1 with the reason in
 * err (also when the program cannot be executed: "PROGRAM: reason"). */
pid_t child_spawn(char *const argv[], const struct child_opts *o, char *err, size_t errlen);

/* Waits for pid (retrying on EINTR). Returns its exit status (0..255), 128 +
 * the signal that ended it, or -1. */
int child_wait(pid_t pid);

struct buf;

/* Runs argv to its end as child_spawn starts it (dies with the calling
 * thread; standard input /dev/null), its standard output appended to out and
 * its standard error to err (NULL: /dev/null). Both pipes are read to their
 * end, so a chatty program never blocks: bytes past a buffer's max are read
 * and dropped (the buffer keeps the first chunks that fit). When the program has
 * not exited timeout_ms milliseconds after it started, pipes closed or not,
 * it is killed (SIGKILL) and reaped. Returns its exit status (0..255), 128 +
 * the signal that ended it, or -1 with the reason in msg (msglen bytes):
 * "PROGRAM: reason" when it cannot be started, "PROGRAM did not finish
 * within N ms" with *timed_out true (timed_out may be NULL). */
int child_run(char *const argv[], int timeout_ms, struct buf *out, struct buf *err, bool *timed_out, char *msg,
              size_t msglen);

#endif
