/* events.h — the decode matrix's event log: one line per step
 * ("HH:MM:SS text", UTC), as seed 004's event_log, appended to
 * DIR/events.log as it happens (flushed: a cut run keeps its log, and a
 * resumed one continues it) and echoed to the terminal. */
#ifndef ANVIL_DECODE_EVENTS_H
#define ANVIL_DECODE_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct decode_events {
    FILE *file;                 /* DIR/events.log, appended; NULL = not kept on disk */
    FILE *echo;                 /* the terminal (stderr); NULL = silent */
    char **lines;               /* every line of the log, the earlier run's first; owned */
    size_t n, cap;
};

/* Opens path for appending, first reading the lines an earlier run left
 * there. Returns 0, or -1 with err when it cannot be opened. */
int decode_events_open(struct decode_events *e, const char *path, FILE *echo, char *err, size_t errlen);

/* Logs one event stamped now. */
void decode_event(struct decode_events *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs one event that happened at the CLOCK_MONOTONIC instant mono_ns (the
 * wall-clock stamp is now's, moved back by how long ago that was). */
void decode_event_at(struct decode_events *e, int64_t mono_ns, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Says one line on the terminal only (not a step of the log): progress,
 * e.g. "cell 3 of 6 ... ETA 2m10s". */
void decode_note(struct decode_events *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A copy of every line into *out (malloc'd strings, *n of them; the
 * caller frees each and the array, also after a failure). Returns 0, or
 * -1 when memory runs out. */
int decode_events_copy(const struct decode_events *e, char ***out, size_t *n);

/* Closes the file and frees the lines. */
void decode_events_close(struct decode_events *e);

#endif
