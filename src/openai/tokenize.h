/* tokenize.h — the replies of each engine's tokenize endpoint, as
 * server_count_tokens (discover.h) reads them. Pure functions of the parsed
 * reply, so tests feed them the recorded bytes (tests/data/fixtures/).
 *
 *   engine      request                                         reply
 *   vLLM        POST /tokenize {model, prompt} or                {count, max_model_len, tokens, token_strs}
 *   (anvil-sim)   {model, messages, add_generation_prompt}
 *   SGLang      POST /v1/tokenize {model, prompt,                {tokens, count, max_model_len}
 *                 add_special_tokens} (/tokenize on some builds)
 *   llama.cpp   POST /apply-template {messages}                  {prompt}
 *               POST /tokenize {content, add_special,            {tokens: [id...]} or, with_pieces,
 *                 parse_special}                                   {tokens: [{id, piece}...]}
 *   TGI         POST /tokenize {inputs}                          [{id, text, start, stop}...]
 *               POST /chat_tokenize {model, messages}            {tokenize_response: [...], templated_text}
 *
 * TGI's shapes are from its router source and docs (router/src/server.rs,
 * lib.rs: TokenizeResponse(Vec<SimpleToken>), ChatTokenizeResponse); no TGI
 * exchange is recorded. */
#ifndef ANVIL_OPENAI_TOKENIZE_H
#define ANVIL_OPENAI_TOKENIZE_H

#include <cjson/cJSON.h>

#include "openai/discover.h"

/* The token count in engine e's tokenize reply (not owned) for a request on
 * endpoint ep (TGI answers chat at /chat_tokenize in another shape).
 * Returns the count (>= 0), or -1 when the reply is not in e's shape. */
long tokenize_reply_count(enum server_engine e, enum endpoint ep, const cJSON *reply);

/* The token ids in engine e's tokenize reply (not owned), as a malloc'd
 * array of *n ids the caller frees; NULL when the reply lists none (vLLM's
 * and SGLang's "tokens", llama.cpp's ids or {id, piece}, TGI's {id, ...}). */
long *tokenize_reply_ids(enum server_engine e, enum endpoint ep, const cJSON *reply, long *n);

/* What the reply lacks, for the error message when tokenize_reply_count
 * returned -1: e.g. "no \"count\"". Static string. */
const char *tokenize_reply_expected(enum server_engine e, enum endpoint ep);

/* llama.cpp's /apply-template reply: the templated prompt (borrowed from
 * reply), or NULL when it has none. */
const char *tokenize_templated_prompt(const cJSON *reply);

#endif
