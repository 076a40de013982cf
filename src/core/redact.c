/* redact.c — secret scrubbing. */
#include "core/redact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char mark[] = "[redacted]";

void redact(char *s, size_t cap, const char *secret)
{
    size_t n = strlen(secret);
    if (n < 4 || cap < sizeof mark)
        return;
    char *rest = malloc(cap);
    if (!rest)
        return;
    for (char *at = s; (at = strstr(at, secret));) {
        snprintf(rest, cap, "%s", at + n);
        snprintf(at, cap - (size_t)(at - s), "%s%s", mark, rest);
        size_t left = strlen(at);
        at += left < sizeof mark - 1 ? left : sizeof mark - 1;
    }
    free(rest);
    size_t len = strlen(s);
    for (size_t k = n - 1 < len ? n - 1 : len; k >= 4; k--)
        if (!strncmp(s + len - k, secret, k)) {
            size_t at = len - k;
            if (at + sizeof mark > cap)     /* the mark must fit whole */
                at = cap - sizeof mark;
            snprintf(s + at, cap - at, "%s", mark);
            break;
        }
}
