/* metrics.h — the simulator's counters and histograms and their Prometheus
 * text form under the names of the server --flavor impersonates: vllm:*
 * (default and vllm), sglang:*, llamacpp:*. Engine gauges (running,
 * waiting, KV usage, prefix cache, speculative decoding) are read from the
 * engine at scrape time, so /metrics reports its true state. */
#ifndef ANVIL_SIM_METRICS_H
#define ANVIL_SIM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "sim/faults.h"

struct sim_engine;

#define SIM_HIST_MAX_BUCKETS 32

/* A Prometheus histogram in seconds: counts per bucket (not cumulative;
 * the last is +Inf), sum and count. */
struct sim_hist {
    const double *le;            /* upper bounds, s (static) */
    size_t n;                    /* bounds, <= SIM_HIST_MAX_BUCKETS - 1 */
    uint64_t counts[SIM_HIST_MAX_BUCKETS];
    double sum;
    uint64_t count;
};

/* The request-level truth. Gauges are requests; counters are tokens or
 * requests since start. */
struct sim_metrics {
    int flavor;                   /* enum sim_flavor: names and buckets */
    int64_t running;              /* generation requests accepted, not yet finished */
    uint64_t prompt_tokens[2];    /* prompt tokens of accepted requests; [1] streamed */
    uint64_t generation_tokens[2];/* output tokens handed to clients (EOS included); [1] streamed */
    uint64_t requests[2];         /* accepted generation requests; [1] streamed */
    uint64_t success_stop;        /* finished with finish_reason "stop" */
    uint64_t success_length;      /* finished with finish_reason "length" */
    uint64_t success_abort;       /* ended early: client closed, server shut down, disconnect fault */
    uint64_t success_error;       /* ended by an injected in-stream error */
    uint64_t client_closed;       /* subset of success_abort: the client went away */
    uint64_t predicted_at_end;    /* output tokens of replies that ended with stop or length, added as they
                                     end (llama.cpp's tokens_predicted_total) */
    uint64_t rejected;            /* generation requests answered 4xx */
    uint64_t faults[SIM_FAULT_KINDS]; /* injected faults by kind */
    double prompt_seconds;        /* Σ arrival → first token of finished requests, s */
    double decode_seconds;        /* Σ first token → end of finished requests, s */
    int64_t start_ns;             /* sim_metrics_init's clock_now_ns (throughput gauges) */
    double start_unix;            /* its wall-clock time, s (vLLM's _created series) */
    struct sim_hist ttft;         /* arrival → first output token, s */
    struct sim_hist e2e;          /* arrival → end of reply, s */
    /* vLLM's request phases, observed when a request that sent a first token ends */
    struct sim_hist queue;        /* arrival → first scheduled (engine admission) */
    struct sim_hist prefill;      /* first scheduled → first token */
    struct sim_hist decode;       /* first token → end */
    struct sim_hist inference;    /* first scheduled → end */
    struct sim_hist itl;          /* between one request's token batches (SGLang: per token) */
};

/* Zeroes m and picks the flavor's histogram buckets (vLLM's or SGLang's). */
void sim_metrics_init(struct sim_metrics *m, int flavor);

/* Counts a generation request accepted with prompt_tokens tokens: running + 1. */
void sim_metrics_on_start(struct sim_metrics *m, int64_t prompt_tokens, bool stream);

/* Counts tokens output tokens sent to a client. */
void sim_metrics_on_tokens(struct sim_metrics *m, int64_t tokens, bool stream);

/* Observes a time to first token of ttft_ns. */
void sim_metrics_on_first_token(struct sim_metrics *m, int64_t ttft_ns);

/* Counts the end of an accepted request that generated `tokens` after
 * e2e_ns (of which ttft_ns to the first token; 0 when none was sent):
 * running - 1 and one success counter: finish "stop"/"length"/"error", or
 * NULL for an abort (client_closed says whether the client caused it); a
 * completed one (stop, length) adds its tokens to predicted_at_end. */
void sim_metrics_on_end(struct sim_metrics *m, const char *finish, int client_closed, int64_t tokens,
                        int64_t e2e_ns, int64_t ttft_ns);

/* Observes one ended request's phases (ns): queue (arrival → admission),
 * prefill (admission → first token), decode (first token → end). */
void sim_metrics_on_phases(struct sim_metrics *m, int64_t queue_ns, int64_t prefill_ns, int64_t decode_ns);

/* Observes gap_ns between two of one request's token batches, the later
 * carrying tokens tokens: once (vLLM), or gap/tokens observed tokens
 * times with the whole gap added to the sum (SGLang's way). */
void sim_metrics_on_itl(struct sim_metrics *m, int64_t gap_ns, int64_t tokens);

/* Appends the Prometheus text exposition (format 0.0.4) of m and, when eng
 * is not NULL (engine mode), the engine's gauges and counters, to out, in
 * the naming of m->flavor, each series labelled with model (escaped) as
 * that server does. Values print as floats ("12.0") like prometheus_client
 * (llama.cpp: as its own server prints them). Returns 0, or -1 when out is
 * full. */
int sim_metrics_render(const struct sim_metrics *m, const struct sim_engine *eng,
                       const char *model, struct buf *out);

#endif
