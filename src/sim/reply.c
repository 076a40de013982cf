/* reply.c — SSE events and JSON bodies per flavor (see reply.h). */
#include "sim/reply.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/flavor.h"

#define SIM_STR_(x) #x
#define SIM_STR(x) SIM_STR_(x)
#define VLLM_FINGERPRINT "vllm-" SIM_VLLM_VERSION "-5c1e9a3b"

/* Hot-path appends: no format parsing (printf was 40% of the simulator's
 * time per event when every event went through buf_printf). */
#define LIT(b, s) buf_append((b), (s), sizeof(s) - 1)

static int str(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

static bool is_vllm_like(const struct sim_stream_fmt *f)
{
    return f->flavor == SIM_FLAVOR_ANVIL || f->flavor == SIM_FLAVOR_VLLM;
}

static const char *object_name(enum sim_endpoint ep)
{
    return ep == SIM_EP_CHAT ? "chat.completion.chunk" : "text_completion";
}

static char *printf_new(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *printf_new(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

int sim_stream_fmt_init(struct sim_stream_fmt *f)
{
    const char *obj = object_name(f->ep);
    if (f->flavor == SIM_FLAVOR_LLAMACPP) {
        f->head = printf_new("data: {");
        f->tail = f->ep == SIM_EP_CHAT
            ? printf_new(",\"created\":%" PRId64 ",\"id\":\"%s\",\"model\":%s,\"system_fingerprint\":\""
                         SIM_LLAMACPP_BUILD "\",\"object\":\"%s\"", f->created, f->id, f->model_json, obj)
            : printf_new(",\"created\":%" PRId64 ",\"model\":%s,\"system_fingerprint\":\""
                         SIM_LLAMACPP_BUILD "\",\"object\":\"%s\"", f->created, f->model_json, obj);
    } else {
        f->head = printf_new("data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%" PRId64
                             ",\"model\":%s,", f->id, obj, f->created, f->model_json);
        f->tail = printf_new("}\n\n");
    }
    if (!f->head || !f->tail)
        return -1;
    f->head_len = strlen(f->head);
    f->tail_len = strlen(f->tail);
    return 0;
}

void sim_stream_fmt_free(struct sim_stream_fmt *f)
{
    free(f->head);
    free(f->tail);
    f->head = f->tail = NULL;
}

bool sim_fmt_has_role_chunk(const struct sim_stream_fmt *f)
{
    return f->ep == SIM_EP_CHAT && f->flavor != SIM_FLAVOR_LLAMACPP;
}

bool sim_fmt_finish_separate(const struct sim_stream_fmt *f)
{
    return f->flavor == SIM_FLAVOR_LLAMACPP || (f->flavor == SIM_FLAVOR_SGLANG && f->ep == SIM_EP_CHAT);
}

bool sim_fmt_has_usage_chunk(const struct sim_stream_fmt *f)
{
    return f->flavor != SIM_FLAVOR_LLAMACPP && f->include_usage;
}

/* The event's opening. SGLang stamps "created" per chunk (int(time.time())),
 * so it can change mid-stream; the others keep the reply's. */
static int open_event(struct buf *b, const struct sim_stream_fmt *f)
{
    if (f->flavor != SIM_FLAVOR_SGLANG)
        return buf_append(b, f->head, f->head_len);
    return buf_printf(b, "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":%s,",
                      f->id, object_name(f->ep), (long long)time(NULL), f->model_json);
}

/* llama.cpp closes with the reply's fields, its completions with the id last. */
static int close_event(struct buf *b, const struct sim_stream_fmt *f)
{
    if (f->flavor != SIM_FLAVOR_LLAMACPP)
        return buf_append(b, f->tail, f->tail_len);
    int rc = buf_append(b, f->tail, f->tail_len);
    if (f->ep != SIM_EP_CHAT)
        rc |= buf_printf(b, ",\"id\":\"%s\"", f->id);
    return rc | buf_append(b, "}\n\n", 3);
}

/* Usage objects: vLLM's key order is prompt, total, completion. */
static int put_usage(struct buf *b, const struct sim_stream_fmt *f, int64_t completion)
{
    int64_t p = f->prompt_tokens;
    int rc = buf_printf(b, "\"usage\":{\"prompt_tokens\":%" PRId64 ",\"total_tokens\":%" PRId64
                        ",\"completion_tokens\":%" PRId64, p, p + completion, completion);
    if (f->cached_tokens >= 0)
        rc |= buf_printf(b, ",\"prompt_tokens_details\":{\"cached_tokens\":%" PRId64 "}", f->cached_tokens);
    else if (f->flavor == SIM_FLAVOR_SGLANG && f->ep == SIM_EP_CHAT)
        rc |= buf_printf(b, ",\"prompt_tokens_details\":null");
    if (f->flavor == SIM_FLAVOR_SGLANG)
        rc |= buf_printf(b, ",\"reasoning_tokens\":%" PRId64, f->reasoning_tokens);
    return rc | buf_append(b, "}", 1);
}

/* llama.cpp's usage order: completion, prompt, total. */
static int put_llamacpp_usage(struct buf *b, const struct sim_stream_fmt *f, int64_t completion)
{
    return buf_printf(b, ",\"usage\":{\"completion_tokens\":%" PRId64 ",\"prompt_tokens\":%" PRId64
                      ",\"total_tokens\":%" PRId64 "}", completion, f->prompt_tokens,
                      f->prompt_tokens + completion);
}

static int put_timings(struct buf *b, const struct sim_timings *t)
{
    double pn = (double)t->prompt_n, gn = (double)t->predicted_n;
    return buf_printf(b, ",\"timings\":{\"prompt_n\":%" PRId64 ",\"prompt_ms\":%.3f,"
                      "\"prompt_per_token_ms\":%.6f,\"prompt_per_second\":%.3f,\"predicted_n\":%"
                      PRId64 ",\"predicted_ms\":%.3f,\"predicted_per_token_ms\":%.6f,"
                      "\"predicted_per_second\":%.3f}", t->prompt_n, t->prompt_ms,
                      pn > 0 ? t->prompt_ms / pn : 0, t->prompt_ms > 0 ? pn * 1000 / t->prompt_ms : 0,
                      t->predicted_n, t->predicted_ms, gn > 0 ? t->predicted_ms / gn : 0,
                      t->predicted_ms > 0 ? gn * 1000 / t->predicted_ms : 0);
}

int sim_sse_role(struct buf *b, const struct sim_stream_fmt *f)
{
    int rc = open_event(b, f);
    if (f->flavor == SIM_FLAVOR_SGLANG)
        return rc | buf_printf(b, "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null,"
                               "\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
                               "\"finish_reason\":null,\"matched_stop\":null}]") | close_event(b, f) ? -1 : 0;
    rc |= buf_printf(b, "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                     "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]");
    if (f->continuous_usage)
        rc |= buf_append(b, ",", 1) | put_usage(b, f, 0);
    rc |= buf_printf(b, ",\"prompt_token_ids\":null,\"prompt_text\":null") | close_event(b, f);
    return rc ? -1 : 0;
}

/* A chat delta's keys: reasoning first, as vLLM's DeltaMessage orders them. */
static int put_delta(struct buf *b, const char *rkey, const char *reasoning, const char *content)
{
    int rc = LIT(b, "\"delta\":{");
    if (reasoning)
        rc |= LIT(b, "\"") | str(b, rkey) | LIT(b, "\":\"") | str(b, reasoning) | LIT(b, "\"");
    if (content || !reasoning)
        rc |= (reasoning ? LIT(b, ",") : 0) | LIT(b, "\"content\":\"") | str(b, content ? content : "")
              | LIT(b, "\"");
    return rc | LIT(b, "}");
}

static int delta_vllm(struct buf *b, const struct sim_stream_fmt *f, const char *reasoning,
                      const char *content, int64_t generated, const char *fr, bool finish)
{
    int rc;
    if (f->ep == SIM_EP_CHAT) {
        const char *rkey = f->flavor == SIM_FLAVOR_VLLM ? "reasoning" : "reasoning_content";
        rc = LIT(b, "\"choices\":[{\"index\":0,") | put_delta(b, rkey, reasoning, content)
             | LIT(b, ",\"logprobs\":null,\"finish_reason\":") | str(b, fr)
             | (finish ? LIT(b, ",\"stop_reason\":null") : 0) | LIT(b, ",\"token_ids\":null}]");
    } else {
        rc = LIT(b, "\"choices\":[{\"index\":0,\"text\":\"") | str(b, content ? content : "")
             | LIT(b, "\",\"logprobs\":null,\"finish_reason\":") | str(b, fr)
             | LIT(b, ",\"stop_reason\":null,\"prompt_token_ids\":null,\"token_ids\":null}]");
    }
    if (f->continuous_usage)
        rc |= buf_append(b, ",", 1) | put_usage(b, f, generated);
    /* Without a usage chunk vLLM puts the fingerprint on the finish chunk. */
    if (finish && !f->include_usage)
        rc |= buf_printf(b, ",\"system_fingerprint\":\"%s\"",
                         f->flavor == SIM_FLAVOR_VLLM ? VLLM_FINGERPRINT : SIM_FINGERPRINT);
    return rc;
}

static int delta_sglang(struct buf *b, const struct sim_stream_fmt *f, const char *reasoning,
                        const char *content, const char *fr, const char *ms)
{
    if (f->ep != SIM_EP_CHAT)
        return buf_printf(b, "\"choices\":[{\"index\":0,\"text\":\"%s\",\"logprobs\":null,"
                          "\"finish_reason\":%s,\"matched_stop\":%s}],\"usage\":null",
                          content ? content : "", fr, ms);
    int rc = buf_printf(b, "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":");
    rc |= reasoning ? buf_printf(b, "\"%s\"", reasoning) : buf_append(b, "null", 4);
    if (content)
        rc |= buf_printf(b, ",\"content\":\"%s\"", content);
    return rc | buf_printf(b, "},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}]");
}

static int delta_llamacpp(struct buf *b, const struct sim_stream_fmt *f, const char *reasoning,
                          const char *content)
{
    if (f->ep != SIM_EP_CHAT)
        return buf_printf(b, "\"choices\":[{\"text\":\"%s\",\"index\":0,\"logprobs\":null,"
                          "\"finish_reason\":null}]", content ? content : "");
    return buf_printf(b, "\"choices\":[{\"finish_reason\":null,\"index\":0,")
           | put_delta(b, "reasoning_content", reasoning, content) | buf_append(b, "}]", 2);
}

int sim_sse_delta(struct buf *b, const struct sim_stream_fmt *f, const char *reasoning,
                  const char *content, int64_t generated, const char *finish)
{
    bool stop = finish && !strcmp(finish, "stop");
    const char *fr = !finish ? "null" : stop ? "\"stop\"" : "\"length\"";
    const char *ms = stop ? SIM_STR(SIM_TOKEN_ID_EOS) : "null";
    int rc = open_event(b, f);
    if (is_vllm_like(f))
        rc |= delta_vllm(b, f, reasoning, content, generated, fr, finish != NULL);
    else if (f->flavor == SIM_FLAVOR_SGLANG)
        rc |= delta_sglang(b, f, reasoning, content, fr, ms);
    else
        rc |= delta_llamacpp(b, f, reasoning, content);
    return rc | close_event(b, f) ? -1 : 0;
}

const char *sim_fmt_finish_reason(const struct sim_stream_fmt *f, const char *finish)
{
    return f->tool_name && finish && !strcmp(finish, "stop") ? "tool_calls" : finish;
}

/* "tool_calls":[...] of one delta: the call's opening, or a fragment. */
static int put_tool_call(struct buf *b, const struct sim_stream_fmt *f, const char *args, bool opens)
{
    int rc = LIT(b, "\"tool_calls\":[{");
    if (opens)
        rc |= LIT(b, "\"id\":\"call_") | str(b, f->id) | LIT(b, "\",\"type\":\"function\",\"index\":0,"
                                                            "\"function\":{\"name\":\"")
              | str(b, f->tool_name) | LIT(b, "\",\"arguments\":\"");
    else
        rc |= LIT(b, "\"index\":0,\"function\":{\"arguments\":\"");
    return rc | str(b, args) | LIT(b, "\"}}]");
}

int sim_sse_tool_delta(struct buf *b, const struct sim_stream_fmt *f, const char *args, bool opens,
                       int64_t generated, const char *finish)
{
    const char *fin = sim_fmt_finish_reason(f, finish);
    char fr[32] = "null";
    if (fin)
        snprintf(fr, sizeof fr, "\"%s\"", fin);
    int rc = open_event(b, f);
    if (is_vllm_like(f)) {
        rc |= LIT(b, "\"choices\":[{\"index\":0,\"delta\":{") | put_tool_call(b, f, args, opens)
              | LIT(b, "},\"logprobs\":null,\"finish_reason\":") | str(b, fr)
              | (fin ? LIT(b, ",\"stop_reason\":null") : 0) | LIT(b, ",\"token_ids\":null}]");
        if (f->continuous_usage)
            rc |= buf_append(b, ",", 1) | put_usage(b, f, generated);
        if (fin && !f->include_usage)
            rc |= buf_printf(b, ",\"system_fingerprint\":\"%s\"",
                             f->flavor == SIM_FLAVOR_VLLM ? VLLM_FINGERPRINT : SIM_FINGERPRINT);
    } else if (f->flavor == SIM_FLAVOR_SGLANG) {
        rc |= LIT(b, "\"choices\":[{\"index\":0,\"delta\":{\"role\":null,\"content\":null,"
                     "\"reasoning_content\":null,") | put_tool_call(b, f, args, opens)
              | LIT(b, "},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null");
    } else {
        rc |= LIT(b, "\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{")
              | put_tool_call(b, f, args, opens) | LIT(b, "}}]");
    }
    return rc | close_event(b, f) ? -1 : 0;
}

int sim_sse_finish(struct buf *b, const struct sim_stream_fmt *f, const char *finish,
                   int64_t completion_tokens, const struct sim_timings *t)
{
    int rc = open_event(b, f);
    if (f->flavor == SIM_FLAVOR_SGLANG) {
        char ms[24] = "null";
        if (!strcmp(finish, "stop"))
            snprintf(ms, sizeof ms, "%d", SIM_TOKEN_ID_EOS);
        rc |= buf_printf(b, "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":null},"
                         "\"logprobs\":null,\"finish_reason\":\"%s\",\"matched_stop\":%s}]", finish, ms);
        return rc | close_event(b, f) ? -1 : 0;
    }
    if (f->ep == SIM_EP_CHAT)
        rc |= buf_printf(b, "\"choices\":[{\"finish_reason\":\"%s\",\"index\":0,\"delta\":{}}]", finish)
              | buf_append(b, f->tail, strlen(f->tail));
    else
        rc |= buf_printf(b, "\"choices\":[{\"text\":\"\",\"index\":0,\"logprobs\":null,"
                         "\"finish_reason\":\"%s\"}]", finish) | buf_append(b, f->tail, strlen(f->tail));
    rc |= put_llamacpp_usage(b, f, completion_tokens);
    if (f->ep != SIM_EP_CHAT)
        rc |= buf_printf(b, ",\"id\":\"%s\"", f->id);
    rc |= put_timings(b, t) | buf_append(b, "}\n\n", 3);
    return rc ? -1 : 0;
}

int sim_sse_usage(struct buf *b, const struct sim_stream_fmt *f, int64_t completion_tokens)
{
    int rc = open_event(b, f) | buf_append(b, "\"choices\":[],", 13) | put_usage(b, f, completion_tokens);
    if (is_vllm_like(f))
        rc |= buf_printf(b, ",\"system_fingerprint\":\"%s\"",
                         f->flavor == SIM_FLAVOR_VLLM ? VLLM_FINGERPRINT : SIM_FINGERPRINT);
    return rc | close_event(b, f) ? -1 : 0;
}

int sim_sse_error(struct buf *b, const struct sim_stream_fmt *f, int status, const char *type,
                  const char *message)
{
    int rc;
    if (f->flavor == SIM_FLAVOR_LLAMACPP)   /* server_sent_event(sink, "error", error_data) */
        rc = buf_printf(b, "error: {\"code\":%d,\"message\":\"%s\",\"type\":\"%s\"}\n\n",
                        status, message, type);
    else
        rc = buf_printf(b, "data: {\"error\": {%s\"message\": \"%s\", \"type\": \"%s\", "
                        "\"param\": null, \"code\": %d}}\n\n",
                        f->flavor == SIM_FLAVOR_SGLANG ? "\"object\": \"error\", " : "", message,
                        type, status);
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

/* ---- non-streamed bodies ---------------------------------------------------- */

/* Prints and frees root; NULL when root is NULL or printing fails. The
 * cJSON_Add* helpers accept a NULL parent and return NULL on failure, so
 * the builders need no check per field. */
static char *print_free(cJSON *root)
{
    char *out = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return out;
}

static cJSON *add_choice_object(cJSON *root)
{
    cJSON *c = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "choices"), c)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

static void add_text_or_null(cJSON *o, const char *key, const char *text)
{
    if (text)
        cJSON_AddStringToObject(o, key, text);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_usage(cJSON *root, const struct sim_body *b)
{
    cJSON *u = cJSON_AddObjectToObject(root, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)b->prompt_tokens);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(b->prompt_tokens + b->completion_tokens));
    cJSON_AddNumberToObject(u, "completion_tokens", (double)b->completion_tokens);
    if (b->cached_tokens >= 0)
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(u, "prompt_tokens_details"), "cached_tokens",
                                (double)b->cached_tokens);
    else
        cJSON_AddNullToObject(u, "prompt_tokens_details");
    if (b->flavor == SIM_FLAVOR_SGLANG)
        cJSON_AddNumberToObject(u, "reasoning_tokens", (double)b->reasoning_tokens);
}

static void add_vllm_choice(cJSON *root, const struct sim_body *b)
{
    cJSON *c = add_choice_object(root);
    cJSON_AddNumberToObject(c, "index", 0);
    if (b->ep == SIM_EP_CHAT) {
        cJSON *m = cJSON_AddObjectToObject(c, "message");
        cJSON_AddStringToObject(m, "role", "assistant");
        cJSON_AddStringToObject(m, "content", b->content);
        cJSON_AddNullToObject(m, "refusal");
        cJSON_AddNullToObject(m, "annotations");
        cJSON_AddNullToObject(m, "audio");
        cJSON_AddNullToObject(m, "function_call");
        cJSON_AddArrayToObject(m, "tool_calls");
        add_text_or_null(m, b->flavor == SIM_FLAVOR_VLLM ? "reasoning" : "reasoning_content",
                         b->reasoning);
    } else {
        cJSON_AddStringToObject(c, "text", b->content);
    }
    cJSON_AddNullToObject(c, "logprobs");
    cJSON_AddStringToObject(c, "finish_reason", b->finish);
    cJSON_AddNullToObject(c, "stop_reason");
    if (b->ep != SIM_EP_CHAT) {
        cJSON_AddNullToObject(c, "prompt_logprobs");
        cJSON_AddNullToObject(c, "prompt_token_ids");
    }
    cJSON_AddNullToObject(c, "token_ids");
}

/* The fields every OpenAI completion body starts with: id, object, created, model. */
static cJSON *body_head(const struct sim_body *b)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", b->id);
    cJSON_AddStringToObject(root, "object", b->ep == SIM_EP_CHAT ? "chat.completion" : "text_completion");
    cJSON_AddNumberToObject(root, "created", (double)b->created);
    cJSON_AddStringToObject(root, "model", b->model);
    return root;
}

static char *body_vllm(const struct sim_body *b)
{
    cJSON *root = body_head(b);
    add_vllm_choice(root, b);
    cJSON_AddNullToObject(root, "service_tier");
    cJSON_AddStringToObject(root, "system_fingerprint",
                            b->flavor == SIM_FLAVOR_VLLM ? VLLM_FINGERPRINT : SIM_FINGERPRINT);
    add_usage(root, b);
    if (b->ep == SIM_EP_CHAT) {
        cJSON_AddNullToObject(root, "prompt_logprobs");
        cJSON_AddNullToObject(root, "prompt_token_ids");
    }
    cJSON_AddNullToObject(root, "kv_transfer_params");
    return print_free(root);
}

static char *body_sglang(const struct sim_body *b)
{
    cJSON *root = body_head(b);
    cJSON *c = add_choice_object(root);
    cJSON_AddNumberToObject(c, "index", 0);
    if (b->ep == SIM_EP_CHAT) {
        cJSON *m = cJSON_AddObjectToObject(c, "message");
        cJSON_AddStringToObject(m, "role", "assistant");
        cJSON_AddStringToObject(m, "content", b->content);
        add_text_or_null(m, "reasoning_content", b->reasoning);
        cJSON_AddNullToObject(m, "tool_calls");
    } else {
        cJSON_AddStringToObject(c, "text", b->content);
    }
    cJSON_AddNullToObject(c, "logprobs");
    cJSON_AddStringToObject(c, "finish_reason", b->finish);
    if (!strcmp(b->finish, "stop"))
        cJSON_AddNumberToObject(c, "matched_stop", SIM_TOKEN_ID_EOS);
    else
        cJSON_AddNullToObject(c, "matched_stop");
    add_usage(root, b);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "metadata"), "weight_version", "default");
    return print_free(root);
}

static char *body_llamacpp(const struct sim_body *b)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *c = add_choice_object(root);
    if (b->ep == SIM_EP_CHAT) {
        cJSON_AddStringToObject(c, "finish_reason", b->finish);
        cJSON_AddNumberToObject(c, "index", 0);
        cJSON *m = cJSON_AddObjectToObject(c, "message");
        cJSON_AddStringToObject(m, "role", "assistant");
        cJSON_AddStringToObject(m, "content", b->content);
        if (b->reasoning)
            cJSON_AddStringToObject(m, "reasoning_content", b->reasoning);
    } else {
        cJSON_AddStringToObject(c, "text", b->content);
        cJSON_AddNumberToObject(c, "index", 0);
        cJSON_AddNullToObject(c, "logprobs");
        cJSON_AddStringToObject(c, "finish_reason", b->finish);
    }
    cJSON_AddNumberToObject(root, "created", (double)b->created);
    cJSON_AddStringToObject(root, "model", b->model);
    cJSON_AddStringToObject(root, "system_fingerprint", SIM_LLAMACPP_BUILD);
    cJSON_AddStringToObject(root, "object", b->ep == SIM_EP_CHAT ? "chat.completion" : "text_completion");
    cJSON *u = cJSON_AddObjectToObject(root, "usage");
    cJSON_AddNumberToObject(u, "completion_tokens", (double)b->completion_tokens);
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)b->prompt_tokens);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(b->prompt_tokens + b->completion_tokens));
    cJSON_AddStringToObject(root, "id", b->id);
    struct buf t;
    buf_init(&t, 4096);
    if (b->timings && put_timings(&t, b->timings) == 0) {
        cJSON *tj = cJSON_Parse(t.data + strlen(",\"timings\":"));
        if (!cJSON_AddItemToObject(root, "timings", tj))
            cJSON_Delete(tj);
    }
    buf_free(&t);
    return print_free(root);
}

char *sim_json_completion(const struct sim_body *b)
{
    if (b->flavor == SIM_FLAVOR_SGLANG)
        return body_sglang(b);
    if (b->flavor == SIM_FLAVOR_LLAMACPP)
        return body_llamacpp(b);
    return body_vllm(b);
}
