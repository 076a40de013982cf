/* profile.h — the engine model's parameters: defaults, one table that both
 * the command-line flags and JSON profiles (`--profile FILE`) set, and the
 * cross-checks run before the server starts. */
#ifndef ANVIL_SIM_PROFILE_H
#define ANVIL_SIM_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Most draft tokens one speculative step may propose (--num-speculative-tokens). */
#define SIM_SPEC_MAX 16

/* Everything the engine model (engine.h) needs. Step time, in ms, is
 *   decode_base_ms + decode_ms_per_seq·seqs + attn_ms_per_ktok·(Σ context / 1000)
 *   + [prefill_tokens > 0]·(prefill_base_ms + 1000·prefill_tokens / prefill_tok_s)
 *   + draft_ms_per_token·draft_tokens
 * (see engine.h sim_engine_step_ns for the terms). */
struct sim_engine_params {
    int64_t max_num_seqs;            /* sequences running at once (vLLM --max-num-seqs) */
    int64_t max_num_batched_tokens;  /* token budget of one step (vLLM --max-num-batched-tokens) */
    int64_t kv_cache_tokens;         /* KV cache capacity in tokens (rounded down to whole blocks) */
    int64_t block_size;              /* tokens per KV block */
    double decode_base_ms;           /* fixed cost of every step, ms */
    double decode_ms_per_seq;        /* per sequence in the step, ms */
    double attn_ms_per_ktok;         /* per 1000 tokens of context attended in the step, ms */
    double prefill_tok_s;            /* prefill throughput, tokens/s; 0 = prefill is free */
    double prefill_base_ms;          /* extra fixed cost of a step holding prefill tokens, ms */
    double draft_ms_per_token;       /* per draft token proposed and verified, ms */
    double frontend_ms;              /* serial per-request API-server time (tokenize, enqueue)
                                      * before the scheduler sees a request, ms */
    bool enable_prefix_caching;      /* block-hash prefix cache */
    int64_t num_speculative_tokens;  /* K draft tokens per decode step, 0..SIM_SPEC_MAX */
    double spec_acceptance[SIM_SPEC_MAX]; /* unconditional acceptance rate of draft position i, non-increasing */
};

/* Fills *p with the defaults (docs/SIM.md lists them): 256 seqs, 8192
 * batched tokens, 524288 KV tokens in blocks of 16, decode 5 ms + 0.05 ms/seq
 * + 0.02 ms per 1000 context tokens, prefill 20000 tok/s, no spec decoding. */
void sim_engine_params_default(struct sim_engine_params *p);

/* Number of entries in the parameter table (index 0 .. count-1). */
size_t sim_param_count(void);

/* The JSON key of parameter i, e.g. "max_num_seqs"; its flag is the same
 * with "--" in front and '-' for '_'. Static storage. */
const char *sim_param_key(size_t i);

/* One line of --help for parameter i (unit and default). Static storage. */
const char *sim_param_help(size_t i);

/* The flag's metavar ("N", "MS", "P[,P...]"), or NULL for a boolean flag
 * that takes no value. Static storage. */
const char *sim_param_metavar(size_t i);

/* Sets parameter i from text (a flag value; NULL for a boolean flag).
 * Returns 0, or -1 after writing "expected ..., got '...'" into err (cap
 * bytes). */
int sim_param_set_text(struct sim_engine_params *p, size_t i, const char *text, char *err,
                       size_t cap);

/* Loads a JSON profile: an object whose keys are parameter keys (plus the
 * free-form "description" and "fitted_to", which are ignored). Keys not
 * given keep their value in *p. Returns 0, or -1 with one line in err
 * naming the file and the offending key (nothing is half-applied then). */
int sim_profile_load(const char *path, struct sim_engine_params *p, char *err, size_t cap);

/* Cross-checks of a complete parameter set, as vLLM checks at start: the KV
 * cache holds at least one block and one whole max_model_len sequence, and
 * the token budget is >= 1. Returns 0, or -1 with a message in err. */
int sim_engine_params_check(const struct sim_engine_params *p, int64_t max_model_len, char *err,
                            size_t cap);

#endif
