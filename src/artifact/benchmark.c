/* benchmark.c — the anvil-serving.benchmark/v1 artifact. */
#include "artifact/benchmark.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/file.h"
#include "stats/metrics.h"

void artifact_add_number(cJSON *o, const char *k, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* How each distribution is named in `metrics`: seed 001 writes times as
 * <base>_<stat>_ms and other units as <base>_<stat>. */
struct dist_name {
    enum dist_id id;
    const char *base;
    bool ms;
};

static const struct dist_name dist_names[] = {
    {D_TTFT, "ttft", true},
    {D_TTFO, "time_to_first_output", true},
    {D_E2E, "e2e", true},
    {D_GENERATION, "generation", true},
    {D_TPOT, "tpot", true},
    {D_TPOT, "mean_inter_token_latency_ms", false},
    {D_DECODE_TOK_S, "decode_tok_s", false},
    {D_PREFILL_TOK_S, "effective_prefill_tok_s", false},
    {D_PROMPT_TOKENS, "prompt_tokens", false},
    /* anvil's additions */
    {D_VISIBLE_GENERATION, "visible_generation", true},
    {D_OUTPUT_TOKENS, "output_tokens_per_request", false},
    {D_ITL_CHUNK, "itl", true},
    {D_ITL_TOKEN, "itl_per_token", true},
    {D_TOKENS_PER_CHUNK, "tokens_per_chunk", false},
    {D_HEADERS, "time_to_headers", true},
    {D_FIRST_BYTE, "time_to_first_byte", true},
    {D_FIRST_EVENT, "time_to_first_event", true},
    {D_SECOND_OUTPUT, "time_to_second_output", true},
    {D_TPS_PER_USER, "output_tps_per_user", false},
    {D_SEND_LATENESS, "send_lateness", true},
    {D_SCHED_TTFT, "scheduled_ttft", true},
    {D_SCHED_E2E, "scheduled_e2e", true},
};

void artifact_add_dist(cJSON *o, const char *base, bool ms, const struct dist *d)
{
    char k[96];
    const char *unit = ms ? "_ms" : "";
    const char *names[3] = {"mean", "min", "max"};
    double vals[3] = {d->mean, d->min, d->max};
    for (int i = 0; i < 3; i++) {
        snprintf(k, sizeof k, "%s_%s%s", base, names[i], unit);
        artifact_add_number(o, k, vals[i]);
    }
    for (int i = 0; i < DIST_NPCT; i++) {
        snprintf(k, sizeof k, "%s_%s%s", base, dist_pct_names[i], unit);
        artifact_add_number(o, k, d->pct[i]);
    }
    snprintf(k, sizeof k, "%s_samples", base);
    cJSON_AddNumberToObject(o, k, (double)d->samples);
}

static cJSON *metrics_json(const struct run_summary *s)
{
    cJSON *m = cJSON_CreateObject();
    for (size_t i = 0; i < sizeof dist_names / sizeof *dist_names; i++)
        artifact_add_dist(m, dist_names[i].base, dist_names[i].ms, &s->d[dist_names[i].id]);
    cJSON_AddNumberToObject(m, "content_chunks", s->content_chunks);
    cJSON_AddNullToObject(m, "content_chunks_s");
    cJSON_AddNumberToObject(m, "reasoning_chunks", s->reasoning_chunks);
    cJSON *src = cJSON_AddObjectToObject(m, "output_token_sources");
    if (s->source_usage)
        cJSON_AddNumberToObject(src, "usage", s->source_usage);
    if (s->source_chunks)
        cJSON_AddNumberToObject(src, "chunks", s->source_chunks);
    cJSON_AddNumberToObject(m, "output_tokens", (double)s->output_tokens);
    cJSON_AddNumberToObject(m, "prompt_tokens", (double)s->prompt_tokens);
    cJSON_AddNumberToObject(m, "prompt_token_samples", s->prompt_token_reports);
    artifact_add_number(m, "prefix_cache_hit_avg", s->cached_reports && s->prompt_tokens
                ? (double)s->cached_tokens / (double)s->prompt_tokens : NAN);
    artifact_add_number(m, "throughput_tok_s", s->output_throughput);
    /* vLLM-style run figures, as `vllm bench serve` names them */
    artifact_add_number(m, "request_throughput", s->request_throughput);
    artifact_add_number(m, "output_throughput", s->output_throughput);
    artifact_add_number(m, "total_token_throughput", s->total_token_throughput);
    artifact_add_number(m, "goodput_rps", s->goodput_rps);
    artifact_add_number(m, "aggregate_tps", s->aggregate_tps);
    artifact_add_number(m, "peak_output_tps_1s", s->peak_output_tps_1s);
    return m;
}

static const char *phase_of(const struct req_record *r)
{
    if (r->fail == FAIL_HTTP)
        return "response";
    if (!r->t_headers)
        return "before_response";
    if (!r->t_first_output)
        return "before_first_output";
    return "mid_stream";
}

cJSON *artifact_failure(const struct req_record *r)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddNumberToObject(f, "request_index", r->index);
    cJSON_AddStringToObject(f, "category", fail_kind_name(r->fail));
    if (r->http_status)
        cJSON_AddNumberToObject(f, "http_status", (double)r->http_status);
    else
        cJSON_AddNullToObject(f, "http_status");
    cJSON_AddStringToObject(f, "phase", phase_of(r));
    cJSON_AddStringToObject(f, "message", r->fail_msg);
    artifact_add_number(f, "elapsed_ms", r->t_end && r->t_start ? ns_to_ms(r->t_end - r->t_start) : NAN);
    return f;
}

cJSON *artifact_request_timing(const struct req_record *r)
{
    struct req_metrics m;
    metrics_derive(r, &m);
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "content_chunks", r->content_chunks);
    artifact_add_number(t, "decode_tok_s", m.decode_tok_s);
    artifact_add_number(t, "e2e_ms", m.e2e_ms);
    artifact_add_number(t, "effective_prefill_tok_s", m.effective_prefill_tok_s);
    artifact_add_number(t, "generation_ms", m.generation_ms);
    artifact_add_number(t, "mean_inter_token_latency_ms", m.tpot_ms);
    cJSON_AddStringToObject(t, "output_token_source", m.output_token_source);
    cJSON_AddNumberToObject(t, "output_tokens", (double)m.output_tokens);
    artifact_add_number(t, "planned_context_tokens", r->planned_prompt_tokens >= 0 ? (double)r->planned_prompt_tokens : NAN);
    artifact_add_number(t, "prompt_tokens", r->prompt_tokens >= 0 ? (double)r->prompt_tokens : NAN);
    cJSON_AddNumberToObject(t, "reasoning_chunks", r->reasoning_chunks);
    cJSON_AddNumberToObject(t, "request_index", r->index);
    artifact_add_number(t, "time_to_first_output_ms", m.time_to_first_output_ms);
    artifact_add_number(t, "tpot_ms", m.tpot_ms);
    artifact_add_number(t, "ttft_ms", m.ttft_ms);
    artifact_add_number(t, "visible_generation_ms", m.visible_generation_ms);
    /* anvil's additions: the TTFT decomposition and what the stream held */
    artifact_add_number(t, "time_to_headers_ms", m.headers_ms);
    artifact_add_number(t, "time_to_first_byte_ms", m.first_byte_ms);
    artifact_add_number(t, "time_to_first_event_ms", m.first_event_ms);
    artifact_add_number(t, "time_to_second_output_ms", m.time_to_second_output_ms);
    artifact_add_number(t, "output_tps_per_user", m.output_tps_per_user);
    artifact_add_number(t, "send_lateness_ms", m.send_lateness_ms);
    artifact_add_number(t, "scheduled_ttft_ms", m.scheduled_ttft_ms);
    artifact_add_number(t, "scheduled_e2e_ms", m.scheduled_e2e_ms);
    artifact_add_number(t, "e2e_output_tps_per_user", m.e2e_output_tps_per_user);
    cJSON_AddNumberToObject(t, "output_chunks", (double)r->n_chunks);
    artifact_add_number(t, "cached_tokens", r->cached_tokens >= 0 ? (double)r->cached_tokens : NAN);
    cJSON_AddStringToObject(t, "finish_reason", r->finish_reason);
    cJSON_AddNumberToObject(t, "max_tokens", (double)r->max_tokens);
    /* the raw start on the client's CLOCK_MONOTONIC, to join with server-side traces */
    cJSON_AddNumberToObject(t, "start_monotonic_ns", (double)r->t_start);
    return t;
}

static cJSON *methodology_json(enum pct_method m)
{
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "clock", "client CLOCK_MONOTONIC; bytes are dated by the kernel's software receive timestamp "
                            "(SO_TIMESTAMPNS), peeked before each socket read: headers and the read's first "
                            "HTTP chunk get the queue head's arrival, later chunks its newest segment's (segments "
                            "that queued up while the client was late share the newest one's stamp); by the "
                            "client clock at the read where the kernel gives none (counts: client.arrival_stamps)");
    cJSON_AddStringToObject(t, "request_start", "the instant the request is handed to the transport (curl_multi_add_handle)");
    cJSON_AddStringToObject(t, "ttft", "request start through the first non-empty streamed content delta (chat delta.content, completions text); role-only and empty chunks do not count");
    cJSON_AddStringToObject(t, "time_to_first_output", "request start through the first non-empty streamed reasoning or content delta");
    cJSON_AddStringToObject(t, "e2e", "request start through data: [DONE] (or connection close after the final chunk)");
    cJSON_AddStringToObject(t, "generation", "client-observed E2E minus time to first output");
    cJSON_AddStringToObject(t, "tpot", "generation time divided by (output tokens - 1); undefined (null) for one output token");
    cJSON_AddStringToObject(t, "mean_inter_token_latency", "alias of tpot: generation time divided by completion tokens after the first token");
    cJSON_AddStringToObject(t, "decode", "(output tokens - 1) divided by generation time");
    cJSON_AddStringToObject(t, "effective_prefill", "usage.prompt_tokens divided by time to first output; includes queueing, scheduling, prefill and first-token work");
    cJSON_AddStringToObject(t, "output_tokens", "usage.completion_tokens from the stream; only when the server reports none, the count of output-carrying chunks (output_token_source says which)");
    cJSON_AddStringToObject(t, "itl", "per chunk: gaps between consecutive output-carrying chunks of one request; itl_per_token divides each gap by the tokens the chunk carried (continuous usage, else the reply's later tokens spread evenly over its later chunks)");
    cJSON_AddStringToObject(t, "throughput", "sum of output tokens of completed requests divided by wall_clock_ms (first measured request start to last measured request end)");
    char d[160];
    snprintf(d, sizeof d, "request-level mean, min, p25, p50, p75, p90, p95, p99, and max over completed requests using the %s percentile method", pct_method_name(m));
    cJSON_AddStringToObject(t, "distributions", d);
    cJSON_AddStringToObject(t, "percentile_method", pct_method_name(m));
    return t;
}

static cJSON *calibration_json(const struct bench_meta *meta)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "method", meta->calibration_method);
    add_str_or_null(c, "source", meta->calibration_source);
    add_str_or_null(c, "cache_file", meta->calibration_cache);
    add_str_or_null(c, "cache_key", meta->calibration_cache_key);
    add_str_or_null(c, "shared_prefix_method", meta->shared_prefix_method);
    const struct calibration *k = meta->calibration;
    if (!k)
        return c;
    cJSON_AddNumberToObject(c, "target_tokens", (double)k->target_tokens);
    cJSON_AddNumberToObject(c, "tolerance_tokens", (double)k->tolerance_tokens);
    cJSON_AddNumberToObject(c, "filler_words", (double)k->words);
    cJSON_AddNumberToObject(c, "measured_tokens", (double)k->tokens);
    cJSON_AddBoolToObject(c, "converged", k->converged);
    cJSON *steps = cJSON_AddArrayToObject(c, "steps");
    for (int i = 0; i < k->n_steps; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "filler_words", (double)k->steps[i].words);
        artifact_add_number(s, "tokens", k->steps[i].tokens >= 0 ? (double)k->steps[i].tokens : NAN);
        if (k->steps[i].truncated)      /* counted, but cut by the server: not used */
            cJSON_AddBoolToObject(s, "truncated", 1);
        cJSON_AddItemToArray(steps, s);
    }
    return c;
}

/* How many measured requests planned each prompt length (seed 001's
 * `context_distribution`); "unknown" for dataset prompts. */
static void add_context_distribution(cJSON *root, const struct req_record *recs, int n)
{
    cJSON *cd = cJSON_AddObjectToObject(root, "context_distribution");
    for (int i = 0; i < n; i++) {
        if (!recs[i].t_start)
            continue;
        char k[32];
        if (recs[i].planned_prompt_tokens >= 0)
            snprintf(k, sizeof k, "%ld", recs[i].planned_prompt_tokens);
        else
            snprintf(k, sizeof k, "unknown");
        cJSON *c = cJSON_GetObjectItemCaseSensitive(cd, k);
        if (c)
            cJSON_SetNumberValue(c, c->valuedouble + 1);
        else
            cJSON_AddNumberToObject(cd, k, 1);
    }
}

static void add_requests(cJSON *root, const struct req_record *recs, int n)
{
    cJSON *timings = cJSON_AddArrayToObject(root, "request_timings");
    cJSON *failures = cJSON_AddArrayToObject(root, "failures");
    for (int i = 0; i < n; i++) {
        /* duration mode: warm-ups and requests cut at the window's end are
         * counted in duration_mode, not listed with the measured ones */
        if (!recs[i].t_start || recs[i].warmup || recs[i].cut)
            continue;
        if (recs[i].fail == FAIL_NONE)
            cJSON_AddItemToArray(timings, artifact_request_timing(&recs[i]));
        else
            cJSON_AddItemToArray(failures, artifact_failure(&recs[i]));
    }
}

static void add_run_fields(cJSON *root, const struct bench_meta *m, const struct run_summary *s)
{
    const struct server_info *srv = m->server;
    cJSON_AddStringToObject(root, "schema", BENCHMARK_SCHEMA);
    cJSON_AddStringToObject(root, "measurement_protocol", m->duration_s > 0 ? PROTOCOL_DURATION
                            : isinf(m->request_rate) ? PROTOCOL_CLOSED : PROTOCOL_OPEN);
    cJSON_AddStringToObject(root, "run_id", m->run_id);
    cJSON_AddStringToObject(root, "started_at", m->started_at);
    cJSON_AddStringToObject(root, "finished_at", m->finished_at);
    cJSON_AddStringToObject(root, "base_url", srv->display_url);
    cJSON_AddStringToObject(root, "model", srv->model);
    cJSON_AddStringToObject(root, "engine", m->engine_label ? m->engine_label : srv->engine);
    add_str_or_null(root, "gpu", m->gpu_label);
    cJSON_AddNumberToObject(root, "concurrency", m->concurrency);
    cJSON_AddNumberToObject(root, "requests", m->num_prompts);
    cJSON_AddNumberToObject(root, "completed", s->completed);
    cJSON_AddNumberToObject(root, "failed", s->failed);
    artifact_add_number(root, "context_tokens", m->input_len >= 0 ? (double)m->input_len : NAN);   /* null: dataset prompts */
    artifact_add_number(root, "context_tokens_measured", s->prompt_token_reports ?   /* what the server counted */
                        (double)s->prompt_tokens / s->prompt_token_reports : NAN);
    cJSON_AddNumberToObject(root, "context_seed", (double)m->seed);
    artifact_add_number(root, "max_context_tokens", srv->max_model_len >= 0 ? (double)srv->max_model_len : NAN);
    cJSON_AddNumberToObject(root, "max_tokens", (double)m->output_len);
    artifact_add_number(root, "wall_clock_ms", s->duration_ms);
    cJSON_AddNullToObject(root, "manifest");
    cJSON_AddNullToObject(root, "source_recipe");
    cJSON_AddNullToObject(root, "tier");
    cJSON *sf = cJSON_AddObjectToObject(root, "serve_flags");
    cJSON_AddBoolToObject(sf, "no_thinking", 0);
    cJSON_AddNullToObject(sf, "reasoning_effort");
    cJSON_AddBoolToObject(sf, "shared_prefix_burst", 0);
    cJSON_AddNullToObject(sf, "thinking_mode");
}

/* anvil's additions to the seed's top level. */
static void add_anvil_fields(cJSON *root, const struct bench_meta *m, const struct run_summary *s)
{
    cJSON_AddStringToObject(root, "endpoint", m->endpoint);
    cJSON_AddStringToObject(root, "engine_detected", m->server->engine);
    cJSON_AddStringToObject(root, "engine_version", m->server->engine_version);
    cJSON_AddNumberToObject(root, "warmup_requests", m->warmup);
    artifact_add_number(root, "request_rate", m->request_rate);    /* null = closed loop (infinite) */
    if (isinf(m->request_rate))     /* closed loop: no arrival process */
        cJSON_AddNullToObject(root, "burstiness");
    else if (isinf(m->burstiness))
        cJSON_AddStringToObject(root, "burstiness", "inf");     /* constant gaps */
    else
        cJSON_AddNumberToObject(root, "burstiness", m->burstiness);
    artifact_add_number(root, "achieved_request_rate", m->achieved_rate);
    cJSON_AddStringToObject(root, "load_mode", isinf(m->request_rate) ? "closed-loop" : "open-loop");
    cJSON *slo = cJSON_AddObjectToObject(root, "slo");
    artifact_add_number(slo, "ttft_ms", m->slo.ttft_ms);
    artifact_add_number(slo, "tpot_ms", m->slo.tpot_ms);
    artifact_add_number(slo, "e2el_ms", m->slo.e2el_ms);
    if (slo_any(&m->slo)) {
        cJSON_AddNumberToObject(root, "good_requests", s->good);
        artifact_add_number(root, "good_request_share", s->completed ? (double)s->good / s->completed : NAN);
    }
    cJSON_AddNumberToObject(root, "prewarmed_connections", m->prewarmed_connections);
    cJSON_AddBoolToObject(root, "ignore_eos", m->ignore_eos);
    cJSON_AddNumberToObject(root, "not_sent", s->requests - s->sent);
    cJSON_AddBoolToObject(root, "incomplete", m->incomplete);
    add_str_or_null(root, "incomplete_reason", m->incomplete_reason);
    cJSON_AddNumberToObject(root, "ignore_eos_violations", s->inv.violations[INV_IGNORE_EOS]);
    cJSON_AddItemToObject(root, "invariants", invariants_json(&s->inv));
    cJSON_AddNumberToObject(root, "prompt_token_mismatches", s->prompt_mismatch);
    cJSON_AddNumberToObject(root, "usage_over_max_tokens", s->usage_over_max);
    cJSON_AddBoolToObject(root, "cache_contaminated", m->cache_contaminated);
    artifact_add_number(root, "shared_prefix_tokens", m->shared_prefix_method && m->shared_prefix_tokens >= 0
                        ? (double)m->shared_prefix_tokens : NAN);
    cJSON *fb = cJSON_AddObjectToObject(root, "failed_by_category");
    for (int k = 1; k <= FAIL_OTHER; k++)
        if (s->failed_by[k])
            cJSON_AddNumberToObject(fb, fail_kind_name((enum fail_kind)k), s->failed_by[k]);
    cJSON_AddItemToObject(root, "calibration", calibration_json(m));
    if (m->duration_s > 0) {
        cJSON *dm = cJSON_AddObjectToObject(root, "duration_mode");
        cJSON_AddNumberToObject(dm, "duration_s", m->duration_s);
        cJSON_AddNumberToObject(dm, "warmup_s", m->warmup_s);
        cJSON_AddNumberToObject(dm, "window_s", m->window_s);
        artifact_add_number(dm, "tokens_in_window", s->window_tokens);
        artifact_add_number(dm, "aggregate_tps", s->aggregate_tps);
        cJSON_AddNumberToObject(dm, "requests_started_in_window", s->sent);
        cJSON_AddNumberToObject(dm, "incomplete_requests", s->cut);
        cJSON_AddNumberToObject(dm, "warmup_requests", s->warmup_requests);
    } else {
        cJSON_AddNullToObject(root, "duration_mode");
    }
    cJSON *wl = cJSON_AddObjectToObject(root, "workload");
    add_str_or_null(wl, "dataset", m->dataset);
    cJSON_AddNumberToObject(wl, "input_len_range", m->input_range);
    cJSON_AddNumberToObject(wl, "output_len_range", m->output_range);
    cJSON_AddNumberToObject(wl, "shared_prefix_len", (double)m->shared_prefix_len);
    if (m->sweep.case_id) {
        cJSON *sw = cJSON_AddObjectToObject(root, "sweep");
        /* an unlabelled target is named by its engine, as in `engine` */
        cJSON_AddStringToObject(sw, "target", m->sweep.target ? m->sweep.target
                                : m->engine_label ? m->engine_label : m->server->engine);
        cJSON_AddStringToObject(sw, "case_id", m->sweep.case_id);
        cJSON_AddNumberToObject(sw, "round", (double)m->sweep.round);
    } else {
        cJSON_AddNullToObject(root, "sweep");
    }
    cJSON *c = cJSON_AddObjectToObject(root, "client");
    double cpu = m->client_cpu_user_s + m->client_cpu_sys_s;
    cJSON_AddNumberToObject(c, "cpu_user_s", m->client_cpu_user_s);
    cJSON_AddNumberToObject(c, "cpu_sys_s", m->client_cpu_sys_s);
    cJSON_AddNumberToObject(c, "sse_events", (double)s->events);
    artifact_add_number(c, "cpu_us_per_event", s->events ? cpu * 1e6 / (double)s->events : NAN);
    artifact_add_number(c, "cpu_utilization", s->duration_ms > 0 ? cpu / (s->duration_ms / 1000) : NAN);
    cJSON *lag = cJSON_AddObjectToObject(c, "loop_lag_ms");
    artifact_add_number(lag, "p50", s->loop_lag.pct[1]);
    artifact_add_number(lag, "p99", s->loop_lag.pct[5]);
    artifact_add_number(lag, "max", s->loop_lag.max);
    cJSON_AddNumberToObject(lag, "samples", (double)s->loop_lag.samples);
    artifact_add_number(c, "send_lateness_p99_ms", s->d[D_SEND_LATENESS].pct[5]);
    cJSON *rx = cJSON_AddObjectToObject(c, "arrival_stamps");
    cJSON_AddNumberToObject(rx, "kernel_rx", (double)m->stamps_kernel);
    cJSON_AddNumberToObject(rx, "client_clock", (double)m->stamps_clock);
    cJSON_AddBoolToObject(root, "client_bound", s->client_bound);
}

cJSON *artifact_benchmark(const struct bench_meta *meta, const struct req_record *recs, int n,
                          const struct run_summary *s)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    add_run_fields(root, meta, s);
    add_context_distribution(root, recs, n);
    add_anvil_fields(root, meta, s);
    cJSON_AddItemToObject(root, "timing_methodology", methodology_json(s->method));
    cJSON_AddItemToObject(root, "metrics", metrics_json(s));
    add_requests(root, recs, n);
    return root;
}

/* The shortest %.{15,16,17}g text of v that strtod reads back as v. */
static void exact_text(double v, char *out, size_t n)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* Replaces every finite number under j with raw text of exact_text. */
static int exact_numbers(cJSON *j)
{
    for (cJSON *c = j->child; c; c = c->next) {
        if (cJSON_IsNumber(c) && isfinite(c->valuedouble)) {
            char text[40];
            exact_text(c->valuedouble, text, sizeof text);
            cJSON *raw = cJSON_CreateRaw(text);
            /* ReplaceItemViaPointer keeps the position, not the key */
            if (raw && c->string && !(raw->string = strdup(c->string))) {
                cJSON_Delete(raw);
                raw = NULL;
            }
            if (!raw || !cJSON_ReplaceItemViaPointer(j, c, raw))
                return -1;
            c = raw;
        } else if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && exact_numbers(c)) {
            return -1;
        }
    }
    return 0;
}

char *artifact_print(const cJSON *j)
{
    cJSON *copy = cJSON_Duplicate(j, true);
    char *text = copy && exact_numbers(copy) == 0 ? cJSON_Print(copy) : NULL;
    cJSON_Delete(copy);
    return text;
}

/* Whether path exists as something other than a regular file (a device,
 * a pipe, a symlink): written in place, never replaced by a rename. */
static bool special_target(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

static char *tmp_name(const char *path)
{
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%s.tmp", path);
    return tmp;
}

int artifact_check_path(const char *path, char *err, size_t errlen)
{
    if (!path[0]) {
        snprintf(err, errlen, "empty path");
        return -1;
    }
    if (special_target(path))
        return access(path, W_OK) == 0 ? 0 : (snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1);
    char *tmp = tmp_name(path);
    FILE *f = NULL;
    if (!tmp || file_mkdir_parents(path) != 0 || !(f = fopen(tmp, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", path, tmp ? strerror(errno) : "out of memory");
        free(tmp);
        return -1;
    }
    fclose(f);
    unlink(tmp);
    free(tmp);
    return 0;
}

int artifact_write_file(const char *path, const cJSON *j, char *err, size_t errlen)
{
    char *text = artifact_print(j);
    bool in_place = special_target(path);
    char *tmp = in_place ? NULL : tmp_name(path);
    const char *target = in_place ? path : tmp;
    FILE *f = NULL;
    int rc = -1;
    if (!text || (!in_place && !tmp)) {
        snprintf(err, errlen, "out of memory rendering %s", path);
    } else if (file_mkdir_parents(path) != 0 || !(f = fopen(target, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    } else {
        bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
        ok = fclose(f) == 0 && ok;
        if (!ok)
            snprintf(err, errlen, "cannot write %s: %s", target, strerror(errno));
        else if (!in_place && rename(tmp, path) != 0)
            snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        else
            rc = 0;
    }
    free(tmp);
    free(text);
    return rc;
}
