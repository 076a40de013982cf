/* workload.h — what each request asks: its body, planned prompt tokens and
 * max_tokens. Synthetic prompts (fixed length, or uniform ± a ratio like
 * vLLM's --random-range-ratio, with an optional shared prefix) or prompts
 * from a dataset. Every prompt carries the run's salt and an id right at the
 * start (after the shared prefix, when there is one), so no request is
 * served from another's prefix cache unless that is what is measured. */
#ifndef ANVIL_WORKLOAD_WORKLOAD_H
#define ANVIL_WORKLOAD_WORKLOAD_H

#include <stdint.h>

#include "core/buf.h"
#include "openai/request.h"
#include "workload/dataset.h"

struct workload_cfg {
    struct request_opts ro;     /* endpoint, model, stream, ignore_eos, ...; max_tokens ignored */
    uint64_t salt;              /* per-run random value */
    uint64_t seed;              /* filler text and length draws */
    long input_len, output_len; /* tokens; output_len is also a dataset's default max_tokens */
    double input_range;         /* input lengths uniform in [L(1−r), L(1+r)]; 0 = fixed */
    double output_range;        /* the same for max_tokens */
    long shared_prefix_len;     /* tokens every prompt starts with; 0 = none */
    const struct dataset *ds;   /* prompts from a file (not owned), or NULL for synthetic */
};

struct workload;

/* Creates a workload (cfg copied; ds must outlive it). Synthetic prompts are
 * usable for calibration at once; call workload_fit before sending. NULL
 * when memory runs out. */
struct workload *workload_new(const struct workload_cfg *cfg);

/* The synthetic prompt of request seq — the shared prefix (once fitted), its
 * salt and id, then `filler_words` words — as calibration measures it and
 * workload_body sends it. Appends to out; returns 0 or -1. */
int workload_prompt(const struct workload *w, long seq, long filler_words, struct buf *out);

/* Sets the calibration result — `words` filler words give input_len tokens,
 * and tokens grow by tokens_per_word per word (used for ranges and the
 * shared prefix) — and renders the pieces bodies are spliced from. Returns
 * 0, or -1 when memory runs out. Synthetic workloads need it before
 * workload_body. */
int workload_fit(struct workload *w, long words, double tokens_per_word);

/* Body of request seq (a malloc'd string the caller frees, or NULL), its
 * planned prompt tokens (-1 when unknown: dataset prompts) and its
 * max_tokens. */
char *workload_body(const struct workload *w, long seq, long *planned_prompt_tokens, long *max_tokens);

/* The request that request seq must follow — the previous turn of its
 * conversation in the same pass over a multi-turn dataset — or -1. */
long workload_follows(const struct workload *w, long seq);

/* Frees the workload. */
void workload_free(struct workload *w);

#endif
