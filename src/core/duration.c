/* duration.c — durations with h/m/s units. */
#include "core/duration.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>

/* Seconds per unit c, or 0 when c is not a unit. */
static double unit_s(char c)
{
    return c == 'h' ? 3600 : c == 'm' ? 60 : c == 's' ? 1 : 0;
}

/* One decimal number at *p, ≥ 0, no sign, no exponent, no "inf"/"nan"/hex
 * (strtod would take them all); advances *p. Returns -1 when none. */
static int number(const char **p, double *v)
{
    const char *s = *p, *q = s;
    while (isdigit((unsigned char)*q))
        q++;
    if (*q == '.')
        q++;
    while (isdigit((unsigned char)*q))
        q++;
    if (q == s || (q == s + 1 && *s == '.'))
        return -1;
    char *end;
    *v = strtod(s, &end);
    if (end != q)
        return -1;
    *p = q;
    return 0;
}

int duration_parse(const char *s, double *out)
{
    double total = 0, v;
    const char *p = s;
    unsigned seen = 0;  /* units used, one bit each: "1h2h" is a typo */
    if (!s || number(&p, &v) != 0)
        return -1;
    if (!*p) {          /* a plain number: seconds */
        *out = v;
        return 0;
    }
    for (;;) {
        double u = unit_s(*p);
        unsigned bit = *p == 'h' ? 1u : *p == 'm' ? 2u : 4u;
        if (u == 0 || (seen & bit))
            return -1;
        seen |= bit;
        total += v * u;
        if (!*++p)
            break;
        if (number(&p, &v) != 0)
            return -1;
    }
    if (!isfinite(total))
        return -1;
    *out = total;
    return 0;
}
