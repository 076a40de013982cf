/* prefill.h — the prefill figure per context of a sustained-decode matrix
 * (seed 004's `prefill` section; docs/METHODOLOGY.md, "Prefill"):
 *
 * - standalone (`--standalone-prefill`): at each listed context, repeated
 *   cold prefills — one request at a time, max_tokens 1, every prompt unique
 *   from its first word (prompt.h), so no request finds another's tokens in
 *   a prefix cache — each context one `anvil run` (run_execute) with its own
 *   artifact;
 * - integrated scout (the default of `anvil decode`): the first request of
 *   the decode cell at each non-zero context is timed anyway; its TTFT and
 *   prompt tokens make the same entry (prefill_scout_entry).
 *
 * Both give prompt_tokens / TTFT on the client side, and, from the server's
 * Prometheus counters over the same requests when they are the run's alone
 * and cold (prefill_validate), the server's own prefill rate as validation;
 * when they are not, the validation says why in invalid_reason. */
#ifndef ANVIL_DECODE_PREFILL_H
#define ANVIL_DECODE_PREFILL_H

#include <stdbool.h>
#include <stddef.h>

#include "artifact/decode_matrix.h"
#include "observe/observe.h"
#include "run/run.h"

/* How an entry was measured: its `method` string in seed 004. */
enum prefill_method {
    PREFILL_STANDALONE,         /* "standalone": repeated cold prefills (--standalone-prefill) */
    PREFILL_SCOUT_ONLY,         /* "scout_only": one cold prefill at a context the decode matrix
                                   does not run (seed 004's 8k extra) */
    PREFILL_INTEGRATED_SCOUT,   /* "integrated_scout": a decode cell's first request */
};

/* The method's seed-004 string. Static. */
const char *prefill_method_name(enum prefill_method m);

/* Which side the headline (`prefill_seconds`, `tok_per_sec`) comes from
 * (seed 004's startup args `prefill_metric`). */
enum prefill_metric {
    PREFILL_METRIC_CLIENT,      /* the client's TTFT (the seed's default) */
    PREFILL_METRIC_SERVER,      /* the server's prefill time, when its validation is valid (else
                                   the client's) */
};

/* A standalone prefill measurement. */
struct prefill_config {
    struct run_config base;     /* copied from the decode command's run settings; per context
                                   prefill_run sets input_len (the context), output_len 1,
                                   num_prompts (repetitions), warmup 0, concurrency 1, the closed
                                   loop, no duration window, synthetic prompts without a shared
                                   prefix or length ranges, and out (below) */
    const long *contexts;       /* prompt tokens per context, each ≥ 1; borrowed */
    size_t n_contexts;
    long repetitions;           /* cold prefills per context, ≥ 1 */
    long warmup_requests;       /* unmeasured prefills at the first context before any is
                                   measured (one run of their own); 0 = none */
    enum prefill_method method; /* PREFILL_STANDALONE or PREFILL_SCOUT_ONLY */
    enum prefill_metric metric;
    const char *out_dir;        /* each run's artifact: <out_dir>/prefill-<context>.json (the
                                   warm-up's prefill-warmup.json); NULL = base.out_dir, else
                                   "results"; borrowed */
};

/* Fills *out for contexts[0..n) (borrowed: they must outlive prefill_run)
 * and repetitions from a copy of *base: method PREFILL_STANDALONE, metric
 * client, one warm-up request, out_dir NULL. Returns 0, or -1 with a message
 * in err when n is 0, a context is below 1 (context 0 has no prefill to
 * time) or repetitions is below 1. */
int prefill_config_from_run(struct prefill_config *out, const struct run_config *base, const long *contexts,
                            size_t n, long repetitions, char *err, size_t errlen);

/* The server's side of an entry: seed 004's `server_validation`. Numbers
 * are 0 when not valid (the seed's convention), the reason in
 * invalid_reason. */
struct prefill_validation {
    char method[48];            /* "prometheus:kv_computed" (prefill-time histogram: first
                                   scheduled → first token), "prometheus:ttft" (the server's TTFT
                                   histogram, when it has no prefill one), "" = not measured */
    double tok_per_sec;         /* prompt_tokens / prefill_seconds */
    double prefill_seconds;     /* the histogram's mean over the requests, s */
    long prompt_tokens;         /* per request, tokens whose KV the server computed: prompt tokens
                                   less those found cached */
    long request_prompt_tokens; /* per request, usage.prompt_tokens as the requests reported it */
    long cached_tokens;         /* per request, prompt tokens the server found cached */
    char token_source[40];      /* where prompt_tokens came from: "prompt_tokens_counter" (Δ the
                                   server's prompt-token counter, less Δ prefix-cache hits), or
                                   "request_usage" (the requests' usage, without such a counter) */
    long samples;               /* requests the histogram counted */
    char invalid_reason[600];   /* "" when valid */
};

/* One context's entry: seed 004's prefill["<context>"]. Times in seconds,
 * rates in prompt tokens per second; 0 where nothing completed. */
struct prefill_entry {
    long context_tokens;        /* the context asked for (the entry's key) */
    enum prefill_method method;
    long samples;               /* completed requests timed */
    double client_ttft_s;       /* mean time to first output token of any kind (TTFT; with
                                   max_tokens 1 a reasoning model's only token may be reasoning) */
    double client_tok_per_sec;  /* prompt_tokens / client_ttft_s */
    long prompt_tokens;         /* mean usage.prompt_tokens, rounded */
    double ttft_s;              /* = client_ttft_s */
    double prefill_s, tok_per_sec;  /* the headline: the client's, or with PREFILL_METRIC_SERVER the
                                       server's when its validation is valid */
    struct prefill_validation server;
    /* how the run went (standalone): not rendered */
    bool sent;                  /* requests were sent: the entry is rendered */
    enum run_status status;
    char error[1024];           /* why, when the run failed or nothing completed ("" else) */
    char artifact_path[4096];   /* the context's run artifact ("" for a scout) */
    struct observe_report *observe; /* the run's server and hardware report; owned; NULL = none */
    struct decode_hw hardware_summary;  /* seed 004's per-entry hardware_summary; not present
                                   renders {}. prefill leaves it absent: the caller takes it from
                                   observe (decode_hw_of) as the results[] cells' */
};

struct prefill_result {
    struct prefill_entry *entries;  /* one per context, in config order; owned */
    size_t n;
    bool warmup_run;            /* the warm-up was sent */
    enum run_status warmup_status;
    char warmup_error[1024];
};

/* Runs c: the warm-up, then each context's cold prefills, one run_execute
 * each (messages to c->base.log as they happen). A context that fails (does
 * not fit the server's context, no request completed) is recorded in its
 * entry and the next one runs. Fills *out (release with
 * prefill_result_free). Returns 0 when every context completed at least
 * one request, else -1 (the entries say which and why; -1 with out->n 0
 * when memory runs out). */
int prefill_run(const struct prefill_config *c, struct prefill_result *out);

/* The server's validation of n_samples cold prefills whose requests
 * reported request_prompt_tokens (mean usage.prompt_tokens) and
 * client_cached_tokens (Σ usage cached_tokens; < 0 = not reported), from
 * obs's server summary over exactly those requests (NULL: not measured).
 * Valid when the server was scraped over the window and its summary is
 * available, it has a prefill-time (else TTFT) histogram that counted
 * exactly n_samples requests, it generated no more than the run received
 * (other_traffic), its prompt-token counter moved by the requests' prompt
 * tokens (± max(4, 1%) each) and no more than max(4, 1%) of a prompt was
 * found cached (prefix-cache hits, else the requests' cached_tokens): a
 * cold prefill. Otherwise invalid_reason names the first check that failed,
 * with its numbers. Formula: tok_per_sec = (Δprompt − Δcached) / Δsum of
 * the histogram = prompt_tokens / prefill_seconds. */
void prefill_validate(const struct observe_report *obs, long n_samples, double request_prompt_tokens,
                      long client_cached_tokens, struct prefill_validation *out);

/* The integrated-scout entry: context_tokens, the first request's TTFT
 * (seconds, > 0) and its prompt tokens (usage.prompt_tokens), method
 * "integrated_scout", one sample; server validation from obs over that
 * request alone (NULL: method "" and invalid_reason "not measured: no
 * server metrics around the scout request"); metric as in prefill_config.
 * Returns 0, or -1 with a message in err when ttft_s is not > 0 or
 * prompt_tokens < 1 (*out then has no sample). *out owns nothing (observe
 * NULL): prefill_entry_free is still safe. */
int prefill_scout_entry(long context_tokens, double ttft_s, long prompt_tokens, const struct observe_report *obs,
                        enum prefill_metric metric, struct prefill_entry *out, char *err, size_t errlen);

/* The entry as seed 004 writes it (artifact/decode_matrix.h's
 * decode_prefill): ttft_seconds, prefill_seconds, tok_per_sec,
 * client_ttft_seconds, client_tok_per_sec (0 where there is no figure),
 * prompt_tokens, samples, method, server_validation, hardware_summary.
 * Numbers exact (not rounded as the seed's are). Fills *out (owned: free
 * with decode_prefill_free). Returns 0, or -1 when memory runs out. */
int prefill_entry_typed(const struct prefill_entry *e, struct decode_prefill *out);

/* Seed 004's `prefill` entries: prefill_entry_typed of every entry that
 * sent requests, in order; a context that never sent one (it does not fit
 * the server) is left out (its entry keeps the error for the event log).
 * Fills *out (owned). Returns 0, or -1 when memory runs out. */
int prefill_entries_typed(const struct prefill_entry *entries, size_t n, struct decode_prefill_map *out);

/* Seed 004's methodology.prefill entry for a matrix whose prefill was
 * measured by mode (PREFILL_STANDALONE, else the integrated scout): name,
 * present, mode ("standalone_cold_prefill" or "integrated_decode_scout"),
 * formula, notes. Fills *out (owned). Returns 0, or -1 when memory runs
 * out. */
int prefill_methodology(enum prefill_method mode, struct decode_method *out);

/* Frees what e owns (safe on an emptied one). */
void prefill_entry_free(struct prefill_entry *e);

/* Frees every entry and empties r. */
void prefill_result_free(struct prefill_result *r);

#endif
