/* phases.h — the phases of a decode matrix besides its cells
 * (docs/DECODE.md): the prefill runs before the cells (standalone cold
 * prefills with --standalone-prefill, else one cold prefill at each prefill
 * context the matrix does not run: scout_only) and the bursts after them
 * (--run-burst). Each entry is one run (prefill_run, burst_run), logged to
 * the event log and cached in the run directory as it ends
 * (DIR/prefill/<method>-ctxN.json, DIR/burst/cC-ctxN.json), so a resumed
 * run reads it back instead of measuring it again. */
#ifndef ANVIL_DECODE_PHASES_H
#define ANVIL_DECODE_PHASES_H

#include <stdbool.h>
#include <stddef.h>

#include "decode/events.h"
#include "decode/matrix.h"
#include "openai/discover.h"
#include "run/run.h"

/* The prefill contexts of c: c->prefill_ctx, or the non-zero decode
 * contexts when none were listed. Returns how many were written to out
 * (cap DECODE_MAX_LIST). */
size_t decode_prefill_contexts(const struct decode_config *c, long *out);

/* Logs which prefill each prefill context gets: "startup prefill tests:
 * integrated from decode scout requests ['64k']; scout-only extras ['8k']"
 * (the seed's line), or the standalone contexts and samples. */
void decode_prefill_plan_event(const struct decode_config *c, struct decode_events *ev);

/* Whether the matrix runs context ctx (then its first cell's request is
 * the context's integrated scout). */
bool decode_runs_context(const struct decode_config *c, long ctx);

/* The prefill phase: with c->standalone_prefill every prefill context,
 * else those the matrix does not run (method scout_only, one sample), each
 * whose prompt + 1 token fits srv's context (server_check_fit; unknown
 * limits pass; a context that does not fit is logged with the limit and
 * its source, and left out). base is the run settings with the
 * server resolved (base URL, model, calibration cache, /metrics); each
 * run's own artifact goes to DIR/prefill/. Adds the entries (measured now
 * or read back) to *prefill (replacing an entry at the same context; the
 * caller frees it). Returns 0 when
 * every entry is there, -1 with why (cap bytes) at the first that could
 * not be measured (the ones before it are kept and cached). */
int decode_prefill_phase(const struct decode_config *c, const struct run_config *base, const struct server_info *srv,
                         struct decode_events *ev, struct decode_prefill_map *prefill, char *why, size_t cap);

/* The burst phase: a burst per decode context × concurrency (context-major,
 * the requests the cells send: prompt decode_prompt_len, max_tokens),
 * C × c->burst_requests_per_concurrency requests, or c->request_count.
 * Appends each burst's burst_results entry to *results (*n_results of
 * them, realloc'd; the caller frees them). Returns 0 when
 * every burst is there, -1 with why at the first that could not be
 * measured (no request completed). */
int decode_burst_phase(const struct decode_config *c, const struct run_config *base, struct decode_events *ev,
                       struct decode_cell **results, size_t *n_results, char *why, size_t cap);

#endif
