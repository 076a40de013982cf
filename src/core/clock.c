/* clock.c — monotonic and wall-clock time. */
#include "core/clock.h"

#include <time.h>

int64_t clock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void clock_utc_compact(char out[17])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

void clock_utc_iso8601(char out[21])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
