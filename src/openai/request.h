/* request.h — OpenAI-compatible request bodies. */
#ifndef ANVIL_OPENAI_REQUEST_H
#define ANVIL_OPENAI_REQUEST_H

#include <stdbool.h>

#include <cjson/cJSON.h>

enum endpoint { EP_CHAT, EP_COMPLETIONS };

/* Parses "chat" or "completions". Returns 0, or -1. */
int endpoint_parse(const char *s, enum endpoint *out);

/* Path below the base URL: "/chat/completions" or "/completions". */
const char *endpoint_path(enum endpoint ep);

/* Name as written in artifacts: "chat" or "completions". */
const char *endpoint_name(enum endpoint ep);

struct request_opts {
    enum endpoint endpoint;
    const char *model;
    long max_tokens;        /* tokens */
    bool stream;
    bool ignore_eos;        /* vLLM/SGLang/llama.cpp extension: force max_tokens output tokens */
    bool continuous_usage;  /* stream_options.continuous_usage_stats (vLLM, SGLang) */
    struct sampling {       /* sent only when has_* is set: else the server's defaults */
        bool has_temperature, has_top_p, has_top_k;
        double temperature, top_p;
        long top_k;         /* vLLM, SGLang and llama.cpp extension */
    } sampling;
    const cJSON *tools;     /* chat: the "tools" array offered to the model, or NULL; not owned */
    const cJSON *tool_choice;   /* chat, with tools: "tool_choice" as given, or NULL; not owned */
    const char *const *image_urls;  /* chat: images sent after the prompt's text, as
                                       {"type": "image_url", "image_url": {"url": ...}} parts (data:
                                       URLs or links); not owned */
    int n_images;
    const cJSON *extra_body;/* an object whose keys are added to every body last, replacing
                               anvil's own of the same name (vLLM's --extra-body); not owned */
};

/* Builds the JSON body for one request with the given prompt text (a single
 * user message for chat; with images, its content is the text part and then
 * an image_url part per image). Streaming bodies ask for usage
 * (stream_options.include_usage). Returns a malloc'd NUL-terminated string
 * the caller frees, or NULL when memory runs out. */
char *request_body(const struct request_opts *o, const char *prompt);

/* As request_body, with a whole chat history (an array of {"role",
 * "content"} objects, not owned) instead of one user message; for the
 * completions endpoint the contents are joined with newlines into the
 * prompt. Returns a malloc'd string or NULL. */
char *request_body_messages(const struct request_opts *o, const cJSON *messages);

#endif
