/* burst.h — the burst / end-to-end decode layer of a sustained-decode
 * matrix (`--run-burst`; seed 004's `burst_results`, `burst_summary_table`
 * and methodology.burst_e2e_decode; docs/METHODOLOGY.md, "Burst"): at each
 * context and concurrency C, a finite burst of requests (C ×
 * requests_per_concurrency by default) sent closed-loop at concurrency C,
 * each to its end. Its figure is what a client sees, admission, scheduling,
 * prefill and completion included:
 *
 *     aggregate_tps = Σ completion_tokens / profiling wall time
 *
 * (first request's start → last request's end). Each cell has the
 * client-side keys of seed 004's results[] cells and the decode cells'
 * figures, from the same code: each request's sample is decode_sample_of
 * (TTFT to the first content), the cell's statistics decode_sample_stats_of
 * and its JSON decode_cell_json (decode/sample.h,
 * artifact/decode_matrix.h). */
#ifndef ANVIL_DECODE_BURST_H
#define ANVIL_DECODE_BURST_H

#include <stdbool.h>
#include <stddef.h>

#include "artifact/decode_matrix.h"
#include "decode/sample.h"
#include "observe/observe.h"
#include "run/run.h"

/* Seed 004's metadata.burst_requests_per_concurrency. */
#define BURST_REQUESTS_PER_CONCURRENCY 5

struct burst_config {
    struct run_config base;     /* copied from the decode command's run settings; per cell
                                   burst_run sets input_len (the context), concurrency, num_prompts,
                                   warmup, the closed loop, no duration window, synthetic prompts
                                   without a shared prefix or length ranges, and out (below);
                                   output_len (max_tokens) stays the base's */
    const long *concurrency;    /* requests in flight per burst, each ≥ 1; borrowed */
    size_t n_concurrency;
    const long *contexts;       /* prompt tokens, each ≥ 0 (0: a minimal prompt); borrowed */
    size_t n_contexts;
    long requests_per_concurrency;  /* a burst at C sends C × this many (seed 004: 5) */
    long request_count;         /* every burst sends this many instead; 0 = C × requests_per_concurrency */
    long warmup_requests;       /* unmeasured requests before each burst */
    const char *out_dir;        /* each burst's artifact: <out_dir>/burst-<context>-c<C>.json;
                                   NULL = base.out_dir, else "results"; borrowed */
};

/* Fills *out from a copy of *base for the lists (borrowed: they must
 * outlive burst_run): requests_per_concurrency 5, request_count 0, no
 * warm-up, out_dir NULL. Returns 0, or -1 with a message in err when a list
 * is empty, a concurrency is below 1 or a context below 0. */
int burst_config_from_run(struct burst_config *out, const struct run_config *base, const long *concurrency,
                          size_t n_concurrency, const long *contexts, size_t n_contexts, char *err,
                          size_t errlen);

/* One burst: a burst_results entry. */
struct burst_cell {
    long concurrency, context_tokens;
    long request_count_target;  /* requests the burst was to send */
    long warmup_request_count;
    double measurement_s;       /* profiling wall time: first measured start → last end, s */
    double measurement_wall_s;  /* the same (a burst has no window to tell apart) */
    long client_output_tokens;  /* Σ output tokens of completed requests */
    const char *aggregate_source;   /* "openai_usage" (every completed request's usage), or
                                       "client_chunks" (some counted by their chunks); static */
    double aggregate_tps;       /* client_output_tokens / measurement_s */
    double per_request_avg_tps; /* aggregate_tps / concurrency */
    struct decode_sample_stats stats;   /* over samples, as a decode cell's */
    long request_count;         /* measured requests sent */
    long completed_request_count;
    struct decode_request_sample *samples;  /* completed requests, by request index; owned */
    size_t n_samples;
    long total_tokens;          /* = client_output_tokens */
    double wall_time_s;         /* the whole run: discovery, calibration, warm-ups, burst, artifact */
    long num_completed, num_errors;
    /* how the run went: not rendered */
    bool sent;                  /* requests were sent: the cell is rendered */
    enum run_status status;
    char error[1024];           /* why, when the run failed or requests failed ("" else) */
    char artifact_path[4096];
    struct observe_report *observe; /* the run's server and hardware report; owned; NULL = none */
};

/* Computes c's figures from c->samples (completed or not, as the seed's
 * cells hold them), c->concurrency, c->client_output_tokens and
 * c->measurement_s: c->stats (decode_sample_stats_of), aggregate_tps and
 * per_request_avg_tps. Returns 0, or -1 when memory runs out. */
int burst_cell_aggregate(struct burst_cell *c);

struct burst_result {
    struct burst_cell *cells;   /* context-major, then concurrency, in config order; owned */
    size_t n;
};

/* Runs every burst of c (one run_execute each; messages to c->base.log). A
 * burst that fails is recorded in its cell and the next one runs. Fills
 * *out (release with burst_result_free). Returns 0 when every burst
 * completed all its requests, else -1 (cells say which and why; out->n 0
 * when memory runs out). */
int burst_run(const struct burst_config *c, struct burst_result *out);

/* One burst_results entry (artifact/decode_matrix.h's decode_cell,
 * benchmark_mode "burst", written by decode_burst_cell_table: the keys of
 * seed 004's results[] cells that a burst has, in the seed's order, less
 * the window's server and gate figures). Undefined numbers are null, as in
 * the decode cells. Fills *out (owned: decode_cell_free). Returns 0, or -1
 * when memory runs out. */
int burst_cell_typed(const struct burst_cell *c, struct decode_cell *out);

/* Seed 004's methodology.burst_e2e_decode entry: name, present (ran),
 * status ("measured", or "not run; use --run-burst"), formula, notes.
 * Fills *out (owned). Returns 0, or -1 when memory runs out. */
int burst_methodology(bool ran, struct decode_method *out);

/* Frees what c owns (safe on an emptied one). */
void burst_cell_free(struct burst_cell *c);

/* Frees every cell and empties r. */
void burst_result_free(struct burst_result *r);

#endif
