/* metrics.h — per-request metrics derived from a req_record, exactly as
 * defined in docs/METHODOLOGY.md. */
#ifndef ANVIL_STATS_METRICS_H
#define ANVIL_STATS_METRICS_H

#include "stats/record.h"
#include "stats/tokens.h"

/* Every time in ms from the request start; every undefined value is NaN
 * (never 0), e.g. TPOT of a reply with at most one token. */
struct req_metrics {
    double ttft_ms;                 /* start → first non-empty content delta */
    double time_to_first_output_ms; /* start → first non-empty reasoning or content delta */
    double e2e_ms;                  /* start → end of stream */
    double generation_ms;           /* e2e − time to first output */
    double visible_generation_ms;   /* e2e − ttft */
    double tpot_ms;                 /* generation_ms / (output_tokens − 1) */
    double decode_tok_s;            /* (output_tokens − 1) / generation_s */
    double effective_prefill_tok_s; /* prompt_tokens / time_to_first_output_s */
    double generation_tps_per_user; /* output_tokens / generation_s (not seed 004's output_tps_per_user) */
    double e2e_output_tps_per_user; /* output_tokens / e2e_s */
    double time_to_second_output_ms;/* first output chunk → next output chunk */
    double headers_ms;              /* start → response headers */
    double first_byte_ms;           /* start → first body byte */
    double first_event_ms;          /* start → first SSE event (e.g. a role-only chunk) */
    double send_lateness_ms;        /* scheduled → actual start: client-side queueing (open loop) */
    double scheduled_ttft_ms;       /* scheduled start → first content: TTFT with client queueing */
    double scheduled_e2e_ms;        /* scheduled start → end of stream */
    long output_tokens;             /* tokens_of (stats/tokens.h): usage, tokenize, else chunks */
    enum token_source output_token_source;
};

/* Derives the metrics of a completed request (r->fail == FAIL_NONE). */
void metrics_derive(const struct req_record *r, struct req_metrics *m);

/* Per-token ITL of output chunk i ≥ 1 of r (ms): the gap to chunk i−1
 * divided by the tokens chunk i carried — from continuous usage when the
 * server sent it, else the reply's tokens after the first spread evenly over
 * the later chunks. output_tokens as from metrics_derive. */
double metrics_itl_per_token_ms(const struct req_record *r, size_t i, long output_tokens);

#endif
