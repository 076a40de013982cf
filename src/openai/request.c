/* request.c — request bodies, built with cJSON so every prompt is escaped. */
#include "openai/request.h"

#include <string.h>

#include "core/buf.h"

#include <cjson/cJSON.h>

int endpoint_parse(const char *s, enum endpoint *out)
{
    if (!strcmp(s, "chat"))
        *out = EP_CHAT;
    else if (!strcmp(s, "completions"))
        *out = EP_COMPLETIONS;
    else
        return -1;
    return 0;
}

const char *endpoint_path(enum endpoint ep)
{
    return ep == EP_CHAT ? "/chat/completions" : "/completions";
}

const char *endpoint_name(enum endpoint ep)
{
    return ep == EP_CHAT ? "chat" : "completions";
}

static void add_prompt(cJSON *root, enum endpoint ep, const char *prompt)
{
    if (ep == EP_COMPLETIONS) {
        cJSON_AddStringToObject(root, "prompt", prompt);
        return;
    }
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", prompt);
    cJSON_AddItemToArray(msgs, m);
}

/* The user message's content as parts: the text, then each image. */
static void add_image_parts(cJSON *root, const struct request_opts *o)
{
    cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "messages"), 0);
    const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
    cJSON *parts = cJSON_CreateArray(), *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "type", "text");
    cJSON_AddStringToObject(t, "text", text ? text : "");
    cJSON_AddItemToArray(parts, t);
    for (int i = 0; i < o->n_images; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "type", "image_url");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "image_url"), "url", o->image_urls[i]);
        cJSON_AddItemToArray(parts, p);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(m, "content", parts);
}

/* Renders the body with its prompt part already in root. */
static char *finish_body(cJSON *root, const struct request_opts *o)
{
    cJSON_AddNumberToObject(root, "max_tokens", (double)o->max_tokens);
    cJSON_AddBoolToObject(root, "stream", o->stream);
    if (o->stream) {
        cJSON *so = cJSON_AddObjectToObject(root, "stream_options");
        cJSON_AddBoolToObject(so, "include_usage", 1);
        if (o->continuous_usage)
            cJSON_AddBoolToObject(so, "continuous_usage_stats", 1);
    }
    if (o->ignore_eos)
        cJSON_AddBoolToObject(root, "ignore_eos", 1);
    if (o->sampling.has_temperature)
        cJSON_AddNumberToObject(root, "temperature", o->sampling.temperature);
    if (o->sampling.has_top_p)
        cJSON_AddNumberToObject(root, "top_p", o->sampling.top_p);
    if (o->sampling.has_top_k)
        cJSON_AddNumberToObject(root, "top_k", (double)o->sampling.top_k);
    if (o->endpoint == EP_CHAT && o->tools) {
        cJSON_AddItemToObject(root, "tools", cJSON_Duplicate(o->tools, 1));
        if (o->tool_choice)
            cJSON_AddItemToObject(root, "tool_choice", cJSON_Duplicate(o->tool_choice, 1));
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, o->extra_body) {
        cJSON *copy = cJSON_Duplicate(x, 1);
        if (!copy || (cJSON_HasObjectItem(root, x->string)
                          ? !cJSON_ReplaceItemInObjectCaseSensitive(root, x->string, copy)
                          : !cJSON_AddItemToObject(root, x->string, copy))) {
            cJSON_Delete(copy);
            cJSON_Delete(root);
            return NULL;
        }
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

char *request_body(const struct request_opts *o, const char *prompt)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "model", o->model);
    add_prompt(root, o->endpoint, prompt);
    if (o->endpoint == EP_CHAT && o->n_images > 0)
        add_image_parts(root, o);
    return finish_body(root, o);
}

char *request_body_messages(const struct request_opts *o, const cJSON *messages)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "model", o->model);
    if (o->endpoint == EP_CHAT) {
        cJSON_AddItemToObject(root, "messages", cJSON_Duplicate(messages, 1));
        return finish_body(root, o);
    }
    struct buf prompt;
    buf_init(&prompt, 1u << 30);
    const cJSON *m;
    int rc = 0;
    cJSON_ArrayForEach(m, messages) {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
        if (prompt.len)
            rc |= buf_append(&prompt, "\n", 1);
        rc |= buf_append(&prompt, c ? c : "", c ? strlen(c) : 0);
    }
    if (rc != 0) {
        buf_free(&prompt);
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_AddStringToObject(root, "prompt", prompt.len ? prompt.data : "");
    buf_free(&prompt);
    return finish_body(root, o);
}
