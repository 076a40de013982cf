/* child.c — fork and exec with the parent-death signal. */
#include "core/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"

/* In the child, between fork and exec: async-signal-safe calls only. */
static void in_child(char *const argv[], const struct child_opts *o, pid_t parent, int report)
{
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        _exit(128 + SIGTERM);   /* the parent is already gone: nobody wants this child */
    /* SIGHUP is left as inherited: handled becomes default at exec, ignored (nohup) stays ignored */
    const int reset[] = {SIGINT, SIGTERM, SIGPIPE};
    for (size_t i = 0; i < sizeof reset / sizeof *reset; i++)
        signal(reset[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);  /* a sampler thread blocks every signal */
    if (o->new_group)
        setpgid(0, 0);
    int fds[3] = {o->in, o->out, o->err};
    for (int i = 0; i < 3; i++) {
        int fd = fds[i] >= 0 ? fds[i] : open("/dev/null", i ? O_WRONLY : O_RDONLY);
        if (fd >= 0 && fd != i) {
            dup2(fd, i);
            if (fds[i] < 0)
                close(fd);
        }
    }
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);   /* nothing of the parent's leaks into the program */
    if (o->keep_fd >= 0)
        fcntl(o->keep_fd, F_SETFD, 0);
    execvp(argv[0], argv);
    int e = errno;
    (void)!write(report, &e, sizeof e);     /* report is closed at a successful exec */
    _exit(127);
}

pid_t child_spawn(char *const argv[], const struct child_opts *o, char *err, size_t errlen)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot start %s: pipe: %s", argv[0], strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        in_child(argv, o, parent, report[1]);
    close(report[1]);
    if (pid < 0) {
        snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(errno));
        close(report[0]);
        return -1;
    }
    int e = 0;
    ssize_t n;
    while ((n = read(report[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(report[0]);
    if (n == (ssize_t)sizeof e) {   /* exec failed: as posix_spawn says it */
        child_wait(pid);
        snprintf(err, errlen, "%s: %s", argv[0], strerror(e));
        return -1;
    }
    return pid;
}

int child_wait(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Reads fds[i] into bufs[i] until both reach their end or the deadline (ns)
 * passes; a buffer's append failing past its max drops the bytes read. */
static void drain(struct pollfd fds[2], struct buf *bufs[2], int64_t deadline)
{
    int open = (fds[0].fd >= 0) + (fds[1].fd >= 0);
    char chunk[4096];
    while (open > 0) {
        int64_t left = (deadline - clock_now_ns()) / 1000000;
        if (left <= 0)
            return;
        int ready = poll(fds, 2, (int)left);
        if (ready < 0 && errno != EINTR)
            return;
        for (int i = 0; ready > 0 && i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                fds[i].fd = -1;     /* poll skips a negative descriptor */
                open--;
                continue;
            }
            buf_append(bufs[i], chunk, (size_t)n);
        }
    }
}

/* Reaps pid by the deadline (ns), else kills and reaps it (*killed true).
 * Returns its status as child_wait does, or -1. */
static int reap_by(pid_t pid, int64_t deadline, bool *killed)
{
    int st;
    pid_t w;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0 && clock_now_ns() < deadline) {
        struct timespec ms = {0, 1000000};    /* the pipes closed: it is exiting */
        nanosleep(&ms, NULL);
    }
    if (w == pid)
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (w < 0 && errno != EINTR)
        return child_wait(pid);
    kill(pid, SIGKILL);
    child_wait(pid);
    *killed = true;
    return -1;
}

int child_run(char *const argv[], int timeout_ms, struct buf *out, struct buf *err, bool *timed_out, char *msg,
              size_t msglen)
{
    if (timed_out)
        *timed_out = false;
    int64_t deadline = clock_now_ns() + (int64_t)timeout_ms * 1000000;
    int p[2][2] = {{-1, -1}, {-1, -1}};
    struct buf *bufs[2] = {out, err};
    for (int i = 0; i < 2; i++)
        if (bufs[i] && pipe2(p[i], O_CLOEXEC) != 0) {
            snprintf(msg, msglen, "cannot start %s: pipe: %s", argv[0], strerror(errno));
            for (int k = 0; k < 2; k++)
                for (int e = 0; e < 2; e++)
                    if (p[k][e] >= 0)
                        close(p[k][e]);
            return -1;
        }
    struct child_opts o = {.in = -1, .out = p[0][1], .err = p[1][1], .keep_fd = -1};
    pid_t pid = child_spawn(argv, &o, msg, msglen);
    for (int i = 0; i < 2; i++)
        if (p[i][1] >= 0)
            close(p[i][1]);
    struct pollfd fds[2] = {{p[0][0], POLLIN, 0}, {p[1][0], POLLIN, 0}};
    if (pid > 0)
        drain(fds, bufs, deadline);
    for (int i = 0; i < 2; i++)
        if (p[i][0] >= 0)
            close(p[i][0]);
    if (pid < 0)
        return -1;
    bool killed = false;
    int rc = reap_by(pid, deadline, &killed);
    if (killed) {
        if (timed_out)
            *timed_out = true;
        snprintf(msg, msglen, "%s did not finish within %d ms", argv[0], timeout_ms);
    } else if (rc < 0) {
        snprintf(msg, msglen, "%s: cannot wait for it: %s", argv[0], strerror(errno));
    }
    return rc;
}
