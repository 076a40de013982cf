/* grid.h — the decode matrix's grid: concurrency and context lists as typed
 * on the command line ("1,2,4", "0,8k,64k"; k = 1024 tokens), their labels,
 * the order the cells run in, and the per-context warm-up timeout policy. */
#ifndef ANVIL_DECODE_GRID_H
#define ANVIL_DECODE_GRID_H

#include <stddef.h>

/* The seed's cell_warmup_timeout_policy, as the artifact writes it. */
#define DECODE_TIMEOUT_POLICY "<=32k:60s,64k:120s,>=128k:180s when override is 0"

/* Most values one list may hold. */
#define DECODE_MAX_LIST 32

/* Parses a comma-separated list of whole numbers ≥ min, each optionally
 * suffixed k (× 1024), into out (cap entries): "0,8k,64k" → 0, 8192,
 * 65536. Duplicates are refused. Returns the count (≥ 1), or -1 with
 * "what is wrong in s" in err. */
int decode_parse_sizes(const char *s, long min, long *out, size_t cap, char *err, size_t errlen);

/* The label of a context length: a multiple of 1024 as "Nk" (65536 →
 * "64k"), anything else in digits ("0", "1000"). */
void decode_size_label(long tokens, char *out, size_t cap);

/* The warm-up timeout of a cell at this context, s: override_s when > 0,
 * else the policy: ≤ 32k 60 s, below 128k 120 s, from 128k 180 s. */
double decode_warmup_timeout_s(long context_tokens, double override_s);

/* One cell of the grid, by index into the two lists. */
struct decode_cell_ref {
    size_t conc_i, ctx_i;
};

/* The cells in the order they run (out holds n_conc × n_ctx): the lowest
 * concurrency at every context first, ascending context (each context's
 * first request is then its prefill scout, alone on the server), then
 * every context in order with the remaining concurrencies ascending.
 * Returns the count. */
size_t decode_cell_order(const long *conc, size_t n_conc, const long *ctx, size_t n_ctx,
                         struct decode_cell_ref *out);

#endif
