/* discover.h — what the server under test says about itself: served models,
 * context length, engine and its version; and how many tokens it counts in
 * a prompt (tokenize.c). */
#ifndef ANVIL_OPENAI_DISCOVER_H
#define ANVIL_OPENAI_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>
#include <cjson/cJSON.h>

#include "openai/request.h"

/* The server software, detected once by discover(). Decides which endpoint
 * reports the version and which tokenize shape the server speaks. */
enum server_engine {
    ENGINE_UNKNOWN,
    ENGINE_VLLM,        /* owned_by "vllm"; GET /version */
    ENGINE_SGLANG,      /* owned_by "sglang"; GET /server_info (older /get_server_info) */
    ENGINE_LLAMACPP,    /* owned_by "llamacpp"; GET /props build_info */
    ENGINE_TGI,         /* GET /info with router "text-generation-router" */
    ENGINE_ANVIL_SIM,   /* GET /version with "server":"anvil-sim" (vLLM's shapes) */
};

struct server_info {
    char base_url[512];     /* OpenAI base, e.g. http://h:8000/v1 (no trailing '/') */
    char display_url[512];  /* base_url without user:password@, for artifacts and messages */
    char root_url[512];     /* base without its trailing /v1: where /tokenize, /metrics, /version live */
    char model[256];        /* the model benchmarked */
    long max_model_len;     /* tokens, from /models; -1 when not reported */
    long context_len;       /* tokens one request (prompt + output) may take, from the engine's own
                               figure (see server_context_from_reply); -1 when no endpoint says */
    char context_source[64];/* where context_len was read, e.g. "/props default_generation_settings.n_ctx" */
    long max_input_len;     /* tokens a prompt alone may take where the engine says so apart (SGLang
                               max_req_input_len, TGI max_input_tokens); -1 when not said */
    char max_input_source[64];  /* where max_input_len was read */
    char engine[32];        /* "vllm", "sglang", "llama.cpp", "tgi", "anvil-sim" or "unknown" */
    char engine_version[64];/* from the engine's own endpoint (see enum server_engine); "" when unknown */
    enum server_engine engine_id;  /* the same engine, for dispatch */
    char owned_by[64];      /* the model card's owned_by as served ("" when absent), for messages */
};

/* Fills *out from GET {base}/models and the detected engine's version
 * endpoint (enum server_engine; a server whose owned_by names no known
 * engine is asked GET {root}/version, then GET {root}/info), each bounded by
 * timeout_ms. want_model NULL takes the first served model; otherwise it
 * must be listed. Returns 0, or -1 with a one-line message in err (server
 * unreachable, bad reply, model not served); a missing version is not an
 * error. headers carries auth; not owned. */
int discover(const char *base_url, const struct curl_slist *headers, const char *want_model,
             long timeout_ms, struct server_info *out, char *err, size_t errlen);

/* The engine's version from the reply of its version endpoint (parsed
 * JSON, not owned): vLLM/anvil-sim/SGLang/TGI "version", llama.cpp
 * "build_info". Writes it into out (cap bytes) and returns 0, or returns -1
 * (out untouched) when the reply has none. */
int server_version_from_reply(enum server_engine e, const cJSON *reply, char *out, size_t cap);

/* Reads the per-request context from an engine's reply into s: llama.cpp
 * GET /props default_generation_settings.n_ctx (per slot: the server's
 * context divided among its slots), SGLang GET /server_info context_length
 * (when /models gave no max_model_len) and max_req_input_len (exclusive:
 * max_input_len is one less), TGI GET /info
 * max_total_tokens and max_input_tokens (older: max_input_length). A field
 * absent, null or not a positive number leaves s untouched. Returns the
 * number of fields taken (0 or more). reply is parsed JSON, not owned. */
int server_context_from_reply(enum server_engine e, const cJSON *reply, struct server_info *s);

/* Whether a request with a prompt of prompt tokens and max_tokens output
 * tokens fits s's context (context_len, max_input_len; unknown limits pass).
 * Returns 0, or -1 with a one-line message in err naming the prompt, the
 * output, the limit and the field it came from. */
int server_check_fit(const struct server_info *s, long prompt, long max_tokens, char *err, size_t errlen);

/* The longest prompt a request asking for one output token may have on s
 * (the smaller of context_len − 1 and max_input_len), or -1 when neither
 * is known. */
long server_prompt_limit(const struct server_info *s);

/* GETs (body NULL) or POSTs body (JSON) to url, bounded by timeout_ms, and
 * parses the reply. Returns the parsed value (caller cJSON_Deletes) or NULL
 * with a one-line message in err naming the URL without credentials;
 * *status receives the HTTP status (0 when no response arrived). headers is
 * not owned. */
cJSON *server_fetch_json(const char *url, const struct curl_slist *headers, const char *body,
                         long timeout_ms, long *status, char *err, size_t errlen);

/* Whether server s is an engine known to accept
 * stream_options.continuous_usage_stats (vLLM, SGLang, anvil-sim), which
 * anvil then asks for by default. */
bool server_accepts_continuous_usage(const struct server_info *s);

/* Whether anvil knows how server s counts the tokens of a prompt for
 * endpoint ep without generating (its tokenize endpoint): vLLM, SGLang,
 * llama.cpp, TGI and anvil-sim do; any other server has to be probed. */
bool server_tokenize_supported(const struct server_info *s, enum endpoint ep);

/* The token ids the server gives for a request on ep with this prompt
 * (chat template included), through the engine's tokenize endpoint as
 * server_count_tokens asks it: a malloc'd array of *n ids the caller frees,
 * or NULL with a message in err (unreachable, or an engine whose tokenize
 * gives no ids for ep: SGLang's chat, unknown engines). */
long *server_tokenize_ids(const struct server_info *s, const struct curl_slist *headers,
                          enum endpoint ep, const char *prompt, long timeout_ms, long *n,
                          char *err, size_t errlen);

/* A probe: the usage.prompt_tokens of a non-streaming request with this
 * prompt and max_tokens 1, built from o (endpoint, tools and tool_choice,
 * sampling, extra_body; model, max_tokens and streaming are the probe's),
 * so what the template adds for tools is counted. Returns the count, or -1
 * with a message in err. */
long server_probe_tokens(const struct server_info *s, const struct curl_slist *headers,
                         const struct request_opts *o, const char *prompt, long timeout_ms,
                         char *err, size_t errlen);

/* Counts prompt tokens as the server would for a request on endpoint ep with
 * this prompt, bounded by timeout_ms per HTTP call. tokenize true: through
 * the engine's own tokenize endpoint (tokenize.h: vLLM POST /tokenize,
 * SGLang /v1/tokenize, llama.cpp /apply-template + /tokenize, TGI /tokenize
 * or /chat_tokenize), including the chat template for chat; an engine
 * without one (server_tokenize_supported false) is an error naming it.
 * tokenize false: a non-streaming probe request with max_tokens 1 whose
 * usage.prompt_tokens is read. Returns the count, or -1 with a message in
 * err. */
long server_count_tokens(const struct server_info *s, const struct curl_slist *headers,
                         enum endpoint ep, bool tokenize, const char *prompt, long timeout_ms,
                         char *err, size_t errlen);

/* Counts the tokens of generated text as the engine's tokenizer does, with
 * no special tokens added (vLLM and anvil-sim POST /tokenize, SGLang
 * /v1/tokenize with add_special_tokens false; llama.cpp /tokenize with
 * add_special false and parse_special true; TGI /tokenize). esc (len bytes)
 * is the text as JSON string contents, already escaped (chunk_text_append),
 * and is sent as it is. Bounded by timeout_ms. Returns the count, or -1 with
 * a message in err (an unknown engine, unreachable, a reply not in the
 * engine's shape). */
long server_count_output_tokens(const struct server_info *s, const struct curl_slist *headers,
                                const char *esc, size_t len, long timeout_ms, char *err, size_t errlen);

#endif
