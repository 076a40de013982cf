/* summary.h — one run's numbers: counts, throughputs over the run's duration,
 * and the distribution of every per-request metric over completed requests. */
#ifndef ANVIL_STATS_SUMMARY_H
#define ANVIL_STATS_SUMMARY_H

#include "stats/dist.h"
#include "stats/record.h"

/* Indexes of the distributions a summary holds. */
enum dist_id {
    D_TTFT, D_TTFO, D_E2E, D_GENERATION, D_VISIBLE_GENERATION, D_TPOT, D_DECODE_TOK_S,
    D_PREFILL_TOK_S, D_PROMPT_TOKENS, D_OUTPUT_TOKENS, D_ITL_CHUNK, D_ITL_TOKEN,
    D_TOKENS_PER_CHUNK, D_HEADERS, D_FIRST_BYTE, D_FIRST_EVENT, D_SECOND_OUTPUT,
    D_TPS_PER_USER, D_COUNT
};

struct run_summary {
    int requests;               /* measured requests planned */
    int sent, completed, failed;
    double duration_ms;         /* first start → last end over measured requests sent */
    long output_tokens;         /* Σ over completed requests */
    long prompt_tokens;         /* Σ usage.prompt_tokens over completed requests */
    int prompt_token_reports;   /* completed requests that reported prompt tokens */
    double output_throughput;   /* tokens/s: output_tokens / duration */
    double total_token_throughput; /* tokens/s: (prompt + output) / duration */
    double request_throughput;  /* requests/s: completed / duration */
    int content_chunks, reasoning_chunks;
    long events;                /* SSE events received by every measured request sent */
    int source_usage, source_chunks;    /* requests by output_token_source */
    long cached_tokens;         /* Σ usage cached_tokens; with cached_reports > 0 */
    int cached_reports;
    int ignore_eos_mismatch;    /* completed requests whose output_tokens != max_tokens (when ignore_eos) */
    int prompt_mismatch;        /* completed requests whose prompt_tokens differ from the expected count
                                   by more than the tolerance, or were not reported */
    enum pct_method method;
    struct dist d[D_COUNT];
};

/* Computes the summary of n measured records with percentile method m.
 * ignore_eos says whether output_tokens must equal max_tokens; expect says
 * what usage.prompt_tokens should be (STREAMS.md trap 16: servers that
 * truncate prompts or count differently are flagged). Returns 0, or
 * -1 when memory runs out. */
/* What the prompts should have measured: expected_prompt_tokens ± tolerance
 * (tokens); expected < 0 skips the check. */
struct prompt_expect {
    long tokens, tolerance;
};

int summary_compute(const struct req_record *recs, int n, enum pct_method m, bool ignore_eos,
                    struct prompt_expect expect, struct run_summary *out);

#endif
