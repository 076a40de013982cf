/* reply.c — SSE events and JSON bodies of the simulator (see reply.h). */
#include "sim/reply.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sim_sse_head_new(enum sim_endpoint ep, const char *id, int64_t created,
                       const char *model_json)
{
    const char *object = ep == SIM_EP_CHAT ? "chat.completion.chunk" : "text_completion";
    struct buf b;
    buf_init(&b, 1u << 20);
    if (buf_printf(&b, "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%" PRId64
                   ",\"model\":%s,", id, object, created, model_json) != 0) {
        buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* vLLM's UsageInfo field order: prompt, total, completion. */
static int put_usage(struct buf *b, int64_t prompt, int64_t completion)
{
    return buf_printf(b, "\"usage\":{\"prompt_tokens\":%" PRId64 ",\"total_tokens\":%" PRId64
                      ",\"completion_tokens\":%" PRId64 "}", prompt, prompt + completion,
                      completion);
}

int sim_sse_role(struct buf *b, const struct sim_stream_fmt *f)
{
    int rc = buf_printf(b, "%s\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                        "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]", f->head);
    if (f->continuous_usage)
        rc |= buf_append(b, ",", 1) | put_usage(b, f->prompt_tokens, 0);
    rc |= buf_printf(b, ",\"prompt_token_ids\":null,\"prompt_text\":null}\n\n");
    return rc ? -1 : 0;
}

static int put_choice(struct buf *b, const struct sim_stream_fmt *f, const char *text,
                      const char *finish)
{
    char fr[16] = "null";
    if (finish)
        snprintf(fr, sizeof fr, "\"%s\"", finish);
    if (f->ep == SIM_EP_CHAT)
        return buf_printf(b, "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},"
                          "\"logprobs\":null,\"finish_reason\":%s%s,\"token_ids\":null}]",
                          text, fr, finish ? ",\"stop_reason\":null" : "");
    return buf_printf(b, "\"choices\":[{\"index\":0,\"text\":\"%s\",\"logprobs\":null,"
                      "\"finish_reason\":%s,\"stop_reason\":null,\"prompt_token_ids\":null,"
                      "\"token_ids\":null}]", text, fr);
}

int sim_sse_token(struct buf *b, const struct sim_stream_fmt *f, const char *text,
                  int64_t generated, const char *finish)
{
    int rc = buf_append(b, f->head, strlen(f->head)) | put_choice(b, f, text, finish);
    if (f->continuous_usage)
        rc |= buf_append(b, ",", 1) | put_usage(b, f->prompt_tokens, generated);
    /* Without a usage chunk vLLM puts the fingerprint on the finish chunk. */
    if (finish && !f->include_usage)
        rc |= buf_printf(b, ",\"system_fingerprint\":\"%s\"", SIM_FINGERPRINT);
    rc |= buf_append(b, "}\n\n", 3);
    return rc ? -1 : 0;
}

int sim_sse_usage(struct buf *b, const struct sim_stream_fmt *f, int64_t completion_tokens)
{
    int rc = buf_printf(b, "%s\"choices\":[],", f->head)
             | put_usage(b, f->prompt_tokens, completion_tokens)
             | buf_printf(b, ",\"system_fingerprint\":\"%s\"}\n\n", SIM_FINGERPRINT);
    return rc ? -1 : 0;
}

int sim_sse_done(struct buf *b)
{
    static const char done[] = "data: [DONE]\n\n";
    return buf_append(b, done, sizeof done - 1);
}

char *sim_json_quote(const char *s)
{
    cJSON *str = cJSON_CreateString(s);
    char *out = str ? cJSON_PrintUnformatted(str) : NULL;
    cJSON_Delete(str);
    return out;
}

/* Prints and frees root; NULL when root is NULL or printing fails. The
 * cJSON_Add* helpers accept a NULL parent and return NULL on failure, so
 * the builders need no check per field: out of memory can at worst drop a
 * field from a body, never crash or leak. */
static char *print_free(cJSON *root)
{
    char *out = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return out;
}

static void add_usage(cJSON *root, int64_t prompt, int64_t completion)
{
    cJSON *u = cJSON_AddObjectToObject(root, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)prompt);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(prompt + completion));
    cJSON_AddNumberToObject(u, "completion_tokens", (double)completion);
    cJSON_AddNullToObject(u, "prompt_tokens_details");
}

static void add_choice(cJSON *choices, enum sim_endpoint ep, const char *text, const char *finish)
{
    cJSON *c = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(choices, c)) {
        cJSON_Delete(c);
        return;
    }
    cJSON_AddNumberToObject(c, "index", 0);
    if (ep == SIM_EP_CHAT) {
        cJSON *m = cJSON_AddObjectToObject(c, "message");
        cJSON_AddStringToObject(m, "role", "assistant");
        cJSON_AddStringToObject(m, "content", text);
        cJSON_AddNullToObject(m, "refusal");
        cJSON_AddNullToObject(m, "annotations");
        cJSON_AddNullToObject(m, "audio");
        cJSON_AddNullToObject(m, "function_call");
        cJSON_AddArrayToObject(m, "tool_calls");
        cJSON_AddNullToObject(m, "reasoning");
    } else {
        cJSON_AddStringToObject(c, "text", text);
    }
    cJSON_AddNullToObject(c, "logprobs");
    cJSON_AddStringToObject(c, "finish_reason", finish);
    cJSON_AddNullToObject(c, "stop_reason");
    if (ep != SIM_EP_CHAT) {
        cJSON_AddNullToObject(c, "prompt_logprobs");
        cJSON_AddNullToObject(c, "prompt_token_ids");
    }
    cJSON_AddNullToObject(c, "token_ids");
}

char *sim_json_completion(enum sim_endpoint ep, const char *id, int64_t created,
                          const char *model, const char *text, const char *finish,
                          int64_t prompt_tokens, int64_t completion_tokens)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", id);
    cJSON_AddStringToObject(root, "object", ep == SIM_EP_CHAT ? "chat.completion" : "text_completion");
    cJSON_AddNumberToObject(root, "created", (double)created);
    cJSON_AddStringToObject(root, "model", model);
    add_choice(cJSON_AddArrayToObject(root, "choices"), ep, text, finish);
    cJSON_AddNullToObject(root, "service_tier");
    cJSON_AddStringToObject(root, "system_fingerprint", SIM_FINGERPRINT);
    add_usage(root, prompt_tokens, completion_tokens);
    if (ep == SIM_EP_CHAT) {
        cJSON_AddNullToObject(root, "prompt_logprobs");
        cJSON_AddNullToObject(root, "prompt_token_ids");
    }
    cJSON_AddNullToObject(root, "kv_transfer_params");
    return print_free(root);
}

char *sim_json_error(const struct sim_error *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *e = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(e, "message", err->message);
    cJSON_AddStringToObject(e, "type", err->type);
    if (err->param)
        cJSON_AddStringToObject(e, "param", err->param);
    else
        cJSON_AddNullToObject(e, "param");
    cJSON_AddNumberToObject(e, "code", err->status);
    return print_free(root);
}

char *sim_json_models(const char *model, int64_t max_model_len, int64_t created)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "object", "list");
    cJSON *card = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "data"), card)) {
        cJSON_Delete(card);
        card = NULL;
    }
    cJSON_AddStringToObject(card, "id", model);
    cJSON_AddStringToObject(card, "object", "model");
    cJSON_AddNumberToObject(card, "created", (double)created);
    cJSON_AddStringToObject(card, "owned_by", "anvil");
    cJSON_AddStringToObject(card, "root", model);
    cJSON_AddNullToObject(card, "parent");
    cJSON_AddNumberToObject(card, "max_model_len", (double)max_model_len);
    return print_free(root);
}

char *sim_json_tokenize(const int64_t *ids, int64_t n, int64_t max_model_len)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "count", (double)n);
    cJSON_AddNumberToObject(root, "max_model_len", (double)max_model_len);
    cJSON *tokens = cJSON_AddArrayToObject(root, "tokens");
    for (int64_t i = 0; i < n && tokens; i++) {
        cJSON *id = cJSON_CreateNumber((double)ids[i]);
        if (!cJSON_AddItemToArray(tokens, id)) {
            cJSON_Delete(id);
            break;
        }
    }
    cJSON_AddNullToObject(root, "token_strs");
    return print_free(root);
}

char *sim_json_version(void)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "version", ANVIL_VERSION);
    cJSON_AddStringToObject(root, "server", SIM_SERVER_NAME);
    return print_free(root);
}
