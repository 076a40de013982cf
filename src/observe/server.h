/* server.h — a run's /metrics readings and what they say over its
 * measurement window: counter deltas, gauge summaries, speculative-decoding
 * acceptance, engine steps, prefix-cache hit rate, KV pool size, server-side
 * queue/prefill time estimated from histogram buckets, and the cross-checks
 * against what the client measured (docs/METHODOLOGY.md, "Server metrics").
 *
 * The series lives on the measuring loop's thread (readings arrive through a
 * sampler's collect hook); srv_summarize is a pure function of it. */
#ifndef ANVIL_OBSERVE_SERVER_H
#define ANVIL_OBSERVE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "observe/engines.h"
#include "observe/window.h"

/* The readings of one run, in the order they were collected. Histograms and
 * raw counters (srv_detail) are kept for every boundary reading and the
 * SRV_SERIES_KEEP readings before each (a boundary's "before" reading is one
 * of them) and for the newest readings; older periodic readings keep only
 * their scalar values, so a long run at a short interval stays small. */
struct srv_series {
    struct srv_reading *r;
    size_t n, cap;
    bool *keep;                 /* per reading: its detail is pinned */
};

#define SRV_SERIES_KEEP 4

/* Appends *r (moved: the series owns its detail now; *r is zeroed) and drops
 * the detail of periodic readings no boundary needs. Returns 0, or -1 when
 * memory runs out (r is freed then). Cost O(1) amortized. */
int srv_series_add(struct srv_series *s, struct srv_reading *r);

/* Frees every reading. */
void srv_series_free(struct srv_series *s);

/* What SGLang's /server_info (or /get_server_info) said; NaN = not said. */
struct srv_info {
    double max_total_num_tokens;        /* the KV pool, tokens */
    double avg_spec_accept_length;      /* internal_states[0]: lifetime mean acceptance length */
};

/* What the client measured over the window, for derived figures and
 * cross-checks. */
struct srv_client {
    int64_t window_start, window_end;   /* CLOCK_MONOTONIC ns */
    enum obs_rule rule;                 /* OBS_COVER with --num-prompts, OBS_INTERPOLATE in duration mode */
    double output_tokens;               /* output tokens the client received in the window; NaN unknown */
    double ttft_mean_ms;                /* mean TTFT of completed requests; NaN unknown */
    long concurrency;                   /* requests in flight offered (closed loop) or capped; 0 = none */
    long tokens_per_request;            /* planned prompt + output tokens; 0 = unknown (no capacity check) */
    double prompt_tokens;               /* Σ prompt tokens (usage.prompt_tokens, else planned) of the
                                           requests whose prompt the server processed in the window:
                                           llama.cpp's prefix hit rate; NaN or 0 = unknown */
    double prompt_requests;             /* how many requests that sum holds (llama.cpp's mean prefill) */
};

/* One histogram over the window: count and mean are exact (Δcount, Δsum);
 * the percentiles are estimates from the buckets (srv_hist_quantile), with
 * the bounds of the bucket each falls in. Seconds. */
struct srv_hist_summary {
    double count, mean;
    double p50, p90, p99;
    double p99_lo, p99_hi;
};

/* A raw counter's change over the window. */
struct srv_raw_delta {
    char *key;                  /* series key (prom_series_key); owned */
    double delta;
};

struct srv_summary {
    bool available;             /* the window's figures could be computed */
    char reason[512];           /* why not, when !available */
    enum srv_engine engine;     /* the table the readings were read with */
    int scrapes_ok, scrapes_failed;
    char last_error[400];       /* the last failed scrape's reason, "" when none */
    double max_bytes, max_scrape_ms, max_late_ms;   /* the largest body, GET and lateness (t_sent − t_due) */
    enum obs_rule rule;
    /* The readings the counters' boundary values come from, as midpoints
     * relative to their boundary (ms; negative = before; NaN = none on that
     * side), and the weight of the later one (obs_pick). */
    double start_lo_ms, start_hi_ms, start_w, end_lo_ms, end_hi_ms, end_w;
    double window_s;
    double delta[SV_N];         /* counters: change over the window; NaN = absent (gauges NaN) */
    /* counters: change from the pre-run reading (observe_prepare, after
     * anything the run sent before the load) to the post-run one (every
     * request of the load ended): exactly the load's requests, warm-ups
     * included; NaN = absent, either reading failed, or it went backwards */
    double run_delta[SV_N];
    int n_pos;
    double pos_delta[SRV_MAX_POS];
    struct obs_gauge gauge[SV_GAUGE_END_];  /* gauges over the window */
    struct srv_hist_summary hist[SVH_N];
    /* derived, under seed 004's names where it has them (NaN = not available) */
    double server_output_tokens;        /* Δ generation tokens */
    double server_gen_throughput;       /* Δ generation tokens / window, tokens/s */
    double spec_accept_rate;            /* accepted / draft tokens (vLLM); SGLang: its gauge's mean */
    double spec_accept_length;          /* 1 + accepted / drafts (vLLM); SGLang: Δgen / Δverify calls,
                                           else /server_info, else its gauge */
    const char *spec_source;            /* "counters", "server_info", "gauge", or NULL */
    int n_pos_accept;
    double pos_accept[SRV_MAX_POS];     /* Δ accepted at position i / Δ drafts */
    double engine_steps;                /* seed 004: drafts + max(0, out − (accepted + drafts));
                                           SGLang: out / accept length */
    double accept_len_effective;        /* out / engine_steps */
    double steps_per_s;                 /* engine_steps / window (= aggregate tok/s / accept_len_effective) */
    double batch_steps, batch_steps_per_s, tokens_per_batch_step;  /* engine iterations */
    double prefix_cache_hit_rate;       /* Δ hits / Δ queries; llama.cpp (no such counters): 1 − Δ prompt
                                           tokens processed / the client's Σ prompt tokens */
    const char *prefix_source;          /* "counters", "llamacpp:prompt_tokens_total vs usage", NULL */
    double kv_pool_tokens, kv_block_size;
    double avg_running_reqs, max_running_reqs, avg_queue_reqs, max_queue_reqs, queue_fraction;
    int underfilled;                    /* 1/0: the server never ran as many as offered; -1 unknown */
    int capacity_limited;               /* 1/0: the KV pool cannot hold concurrency × tokens; -1 unknown */
    /* cross-checks */
    double client_output_tokens;
    double token_excess;                /* server − client output tokens */
    bool other_traffic;                 /* the server generated more than the client received
                                           (beyond max(1%, 16 tokens)): not this run's alone */
    double ttft_client_ms, ttft_server_ms, queue_ms, prefill_ms, transfer_ms;  /* means; llama.cpp's
                                           prefill_ms: Δ prompt_seconds_total / the window's requests */
    /* gauges read over under OBS_GAUGE_MIN_COVERAGE of the window are unavailable (NaN above,
       underfilled -1): why, "" when every gauge read is available */
    char gauge_reason[300];
    double gauge_coverage;              /* running_requests' coverage (obs_gauge); NaN = not read */
    size_t n_raw;
    struct srv_raw_delta *raw;          /* owned */
};

/* Computes *out from the series over c's window (info may be NULL). A
 * window without a usable reading before and after it, a counter that went
 * backwards (the server restarted) or a reading read with another table
 * makes the summary unavailable, with the reason. Returns 0, or -1 when
 * memory runs out. srv_summary_free releases it. */
int srv_summarize(const struct srv_series *s, const struct srv_client *c, const struct srv_info *info,
                  struct srv_summary *out);

/* Frees what s owns. */
void srv_summary_free(struct srv_summary *s);

#endif
