/* metrics_url.c — the server's metrics URL and its headers (metrics_url.h). */
#include "observe/metrics_url.h"

#include <stdio.h>
#include <string.h>

#include "observe/fetch.h"

bool obs_metrics_url_ok(const char *u)
{
    return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8) || !strncmp(u, "file://", 7);
}

bool obs_server_metrics_url(const char *mode, const char *base_url, char *out, size_t cap)
{
    if (cap)
        out[0] = '\0';
    if (!mode || !strcmp(mode, "off"))
        return false;
    if (strcmp(mode, "auto")) {
        snprintf(out, cap, "%s", mode);
        return true;
    }
    char root[1024];
    obs_url_root(base_url ? base_url : "", root, sizeof root);
    snprintf(out, cap, "%s/metrics", root);
    return true;
}

const struct curl_slist *obs_metrics_headers(const char *url, const char *base_url,
                                             const struct curl_slist *headers)
{
    char origin[1100], base_origin[1100];
    obs_url_origin(url ? url : "", origin, sizeof origin);
    obs_url_origin(base_url ? base_url : "", base_origin, sizeof base_origin);
    return origin[0] && !strcmp(origin, base_origin) ? headers : NULL;
}
