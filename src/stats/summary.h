/* summary.h — one run's numbers: counts, throughputs over the run's duration,
 * and the distribution of every per-request metric over completed requests. */
#ifndef ANVIL_STATS_SUMMARY_H
#define ANVIL_STATS_SUMMARY_H

#include <stdbool.h>

#include "stats/dist.h"
#include "stats/invariants.h"
#include "stats/record.h"
#include "stats/steady.h"
#include "stats/tokens.h"

/* Indexes of the distributions a summary holds. */
enum dist_id {
    D_TTFT, D_TTFO, D_E2E, D_GENERATION, D_VISIBLE_GENERATION, D_TPOT, D_DECODE_TOK_S,
    D_PREFILL_TOK_S, D_PROMPT_TOKENS, D_OUTPUT_TOKENS, D_ITL_CHUNK, D_ITL_TOKEN,
    D_TOKENS_PER_CHUNK, D_HEADERS, D_FIRST_BYTE, D_FIRST_EVENT, D_SECOND_OUTPUT,
    D_TPS_PER_USER, D_SEND_LATENESS, D_SCHED_TTFT, D_SCHED_E2E, D_COUNT
};

struct run_summary {
    int requests;               /* measured requests planned */
    int sent, completed, failed;
    int cut;                    /* duration mode: still running when the window closed */
    int warmup_requests;        /* duration mode: sent before the window opened */
    double peak_output_tps_1s;  /* tokens/s: most output tokens arriving within any 1 s window
                                   (stats/peak.h: exact, or within one 1 ms bin's tokens) */
    double aggregate_tps;       /* duration mode: output tokens inside the window / its length; else NaN */
    double window_tokens;       /* duration mode: output tokens inside the window (stats/tokens.h) */
    struct token_window window; /* duration mode: how they were counted */
    double duration_ms;         /* first start → last end over measured requests sent */
    long output_tokens;         /* Σ over completed requests */
    long prompt_tokens;         /* Σ usage.prompt_tokens over completed requests */
    int prompt_token_reports;   /* completed requests that reported prompt tokens */
    double output_throughput;   /* tokens/s: output_tokens / duration */
    double total_token_throughput; /* tokens/s: (prompt + output) / duration */
    double request_throughput;  /* requests/s: completed / duration */
    int good;                   /* completed requests meeting every SLO (when any is set) */
    double goodput_rps;         /* good / duration; NaN without SLOs */
    int content_chunks, reasoning_chunks;
    int tool_call_chunks, tool_calls;   /* Σ over completed requests: tool-call chunks, tool calls opened */
    long events;                /* SSE events received by every measured request sent */
    int by_source[TOKENS_SOURCES];      /* completed requests by output_token_source */
    long cached_tokens;         /* Σ usage cached_tokens; with cached_reports > 0 */
    int cached_reports;
    int usage_over_max;         /* completed requests whose usage reports more tokens than max_tokens */
    int failed_by[FAIL_OTHER + 1];  /* failed requests per enum fail_kind */
    int prompt_mismatch;        /* completed requests whose prompt_tokens differ from the planned count
                                   by more than max(4, 1%), or were not reported */
    enum pct_method method;
    struct dist d[D_COUNT];
    struct invariants inv;      /* per-request checks (invariants.h) */
    struct dist loop_lag;       /* the client's event-loop lag probe, ms */
    bool loop_lagged;           /* loop lag p99 over 1 ms (from ≥ 100 samples) */
    bool sends_late;            /* no cap, and send lateness p99 over 1 ms: the client sent late */
    bool clock_stamps_lagged;   /* the loop lagged and over SUMMARY_CLOCK_STAMP_SHARE of arrivals
                                   were dated by the client's clock, not the kernel's */
    int first_output_merged;    /* completed requests whose first answer shares its arrival time
                                   with later output (record.h): their TTFT is an upper bound */
    bool client_bound;          /* sends_late, clock_stamps_lagged or first_output_merged > 0: the
                                   client's own lateness changed numbers (a lagging loop alone,
                                   with kernel-stamped arrivals, is lag, not client-bound) */
    struct steady_state steady; /* the steady-state window and its figures (stats/steady.h) */
};

/* Service-level objectives of a good request (vLLM's --goodput): each a
 * bound in ms, NaN when not set. */
struct slo {
    double ttft_ms, tpot_ms, e2el_ms;
};

/* Parses "ttft:MS", "tpot:MS" or "e2el:MS" into *s (also several, comma
 * separated); bounds already set in *s stay. Returns 0, or -1 on anything
 * else, including a bound that is set already (given twice). */
int slo_parse(const char *spec, struct slo *s);

/* Whether any bound is set. */
bool slo_any(const struct slo *s);

struct summary_opts {
    enum pct_method method;
    bool ignore_eos;            /* ignore_eos was sent: output tokens must equal max_tokens */
    const double *loop_lag_ms;  /* the driver's lag probe samples (ms), or NULL */
    bool lateness_is_client;    /* no concurrency cap: late sends can only be the client's fault */
    size_t n_loop_lag;
    bool check_prompt_tokens;   /* usage.prompt_tokens must be each request's planned count ± max(4, 1%) */
    struct slo slo;             /* goodput bounds */
    int64_t window_start, window_end;   /* duration mode window (CLOCK_MONOTONIC ns); 0 = none */
    long stamps_kernel, stamps_clock;   /* arrival times dated by the kernel / the client's clock */
    struct steady_opts steady;  /* the steady state's target (steady_opts_of) and ramp; zero: none */
};

/* Share of arrival times dated by the client's clock above which a lagging
 * loop is taken to have changed numbers (the truth tests hold ≤ 1%). */
#define SUMMARY_CLOCK_STAMP_SHARE 0.01

/* Computes the summary of n measured records. o->check_prompt_tokens whether
 * usage.prompt_tokens must match the planned count (a server may truncate or re-template a prompt:
 * servers that truncate prompts or count differently are flagged; requests
 * with no planned count are skipped); o->slo defines a good request
 * (every bound met; an undefined TPOT meets its bound). Records flagged
 * warmup are left out, and cut ones (duration mode) are counted apart; with
 * a window, aggregate_tps counts the output tokens of every record whose
 * chunks arrived inside it (docs/METHODOLOGY.md, duration mode); the steady
 * state is judged under o->steady (stats/steady.h). Returns 0, or -1
 * when memory runs out. */
int summary_compute(const struct req_record *recs, int n, const struct summary_opts *o,
                    struct run_summary *out);

/* summary_compute over the records of it (summary_compute wraps an array
 * in one), read in at most five passes: the count, the measures, and the
 * steady state's three. Memory does not grow with the chunks: one double
 * per record for each per-request distribution (152 bytes a record), the
 * per-chunk ITL in value columns (exact up to VCOL_EXACT_MAX gaps, then a
 * histogram whose percentiles are within HIST_REL_ERROR: d[].rel_error,
 * stats/hist.h), and the peak's events or bins (stats/peak.h). Returns 0,
 * or -1 when memory runs out or on the iterator's error (it->err). */
int summary_compute_iter(struct rec_iter *it, const struct summary_opts *o, struct run_summary *out);

#endif
