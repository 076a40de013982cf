/* engine.h — the engine model: a vLLM-V1-like scheduler and step loop over
 * a paged KV cache, with chunked prefill, preemption by recompute, prefix
 * caching and speculative decoding. Pure logic: no I/O, no clock of its
 * own (times are passed in, ns on clock_now_ns's clock); driver.c runs it on
 * a libevent timer and gen.c turns its tokens into HTTP chunks.
 *
 * A sequence's tokens are its prompt plus what it generated so far;
 * "computed" counts those whose KV is in the cache. Each step schedules,
 * oldest running sequence first, the tokens each still needs (one, plus K
 * draft tokens with speculative decoding, for a decoding sequence; a chunk of
 * its prompt for a prefilling one) within --max-num-batched-tokens, then
 * admits waiting sequences first come first served while budget, a free
 * slot (--max-num-seqs) and KV blocks last. A sequence whose tokens are all
 * computed at the end of a step samples 1 + accepted-draft tokens. When the
 * KV cache has no free block for a running sequence, the newest running
 * sequence is preempted: its blocks are freed and it waits at the head of
 * the queue to be recomputed (prompt + tokens so far), as vLLM does. */
#ifndef ANVIL_SIM_ENGINE_H
#define ANVIL_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "sim/profile.h"

enum sim_seq_state { SIM_SEQ_NEW, SIM_SEQ_WAITING, SIM_SEQ_RUNNING, SIM_SEQ_DONE };

/* One thing that happened to a sequence, for the trace. */
struct sim_seq_event {
    int64_t start_ns;   /* prefill chunk: step start; preemption: when */
    int64_t end_ns;     /* prefill chunk: step end; preemption: same as start_ns */
    int64_t tokens;     /* prefill chunk: tokens computed; preemption: 0 */
    bool preemption;
};

/* One request inside the engine. The caller allocates it (zeroed), sets the
 * inputs, and keeps it alive until it is DONE or aborted. */
struct sim_seq {
    /* inputs */
    int64_t prompt_tokens;        /* >= 1 */
    int64_t output_tokens;        /* tokens it will generate in all, >= 1 */
    uint64_t key;                 /* output key: seeds the acceptance draws */
    const uint64_t *block_hashes; /* prefix-cache names of its full prompt blocks (caller owns), or NULL */
    int64_t n_block_hashes;
    int64_t stall_after;          /* pause once after this many generated tokens (0: never) */
    int64_t stall_ns;             /* for this long, ns */
    void *user;                   /* the caller's */
    /* state (read-only for the caller) */
    enum sim_seq_state state;
    int64_t generated;            /* output tokens sampled */
    int64_t computed;             /* tokens with KV in the cache */
    int64_t cached_tokens;        /* prompt tokens served from the prefix cache at first admission */
    int64_t admitted_ns;          /* first scheduled, 0 until then */
    int64_t preemptions;
    uint64_t decode_steps;        /* decode steps taken (acceptance draw index) */
    /* speculative decoding, this sequence's share of sim_engine_stats (the trace's truth) */
    uint64_t spec_drafts;         /* decode steps that verified drafts */
    uint64_t spec_draft_tokens;   /* draft tokens proposed */
    uint64_t spec_accepted;       /* draft tokens accepted */
    uint64_t spec_accepted_pos[SIM_SPEC_MAX]; /* accepted per draft position */
    int64_t paused_until_ns;      /* not scheduled before this (a stall fault) */
    struct sim_seq_event *events; /* owned: prefill chunks and preemptions in order */
    size_t n_events, cap_events;
    /* engine private */
    TAILQ_ENTRY(sim_seq) link;    /* in the waiting or running list */
    int32_t *blocks;              /* owned: KV block ids, in token order */
    int64_t n_blocks;
    size_t cap_blocks;
    int64_t published;            /* prompt blocks registered in the prefix cache */
};

/* Where tokens go. on_tokens is called once per sequence per step that
 * sampled tokens, with output token indexes first .. first+n-1; done means
 * the sequence is finished and already out of the engine (the callee may
 * free it). It must not submit or abort any sequence but s. */
struct sim_engine_hooks {
    void (*on_tokens)(void *ctx, struct sim_seq *s, int64_t first, int64_t n, bool done,
                      int64_t now_ns);
    void *ctx;
    /* After the driver ran a batch of steps: send what their on_tokens
     * calls produced (one write per stream, however many steps). May be NULL. */
    void (*flush)(void *ctx);
};

/* Upper bounds (le) of vLLM's vllm:iteration_tokens_total buckets; a last
 * bucket, +Inf, follows them in sim_engine_stats.step_tokens_hist. */
#define SIM_STEP_TOKEN_BUCKETS 13
extern const int64_t sim_step_token_le[SIM_STEP_TOKEN_BUCKETS];

/* Cumulative counters since start (what /metrics reports). */
struct sim_engine_stats {
    uint64_t steps;                   /* steps completed */
    uint64_t step_seqs;               /* Σ over steps of the sequences in the step */
    uint64_t prefill_tokens;          /* prompt (and recomputed) tokens computed */
    uint64_t generation_tokens;       /* output tokens sampled */
    uint64_t prefix_queries;          /* prompt tokens looked up in the prefix cache */
    uint64_t prefix_hits;             /* of those, tokens found cached */
    uint64_t preemptions;
    uint64_t spec_drafts;             /* decode steps that verified drafts */
    uint64_t spec_draft_tokens;       /* draft tokens proposed */
    uint64_t spec_accepted;           /* draft tokens accepted and emitted */
    uint64_t spec_accepted_pos[SIM_SPEC_MAX]; /* accepted tokens per draft position */
    uint64_t step_tokens_hist[SIM_STEP_TOKEN_BUCKETS + 1]; /* steps by tokens scheduled (not cumulative) */
};

struct sim_engine;

/* Creates an engine with parameters *p (copied; must pass
 * sim_engine_params_check) delivering tokens to *hooks (copied). NULL when
 * out of memory. */
struct sim_engine *sim_engine_new(const struct sim_engine_params *p,
                                  const struct sim_engine_hooks *hooks);

/* Frees the engine; sequences still inside are only forgotten (their
 * owners free them). NULL-safe. */
void sim_engine_free(struct sim_engine *e);

/* Queues s (state NEW) at the tail of the waiting queue. */
void sim_engine_submit(struct sim_engine *e, struct sim_seq *s);

/* Takes s out of the engine wherever it is (waiting, running, in the
 * current step) and frees its blocks; s becomes DONE. Frees s->blocks;
 * s->events stay for the caller (sim_seq_release frees them). */
void sim_engine_abort(struct sim_engine *e, struct sim_seq *s);

/* Frees what the engine allocated inside a sequence no longer in it
 * (events, blocks). */
void sim_seq_release(struct sim_seq *s);

/* Schedules the next step at now_ns. Returns its duration in ns (>= 0)
 * when there is work; then sim_engine_complete must be called at (or after)
 * now_ns + duration. Returns -1 when nothing can run: *wake_ns is then the
 * time a paused sequence resumes, or 0 when the engine is idle. */
int64_t sim_engine_plan(struct sim_engine *e, int64_t now_ns, int64_t *wake_ns);

/* Ends the planned step at now_ns: advances every scheduled sequence,
 * samples tokens (on_tokens), finishes sequences. No-op without a plan. */
void sim_engine_complete(struct sim_engine *e, int64_t now_ns);

/* Duration of one step in ns by the documented formula:
 *   step_ms = decode_base_ms + decode_ms_per_seq·seqs
 *           + attn_ms_per_ktok·(context_tokens / 1000)
 *           + (prefill_tokens > 0 ? prefill_base_ms + 1000·prefill_tokens / prefill_tok_s : 0)
 *           + draft_ms_per_token·draft_tokens
 * seqs = sequences in the step, context_tokens = Σ over them of the tokens
 * whose KV the step reads or writes (computed + scheduled), prefill_tokens =
 * prompt/recompute tokens in the step, draft_tokens = speculative tokens
 * verified. Model after vLLM's roofline: decode is bound by weight reads
 * (base) and KV reads (attn), prefill by compute (tok/s). */
int64_t sim_engine_step_ns(const struct sim_engine_params *p, int64_t seqs, int64_t context_tokens,
                           int64_t prefill_tokens, int64_t draft_tokens);

/* Sequences in the running set / waiting queue now. */
int64_t sim_engine_running(const struct sim_engine *e);
int64_t sim_engine_waiting(const struct sim_engine *e);

/* KV blocks in the pool, held by sequences now, and tokens per block. */
int64_t sim_engine_kv_blocks(const struct sim_engine *e);
int64_t sim_engine_kv_used_blocks(const struct sim_engine *e);

/* Tokens held in KV by running sequences (sglang:num_used_tokens). */
int64_t sim_engine_kv_used_tokens(const struct sim_engine *e);

/* Empties the prefix cache (sim_kv_reset_prefix). Returns the blocks it
 * forgot. */
int64_t sim_engine_reset_prefix_cache(struct sim_engine *e);

/* The counters. */
const struct sim_engine_stats *sim_engine_stats(const struct sim_engine *e);

/* The parameters the engine runs with. */
const struct sim_engine_params *sim_engine_params(const struct sim_engine *e);

#endif
