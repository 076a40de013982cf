/* tokens.h — how many output tokens a stream carried and when each arrived:
 * the one token accounting that run summaries, duration-mode windows,
 * decode cells and server cross-checks all use (docs/METHODOLOGY.md,
 * "Counting and dating tokens").
 *
 * A stream's count comes from the best source the server offered, in this
 * order: per-chunk usage (continuous usage stats), the reply's final usage,
 * the engine's tokenize endpoint applied to the text received (a stream cut
 * by a window, or one that ended without usage), and last the number of
 * output chunks — a lower bound whenever a chunk carries several tokens or a
 * token has no chunk of its own, which is why it is said wherever it was
 * used. Every token is dated by the chunk that carried it: a chunk's own
 * count when the server sent one, else the stream's count shared over its
 * chunks by their bytes of text (a token without a chunk of its own arrives
 * with the next chunk, which carries its text). */
#ifndef ANVIL_STATS_TOKENS_H
#define ANVIL_STATS_TOKENS_H

#include <stdint.h>

#include "stats/record.h"

/* Where a stream's output token count came from, best first. */
enum token_source {
    TOKENS_USAGE,       /* usage.completion_tokens: continuous (every chunk) or final */
    TOKENS_TOKENIZE,    /* the engine's tokenize endpoint over the text received */
    TOKENS_CHUNKS,      /* one token per output chunk: a lower bound */
    TOKENS_SOURCES
};

/* The artifact's name of a source: "usage", "tokenize", "chunks". */
const char *token_source_name(enum token_source s);

/* The output tokens of r and, when src is not NULL, where the count came
 * from (see above). A request with no output has 0 (from usage when it
 * reported 0). */
long tokens_of(const struct req_record *r, enum token_source *src);

/* Tokens each chunk of r carried, into out[0 .. r->n_chunks): its own count when the
 * server sent one, else its share of the tokens no chunk claimed — the
 * stream's count (tokens_of) less the chunks' own counts — in proportion to
 * its output bytes (a chunk holding four tokens' text holds about four
 * tokens), or evenly when no chunk's bytes are known. Never below 0. */
void tokens_of_chunks(const struct req_record *r, double *out);

/* Output tokens of n records that arrived in [start, end] (CLOCK_MONOTONIC
 * ns, both ends included), dated by their chunks, whatever request they
 * belong to (warm-ups, cut and failed requests too: what the server
 * produced there). */
struct token_window {
    double tokens;
    int64_t last_arrival;       /* the last counted chunk's arrival; 0 = none */
    long chunks;                /* output chunks counted */
    long by_source[TOKENS_SOURCES];     /* of those chunks, how their stream was counted */
    long chunks_with_count;     /* of those chunks, those that carried their own count */
};

/* Fills *out over [start, end] (see struct token_window). */
void tokens_in_window(const struct req_record *recs, int n, int64_t start, int64_t end,
                      struct token_window *out);

/* tokens_in_window over the records of it, in one pass. Returns 0, or -1
 * on the iterator's error (it->err; *out then holds what was read). */
int tokens_in_window_iter(struct rec_iter *it, int64_t start, int64_t end, struct token_window *out);

/* Adds one record's tokens in [start, end] to *out (zeroed first by the
 * caller), for a pass that computes more than the window. */
void tokens_window_add(const struct req_record *r, int64_t start, int64_t end, struct token_window *out);

/* The weakest source any of w's chunks needed: chunks, else tokenize, else
 * usage (also when w counted nothing). */
enum token_source window_token_source(const struct token_window *w);

#endif
