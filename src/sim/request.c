/* request.c — request body parsing and validation (see request.h). */
#include "sim/request.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/vec.h"
#include "sim/flavor.h"
#include "sim/tokens.h"

/* Cap of the token texts one with_pieces reply lists. */
#define SIM_MAX_PIECES_BYTES (256u << 20)

/* Largest integer a JSON number (a double) holds exactly. */
#define SIM_JSON_INT_MAX 9007199254740992.0

/* Accumulates the prompt's token count, hash and (for /tokenize) ids. */
struct walk {
    enum sim_tokenizer tokenizer;
    int64_t n;
    uint64_t hash;
    bool want_ids;
    int64_t *ids;
    size_t cap;
    bool want_pieces;      /* llama.cpp /tokenize with_pieces: each token's text too */
    struct buf pieces;     /* NUL-terminated pieces, one per id */
};

static int fail(struct sim_error *err, int status, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct sim_error *err, int status, const char *param, const char *fmt, ...)
{
    err->status = status;
    err->type = status == 404 ? "NotFoundError" : "BadRequestError";
    err->param = param;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

static int walk_push(struct walk *w, int64_t id)
{
    if (w->want_ids) {
        if (VEC_RESERVE(w->ids, w->cap, (size_t)w->n + 1, 64) != 0)
            return -1;
        w->ids[w->n] = id;
    }
    w->n++;
    return 0;
}

/* Adds one token of llama.cpp's /tokenize: its id and, for with_pieces, its text. */
static int walk_piece(struct walk *w, int64_t id, const char *piece, size_t len)
{
    if (w->want_pieces && (buf_append(&w->pieces, piece, len) != 0 || buf_append(&w->pieces, "", 1) != 0))
        return -1;
    return walk_push(w, id);
}

/* llama.cpp's special tokens as text, which /tokenize with parse_special
 * reads as the template's tokens (the chat template of /props, ChatML). */
static const struct { const char *text; int64_t id; } specials[] = {
    {"<|begin_of_text|>", SIM_TOKEN_ID_BOS},
    {"<|im_start|>", SIM_TOKEN_ID_MSG_START},
    {"<|im_end|>", SIM_TOKEN_ID_MSG_END},
};

/* The special token that starts at s (n bytes left), or -1. */
static int special_at(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) {
        size_t k = strlen(specials[i].text);
        if (k <= n && !memcmp(s, specials[i].text, k))
            return (int)i;
    }
    return -1;
}

/* One whitespace-free run of llama.cpp /tokenize text: special tokens (with
 * parse_special) are tokens of their own, the bytes between them words. */
static int walk_run(struct walk *w, const char *s, size_t len, bool parse_special)
{
    size_t word = 0;
    for (size_t i = 0; i < len;) {
        int sp = parse_special ? special_at(s + i, len - i) : -1;
        if (sp < 0) {
            i++;
            continue;
        }
        size_t k = strlen(specials[sp].text);
        if ((i > word && walk_piece(w, sim_token_id(s + word, i - word), s + word, i - word)) ||
            walk_piece(w, specials[sp].id, s + i, k))
            return -1;
        i += k;
        word = i;
    }
    return len > word ? walk_piece(w, sim_token_id(s + word, len - word), s + word, len - word) : 0;
}

/* llama.cpp /tokenize "content". The chat template's generation prompt
 * ends in "<|im_start|>assistant\n"; that newline is the template's
 * newline token (chat requests count it), so with parse_special a text
 * ending so counts it too: /apply-template then /tokenize gives a chat
 * request's prompt_tokens. */
static int walk_llamacpp_text(struct walk *w, const char *s, size_t len, bool parse_special)
{
    static const char gen_prompt[] = "<|im_start|>assistant\n";
    size_t pos = 0, start, tlen;
    while (sim_next_token(s, len, &pos, &start, &tlen))
        if (walk_run(w, s + start, tlen, parse_special) != 0)
            return -2;
    size_t g = sizeof gen_prompt - 1;
    if (parse_special && len >= g && !memcmp(s + len - g, gen_prompt, g) &&
        walk_piece(w, SIM_TOKEN_ID_NEWLINE, "\n", 1) != 0)
        return -2;
    return 0;
}

/* Adds the tokens of len bytes at s. The hash covers the bytes and a
 * separator, so ("ab","c") and ("a","bc") hash differently. */
static int walk_text(struct walk *w, const char *s, size_t len)
{
    w->hash = sim_hash_bytes(w->hash, s, len);
    w->hash = sim_hash_bytes(w->hash, "\0", 1);
    if (!w->want_ids) {
        w->n += sim_count_tokens_as(w->tokenizer, s, len);
        return 0;
    }
    size_t pos = 0, start, tlen;
    while (sim_next_token_as(w->tokenizer, s, len, &pos, &start, &tlen))
        if (walk_push(w, sim_token_id(s + start, tlen)) != 0)
            return -1;
    return 0;
}

/* Image tokens: a Qwen2-VL-like vision encoder, one token per 28×28 pixels
 * after merging, between a vision start and end token. */
#define SIM_IMAGE_PATCH 28

/* Width and height of a base64 PNG data: URL from its IHDR chunk (the first
 * 24 bytes: signature, length, "IHDR", width, height, big-endian). */
static int png_size(const char *url, int64_t *w, int64_t *h)
{
    static const char prefix[] = "data:image/png;base64,";
    size_t n = sizeof prefix - 1;
    if (strncmp(url, prefix, n) != 0 || strlen(url + n) < 32)
        return -1;
    unsigned char head[24];     /* 32 base64 characters give exactly 24 bytes */
    if (EVP_DecodeBlock(head, (const unsigned char *)url + n, 32) != 24 || memcmp(head + 1, "PNG", 3) != 0 ||
        memcmp(head + 12, "IHDR", 4) != 0)
        return -1;
    *w = (int64_t)head[16] << 24 | (int64_t)head[17] << 16 | (int64_t)head[18] << 8 | head[19];
    *h = (int64_t)head[20] << 24 | (int64_t)head[21] << 16 | (int64_t)head[22] << 8 | head[23];
    return *w > 0 && *h > 0 ? 0 : -1;
}

/* Bytes of a JPEG's start the simulator reads for its frame header: past
 * the APPn segments (EXIF included, at most 64 KiB each) of most files. */
#define SIM_JPEG_HEAD 196608

/* Width and height of a base64 JPEG data: URL from its first SOFn segment
 * (ITU T.81 B.2.2: after the marker and length, precision, height, width,
 * big-endian), walking the segments after SOI. */
static int jpeg_size(const char *url, int64_t *w, int64_t *h)
{
    static const char prefix[] = "data:image/jpeg;base64,";
    size_t n = sizeof prefix - 1;
    if (strncmp(url, prefix, n) != 0)
        return -1;      /* before strlen: a URL shorter than the prefix ends before url + n */
    size_t len = strlen(url + n) & ~(size_t)3;
    if (len < 8)
        return -1;
    if (len > SIM_JPEG_HEAD / 3 * 4)
        len = SIM_JPEG_HEAD / 3 * 4;
    unsigned char *b = malloc(len / 4 * 3);
    int got = b ? EVP_DecodeBlock(b, (const unsigned char *)url + n, (int)len) : -1;
    int rc = -1;
    for (int at = 2; got > 4 && b[0] == 0xff && b[1] == 0xd8 && at + 9 <= got && b[at] == 0xff;) {
        int marker = b[at + 1], seg = b[at + 2] << 8 | b[at + 3];
        /* SOF0..SOF15 but DHT (c4), JPG (c8) and DAC (cc) */
        if (marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc) {
            *h = b[at + 5] << 8 | b[at + 6];
            *w = b[at + 7] << 8 | b[at + 8];
            rc = *w > 0 && *h > 0 ? 0 : -1;
            break;
        }
        at += 2 + seg;
    }
    free(b);
    return rc;
}

/* One image_url part: its tokens, with ids from the image's bytes, so the
 * same image is the same prefix. */
static int walk_image(struct walk *w, const cJSON *part, size_t idx, struct sim_error *err)
{
    const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(part, "image_url"), "url"));
    int64_t iw, ih;
    if (!url || (png_size(url, &iw, &ih) != 0 && jpeg_size(url, &iw, &ih) != 0))
        return fail(err, 400, "messages", "messages[%zu].content: an image_url part needs a PNG or JPEG "
                    "data: URL (data:image/png;base64,... or data:image/jpeg;base64,...): the simulator "
                    "fetches nothing", idx);
    uint64_t h = sim_hash_bytes(SIM_HASH_INIT, url, strlen(url));
    w->hash = sim_hash_bytes(w->hash, &h, sizeof h);
    int64_t n = ((iw + SIM_IMAGE_PATCH - 1) / SIM_IMAGE_PATCH) * ((ih + SIM_IMAGE_PATCH - 1) / SIM_IMAGE_PATCH);
    if (walk_push(w, SIM_TOKEN_ID_MSG_START))
        return -2;
    for (int64_t i = 0; i < n; i++)
        if (walk_push(w, SIM_TOKEN_ID_FIRST_WORD + (int64_t)(sim_mix64(h + (uint64_t)i) % (SIM_TOKEN_ID_LIMIT - SIM_TOKEN_ID_FIRST_WORD))))
            return -2;
    return walk_push(w, SIM_TOKEN_ID_MSG_END) ? -2 : 0;
}

/* Content of one chat message: a string, null, or an array of
 * {"type":"text","text":...} parts (each tokenized on its own, which is what
 * joining them with "\n" gives) and {"type":"image_url",...} parts (PNG
 * or JPEG data: URLs, walk_image). */
static int walk_content(struct walk *w, const cJSON *content, size_t idx, struct sim_error *err)
{
    if (!content || cJSON_IsNull(content))
        return 0;
    if (cJSON_IsString(content))
        return walk_text(w, content->valuestring, strlen(content->valuestring)) ? -2 : 0;
    if (!cJSON_IsArray(content))
        return fail(err, 400, "messages", "messages[%zu].content must be a string, null or "
                    "an array of text parts", idx);
    const cJSON *part;
    cJSON_ArrayForEach(part, content) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (cJSON_IsString(type) && !strcmp(type->valuestring, "image_url")) {
            int rc = walk_image(w, part, idx, err);
            if (rc != 0)
                return rc;
            continue;
        }
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") != 0 || !cJSON_IsString(text))
            return fail(err, 400, "messages", "messages[%zu].content: only parts "
                        "{\"type\":\"text\",\"text\":...} and {\"type\":\"image_url\",...} are supported", idx);
        if (walk_text(w, text->valuestring, strlen(text->valuestring)) != 0)
            return -2;
    }
    return 0;
}

/* The chat template: per message <start> role <end> around its content, then
 * <start> assistant <newline> when add_generation_prompt. */
static int walk_messages(struct walk *w, const cJSON *msgs, bool gen_prompt, struct sim_error *err)
{
    if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0)
        return fail(err, 400, "messages", "'messages' must be a non-empty array");
    size_t i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        if (!cJSON_IsObject(m) || !cJSON_IsString(role))
            return fail(err, 400, "messages", "messages[%zu] must be an object with a string 'role'", i);
        size_t rlen = strlen(role->valuestring);
        w->hash = sim_hash_bytes(w->hash, role->valuestring, rlen + 1);
        if (walk_push(w, SIM_TOKEN_ID_MSG_START) || walk_push(w, sim_token_id(role->valuestring, rlen)))
            return -2;
        int rc = walk_content(w, cJSON_GetObjectItemCaseSensitive(m, "content"), i, err);
        if (rc != 0)
            return rc;
        if (walk_push(w, SIM_TOKEN_ID_MSG_END))
            return -2;
        i++;
    }
    if (gen_prompt && (walk_push(w, SIM_TOKEN_ID_MSG_START) ||
                       walk_push(w, sim_token_id("assistant", 9)) ||
                       walk_push(w, SIM_TOKEN_ID_NEWLINE)))
        return -2;
    return 0;
}

/* A completions prompt: a string, or an array holding exactly one string. */
static int walk_prompt(struct walk *w, const cJSON *prompt, bool bos, struct sim_error *err)
{
    if (cJSON_IsArray(prompt) && cJSON_GetArraySize(prompt) == 1)
        prompt = cJSON_GetArrayItem(prompt, 0);
    if (!cJSON_IsString(prompt))
        return fail(err, 400, "prompt", "'prompt' must be a string");
    if (bos && walk_push(w, SIM_TOKEN_ID_BOS))
        return -2;
    return walk_text(w, prompt->valuestring, strlen(prompt->valuestring)) ? -2 : 0;
}

/* Reads an optional boolean; absent or null keeps *out. */
static int get_bool(const cJSON *obj, const char *name, bool *out, struct sim_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsBool(v))
        return fail(err, 400, NULL, "'%s' must be a boolean", name);
    *out = cJSON_IsTrue(v);
    return 0;
}

/* Reads an optional integer; returns 1 when present, 0 when absent/null. */
static int get_int(const cJSON *obj, const char *name, int64_t *out, struct sim_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v))
        return 0;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!isfinite(d) || d != floor(d) || fabs(d) > SIM_JSON_INT_MAX)
        return fail(err, 400, NULL, "'%s' must be an integer", name);
    *out = (int64_t)d;
    return 1;
}

static int check_model(const cJSON *root, const struct sim_limits *lim, struct sim_error *err)
{
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!model || cJSON_IsNull(model))
        return 0;   /* vLLM serves its model when none is named */
    if (!cJSON_IsString(model))
        return fail(err, 400, "model", "'model' must be a string");
    if (!lim->any_model && strcmp(model->valuestring, lim->model) != 0)
        return fail(err, 404, "model", "The model `%s` does not exist.", model->valuestring);
    return 0;
}

static int parse_stream_options(const cJSON *root, struct sim_request *rq, struct sim_error *err)
{
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
    if (!so || cJSON_IsNull(so))
        return 0;
    if (!cJSON_IsObject(so))
        return fail(err, 400, NULL, "'stream_options' must be an object");
    bool cont = false;
    if (get_bool(so, "include_usage", &rq->include_usage, err) ||
        get_bool(so, "continuous_usage_stats", &cont, err))
        return -1;
    /* vLLM: continuous usage only takes effect together with include_usage. */
    rq->continuous_usage = cont && rq->include_usage;
    return 0;
}

static int parse_sampling(const cJSON *root, struct sim_request *rq, struct sim_error *err)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "temperature");
    if (t && !cJSON_IsNull(t)) {
        if (!cJSON_IsNumber(t) || !(t->valuedouble >= 0))
            return fail(err, 400, "temperature", "'temperature' must be a number >= 0");
        rq->temperature = t->valuedouble;
    }
    int has = get_int(root, "seed", &rq->seed, err);
    if (has < 0)
        return -1;
    rq->has_seed = has == 1;
    return 0;
}

static int parse_max_tokens(const cJSON *root, struct sim_request *rq, struct sim_error *err)
{
    int64_t v;
    int has = 0;
    /* Chat: max_completion_tokens wins over the deprecated max_tokens (vLLM). */
    if (rq->ep == SIM_EP_CHAT)
        has = get_int(root, "max_completion_tokens", &v, err);
    if (has == 0)
        has = get_int(root, "max_tokens", &v, err);
    if (has < 0)
        return -1;
    if (has == 1 && v < 1)
        return fail(err, 400, "max_tokens", "max_tokens must be at least 1, got %lld.", (long long)v);
    rq->max_tokens = has == 1 ? v : SIM_DEFAULT_MAX_TOKENS;
    return 0;
}

/* llama.cpp's /tokenize: "content" (add_special default false, parse_special
 * true, with_pieces false, as llama-server's handler reads them; the
 * fixture tokenize_default.txt has no BOS, tokenize_with_pieces.txt one).
 * Without "content" llama-server answers {"tokens":[]}. */
static int parse_llamacpp_tokenize(const cJSON *root, struct sim_request *rq, struct walk *w,
                                   struct sim_error *err)
{
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(root, "content");
    bool add_special = false, parse_special = true;
    if (get_bool(root, "add_special", &add_special, err) || get_bool(root, "parse_special", &parse_special, err) ||
        get_bool(root, "with_pieces", &rq->with_pieces, err))
        return -1;
    w->want_pieces = rq->with_pieces;
    if (!content)
        return 0;
    if (!cJSON_IsString(content))
        return fail(err, 400, "content", "'content' must be a string");
    size_t len = strlen(content->valuestring);
    w->hash = sim_hash_bytes(w->hash, content->valuestring, len);
    if (add_special && walk_piece(w, SIM_TOKEN_ID_BOS, "<|begin_of_text|>", 17))
        return -2;
    return walk_llamacpp_text(w, content->valuestring, len, parse_special);
}

/* SGLang's /v1/tokenize: "prompt" (add_special_tokens default true); no
 * chat form. */
static int parse_sglang_tokenize(const cJSON *root, struct walk *w, struct sim_error *err)
{
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(root, "prompt");
    bool bos = true;
    if (get_bool(root, "add_special_tokens", &bos, err))
        return -1;
    if (!prompt)
        return fail(err, 400, "prompt", "Field required: prompt");
    return walk_prompt(w, prompt, bos, err);
}

static bool tool_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

static const char *tool_fn_name(const cJSON *tool)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(tool, "function"), "name"));
}

/* tool_choice: which of the tools the reply calls (rq->tool_name). */
static int parse_tool_choice(const cJSON *root, const cJSON *tools, struct sim_request *rq,
                             struct sim_error *err)
{
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "tool_choice");
    const char *pick = tool_fn_name(cJSON_GetArrayItem(tools, 0));
    if (cJSON_IsString(tc) && !strcmp(tc->valuestring, "none"))
        return 0;
    if (tc && !cJSON_IsNull(tc) && !(cJSON_IsString(tc) && (!strcmp(tc->valuestring, "auto") ||
                                                            !strcmp(tc->valuestring, "required")))) {
        const char *want = tool_fn_name(tc);
        const cJSON *t;
        pick = NULL;
        cJSON_ArrayForEach(t, tools)
            if (want && !strcmp(tool_fn_name(t), want))
                pick = want;
        if (!pick)
            return fail(err, 400, "tool_choice", "'tool_choice' must be \"auto\", \"none\", \"required\" or "
                        "{\"type\": \"function\", \"function\": {\"name\": ...}} naming one of the tools");
    }
    snprintf(rq->tool_name, sizeof rq->tool_name, "%s", pick);
    return 0;
}

/* A chat request's tools: validated, counted as prompt text before the
 * messages (where templates render the schema), and the call picked. */
static int parse_tools(const cJSON *root, struct sim_request *rq, struct walk *w, struct sim_error *err)
{
    const cJSON *tools = cJSON_GetObjectItemCaseSensitive(root, "tools");
    if (!tools || cJSON_IsNull(tools))
        return 0;
    if (!cJSON_IsArray(tools) || cJSON_GetArraySize(tools) == 0)
        return fail(err, 400, "tools", "'tools' must be a non-empty array");
    size_t i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tools) {
        const char *name = tool_fn_name(t);
        if (!name || !tool_name_ok(name))
            return fail(err, 400, "tools", "tools[%zu].function.name must be 1-64 letters, digits, '_' "
                        "or '-'", i);
        i++;
    }
    char *text = cJSON_PrintUnformatted(tools);
    int rc = text ? walk_text(w, text, strlen(text)) : -1;
    cJSON_free(text);
    if (rc != 0)
        return -2;
    return parse_tool_choice(root, tools, rq, err);
}

/* Counts (and for /tokenize lists) the prompt's tokens. /tokenize reads the
 * body as lim->flavor's server does; the vLLM form (also anvil's) takes
 * "prompt" or "messages". */
static int parse_prompt(const cJSON *root, struct sim_request *rq, struct walk *w, int flavor,
                        struct sim_error *err)
{
    if (rq->ep == SIM_EP_TOKENIZE && flavor == SIM_FLAVOR_LLAMACPP)
        return parse_llamacpp_tokenize(root, rq, w, err);
    if (rq->ep == SIM_EP_TOKENIZE && flavor == SIM_FLAVOR_SGLANG)
        return parse_sglang_tokenize(root, w, err);
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(root, "prompt");
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
    bool use_msgs = rq->ep == SIM_EP_CHAT || (rq->ep == SIM_EP_TOKENIZE && msgs && !prompt);
    rq->chat_form = use_msgs;
    if (use_msgs) {
        bool gen_prompt = true;
        if (rq->ep == SIM_EP_TOKENIZE && get_bool(root, "add_generation_prompt", &gen_prompt, err))
            return -1;
        if (!msgs)
            return fail(err, 400, "messages", "'messages' is required");
        /* llama-server tokenizes the templated chat prompt with add_special:
         * the BOS of a model that adds one (the fixture's does) */
        if (rq->ep == SIM_EP_CHAT && flavor == SIM_FLAVOR_LLAMACPP && walk_push(w, SIM_TOKEN_ID_BOS))
            return -2;
        int rc = rq->ep == SIM_EP_CHAT ? parse_tools(root, rq, w, err) : 0;
        return rc != 0 ? rc : walk_messages(w, msgs, gen_prompt, err);
    }
    if (!prompt)
        return fail(err, 400, "prompt", rq->ep == SIM_EP_TOKENIZE
                    ? "'prompt' or 'messages' is required" : "'prompt' is required");
    bool bos = true;
    if (rq->ep == SIM_EP_TOKENIZE && get_bool(root, "add_special_tokens", &bos, err))
        return -1;
    return walk_prompt(w, prompt, bos, err);
}

static int parse_generation(const cJSON *root, struct sim_request *rq, struct sim_error *err)
{
    if (get_bool(root, "stream", &rq->stream, err) || get_bool(root, "ignore_eos", &rq->ignore_eos, err) ||
        parse_stream_options(root, rq, err) || parse_sampling(root, rq, err) ||
        parse_max_tokens(root, rq, err))
        return -1;
    return 0;
}

/* llama.cpp's truncation of a prompt that does not fit its context (context
 * shift, n_keep 0): with n_ctx the room for the prompt and half = n_ctx / 2,
 * the first (p − half) / half blocks of half tokens are erased, which leaves
 * between half and n_ctx − 1 tokens — not a monotonic function of the
 * prompt's length. The sim keeps max_tokens out of n_ctx so the reply
 * still fits. */
static void truncate_prompt(const struct sim_limits *lim, struct sim_request *rq, struct walk *w)
{
    int64_t n_ctx = lim->max_model_len - rq->max_tokens, p = rq->prompt_tokens;
    int64_t half = n_ctx / 2;
    if (p < n_ctx || half < 1)
        return;
    int64_t erased = (p - half) / half * half;
    if (w->ids)
        memmove(w->ids, w->ids + erased, (size_t)(p - erased) * sizeof *w->ids);
    rq->prompt_tokens = w->n = p - erased;
}

static int parse_root(const cJSON *root, enum sim_endpoint ep, const struct sim_limits *lim,
                      struct sim_request *rq, struct sim_error *err, struct walk *w)
{
    if (!cJSON_IsObject(root))
        return fail(err, 400, NULL, "The request body must be a JSON object");
    if (check_model(root, lim, err))
        return -1;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (cJSON_IsString(model))
        snprintf(rq->model_name, sizeof rq->model_name, "%s", model->valuestring);
    int rc = parse_prompt(root, rq, w, lim->flavor, err);
    if (rc == -2)
        return fail(err, 400, NULL, "out of memory while tokenizing the prompt");
    if (rc != 0)
        return -1;
    rq->prompt_tokens = w->n;
    rq->prompt_hash = w->hash;
    if (ep == SIM_EP_TOKENIZE)
        return 0;
    if (parse_generation(root, rq, err))
        return -1;
    char msg[sizeof err->message];
    if (lim->context_shift)
        truncate_prompt(lim, rq, w);
    if (sim_check_context(lim->max_model_len, rq->prompt_tokens, rq->max_tokens, msg, sizeof msg)) {
        /* llama-server finds it in the slot, after its 200 stream began */
        if (lim->flavor == SIM_FLAVOR_LLAMACPP && rq->stream) {
            rq->over_context = true;
            return 0;
        }
        sim_flavor_context_message((enum sim_flavor)lim->flavor, lim->max_model_len,
                                   rq->prompt_tokens, rq->max_tokens, msg, sizeof msg);
        return fail(err, 400, "input_tokens", "%s", msg);
    }
    return 0;
}

int sim_request_parse(const char *body, size_t len, enum sim_endpoint ep,
                      const struct sim_limits *lim, struct sim_request *rq,
                      struct sim_error *err)
{
    *rq = (struct sim_request){.ep = ep, .temperature = 1.0};
    struct walk w = {.hash = SIM_HASH_INIT, .want_ids = ep == SIM_EP_TOKENIZE || lim->want_ids,
                     .tokenizer = (enum sim_tokenizer)lim->tokenizer};
    buf_init(&w.pieces, SIM_MAX_PIECES_BYTES);
    cJSON *root = len ? cJSON_ParseWithLength(body, len) : NULL;
    int rc = root ? parse_root(root, ep, lim, rq, err, &w)
                  : fail(err, 400, NULL, "Invalid JSON in the request body");
    cJSON_Delete(root);
    if (rc != 0) {
        free(w.ids);
        buf_free(&w.pieces);
        return -1;
    }
    rq->token_ids = w.ids;
    rq->pieces = w.pieces.data;   /* NULL unless with_pieces found tokens */
    return 0;
}

/* One message's content as text: a string, nothing, or its text parts
 * joined by "\n" (how they are tokenized). */
static int render_content(const cJSON *content, size_t idx, struct buf *out, struct sim_error *err)
{
    if (!content || cJSON_IsNull(content))
        return 0;
    if (cJSON_IsString(content))
        return buf_append(out, content->valuestring, strlen(content->valuestring)) ? -2 : 0;
    if (!cJSON_IsArray(content))
        return fail(err, 400, "messages", "messages[%zu].content must be a string, null or "
                    "an array of text parts", idx);
    const cJSON *part;
    bool first = true;
    cJSON_ArrayForEach(part, content) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") != 0 || !cJSON_IsString(text))
            return fail(err, 400, "messages", "messages[%zu].content: only parts "
                        "{\"type\":\"text\",\"text\":...} are supported", idx);
        if ((!first && buf_append(out, "\n", 1)) || buf_append(out, text->valuestring, strlen(text->valuestring)))
            return -2;
        first = false;
    }
    return 0;
}

static int render_messages(const cJSON *root, struct buf *out, struct sim_error *err)
{
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(root, "messages");
    bool gen_prompt = true;
    if (get_bool(root, "add_generation_prompt", &gen_prompt, err))
        return -1;
    if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0)
        return fail(err, 400, "messages", "'messages' must be a non-empty array");
    size_t i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        if (!cJSON_IsObject(m) || !cJSON_IsString(role))
            return fail(err, 400, "messages", "messages[%zu] must be an object with a string 'role'", i);
        if (buf_printf(out, "<|im_start|>%s\n", role->valuestring))
            return -2;
        int rc = render_content(cJSON_GetObjectItemCaseSensitive(m, "content"), i++, out, err);
        if (rc != 0)
            return rc;
        if (buf_append(out, "<|im_end|>\n", 11))
            return -2;
    }
    return gen_prompt && buf_append(out, "<|im_start|>assistant\n", 22) ? -2 : 0;
}

int sim_request_apply_template(const char *body, size_t len, struct buf *out, struct sim_error *err)
{
    cJSON *root = len ? cJSON_ParseWithLength(body, len) : NULL;
    int rc = !root ? fail(err, 400, NULL, "Invalid JSON in the request body")
             : !cJSON_IsObject(root) ? fail(err, 400, NULL, "The request body must be a JSON object")
             : render_messages(root, out, err);
    cJSON_Delete(root);
    if (rc == -2)
        return fail(err, 500, NULL, "out of memory rendering the chat template");
    return rc;
}

uint64_t sim_request_seed(const struct sim_request *rq)
{
    return rq->has_seed && rq->temperature > 0 ? (uint64_t)rq->seed : 0;
}

void sim_request_free(struct sim_request *rq)
{
    if (!rq)
        return;
    free(rq->token_ids);
    free(rq->pieces);
    rq->token_ids = NULL;
    rq->pieces = NULL;
}
