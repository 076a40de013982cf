/* tokenize.c — counting a prompt's tokens the way the server does: one
 * shape per engine (see tokenize.h), or a one-token probe request. */
#include "openai/tokenize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openai/chunk.h"

/* The one-word message around which SGLang's chat template is measured. */
#define TEMPLATE_PROBE_TEXT "hello"

/* Counts the items of arr that are token ids, or {id: N, ...} objects with
 * key (llama.cpp's pieces, TGI's tokens); -1 when arr is not such an array. */
static long count_ids(const cJSON *arr, bool bare_ids)
{
    if (!cJSON_IsArray(arr))
        return -1;
    long n = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, arr) {
        const cJSON *id = cJSON_IsObject(t) ? cJSON_GetObjectItemCaseSensitive(t, "id") : NULL;
        if (!(bare_ids && cJSON_IsNumber(t)) && !cJSON_IsNumber(id))
            return -1;
        n++;
    }
    return n;
}

long tokenize_reply_count(enum server_engine e, enum endpoint ep, const cJSON *reply)
{
    switch (e) {
    case ENGINE_VLLM:
    case ENGINE_ANVIL_SIM:
    case ENGINE_SGLANG: {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(reply, "count");
        return cJSON_IsNumber(n) ? chunk_count_from_double(n->valuedouble) : -1;
    }
    case ENGINE_LLAMACPP:
        return count_ids(cJSON_GetObjectItemCaseSensitive(reply, "tokens"), true);
    case ENGINE_TGI:
        return count_ids(ep == EP_CHAT ? cJSON_GetObjectItemCaseSensitive(reply, "tokenize_response") : reply,
                         false);
    case ENGINE_UNKNOWN:
        break;
    }
    return -1;
}

long *tokenize_reply_ids(enum server_engine e, enum endpoint ep, const cJSON *reply, long *n)
{
    const cJSON *arr = e == ENGINE_TGI ? (ep == EP_CHAT ? cJSON_GetObjectItemCaseSensitive(reply, "tokenize_response")
                                                        : reply)
                                       : cJSON_GetObjectItemCaseSensitive(reply, "tokens");
    int count = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    long *ids = count > 0 ? malloc((size_t)count * sizeof *ids) : NULL;
    *n = 0;
    const cJSON *t;
    if (!ids)
        return NULL;
    cJSON_ArrayForEach(t, arr) {
        const cJSON *id = cJSON_IsObject(t) ? cJSON_GetObjectItemCaseSensitive(t, "id") : t;
        if (!cJSON_IsNumber(id)) {
            free(ids);
            *n = 0;
            return NULL;
        }
        ids[(*n)++] = (long)id->valuedouble;
    }
    return ids;
}

const char *tokenize_reply_expected(enum server_engine e, enum endpoint ep)
{
    switch (e) {
    case ENGINE_LLAMACPP: return "no \"tokens\" array of ids";
    case ENGINE_TGI: return ep == EP_CHAT ? "no \"tokenize_response\" array of tokens" : "no array of tokens";
    default: return "no \"count\"";
    }
}

const char *tokenize_templated_prompt(const cJSON *reply)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(reply, "prompt");
    return cJSON_IsString(p) ? p->valuestring : NULL;
}

bool server_accepts_continuous_usage(const struct server_info *s)
{
    return s->engine_id == ENGINE_VLLM || s->engine_id == ENGINE_SGLANG || s->engine_id == ENGINE_ANVIL_SIM;
}

bool server_tokenize_supported(const struct server_info *s, enum endpoint ep)
{
    (void)ep;   /* every known engine counts chat prompts too (SGLang with one probe) */
    return s->engine_id != ENGINE_UNKNOWN;
}

/* ---- requests ---------------------------------------------------------------- */

/* {"role":"user","content":prompt} as the only message, the chat request's. */
static void add_messages(cJSON *root, const char *prompt)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", prompt);
    if (!cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "messages"), m))
        cJSON_Delete(m);
}

/* Prints and deletes root: the body (free), or NULL when out of memory. */
static char *print_free(cJSON *root)
{
    char *body = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return body;
}

/* {root}{path} without user:password@, for messages. */
static void shown_url(const struct server_info *s, const char *path, char *out, size_t cap)
{
    size_t n = strlen(s->display_url);
    if (n >= 3 && !strcmp(s->display_url + n - 3, "/v1"))
        n -= 3;
    snprintf(out, cap, "%.*s%s", (int)n, s->display_url, path);
}

/* POSTs body (freed here; NULL means out of memory) to {root}{path}. The
 * parsed reply, or NULL with err set; *status gets the HTTP status. */
static cJSON *post(const struct server_info *s, const struct curl_slist *h, const char *path,
                   char *body, long timeout_ms, long *status, char *err, size_t errlen)
{
    *status = 0;
    if (!body) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char url[600];
    snprintf(url, sizeof url, "%s%s", s->root_url, path);
    cJSON *reply = server_fetch_json(url, h, body, timeout_ms, status, err, errlen);
    free(body);
    return reply;
}

/* Where a caller wants the token ids too (NULL: the count only). */
struct ids_out {
    long *ids;      /* malloc'd; NULL when the reply has none */
    long n;
};

/* The count in reply (deleted here), or -1 with err naming the URL when it
 * is not in the engine's shape; with ids, the ids as well. */
static long count_of(const struct server_info *s, const char *path, enum endpoint ep, cJSON *reply,
                     struct ids_out *ids, char *err, size_t errlen)
{
    if (!reply)
        return -1;
    long n = tokenize_reply_count(s->engine_id, ep, reply);
    if (ids && n >= 0)
        ids->ids = tokenize_reply_ids(s->engine_id, ep, reply, &ids->n);
    if (n < 0) {
        char shown[600], *text = cJSON_PrintUnformatted(reply);
        shown_url(s, path, shown, sizeof shown);
        snprintf(err, errlen, "%s: the %s reply has %s: %.120s", shown, s->engine,
                 tokenize_reply_expected(s->engine_id, ep), text ? text : "");
        cJSON_free(text);
    }
    cJSON_Delete(reply);
    return n;
}

static cJSON *with_model(const struct server_info *s)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", s->model);
    return root;
}

/* vLLM (and anvil-sim): POST /tokenize; the chat form applies the template. */
static long vllm_count(const struct server_info *s, const struct curl_slist *h, enum endpoint ep,
                       const char *prompt, long timeout_ms, struct ids_out *ids, char *err, size_t errlen)
{
    cJSON *root = with_model(s);
    if (ep == EP_CHAT) {
        add_messages(root, prompt);
        cJSON_AddTrueToObject(root, "add_generation_prompt");
    } else {
        cJSON_AddStringToObject(root, "prompt", prompt);
    }
    long status;
    cJSON *reply = post(s, h, "/tokenize", print_free(root), timeout_ms, &status, err, errlen);
    return count_of(s, "/tokenize", ep, reply, ids, err, errlen);
}

/* SGLang: POST /v1/tokenize, or /tokenize where a build has only that. */
static long sglang_tokenize(const struct server_info *s, const struct curl_slist *h, const char *text,
                            bool add_special, long timeout_ms, struct ids_out *ids, char *err,
                            size_t errlen)
{
    static const char *const paths[] = {"/v1/tokenize", "/tokenize"};
    cJSON *reply = NULL;
    long status = 404;
    size_t i;
    for (i = 0; i < 2 && !reply && status == 404; i++) {
        cJSON *root = with_model(s);
        cJSON_AddStringToObject(root, "prompt", text);
        cJSON_AddBoolToObject(root, "add_special_tokens", add_special);
        reply = post(s, h, paths[i], print_free(root), timeout_ms, &status, err, errlen);
    }
    return count_of(s, paths[i - 1], EP_COMPLETIONS, reply, ids, err, errlen);
}


/* SGLang's tokenize takes no messages, so for chat the template's tokens
 * are measured once per call: a one-word chat probe's usage.prompt_tokens
 * minus that word's tokens. The template tokenizes without special tokens
 * (HF apply_chat_template), so the prompt is counted without them too. */
static long sglang_count(const struct server_info *s, const struct curl_slist *h, enum endpoint ep,
                         const char *prompt, long timeout_ms, char *err, size_t errlen)
{
    if (ep != EP_CHAT)
        return sglang_tokenize(s, h, prompt, true, timeout_ms, NULL, err, errlen);
    long text = sglang_tokenize(s, h, prompt, false, timeout_ms, NULL, err, errlen);
    long word = text < 0 ? -1 : sglang_tokenize(s, h, TEMPLATE_PROBE_TEXT, false, timeout_ms, NULL, err, errlen);
    long chat = word < 0 ? -1 : server_probe_tokens(s, h, &(struct request_opts){.endpoint = EP_CHAT},
                                                        TEMPLATE_PROBE_TEXT, timeout_ms, err, errlen);
    if (chat < 0)
        return -1;
    if (chat < word) {
        snprintf(err, errlen, "SGLang counts %ld tokens in a chat request of the one word '%s' but "
                 "%ld in the word alone", chat, TEMPLATE_PROBE_TEXT, word);
        return -1;
    }
    return text + (chat - word);
}

/* llama.cpp: chat prompts are templated by POST /apply-template first. Both
 * routes tokenize with add_special (BOS where the model adds one; /tokenize's
 * default is false, as tokenize_default.txt shows) and parse_special, as
 * llama-server does for /v1/completions and /v1/chat/completions. */
static long llamacpp_count(const struct server_info *s, const struct curl_slist *h, enum endpoint ep,
                           const char *prompt, long timeout_ms, struct ids_out *ids, char *err,
                           size_t errlen)
{
    long status;
    cJSON *templated = NULL;
    const char *text = prompt;
    if (ep == EP_CHAT) {
        cJSON *root = cJSON_CreateObject();
        add_messages(root, prompt);
        templated = post(s, h, "/apply-template", print_free(root), timeout_ms, &status, err, errlen);
        if (!templated)
            return -1;
        if (!(text = tokenize_templated_prompt(templated))) {
            char shown[600];
            shown_url(s, "/apply-template", shown, sizeof shown);
            snprintf(err, errlen, "%s: the llama.cpp reply has no \"prompt\"", shown);
            cJSON_Delete(templated);
            return -1;
        }
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "content", text);
    cJSON_AddTrueToObject(root, "add_special");
    cJSON_AddTrueToObject(root, "parse_special");
    char *body = print_free(root);
    cJSON_Delete(templated);   /* text pointed into it */
    cJSON *reply = post(s, h, "/tokenize", body, timeout_ms, &status, err, errlen);
    return count_of(s, "/tokenize", ep, reply, ids, err, errlen);
}

/* TGI: POST /tokenize {inputs}; chat: POST /chat_tokenize (template applied). */
static long tgi_count(const struct server_info *s, const struct curl_slist *h, enum endpoint ep,
                      const char *prompt, long timeout_ms, struct ids_out *ids, char *err, size_t errlen)
{
    cJSON *root;
    const char *path = ep == EP_CHAT ? "/chat_tokenize" : "/tokenize";
    if (ep == EP_CHAT) {
        root = with_model(s);
        add_messages(root, prompt);
    } else {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "inputs", prompt);
    }
    long status;
    cJSON *reply = post(s, h, path, print_free(root), timeout_ms, &status, err, errlen);
    return count_of(s, path, ep, reply, ids, err, errlen);
}

long server_probe_tokens(const struct server_info *s, const struct curl_slist *h,
                         const struct request_opts *opts, const char *prompt, long timeout_ms,
                         char *err, size_t errlen)
{
    struct request_opts o = *opts;
    o.model = s->model;
    o.max_tokens = 1;
    o.stream = o.ignore_eos = o.continuous_usage = false;
    enum endpoint ep = o.endpoint;
    char *body = request_body(&o, prompt);
    if (!body) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char url[600];
    long status;
    snprintf(url, sizeof url, "%s%s", s->base_url, endpoint_path(ep));
    cJSON *reply = server_fetch_json(url, h, body, timeout_ms, &status, err, errlen);
    free(body);
    if (!reply)
        return -1;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(reply, "usage"),
                                                      "prompt_tokens");
    long count = cJSON_IsNumber(n) ? chunk_count_from_double(n->valuedouble) : -1;
    if (count < 0)
        snprintf(err, errlen, "%s%s: reply has no usage.prompt_tokens", s->display_url, endpoint_path(ep));
    cJSON_Delete(reply);
    return count;
}

long server_count_tokens(const struct server_info *s, const struct curl_slist *headers,
                         enum endpoint ep, bool tokenize, const char *prompt, long timeout_ms,
                         char *err, size_t errlen)
{
    if (!tokenize) {
        struct request_opts o = {.endpoint = ep};
        return server_probe_tokens(s, headers, &o, prompt, timeout_ms, err, errlen);
    }
    switch (s->engine_id) {
    case ENGINE_VLLM:
    case ENGINE_ANVIL_SIM:
        return vllm_count(s, headers, ep, prompt, timeout_ms, NULL, err, errlen);
    case ENGINE_SGLANG:
        return sglang_count(s, headers, ep, prompt, timeout_ms, err, errlen);
    case ENGINE_LLAMACPP:
        return llamacpp_count(s, headers, ep, prompt, timeout_ms, NULL, err, errlen);
    case ENGINE_TGI:
        return tgi_count(s, headers, ep, prompt, timeout_ms, NULL, err, errlen);
    case ENGINE_UNKNOWN:
        break;
    }
    snprintf(err, errlen, "the server at %s is not an engine anvil knows (/models owned_by \"%s\", "
             "and neither /version nor /info names one), so it has no tokenize endpoint anvil can ask",
             s->display_url, s->owned_by);
    return -1;
}

long *server_tokenize_ids(const struct server_info *s, const struct curl_slist *headers,
                          enum endpoint ep, const char *prompt, long timeout_ms, long *n,
                          char *err, size_t errlen)
{
    struct ids_out out = {0};
    long count = -1;
    switch (s->engine_id) {
    case ENGINE_VLLM:
    case ENGINE_ANVIL_SIM:
        count = vllm_count(s, headers, ep, prompt, timeout_ms, &out, err, errlen);
        break;
    case ENGINE_LLAMACPP:
        count = llamacpp_count(s, headers, ep, prompt, timeout_ms, &out, err, errlen);
        break;
    case ENGINE_TGI:
        count = tgi_count(s, headers, ep, prompt, timeout_ms, &out, err, errlen);
        break;
    case ENGINE_SGLANG:
        if (ep == EP_COMPLETIONS) {     /* its chat form is counted around the template, not tokenized */
            count = sglang_tokenize(s, headers, prompt, true, timeout_ms, &out, err, errlen);
            break;
        }
        /* fall through */
    default:
        snprintf(err, errlen, "%s's tokenize gives no token ids of a %s request", s->engine,
                 endpoint_name(ep));
        break;
    }
    if (count >= 0 && !out.ids)
        snprintf(err, errlen, "the %s tokenize reply lists no token ids", s->engine);
    *n = out.n;
    return out.ids;
}

/* A JSON string whose contents are already escaped (esc, len bytes), as a
 * raw cJSON item; NULL when out of memory. */
static cJSON *escaped_string(const char *esc, size_t len)
{
    char *q = malloc(len + 3);
    if (!q)
        return NULL;
    q[0] = '"';
    memcpy(q + 1, esc, len);
    q[len + 1] = '"';
    q[len + 2] = '\0';
    cJSON *v = cJSON_CreateRaw(q);
    free(q);
    return v;
}

long server_count_output_tokens(const struct server_info *s, const struct curl_slist *headers,
                                const char *esc, size_t len, long timeout_ms, char *err, size_t errlen)
{
    const char *path = "/tokenize", *key = "prompt";
    cJSON *root = with_model(s);
    switch (s->engine_id) {
    case ENGINE_VLLM:
    case ENGINE_ANVIL_SIM:
    case ENGINE_SGLANG:
        if (s->engine_id == ENGINE_SGLANG)
            path = "/v1/tokenize";
        cJSON_AddFalseToObject(root, "add_special_tokens");
        break;
    case ENGINE_LLAMACPP:
        key = "content";
        cJSON_AddFalseToObject(root, "add_special");
        cJSON_AddTrueToObject(root, "parse_special");   /* control tokens come back as their text */
        break;
    case ENGINE_TGI:
        key = "inputs";
        break;
    case ENGINE_UNKNOWN:
        cJSON_Delete(root);
        snprintf(err, errlen, "the server is not an engine anvil knows: it has no tokenize endpoint to ask");
        return -1;
    }
    cJSON *text = escaped_string(esc, len);
    if (!text || !cJSON_AddItemToObject(root, key, text)) {
        cJSON_Delete(text);
        cJSON_Delete(root);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    long status;
    cJSON *reply = post(s, headers, path, print_free(root), timeout_ms, &status, err, errlen);
    return count_of(s, path, EP_COMPLETIONS, reply, NULL, err, errlen);
}
