/* metrics.c — counters, histograms and Prometheus text per flavor (see
 * metrics.h). Names, labels and bucket bounds follow the fixtures
 * tests/data/fixtures/{vllm,sglang,llamacpp}/metrics.txt. */
#include "sim/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "sim/engine.h"
#include "sim/flavor.h"

/* vLLM v1 loggers.py bucket lists; SGLang collector.py defaults. */
static const double vllm_ttft_le[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
                                      0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
                                      640.0, 2560.0};
static const double vllm_e2e_le[] = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
                                     30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
                                     7680.0};
static const double vllm_itl_le[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
                                     1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
static const double sglang_itl_le[] = {0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03,
                                       0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0,
                                       4.0, 6.0, 8.0};
static const double sglang_ttft_le[] = {0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0,
                                        20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0};
static const double sglang_e2e_le[] = {0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0,
                                       20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0, 600.0,
                                       1200.0, 1800.0, 2400.0};

#define N_OF(a) (sizeof(a) / sizeof *(a))

void sim_metrics_init(struct sim_metrics *m, int flavor)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    *m = (struct sim_metrics){.flavor = flavor, .start_ns = clock_now_ns(),
                              .start_unix = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9};
    bool sg = flavor == SIM_FLAVOR_SGLANG;
    m->ttft.le = sg ? sglang_ttft_le : vllm_ttft_le;
    m->ttft.n = sg ? N_OF(sglang_ttft_le) : N_OF(vllm_ttft_le);
    m->e2e.le = sg ? sglang_e2e_le : vllm_e2e_le;
    m->e2e.n = sg ? N_OF(sglang_e2e_le) : N_OF(vllm_e2e_le);
    m->itl.le = sg ? sglang_itl_le : vllm_itl_le;
    m->itl.n = sg ? N_OF(sglang_itl_le) : N_OF(vllm_itl_le);
    /* vLLM's request_latency_buckets serve all four request-phase histograms */
    struct sim_hist *phases[] = {&m->queue, &m->prefill, &m->decode, &m->inference};
    for (size_t i = 0; i < N_OF(phases); i++) {
        phases[i]->le = vllm_e2e_le;
        phases[i]->n = N_OF(vllm_e2e_le);
    }
}

/* n observations of s, adding sum to the sum. */
static void observe_n(struct sim_hist *h, double s, uint64_t n, double sum)
{
    size_t b = 0;
    while (b < h->n && s > h->le[b])
        b++;
    h->counts[b] += n;
    h->sum += sum;
    h->count += n;
}

static void observe(struct sim_hist *h, double s)
{
    observe_n(h, s, 1, s);
}

void sim_metrics_on_phases(struct sim_metrics *m, int64_t queue_ns, int64_t prefill_ns, int64_t decode_ns)
{
    observe(&m->queue, (double)queue_ns / 1e9);
    observe(&m->prefill, (double)prefill_ns / 1e9);
    observe(&m->decode, (double)decode_ns / 1e9);
    observe(&m->inference, (double)(prefill_ns + decode_ns) / 1e9);
}

void sim_metrics_on_itl(struct sim_metrics *m, int64_t gap_ns, int64_t tokens)
{
    double gap = (double)gap_ns / 1e9;
    if (m->flavor == SIM_FLAVOR_SGLANG && tokens > 1)
        observe_n(&m->itl, gap / (double)tokens, (uint64_t)tokens, gap);
    else
        observe(&m->itl, gap);
}

void sim_metrics_on_start(struct sim_metrics *m, int64_t prompt_tokens, bool stream)
{
    m->running++;
    m->requests[stream]++;
    m->prompt_tokens[stream] += (uint64_t)prompt_tokens;
}

void sim_metrics_on_tokens(struct sim_metrics *m, int64_t tokens, bool stream)
{
    m->generation_tokens[stream] += (uint64_t)tokens;
}

void sim_metrics_on_first_token(struct sim_metrics *m, int64_t ttft_ns)
{
    observe(&m->ttft, (double)ttft_ns / 1e9);
}

void sim_metrics_on_end(struct sim_metrics *m, const char *finish, int client_closed, int64_t tokens,
                        int64_t e2e_ns, int64_t ttft_ns)
{
    m->running--;
    if (!finish)
        m->success_abort++;
    else if (!strcmp(finish, "stop"))
        m->success_stop++;
    else if (!strcmp(finish, "error"))
        m->success_error++;
    else
        m->success_length++;
    if (finish && strcmp(finish, "error"))     /* stop or length: a completed reply */
        m->predicted_at_end += (uint64_t)tokens;
    if (client_closed)
        m->client_closed++;
    observe(&m->e2e, (double)e2e_ns / 1e9);
    if (ttft_ns > 0) {
        m->prompt_seconds += (double)ttft_ns / 1e9;
        m->decode_seconds += (double)(e2e_ns - ttft_ns) / 1e9;
    }
}

/* ---- exposition helpers ------------------------------------------------------ */

/* One scrape: where to write and the label set every series carries. */
struct scrape {
    struct buf *out;
    const struct sim_metrics *m;
    const struct sim_engine *eng;
    const char *model;
    const char *pre;     /* labels sorted before model_name, e.g. engine="0" (or NULL) */
    int rc;
};

static void put_label_value(struct scrape *s, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            s->rc |= buf_append(s->out, "\\\\", 2);
        else if (*v == '"')
            s->rc |= buf_append(s->out, "\\\"", 2);
        else if (*v == '\n')
            s->rc |= buf_append(s->out, "\\n", 2);
        else
            s->rc |= buf_append(s->out, v, 1);
    }
}

static void family(struct scrape *s, const char *name, const char *type, const char *help)
{
    s->rc |= buf_printf(s->out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* prometheus_client prints floats with repr(): 12.0, 0.0412, 1e-05. */
static void put_value(struct scrape *s, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        s->rc |= buf_printf(s->out, " %.1f\n", v);
    else
        s->rc |= buf_printf(s->out, " %.10g\n", v);
}

/* name{pre,mid,model_name="M",post} v — labels sorted by name, as
 * prometheus_client prints them; the caller passes mid/post accordingly. */
static void sample(struct scrape *s, const char *name, const char *mid, const char *post, double v)
{
    const char *parts[2] = {s->pre, mid};
    s->rc |= buf_printf(s->out, "%s{", name);
    for (int i = 0; i < 2; i++)
        if (parts[i])
            s->rc |= buf_printf(s->out, "%s,", parts[i]);
    s->rc |= buf_append(s->out, "model_name=\"", 12);
    put_label_value(s, s->model);
    s->rc |= buf_printf(s->out, "\"%s%s}", post ? "," : "", post ? post : "");
    put_value(s, v);
}

/* vLLM (prometheus_client) follows every counter and histogram with a
 * "<base>_created" gauge family holding the series' creation time (unix
 * s): base is the counter's name without _total, or the histogram's. */
static bool with_created(const struct scrape *s)
{
    return s->m->flavor == SIM_FLAVOR_VLLM;
}

static void created_family(struct scrape *s, const char *name, const char *help, char *base, size_t cap)
{
    size_t n = strlen(name);
    bool total = n > 6 && !strcmp(name + n - 6, "_total");
    snprintf(base, cap, "%.*s_created", (int)(total ? n - 6 : n), name);
    family(s, base, "gauge", help);
}

static void created_sample(struct scrape *s, const char *base, const char *mid, const char *post)
{
    const char *parts[2] = {s->pre, mid};
    s->rc |= buf_printf(s->out, "%s{", base);
    for (int i = 0; i < 2; i++)
        if (parts[i])
            s->rc |= buf_printf(s->out, "%s,", parts[i]);
    s->rc |= buf_append(s->out, "model_name=\"", 12);
    put_label_value(s, s->model);
    s->rc |= buf_printf(s->out, "\"%s%s} %.17g\n", post ? "," : "", post ? post : "", s->m->start_unix);
}

static void simple(struct scrape *s, const char *name, const char *type, const char *help, double v)
{
    family(s, name, type, help);
    sample(s, name, NULL, NULL, v);
    if (with_created(s) && !strcmp(type, "counter")) {
        char base[160];
        created_family(s, name, help, base, sizeof base);
        created_sample(s, base, NULL, NULL);
    }
}

/* A histogram as vLLM prints it: buckets, count, sum. extra is a label
 * sorted before "le" (SGLang's is_streaming), or NULL. */
static void histogram(struct scrape *s, const char *name, const char *help, const struct sim_hist *h,
                      const char *extra, bool sum_first)
{
    char series[160], le[64];
    family(s, name, "histogram", help);
    if (sum_first) {
        snprintf(series, sizeof series, "%s_sum", name);
        sample(s, series, extra, NULL, h->sum);
    }
    snprintf(series, sizeof series, "%s_bucket", name);
    uint64_t cum = 0;
    for (size_t i = 0; i <= h->n; i++) {
        cum += h->counts[i];
        char bound[32];
        if (i < h->n)
            snprintf(bound, sizeof bound, "%g%s", h->le[i], h->le[i] == floor(h->le[i]) ? ".0" : "");
        else
            snprintf(bound, sizeof bound, "+Inf");
        snprintf(le, sizeof le, "%s%sle=\"%s\"", extra ? extra : "", extra ? "," : "", bound);
        sample(s, series, le, NULL, (double)cum);
    }
    snprintf(series, sizeof series, "%s_count", name);
    sample(s, series, extra, NULL, (double)h->count);
    if (!sum_first) {
        snprintf(series, sizeof series, "%s_sum", name);
        sample(s, series, extra, NULL, h->sum);
    }
    if (with_created(s)) {
        created_family(s, name, help, series, sizeof series);
        created_sample(s, series, extra, NULL);
    }
}

static double sum2(const uint64_t v[2]) { return (double)(v[0] + v[1]); }

static double kv_usage(const struct sim_engine *eng)
{
    return eng ? (double)sim_engine_kv_used_blocks(eng) / (double)sim_engine_kv_blocks(eng) : 0;
}

/* ---- vLLM (and the default flavor) -------------------------------------------- */

static void vllm_requests(struct scrape *s)
{
    const struct sim_metrics *m = s->m;
    simple(s, "vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
           s->eng ? (double)sim_engine_running(s->eng) : (double)m->running);
    simple(s, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
           s->eng ? (double)sim_engine_waiting(s->eng) : 0);
    simple(s, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
           kv_usage(s->eng));
    simple(s, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
           sum2(m->prompt_tokens));
    simple(s, "vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
           sum2(m->generation_tokens));
    family(s, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
    sample(s, "vllm:request_success_total", "finished_reason=\"stop\"", NULL, (double)m->success_stop);
    sample(s, "vllm:request_success_total", "finished_reason=\"length\"", NULL, (double)m->success_length);
    sample(s, "vllm:request_success_total", "finished_reason=\"abort\"", NULL, (double)m->success_abort);
    sample(s, "vllm:request_success_total", "finished_reason=\"error\"", NULL, (double)m->success_error);
    if (with_created(s)) {
        static const char *const reasons[] = {"stop", "length", "abort", "error"};
        char base[64], label[48];
        created_family(s, "vllm:request_success_total", "Count of successfully processed requests.", base, sizeof base);
        for (size_t i = 0; i < N_OF(reasons); i++) {
            snprintf(label, sizeof label, "finished_reason=\"%s\"", reasons[i]);
            created_sample(s, base, label, NULL);
        }
        family(s, "vllm:engine_sleep_state", "gauge", "Engine sleep state; awake = 0 means engine is sleeping; "
               "awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 "
               "means sleep level 2.");
        sample(s, "vllm:engine_sleep_state", NULL, "sleep_state=\"awake\"", 1);
        sample(s, "vllm:engine_sleep_state", NULL, "sleep_state=\"weights_offloaded\"", 0);
        sample(s, "vllm:engine_sleep_state", NULL, "sleep_state=\"discard_all\"", 0);
    }
}

static void vllm_engine(struct scrape *s)
{
    const struct sim_engine_stats *st = sim_engine_stats(s->eng);
    const struct sim_engine_params *p = sim_engine_params(s->eng);
    simple(s, "vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
           (double)st->preemptions);
    simple(s, "vllm:prefix_cache_queries_total", "counter",
           "Prefix cache queries, in terms of number of queried tokens.", (double)st->prefix_queries);
    simple(s, "vllm:prefix_cache_hits_total", "counter",
           "Prefix cache hits, in terms of number of cached tokens.", (double)st->prefix_hits);
    if (p->num_speculative_tokens > 0) {
        simple(s, "vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.",
               (double)st->spec_drafts);
        simple(s, "vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.",
               (double)st->spec_draft_tokens);
        simple(s, "vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.",
               (double)st->spec_accepted);
        family(s, "vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter",
               "Accepted tokens per draft position.");
        for (int64_t i = 0; i < p->num_speculative_tokens; i++) {
            char pos[32];
            snprintf(pos, sizeof pos, "position=\"%" PRId64 "\"", i);
            sample(s, "vllm:spec_decode_num_accepted_tokens_per_pos_total", NULL, pos,
                   (double)st->spec_accepted_pos[i]);
        }
        if (with_created(s)) {
            char base[96];
            created_family(s, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                           "Accepted tokens per draft position.", base, sizeof base);
            for (int64_t i = 0; i < p->num_speculative_tokens; i++) {
                char pos[32];
                snprintf(pos, sizeof pos, "position=\"%" PRId64 "\"", i);
                created_sample(s, base, NULL, pos);
            }
        }
    }
    struct sim_hist it = {.n = SIM_STEP_TOKEN_BUCKETS};
    double le[SIM_STEP_TOKEN_BUCKETS];
    for (size_t i = 0; i < SIM_STEP_TOKEN_BUCKETS; i++)
        le[i] = (double)sim_step_token_le[i];
    it.le = le;
    memcpy(it.counts, st->step_tokens_hist, sizeof st->step_tokens_hist);
    it.count = st->steps;
    it.sum = (double)(st->prefill_tokens + st->generation_tokens);
    histogram(s, "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", &it,
              NULL, false);
}

/* cache_config_info carries no model_name label (vLLM's CacheConfig metrics_info). */
static void vllm_cache_config(struct scrape *s)
{
    const struct sim_engine_params *p = s->eng ? sim_engine_params(s->eng) : NULL;
    int64_t bs = p ? p->block_size : 16;
    int64_t blocks = s->eng ? sim_engine_kv_blocks(s->eng) : 0;
    family(s, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
    s->rc |= buf_printf(s->out, "vllm:cache_config_info{block_size=\"%" PRId64 "\",cache_dtype=\"auto\","
                        "enable_prefix_caching=\"%s\",%s%sgpu_memory_utilization=\"0.9\","
                        "kv_cache_size_tokens=\"%" PRId64 "\",num_gpu_blocks=\"%" PRId64 "\"} 1.0\n",
                        bs, p && p->enable_prefix_caching ? "True" : "False", s->pre ? s->pre : "",
                        s->pre ? "," : "", blocks * bs, blocks);
}

static void render_vllm(struct scrape *s)
{
    const struct sim_metrics *m = s->m;
    vllm_requests(s);
    if (s->eng)
        vllm_engine(s);
    histogram(s, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              &m->ttft, NULL, false);
    histogram(s, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
              &m->itl, NULL, false);
    histogram(s, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
              &m->e2e, NULL, false);
    histogram(s, "vllm:request_queue_time_seconds",
              "Histogram of time spent in WAITING phase for request.", &m->queue, NULL, false);
    histogram(s, "vllm:request_prefill_time_seconds",
              "Histogram of time spent in PREFILL phase for request.", &m->prefill, NULL, false);
    histogram(s, "vllm:request_decode_time_seconds",
              "Histogram of time spent in DECODE phase for request.", &m->decode, NULL, false);
    histogram(s, "vllm:request_inference_time_seconds",
              "Histogram of time spent in RUNNING phase for request.", &m->inference, NULL, false);
    vllm_cache_config(s);
    if (m->flavor != SIM_FLAVOR_ANVIL)
        return;
    simple(s, "anvil_sim:client_closed_total", "counter",
           "Requests whose client closed the connection before the reply ended.", (double)m->client_closed);
    simple(s, "anvil_sim:requests_rejected_total", "counter",
           "Generation requests answered with a 4xx error.", (double)m->rejected);
    family(s, "anvil_sim:faults_total", "counter", "Injected faults by kind.");
    for (int k = 0; k < SIM_FAULT_KINDS; k++) {
        char kind[48];
        snprintf(kind, sizeof kind, "kind=\"%s\"", sim_fault_name((enum sim_fault_kind)k));
        sample(s, "anvil_sim:faults_total", kind, NULL, (double)m->faults[k]);
    }
}

/* ---- SGLang ----------------------------------------------------------------------- */

#define SG_TOK "engine_type=\"unified\""
#define SG_RANKS "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\""

static void sg_by_stream(struct scrape *s, const char *name, const char *help, const uint64_t v[2])
{
    family(s, name, "counter", help);
    sample(s, name, SG_TOK ",is_streaming=\"false\"", NULL, (double)v[0]);
    sample(s, name, SG_TOK ",is_streaming=\"true\"", NULL, (double)v[1]);
}

static void sg_gauge(struct scrape *s, const char *name, const char *help, double v)
{
    family(s, name, "gauge", help);
    sample(s, name, SG_TOK, SG_RANKS, v);
}

static void sglang_engine(struct scrape *s)
{
    const struct sim_engine *e = s->eng;
    const struct sim_engine_stats *st = e ? sim_engine_stats(e) : NULL;
    double up_s = (double)(clock_now_ns() - s->m->start_ns) / 1e9;
    sg_gauge(s, "sglang:num_running_reqs", "The number of running requests.",
             e ? (double)sim_engine_running(e) : (double)s->m->running);
    sg_gauge(s, "sglang:num_used_tokens", "The number of used tokens.",
             e ? (double)sim_engine_kv_used_tokens(e) : 0);
    sg_gauge(s, "sglang:token_usage", "The token usage.", kv_usage(e));
    sg_gauge(s, "sglang:gen_throughput", "The generation throughput (token/s).",
             up_s > 0 ? sum2(s->m->generation_tokens) / up_s : 0);
    sg_gauge(s, "sglang:num_queue_reqs", "The number of requests in the waiting queue.",
             e ? (double)sim_engine_waiting(e) : 0);
    sg_gauge(s, "sglang:cache_hit_rate", "The prefix cache hit rate.",
             st && st->prefix_queries ? (double)st->prefix_hits / (double)st->prefix_queries : 0);
    sg_gauge(s, "sglang:spec_accept_length", "The average acceptance length of speculative decoding.",
             st && st->spec_drafts ? 1.0 + (double)st->spec_accepted / (double)st->spec_drafts : 0);
    sg_gauge(s, "sglang:spec_accept_rate", "The average acceptance rate of speculative decoding "
             "(`accepted tokens / total draft tokens` in batch).",
             st && st->spec_draft_tokens ? (double)st->spec_accepted / (double)st->spec_draft_tokens : 0);
    sg_gauge(s, "sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.",
             e ? (double)(sim_engine_kv_blocks(e) * sim_engine_params(e)->block_size) : 0);
    sg_gauge(s, "sglang:num_grammar_queue_reqs", "The number of requests in the grammar waiting queue.", 0);
    sg_gauge(s, "sglang:utilization", "The utilization.",
             e && sim_engine_params(e)->max_num_seqs > 0
                 ? (double)sim_engine_running(e) / (double)sim_engine_params(e)->max_num_seqs : 0);
    sg_gauge(s, "sglang:is_cuda_graph", "Whether the batch is using CUDA graph.", 1);
    family(s, "sglang:num_retracted_requests_total", "counter", "Total number of retracted requests.");
    sample(s, "sglang:num_retracted_requests_total", SG_TOK, SG_RANKS, st ? (double)st->preemptions : 0);
    family(s, "sglang:spec_verify_calls_total", "counter", "Number of speculative verify calls.");
    sample(s, "sglang:spec_verify_calls_total", SG_TOK, NULL, st ? (double)st->spec_drafts : 0);
    family(s, "sglang:cached_tokens_total", "counter", "Number of cached prompt tokens.");
    sample(s, "sglang:cached_tokens_total", "cache_source=\"device\"," SG_TOK, NULL,
           st ? (double)st->prefix_hits : 0);
}

static void render_sglang(struct scrape *s)
{
    const struct sim_metrics *m = s->m;
    sg_by_stream(s, "sglang:prompt_tokens_total", "Number of prefill tokens processed.", m->prompt_tokens);
    sg_by_stream(s, "sglang:generation_tokens_total", "Number of generation tokens processed.",
                 m->generation_tokens);
    sg_by_stream(s, "sglang:num_requests_total", "Number of requests processed.", m->requests);
    family(s, "sglang:num_so_requests_total", "counter", "Number of structured output requests processed.");
    sample(s, "sglang:num_so_requests_total", SG_TOK, NULL, 0);
    family(s, "sglang:num_aborted_requests_total", "counter", "Number of requests aborted.");
    sample(s, "sglang:num_aborted_requests_total", SG_TOK, NULL, (double)(m->success_abort + m->success_error));
    sglang_engine(s);
    histogram(s, "sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              &m->ttft, SG_TOK ",is_streaming=\"true\"", true);
    histogram(s, "sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
              &m->itl, SG_TOK, true);
    histogram(s, "sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds",
              &m->e2e, SG_TOK ",is_streaming=\"true\"", true);
}

/* ---- llama.cpp ----------------------------------------------------------------------- */

static void lc(struct scrape *s, const char *name, const char *type, const char *help, double v)
{
    family(s, name, type, help);
    s->rc |= buf_printf(s->out, "%s %.6g\n", name, v);
}

static void render_llamacpp(struct scrape *s)
{
    const struct sim_metrics *m = s->m;
    const struct sim_engine *e = s->eng;
    const struct sim_engine_stats *st = e ? sim_engine_stats(e) : NULL;
    double gen = sum2(m->generation_tokens), prompt = sum2(m->prompt_tokens);
    lc(s, "llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.", prompt);
    lc(s, "llamacpp:prompt_seconds_total", "counter", "Prompt process time", m->prompt_seconds);
    /* llama-server adds a request's tokens when it completes (metrics.on_prediction), never a cancelled one's */
    lc(s, "llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.",
       (double)m->predicted_at_end);
    lc(s, "llamacpp:tokens_predicted_seconds_total", "counter", "Predict process time", m->decode_seconds);
    lc(s, "llamacpp:n_decode_total", "counter", "Total number of llama_decode() calls",
       st ? (double)st->steps : gen);
    lc(s, "llamacpp:n_busy_slots_per_decode", "counter",
       "Average number of busy slots per llama_decode() call",
       st && st->steps ? (double)st->step_seqs / (double)st->steps : 1);
    lc(s, "llamacpp:prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
       m->prompt_seconds > 0 ? prompt / m->prompt_seconds : 0);
    lc(s, "llamacpp:predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
       m->decode_seconds > 0 ? gen / m->decode_seconds : 0);
    lc(s, "llamacpp:kv_cache_usage_ratio", "gauge", "KV-cache usage. 1 means 100 percent usage.", kv_usage(e));
    lc(s, "llamacpp:kv_cache_tokens", "gauge", "KV-cache tokens.", e ? (double)sim_engine_kv_used_tokens(e) : 0);
    lc(s, "llamacpp:requests_processing", "gauge", "Number of requests processing.",
       e ? (double)sim_engine_running(e) : (double)m->running);
    lc(s, "llamacpp:requests_deferred", "gauge", "Number of requests deferred.",
       e ? (double)sim_engine_waiting(e) : 0);
}

int sim_metrics_render(const struct sim_metrics *m, const struct sim_engine *eng,
                       const char *model, struct buf *out)
{
    struct scrape s = {.out = out, .m = m, .eng = eng, .model = model,
                       .pre = m->flavor == SIM_FLAVOR_VLLM ? "engine=\"0\"" : NULL};
    if (m->flavor == SIM_FLAVOR_SGLANG)
        render_sglang(&s);
    else if (m->flavor == SIM_FLAVOR_LLAMACPP)
        render_llamacpp(&s);
    else
        render_vllm(&s);
    return s.rc ? -1 : 0;
}
