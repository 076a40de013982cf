/* flavor.h — which server the simulator impersonates (--flavor) and the
 * JSON bodies that differ between them: /v1/models, /version, SGLang's
 * /server_info, llama.cpp's /props, /tokenize, and error objects. Shapes
 * follow the recorded and reconstructed transcripts in
 * tests/data/fixtures/{vllm,sglang,llamacpp}/ (see docs/SIM.md). The SSE
 * events are in reply.h. */
#ifndef ANVIL_SIM_FLAVOR_H
#define ANVIL_SIM_FLAVOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/request.h"

enum sim_flavor {
    SIM_FLAVOR_ANVIL,     /* default: vLLM's shapes, owned_by "anvil", /version names "anvil-sim" */
    SIM_FLAVOR_VLLM,      /* vLLM v0.21 */
    SIM_FLAVOR_SGLANG,    /* SGLang v0.5.12 (msgspec SSE path) */
    SIM_FLAVOR_LLAMACPP,  /* llama.cpp llama-server */
};

#define SIM_VLLM_VERSION "0.21.0"
#define SIM_SGLANG_VERSION "0.5.12"
#define SIM_LLAMACPP_BUILD "b0-unknown"
#define SIM_SGLANG_TOKENIZER_MAX_LEN 131072  /* the tokenizer's model_max_length SGLang's tokenize reports */
#define SIM_TOKEN_ID_EOS 3   /* the EOS id SGLang's matched_stop reports (= message end) */

/* Parses "vllm", "sglang", "llamacpp" (or "anvil"). Returns 0 or -1. */
int sim_flavor_parse(const char *name, enum sim_flavor *out);

/* "anvil", "vllm", "sglang", "llamacpp": /v1/models owned_by. Static. */
const char *sim_flavor_name(enum sim_flavor f);

/* Writes a response id as the flavor makes them from random bits r:
 * vLLM "chatcmpl-"/"cmpl-" + 16 hex, SGLang 32 bare hex, llama.cpp
 * "chatcmpl-" + 32 alphanumerics (also for completions). cap >= 48. */
void sim_flavor_make_id(enum sim_flavor f, enum sim_endpoint ep, uint64_t r, char *out, size_t cap);

/* GET /v1/models for model (context max_model_len tokens) at unix time
 * created: vLLM adds "permission", llama.cpp a "meta" block and no
 * root/parent. Returns a malloc'd string (cJSON_free) or NULL. */
char *sim_flavor_models(enum sim_flavor f, const char *model, int64_t max_model_len,
                        int64_t created);

/* GET /version: anvil {"version":ANVIL_VERSION,"server":"anvil-sim"}, vLLM
 * {"version":"0.21.0"}. NULL for flavors without the route (caller 404s). */
char *sim_flavor_version(enum sim_flavor f);

/* POST /tokenize (SGLang /v1/tokenize) reply for the n ids: vLLM
 * {count,max_model_len,tokens,token_strs}; SGLang {tokens,count,
 * max_model_len} with the tokenizer's nominal SIM_SGLANG_TOKENIZER_MAX_LEN,
 * not the server's context (tokenize.txt); llama.cpp {"tokens":[ids]}, or
 * with pieces (n NUL-terminated texts back to back; NULL for none)
 * {"tokens":[{"id","piece"}]}. max_model_len in tokens. Returns a malloc'd
 * string (cJSON_free) or NULL. */
char *sim_flavor_tokenize(enum sim_flavor f, const int64_t *ids, const char *pieces, int64_t n,
                          int64_t max_model_len);

/* llama.cpp POST /apply-template reply {"prompt": prompt}. malloc'd
 * (cJSON_free) or NULL. */
char *sim_flavor_apply_template(const char *prompt);

/* The error "type" the flavor's server names: llama.cpp's own names
 * (exceed_context_size_error for param "input_tokens", server_error, ...)
 * from status; the others' type as given. Static. */
const char *sim_flavor_error_type(enum sim_flavor f, int status, const char *type, const char *param);

/* What SGLang's /server_info and llama.cpp's /props report. */
struct sim_server_facts {
    const char *model;
    int64_t max_model_len;          /* tokens */
    int64_t max_num_seqs;           /* SGLang max_running_requests, llama.cpp total_slots */
    int64_t max_num_batched_tokens; /* SGLang chunked_prefill_size */
    int64_t kv_cache_tokens;        /* SGLang max_total_num_tokens */
    int64_t block_size;             /* SGLang page_size */
    int64_t num_speculative_tokens;
    double gen_throughput;          /* tok/s, last_gen_throughput */
    double spec_accept_length;      /* mean tokens per decode step */
};

/* SGLang GET /server_info (alias /get_server_info). malloc'd (cJSON_free) or NULL. */
char *sim_flavor_server_info(const struct sim_server_facts *s);

/* llama.cpp GET /props. malloc'd (cJSON_free) or NULL. */
char *sim_flavor_props(const struct sim_server_facts *s);

/* The flavor's error body for err: vLLM {"error":{message,type,param,code}},
 * SGLang flat {"object":"error",message,type,param,code}, llama.cpp
 * {"error":{code,message,type}} with its type names. malloc'd or NULL. */
char *sim_flavor_error(enum sim_flavor f, const struct sim_error *err);

/* The body of a 404 for an unknown path: SGLang {"detail":"Not Found"},
 * else the error object. malloc'd or NULL. */
char *sim_flavor_not_found(enum sim_flavor f, const char *path);

/* The context-overflow message of the flavor into msg (cap bytes). */
void sim_flavor_context_message(enum sim_flavor f, int64_t max_model_len, int64_t prompt_tokens,
                                int64_t max_tokens, char *msg, size_t cap);

#endif
