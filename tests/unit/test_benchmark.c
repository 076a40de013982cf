/* test_benchmark.c — the typed benchmark/v1 artifact: read ∘ write is the
 * identity on every field, seed 001 reads with its real values, and a
 * missing or mistyped key is an error naming the file and the key path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "artifact/benchmark.h"
#include "testutil.h"

/* ---- a struct with a distinct value in every field ---- */

static int counter;

static double num(void)
{
    return ++counter + 0.25;
}

static long whole(void)
{
    return ++counter;
}

static char *str(void)
{
    char s[32];
    snprintf(s, sizeof s, "s%d", ++counter);
    return strdup(s);
}

static void fill_counts(struct bench_counts *c, size_t n)
{
    c->v = calloc(n, sizeof *c->v);
    c->n = n;
    for (size_t i = 0; i < n; i++)
        c->v[i] = (struct bench_count){str(), whole()};
}

static void fill_dist(struct dist *d)
{
    d->samples = (size_t)whole();
    d->mean = num();
    d->min = num();
    d->max = num();
    for (int i = 0; i < DIST_NPCT; i++)
        *dist_pct(d, i) = num();
}

static void fill_timing(struct bench_timing *t)
{
    *t = (struct bench_timing){
        .content_chunks = whole(), .decode_tok_s = num(), .e2e_ms = num(), .effective_prefill_tok_s = num(),
        .generation_ms = num(), .mean_inter_token_latency_ms = num(), .output_token_source = str(),
        .output_tokens = whole(), .planned_context_tokens = num(), .prompt_tokens = num(),
        .reasoning_chunks = whole(), .request_index = whole(), .time_to_first_output_ms = num(),
        .tpot_ms = num(), .ttft_ms = num(), .visible_generation_ms = num(), .time_to_headers_ms = num(),
        .time_to_first_byte_ms = num(), .time_to_first_event_ms = num(), .time_to_second_output_ms = num(),
        .generation_tps_per_user = num(), .send_lateness_ms = num(), .scheduled_ttft_ms = num(),
        .scheduled_e2e_ms = num(), .e2e_output_tps_per_user = num(), .output_chunks = whole(),
        .tool_call_chunks = whole(), .tool_calls = whole(),
        .cached_tokens = num(), .finish_reason = str(), .max_tokens = whole(), .start_monotonic_ns = num(),
        .first_output_merged = true,
    };
}

static void fill_failure(struct bench_failure *f)
{
    *f = (struct bench_failure){whole(), str(), whole(), str(), str(), num()};
}

static void fill_invariants(struct invariants *inv)
{
    inv->checked = (int)whole();
    for (int i = 0; i < INV_COUNT; i++)
        inv->violations[i] = (int)whole();
    inv->n_examples = 2;
    for (int i = 0; i < 2; i++) {
        inv->examples[i].request_index = (int)whole();
        inv->examples[i].what = (enum invariant)(i + 1);
        snprintf(inv->examples[i].detail, sizeof inv->examples[i].detail, "detail %d", (int)whole());
    }
}

static void fill_provenance(struct provenance *p)
{
    *p = (struct provenance){.present = true, .anvil_version = str(), .n_command_line = 3,
                             .host = str(), .kernel = str(), .cpu_model = str(), .cpu_cores = whole()};
    p->command_line = calloc(3, sizeof *p->command_line);
    for (int i = 0; i < 3; i++)
        p->command_line[i] = str();
}

static void fill_methodology(struct bench_methodology *t)
{
    *t = (struct bench_methodology){
        true, str(), str(), str(), str(), str(), str(), str(), str(), str(), str(), str(), str(), str(),
        str(), str(),
    };
}

static void fill_metrics(struct bench_metrics *m)
{
    struct dist *all[] = {
        &m->dist.ttft, &m->dist.time_to_first_output, &m->dist.e2e, &m->dist.generation, &m->dist.tpot,
        &m->dist.mean_inter_token_latency, &m->dist.decode_tok_s, &m->dist.effective_prefill_tok_s,
        &m->dist.prompt_tokens, &m->dist.visible_generation, &m->dist.output_tokens_per_request,
        &m->dist.itl, &m->dist.itl_per_token, &m->dist.tokens_per_chunk, &m->dist.time_to_headers,
        &m->dist.time_to_first_byte, &m->dist.time_to_first_event, &m->dist.time_to_second_output,
        &m->dist.generation_tps_per_user, &m->dist.send_lateness, &m->dist.scheduled_ttft,
        &m->dist.scheduled_e2e,
    };
    cr_assert_eq(sizeof all / sizeof *all * sizeof(struct dist), sizeof m->dist, "every distribution is filled");
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        fill_dist(all[i]);
    m->content_chunks = whole();
    m->content_chunks_s = num();
    m->reasoning_chunks = whole();
    m->tool_call_chunks = whole();
    m->tool_calls = whole();
    fill_counts(&m->output_token_sources, 2);
    m->output_tokens = whole();
    m->prompt_tokens = whole();
    m->prompt_token_samples = whole();
    m->prefix_cache_hit_avg = num();
    m->throughput_tok_s = num();
    m->request_throughput = num();
    m->output_throughput = num();
    m->total_token_throughput = num();
    m->goodput_rps = num();
    m->aggregate_tps = num();
    m->peak_output_tps_1s = num();
}

static void fill(struct benchmark *b)
{
    counter = 0;
    *b = (struct benchmark){
        .schema = strdup(BENCHMARK_SCHEMA), .measurement_protocol = str(), .run_id = str(),
        .started_at = str(), .finished_at = str(), .base_url = str(), .model = str(), .engine = str(),
        .gpu = str(), .concurrency = whole(), .requests = whole(), .completed = whole(), .failed = whole(),
        .context_tokens = num(), .context_seed = whole(), .max_context_tokens = num(), .max_context_source = str(), .max_input_tokens = num(), .max_tokens = whole(),
        .wall_clock_ms = num(), .manifest = cJSON_Parse("{\"a\": [1, \"x\"]}"),
        .source_recipe = cJSON_CreateString("recipe"), .tier = cJSON_CreateNumber(3),
        .serve_flags = {true, true, true, str(), str()},
        .endpoint = str(), .engine_detected = str(), .engine_version = str(), .warmup_requests = whole(),
        .request_rate = num(), .burstiness = INFINITY, .achieved_request_rate = num(), .load_mode = str(),
        .slo = {true, num(), num(), num()}, .good_requests = whole(), .good_request_share = num(),
        .prewarmed_connections = whole(), .ignore_eos = true, .not_sent = whole(), .incomplete = true,
        .incomplete_reason = str(), .ignore_eos_violations = whole(), .has_invariants = true,
        .prompt_token_mismatches = whole(), .usage_over_max_tokens = whole(), .cache_contaminated = true, .journal_lines_lost = whole(),
        .calibration = {.present = true, .method = str(), .searched = true, .source = str(),
                        .cache_file = str(), .cache_key = str(), .shared_prefix_method = str()},
        .context_tokens_measured = num(), .shared_prefix_tokens = num(),
        .server_gone = {true, num(), whole(), whole()},
        .server_stalled = {true, num(), num(), num(), whole()},
        .duration_mode = {true, num(), num(), num(), num(), num(), whole(), whole(), whole(), num(), num(), str(), num()},
        .workload = {true, str(), num(), num(), whole(),
                     {true, str(), whole(), whole(), whole(), num(), num(), num(), num(), num(), num(), whole(), num(),
                      num(), str()},
                     {true, str(), str(), num(), whole(), whole(), whole(), num(), num(), true, num(), str(), 0}},
        .sweep = {true, str(), str(), whole()},
        .client = {true, num(), num(), whole(), num(), num(), num(), num(), num(), whole(), num(), whole(), whole()},
        .client_bound = true, .client_bound_reason = str(), .first_output_merged_requests = whole(),
    };
    b->workload.agentic = (struct bench_agentic){true, str(), whole(), whole(), whole(), whole(), num(), num(),
                                                 num(), calloc(2, sizeof(struct bench_agentic_turn)), 2};
    for (int i = 0; i < 2; i++)
        b->workload.agentic.per_turn[i] = (struct bench_agentic_turn){whole(), whole(), num(), num(), num(), NAN,
                                                                      num(), num(), whole(), num(), NAN, num()};
    b->workload.images = (struct bench_images){true, whole(), whole(), whole(), num(), str()};
    b->client.threads = 2;
    b->client.per_thread = calloc(2, sizeof *b->client.per_thread);
    b->client.n_per_thread = 2;
    for (int i = 0; i < 2; i++)
        b->client.per_thread[i] = (struct bench_thread){whole(), num(), num(), whole()};
    fill_counts(&b->context_distribution, 3);
    fill_invariants(&b->invariants);
    fill_counts(&b->failed_by_category, 2);
    b->calibration.c = (struct calibration){.target_tokens = whole(), .tolerance_tokens = whole(),
                                            .words = whole(), .tokens = whole(), .n_steps = 3, .converged = 1};
    for (int i = 0; i < 3; i++)
        b->calibration.c.steps[i] = (struct calib_step){whole(), whole()};
    b->calibration.c.steps[1].tokens = -1;      /* refused: null */
    b->calibration.c.steps[2].truncated = true;
    fill_provenance(&b->provenance);
    fill_methodology(&b->timing_methodology);
    fill_metrics(&b->metrics);
    b->n_request_timings = 2;
    b->request_timings = calloc(2, sizeof *b->request_timings);
    for (int i = 0; i < 2; i++)
        fill_timing(&b->request_timings[i]);
    b->n_failures = 2;
    b->failures = calloc(2, sizeof *b->failures);
    for (int i = 0; i < 2; i++)
        fill_failure(&b->failures[i]);
}

/* ---- field-by-field comparison ---- */

/* Equal doubles, or both NaN (null); whole numbers compare as doubles. */
static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

#define SAME_NUM(a, b, what) \
    cr_assert(same_double((double)(a), (double)(b)), "%s: %.17g != %.17g", what, (double)(a), (double)(b))
#define SAME_STR(a, b, what) \
    cr_assert(((a) == NULL && (b) == NULL) || ((a) && (b) && !strcmp((a), (b))), "%s: '%s' != '%s'", what, \
              (a) ? (a) : "(null)", (b) ? (b) : "(null)")
#define SAME(a, b, f) SAME_NUM((a)->f, (b)->f, #f)
#define SAME_S(a, b, f) SAME_STR((a)->f, (b)->f, #f)

static void same_counts(const struct bench_counts *a, const struct bench_counts *b, const char *what)
{
    cr_assert_eq(a->n, b->n, "%s: %zu entries, %zu", what, a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        SAME_STR(a->v[i].key, b->v[i].key, what);
        SAME_NUM(a->v[i].count, b->v[i].count, what);
    }
}

static void same_opaque(const cJSON *a, const cJSON *b, const char *what)
{
    cr_assert((!a && !b) || (a && b && cJSON_Compare(a, b, true)), "%s differs", what);
}

static void same_dist(const struct dist *a, const struct dist *b, const char *what)
{
    SAME_NUM(a->samples, b->samples, what);
    SAME_NUM(a->mean, b->mean, what);
    SAME_NUM(a->min, b->min, what);
    SAME_NUM(a->max, b->max, what);
    for (int i = 0; i < DIST_NPCT; i++)
        SAME_NUM(dist_pct_of(a, i), dist_pct_of(b, i), what);
}

static void same_timing(const struct bench_timing *a, const struct bench_timing *b)
{
    SAME(a, b, content_chunks); SAME(a, b, decode_tok_s); SAME(a, b, e2e_ms);
    SAME(a, b, effective_prefill_tok_s); SAME(a, b, generation_ms); SAME(a, b, mean_inter_token_latency_ms);
    SAME_S(a, b, output_token_source); SAME(a, b, output_tokens); SAME(a, b, planned_context_tokens);
    SAME(a, b, prompt_tokens); SAME(a, b, reasoning_chunks); SAME(a, b, request_index);
    SAME(a, b, time_to_first_output_ms); SAME(a, b, tpot_ms); SAME(a, b, ttft_ms);
    SAME(a, b, visible_generation_ms); SAME(a, b, time_to_headers_ms); SAME(a, b, time_to_first_byte_ms);
    SAME(a, b, time_to_first_event_ms); SAME(a, b, time_to_second_output_ms); SAME(a, b, generation_tps_per_user);
    SAME(a, b, send_lateness_ms); SAME(a, b, scheduled_ttft_ms); SAME(a, b, scheduled_e2e_ms);
    SAME(a, b, e2e_output_tps_per_user); SAME(a, b, output_chunks); SAME(a, b, cached_tokens);
    SAME(a, b, tool_call_chunks); SAME(a, b, tool_calls);
    SAME_S(a, b, finish_reason); SAME(a, b, max_tokens); SAME(a, b, start_monotonic_ns);
    cr_assert_eq(a->first_output_merged, b->first_output_merged);
}

static void same_failure(const struct bench_failure *a, const struct bench_failure *b)
{
    SAME(a, b, request_index); SAME_S(a, b, category); SAME(a, b, http_status); SAME_S(a, b, phase);
    SAME_S(a, b, message); SAME(a, b, elapsed_ms);
}

static void same_provenance(const struct provenance *a, const struct provenance *b)
{
    cr_assert_eq(a->present, b->present, "provenance.present");
    SAME_S(a, b, anvil_version); SAME_S(a, b, host); SAME_S(a, b, kernel); SAME_S(a, b, cpu_model);
    SAME(a, b, cpu_cores);
    cr_assert_eq(!a->command_line, !b->command_line, "command_line null");
    cr_assert_eq(a->n_command_line, b->n_command_line);
    for (size_t i = 0; i < a->n_command_line; i++)
        SAME_STR(a->command_line[i], b->command_line[i], "command_line");
}

static void same_invariants(const struct invariants *a, const struct invariants *b)
{
    SAME(a, b, checked);
    for (int i = 0; i < INV_COUNT; i++)
        SAME(a, b, violations[i]);
    cr_assert_eq(a->n_examples, b->n_examples);
    for (int i = 0; i < a->n_examples; i++) {
        SAME(a, b, examples[i].request_index);
        cr_assert_eq(a->examples[i].what, b->examples[i].what);
        SAME_S(a, b, examples[i].detail);
    }
}

static void same_methodology(const struct bench_methodology *a, const struct bench_methodology *b)
{
    cr_assert_eq(a->present, b->present);
    SAME_S(a, b, clock); SAME_S(a, b, request_start); SAME_S(a, b, ttft); SAME_S(a, b, time_to_first_output);
    SAME_S(a, b, e2e); SAME_S(a, b, generation); SAME_S(a, b, tpot); SAME_S(a, b, mean_inter_token_latency);
    SAME_S(a, b, decode); SAME_S(a, b, effective_prefill); SAME_S(a, b, output_tokens); SAME_S(a, b, itl);
    SAME_S(a, b, throughput); SAME_S(a, b, distributions); SAME_S(a, b, percentile_method);
}

static void same_metrics(const struct bench_metrics *a, const struct bench_metrics *b)
{
    const struct dist *x = (const struct dist *)&a->dist, *y = (const struct dist *)&b->dist;
    for (size_t i = 0; i < sizeof a->dist / sizeof(struct dist); i++)
        same_dist(&x[i], &y[i], "metrics distribution");
    SAME(a, b, content_chunks); SAME(a, b, content_chunks_s); SAME(a, b, reasoning_chunks);
    SAME(a, b, tool_call_chunks); SAME(a, b, tool_calls);
    same_counts(&a->output_token_sources, &b->output_token_sources, "output_token_sources");
    SAME(a, b, output_tokens); SAME(a, b, prompt_tokens); SAME(a, b, prompt_token_samples);
    SAME(a, b, prefix_cache_hit_avg); SAME(a, b, throughput_tok_s); SAME(a, b, request_throughput);
    SAME(a, b, output_throughput); SAME(a, b, total_token_throughput); SAME(a, b, goodput_rps);
    SAME(a, b, aggregate_tps); SAME(a, b, peak_output_tps_1s);
}

static void same_blocks(const struct benchmark *a, const struct benchmark *b)
{
    cr_assert_eq(a->serve_flags.present, b->serve_flags.present);
    cr_assert_eq(a->serve_flags.no_thinking, b->serve_flags.no_thinking);
    cr_assert_eq(a->serve_flags.shared_prefix_burst, b->serve_flags.shared_prefix_burst);
    SAME_S(a, b, serve_flags.reasoning_effort); SAME_S(a, b, serve_flags.thinking_mode);
    cr_assert_eq(a->slo.present, b->slo.present);
    SAME(a, b, slo.ttft_ms); SAME(a, b, slo.tpot_ms); SAME(a, b, slo.e2el_ms);
    cr_assert_eq(a->calibration.present, b->calibration.present);
    cr_assert_eq(a->calibration.searched, b->calibration.searched);
    SAME_S(a, b, calibration.method); SAME(a, b, calibration.c.target_tokens);
    SAME(a, b, calibration.c.tolerance_tokens); SAME(a, b, calibration.c.words); SAME(a, b, calibration.c.tokens);
    SAME(a, b, calibration.c.converged); SAME(a, b, calibration.c.n_steps);
    for (int i = 0; i < a->calibration.c.n_steps; i++) {
        SAME(a, b, calibration.c.steps[i].words);
        SAME(a, b, calibration.c.steps[i].tokens);
        SAME(a, b, calibration.c.steps[i].truncated);
    }
    SAME_S(a, b, calibration.source); SAME_S(a, b, calibration.cache_file);
    SAME_S(a, b, calibration.cache_key); SAME_S(a, b, calibration.shared_prefix_method);
    cr_assert_eq(a->server_gone.present, b->server_gone.present);
    SAME(a, b, server_gone.first_failure_s); SAME(a, b, server_gone.connect_failures);
    SAME(a, b, server_gone.truncated);
    cr_assert_eq(a->server_stalled.present, b->server_stalled.present);
    SAME(a, b, server_stalled.stall_timeout_s); SAME(a, b, server_stalled.detected_s);
    SAME(a, b, server_stalled.silent_s); SAME(a, b, server_stalled.in_flight);
    const struct bench_duration_mode *d = &a->duration_mode, *e = &b->duration_mode;
    cr_assert_eq(d->present, e->present);
    SAME(d, e, duration_s); SAME(d, e, warmup_s); SAME(d, e, window_s); SAME(d, e, tokens_in_window);
    SAME(d, e, aggregate_tps); SAME(d, e, requests_started_in_window); SAME(d, e, incomplete_requests);
    SAME(d, e, warmup_requests); SAME(d, e, window_start_ns); SAME(d, e, window_end_ns);
    SAME_S(d, e, token_source); SAME(d, e, server_tokens_in_window);
    cr_assert_eq(a->workload.present, b->workload.present);
    SAME_S(a, b, workload.dataset); SAME(a, b, workload.input_len_range); SAME(a, b, workload.output_len_range);
    SAME(a, b, workload.shared_prefix_len);
    const struct bench_trace *t = &a->workload.trace, *u = &b->workload.trace;
    cr_assert_eq(t->present, u->present);
    SAME_S(t, u, format); SAME(t, u, lines); SAME(t, u, requests); SAME(t, u, block_tokens); SAME(t, u, speed);
    SAME(t, u, start_s); SAME(t, u, duration_s); SAME(t, u, span_s); SAME(t, u, theoretical_prefix_hit_rate);
    SAME(t, u, measured_prefix_hit_rate); SAME(t, u, late_sends); SAME(t, u, late_send_threshold_ms);
    SAME(t, u, server_prefix_hit_rate); SAME_S(t, u, server_prefix_hit_rate_source);
    cr_assert_eq(a->workload.images.present, b->workload.images.present);
    SAME(a, b, workload.images.per_request); SAME(a, b, workload.images.width);
    SAME(a, b, workload.images.height); SAME(a, b, workload.images.tokens_per_image);
    SAME_S(a, b, workload.images.format);
    const struct bench_agentic *ga = &a->workload.agentic, *gb = &b->workload.agentic;
    cr_assert_eq(ga->present, gb->present);
    SAME_S(ga, gb, source); SAME(ga, gb, sessions); SAME(ga, gb, turns); SAME(ga, gb, sessions_completed);
    SAME(ga, gb, sub_agent_requests);
    SAME(ga, gb, session_wall_ms_mean); SAME(ga, gb, session_wall_ms_p50); SAME(ga, gb, session_wall_ms_max);
    cr_assert_eq(ga->n_per_turn, gb->n_per_turn);
    for (size_t i = 0; i < ga->n_per_turn; i++) {
        SAME(ga, gb, per_turn[i].turn); SAME(ga, gb, per_turn[i].requests);
        SAME(ga, gb, per_turn[i].time_to_first_output_ms); SAME(ga, gb, per_turn[i].ttft_ms);
        SAME(ga, gb, per_turn[i].prompt_tokens); SAME(ga, gb, per_turn[i].cached_tokens);
        SAME(ga, gb, per_turn[i].think_time_ms); SAME(ga, gb, per_turn[i].gap_ms);
        SAME(ga, gb, per_turn[i].sub_agent_requests); SAME(ga, gb, per_turn[i].sub_agent_cached_tokens);
    }
    const struct bench_prefix_cache *pc = &a->workload.prefix_cache, *pd = &b->workload.prefix_cache;
    cr_assert_eq(pc->present, pd->present);
    SAME_S(pc, pd, flush); SAME_S(pc, pd, flush_endpoint); SAME(pc, pd, target_hit_rate); SAME(pc, pd, groups);
    SAME(pc, pd, primed_requests); SAME(pc, pd, prefix_tokens); SAME(pc, pd, achieved_hit_rate);
    SAME(pc, pd, tolerance); SAME(pc, pd, met); SAME(pc, pd, server_hit_rate);
    SAME_S(pc, pd, server_hit_rate_source); SAME(pc, pd, server_met);
    cr_assert_eq(a->sweep.present, b->sweep.present);
    SAME_S(a, b, sweep.target); SAME_S(a, b, sweep.case_id); SAME(a, b, sweep.round);
    const struct bench_client *c = &a->client, *k = &b->client;
    cr_assert_eq(c->present, k->present);
    SAME(c, k, cpu_user_s); SAME(c, k, cpu_sys_s); SAME(c, k, sse_events); SAME(c, k, cpu_us_per_event);
    SAME(c, k, cpu_utilization); SAME(c, k, loop_lag_p50_ms); SAME(c, k, loop_lag_p99_ms);
    SAME(c, k, loop_lag_max_ms); SAME(c, k, loop_lag_samples); SAME(c, k, send_lateness_p99_ms);
    SAME(c, k, arrival_stamps_kernel_rx); SAME(c, k, arrival_stamps_client_clock);
    SAME(c, k, threads);
    cr_assert_eq(c->n_per_thread, k->n_per_thread);
    cr_assert_eq(c->per_thread == NULL, k->per_thread == NULL);
    for (size_t i = 0; i < c->n_per_thread; i++) {
        SAME(c, k, per_thread[i].requests); SAME(c, k, per_thread[i].loop_lag_p99_ms);
        SAME(c, k, per_thread[i].loop_lag_max_ms); SAME(c, k, per_thread[i].loop_lag_samples);
    }
}

static void same_benchmark(const struct benchmark *a, const struct benchmark *b)
{
    SAME_S(a, b, schema); SAME_S(a, b, measurement_protocol); SAME_S(a, b, run_id); SAME_S(a, b, started_at);
    SAME_S(a, b, finished_at); SAME_S(a, b, base_url); SAME_S(a, b, model); SAME_S(a, b, engine);
    SAME_S(a, b, gpu); SAME(a, b, concurrency); SAME(a, b, requests); SAME(a, b, completed); SAME(a, b, failed);
    SAME(a, b, context_tokens); SAME(a, b, context_tokens_measured); SAME(a, b, shared_prefix_tokens);
    same_counts(&a->context_distribution, &b->context_distribution, "context_distribution");
    SAME(a, b, context_seed); SAME(a, b, max_context_tokens); SAME_S(a, b, max_context_source); SAME(a, b, max_input_tokens);
    SAME(a, b, max_tokens); SAME(a, b, wall_clock_ms);
    same_opaque(a->manifest, b->manifest, "manifest");
    same_opaque(a->source_recipe, b->source_recipe, "source_recipe");
    same_opaque(a->tier, b->tier, "tier");
    SAME_S(a, b, endpoint); SAME_S(a, b, engine_detected); SAME_S(a, b, engine_version);
    SAME(a, b, warmup_requests); SAME(a, b, request_rate); SAME(a, b, burstiness);
    SAME(a, b, achieved_request_rate); SAME_S(a, b, load_mode); SAME(a, b, good_requests);
    SAME(a, b, good_request_share); SAME(a, b, prewarmed_connections);
    cr_assert_eq(a->ignore_eos, b->ignore_eos);
    SAME(a, b, not_sent);
    cr_assert_eq(a->incomplete, b->incomplete);
    SAME_S(a, b, incomplete_reason); SAME(a, b, ignore_eos_violations);
    cr_assert_eq(a->has_invariants, b->has_invariants);
    same_invariants(&a->invariants, &b->invariants);
    SAME(a, b, prompt_token_mismatches); SAME(a, b, usage_over_max_tokens);
    cr_assert_eq(a->cache_contaminated, b->cache_contaminated);
    SAME(a, b, journal_lines_lost);
    same_counts(&a->failed_by_category, &b->failed_by_category, "failed_by_category");
    same_blocks(a, b);
    cr_assert_eq(a->client_bound, b->client_bound);
    SAME_S(a, b, client_bound_reason); SAME(a, b, first_output_merged_requests);
    same_provenance(&a->provenance, &b->provenance);
    same_methodology(&a->timing_methodology, &b->timing_methodology);
    same_metrics(&a->metrics, &b->metrics);
    cr_assert_eq(a->n_request_timings, b->n_request_timings);
    for (size_t i = 0; i < a->n_request_timings; i++)
        same_timing(&a->request_timings[i], &b->request_timings[i]);
    cr_assert_eq(a->n_failures, b->n_failures);
    for (size_t i = 0; i < a->n_failures; i++)
        same_failure(&a->failures[i], &b->failures[i]);
}

/* Writes b as a file would hold it, parses the text and reads it back. */
static void through_text(const struct benchmark *b, struct benchmark *out)
{
    cJSON *j = benchmark_to_json(b);
    cr_assert(j);
    char *text = artifact_print(j);
    cJSON_Delete(j);
    j = cJSON_Parse(text);
    free(text);
    char err[256];
    cr_assert_eq(benchmark_from_json(j, "t.json", out, err, sizeof err), 0, "%s", err);
    cJSON_Delete(j);
}

Test(benchmark, read_after_write_is_the_identity_on_every_field)
{
    struct benchmark a, b;
    fill(&a);
    through_text(&a, &b);
    same_benchmark(&a, &b);
    benchmark_free(&a);
    benchmark_free(&b);
}

/* Every optional field at none: null numbers and strings, absent blocks,
 * no SLOs, no calibration search, no command line. */
Test(benchmark, read_after_write_keeps_nulls_and_absent_blocks)
{
    struct benchmark a, b;
    fill(&a);
    free(a.gpu);
    free(a.sweep.target);
    free(a.sweep.case_id);
    a.gpu = NULL;
    a.context_tokens = a.wall_clock_ms = a.request_rate = a.burstiness = NAN;
    a.good_requests = ARTIFACT_NONE;
    a.good_request_share = NAN;
    a.duration_mode = (struct bench_duration_mode){0};
    a.sweep = (struct bench_sweep){0};
    free(a.client.per_thread);
    a.client = (struct bench_client){0};
    a.slo = (struct bench_slo){false, NAN, NAN, NAN};
    a.calibration.searched = false;
    a.calibration.c = (struct calibration){0};
    artifact_strings_free(a.provenance.command_line, a.provenance.n_command_line);
    a.provenance.command_line = NULL;
    a.provenance.n_command_line = 0;
    a.provenance.cpu_cores = ARTIFACT_NONE;
    a.failures[0].http_status = ARTIFACT_NONE;
    a.request_timings[1].cached_tokens = NAN;
    through_text(&a, &b);
    same_benchmark(&a, &b);
    benchmark_free(&a);
    benchmark_free(&b);
}

/* ---- seed 001 ---- */

Test(benchmark, reads_seed001_with_its_values)
{
    struct benchmark b;
    char err[256], sha[65];
    cr_assert_eq(benchmark_read_file("tests/data/seed-001.json", &b, sha, err, sizeof err), 0, "%s", err);
    cr_assert_eq(strlen(sha), 64);
    cr_assert_str_eq(b.measurement_protocol, "capacity-v3");
    cr_assert_str_eq(b.run_id, "benchmark-20260905T034617Z");
    cr_assert_str_eq(b.engine, "sglang");
    cr_assert_str_eq(b.model, "qwen38-27b-inferact-nvfp4-pro6000-dflash2-k12-chunk1k-mamba40");
    cr_assert_str_eq(b.gpu, "Primary Node / RTX PRO 6000 Blackwell Max-Q / TP=1");
    cr_assert_eq(b.concurrency, 8);
    cr_assert_eq(b.requests, 16);
    cr_assert_eq(b.completed, 16);
    cr_assert_eq(b.failed, 0);
    cr_assert_eq(b.context_tokens, 4096);
    cr_assert_eq(b.context_distribution.n, 1);
    cr_assert_str_eq(b.context_distribution.v[0].key, "4096");
    cr_assert_eq(b.context_distribution.v[0].count, 16);
    cr_assert_eq(b.context_seed, 0);
    cr_assert_eq(b.max_context_tokens, 262144);
    cr_assert_eq(b.max_tokens, 512);
    cr_assert_eq(b.wall_clock_ms, 1649.7957999818027);
    cr_assert_null(b.manifest);
    cr_assert(b.serve_flags.present && !b.serve_flags.no_thinking);
    cr_assert_str_eq(b.serve_flags.thinking_mode, "disabled");
    cr_assert_null(b.serve_flags.reasoning_effort);
    cr_assert_str_eq(b.timing_methodology.clock, "client time.perf_counter");
    cr_assert_null(b.timing_methodology.request_start, "an entry seed 001 does not have");
    const struct bench_metrics *m = &b.metrics;
    cr_assert_eq(m->dist.ttft.p50, 184.22580009792);
    cr_assert_eq(m->dist.ttft.samples, 16);
    cr_assert_eq(m->dist.tpot.p99, 16.090928001794964);
    cr_assert_eq(m->dist.e2e.min, 621.0167999379337);
    cr_assert_eq(m->dist.decode_tok_s.p25, 73.59704660750094);
    cr_assert_eq(m->dist.mean_inter_token_latency.p90, 14.522662069166786);
    cr_assert_eq(m->dist.prompt_tokens.mean, 3613.375);
    cr_assert_eq(m->dist.itl.samples, 0, "seed 001 has no per-chunk ITL");
    cr_assert(isnan(m->dist.itl.p50));
    cr_assert_eq(m->content_chunks, 232);
    cr_assert_eq(m->output_tokens, 790);
    cr_assert_eq(m->prompt_tokens, 57814);
    cr_assert_eq(m->throughput_tok_s, 478.84713975433425);
    cr_assert(isnan(m->prefix_cache_hit_avg));
    cr_assert_eq(m->output_token_sources.n, 1);
    cr_assert_str_eq(m->output_token_sources.v[0].key, "usage");
    cr_assert_eq(m->output_token_sources.v[0].count, 16);
    cr_assert_eq(b.n_request_timings, 16);
    const struct bench_timing *t = &b.request_timings[0];
    cr_assert_eq(t->e2e_ms, 738.2585000013933);
    cr_assert_eq(t->ttft_ms, 185.5957000516355);
    cr_assert_eq(t->output_tokens, 48);
    cr_assert_eq(t->prompt_tokens, 3613);
    cr_assert_str_eq(t->output_token_source, "usage");
    cr_assert(isnan(t->time_to_headers_ms), "anvil's additions are absent");
    cr_assert_eq(b.request_timings[15].request_index, 15);
    cr_assert_eq(b.request_timings[15].prompt_tokens, 3614);
    cr_assert_eq(b.n_failures, 0);
    cr_assert_null(b.endpoint);
    cr_assert_eq(b.not_sent, ARTIFACT_NONE);
    cr_assert_not(b.incomplete);
    cr_assert_not(b.client.present);
    cr_assert_not(b.sweep.present);
    cr_assert_not(b.provenance.present);
    benchmark_free(&b);
}

/* ---- errors ---- */

/* The member named by one path segment: "key" or "key[index]". */
static cJSON *member(cJSON *o, const char *seg)
{
    char name[64];
    const char *br = strchr(seg, '[');
    snprintf(name, sizeof name, "%.*s", (int)(br ? (size_t)(br - seg) : strlen(seg)), seg);
    cJSON *v = cJSON_GetObjectItem(o, name);
    return br ? cJSON_GetArrayItem(v, atoi(br + 1)) : v;
}

/* Seed 001 with one change (the member at path "a.b[2].c" set to the JSON
 * value, or deleted when value is NULL), read under the name "x.json": the
 * read must fail; its message goes into err. */
static void read_changed(const char *path, const char *value, char *err, size_t errlen)
{
    char *text = tu_read_file("tests/data/seed-001.json", NULL);
    cJSON *j = cJSON_Parse(text);
    free(text);
    char segs[128];
    snprintf(segs, sizeof segs, "%s", path);
    cJSON *o = j;
    char *last = segs;
    for (char *dot; o && (dot = strchr(last, '.')); last = dot + 1) {
        *dot = '\0';
        o = member(o, last);
    }
    cr_assert(o, "%s", path);
    if (value)
        cJSON_ReplaceItemInObject(o, last, cJSON_Parse(value));
    else
        cJSON_DeleteItemFromObject(o, last);
    struct benchmark b;
    int rc = benchmark_from_json(j, "x.json", &b, err, errlen);
    cJSON_Delete(j);
    cr_assert_eq(rc, -1, "%s %s is accepted", path, value ? value : "deleted");
    benchmark_free(&b);
}

Test(benchmark, missing_or_mistyped_keys_name_the_file_and_the_key)
{
    struct { const char *path, *value, *want; } cases[] = {
        {"completed", NULL, "x.json: completed: missing"},
        {"metrics", NULL, "x.json: metrics: missing"},
        {"context_tokens", NULL, "x.json: context_tokens: missing"},
        {"metrics.ttft_p50_ms", "\"fast\"", "x.json: metrics.ttft_p50_ms: expected a number, got a string"},
        {"concurrency", "8.5", "x.json: concurrency: expected a whole number ≥ 0, got 8.5"},
        {"engine", "null", "x.json: engine: expected a non-empty string, got null"},
        {"schema", "\"anvil-serving.matrix/v1\"", "x.json: schema: expected \"anvil-serving.benchmark/v1\""},
        {"request_timings[3].e2e_ms", NULL, "x.json: request_timings[3].e2e_ms: missing"},
        {"request_timings[2].output_tokens", "\"48\"", "x.json: request_timings[2].output_tokens: expected a whole number"},
        {"serve_flags.no_thinking", "0", "x.json: serve_flags.no_thinking: expected true or false, got a number"},
        {"context_distribution.4096", "-1", "x.json: context_distribution.4096: expected a whole number ≥ 0"},
        {"failures", "{}", "x.json: failures: expected an array, got an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[256];
        read_changed(cases[i].path, cases[i].value, err, sizeof err);
        cr_assert(strstr(err, cases[i].want) == err, "case %zu: '%s', want '%s'", i, err, cases[i].want);
        cr_assert_null(strchr(err, '\n'), "one line");
    }
}

Test(benchmark, errors_inside_anvil_blocks_name_the_path)
{
    struct benchmark a;
    fill(&a);
    cJSON *j = benchmark_to_json(&a);
    benchmark_free(&a);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "provenance"), "cpu_cores", cJSON_CreateString("two"));
    char err[256];
    struct benchmark b;
    cr_assert_eq(benchmark_from_json(j, "r.json", &b, err, sizeof err), -1);
    cr_assert_str_eq(err, "r.json: provenance.cpu_cores: expected a whole number ≥ 1, got a string");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "client"), "loop_lag_ms"), "p99");
    cJSON_DeleteItemFromObject(j, "provenance");
    cr_assert_eq(benchmark_from_json(j, NULL, &b, err, sizeof err), -1);
    cr_assert_str_eq(err, "client.loop_lag_ms.p99: missing");
    cJSON_Delete(j);
}

/* client.threads and client.per_thread: an artifact from before them
 * (neither key) reads as "not recorded"; per_thread must have one entry per
 * thread, and threads is at least 1. */
Test(benchmark, client_threads_absent_reads_as_unrecorded_and_per_thread_must_match)
{
    struct benchmark a, b;
    fill(&a);
    cJSON *j = benchmark_to_json(&a);
    benchmark_free(&a);
    cJSON *c = cJSON_GetObjectItem(j, "client");
    char err[256];
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.client.threads, 2);
    cr_assert_eq(b.client.n_per_thread, 2);
    benchmark_free(&b);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(c, "per_thread"), 1);
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), -1);
    cr_assert_str_eq(err, "t.json: client.per_thread: has 1 entries for 2 threads");
    cJSON_DeleteItemFromObject(c, "per_thread");
    cJSON_ReplaceItemInObject(c, "threads", cJSON_CreateNumber(0));
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), -1);
    cr_assert(strstr(err, "t.json: client.threads: expected a whole number ≥ 1") == err, "%s", err);
    cJSON_DeleteItemFromObject(c, "threads");
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.client.threads, 0);
    cr_assert_null(b.client.per_thread);
    benchmark_free(&b);
    cJSON_Delete(j);
}

Test(benchmark, unreadable_and_non_json_files_are_errors)
{
    struct benchmark b;
    char err[256];
    cr_assert_eq(benchmark_read_file("/nonexistent/r.json", &b, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/r.json") && strstr(err, "cannot read"), "%s", err);
    cr_assert_eq(benchmark_read_file("tests/unit/test_benchmark.c", &b, NULL, err, sizeof err), -1);
    cr_assert_str_eq(err, "tests/unit/test_benchmark.c: not valid JSON");
}
