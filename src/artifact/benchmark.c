/* benchmark.c — a run's anvil-serving.benchmark/v1 artifact: the struct
 * filled from the run's meta, records and summary (writing and reading are
 * in benchmark_io.c). */
#include "artifact/benchmark.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "stats/metrics.h"

/* Copies that remember running out of memory, so a builder checks once. */
struct builder {
    bool oom;
};

static char *copy(struct builder *b, const char *s)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        b->oom = true;
    return d;
}

/* Adds key (copied) to a counts object; +1 when it is there already. */
static void count_key(struct builder *b, struct bench_counts *c, const char *key, long add)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].key, key)) {
            c->v[i].count += add;
            return;
        }
    struct bench_count *v = realloc(c->v, (c->n + 1) * sizeof *v);
    char *k = copy(b, key);
    if (!v || !k) {
        free(k);
        if (v)
            c->v = v;
        b->oom = true;
        return;
    }
    c->v = v;
    c->v[c->n++] = (struct bench_count){k, add};
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

static void failure_of(struct builder *b, const struct req_record *r, struct bench_failure *f)
{
    *f = (struct bench_failure){
        .request_index = r->index, .category = copy(b, fail_kind_name(r->fail)),
        .http_status = r->http_status ? r->http_status : ARTIFACT_NONE, .phase = copy(b, phase_of(r)),
        .message = copy(b, r->fail_msg),
        .elapsed_ms = r->t_end && r->t_start ? ns_to_ms(r->t_end - r->t_start) : NAN,
        .trace_id = r->trace_id[0] ? copy(b, r->trace_id) : NULL,
    };
}

/* Late sends: a trace's requests are due at their recorded times. */
#define TRACE_LATE_MS 1.0

static void trace_of(struct builder *b, const struct bench_trace *t, const struct run_summary *s,
                     struct bench_trace *out)
{
    *out = *t;
    out->present = true;
    out->format = copy(b, t->format);
    out->server_prefix_hit_rate_source = copy(b, t->server_prefix_hit_rate_source);
    out->measured_prefix_hit_rate = s->cached_reports && s->prompt_tokens
                                    ? (double)s->cached_tokens / (double)s->prompt_tokens : NAN;
    out->late_send_threshold_ms = TRACE_LATE_MS;
    out->late_sends = 0;       /* counted by trace_late */
}

static void prefix_cache_of(struct builder *b, const struct bench_prefix_cache *p, const struct run_summary *s,
                            struct bench_prefix_cache *out)
{
    *out = *p;
    out->present = true;
    out->flush = copy(b, p->flush);
    out->flush_endpoint = copy(b, p->flush_endpoint);
    out->achieved_hit_rate = s->cached_reports && s->prompt_tokens
                             ? (double)s->cached_tokens / (double)s->prompt_tokens : NAN;
    out->met = !isnan(p->target_hit_rate) && !isnan(out->achieved_hit_rate) &&
               fabs(out->achieved_hit_rate - p->target_hit_rate) <= p->tolerance * p->target_hit_rate;
    out->server_hit_rate_source = copy(b, p->server_hit_rate_source);
    out->server_met = isnan(p->target_hit_rate) || isnan(p->server_hit_rate)
                      ? -1 : fabs(p->server_hit_rate - p->target_hit_rate) <= p->tolerance * p->target_hit_rate;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sums of one turn index over its completed requests. */
struct turn_sum {
    long n, n_ttft, n_prompt, n_cached, n_gap;
    double ttfo, ttft, prompt, cached, think, gap;
};

static void add_to_turn(struct turn_sum *t, const struct req_record *r)
{
    struct req_metrics m;
    metrics_derive(r, &m);
    t->n++;
    t->ttfo += m.time_to_first_output_ms;
    if (!isnan(m.ttft_ms)) {
        t->ttft += m.ttft_ms;
        t->n_ttft++;
    }
    if (r->prompt_tokens >= 0) {
        t->prompt += (double)r->prompt_tokens;
        t->n_prompt++;
    }
    if (r->cached_tokens >= 0) {
        t->cached += (double)r->cached_tokens;
        t->n_cached++;
    }
}

static double mean_or_nan(double sum, long n)
{
    return n ? sum / (double)n : NAN;
}

/* Session wall times (first send → last end of sessions whose turns all
 * completed) into *out. */
static void session_walls(const struct dataset *ds, int warmup, const struct req_record *recs, int n,
                          struct bench_agentic *out)
{
    size_t ns = ds->n ? (size_t)ds->entries[ds->n - 1].conversation + 1 : 0;
    int64_t *first = calloc(ns ? ns : 1, sizeof *first), *last = calloc(ns ? ns : 1, sizeof *last);
    long *done = calloc(ns ? ns : 1, sizeof *done), *want = calloc(ns ? ns : 1, sizeof *want);
    double *walls = calloc(ns ? ns : 1, sizeof *walls);
    if (first && last && done && want && walls) {
        for (size_t i = 0; i < ds->n; i++)
            want[ds->entries[i].conversation]++;
        for (int i = 0; i < n; i++) {
            const struct req_record *r = &recs[i];
            long c = ds->entries[(size_t)(warmup + r->index) % ds->n].conversation;
            if (!r->t_start || r->warmup || r->fail != FAIL_NONE)
                continue;
            if (!first[c] || r->t_start < first[c])
                first[c] = r->t_start;
            if (r->t_end > last[c])
                last[c] = r->t_end;
            done[c]++;
        }
        size_t k = 0;
        for (size_t c = 0; c < ns; c++)
            if (done[c] && done[c] == want[c])
                walls[k++] = ns_to_ms(last[c] - first[c]);
        qsort(walls, k, sizeof *walls, cmp_double);
        double sum = 0;
        for (size_t i = 0; i < k; i++)
            sum += walls[i];
        out->sessions_completed = (long)k;
        out->session_wall_ms_mean = k ? sum / (double)k : NAN;
        out->session_wall_ms_p50 = k ? walls[(k + 1) / 2 - 1] : NAN;   /* nearest rank */
        out->session_wall_ms_max = k ? walls[k - 1] : NAN;
    }
    free(first);
    free(last);
    free(done);
    free(want);
    free(walls);
}

/* An agent's turn (record i, dataset entry di): send − the end of the last
 * request it waited for (the turn before it and that turn's sub-agents,
 * the entries just before it), added to t; nothing for a first turn. */
static void add_gap(struct turn_sum *t, const struct dataset *ds, size_t di, const struct req_record *recs, int i)
{
    int64_t last = 0;
    for (int j = i - 1; j >= 0 && di >= (size_t)(i - j) &&
                        ds->entries[di - (size_t)(i - j)].conversation == ds->entries[di].conversation; j--) {
        if (!recs[j].t_end)
            return;     /* not sent or not ended: no gap to measure */
        if (recs[j].t_end > last)
            last = recs[j].t_end;
        if (ds->entries[di - (size_t)(i - j)].agent == 0)
            break;
    }
    if (last && recs[i].t_start >= last) {
        t->gap += ns_to_ms(recs[i].t_start - last);
        t->n_gap++;
    }
}

static void agentic_of(struct builder *b, const struct bench_meta *m, const struct req_record *recs, int n,
                       struct bench_agentic *out)
{
    const struct dataset *ds = m->agentic;
    *out = (struct bench_agentic){.present = true, .source = copy(b, m->agentic_source),
                                  .session_wall_ms_mean = NAN, .session_wall_ms_p50 = NAN,
                                  .session_wall_ms_max = NAN};
    long turns = 0;
    for (size_t i = 0; i < ds->n; i++)
        turns = ds->entries[i].turn + 1 > turns ? ds->entries[i].turn + 1 : turns;
    out->sessions = ds->n ? ds->entries[ds->n - 1].conversation + 1 : 0;
    /* sum: the agents' turns; sub: the sub-agents by the turn that spawned them */
    struct turn_sum *sum = calloc((size_t)(turns ? turns : 1), sizeof *sum);
    struct turn_sum *sub = calloc((size_t)(turns ? turns : 1), sizeof *sub);
    out->per_turn = calloc((size_t)(turns ? turns : 1), sizeof *out->per_turn);
    if (!sum || !sub || !out->per_turn) {
        free(sum);
        free(sub);
        b->oom = true;
        return;
    }
    for (int i = 0; i < n; i++) {
        const struct req_record *r = &recs[i];
        if (!r->t_start || r->warmup)
            continue;
        size_t di = (size_t)(m->warmup + r->index) % ds->n;
        const struct dataset_entry *e = &ds->entries[di];
        bool agent = e->agent == 0;
        out->turns += agent;
        out->sub_agent_requests += !agent;
        if (r->fail != FAIL_NONE || r->cut)
            continue;
        add_to_turn(agent ? &sum[e->turn] : &sub[e->turn], r);
        if (agent) {
            sum[e->turn].think += e->think_s * 1000;
            add_gap(&sum[e->turn], ds, di, recs, i);
        }
    }
    for (long k = 0; k < turns; k++, out->n_per_turn++) {
        const struct turn_sum *t = &sum[k], *s = &sub[k];
        out->per_turn[k] = (struct bench_agentic_turn){
            k, t->n, mean_or_nan(t->ttfo, t->n), mean_or_nan(t->ttft, t->n_ttft),
            mean_or_nan(t->prompt, t->n_prompt), mean_or_nan(t->cached, t->n_cached),
            mean_or_nan(t->think, t->n), mean_or_nan(t->gap, t->n_gap), s->n, mean_or_nan(s->ttfo, s->n),
            mean_or_nan(s->prompt, s->n_prompt), mean_or_nan(s->cached, s->n_cached)};
    }
    free(sum);
    free(sub);
    session_walls(ds, m->warmup, recs, n, out);
}

static double count_or_nan(long v)
{
    return v >= 0 ? (double)v : NAN;
}

static void timing_of(struct builder *b, const struct req_record *r, struct bench_timing *t)
{
    struct req_metrics m;
    metrics_derive(r, &m);
    *t = (struct bench_timing){
        .content_chunks = r->content_chunks, .decode_tok_s = m.decode_tok_s, .e2e_ms = m.e2e_ms,
        .effective_prefill_tok_s = m.effective_prefill_tok_s, .generation_ms = m.generation_ms,
        .mean_inter_token_latency_ms = m.tpot_ms, .output_token_source = copy(b, token_source_name(m.output_token_source)),
        .output_tokens = m.output_tokens, .planned_context_tokens = count_or_nan(r->planned_prompt_tokens),
        .prompt_tokens = count_or_nan(r->prompt_tokens), .reasoning_chunks = r->reasoning_chunks,
        .request_index = r->index, .time_to_first_output_ms = m.time_to_first_output_ms,
        .tpot_ms = m.tpot_ms, .ttft_ms = m.ttft_ms, .visible_generation_ms = m.visible_generation_ms,
        .time_to_headers_ms = m.headers_ms, .time_to_first_byte_ms = m.first_byte_ms,
        .time_to_first_event_ms = m.first_event_ms, .time_to_second_output_ms = m.time_to_second_output_ms,
        .generation_tps_per_user = m.generation_tps_per_user, .send_lateness_ms = m.send_lateness_ms,
        .scheduled_ttft_ms = m.scheduled_ttft_ms, .scheduled_e2e_ms = m.scheduled_e2e_ms,
        .e2e_output_tps_per_user = m.e2e_output_tps_per_user, .output_chunks = (long)r->n_chunks,
        .tool_call_chunks = r->tool_call_chunks, .tool_calls = r->tool_calls,
        .cached_tokens = count_or_nan(r->cached_tokens), .finish_reason = copy(b, r->finish_reason),
        .max_tokens = r->max_tokens,
        /* the raw start on the client's CLOCK_MONOTONIC, to join with server-side traces */
        .start_monotonic_ns = (double)r->t_start,
        .first_output_merged = r->first_output_merged,
        .trace_id = r->trace_id[0] ? copy(b, r->trace_id) : NULL,
    };
}

static void methodology_of(struct builder *b, enum pct_method m, struct bench_methodology *t)
{
    char d[160];
    snprintf(d, sizeof d, "request-level mean, min, p25, p50, p75, p90, p95, p99, and max over completed requests using the %s percentile method", pct_method_name(m));
    *t = (struct bench_methodology){
        .present = true,
        .clock = copy(b, "client CLOCK_MONOTONIC; bytes are dated by the kernel's software receive timestamp "
                        "(SO_TIMESTAMPNS), looked at before each socket read, never earlier than they arrived: "
                        "the headers by the buffer holding their end, each SSE event by the buffer that "
                        "completed it (segments the kernel merged while the client was late share the newest "
                        "one's stamp, and a first answer that shares its stamp with later output is flagged "
                        "first_output_merged, its TTFT an upper bound; over TLS a read's bytes all get its newest "
                        "stamp); by the client clock at the read where the kernel gives none, once per read "
                        "(counts: client.arrival_stamps)"),
        .request_start = copy(b, "the instant the request is handed to the transport (anvil's own: before it "
                                 "writes the request or opens its connection; curl: curl_multi_add_handle)"),
        .ttft = copy(b, "request start through the first non-empty streamed answer delta (chat delta.content or a tool call, completions text); role-only and empty chunks do not count"),
        .time_to_first_output = copy(b, "request start through the first non-empty streamed reasoning, content or tool-call delta"),
        .e2e = copy(b, "request start through data: [DONE] (or connection close after the final chunk)"),
        .generation = copy(b, "client-observed E2E minus time to first output"),
        .tpot = copy(b, "generation time divided by (output tokens - 1); undefined (null) for one output token"),
        .mean_inter_token_latency = copy(b, "alias of tpot: generation time divided by completion tokens after the first token"),
        .decode = copy(b, "(output tokens - 1) divided by generation time"),
        .effective_prefill = copy(b, "usage.prompt_tokens divided by time to first output; includes queueing, scheduling, prefill and first-token work"),
        .output_tokens = copy(b, "usage.completion_tokens from the stream; for a stream without usage, the engine's tokenize count of the text received; only when neither is known, the count of output-carrying chunks (output_token_source says which)"),
        .itl = copy(b, "per chunk: gaps between consecutive output-carrying chunks of one request; itl_per_token divides each gap by the tokens the chunk carried (continuous usage, else the reply's later tokens spread evenly over its later chunks)"),
        .throughput = copy(b, "sum of output tokens of completed requests divided by wall_clock_ms (first measured request start to last measured request end)"),
        .distributions = copy(b, d),
        .percentile_method = copy(b, pct_method_name(m)),
    };
}

static void dists_of(const struct run_summary *s, struct bench_dists *d)
{
    d->ttft = s->d[D_TTFT];
    d->time_to_first_output = s->d[D_TTFO];
    d->e2e = s->d[D_E2E];
    d->generation = s->d[D_GENERATION];
    d->tpot = s->d[D_TPOT];
    d->mean_inter_token_latency = s->d[D_TPOT];
    d->decode_tok_s = s->d[D_DECODE_TOK_S];
    d->effective_prefill_tok_s = s->d[D_PREFILL_TOK_S];
    d->prompt_tokens = s->d[D_PROMPT_TOKENS];
    d->visible_generation = s->d[D_VISIBLE_GENERATION];
    d->output_tokens_per_request = s->d[D_OUTPUT_TOKENS];
    d->itl = s->d[D_ITL_CHUNK];
    d->itl_per_token = s->d[D_ITL_TOKEN];
    d->tokens_per_chunk = s->d[D_TOKENS_PER_CHUNK];
    d->time_to_headers = s->d[D_HEADERS];
    d->time_to_first_byte = s->d[D_FIRST_BYTE];
    d->time_to_first_event = s->d[D_FIRST_EVENT];
    d->time_to_second_output = s->d[D_SECOND_OUTPUT];
    d->generation_tps_per_user = s->d[D_TPS_PER_USER];
    d->send_lateness = s->d[D_SEND_LATENESS];
    d->scheduled_ttft = s->d[D_SCHED_TTFT];
    d->scheduled_e2e = s->d[D_SCHED_E2E];
}

static void metrics_of(struct builder *b, const struct run_summary *s, struct bench_metrics *m)
{
    *m = (struct bench_metrics){
        .content_chunks = s->content_chunks, .content_chunks_s = NAN, .reasoning_chunks = s->reasoning_chunks,
        .tool_call_chunks = s->tool_call_chunks, .tool_calls = s->tool_calls,
        .output_tokens = s->output_tokens, .prompt_tokens = s->prompt_tokens,
        .prompt_token_samples = s->prompt_token_reports,
        .prefix_cache_hit_avg = s->cached_reports && s->prompt_tokens
                                ? (double)s->cached_tokens / (double)s->prompt_tokens : NAN,
        .throughput_tok_s = s->output_throughput,
        /* vLLM-style run figures, as `vllm bench serve` names them */
        .request_throughput = s->request_throughput, .output_throughput = s->output_throughput,
        .total_token_throughput = s->total_token_throughput, .goodput_rps = s->goodput_rps,
        .aggregate_tps = s->aggregate_tps, .peak_output_tps_1s = s->peak_output_tps_1s,
    };
    dists_of(s, &m->dist);
    for (int k = 0; k < TOKENS_SOURCES; k++)
        if (s->by_source[k])
            count_key(b, &m->output_token_sources, token_source_name((enum token_source)k), s->by_source[k]);
}

bool benchmark_row_of(const struct bench_meta *meta, const struct req_record *r, bool *measured)
{
    /* duration mode: warm-ups and requests cut at the window's end are
     * counted in duration_mode, not listed with the measured ones */
    bool m = r->t_start && !r->warmup && !r->cut;
    if (measured)
        *measured = m;
    return m && (meta->max_request_rows <= 0 || r->index < meta->max_request_rows);
}

/* Room for the rows of n records, unless they are streamed. */
static void rows_alloc(struct builder *b, const struct bench_meta *m, size_t n, struct benchmark *out)
{
    if (m->rows_streamed)
        return;
    out->request_timings = calloc(n > 0 ? n : 1, sizeof *out->request_timings);
    out->failures = calloc(n > 0 ? n : 1, sizeof *out->failures);
    if (!out->request_timings || !out->failures)
        b->oom = true;
}

/* One measured request: its prompt length to context_distribution
 * ("unknown" for dataset prompts), a completed one to request_timings, a
 * failed one to failures (or counted, when streamed or past the bound). */
static void request_of(struct builder *b, const struct bench_meta *m, const struct req_record *r,
                       size_t *cap, struct benchmark *out)
{
    if (!r->t_start)
        return;
    char k[32];
    if (r->planned_prompt_tokens >= 0)
        snprintf(k, sizeof k, "%ld", r->planned_prompt_tokens);
    else
        snprintf(k, sizeof k, "unknown");
    count_key(b, &out->context_distribution, k, 1);
    bool measured;
    if (!benchmark_row_of(m, r, &measured)) {
        out->request_rows_left_out += measured;
        return;
    }
    if (m->rows_streamed)
        return;
    if (out->n_request_timings + out->n_failures >= *cap) {     /* an iterator's records: grow */
        size_t c = *cap ? 2 * *cap : 1024;
        void *t = realloc(out->request_timings, c * sizeof *out->request_timings);
        if (t)
            out->request_timings = t;
        void *f = t ? realloc(out->failures, c * sizeof *out->failures) : NULL;
        if (!t || !f) {
            b->oom = true;
            return;
        }
        out->failures = f;
        *cap = c;
    }
    if (r->fail == FAIL_NONE)
        timing_of(b, r, &out->request_timings[out->n_request_timings++]);
    else
        failure_of(b, r, &out->failures[out->n_failures++]);
}

/* A closed loop: no rate, and no rate ramp. */
static bool closed_loop(const struct bench_meta *m)
{
    return isinf(m->request_rate) && !(m->ramp.present && !isnan(m->ramp.end_rps));
}

static void run_fields_of(struct builder *b, const struct bench_meta *m, const struct run_summary *s,
                          struct benchmark *out)
{
    const struct server_info *srv = m->server;
    out->schema = copy(b, BENCHMARK_SCHEMA);
    out->measurement_protocol = copy(b, m->duration_s > 0 ? PROTOCOL_DURATION
                                    : closed_loop(m) ? PROTOCOL_CLOSED : PROTOCOL_OPEN);
    out->run_id = copy(b, m->run_id);
    out->started_at = copy(b, m->started_at);
    out->finished_at = copy(b, m->finished_at);
    out->base_url = copy(b, srv->display_url);
    out->model = copy(b, srv->model);
    out->engine = copy(b, m->engine_label ? m->engine_label : srv->engine);
    out->gpu = copy(b, m->gpu_label);
    out->concurrency = m->concurrency;
    out->requests = m->num_prompts;
    out->completed = s->completed;
    out->failed = s->failed;
    out->context_tokens = m->input_len >= 0 ? (double)m->input_len : NAN;     /* null: dataset prompts */
    out->context_tokens_measured = s->prompt_token_reports ?    /* what the server counted */
                                   (double)s->prompt_tokens / s->prompt_token_reports : NAN;
    out->context_seed = (long)m->seed;
    out->max_context_tokens = srv->context_len > 0 ? (double)srv->context_len : NAN;
    out->max_context_source = srv->context_len > 0 ? copy(b, srv->context_source) : NULL;
    out->max_input_tokens = srv->max_input_len > 0 ? (double)srv->max_input_len : NAN;
    out->max_tokens = m->output_len;
    out->wall_clock_ms = s->duration_ms;
    out->serve_flags = (struct bench_serve_flags){.present = true};
}

static void calibration_of(struct builder *b, const struct bench_meta *m, struct bench_calibration *c)
{
    *c = (struct bench_calibration){
        .present = true, .method = copy(b, m->calibration_method), .source = copy(b, m->calibration_source),
        .cache_file = copy(b, m->calibration_cache), .cache_key = copy(b, m->calibration_cache_key),
        .shared_prefix_method = copy(b, m->shared_prefix_method),
    };
    const struct calibration *k = m->calibration;
    if (!k)
        return;
    c->search = (struct bench_calib_search){
        .present = true, .target_tokens = k->target_tokens, .tolerance_tokens = k->tolerance_tokens,
        .filler_words = k->words, .measured_tokens = k->tokens, .converged = k->converged,
    };
    if (k->n_steps > 0 && !(c->search.steps = calloc((size_t)k->n_steps, sizeof *c->search.steps))) {
        b->oom = true;
        return;
    }
    for (int i = 0; i < k->n_steps; i++)
        c->search.steps[c->search.n_steps++] = (struct bench_calib_step){
            k->steps[i].words, k->steps[i].tokens >= 0 ? k->steps[i].tokens : ARTIFACT_NONE, k->steps[i].truncated};
}

static void client_of(struct builder *b, const struct bench_meta *m, const struct run_summary *s,
                      struct bench_client *c)
{
    double cpu = m->client_cpu_user_s + m->client_cpu_sys_s;
    *c = (struct bench_client){
        .present = true, .cpu_user_s = m->client_cpu_user_s, .cpu_sys_s = m->client_cpu_sys_s,
        .sse_events = s->events, .cpu_us_per_event = s->events ? cpu * 1e6 / (double)s->events : NAN,
        .cpu_utilization = s->duration_ms > 0 ? cpu / (s->duration_ms / 1000) : NAN,
        .loop_lag_ms = {s->loop_lag.p50, s->loop_lag.p99, s->loop_lag.max, (long)s->loop_lag.samples},
        .send_lateness_p99_ms = s->d[D_SEND_LATENESS].p99,
        .arrival_stamps = {m->stamps_kernel, m->stamps_clock},
        .threads = m->threads > 0 ? m->threads : 0, .transport = copy(b, m->transport),
        .peak_events_per_s_per_thread = m->peak_known ? m->peak_events_per_s : ARTIFACT_NONE,
        .ceiling_events_per_s = m->ceiling_events_per_s > 0 ? m->ceiling_events_per_s : NAN,
    };
    c->ceiling_share = m->peak_known && m->ceiling_events_per_s > 0
                       ? (double)m->peak_events_per_s / m->ceiling_events_per_s : NAN;
    if (m->ceiling_events_per_s > 0)
        c->ceiling_measured_at = copy(b, m->ceiling_measured_at);
    if (!m->per_thread || m->threads <= 0)
        return;
    if (!(c->per_thread = malloc((size_t)m->threads * sizeof *c->per_thread))) {
        b->oom = true;
        return;
    }
    memcpy(c->per_thread, m->per_thread, (size_t)m->threads * sizeof *c->per_thread);
    c->n_per_thread = (size_t)m->threads;
}

/* Why the run is client-bound, each cause the summary found, in words
 * (copied; "" when it is not: one type whatever the run met). */
static char *client_bound_reason(struct builder *b, const struct run_summary *s)
{
    char why[512];
    size_t len = 0;
    why[0] = '\0';
#define WHY(...) (len += (size_t)snprintf(why + len, len < sizeof why ? sizeof why - len : 0, __VA_ARGS__))
    if (s->sends_late)
        WHY("%ssend lateness p99 %.2f ms over 1 ms", len ? "; " : "", s->d[D_SEND_LATENESS].p99);
    if (s->clock_stamps_lagged)
        WHY("%sevent-loop lag p99 %.2f ms while over 1%% of arrivals were dated by the client's clock",
            len ? "; " : "", s->loop_lag.p99);
    if (s->first_output_merged)
        WHY("%s%d of %d requests' first outputs were read merged with later output or late without a "
            "kernel stamp: their TTFT is an upper bound", len ? "; " : "", s->first_output_merged, s->completed);
#undef WHY
    return copy(b, s->client_bound ? why : "");
}

/* steady_state from the summary's (stats/steady.h). */
static void steady_of(struct builder *b, const struct steady_state *st, struct bench_steady *out)
{
    *out = (struct bench_steady){
        .present = true, .reached = st->reached, .reason = copy(b, st->reason),
        .basis = copy(b, steady_basis_name(st->basis)), .target = st->target, .band = st->band,
        .not_before_s = st->not_before_s, .run_s = st->run_s, .start_s = st->start_s, .end_s = st->end_s,
        .length_s = st->length_s, .share = st->share, .level = st->level, .requests = st->requests,
        .ttft_p50_ms = st->ttft.p50, .ttft_p99_ms = st->ttft.p99, .tpot_p50_ms = st->tpot.p50,
        .tpot_p99_ms = st->tpot.p99, .itl_p50_ms = st->itl.p50, .itl_p99_ms = st->itl.p99,
        .e2e_p50_ms = st->e2e.p50, .e2e_p99_ms = st->e2e.p99,
        .output_throughput = st->output_throughput, .request_throughput = st->request_throughput,
    };
}

/* anvil's additions to the seed's top level. */
static void anvil_fields_of(struct builder *b, const struct bench_meta *m, const struct run_summary *s,
                            struct benchmark *out)
{
    out->endpoint = copy(b, m->endpoint);
    out->engine_detected = copy(b, m->server->engine);
    out->engine_version = copy(b, m->server->engine_version);
    out->warmup_requests = m->warmup;
    out->request_rate = isinf(m->request_rate) ? NAN : m->request_rate;    /* null = closed loop */
    out->burstiness = closed_loop(m) ? NAN : m->burstiness;                /* closed loop: no arrivals */
    out->achieved_request_rate = m->achieved_rate;
    out->load_mode = copy(b, m->trace ? "trace-replay" : closed_loop(m) ? "closed-loop" : "open-loop");
    if (m->ramp.present) {
        out->ramp = m->ramp;
        out->ramp.strategy = copy(b, m->ramp.strategy);
    }
    out->slo = (struct bench_slo){true, m->slo.ttft_ms, m->slo.tpot_ms, m->slo.e2el_ms};
    out->good_requests = slo_any(&m->slo) ? s->good : ARTIFACT_NONE;
    out->good_request_share = s->completed ? (double)s->good / s->completed : NAN;
    out->prewarmed_connections = m->prewarmed_connections;
    out->ignore_eos = m->ignore_eos;
    out->not_sent = s->requests - s->sent;
    out->incomplete = m->incomplete;
    out->incomplete_reason = copy(b, m->incomplete_reason);
    out->ignore_eos_violations = s->inv.violations[INV_IGNORE_EOS];
    out->invariants = (struct bench_invariants){true, s->inv};
    out->prompt_token_mismatches = s->prompt_mismatch;
    out->usage_over_max_tokens = s->usage_over_max;
    out->cache_contaminated = m->cache_contaminated;
    out->journal_lines_lost = m->journal_lines_lost >= 0 ? m->journal_lines_lost : ARTIFACT_NONE;
    out->max_request_rows = m->max_request_rows > 0 ? m->max_request_rows : ARTIFACT_NONE;
    out->request_rows_left_out = 0;    /* counted by request_of */
    out->shared_prefix_tokens = m->shared_prefix_method && m->shared_prefix_tokens >= 0
                                ? (double)m->shared_prefix_tokens : NAN;
    if (m->server_gone)
        out->server_gone = (struct bench_server_gone){true, m->gone_first_failure_s,
                                                      m->gone_connect_failures, m->gone_truncated};
    if (m->server_stalled)
        out->server_stalled = (struct bench_server_stalled){true, m->stall_timeout_s, m->stall_detected_s,
                                                            m->stall_silent_s, m->stall_in_flight};
    for (int k = 1; k <= FAIL_OTHER; k++)
        if (s->failed_by[k])
            count_key(b, &out->failed_by_category, fail_kind_name((enum fail_kind)k), s->failed_by[k]);
    calibration_of(b, m, &out->calibration);
    if (m->duration_s > 0)
        out->duration_mode = (struct bench_duration_mode){
            .present = true, .duration_s = m->duration_s, .warmup_s = m->warmup_s, .window_s = m->window_s,
            .tokens_in_window = s->window_tokens, .aggregate_tps = s->aggregate_tps,
            .requests_started_in_window = s->sent, .incomplete_requests = s->cut,
            .warmup_requests = s->warmup_requests,
            .window_start_ns = m->window_start_ns ? (double)m->window_start_ns : NAN,
            .window_end_ns = m->window_end_ns ? (double)m->window_end_ns : NAN,
            .token_source = s->window.chunks ? copy(b, token_source_name(window_token_source(&s->window))) : NULL,
            .server_tokens_in_window = m->server_tokens_in_window,
        };
    steady_of(b, &s->steady, &out->steady_state);
    out->workload = (struct bench_workload){true, copy(b, m->dataset), m->input_range, m->output_range,
                                            m->shared_prefix_len};

    if (m->sweep.case_id)
        /* an unlabelled target is named by its engine, as in `engine` */
        out->sweep = (struct bench_sweep){
            true, copy(b, m->sweep.target ? m->sweep.target : m->engine_label ? m->engine_label : m->server->engine),
            copy(b, m->sweep.case_id), m->sweep.round,
        };
    client_of(b, m, s, &out->client);
    out->client_bound = s->client_bound;
    out->client_bound_reason = client_bound_reason(b, s);
    out->first_output_merged_requests = s->first_output_merged;
}

/* The late sends of a replayed trace, one record at a time. */
static void trace_late(const struct req_record *r, struct bench_trace *t)
{
    if (r->t_start && !r->warmup && r->t_scheduled && ns_to_ms(r->t_start - r->t_scheduled) > TRACE_LATE_MS)
        t->late_sends++;
}

int benchmark_from_iter(const struct bench_meta *meta, struct rec_iter *it, const struct run_summary *s,
                        struct benchmark *out)
{
    struct builder b = {0};
    *out = (struct benchmark){0};
    run_fields_of(&b, meta, s, out);
    anvil_fields_of(&b, meta, s, out);
    if (provenance_collect(&out->provenance, meta->argc, meta->argv, false) != 0)
        b.oom = true;
    methodology_of(&b, s->method, &out->timing_methodology);
    metrics_of(&b, s, &out->metrics);
    if (meta->trace)
        trace_of(&b, meta->trace, s, &out->workload.trace);
    size_t cap = it->recs ? it->n : 0;
    rows_alloc(&b, meta, cap, out);
    if (it->rewind(it) != 0)
        b.oom = true;
    for (const struct req_record *r; !b.oom && (r = it->next(it));) {
        request_of(&b, meta, r, &cap, out);
        if (meta->trace)
            trace_late(r, &out->workload.trace);
    }
    if (it->err[0])
        b.oom = true;
    if (meta->images) {
        out->workload.images = *meta->images;
        out->workload.images.format = copy(&b, meta->images->format ? meta->images->format : "png");
    }
    if (meta->agentic && it->recs)
        agentic_of(&b, meta, it->recs, (int)it->n, &out->workload.agentic);
    if (meta->prefix_cache)
        prefix_cache_of(&b, meta->prefix_cache, s, &out->workload.prefix_cache);
    if (b.oom) {
        benchmark_free(out);
        return -1;
    }
    return 0;
}

int benchmark_from_run(const struct bench_meta *meta, const struct req_record *recs, int n,
                       const struct run_summary *s, struct benchmark *out)
{
    struct rec_iter it;
    rec_iter_array(&it, recs, n);
    return benchmark_from_iter(meta, &it, s, out);
}

const struct calibration *bench_calibration_search(const struct bench_calibration *c, struct calibration *out)
{
    const struct bench_calib_search *s = &c->search;
    if (!s->present)
        return NULL;
    *out = (struct calibration){
        .target_tokens = s->target_tokens, .tolerance_tokens = s->tolerance_tokens, .words = s->filler_words,
        .tokens = s->measured_tokens, .converged = s->converged,
    };
    for (size_t i = 0; i < s->n_steps && out->n_steps < CALIB_MAX_STEPS; i++)
        out->steps[out->n_steps++] = (struct calib_step){
            s->steps[i].filler_words, s->steps[i].tokens == ARTIFACT_NONE ? -1 : s->steps[i].tokens,
            s->steps[i].truncated};
    return out;
}

cJSON *artifact_benchmark(const struct bench_meta *meta, const struct req_record *recs, int n,
                          const struct run_summary *s)
{
    struct benchmark b;
    if (benchmark_from_run(meta, recs, n, s, &b) != 0)
        return NULL;
    cJSON *j = benchmark_to_json(&b);
    benchmark_free(&b);
    return j;
}

cJSON *artifact_request_timing(const struct req_record *r)
{
    struct builder b = {0};
    struct bench_timing t;
    timing_of(&b, r, &t);
    cJSON *j = b.oom ? NULL : benchmark_timing_json(&t);
    free(t.output_token_source);
    free(t.finish_reason);
    free(t.trace_id);
    return j;
}

cJSON *artifact_failure(const struct req_record *r)
{
    struct builder b = {0};
    struct bench_failure f;
    failure_of(&b, r, &f);
    cJSON *j = b.oom ? NULL : benchmark_failure_json(&f);
    free(f.category);
    free(f.phase);
    free(f.message);
    free(f.trace_id);
    return j;
}
