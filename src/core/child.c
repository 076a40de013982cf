/* child.c — fork and exec with the parent-death signal. */
#include "core/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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
