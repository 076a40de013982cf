/* discover.h — what the server under test says about itself: served models,
 * context length, engine; and how many tokens it counts in a prompt. */
#ifndef ANVIL_OPENAI_DISCOVER_H
#define ANVIL_OPENAI_DISCOVER_H

#include <stdbool.h>

#include <curl/curl.h>

#include "openai/request.h"

struct server_info {
    char base_url[512];     /* OpenAI base, e.g. http://h:8000/v1 (no trailing '/') */
    char display_url[512];  /* base_url without user:password@, for artifacts and messages */
    char root_url[512];     /* base without its trailing /v1: where /tokenize, /metrics, /version live */
    char model[256];        /* the model benchmarked */
    long max_model_len;     /* tokens, from /models; -1 when not reported */
    char engine[32];        /* "vllm", "sglang", "llama.cpp", "anvil-sim" or "unknown" */
    char engine_version[64];/* "" when unknown */
};

/* Fills *out from GET {base}/models and GET {root}/version, each bounded by
 * timeout_ms. want_model NULL takes the first served model; otherwise it
 * must be listed. Returns 0, or
 * -1 with a one-line message in err (server unreachable, bad reply, model not
 * served). headers carries auth; not owned. */
int discover(const char *base_url, const struct curl_slist *headers, const char *want_model,
             long timeout_ms, struct server_info *out, char *err, size_t errlen);

/* Counts prompt tokens as the server would for a request on endpoint ep with
 * this prompt: POST {root}/tokenize (vLLM's shape, with the chat template for
 * chat) when tokenize is true, else a non-streaming probe request with
 * max_tokens 1 whose usage.prompt_tokens is read; bounded by timeout_ms.
 * Returns the count, or -1 with a message in err. */
long server_count_tokens(const struct server_info *s, const struct curl_slist *headers,
                         enum endpoint ep, bool tokenize, const char *prompt, long timeout_ms,
                         char *err, size_t errlen);

#endif
