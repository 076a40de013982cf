/* vllm_result.h — `vllm bench serve`'s result JSON (its --save-result
 * file), written beside anvil's artifact with `anvil run --result-format
 * vllm`, so dashboards and scripts keyed on its names (mean_ttft_ms,
 * p99_itl_ms, output_throughput, ...) keep working. The keys, their order
 * and units are vLLM's (vllm/benchmarks/serve.py, without --save-detailed):
 * durations in s, latencies in ms, request_rate "inf" for no rate. */
#ifndef ANVIL_ARTIFACT_VLLM_RESULT_H
#define ANVIL_ARTIFACT_VLLM_RESULT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define VLLM_MAX_METRICS 8
#define VLLM_MAX_PCTS 16

/* One of --percentile-metrics: <stat>_<name>_ms keys. */
struct vllm_metric {
    char name[8];               /* ttft, tpot, itl, e2el */
    double mean, median, std;   /* ms; NaN = no sample (written as null) */
    double at[VLLM_MAX_PCTS];   /* ms, at vllm_result.pcts */
};

struct vllm_result {
    const char *date;           /* local time, "%Y%m%d-%H%M%S" */
    const char *backend;        /* also written as endpoint_type */
    const char *label;          /* NULL = null */
    const char *model_id, *tokenizer_id;
    long num_prompts;
    double request_rate;        /* req/s; INFINITY = "inf" */
    double burstiness;
    long max_concurrency;       /* ARTIFACT_NONE = null (no cap) */
    double duration;            /* s */
    long completed, failed, total_input_tokens, total_output_tokens;
    double request_throughput, request_goodput;     /* req/s; goodput NaN = null (no --goodput) */
    double output_throughput, total_token_throughput, max_output_tokens_per_s;     /* tok/s */
    long max_concurrent_requests;
    double pcts[VLLM_MAX_PCTS]; /* --metric-percentiles */
    int n_pcts;
    struct vllm_metric metrics[VLLM_MAX_METRICS];
    int n_metrics;
};

/* r as vLLM's result object. Caller deletes; NULL when memory runs out. */
cJSON *vllm_result_json(const struct vllm_result *r);

/* Where the vLLM result of the artifact at path goes: path with its
 * ".json" replaced by ".vllm.json" (appended when it has none), in out
 * (cap bytes). */
void vllm_result_path(const char *artifact_path, char *out, size_t cap);

#endif
