/* sample.h — what the client saw in one decode cell: each request's seed
 * 004 figures (request_samples) and the window's token count, by arrival
 * time (docs/DECODE.md). Times in seconds, from CLOCK_MONOTONIC stamps. */
#ifndef ANVIL_DECODE_SAMPLE_H
#define ANVIL_DECODE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "artifact/decode_matrix.h"
#include "stats/record.h"
#include "stats/tokens.h"

/* The seed's per-user decode rate of a request with n output tokens whose
 * first token came first_s and last last_s after its send (for a completed
 * request last_s is its latency): (n − 1) / (last_s − first_s) tokens/s;
 * NaN when n < 2 or the span is not positive. */
double decode_output_tps_per_user(long n, double first_s, double last_s);

/* The seed's inter_token_latency_avg of the same request: (last_s −
 * first_s) / (n − 1) seconds per token; NaN when n < 2 or the span is not
 * positive. */
double decode_inter_token_latency(long n, double first_s, double last_s);

/* r's request_samples entry, the one per-request sample of decode cells and
 * bursts. TTFT is send → first content (t_first_content; reasoning before
 * it is not the answer's start: NaN when no content came); the decode
 * figures run from it, or from the first output chunk when there is no
 * content. A completed request's figures run to its end (latency); a cut
 * one's (completed false) to its last token, with latency and
 * e2e_output_tps_per_user 0 as the seed writes them. */
void decode_sample_of(const struct req_record *r, struct decode_request_sample *out);

/* The client's side of a cell's window [ws, we) (CLOCK_MONOTONIC ns). */
struct decode_window {
    struct token_window tokens; /* output tokens dated inside the window (stats/tokens.h) */
    long requests;              /* requests that overlap the window (sent before it closed, not
                                   ended before it opened) */
    long completed;             /* of them, completed (whenever) */
    long completed_inside;      /* of them, completed inside the window */
    long errors;                /* of them, failed */
};

/* Counts the n records' tokens and requests over [ws, we). */
void decode_window_count(const struct req_record *recs, int n, int64_t ws, int64_t we,
                         struct decode_window *out);

/* Whether record r overlaps [ws, we) (see decode_window.requests). */
bool decode_in_window(const struct req_record *r, int64_t ws, int64_t we);

/* avg, p50, p90, p99 of the n values v (NaNs dropped; v is sorted in
 * place), percentiles interpolated linearly between ranks as the seed's are
 * (the p50 of two values is their mean). All NaN when none is left. */
void decode_stat4_of(double *v, size_t n, struct decode_stat4 *out);

/* A cell's client-side statistics over its request samples (seed 004's
 * results[] figures): ttft, time_to_second_token, inter_token_latency,
 * output_tps_per_user and chunk_inter_token_latency over every sample;
 * request_latency, e2e_output_tps_per_user and output_seq_len over the
 * completed ones; input_seq_len_avg the mean input_tokens (unknown ones,
 * below 0, left out). Seconds, tokens, tokens/s; NaN = no sample has it. */
struct decode_sample_stats {
    struct decode_stat4 ttft, time_to_second_token, request_latency, inter_token_latency;
    struct decode_stat4 output_tps_per_user, e2e_output_tps_per_user, chunk_inter_token_latency;
    struct decode_stat4 output_seq_len;
    double input_seq_len_avg;
};

/* Fills *out from the n samples s (decode_stat4_of each figure; seconds,
 * tokens and tokens/s as in the sample). Request latency, E2E rate and
 * output length count completed samples only, the input average those of
 * known length; every other figure counts them all. Returns 0, or -1 when
 * memory runs out (*out then untouched). */
int decode_sample_stats_of(const struct decode_request_sample *s, size_t n, struct decode_sample_stats *out);

/* Copies st into the matching fields of the cell writer's *o. */
void decode_sample_stats_put(const struct decode_sample_stats *st, struct decode_cell *o);

#endif
