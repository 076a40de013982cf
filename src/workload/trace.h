/* trace.h — request traces replayed at their recorded times: the Mooncake
 * trace (`mooncake:FILE`, JSON Lines of timestamp in ms, input_length,
 * output_length and hash_ids, the ids of the prompt's 512-token blocks) and
 * the Azure LLM inference trace (`azure:FILE`, CSV of TIMESTAMP,
 * ContextTokens, GeneratedTokens; no block ids, so no request shares a
 * prefix with another). A window of the trace can be cut and its clock
 * scaled; the prefix hit rate an unbounded cache would reach is computed
 * from the block ids. */
#ifndef ANVIL_WORKLOAD_TRACE_H
#define ANVIL_WORKLOAD_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tokens per block of Mooncake's hash_ids. */
#define TRACE_BLOCK_TOKENS 512

/* Whether spec names a trace ("mooncake:..." or "azure:..."). */
bool trace_spec_is_trace(const char *spec);

struct trace_req {
    int64_t t_ns;           /* due offset from the first request of the window, scaled by speed */
    long input_len;         /* prompt tokens the trace recorded */
    long output_len;        /* output tokens (max_tokens sent), >= 1 */
    const int64_t *hash_ids;/* into trace.ids: the prompt's blocks, in order (Mooncake); may be 0 */
    size_t n_hash;
};

struct trace {
    struct trace_req *reqs; /* owned, in time order */
    size_t n;
    int64_t *ids;           /* owned: every request's hash_ids back to back */
    size_t n_ids;
    char format[16];        /* "mooncake" or "azure" */
    char spec[512];         /* as given */
    double span_s;          /* scaled time from the window's first request to its last */
    long lines;             /* requests in the file (before the window was cut) */
};

/* The part of a trace to replay: requests recorded in [start_s, start_s +
 * duration_s) after the file's first one (duration_s 0 = to the end), sent
 * with their gaps divided by speed (> 0; 2 = twice as fast). */
struct trace_window {
    double start_s, duration_s, speed;
};

/* Loads spec ("mooncake:PATH" or "azure:PATH") and cuts w out of it. Lines
 * may come in any order (they are sorted by time, stable). Mooncake lines
 * need timestamp (ms, >= 0), input_length (>= 1), output_length (>= 0; 0
 * becomes 1) and optionally hash_ids (non-negative integers); Azure rows
 * need a TIMESTAMP ("2023-11-16 18:15:46.6805900", or seconds as a number),
 * ContextTokens and GeneratedTokens, after a header row naming them.
 * Returns 0, or -1 with a message naming the file and line in err (also
 * when the window holds no request). */
int trace_load(const char *spec, const struct trace_window *w, struct trace *out, char *err, size_t errlen);

/* The prefix hit rate of the trace in order with an unbounded cache: Σ over
 * requests of the tokens of its leading blocks that an earlier request
 * already had (a block counts only while every block before it matched
 * whole, as chained block hashes in vLLM and SGLang make it; of a block an
 * earlier request had only the start of — its last, cut by its
 * input_length — that start counts; at most input_len − 1, since a server
 * computes at least one prompt token) / Σ input_len. 0 when no request has
 * block ids. */
double trace_theoretical_hit_rate(const struct trace *t);

/* Frees what t owns. */
void trace_free(struct trace *t);

#endif
