/* redact.c — secret scrubbing. */
#include "core/redact.h"

#include "core/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

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

/* ---- the credentials of one command ---- */

int secrets_add(struct secrets *s, const char *value)
{
    size_t len = strlen(value);
    if (len < 4)
        return 0;
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], value))
            return 0;
    if (VEC_RESERVE(s->v, s->cap, s->n + 1, 8) != 0)
        return -1;
    char *copy = strdup(value);
    if (!copy)
        return -1;
    size_t at = s->n;       /* longest first */
    while (at > 0 && strlen(s->v[at - 1]) < len) {
        s->v[at] = s->v[at - 1];
        at--;
    }
    s->v[at] = copy;
    s->n++;
    return 0;
}

/* Adds the first n bytes of p. */
static int add_n(struct secrets *s, const char *p, size_t n)
{
    char *t = strndup(p, n);
    int rc = t ? secrets_add(s, t) : -1;
    free(t);
    return rc;
}

/* Adds base64(text), as an Authorization: Basic header carries it. */
static int add_base64(struct secrets *s, const char *text)
{
    size_t n = strlen(text);
    char *b = malloc(4 * ((n + 2) / 3) + 1);
    if (!b)
        return -1;
    EVP_EncodeBlock((unsigned char *)b, (const unsigned char *)text, (int)n);
    int rc = secrets_add(s, b);
    free(b);
    return rc;
}

/* Adds "user:password" and the password alone, from n bytes at p. */
static int add_userinfo(struct secrets *s, const char *p, size_t n)
{
    const char *colon = memchr(p, ':', n);
    int rc = add_n(s, p, n);
    if (rc == 0 && colon)
        rc = add_n(s, colon + 1, n - (size_t)(colon + 1 - p));
    return rc;
}

int secrets_add_header(struct secrets *s, const char *line)
{
    const char *colon = strchr(line, ':');
    const char *v = colon ? colon + 1 : line;
    v += strspn(v, " \t");
    size_t len = strlen(v);
    while (len && (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\r'))
        len--;
    if (add_n(s, v, len) != 0)
        return -1;
    size_t scheme = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-");
    if (scheme == 0 || scheme >= len || v[scheme] != ' ')
        return 0;
    const char *cred = v + scheme + strspn(v + scheme, " ");
    size_t clen = len - (size_t)(cred - v);
    if (add_n(s, cred, clen) != 0)
        return -1;
    if (scheme != 5 || strncasecmp(v, "basic", 5) != 0 || clen > 8192)
        return 0;
    unsigned char plain[6200];
    int got = EVP_DecodeBlock(plain, (const unsigned char *)cred, (int)clen);
    if (got <= 0)
        return 0;   /* not base64: the credential as written is all there is */
    while (got > 0 && plain[got - 1] == '\0')   /* EVP_DecodeBlock counts the padding */
        got--;
    return add_userinfo(s, (const char *)plain, (size_t)got);
}

/* Percent-decodes n bytes at p into out (at least n + 1 bytes). */
static void percent_decode(const char *p, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned hi, lo;
        if (p[i] == '%' && i + 2 < n && sscanf(p + i + 1, "%1x%1x", &hi, &lo) == 2) {
            out[k++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[k++] = p[i];
        }
    }
    out[k] = '\0';
}

int secrets_add_url(struct secrets *s, const char *url)
{
    const char *scheme = url ? strstr(url, "://") : NULL;
    if (!scheme)
        return 0;
    const char *host = scheme + 3;
    size_t authority = strcspn(host, "/?#");
    const char *at = NULL;
    for (const char *q = host; q < host + authority; q++)
        if (*q == '@')
            at = q;
    if (!at)
        return 0;
    size_t n = (size_t)(at - host);
    char *plain = malloc(n + 1);
    if (!plain)
        return -1;
    percent_decode(host, n, plain);
    int rc = add_userinfo(s, host, n);
    if (rc == 0)
        rc = add_userinfo(s, plain, strlen(plain));
    if (rc == 0)
        rc = add_base64(s, plain);
    free(plain);
    return rc;
}

void secrets_scrub(const struct secrets *s, char *text, size_t cap)
{
    for (size_t i = 0; s && i < s->n; i++)
        redact(text, cap, s->v[i]);
}

bool secrets_found(const struct secrets *s, const char *text)
{
    for (size_t i = 0; s && text && i < s->n; i++)
        if (strstr(text, s->v[i]))
            return true;
    return false;
}

int secrets_scrub_json(const struct secrets *s, cJSON *j)
{
    if (!s || !s->n || !j)
        return 0;
    int rc = 0;
    if (cJSON_IsString(j) && j->valuestring && secrets_found(s, j->valuestring)) {
        /* each replacement can grow the text by the mark */
        size_t len = strlen(j->valuestring), cap = len + 1 + (len / 4 + 1) * sizeof mark;
        char *t = malloc(cap);
        if (t) {
            snprintf(t, cap, "%s", j->valuestring);
            secrets_scrub(s, t, cap);
        }
        /* cJSON_SetValuestring keeps the old buffer when the new text is longer: replace it */
        char *old = j->valuestring;
        j->valuestring = t ? t : strdup(mark);
        free(old);
        rc = t ? 0 : -1;
    }
    for (cJSON *c = j->child; c; c = c->next)
        if (secrets_scrub_json(s, c) != 0)
            rc = -1;
    return rc;
}

void secrets_free(struct secrets *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    *s = (struct secrets){0};
}
