/* url.c — URL parts through libcurl's URL API (see url.h). */
#include "net/url.h"

#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

/* url parsed the way a transfer would parse it (any scheme, the path as
 * written), or NULL when curl refuses it or memory runs out. */
static CURLU *parse(const char *url)
{
    CURLU *u = url ? curl_url() : NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS) != CURLUE_OK) {
        curl_url_cleanup(u);
        u = NULL;
    }
    return u;
}

/* Part `what` of u (curl_free), or NULL when u has none. */
static char *part(CURLU *u, CURLUPart what)
{
    char *v = NULL;
    if (curl_url_get(u, what, &v, 0) != CURLUE_OK)
        return NULL;
    return v;
}

int url_origin(const char *url, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    CURLU *u = parse(url);
    if (!u)
        return -1;
    char *scheme = part(u, CURLUPART_SCHEME), *user = part(u, CURLUPART_USER);
    char *password = part(u, CURLUPART_PASSWORD), *host = part(u, CURLUPART_HOST);
    char *zone = part(u, CURLUPART_ZONEID), *port = part(u, CURLUPART_PORT);
    int n = -1;
    if (scheme && host) {
        size_t hl = strlen(host);
        bool bracket = zone && hl > 1 && host[hl - 1] == ']';    /* [fe80::1] and zone eth0 → [fe80::1%25eth0] */
        n = snprintf(out, cap, "%s://%s%s%s%s%.*s%s%s%s%s", scheme, user ? user : "", password ? ":" : "",
                     password ? password : "", user || password ? "@" : "", (int)(bracket ? hl - 1 : hl), host,
                     bracket ? "%25" : "", bracket ? zone : "", bracket ? "]" : "", port ? ":" : "");
        if (n >= 0 && port && (size_t)n < cap)
            n += snprintf(out + n, cap - (size_t)n, "%s", port);
    }
    curl_free(scheme), curl_free(user), curl_free(password), curl_free(host), curl_free(zone), curl_free(port);
    curl_url_cleanup(u);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = '\0';
        return -1;
    }
    return 0;
}

/* Whether curl's reading of u names a user or a password. */
static bool names_user(CURLU *u)
{
    char *user = part(u, CURLUPART_USER), *password = part(u, CURLUPART_PASSWORD);
    bool named = user || password;
    curl_free(user), curl_free(password);
    return named;
}

/* For a URL curl refuses: one past the last '@' between "://" and the path,
 * query or fragment, or NULL when there is none. */
static const char *unparsed_userinfo_end(const char *url)
{
    const char *scheme = url ? strstr(url, "://") : NULL;
    if (!scheme)
        return NULL;
    const char *host = scheme + 3, *end = host + strcspn(host, "/?#"), *at = NULL;
    for (const char *q = host; q < end; q++)
        if (*q == '@')
            at = q;
    return at ? at + 1 : NULL;
}

void url_public(const char *url, char *out, size_t cap)
{
    snprintf(out, cap, "%s", url ? url : "");
    CURLU *u = parse(url);
    const char *scheme = url ? strstr(url, "://") : NULL, *end = NULL;
    if (!u) {
        end = unparsed_userinfo_end(url);
    } else if (names_user(u) && scheme && strchr(scheme + 3, '@')) {
        end = strchr(scheme + 3, '@') + 1;      /* curl takes no '@' inside user or password */
    } else if (names_user(u)) {                 /* "http:/u:p@h": curl's own writing, without them */
        char *v = NULL;
        if (curl_url_set(u, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
            curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK && curl_url_get(u, CURLUPART_URL, &v, 0) == CURLUE_OK)
            snprintf(out, cap, "%s", v);
        else
            snprintf(out, cap, "%s", "(a URL with credentials)");
        curl_free(v);
    }
    if (end)
        snprintf(out, cap, "%.*s%s", (int)(scheme + 3 - url), url, end);
    curl_url_cleanup(u);
}

bool url_has_credentials(const char *url)
{
    CURLU *u = parse(url);
    bool named = u ? names_user(u) : unparsed_userinfo_end(url) != NULL;
    curl_url_cleanup(u);
    return named;
}

int url_path(const char *url, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    CURLU *u = parse(url);
    if (!u)
        return -1;
    char *path = part(u, CURLUPART_PATH);
    int n = path && strcmp(path, "/") ? snprintf(out, cap, "%s", path) : 0;
    curl_free(path);
    curl_url_cleanup(u);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = '\0';
        return -1;
    }
    return 0;
}

int url_target(const char *url, struct url_target *t)
{
    CURLU *u = parse(url);
    if (!u)
        return -1;
    char *scheme = part(u, CURLUPART_SCHEME), *host = part(u, CURLUPART_HOST), *zone = part(u, CURLUPART_ZONEID);
    char *port = part(u, CURLUPART_PORT), *path = part(u, CURLUPART_PATH), *query = part(u, CURLUPART_QUERY);
    int rc = -1;
    if (scheme && host && !zone && !names_user(u) && !strcmp(scheme, "http")) {
        size_t hl = strlen(host);
        bool bracket = hl > 2 && host[0] == '[' && host[hl - 1] == ']';
        int a = snprintf(t->host, sizeof t->host, "%.*s", (int)(bracket ? hl - 2 : hl), host + bracket);
        int b = snprintf(t->port, sizeof t->port, "%s", port ? port : "80");
        int c = snprintf(t->host_header, sizeof t->host_header, "%s%s%s", host, port ? ":" : "", port ? port : "");
        int d = snprintf(t->target, sizeof t->target, "%s%s%s", path && *path ? path : "/", query ? "?" : "",
                         query ? query : "");
        if (a > 0 && (size_t)a < sizeof t->host && b > 0 && (size_t)b < sizeof t->port &&
            c > 0 && (size_t)c < sizeof t->host_header && d > 0 && (size_t)d < sizeof t->target)
            rc = 0;
    }
    curl_free(scheme), curl_free(host), curl_free(zone), curl_free(port), curl_free(path), curl_free(query);
    curl_url_cleanup(u);
    return rc;
}
