/* reply.h — the bytes the simulator answers generation requests with: SSE
 * events for streams (built with printf on the hot path, one event per
 * call) and JSON bodies for non-streamed replies (cJSON), in the shape of
 * the server --flavor names. Field order follows the fixtures in
 * tests/data/fixtures/ (vLLM v0.21, SGLang v0.5.12, llama.cpp); see
 * docs/SIM.md for each flavor's stream. */
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

enum sim_flavor;

/* llama.cpp's per-reply "timings" object (ms are server truth). */
struct sim_timings {
    int64_t prompt_n;       /* prompt tokens computed */
    double prompt_ms;       /* arrival to first token */
    int64_t predicted_n;    /* output tokens */
    double predicted_ms;    /* first token to last */
};

/* What every event of one stream shares. Built by sim_stream_fmt_init,
 * freed by sim_stream_fmt_free; the strings passed in are borrowed and must
 * outlive it. */
struct sim_stream_fmt {
    enum sim_endpoint ep;      /* SIM_EP_COMPLETIONS or SIM_EP_CHAT */
    int flavor;                /* enum sim_flavor */
    const char *id;            /* response id (sim_flavor_make_id) */
    const char *model_json;    /* model name, JSON-quoted */
    int64_t created;           /* unix s (SGLang re-stamps per event) */
    char *head;                /* owned: the event's opening, up to "choices" */
    char *tail;                /* owned: what closes an event after choices/usage */
    size_t head_len, tail_len; /* their lengths (set by sim_stream_fmt_init: not measured per event) */
    int64_t prompt_tokens;
    int64_t cached_tokens;     /* >= 0: usage.prompt_tokens_details.cached_tokens; -1: no details */
    int64_t reasoning_tokens;  /* reply tokens streamed as reasoning (SGLang usage) */
    bool include_usage;        /* a usage-only chunk ends the stream */
    bool continuous_usage;     /* running usage on every chunk (vLLM) */
    const char *tool_name;     /* chat with tools: the function the reply calls (its output is the
                                  call's arguments); NULL = an ordinary reply */
};

/* Prepares f (fields above set by the caller except head/tail and their lengths). Returns 0,
 * or -1 when out of memory. */
int sim_stream_fmt_init(struct sim_stream_fmt *f);

/* Frees head and tail. */
void sim_stream_fmt_free(struct sim_stream_fmt *f);

/* Flavor facts the generation code needs: whether a chat stream opens with
 * a role-only chunk (vLLM, SGLang), whether finish_reason travels in its own
 * chunk after the last token (SGLang chat, llama.cpp), and whether a
 * usage-only chunk exists (not llama.cpp: usage rides on the final chunk). */
bool sim_fmt_has_role_chunk(const struct sim_stream_fmt *f);
bool sim_fmt_finish_separate(const struct sim_stream_fmt *f);
bool sim_fmt_has_usage_chunk(const struct sim_stream_fmt *f);

/* Appends chat's first event: delta role "assistant", content "". Returns
 * 0, or -1 when b is full or out of memory (so do all below). */
int sim_sse_role(struct buf *b, const struct sim_stream_fmt *f);

/* Appends one event carrying output text: reasoning (NULL for none) and
 * content (NULL for none; plain ASCII, not escaped). generated = completion
 * tokens sent including these (continuous usage). finish is "length"/"stop"
 * on the last event when the flavor puts it there, else NULL. */
int sim_sse_delta(struct buf *b, const struct sim_stream_fmt *f, const char *reasoning,
                  const char *content, int64_t generated, const char *finish);

/* Appends one event of a tool-call reply (chat with "tools"): the output
 * text args (plain ASCII, not escaped) as a fragment of the call's
 * function.arguments. opens: the call's first delta, which also carries its
 * id ("call_" and the reply's id), type and f->tool_name, as vLLM, SGLang
 * (pydantic shape, role/content/reasoning_content null) and llama.cpp send
 * it. generated and finish as for sim_sse_delta; finish "stop" becomes
 * "tool_calls". */
int sim_sse_tool_delta(struct buf *b, const struct sim_stream_fmt *f, const char *args, bool opens,
                       int64_t generated, const char *finish);

/* The finish reason a reply reports: a tool-call reply's "stop" is
 * "tool_calls"; anything else as it is. */
const char *sim_fmt_finish_reason(const struct sim_stream_fmt *f, const char *finish);

/* Appends the separate finish event (SGLang: empty delta, matched_stop;
 * llama.cpp: empty delta/text plus usage and timings t). */
int sim_sse_finish(struct buf *b, const struct sim_stream_fmt *f, const char *finish,
                   int64_t completion_tokens, const struct sim_timings *t);

/* Appends the usage-only event ("choices":[]) for completion_tokens. */
int sim_sse_usage(struct buf *b, const struct sim_stream_fmt *f, int64_t completion_tokens);

/* Appends an error event inside a 200 stream, as the flavor's server writes
 * one: vLLM data: {"error": {message, type, param, code}} and SGLang the
 * same with "object": "error" (Python's json.dumps spacing); llama.cpp an
 * SSE line of field "error" (not "data"): error: {"code","message","type"},
 * type being its own name (sim_flavor_error_type). message is plain ASCII
 * without quotes or backslashes. A [DONE] follows in every flavor. */
int sim_sse_error(struct buf *b, const struct sim_stream_fmt *f, int status, const char *type,
                  const char *message);

/* Appends "data: [DONE]\n\n". */
int sim_sse_done(struct buf *b);

/* Returns s as a JSON string literal with quotes, malloc'd (cJSON_free), or
 * NULL when out of memory. */
char *sim_json_quote(const char *s);

/* A non-streamed reply. Strings are borrowed. */
struct sim_body {
    enum sim_endpoint ep;
    int flavor;                 /* enum sim_flavor */
    const char *id;
    int64_t created;            /* unix s */
    const char *model;
    const char *reasoning;      /* reasoning text, or NULL when the reply has none */
    const char *content;
    const char *finish;         /* "stop" or "length" */
    int64_t prompt_tokens, completion_tokens;
    int64_t cached_tokens;      /* -1: no prompt_tokens_details */
    int64_t reasoning_tokens;
    const struct sim_timings *timings;   /* llama.cpp only */
};

/* The non-streaming reply body (chat.completion or text_completion) in the
 * flavor's shape. Returns a malloc'd string (cJSON_free) or NULL. */
char *sim_json_completion(const struct sim_body *b);

#endif
