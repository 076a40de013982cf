/* engines.h — what the servers' /metrics names mean: one table per engine
 * (vLLM `vllm:`, SGLang `sglang:`, llama.cpp `llamacpp:`, TGI `tgi_`) from
 * the concepts anvil derives from (running requests, generation tokens,
 * speculative-decoding counters, queue-time histograms, ...) to the series
 * that carry them, and the extraction of one scrape into a reading: those
 * concepts' values, plus every raw counter for engines without a table.
 *
 * Names follow the recorded scrapes in tests/data/fixtures/<engine>/metrics.txt and
 * the servers' sources (vLLM v1 loggers.py, SGLang's metrics collector,
 * llama.cpp server.cpp, TGI's docs/source/reference/metrics.md); renamed
 * series are listed under both names, the newer first. Series repeated per
 * data-parallel engine (vLLM engine="N", SGLang dp_rank) are summed; series
 * repeated per tensor- or pipeline-parallel rank (SGLang tp_rank, pp_rank,
 * moe_ep_rank other than "0") are duplicates and skipped; fractions (KV
 * usage) take the largest. */
#ifndef ANVIL_OBSERVE_ENGINES_H
#define ANVIL_OBSERVE_ENGINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "observe/prom.h"

enum srv_engine { SRV_UNKNOWN, SRV_VLLM, SRV_SGLANG, SRV_LLAMACPP, SRV_TGI };

/* The engine's name as artifacts write it: "vllm", "sglang", "llama.cpp",
 * "tgi", "unknown". Static. */
const char *srv_engine_name(enum srv_engine e);

/* Whether e's generation-token counter grows when a request completes, not
 * as its tokens are generated: llama.cpp adds a request's tokens to
 * tokens_predicted_total when it finishes normally (server.cpp,
 * metrics.on_prediction), never for a cancelled one. Over a window that
 * cuts streams it counts too few, so it neither dates the window's tokens
 * nor cross-checks the client's count there. */
bool srv_gen_counted_at_end(enum srv_engine e);

/* e's own name for its engine iterations (SV_BATCH_STEPS): "n_decode_total"
 * (llama.cpp's llama_decode calls), "iteration_tokens_total_count" (vLLM),
 * "batch_inference_count" (TGI); NULL when it reports none. Static. */
const char *srv_iterations_name(enum srv_engine e);

/* Which table a scrape's names fit: the first of vllm:, sglang:, llamacpp:,
 * tgi_ that any sample name starts with, else SRV_UNKNOWN. Cost O(samples). */
enum srv_engine srv_engine_detect(const struct prom_snapshot *s);

/* Scalar concepts. Gauges are sampled; counters are differenced over the
 * window. Units in the comments are the servers'. */
enum srv_value {
    SV_RUNNING,         /* gauge: requests being generated (batch) */
    SV_WAITING,         /* gauge: requests queued */
    SV_KV_USAGE,        /* gauge: fraction 0..1 of the KV cache in use */
    SV_KV_USED_TOKENS,  /* gauge: tokens held in the KV cache */
    SV_KV_POOL_TOKENS,  /* gauge: KV cache capacity in tokens (SGLang max_total_num_tokens;
                           vLLM: Σ num_gpu_blocks × block_size of cache_config_info) */
    SV_KV_BLOCK_SIZE,   /* tokens per KV block (vLLM cache_config_info) */
    SV_GEN_THROUGHPUT,  /* gauge: the server's own tokens/s (SGLang) */
    SV_UTILIZATION,     /* gauge: SGLang's scheduler utilization */
    SV_SPEC_ACCEPT_LEN, /* gauge: SGLang's windowed mean acceptance length */
    SV_SPEC_ACCEPT_RATE,/* gauge: SGLang's windowed acceptance rate */
    SV_CACHE_HIT_RATE,  /* gauge: SGLang's windowed prefix-cache hit rate */
    SV_GAUGE_END_,      /* the counters follow */
    SV_PROMPT_TOKENS = SV_GAUGE_END_,   /* counter: prompt tokens processed */
    SV_GEN_TOKENS,      /* counter: output tokens generated */
    SV_REQUESTS,        /* counter: requests finished (vLLM: every finished_reason) */
    SV_PREEMPTIONS,     /* counter: preemptions / retractions */
    SV_PREFIX_QUERIES,  /* counter: prompt tokens looked up in the prefix cache */
    SV_PREFIX_HITS,     /* counter: of those, found cached */
    SV_SPEC_DRAFTS,     /* counter: vLLM drafts (decode steps that verified drafts) */
    SV_SPEC_DRAFT_TOKENS,   /* counter: draft tokens proposed */
    SV_SPEC_ACCEPTED,   /* counter: draft tokens accepted */
    SV_SPEC_VERIFY_CALLS,   /* counter: SGLang speculative verify calls */
    SV_BATCH_STEPS,     /* counter: engine iterations (vLLM iteration_tokens_total_count,
                           llama.cpp n_decode_total, TGI batch_inference_count) */
    SV_BATCH_TOKENS,    /* counter: tokens scheduled over those iterations (vLLM _sum) */
    SV_PROMPT_SECONDS,  /* counter: seconds spent processing prompts (llama.cpp prompt_seconds_total) */
    SV_N
};

/* Histogram concepts, in seconds (SVH_ITER_TOKENS: tokens). */
enum srv_hist_id {
    SVH_QUEUE,          /* arrival (engine core) → first scheduled */
    SVH_PREFILL,        /* first scheduled → first token */
    SVH_DECODE,         /* first token → last token */
    SVH_INFERENCE,      /* first scheduled → last token */
    SVH_TTFT,           /* the server's TTFT: arrival → first token */
    SVH_ITL,            /* inter-token latency */
    SVH_E2E,            /* arrival → end */
    SVH_N
};

/* The concept's name as artifacts write it ("running_requests", ...). Static. */
const char *srv_value_name(enum srv_value v);
const char *srv_hist_name(enum srv_hist_id h);

#define SRV_MAX_POS 32          /* draft positions kept (vLLM's per-position counters) */
#define SRV_HIST_MAX 64         /* buckets kept per histogram */
#define SRV_MAX_RAW 512         /* raw counter series kept per scrape */

/* One histogram summed over its label sets: cumulative counts per upper
 * bound (le ascending, the last +Inf). n = 0: absent. */
struct srv_hist {
    int n;
    double le[SRV_HIST_MAX];
    double cum[SRV_HIST_MAX];
    double count, sum;
};

/* The parts of a reading only window boundaries need: histograms and raw
 * counters (series key → value, keys sorted). Owned by its reading. */
struct srv_detail {
    struct srv_hist hist[SVH_N];
    size_t n_raw;
    char **raw_keys;            /* each malloc'd */
    double *raw;
};

/* One scrape, as the run keeps it. Times are CLOCK_MONOTONIC ns. */
struct srv_reading {
    int64_t t_due;              /* the instant it stands for (boundary or periodic slot) */
    int64_t t_sent, t_done;     /* the GET went out / its last byte arrived */
    int phase;                  /* the caller's (sampler phase, or a pre-/post-run reading) */
    bool ok;
    char error[400];            /* why not ok: fetch or parse error */
    size_t bytes;               /* body size */
    double parse_ms;            /* parse + extraction time */
    enum srv_engine engine;     /* the table it was read with */
    double v[SV_N];             /* NaN = the server does not report it */
    int n_pos;                  /* draft positions reported */
    double pos[SRV_MAX_POS];    /* accepted tokens per draft position (counters) */
    struct srv_detail *detail;  /* owned; NULL once dropped (srv_reading_drop_detail) */
};

/* Fills r's values from snapshot s read with engine e's table (SRV_UNKNOWN:
 * raw counters only). Allocates r->detail (any previous one is freed).
 * Raw counters: every counter sample (not its _created twin) of e's prefix,
 * or of any name for SRV_UNKNOWN, up to SRV_MAX_RAW. Cost O(samples × table
 * rows). Returns 0, or -1 when memory runs out (r->error says so). */
int srv_extract(enum srv_engine e, const struct prom_snapshot *s, struct srv_reading *r);

/* Frees r->detail and sets it NULL. */
void srv_reading_drop_detail(struct srv_reading *r);

/* Frees what r owns (its detail). */
void srv_reading_free(struct srv_reading *r);

/* The upper bound of quantile q (0..1) of histogram h's observations,
 * linearly interpolated inside its bucket as Prometheus' histogram_quantile
 * does (the lower edge of the first bucket is 0; a quantile in the +Inf
 * bucket is the largest finite bound). NaN when h holds no observation.
 * *lo and *hi (may be NULL) get the bucket's bounds. */
double srv_hist_quantile(const struct srv_hist *h, double q, double *lo, double *hi);

#endif
