/* discover.c — model discovery, engine detection, token counting. */
#include "openai/discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "openai/chunk.h"
#include "net/http.h"

/* base_url without "user:password@" after the scheme. */
static void strip_credentials(const char *url, char *out, size_t cap)
{
    const char *scheme = strstr(url, "://");
    const char *host = scheme ? scheme + 3 : url;
    const char *at = strchr(host, '@'), *slash = strchr(host, '/');
    if (at && (!slash || at < slash))
        snprintf(out, cap, "%.*s%s", (int)(host - url), url, at + 1);
    else
        snprintf(out, cap, "%s", url);
}

/* GETs or POSTs url and parses the reply as JSON. Returns the parsed value
 * (caller deletes) or NULL with err set; *status receives the HTTP status. */
static cJSON *fetch_json(const char *url, const struct curl_slist *headers, const char *body,
                         long timeout_ms, long *status, char *err, size_t errlen)
{
    struct buf b;
    buf_init(&b, 4u << 20);
    CURLcode rc = http_fetch(url, headers, body, timeout_ms, &b, status, err, errlen);
    cJSON *j = NULL;
    char shown[600];
    strip_credentials(url, shown, sizeof shown);
    if (rc != CURLE_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "cannot reach %s: %s", shown, why);
    } else if (*status >= 400) {
        snprintf(err, errlen, "%s answered HTTP %ld: %.200s%s", shown, *status, b.len ? b.data : "",
                 *status == 404 ? " (does --base-url end in /v1?)" : "");
    } else if (!(j = cJSON_ParseWithLength(b.data ? b.data : "", b.len))) {
        snprintf(err, errlen, "%s: reply is not JSON: %.120s", shown, b.len ? b.data : "(empty)");
    }
    buf_free(&b);
    return j;
}

static void set_urls(struct server_info *s, const char *base_url)
{
    snprintf(s->base_url, sizeof s->base_url, "%s", base_url);
    size_t n = strlen(s->base_url);
    while (n && s->base_url[n - 1] == '/')
        s->base_url[--n] = '\0';
    snprintf(s->root_url, sizeof s->root_url, "%s", s->base_url);
    if (n >= 3 && !strcmp(s->root_url + n - 3, "/v1"))
        s->root_url[n - 3] = '\0';
    strip_credentials(s->base_url, s->display_url, sizeof s->display_url);
}

static const char *engine_from_owner(const char *owned_by)
{
    if (!owned_by)
        return "unknown";
    if (!strcmp(owned_by, "vllm"))
        return "vllm";
    if (!strcmp(owned_by, "sglang"))
        return "sglang";
    if (!strcmp(owned_by, "llamacpp"))
        return "llama.cpp";
    return "unknown";
}

/* Picks the model from a /models reply. Returns 0 or -1 with err set. */
static int pick_model(const cJSON *models, const char *want, struct server_info *s,
                      char *err, size_t errlen)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(models, "data");
    const cJSON *m, *chosen = NULL;
    char names[256] = "";
    cJSON_ArrayForEach(m, data) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
        if (!cJSON_IsString(id))
            continue;
        if (!chosen && (!want || !strcmp(want, id->valuestring)))
            chosen = m;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", id->valuestring);
    }
    if (!chosen) {
        if (want)
            snprintf(err, errlen, "model '%s' is not served at %s/models (served: %s)", want,
                     s->display_url, names[0] ? names : "none");
        else
            snprintf(err, errlen, "%s/models lists no model", s->display_url);
        return -1;
    }
    snprintf(s->model, sizeof s->model, "%s", cJSON_GetObjectItemCaseSensitive(chosen, "id")->valuestring);
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(chosen, "max_model_len");
    s->max_model_len = cJSON_IsNumber(len) ? chunk_count_from_double(len->valuedouble) : -1;
    const cJSON *owner = cJSON_GetObjectItemCaseSensitive(chosen, "owned_by");
    snprintf(s->engine, sizeof s->engine, "%s", engine_from_owner(cJSON_IsString(owner) ? owner->valuestring : NULL));
    return 0;
}

/* GET {root}/version: vLLM answers {"version": "..."}, anvil sim adds "server". */
static void read_version(struct server_info *s, const struct curl_slist *headers, long timeout_ms)
{
    char url[600], err[256];
    long status;
    snprintf(url, sizeof url, "%s/version", s->root_url);
    cJSON *v = fetch_json(url, headers, NULL, timeout_ms, &status, err, sizeof err);
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(v, "version");
    const cJSON *server = cJSON_GetObjectItemCaseSensitive(v, "server");
    if (cJSON_IsString(ver))
        snprintf(s->engine_version, sizeof s->engine_version, "%s", ver->valuestring);
    if (cJSON_IsString(server) && !strcmp(server->valuestring, "anvil-sim"))
        snprintf(s->engine, sizeof s->engine, "anvil-sim");
    cJSON_Delete(v);
}

int discover(const char *base_url, const struct curl_slist *headers, const char *want_model,
             long timeout_ms, struct server_info *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    set_urls(out, base_url);
    char url[600];
    long status;
    snprintf(url, sizeof url, "%s/models", out->base_url);
    cJSON *models = fetch_json(url, headers, NULL, timeout_ms, &status, err, errlen);
    if (!models)
        return -1;
    int rc = pick_model(models, want_model, out, err, errlen);
    cJSON_Delete(models);
    if (rc == 0)
        read_version(out, headers, timeout_ms);
    return rc;
}

static char *tokenize_body(const struct server_info *s, enum endpoint ep, const char *prompt)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", s->model);
    if (ep == EP_CHAT) {
        cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "user");
        cJSON_AddStringToObject(m, "content", prompt);
        cJSON_AddItemToArray(msgs, m);
        cJSON_AddBoolToObject(root, "add_generation_prompt", 1);
    } else {
        cJSON_AddStringToObject(root, "prompt", prompt);
    }
    char *body = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return body;
}

long server_count_tokens(const struct server_info *s, const struct curl_slist *headers,
                         enum endpoint ep, bool tokenize, const char *prompt, long timeout_ms,
                         char *err, size_t errlen)
{
    char url[600];
    char *body;
    if (tokenize) {
        snprintf(url, sizeof url, "%s/tokenize", s->root_url);
        body = tokenize_body(s, ep, prompt);
    } else {
        snprintf(url, sizeof url, "%s%s", s->base_url, endpoint_path(ep));
        struct request_opts o = {.endpoint = ep, .model = s->model, .max_tokens = 1};
        body = request_body(&o, prompt);
    }
    if (!body) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    long status;
    cJSON *reply = fetch_json(url, headers, body, timeout_ms, &status, err, errlen);
    free(body);
    if (!reply)
        return -1;
    const cJSON *n = tokenize ? cJSON_GetObjectItemCaseSensitive(reply, "count")
                              : cJSON_GetObjectItemCaseSensitive(
                                    cJSON_GetObjectItemCaseSensitive(reply, "usage"), "prompt_tokens");
    long count = cJSON_IsNumber(n) ? chunk_count_from_double(n->valuedouble) : -1;
    char shown[600];
    strip_credentials(url, shown, sizeof shown);
    if (count < 0)
        snprintf(err, errlen, "%s: reply has no %s", shown, tokenize ? "\"count\"" : "usage.prompt_tokens");
    cJSON_Delete(reply);
    return count;
}
