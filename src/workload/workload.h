/* workload.h — what each request asks: its body, planned prompt tokens and
 * max_tokens. Synthetic prompts (fixed length, or uniform ± a ratio like
 * vLLM's --random-range-ratio, with an optional shared prefix) or prompts
 * from a dataset. Every prompt starts with a head unique to its request
 * (prompt.h; after the shared prefix, when there is one, and nothing else
 * before it), so no request is served from another's prefix cache unless
 * that is what is measured. */
#ifndef ANVIL_WORKLOAD_WORKLOAD_H
#define ANVIL_WORKLOAD_WORKLOAD_H

#include <stdint.h>

#include "core/buf.h"
#include "openai/request.h"
#include "workload/dataset.h"
#include "workload/image.h"
#include "workload/trace.h"

struct workload_cfg {
    struct request_opts ro;     /* endpoint, model, stream, ignore_eos, ...; max_tokens ignored */
    uint64_t salt;              /* per-run random value */
    uint64_t seed;              /* filler text and length draws */
    long input_len, output_len; /* tokens; output_len is also a dataset's default max_tokens */
    double input_range;         /* input lengths uniform in [L(1−r), L(1+r)]; 0 = fixed */
    double output_range;        /* the same for max_tokens */
    long shared_prefix_len;     /* tokens every prompt starts with; 0 = none */
    long prefix_groups;         /* >= 1: prompts start with one of this many prefixes of shared_prefix_len
                                   tokens (request seq with prefix seq % prefix_groups), each its
                                   own text, salted per run; the chat template's tokens count toward
                                   shared_prefix_len (they are cached with it). 0: one prefix of
                                   shared_prefix_len tokens after the template, the same every run */
    const struct dataset *ds;   /* prompts from a file (not owned), or NULL for synthetic */
    int images;                 /* chat, synthetic prompts: images per request (after the text), 0 = none */
    int image_w, image_h;       /* their size, pixels (image.h: seeded images, unique per run and request) */
    enum image_format image_format; /* PNG or JPEG */
    const struct trace *trace;  /* a trace to replay (not owned), or NULL: request seq is its
                                   entry seq; prompts are built of its blocks (workload_body) */
};

struct workload;

/* Creates a workload (cfg copied; ds must outlive it). Synthetic prompts are
 * usable for calibration at once; call workload_fit before sending. NULL
 * when memory runs out. */
struct workload *workload_new(const struct workload_cfg *cfg);

/* The synthetic prompt of request seq — the shared prefix (once fitted),
 * its unique head, then `filler_words` words — as workload_body sends it.
 * Appends to out; returns 0 or -1. */
int workload_prompt(const struct workload *w, long seq, long filler_words, struct buf *out);

/* Calibration prompt k: workload_prompt's text with a head from the
 * calibration space (prompt.h), so it shares no prefix with any measured
 * request — a server's prefix cache warmed by calibration serves none of
 * them. Token counts equal a measured prompt's for the same filler length
 * (heads are the same number of one-token words). Appends to out; returns
 * 0 or -1. */
int workload_calib_prompt(const struct workload *w, long k, long filler_words, struct buf *out);

/* The tokens the chat template puts before the user's text, as measured
 * (run_template_lead); a --prefix-groups prefix is that much shorter, as
 * those tokens are cached with it. Without it the template's every token
 * is taken to come first. Call before workload_fit. */
void workload_set_template_lead(struct workload *w, long tokens);

/* Sets the calibration result — `words` filler words give input_len tokens,
 * and tokens grow by tokens_per_word per word (used for ranges and the
 * shared prefix) — and renders the pieces bodies are spliced from. Returns
 * 0, or -1 when memory runs out. Synthetic workloads need it before
 * workload_body. */
int workload_fit(struct workload *w, long words, double tokens_per_word);

/* Body of request seq (a malloc'd string the caller frees, or NULL), its
 * planned prompt tokens (-1 when unknown: dataset prompts, and a synthetic
 * input_len of 0, the minimal prompt whose tokens the template decides) and
 * its max_tokens. A trace request's prompt is its blocks in order, each
 * TRACE_BLOCK_TOKENS tokens as the calibration's slope gives them (block
 * text from prompt_block: the block id and a per-run salt, so requests with
 * equal hash_ids share exactly those blocks), then blocks unique to the
 * request where hash_ids end early (always, for Azure); the last block is
 * cut so that with the chat template's tokens (the calibration's offset)
 * the prompt has input_length tokens; max_tokens is output_length. */
char *workload_body(const struct workload *w, long seq, long *planned_prompt_tokens, long *max_tokens);

/* The request that request seq must follow — the previous turn of its
 * conversation in the same pass over a multi-turn dataset — or -1. */
long workload_follows(const struct workload *w, long seq);

/* The requests request seq waits for in its pass over the dataset (each
 * before it), the first cap of them written to out; returns their count,
 * which may exceed cap (plan_build then refuses the plan). A turn of
 * the agent (agent 0) waits for its previous turn and the sub-agents that
 * turn spawned; a sub-agent for the turn that spawned it; otherwise as
 * workload_follows. */
int workload_waits(const struct workload *w, long seq, long *out, int cap);

/* Request seq's think time when it waits for others, ns; else 0. */
int64_t workload_think_ns(const struct workload *w, long seq);

/* Frees the workload. */
void workload_free(struct workload *w);

#endif
