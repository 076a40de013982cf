/* duration.h — a length of time as people type it on a command line:
 * "90" (seconds), "45s", "90m", "2h", "1.5h", "1h30m". */
#ifndef ANVIL_CORE_DURATION_H
#define ANVIL_CORE_DURATION_H

/* Parses the whole of s as a duration in seconds into *out: a plain number
 * (seconds), or one or more groups NUMBER UNIT with UNIT one of h, m, s
 * (hours, minutes, seconds; "1h30m" = 5400), each number a decimal ≥ 0
 * (fractions allowed: "1.5h"). Returns 0, or -1 for anything else (empty,
 * a sign, an unknown unit, a unit twice, trailing text, an infinite or
 * NaN value), *out then unchanged. */
int duration_parse(const char *s, double *out);

#endif
