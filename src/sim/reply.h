/* reply.h — the bytes the simulator answers with: vLLM-shaped SSE events for
 * streams (built with printf on the hot path, one event per call) and JSON
 * bodies for everything else (built with cJSON). Field order follows vLLM
 * v0.21 (see /work/shared/fixtures/vllm/ and docs/SIM.md). */
#ifndef ANVIL_SIM_REPLY_H
#define ANVIL_SIM_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "sim/request.h"

#ifndef ANVIL_VERSION
#define ANVIL_VERSION "0.1.0"
#endif
#define SIM_SERVER_NAME "anvil-sim"
#define SIM_FINGERPRINT "anvil-sim-" ANVIL_VERSION   /* vLLM's system_fingerprint slot */

/* What every event of one stream shares. The caller owns the strings. */
struct sim_stream_fmt {
    enum sim_endpoint ep;     /* SIM_EP_COMPLETIONS or SIM_EP_CHAT */
    const char *head;         /* from sim_sse_head_new */
    int64_t prompt_tokens;
    bool include_usage;       /* a usage-only chunk ends the stream */
    bool continuous_usage;    /* running usage on every chunk */
};

/* Returns the common start of every event of one stream, malloc'd (free()):
 * 'data: {"id":"<id>","object":"...","created":<created>,"model":<model_json>,'
 * where model_json is the model name already JSON-quoted (sim_json_quote) and
 * created is in unix seconds. NULL when out of memory. */
char *sim_sse_head_new(enum sim_endpoint ep, const char *id, int64_t created,
                       const char *model_json);

/* Appends chat's first event: delta {"role":"assistant","content":""}.
 * Returns 0, or -1 when b is full (b's cap) or out of memory. */
int sim_sse_role(struct buf *b, const struct sim_stream_fmt *f);

/* Appends one content event carrying text (plain ASCII, no JSON escaping is
 * done) as delta.content (chat) or text (completions). generated = completion
 * tokens sent including this one (for continuous usage). finish is
 * "length"/"stop" on the last content event, else NULL. Returns 0 or -1. */
int sim_sse_token(struct buf *b, const struct sim_stream_fmt *f, const char *text,
                  int64_t generated, const char *finish);

/* Appends the usage-only event ("choices":[]) for completion_tokens tokens.
 * Returns 0 or -1. */
int sim_sse_usage(struct buf *b, const struct sim_stream_fmt *f, int64_t completion_tokens);

/* Appends "data: [DONE]\n\n". Returns 0 or -1. */
int sim_sse_done(struct buf *b);

/* Returns s as a JSON string literal with quotes, malloc'd (cJSON_free), or
 * NULL when out of memory. */
char *sim_json_quote(const char *s);

/* The non-streaming reply body (chat.completion or text_completion) with
 * text, finish reason and usage. Returns a malloc'd string (cJSON_free) or
 * NULL when out of memory. created is unix seconds. */
char *sim_json_completion(enum sim_endpoint ep, const char *id, int64_t created,
                          const char *model, const char *text, const char *finish,
                          int64_t prompt_tokens, int64_t completion_tokens);

/* {"error":{"message","type","param","code"}} for err. Returns a malloc'd
 * string (cJSON_free) or NULL when out of memory. */
char *sim_json_error(const struct sim_error *err);

/* GET /v1/models body for model with context max_model_len (tokens) at unix
 * time created. Returns a malloc'd string (cJSON_free) or NULL. */
char *sim_json_models(const char *model, int64_t max_model_len, int64_t created);

/* POST /tokenize body: count, max_model_len, the n ids, token_strs null.
 * Returns a malloc'd string (cJSON_free) or NULL. */
char *sim_json_tokenize(const int64_t *ids, int64_t n, int64_t max_model_len);

/* GET /version body: {"version":ANVIL_VERSION,"server":"anvil-sim"}.
 * Returns a malloc'd string (cJSON_free) or NULL. */
char *sim_json_version(void);

#endif
