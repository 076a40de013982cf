/* flags.c — numeric flag values. */
#include "cli/flags.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int flag_long(const char *cmd, const char *flag, const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        fprintf(stderr, "anvil %s: --%s: expected a whole number from %ld to %ld, got '%s'\n",
                cmd, flag, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int flag_double(const char *cmd, const char *flag, const char *s, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < min) {
        fprintf(stderr, "anvil %s: --%s: expected a number ≥ %g, got '%s'\n", cmd, flag, min, s);
        return -1;
    }
    *out = v;
    return 0;
}

int flag_rate(const char *cmd, const char *flag, const char *s, double *out)
{
    if (!strcmp(s, "inf")) {
        *out = INFINITY;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (end != s && !*end && isfinite(v) && v > 0) {
        *out = v;
        return 0;
    }
    fprintf(stderr, "anvil %s: --%s: expected a number > 0 or inf, got '%s'\n", cmd, flag, s);
    return -1;
}
