/* cache.c — prefix-cache flush per engine. */
#include "openai/cache.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/escape.h"
#include "net/http.h"

const char *cache_flush_name(enum cache_flush f)
{
    return f == CACHE_FLUSHED ? "flushed" : f == CACHE_FLUSH_UNSUPPORTED ? "unsupported" : "failed";
}

static const char *flush_path(enum server_engine e)
{
    switch (e) {
    case ENGINE_VLLM:
    case ENGINE_ANVIL_SIM:
        return "/reset_prefix_cache";
    case ENGINE_SGLANG:
        return "/flush_cache";
    default:
        return NULL;
    }
}

enum cache_flush server_flush_prefix_cache(const struct server_info *s, const struct curl_slist *headers,
                                           long timeout_ms, const char **path, char *err, size_t errlen)
{
    *path = flush_path(s->engine_id);
    if (!*path) {
        snprintf(err, errlen, "%s offers no way to empty its prefix cache: the run starts from whatever "
                 "it holds", s->engine);
        return CACHE_FLUSH_UNSUPPORTED;
    }
    char url[700];
    snprintf(url, sizeof url, "%s%s", s->root_url, *path);
    struct buf b;
    buf_init(&b, 64u << 10);
    long status = 0;
    char why[256] = "";
    CURLcode rc = http_fetch(url, headers, "", timeout_ms, &b, &status, why, sizeof why);
    enum cache_flush out = CACHE_FLUSHED;
    char shown[sizeof s->display_url];      /* the root, without credentials */
    snprintf(shown, sizeof shown, "%s", s->display_url);
    size_t n = strlen(shown);
    if (n >= 3 && !strcmp(shown + n - 3, "/v1"))
        shown[n - 3] = '\0';
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "POST %s%s: %s", shown, *path, why);
        out = CACHE_FLUSH_FAILED;
    } else if (status == 404 || status == 405) {
        snprintf(err, errlen, "%s does not serve POST %s (HTTP %ld)%s: the run starts from whatever its "
                 "prefix cache holds", s->engine, *path, status,
                 s->engine_id == ENGINE_VLLM ? "; vLLM serves it with VLLM_SERVER_DEV_MODE=1" : "");
        out = CACHE_FLUSH_UNSUPPORTED;
    } else if (status >= 300) {
        char body_text[240];    /* the server's text, its control characters escaped */
        text_escape(body_text, sizeof body_text, b.data ? b.data : "", b.len < 200 ? b.len : 200);
        snprintf(err, errlen, "POST %s answered HTTP %ld: %s", *path, status, b.len ? body_text : "(empty body)");
        out = CACHE_FLUSH_FAILED;
    }
    buf_free(&b);
    return out;
}
