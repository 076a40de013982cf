/* dirlock.c — flock on DIR/anvil.lock, with the holders named in it. */
#include "core/dirlock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/file.h"

/* The holders listed in the file of fd, as "WHAT (pid N, running)" items
 * joined by ", " into out. */
static void holders(int fd, char *out, size_t cap)
{
    char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    out[0] = '\0';
    size_t used = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *end;
        long pid = strtol(line, &end, 10);
        if (pid <= 0 || *end != ' ')
            continue;
        bool alive = kill((pid_t)pid, 0) == 0 || errno == EPERM;
        int w = snprintf(out + used, cap - used, "%s%s (pid %ld, %s)", used ? ", " : "", end + 1, pid,
                         alive ? "still running" : "gone");
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
    if (!out[0])
        snprintf(out, cap, "a process that did not name itself");
}

int dirlock_take(const char *dir, const char *what, char *err, size_t errlen)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, DIRLOCK_NAME);
    if (file_mkdir_parents(path) != 0) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[800];
        holders(fd, who, sizeof who);
        if (e == EWOULDBLOCK)
            snprintf(err, errlen, "%s is being measured by %s: wait until it ends, or stop it, then try "
                     "again (%s)", dir, who, path);
        else
            snprintf(err, errlen, "cannot lock %s: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    char line[300];
    int n = snprintf(line, sizeof line, "%ld %s\n", (long)getpid(), what);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
        /* the file only names the holder; the flock is what counts */
    }
    return fd;
}

void dirlock_note(int fd, pid_t pid, const char *what)
{
    if (fd < 0)
        return;
    char text[1024];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    char *nl = strchr(text, '\n');
    size_t keep = nl ? (size_t)(nl + 1 - text) : strlen(text);
    if (pid > 0)
        snprintf(text + keep, sizeof text - keep, "%ld %s\n", (long)pid, what);
    else
        text[keep] = '\0';
    size_t len = strlen(text);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, len, 0) != (ssize_t)len) {
        /* best effort, as above */
    }
}

void dirlock_release(int fd)
{
    if (fd >= 0)
        close(fd);
}
