/* redact.c — secret scrubbing. */
#include "core/redact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char mark[] = REDACTED;

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

/* Whether arg is a long flag whose value is a secret: --header or
 * --api-key..., also as an unambiguous prefix ("--head", "--api"). name_len
 * gets the flag's length up to '=' (or all of it). */
static bool secret_flag(const char *arg, size_t *name_len)
{
    if (strncmp(arg, "--", 2) != 0)
        return false;
    const char *name = arg + 2;
    size_t n = strcspn(name, "=");
    *name_len = 2 + n;
    if (n < 3)
        return false;
    bool header = n <= 6 && !strncmp(name, "header", n);
    bool api_key = !strncmp(name, "api-key", n < 7 ? n : 7);
    return header || api_key;
}

/* A copy of arg with the userinfo of every scheme://userinfo@host replaced
 * by the mark. */
static char *redact_urls(const char *arg)
{
    size_t cap = strlen(arg) + 1;
    for (const char *p = arg; (p = strstr(p, "://")); p += 3)
        cap += sizeof mark;
    char *out = malloc(cap), *o = out;
    if (!out)
        return NULL;
    const char *p = arg;
    for (const char *s; (s = strstr(p, "://"));) {
        const char *host = s + 3;
        size_t authority = strcspn(host, "/?#, ");
        const char *at = NULL;
        for (const char *q = host; q < host + authority; q++)
            if (*q == '@')
                at = q;
        memcpy(o, p, (size_t)(host - p));
        o += host - p;
        if (at) {
            memcpy(o, mark, sizeof mark - 1);
            o += sizeof mark - 1;
            host = at;
        }
        p = host;
    }
    strcpy(o, p);
    return out;
}

char **redact_argv(int argc, char *const argv[], bool after_dashdash)
{
    char **v = calloc(argc > 0 ? (size_t)argc : 1, sizeof *v);
    if (!v)
        return NULL;
    bool secret_next = false, passed_on = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        size_t name_len = 0;
        if (passed_on || secret_next) {
            v[i] = strdup(mark);
            secret_next = false;
        } else if (after_dashdash && !strcmp(a, "--")) {
            v[i] = strdup(a);
            passed_on = true;
        } else if (secret_flag(a, &name_len)) {
            secret_next = a[name_len] != '=';
            v[i] = malloc(name_len + sizeof mark + 1);
            if (v[i])
                snprintf(v[i], name_len + sizeof mark + 1, "%.*s%s", (int)name_len, a,
                         a[name_len] == '=' ? "=" REDACTED : "");
        } else {
            v[i] = redact_urls(a);
        }
        if (!v[i]) {
            redact_argv_free(v, argc);
            return NULL;
        }
    }
    return v;
}

void redact_argv_free(char **v, int argc)
{
    for (int i = 0; v && i < argc; i++)
        free(v[i]);
    free(v);
}
