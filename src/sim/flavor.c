/* flavor.c — per-server JSON bodies (see flavor.h). */
#include "sim/flavor.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/reply.h"
#include "sim/tokens.h"

static const char *const names[] = {"anvil", "vllm", "sglang", "llamacpp"};

int sim_flavor_parse(const char *name, enum sim_flavor *out)
{
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(name, names[i])) {
            *out = (enum sim_flavor)i;
            return 0;
        }
    return -1;
}

const char *sim_flavor_name(enum sim_flavor f) { return names[f]; }

void sim_flavor_make_id(enum sim_flavor f, enum sim_endpoint ep, uint64_t r, char *out, size_t cap)
{
    uint64_t r2 = sim_mix64(r ^ 0xa5a5a5a5a5a5a5a5ULL);
    if (f == SIM_FLAVOR_SGLANG) {
        snprintf(out, cap, "%016" PRIx64 "%016" PRIx64, r, r2);
    } else if (f == SIM_FLAVOR_LLAMACPP) {
        static const char an[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        char s[33];
        for (int i = 0; i < 32; i++) {
            s[i] = an[(i < 16 ? r : r2) % 62];
            i < 16 ? (r = sim_mix64(r)) : (r2 = sim_mix64(r2));
        }
        s[32] = '\0';
        snprintf(out, cap, "chatcmpl-%s", s);
    } else {
        snprintf(out, cap, "%s-%016" PRIx64, ep == SIM_EP_CHAT ? "chatcmpl" : "cmpl", r);
    }
}

/* Prints and frees root; NULL when root is NULL or printing fails. The
 * cJSON_Add* helpers accept a NULL parent and return NULL on failure, so a
 * builder needs no check per field: out of memory drops a field at worst. */
static char *print_free(cJSON *root)
{
    char *out = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return out;
}

static cJSON *add_object_to_array(cJSON *arr)
{
    cJSON *o = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static void add_vllm_permission(cJSON *card, int64_t created)
{
    cJSON *p = add_object_to_array(cJSON_AddArrayToObject(card, "permission"));
    char id[40];
    snprintf(id, sizeof id, "modelperm-%016" PRIx64, sim_mix64((uint64_t)created));
    cJSON_AddStringToObject(p, "id", id);
    cJSON_AddStringToObject(p, "object", "model_permission");
    cJSON_AddNumberToObject(p, "created", (double)created);
    cJSON_AddFalseToObject(p, "allow_create_engine");
    cJSON_AddTrueToObject(p, "allow_sampling");
    cJSON_AddTrueToObject(p, "allow_logprobs");
    cJSON_AddFalseToObject(p, "allow_search_indices");
    cJSON_AddTrueToObject(p, "allow_view");
    cJSON_AddFalseToObject(p, "allow_fine_tuning");
    cJSON_AddStringToObject(p, "organization", "*");
    cJSON_AddNullToObject(p, "group");
    cJSON_AddFalseToObject(p, "is_blocking");
}

static void add_llamacpp_meta(cJSON *card, int64_t max_model_len)
{
    cJSON *m = cJSON_AddObjectToObject(card, "meta");
    cJSON_AddNumberToObject(m, "vocab_type", 2);
    cJSON_AddNumberToObject(m, "n_vocab", SIM_TOKEN_ID_LIMIT);
    cJSON_AddNumberToObject(m, "n_ctx_train", (double)max_model_len);
    cJSON_AddNumberToObject(m, "n_embd", 4096);
    cJSON_AddNumberToObject(m, "n_params", 8030261248.0);
    cJSON_AddNumberToObject(m, "size", 16060522496.0);
}

char *sim_flavor_models(enum sim_flavor f, const char *model, int64_t max_model_len,
                        int64_t created)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "object", "list");
    cJSON *card = add_object_to_array(cJSON_AddArrayToObject(root, "data"));
    cJSON_AddStringToObject(card, "id", model);
    cJSON_AddStringToObject(card, "object", "model");
    cJSON_AddNumberToObject(card, "created", (double)created);
    cJSON_AddStringToObject(card, "owned_by", sim_flavor_name(f));
    if (f == SIM_FLAVOR_LLAMACPP) {
        add_llamacpp_meta(card, max_model_len);
        return print_free(root);
    }
    cJSON_AddStringToObject(card, "root", model);
    cJSON_AddNullToObject(card, "parent");
    cJSON_AddNumberToObject(card, "max_model_len", (double)max_model_len);
    if (f == SIM_FLAVOR_VLLM)
        add_vllm_permission(card, created);
    return print_free(root);
}

char *sim_flavor_version(enum sim_flavor f)
{
    if (f != SIM_FLAVOR_ANVIL && f != SIM_FLAVOR_VLLM)
        return NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "version", f == SIM_FLAVOR_VLLM ? SIM_VLLM_VERSION : ANVIL_VERSION);
    if (f == SIM_FLAVOR_ANVIL)
        cJSON_AddStringToObject(root, "server", SIM_SERVER_NAME);
    return print_free(root);
}

static cJSON *id_array(const int64_t *ids, int64_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int64_t i = 0; i < n && arr; i++) {
        cJSON *id = cJSON_CreateNumber((double)ids[i]);
        if (!cJSON_AddItemToArray(arr, id)) {
            cJSON_Delete(id);
            break;
        }
    }
    return arr;
}

/* llama.cpp's with_pieces list: [{"id":N,"piece":"..."}...]. */
static cJSON *piece_array(const int64_t *ids, const char *pieces, int64_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int64_t i = 0; i < n && arr; i++) {
        cJSON *t = add_object_to_array(arr);
        cJSON_AddNumberToObject(t, "id", (double)ids[i]);
        cJSON_AddStringToObject(t, "piece", pieces);
        pieces += strlen(pieces) + 1;
    }
    return arr;
}

static void add_owned(cJSON *root, const char *key, cJSON *item)
{
    if (!cJSON_AddItemToObject(root, key, item))
        cJSON_Delete(item);
}

char *sim_flavor_tokenize(enum sim_flavor f, const int64_t *ids, const char *pieces, int64_t n,
                          int64_t max_model_len)
{
    cJSON *root = cJSON_CreateObject();
    if (f == SIM_FLAVOR_LLAMACPP) {
        add_owned(root, "tokens", pieces ? piece_array(ids, pieces, n) : id_array(ids, n));
        return print_free(root);
    }
    if (f == SIM_FLAVOR_SGLANG) {
        add_owned(root, "tokens", id_array(ids, n));
        cJSON_AddNumberToObject(root, "count", (double)n);
        cJSON_AddNumberToObject(root, "max_model_len", SIM_SGLANG_TOKENIZER_MAX_LEN);
        return print_free(root);
    }
    cJSON_AddNumberToObject(root, "count", (double)n);
    cJSON_AddNumberToObject(root, "max_model_len", (double)max_model_len);
    add_owned(root, "tokens", id_array(ids, n));
    cJSON_AddNullToObject(root, "token_strs");
    return print_free(root);
}

char *sim_flavor_apply_template(const char *prompt)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "prompt", prompt);
    return print_free(root);
}

/* The server-argument fields SGLang repeats at the top level and inside
 * internal_states (an abbreviated, representative subset). */
static void add_sglang_args(cJSON *o, const struct sim_server_facts *s)
{
    cJSON_AddStringToObject(o, "model_path", s->model);
    cJSON_AddStringToObject(o, "tokenizer_path", s->model);
    cJSON_AddStringToObject(o, "served_model_name", s->model);
    cJSON_AddNumberToObject(o, "context_length", (double)s->max_model_len);
    cJSON_AddNumberToObject(o, "max_running_requests", (double)s->max_num_seqs);
    cJSON_AddNumberToObject(o, "chunked_prefill_size", (double)s->max_num_batched_tokens);
    cJSON_AddStringToObject(o, "schedule_policy", "fcfs");
    cJSON_AddNumberToObject(o, "page_size", (double)s->block_size);
    cJSON_AddNumberToObject(o, "tp_size", 1);
    cJSON_AddNumberToObject(o, "stream_interval", 1);
    if (s->num_speculative_tokens > 0) {
        cJSON_AddStringToObject(o, "speculative_algorithm", "EAGLE");
        cJSON_AddNumberToObject(o, "speculative_num_draft_tokens", (double)s->num_speculative_tokens + 1);
    } else {
        cJSON_AddNullToObject(o, "speculative_algorithm");
    }
    cJSON_AddTrueToObject(o, "enable_metrics");
}

char *sim_flavor_server_info(const struct sim_server_facts *s)
{
    cJSON *root = cJSON_CreateObject();
    add_sglang_args(root, s);
    cJSON_AddStringToObject(root, "status", "ready");
    cJSON_AddNumberToObject(root, "max_total_num_tokens", (double)s->kv_cache_tokens);
    cJSON_AddNumberToObject(root, "max_req_input_len", (double)s->max_model_len - 1);
    cJSON *st = add_object_to_array(cJSON_AddArrayToObject(root, "internal_states"));
    add_sglang_args(st, s);
    cJSON_AddNumberToObject(st, "last_gen_throughput", s->gen_throughput);
    cJSON *mem = cJSON_AddObjectToObject(st, "memory_usage");
    cJSON_AddNumberToObject(mem, "token_capacity", (double)s->kv_cache_tokens);
    cJSON_AddNumberToObject(st, "effective_max_running_requests_per_dp", (double)s->max_num_seqs);
    if (s->num_speculative_tokens > 0)
        cJSON_AddNumberToObject(st, "avg_spec_accept_length", s->spec_accept_length);
    cJSON_AddStringToObject(root, "version", SIM_SGLANG_VERSION);
    return print_free(root);
}

char *sim_flavor_props(const struct sim_server_facts *s)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *g = cJSON_AddObjectToObject(root, "default_generation_settings");
    cJSON_AddNumberToObject(g, "id", 0);
    cJSON_AddNumberToObject(g, "n_ctx", (double)s->max_model_len);
    cJSON_AddBoolToObject(g, "speculative", s->num_speculative_tokens > 0);
    cJSON_AddFalseToObject(g, "is_processing");
    cJSON *p = cJSON_AddObjectToObject(g, "params");
    cJSON_AddNumberToObject(p, "n_predict", -1);
    cJSON_AddNumberToObject(p, "temperature", 0.800000011920929);
    cJSON_AddFalseToObject(p, "ignore_eos");
    cJSON_AddTrueToObject(p, "stream");
    cJSON_AddNumberToObject(root, "total_slots", (double)s->max_num_seqs);
    cJSON_AddStringToObject(root, "model_path", s->model);
    cJSON_AddStringToObject(root, "chat_template", "{% for message in messages %}{{'<|im_start|>' + "
                            "message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
                            "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}");
    cJSON_AddStringToObject(root, "bos_token", "<|begin_of_text|>");
    cJSON_AddStringToObject(root, "eos_token", "<|im_end|>");
    cJSON_AddStringToObject(root, "build_info", SIM_LLAMACPP_BUILD);
    return print_free(root);
}

/* llama.cpp's error type names (server/utils.hpp format_error_response). */
static const char *llamacpp_type(int status, const char *param)
{
    if (param && !strcmp(param, "input_tokens"))
        return "exceed_context_size_error";
    switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";   /* not a llama.cpp type: injected faults only */
    case 501: return "not_supported_error";
    case 503: return "unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

const char *sim_flavor_error_type(enum sim_flavor f, int status, const char *type, const char *param)
{
    return f == SIM_FLAVOR_LLAMACPP ? llamacpp_type(status, param) : type;
}

char *sim_flavor_error(enum sim_flavor f, const struct sim_error *err)
{
    cJSON *root = cJSON_CreateObject();
    if (f == SIM_FLAVOR_LLAMACPP) {
        cJSON *e = cJSON_AddObjectToObject(root, "error");
        cJSON_AddNumberToObject(e, "code", err->status);
        cJSON_AddStringToObject(e, "message", err->message);
        cJSON_AddStringToObject(e, "type", llamacpp_type(err->status, err->param));
        return print_free(root);
    }
    cJSON *e = root;
    if (f == SIM_FLAVOR_SGLANG)
        cJSON_AddStringToObject(e, "object", "error");
    else
        e = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(e, "message", err->message);
    cJSON_AddStringToObject(e, "type", err->type);
    if (err->param && f != SIM_FLAVOR_SGLANG)
        cJSON_AddStringToObject(e, "param", err->param);
    else
        cJSON_AddNullToObject(e, "param");
    cJSON_AddNumberToObject(e, "code", err->status);
    return print_free(root);
}

char *sim_flavor_not_found(enum sim_flavor f, const char *path)
{
    if (f == SIM_FLAVOR_SGLANG) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "detail", "Not Found");
        return print_free(root);
    }
    struct sim_error err = {.status = 404, .type = "NotFoundError"};
    snprintf(err.message, sizeof err.message, f == SIM_FLAVOR_LLAMACPP ? "File Not Found" : "Not Found: %s",
             path);
    return sim_flavor_error(f, &err);
}

void sim_flavor_context_message(enum sim_flavor f, int64_t max_model_len, int64_t prompt_tokens,
                                int64_t max_tokens, char *msg, size_t cap)
{
    long long m = max_model_len, p = prompt_tokens, k = max_tokens;
    switch (f) {
    case SIM_FLAVOR_VLLM:
        snprintf(msg, cap, "This model's maximum context length is %lld tokens. However, you "
                 "requested %lld output tokens and your prompt contains at least %lld input "
                 "tokens, for a total of at least %lld tokens. Please reduce the length of the "
                 "input prompt or the number of requested output tokens. (parameter=input_tokens, "
                 "value=%lld)", m, k, p, p + k, p);
        break;
    case SIM_FLAVOR_SGLANG:
        snprintf(msg, cap, "The input (%lld tokens) is longer than the model's context length "
                 "(%lld tokens).", p + k, m);
        break;
    case SIM_FLAVOR_LLAMACPP:
        snprintf(msg, cap, "the request exceeds the available context size, try increasing it");
        break;
    default:
        sim_check_context(max_model_len, prompt_tokens, max_tokens, msg, cap);
    }
}
