/* dirlock.h — one measurement at a time per results directory. A sweep or a
 * decode matrix holds DIR/anvil.lock (flock) while it measures; the lock
 * file names the processes measuring. A round started by the sweep inherits
 * the lock, so a directory whose sweep was killed stays locked until its
 * last round has ended (rounds end with their parent: core/child.h), and a
 * --resume started meanwhile is refused instead of measuring a round again
 * beside the one still running. */
#ifndef ANVIL_CORE_DIRLOCK_H
#define ANVIL_CORE_DIRLOCK_H

#include <stddef.h>
#include <sys/types.h>

/* The lock file's name inside the directory. */
#define DIRLOCK_NAME "anvil.lock"

/* Takes the lock of dir (creating dir and DIR/anvil.lock as needed) for
 * what (e.g. "anvil sweep"), and writes "PID WHAT" into the file. Returns
 * the lock's descriptor (close-on-exec; the lock lasts until every copy of
 * it is closed), or -1 with err naming the directory and, when another
 * process holds it, the processes the file names and whether each is still
 * alive (a usage error: exit status 2), or why the file cannot be made. */
int dirlock_take(const char *dir, const char *what, char *err, size_t errlen);

/* Adds a line "PID WHAT" (e.g. the round in flight) to the lock file of fd,
 * after the holder's own line; pid 0 removes the added line. Best effort:
 * the file only names the processes, the flock is the lock. */
void dirlock_note(int fd, pid_t pid, const char *what);

/* Releases the lock (closes fd; -1 is ignored). The file stays: removing
 * it could let two processes lock two different files. */
void dirlock_release(int fd);

#endif
