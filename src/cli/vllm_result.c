/* vllm_result.c — `anvil run --result-format vllm`: vLLM's result file
 * from the artifact as written and the run's records. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "artifact/vllm_result.h"
#include "cli/run_cli.h"

/* An instant a completed request started (+1) or ended (-1). */
struct edge {
    int64_t t;
    int d;
};

static int by_time(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d - y->d;     /* an end before a start at the same instant: [start, end) */
}

/* The peak number of completed requests in flight at once (vLLM's
 * max_concurrent_requests: a sweep over [start, end), ends first); -1 when
 * memory runs out. */
static long peak_in_flight(const struct req_record *recs, int n)
{
    struct edge *e = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *e);
    if (!e)
        return -1;
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        const struct req_record *r = &recs[i];
        if (r->t_start && !r->warmup && r->fail == FAIL_NONE) {
            e[k++] = (struct edge){r->t_start, +1};
            e[k++] = (struct edge){r->t_end, -1};
        }
    }
    qsort(e, k, sizeof *e, by_time);
    long now = 0, peak = 0;
    for (size_t i = 0; i < k; i++)
        peak = (now += e[i].d) > peak ? now : peak;
    free(e);
    return peak;
}

static void fill_metrics(const struct run_cli *r, const struct run_result *res, struct vllm_result *v)
{
    v->n_pcts = r->pct.n_pcts < VLLM_MAX_PCTS ? r->pct.n_pcts : VLLM_MAX_PCTS;
    memcpy(v->pcts, r->pct.pcts, (size_t)v->n_pcts * sizeof v->pcts[0]);
    for (int i = 0; i < r->pct.n_metrics && v->n_metrics < VLLM_MAX_METRICS; i++) {
        struct pct_summary s;
        struct rec_iter it;
        rec_iter_array(&it, res->records, res->n_records);
        if (pct_summarize(r->pct.metrics[i], &r->pct, &it, r->c.out.pct, &s) != 0)
            continue;
        struct vllm_metric *m = &v->metrics[v->n_metrics++];
        snprintf(m->name, sizeof m->name, "%s", r->pct.metrics[i]);
        m->mean = s.mean;
        m->median = s.median;
        m->std = s.std;
        memcpy(m->at, s.at, sizeof m->at);
    }
}

int run_write_vllm_result(const struct run_cli *r, const struct run_result *res)
{
    struct benchmark b;
    char err[1400], path[4200], date[32];
    if (benchmark_read_file(res->artifact_path, &b, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "anvil run: vLLM result not written: %s\n", err);
        return -1;
    }
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y%m%d-%H%M%S", localtime(&now));
    const struct run_summary *s = &res->summary;
    struct vllm_result v = {
        .date = date, .backend = b.endpoint && !strcmp(b.endpoint, "completions") ? "openai" : "openai-chat",
        .model_id = b.model, .tokenizer_id = b.model, .num_prompts = s->requests,
        .request_rate = isnan(b.request_rate) ? INFINITY : b.request_rate,
        .burstiness = isnan(b.burstiness) ? 1.0 : b.burstiness,
        .max_concurrency = b.concurrency > 0 ? b.concurrency : ARTIFACT_NONE,
        .duration = s->duration_ms / 1000.0, .completed = s->completed, .failed = s->failed,
        .total_input_tokens = s->prompt_tokens, .total_output_tokens = s->output_tokens,
        .request_throughput = s->request_throughput, .request_goodput = s->goodput_rps,
        .output_throughput = s->output_throughput, .total_token_throughput = s->total_token_throughput,
        .max_output_tokens_per_s = s->peak_output_tps_1s,
        .max_concurrent_requests = peak_in_flight(res->records, res->n_records),
    };
    if (r->c.compat.backend)
        v.backend = r->c.compat.backend;
    fill_metrics(r, res, &v);
    vllm_result_path(res->artifact_path, path, sizeof path);
    cJSON *j = vllm_result_json(&v);
    int rc = j ? artifact_write_file(path, j, err, sizeof err) : -1;
    if (!j)
        snprintf(err, sizeof err, "out of memory");
    cJSON_Delete(j);
    benchmark_free(&b);
    FILE *to = strcmp(res->artifact_path, "-") ? stdout : stderr;
    if (rc == 0)
        fprintf(to, "vLLM result: %s\n", path);
    else
        fprintf(stderr, "anvil run: vLLM result not written: %s\n", err);
    return rc;
}
