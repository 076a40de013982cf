/* events.c — the decode matrix's timestamped event log. */
#include "decode/events.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/vec.h"

static void keep(struct decode_events *e, const char *line)
{
    if (VEC_RESERVE(e->lines, e->cap, e->n + 1, 64) != 0)
        return;
    char *s = strdup(line);
    if (s)
        e->lines[e->n++] = s;
}

int decode_events_open(struct decode_events *e, const char *path, FILE *echo, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->echo = echo;
    if (!path)
        return 0;
    FILE *old = fopen(path, "r");
    if (old) {
        char line[1200];
        while (fgets(line, sizeof line, old)) {
            line[strcspn(line, "\n")] = 0;
            if (*line)
                keep(e, line);
        }
        fclose(old);
    }
    if (!(e->file = fopen(path, "a"))) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void vlog(struct decode_events *e, int64_t ago_ns, const char *fmt, va_list ap)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t wall = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - (ago_ns > 0 ? ago_ns : 0);
    time_t t = (time_t)(wall / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char line[1200];
    size_t n = strftime(line, sizeof line, "%H:%M:%S ", &tm);
    vsnprintf(line + n, sizeof line - n, fmt, ap);
    keep(e, line);
    if (e->file) {
        fprintf(e->file, "%s\n", line);
        fflush(e->file);
    }
    if (e->echo)
        fprintf(e->echo, "anvil decode: %s\n", line);
}

void decode_event(struct decode_events *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(e, 0, fmt, ap);
    va_end(ap);
}

void decode_note(struct decode_events *e, const char *fmt, ...)
{
    if (!e->echo)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(e->echo, "anvil decode: ");
    vfprintf(e->echo, fmt, ap);
    fputc('\n', e->echo);
    va_end(ap);
}

void decode_event_at(struct decode_events *e, int64_t mono_ns, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(e, clock_now_ns() - mono_ns, fmt, ap);
    va_end(ap);
}

int decode_events_copy(const struct decode_events *e, char ***out, size_t *n)
{
    *n = 0;
    if (!(*out = calloc(e->n ? e->n : 1, sizeof **out)))
        return -1;
    for (; *n < e->n; (*n)++)
        if (!((*out)[*n] = strdup(e->lines[*n])))
            return -1;
    return 0;
}

void decode_events_close(struct decode_events *e)
{
    if (e->file)
        fclose(e->file);
    for (size_t i = 0; i < e->n; i++)
        free(e->lines[i]);
    free(e->lines);
    memset(e, 0, sizeof *e);
}
