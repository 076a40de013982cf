/* request.h — parsing and validating request bodies of the simulator's
 * token-consuming endpoints (/v1/completions, /v1/chat/completions,
 * /tokenize). Pure functions of the body: no I/O, no clock. */
#ifndef ANVIL_SIM_REQUEST_H
#define ANVIL_SIM_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

enum sim_endpoint {
    SIM_EP_COMPLETIONS,   /* POST /v1/completions: "prompt" */
    SIM_EP_CHAT,          /* POST /v1/chat/completions: "messages" */
    SIM_EP_TOKENIZE,      /* POST /tokenize: "prompt" or "messages" */
};

#define SIM_DEFAULT_MAX_TOKENS 16

/* What the server serves, for validation. */
struct sim_limits {
    const char *model;       /* the served model name */
    int64_t max_model_len;   /* context window, tokens */
    int flavor;              /* enum sim_flavor: the context-overflow message's wording */
    bool any_model;          /* serve whatever "model" names (SGLang, llama.cpp do) */
    bool want_ids;           /* fill token_ids for generation requests too (prefix caching) */
    int tokenizer;           /* enum sim_tokenizer */
    bool context_shift;      /* a prompt over the context is truncated as llama.cpp's
                                --context-shift does, not rejected */
};

/* A validated request. */
struct sim_request {
    enum sim_endpoint ep;
    bool chat_form;            /* prompt came from "messages" (chat template applied) */
    int64_t prompt_tokens;     /* what usage.prompt_tokens and /tokenize's count report */
    uint64_t prompt_hash;      /* FNV-1a of the prompt (roles and contents for chat) */
    int64_t max_tokens;        /* >= 1; SIM_DEFAULT_MAX_TOKENS when absent */
    bool stream;
    bool include_usage;        /* stream_options.include_usage */
    bool continuous_usage;     /* stream_options.continuous_usage_stats AND include_usage (vLLM) */
    bool ignore_eos;
    double temperature;        /* >= 0; 1.0 when absent (vLLM's default) */
    bool has_seed;
    int64_t seed;              /* the request's "seed", when has_seed */
    int64_t *token_ids;        /* SIM_EP_TOKENIZE or want_ids: prompt_tokens ids, owned (sim_request_free) */
    bool with_pieces;          /* llama.cpp /tokenize: list each token's text */
    char *pieces;              /* with_pieces: prompt_tokens NUL-terminated texts back to back, owned; or NULL */
    bool over_context;         /* llama.cpp stream beyond the context: fails inside the 200 stream */
    char model_name[256];      /* the request's "model" ("" when absent), truncated: SGLang echoes it */
    char tool_name[65];        /* chat with "tools" and a tool_choice other than "none": the function
                                  the reply calls (tool_choice's, else the first tool's); "" = none */
};

/* An error reply: HTTP status and the OpenAI/vLLM error object fields. */
struct sim_error {
    int status;              /* 400 or 404 */
    const char *type;        /* "BadRequestError" or "NotFoundError" (static) */
    const char *param;       /* offending field, or NULL for JSON null (static) */
    char message[1024];      /* human-readable, NUL-terminated */
};

/* Parses and validates len bytes of a JSON body for endpoint ep. On success
 * fills *rq (which then owns token_ids; release with sim_request_free) and
 * returns 0. On failure fills *err and returns -1; *rq holds nothing to free.
 * Rules: "model" absent/null means the served model, another name is a 404
 * (unless lim->any_model); /tokenize reads the body as lim->flavor's server
 * does (vLLM and anvil: "prompt" or "messages"; SGLang: "prompt"; llama.cpp:
 * "content", add_special, parse_special, with_pieces); invalid JSON, a
 * missing or mistyped prompt/messages or parameter, or prompt_tokens +
 * max_tokens > max_model_len are 400s (the last with param "input_tokens",
 * worded as lim->flavor's server words it, not checked for /tokenize) —
 * except a llama.cpp stream, which parses with rq->over_context set — and
 * unless lim->context_shift: then the prompt loses whole blocks of half the
 * room left for it (max_model_len − max_tokens) after its first token, as
 * llama.cpp truncates with n_keep 0, and prompt_tokens and token_ids are
 * what is kept. A chat request's "tools" (an array of {"type": "function",
 * "function": {"name": ...}}, names of 1-64 letters, digits, '_' or '-') are
 * rendered before the messages as their unformatted JSON text, so they
 * count as prompt tokens (and prefix) as a template's tool schema does;
 * "tool_choice" "auto", "required", "none" or {"type": "function",
 * "function": {"name": one of them}} picks rq->tool_name; anything else is
 * a 400 naming the field. */
int sim_request_parse(const char *body, size_t len, enum sim_endpoint ep,
                      const struct sim_limits *lim, struct sim_request *rq,
                      struct sim_error *err);

/* The seed that enters the output hash: the request's seed when sampling
 * (temperature > 0) and one was given, else 0 (greedy output ignores seeds). */
uint64_t sim_request_seed(const struct sim_request *rq);

/* Renders a llama.cpp /apply-template body's "messages" (validated as a
 * chat request's) with the chat template /props reports (ChatML):
 * "<|im_start|>ROLE\nCONTENT<|im_end|>\n" per message, text parts joined by
 * "\n", then "<|im_start|>assistant\n" unless add_generation_prompt is
 * false. Appends it to *out. Returns 0, or -1 with *err set. */
int sim_request_apply_template(const char *body, size_t len, struct buf *out, struct sim_error *err);

/* Frees what *rq owns (token_ids, pieces); *rq may be reused. NULL-safe. */
void sim_request_free(struct sim_request *rq);

#endif
