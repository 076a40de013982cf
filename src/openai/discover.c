/* discover.c — model discovery, engine detection, token counting. */
#include "openai/discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/escape.h"
#include "openai/chunk.h"
#include "net/http.h"
#include "net/url.h"

cJSON *server_fetch_json(const char *url, const struct curl_slist *headers, const char *body,
                         long timeout_ms, long *status, char *err, size_t errlen)
{
    struct buf b;
    buf_init(&b, 4u << 20);
    *status = 0;
    CURLcode rc = http_fetch(url, headers, body, timeout_ms, &b, status, err, errlen);
    cJSON *j = NULL;
    char shown[600];
    url_public(url, shown, sizeof shown);
    char body_text[240];    /* the server's text, its control characters escaped */
    text_escape(body_text, sizeof body_text, b.data ? b.data : "", b.len < 200 ? b.len : 200);
    if (rc != CURLE_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "%s%s: %s", http_refused(rc) ? "" : "cannot reach ", shown, why);
    } else if (*status >= 400) {
        snprintf(err, errlen, "%s answered HTTP %ld: %s%s", shown, *status, body_text,
                 *status == 404 ? " (does --base-url end in /v1?)" : "");
    } else if (!(j = cJSON_ParseWithLength(b.data ? b.data : "", b.len))) {
        snprintf(err, errlen, "%s: reply is not JSON: %.120s", shown, b.len ? body_text : "(empty)");
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
    url_public(s->base_url, s->display_url, sizeof s->display_url);
}

static const char *const engine_names[] = {
    [ENGINE_UNKNOWN] = "unknown", [ENGINE_VLLM] = "vllm", [ENGINE_SGLANG] = "sglang",
    [ENGINE_LLAMACPP] = "llama.cpp", [ENGINE_TGI] = "tgi", [ENGINE_ANVIL_SIM] = "anvil-sim",
};

static void set_engine(struct server_info *s, enum server_engine e)
{
    s->engine_id = e;
    snprintf(s->engine, sizeof s->engine, "%s", engine_names[e]);
}

/* The engine a model card's owned_by names. TGI's owned_by is the model id
 * and anvil-sim's "anvil": both are told by their version endpoint. */
static enum server_engine engine_from_owner(const char *owned_by)
{
    if (!strcmp(owned_by, "vllm"))
        return ENGINE_VLLM;
    if (!strcmp(owned_by, "sglang"))
        return ENGINE_SGLANG;
    if (!strcmp(owned_by, "llamacpp"))
        return ENGINE_LLAMACPP;
    return ENGINE_UNKNOWN;
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
    if (s->max_model_len > 0) {
        s->context_len = s->max_model_len;
        snprintf(s->context_source, sizeof s->context_source, "/models max_model_len");
    }
    const cJSON *owner = cJSON_GetObjectItemCaseSensitive(chosen, "owned_by");
    if (cJSON_IsString(owner))
        snprintf(s->owned_by, sizeof s->owned_by, "%s", owner->valuestring);
    set_engine(s, engine_from_owner(s->owned_by));
    return 0;
}

int server_version_from_reply(enum server_engine e, const cJSON *reply, char *out, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(reply, e == ENGINE_LLAMACPP ? "build_info" : "version");
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return -1;
    snprintf(out, cap, "%s", v->valuestring);
    return 0;
}

/* GET {root}{path}: the parsed reply, or NULL (any failure: a version is
 * optional). */
static cJSON *get_root(const struct server_info *s, const struct curl_slist *headers,
                       const char *path, long timeout_ms)
{
    char url[600], err[256];
    long status;
    snprintf(url, sizeof url, "%s%s", s->root_url, path);
    return server_fetch_json(url, headers, NULL, timeout_ms, &status, err, sizeof err);
}

/* Reads the version, and the context where the engine reports it there,
 * from the engine's endpoint at path into s. */
static bool read_version_at(struct server_info *s, const struct curl_slist *headers,
                            const char *path, long timeout_ms)
{
    cJSON *v = get_root(s, headers, path, timeout_ms);
    int rc = server_version_from_reply(s->engine_id, v, s->engine_version, sizeof s->engine_version);
    if (rc == 0)
        server_context_from_reply(s->engine_id, v, s);
    cJSON_Delete(v);
    return rc == 0;
}

/* The positive whole number at o's key, or -1 (absent, null, not a
 * number, not above 0). */
static long positive_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    long n = cJSON_IsNumber(v) ? chunk_count_from_double(v->valuedouble) : -1;
    return n > 0 ? n : -1;
}

/* Stores n (when positive) and the field it came from. Returns 1 when
 * stored, else 0. */
static int take(long n, long *dst, char *src, size_t cap, const char *name)
{
    if (n <= 0)
        return 0;
    *dst = n;
    snprintf(src, cap, "%s", name);
    return 1;
}

int server_context_from_reply(enum server_engine e, const cJSON *reply, struct server_info *s)
{
    if (!cJSON_IsObject(reply))
        return 0;
    int n = 0;
    long in;
    switch (e) {
    case ENGINE_LLAMACPP:   /* per slot: n_ctx / n_parallel (server.cpp, slot.n_ctx) */
        n += take(positive_at(cJSON_GetObjectItemCaseSensitive(reply, "default_generation_settings"), "n_ctx"),
                  &s->context_len, s->context_source, sizeof s->context_source,
                  "/props default_generation_settings.n_ctx");
        break;
    case ENGINE_SGLANG:     /* /models' max_model_len is its context_len; server args' is often null */
        if (s->context_len <= 0)
            n += take(positive_at(reply, "context_length"), &s->context_len, s->context_source,
                      sizeof s->context_source, "/server_info context_length");
        /* its scheduler aborts a prompt of max_req_input_len tokens or more
         * (managers/utils.py validate_input_length): the most it takes is one less */
        in = positive_at(reply, "max_req_input_len");
        n += take(in > 1 ? in - 1 : -1, &s->max_input_len, s->max_input_source, sizeof s->max_input_source,
                  "/server_info max_req_input_len - 1");
        break;
    case ENGINE_TGI:        /* router/src/lib.rs Info; max_input_length before 2.1 */
        n += take(positive_at(reply, "max_total_tokens"), &s->context_len, s->context_source,
                  sizeof s->context_source, "/info max_total_tokens");
        in = positive_at(reply, "max_input_tokens");
        n += in > 0 ? take(in, &s->max_input_len, s->max_input_source, sizeof s->max_input_source,
                           "/info max_input_tokens")
                    : take(positive_at(reply, "max_input_length"), &s->max_input_len, s->max_input_source,
                           sizeof s->max_input_source, "/info max_input_length");
        break;
    default:
        break;
    }
    return n;
}

int server_check_fit(const struct server_info *s, long prompt, long max_tokens, char *err, size_t errlen)
{
    long m = s->context_len, in = s->max_input_len;
    if (in > 0 && prompt > in) {
        snprintf(err, errlen, "prompt of %ld tokens cannot fit: the server takes prompts of at most %ld tokens "
                 "(%s)", prompt, in, s->max_input_source);
        return -1;
    }
    if (m <= 0 || prompt + max_tokens <= m)
        return 0;
    if (prompt >= m)
        snprintf(err, errlen, "prompt of %ld tokens cannot fit: the server's context is %ld tokens (%s)",
                 prompt, m, s->context_source);
    else
        snprintf(err, errlen, "prompt of %ld tokens with %ld output tokens cannot fit: the server's context "
                 "is %ld tokens (%s)", prompt, max_tokens, m, s->context_source);
    return -1;
}

long server_prompt_limit(const struct server_info *s)
{
    long limit = s->context_len > 0 ? s->context_len - 1 : -1;
    if (s->max_input_len > 0 && (limit < 0 || s->max_input_len < limit))
        limit = s->max_input_len;
    return limit;
}

/* TGI's GET /info (router/src/lib.rs Info): "router":
 * "text-generation-router" since 2.x; older builds lack "router" but have
 * model_id, max_total_tokens and version. */
static bool is_tgi_info(const cJSON *info)
{
    const cJSON *router = cJSON_GetObjectItemCaseSensitive(info, "router");
    if (cJSON_IsString(router))
        return !strcmp(router->valuestring, "text-generation-router");
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(info, "model_id")) &&
           cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(info, "max_total_tokens")) &&
           cJSON_IsString(cJSON_GetObjectItemCaseSensitive(info, "version"));
}

/* A server whose owned_by names no engine: anvil-sim and vLLM-like servers
 * answer GET /version, TGI GET /info. */
static void identify_unknown(struct server_info *s, const struct curl_slist *headers, long timeout_ms)
{
    cJSON *v = get_root(s, headers, "/version", timeout_ms);
    const cJSON *server = cJSON_GetObjectItemCaseSensitive(v, "server");
    if (cJSON_IsString(server) && !strcmp(server->valuestring, "anvil-sim"))
        set_engine(s, ENGINE_ANVIL_SIM);
    int rc = server_version_from_reply(s->engine_id, v, s->engine_version, sizeof s->engine_version);
    cJSON_Delete(v);
    if (rc == 0)
        return;
    cJSON *info = get_root(s, headers, "/info", timeout_ms);
    if (is_tgi_info(info)) {
        set_engine(s, ENGINE_TGI);
        server_version_from_reply(ENGINE_TGI, info, s->engine_version, sizeof s->engine_version);
        server_context_from_reply(ENGINE_TGI, info, s);
    }
    cJSON_Delete(info);
}

/* engine_version from the engine's own endpoint. */
static void read_version(struct server_info *s, const struct curl_slist *headers, long timeout_ms)
{
    switch (s->engine_id) {
    case ENGINE_VLLM:
        read_version_at(s, headers, "/version", timeout_ms);
        break;
    case ENGINE_SGLANG:   /* /get_server_info is the older name, kept as an alias */
        if (!read_version_at(s, headers, "/server_info", timeout_ms))
            read_version_at(s, headers, "/get_server_info", timeout_ms);
        break;
    case ENGINE_LLAMACPP:
        read_version_at(s, headers, "/props", timeout_ms);
        break;
    default:
        identify_unknown(s, headers, timeout_ms);
    }
}

int discover(const char *base_url, const struct curl_slist *headers, const char *want_model,
             long timeout_ms, struct server_info *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->context_len = out->max_input_len = -1;
    set_urls(out, base_url);
    char url[600];
    long status;
    snprintf(url, sizeof url, "%s/models", out->base_url);
    cJSON *models = server_fetch_json(url, headers, NULL, timeout_ms, &status, err, errlen);
    if (!models)
        return -1;
    int rc = pick_model(models, want_model, out, err, errlen);
    cJSON_Delete(models);
    if (rc == 0)
        read_version(out, headers, timeout_ms);
    return rc;
}

