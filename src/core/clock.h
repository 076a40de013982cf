/* clock.h — the one monotonic clock every timestamp in anvil comes from. */
#ifndef ANVIL_CORE_CLOCK_H
#define ANVIL_CORE_CLOCK_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC. Only differences are meaningful; never 0
 * on a running system, so 0 can mean "not stamped" in records. */
int64_t clock_now_ns(void);

/* Converts a duration in nanoseconds to milliseconds. */
static inline double ns_to_ms(int64_t ns) { return (double)ns / 1e6; }

/* Writes the current UTC time as ISO-8601 "YYYY-MM-DDTHH:MM:SSZ" into out
 * (at least 21 bytes). For humans only: never used to compute a metric. */
void clock_utc_iso8601(char out[21]);

#endif
