/* prefix.c — how many tokens two measured prompts share at their start: the
 * part of every prompt a server's prefix cache may reuse across requests.
 * Expected: the chat template's own tokens before the user's text (plus
 * --shared-prefix-len), nothing of the prompts themselves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "net/http.h"
#include "run/stage.h"

/* Filler words in the prompts compared: the shared start is decided by the
 * first few tokens; more only costs the server work. */
#define PREFIX_FILLER_WORDS 16
/* Filler words of the cached_tokens probes: several whole cache blocks. */
#define PREFIX_PROBE_WORDS 64

/* POSTs body to url and parses the reply. Returns the JSON (caller deletes)
 * or NULL when the server is unreachable, answers ≥ 400 or not JSON. */
static cJSON *post_json(const struct run_ctx *x, const char *url, const char *body)
{
    struct buf b;
    buf_init(&b, 16u << 20);
    long status = 0;
    char err[256];
    long timeout_ms = (long)(fmin(x->c->timeout_s, 30) * 1000);
    CURLcode rc = http_fetch(url, x->headers, body, timeout_ms, &b, &status, err, sizeof err);
    cJSON *j = rc == CURLE_OK && status < 400 && b.len ? cJSON_ParseWithLength(b.data, b.len) : NULL;
    buf_free(&b);
    return j;
}

/* The token ids POST {root}/tokenize gives for prompt (with the chat
 * template for chat, as server_count_tokens counts them): a malloc'd array
 * of *n ids, or NULL. Takes vLLM's and SGLang's {"tokens": [ids]} and
 * llama.cpp's ids or {"id", "piece"} objects. */
static long *tokenize_ids(const struct run_ctx *x, const char *prompt, long *n)
{
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "model", x->srv.model);
    if (x->c->endpoint == EP_CHAT) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "user");
        cJSON_AddStringToObject(m, "content", prompt);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(req, "messages"), m);
        cJSON_AddBoolToObject(req, "add_generation_prompt", 1);
    } else {
        cJSON_AddStringToObject(req, "prompt", prompt);
    }
    char *body = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    char url[600];
    snprintf(url, sizeof url, "%s/tokenize", x->srv.root_url);
    cJSON *reply = body ? post_json(x, url, body) : NULL;
    free(body);
    const cJSON *tokens = cJSON_IsArray(reply) ? reply : cJSON_GetObjectItemCaseSensitive(reply, "tokens");
    int count = cJSON_GetArraySize(tokens);
    long *ids = count > 0 ? malloc((size_t)count * sizeof *ids) : NULL;
    *n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tokens) {
        const cJSON *id = cJSON_IsObject(t) ? cJSON_GetObjectItemCaseSensitive(t, "id") : t;
        if (!ids || !cJSON_IsNumber(id))
            break;
        ids[(*n)++] = (long)id->valuedouble;
    }
    cJSON_Delete(reply);
    if (ids && *n < count) {
        free(ids);
        ids = NULL;
    }
    return ids;
}

/* Measured prompts 0 and 1 through /tokenize. Returns the shared start in
 * tokens, or -1 when the server gives no usable ids. */
static long by_tokenize(const struct run_ctx *x)
{
    long *ids[2] = {NULL, NULL}, n[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        struct buf p;
        buf_init(&p, 1u << 30);
        if (workload_prompt(x->wl, i, PREFIX_FILLER_WORDS, &p) == 0)
            ids[i] = tokenize_ids(x, p.data, &n[i]);
        buf_free(&p);
    }
    long shared = -1;
    /* fewer ids than filler words: not this prompt's tokens (e.g. a
     * /tokenize that ignored the chat messages) */
    if (ids[0] && ids[1] && n[0] >= PREFIX_FILLER_WORDS && n[1] >= PREFIX_FILLER_WORDS)
        for (shared = 0; shared < n[0] && shared < n[1] && ids[0][shared] == ids[1][shared];)
            shared++;
    free(ids[0]);
    free(ids[1]);
    return shared;
}

/* usage.prompt_tokens_details.cached_tokens of a non-streamed max_tokens 1
 * request for calibration prompt k, or -1 when the reply has none. */
static long probe_cached(const struct run_ctx *x, long k)
{
    struct request_opts o = {.endpoint = x->c->endpoint, .model = x->srv.model, .max_tokens = 1};
    struct buf p;
    buf_init(&p, 1u << 30);
    char *body = workload_calib_prompt(x->wl, k, PREFIX_PROBE_WORDS, &p) == 0 ? request_body(&o, p.data) : NULL;
    buf_free(&p);
    char url[600];
    snprintf(url, sizeof url, "%s%s", x->srv.base_url, endpoint_path(x->c->endpoint));
    cJSON *reply = body ? post_json(x, url, body) : NULL;
    free(body);
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(reply, "usage"),
                                                            "prompt_tokens_details");
    const cJSON *cached = cJSON_GetObjectItemCaseSensitive(details, "cached_tokens");
    long v = cJSON_IsNumber(cached) && cached->valuedouble >= 0 ? (long)cached->valuedouble : -1;
    cJSON_Delete(reply);
    return v;
}

void run_measure_shared_prefix(struct run_ctx *x, bool may_probe)
{
    x->shared_prefix_tokens = by_tokenize(x);
    if (x->shared_prefix_tokens >= 0) {
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method, "tokenize");
        return;
    }
    if (!may_probe) {
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "not measured: /tokenize gave no token ids, and --calibration tokenize sends no probes");
        return;
    }
    /* calibration heads 1 and 2: they share with no measured prompt, nor
     * with the calibration steps (head 0) */
    if (probe_cached(x, 1) >= 0)
        x->shared_prefix_tokens = probe_cached(x, 2);
    if (x->shared_prefix_tokens >= 0)
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "cached_tokens (whole cache blocks only: a lower bound)");
    else
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "not measured: /tokenize gave no token ids and the server reports no cached_tokens");
}
