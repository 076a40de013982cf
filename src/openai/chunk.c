/* chunk.c — decodes one stream event: the fast scanner first, cJSON for
 * everything it declines (and as the reference in tests). */
#include "openai/chunk.h"
#include "openai/scan.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

static size_t str_bytes(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? strlen(v->valuestring) : 0;
}

long chunk_count_from_double(double v)
{
    return v >= 0 && v < 1e15 ? (long)v : -1;
}

static long int_field(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? chunk_count_from_double(v->valuedouble) : -1;
}

static void decode_usage(const cJSON *root, struct chunk *out)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (!cJSON_IsObject(u))
        return;
    out->prompt_tokens = int_field(u, "prompt_tokens");
    out->completion_tokens = int_field(u, "completion_tokens");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details");
    if (cJSON_IsObject(d))
        out->cached_tokens = int_field(d, "cached_tokens");
}

/* One tool call's delta (an element of tool_calls, or function_call when
 * legacy): adds its bytes to out, and counts it as opened when it names an id
 * or a function. The legacy function_call has name and arguments at its top. */
static void decode_tool_call(const cJSON *tc, bool legacy, struct chunk *out)
{
    if (!cJSON_IsObject(tc))
        return;
    size_t id = legacy ? 0 : str_bytes(tc, "id");
    const cJSON *f = legacy ? tc : cJSON_GetObjectItemCaseSensitive(tc, "function");
    size_t name = cJSON_IsObject(f) ? str_bytes(f, "name") : 0;
    size_t args = cJSON_IsObject(f) ? str_bytes(f, "arguments") : 0;
    out->tool_call_bytes += id + name + args;
    if (id || name)
        out->tool_calls_started++;
}

static void decode_tool_calls(const cJSON *delta, struct chunk *out)
{
    const cJSON *tcs = cJSON_GetObjectItemCaseSensitive(delta, "tool_calls");
    const cJSON *tc;
    if (cJSON_IsArray(tcs))
        cJSON_ArrayForEach(tc, tcs)
            decode_tool_call(tc, false, out);
    decode_tool_call(cJSON_GetObjectItemCaseSensitive(delta, "function_call"), true, out);
}

static void decode_choice(const cJSON *root, struct chunk *out)
{
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    const cJSON *c = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    if (!cJSON_IsObject(c))
        return;
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(c, "delta");
    if (cJSON_IsObject(delta)) {
        out->content_bytes = str_bytes(delta, "content");
        out->reasoning_bytes = str_bytes(delta, "reasoning");
        if (!out->reasoning_bytes)
            out->reasoning_bytes = str_bytes(delta, "reasoning_content");
        decode_tool_calls(delta, out);
    } else {
        out->content_bytes = str_bytes(c, "text");
    }
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(c, "finish_reason");
    if (cJSON_IsString(fr))
        snprintf(out->finish_reason, sizeof out->finish_reason, "%s", fr->valuestring);
}

/* The server's words for an error object src (root is the event it came in):
 * "message (type, code N)" with what it names. vLLM, SGLang and llama.cpp
 * give message/type/code in one object; TGI sends {"error": "message",
 * "error_type": "..."}. The message is cut to leave room for type and code. */
static void error_text(const cJSON *src, const cJSON *root, char *out, size_t cap)
{
    bool obj = cJSON_IsObject(src);
    const cJSON *m = obj ? cJSON_GetObjectItemCaseSensitive(src, "message") : src;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(obj ? src : root, obj ? "type" : "error_type");
    const cJSON *code = obj ? cJSON_GetObjectItemCaseSensitive(src, "code") : NULL;
    char extra[112] = "";
    bool has_type = cJSON_IsString(type) && type->valuestring[0], has_code = cJSON_IsNumber(code);
    if (has_type && has_code)
        snprintf(extra, sizeof extra, " (%.64s, code %d)", type->valuestring, code->valueint);
    else if (has_type)
        snprintf(extra, sizeof extra, " (%.64s)", type->valuestring);
    else if (has_code)
        snprintf(extra, sizeof extra, " (code %d)", code->valueint);
    int room = (int)(cap - 1 - strlen(extra));
    snprintf(out, cap, "%.*s%s", room > 0 ? room : 0,
             cJSON_IsString(m) ? m->valuestring : "error object in stream", extra);
}

static void decode_error(const cJSON *root, struct chunk *out)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "object");
    const cJSON *src = NULL;
    if (e && !cJSON_IsNull(e))
        src = e;
    else if (cJSON_IsString(obj) && strcmp(obj->valuestring, "error") == 0)
        src = root;
    if (!src)
        return;
    out->kind = CHUNK_ERROR;
    error_text(src, root, out->error, sizeof out->error);
}

void chunk_error_text(const char *data, size_t len, char *out, size_t cap)
{
    cJSON *root = cJSON_ParseWithLength(data, len);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (cJSON_IsObject(root))
        error_text(e && !cJSON_IsNull(e) ? e : root, root, out, cap);
    else
        snprintf(out, cap, "%.*s", (int)(len < cap ? len : cap - 1), data);
    cJSON_Delete(root);
}

static bool is_done(const char *data, size_t len)
{
    return len == 6 && memcmp(data, "[DONE]", 6) == 0;
}

void chunk_decode(const char *data, size_t len, struct chunk *out)
{
    if (is_done(data, len) || chunk_scan(data, len, out) != 0)
        chunk_decode_json(data, len, out);
}

void chunk_decode_json(const char *data, size_t len, struct chunk *out)
{
    memset(out, 0, sizeof *out);
    out->prompt_tokens = out->completion_tokens = out->cached_tokens = -1;
    if (is_done(data, len)) {
        out->kind = CHUNK_DONE;
        return;
    }
    cJSON *root = cJSON_ParseWithLength(data, len);
    if (!cJSON_IsObject(root)) {
        out->kind = CHUNK_INVALID;
        snprintf(out->error, sizeof out->error, "event data is not a JSON object: %.*s",
                 (int)(len < 64 ? len : 64), data);
        cJSON_Delete(root);
        return;
    }
    out->kind = CHUNK_DATA;
    decode_error(root, out);
    if (out->kind == CHUNK_DATA) {
        decode_choice(root, out);
        decode_usage(root, out);
    }
    cJSON_Delete(root);
}

/* Appends string item v's JSON-escaped contents (cJSON's own escaping). */
static int append_escaped(struct buf *out, const cJSON *v)
{
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return 0;
    char *q = cJSON_PrintUnformatted(v);    /* "..." */
    int rc = q ? buf_append(out, q + 1, strlen(q) - 2) : -1;
    cJSON_free(q);
    return rc;
}

/* The cJSON path of chunk_text_append: the same fields decode_choice counts. */
static int text_from_json(const char *data, size_t len, struct buf *out)
{
    cJSON *root = cJSON_ParseWithLength(data, len);
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    const cJSON *c = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
    int rc = 0;
    if (cJSON_IsObject(c)) {
        const cJSON *delta = cJSON_GetObjectItemCaseSensitive(c, "delta");
        if (cJSON_IsObject(delta)) {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(delta, "reasoning");
            if (!str_bytes(delta, "reasoning"))
                r = cJSON_GetObjectItemCaseSensitive(delta, "reasoning_content");
            rc = append_escaped(out, cJSON_GetObjectItemCaseSensitive(delta, "content"));
            rc = rc ? rc : append_escaped(out, r);
        } else {
            rc = append_escaped(out, cJSON_GetObjectItemCaseSensitive(c, "text"));
        }
    }
    cJSON_Delete(root);
    return rc;
}

int chunk_text_append(const char *data, size_t len, const struct chunk *c, struct buf *out)
{
    if (!c->content_bytes && !c->reasoning_bytes)
        return 0;
    if (!c->text_spanned)
        return text_from_json(data, len, out);
    for (int i = 0; i < 2; i++)
        if (c->text_raw_len[i] && buf_append(out, c->text_raw[i], c->text_raw_len[i]) != 0)
            return -1;
    return 0;
}
