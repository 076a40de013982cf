/* clock.h — the one monotonic clock every timestamp in anvil comes from. */
#ifndef ANVIL_CORE_CLOCK_H
#define ANVIL_CORE_CLOCK_H

#include <stdint.h>
#include <sys/time.h>

/* Nanoseconds on CLOCK_MONOTONIC. Only differences are meaningful; never 0
 * on a running system, so 0 can mean "not stamped" in records. */
int64_t clock_now_ns(void);

/* Converts a duration in nanoseconds to milliseconds. */
static inline double ns_to_ms(int64_t ns) { return (double)ns / 1e6; }

/* A duration in nanoseconds (≥ 0) as the struct timeval libevent timers take. */
static inline struct timeval ns_to_timeval(int64_t ns)
{
    return (struct timeval){(time_t)(ns / 1000000000), (suseconds_t)(ns % 1000000000 / 1000)};
}

/* A duration in seconds (≥ 0, fractions kept to the µs) as a struct timeval. */
static inline struct timeval s_to_timeval(double s)
{
    return ns_to_timeval((int64_t)(s * 1e9));
}

/* Writes the current UTC time as "YYYYMMDDTHHMMSSZ" into out (at least 17
 * bytes): for names of runs and directories. */
void clock_utc_compact(char out[17]);

/* Writes the current UTC time as ISO-8601 "YYYY-MM-DDTHH:MM:SSZ" into out
 * (at least 21 bytes). For humans only: never used to compute a metric. */
void clock_utc_iso8601(char out[21]);

#endif
