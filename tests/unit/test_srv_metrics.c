/* test_srv_metrics.c — the engines' name tables on the recorded /metrics
 * bodies, histogram quantiles, and the window summary: seed 004's formulas
 * on its own numbers, boundary rules, gauges, cross-checks, failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "observe/engines.h"
#include "observe/observe.h"
#include "observe/server.h"
#include "testutil.h"

#define S 1000000000LL  /* ns per s */

/* A reading of text taken over [sent, done] (ns), read with engine e
 * (SRV_UNKNOWN + 100 = detect). */
static struct srv_reading reading_of(const char *text, int e, int64_t sent, int64_t done, int phase)
{
    struct prom_snapshot s;
    char err[200];
    cr_assert_eq(prom_parse(text, strlen(text), &s, err, sizeof err), 0, "%s", err);
    struct srv_reading r = {.t_due = sent, .t_sent = sent, .t_done = done, .phase = phase, .ok = true,
                            .bytes = strlen(text)};
    cr_assert_eq(srv_extract(e == 100 ? srv_engine_detect(&s) : (enum srv_engine)e, &s, &r), 0);
    prom_snapshot_free(&s);
    return r;
}

static char *fixture_body(const char *path)
{
    char *text = tu_read_file(path, NULL);
    int status;
    char *body = strdup(tu_fixture_body(text, &status));
    free(text);
    return body;
}

static double raw_of(const struct srv_reading *r, const char *key)
{
    for (size_t i = 0; i < r->detail->n_raw; i++)
        if (!strcmp(r->detail->raw_keys[i], key))
            return r->detail->raw[i];
    return NAN;
}

Test(srv_engines, vllm_fixture)
{
    char *body = fixture_body("tests/data/fixtures/vllm/metrics.txt");
    struct srv_reading r = reading_of(body, 100, 1, 2, OBS_PERIODIC);
    cr_expect_eq(r.engine, SRV_VLLM);
    const struct { enum srv_value v; double want; } want[] = {
        {SV_RUNNING, 4}, {SV_WAITING, 0}, {SV_KV_USAGE, 0.0412}, {SV_PROMPT_TOKENS, 1843210},
        {SV_GEN_TOKENS, 151204}, {SV_REQUESTS, 500}, {SV_PREEMPTIONS, 0}, {SV_PREFIX_QUERIES, 1843210},
        {SV_PREFIX_HITS, 612480}, {SV_SPEC_DRAFTS, 51234}, {SV_SPEC_DRAFT_TOKENS, 153702},
        {SV_SPEC_ACCEPTED, 98377}, {SV_BATCH_STEPS, 60012}, {SV_BATCH_TOKENS, 1994414},
        {SV_KV_POOL_TOKENS, 28410.0 * 16}, {SV_KV_BLOCK_SIZE, 16},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect_eq(r.v[want[i].v], want[i].want, "%s: %g", srv_value_name(want[i].v), r.v[want[i].v]);
    cr_expect(isnan(r.v[SV_SPEC_VERIFY_CALLS]));
    cr_assert_eq(r.n_pos, 3);
    cr_expect_eq(r.pos[0] + r.pos[1] + r.pos[2], r.v[SV_SPEC_ACCEPTED], "Σ per position = accepted");
    const struct srv_hist *ttft = &r.detail->hist[SVH_TTFT];
    cr_expect_eq(ttft->count, 500);
    cr_expect_eq(ttft->n, 23);
    cr_expect(isinf(ttft->le[22]));
    cr_expect_eq(ttft->cum[7], 262);            /* le 0.1 */
    cr_expect_eq(r.detail->hist[SVH_ITL].count, 52327);
    cr_expect_eq(r.detail->hist[SVH_QUEUE].n, 0, "not in the excerpt");
    cr_expect_eq(raw_of(&r, "vllm:generation_tokens_total{engine=\"0\",model_name=\"Qwen/Qwen2.5-7B-Instruct\"}"),
                 151204);
    cr_expect(isnan(raw_of(&r, "python_gc_collections_total{generation=\"0\"}")), "only the engine's own");
    for (size_t i = 0; i < r.detail->n_raw; i++)
        cr_expect_null(strstr(r.detail->raw_keys[i], "_created"), "%s", r.detail->raw_keys[i]);
    srv_reading_free(&r);
    free(body);
}

Test(srv_engines, sglang_fixture_ranks_and_streaming_split)
{
    char *body = fixture_body("tests/data/fixtures/sglang/metrics.txt");
    struct srv_reading r = reading_of(body, 100, 1, 2, OBS_PERIODIC);
    cr_expect_eq(r.engine, SRV_SGLANG);
    cr_expect_eq(r.v[SV_RUNNING], 4);
    cr_expect_eq(r.v[SV_KV_POOL_TOKENS], 471234);
    cr_expect_eq(r.v[SV_GEN_TOKENS], 104 + 151100, "streamed and not");
    cr_expect_eq(r.v[SV_PROMPT_TOKENS], 2048 + 1841162);
    cr_expect_eq(r.v[SV_PREFIX_HITS], 612480);
    cr_expect_eq(r.v[SV_PREFIX_QUERIES], r.v[SV_PROMPT_TOKENS]);
    cr_expect_eq(r.v[SV_SPEC_VERIFY_CALLS], 52827);
    cr_expect_eq(r.v[SV_SPEC_ACCEPT_LEN], 2.87);
    cr_expect_eq(r.v[SV_SPEC_ACCEPT_RATE], 0.6233);
    cr_expect_eq(r.v[SV_KV_USAGE], 0.04);
    cr_expect(isnan(r.v[SV_SPEC_DRAFTS]));
    cr_expect_eq(r.detail->hist[SVH_TTFT].count, 498);
    cr_expect_eq(r.detail->hist[SVH_E2E].n, 23);
    srv_reading_free(&r);
    free(body);
    /* a second tensor-parallel rank repeats the gauge: not counted twice */
    struct srv_reading t = reading_of(
        "sglang:num_running_reqs{tp_rank=\"0\",dp_rank=\"0\"} 3\nsglang:num_running_reqs{tp_rank=\"1\",dp_rank=\"0\"} 3\n"
        "sglang:num_running_reqs{tp_rank=\"0\",dp_rank=\"1\"} 5\n", 100, 1, 2, OBS_PERIODIC);
    cr_expect_eq(t.v[SV_RUNNING], 8, "data-parallel ranks add up, tensor-parallel ones repeat");
    srv_reading_free(&t);
}

Test(srv_engines, llamacpp_fixture)
{
    char *body = fixture_body("tests/data/fixtures/llamacpp/metrics.txt");
    struct srv_reading r = reading_of(body, 100, 1, 2, OBS_PERIODIC);
    cr_expect_eq(r.engine, SRV_LLAMACPP);
    cr_expect_eq(r.v[SV_GEN_TOKENS], 3036);
    cr_expect_eq(r.v[SV_BATCH_STEPS], 3036);
    cr_expect_eq(r.v[SV_PROMPT_TOKENS], 142);
    cr_expect_eq(r.v[SV_KV_USAGE], 0.0366211);
    cr_expect_eq(r.v[SV_KV_USED_TOKENS], 300);
    cr_expect_eq(r.v[SV_RUNNING], 0);
    cr_expect_eq(r.v[SV_PROMPT_SECONDS], 0.093);
    srv_reading_free(&r);
    free(body);
}

Test(srv_engines, tgi_names_and_unknown_engines_raw_counters)
{
    const char *tgi =
        "# TYPE tgi_queue_size gauge\ntgi_queue_size 2\n# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 7\n"
        "# TYPE tgi_request_generated_tokens histogram\ntgi_request_generated_tokens_bucket{le=\"10\"} 1\n"
        "tgi_request_generated_tokens_bucket{le=\"+Inf\"} 3\ntgi_request_generated_tokens_sum 300\n"
        "tgi_request_generated_tokens_count 3\n# TYPE tgi_request_success counter\ntgi_request_success 3\n"
        "# TYPE tgi_batch_inference_count counter\ntgi_batch_inference_count{method=\"prefill\"} 3\n"
        "tgi_batch_inference_count{method=\"decode\"} 297\n"
        "# TYPE tgi_request_queue_duration histogram\ntgi_request_queue_duration_bucket{le=\"0.5\"} 3\n"
        "tgi_request_queue_duration_bucket{le=\"+Inf\"} 3\ntgi_request_queue_duration_sum 0.6\n"
        "tgi_request_queue_duration_count 3\n";
    struct srv_reading r = reading_of(tgi, 100, 1, 2, OBS_PERIODIC);
    cr_expect_eq(r.engine, SRV_TGI);
    cr_expect_eq(r.v[SV_WAITING], 2);
    cr_expect_eq(r.v[SV_RUNNING], 7);
    cr_expect_eq(r.v[SV_GEN_TOKENS], 300);
    cr_expect_eq(r.v[SV_REQUESTS], 3);
    cr_expect_eq(r.v[SV_BATCH_STEPS], 300);
    cr_expect_eq(r.detail->hist[SVH_QUEUE].count, 3);
    srv_reading_free(&r);
    struct srv_reading u = reading_of("# TYPE jobs_total counter\njobs_total{k=\"a\"} 4\n# TYPE up gauge\nup 1\n"
                                      "# TYPE jobs_created gauge\njobs_created 1.7e9\n", 100, 1, 2, OBS_PERIODIC);
    cr_expect_eq(u.engine, SRV_UNKNOWN);
    cr_assert_eq(u.detail->n_raw, 1);
    cr_expect_str_eq(u.detail->raw_keys[0], "jobs_total{k=\"a\"}");
    cr_expect(isnan(u.v[SV_RUNNING]));
    srv_reading_free(&u);
}

Test(srv_engines, histogram_quantile_as_prometheus)
{
    struct srv_hist h = {.n = 4, .le = {0.1, 0.5, 1.0, INFINITY}, .cum = {10, 60, 100, 100}, .count = 100};
    double lo, hi;
    cr_expect_float_eq(srv_hist_quantile(&h, 0.05, &lo, &hi), 0.05, 1e-12);  /* 0 → 0.1 */
    cr_expect_eq(lo, 0);
    cr_expect_float_eq(srv_hist_quantile(&h, 0.5, &lo, &hi), 0.1 + 0.4 * 40.0 / 50.0, 1e-12);
    cr_expect_eq(lo, 0.1);
    cr_expect_eq(hi, 0.5);
    cr_expect_float_eq(srv_hist_quantile(&h, 0.99, NULL, NULL), 0.5 + 0.5 * 39.0 / 40.0, 1e-12);
    struct srv_hist tail = {.n = 2, .le = {1.0, INFINITY}, .cum = {1, 10}, .count = 10};
    cr_expect_eq(srv_hist_quantile(&tail, 0.9, &lo, &hi), 1.0, "in +Inf: the largest finite bound");
    struct srv_hist empty = {.n = 2, .le = {1.0, INFINITY}};
    cr_expect(isnan(srv_hist_quantile(&empty, 0.5, NULL, NULL)));
}

/* Counter text of a vLLM server with speculative decoding. */
static char *vllm_text(double drafts, double draft_tokens, double accepted, double gen, const double *pos, int n_pos,
                       double running, double waiting)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    buf_printf(&b, "# TYPE vllm:spec_decode_num_drafts_total counter\nvllm:spec_decode_num_drafts_total %.17g\n"
               "# TYPE vllm:spec_decode_num_draft_tokens_total counter\nvllm:spec_decode_num_draft_tokens_total %.17g\n"
               "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
               "vllm:spec_decode_num_accepted_tokens_total %.17g\n"
               "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total %.17g\n"
               "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running %g\n"
               "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting %g\n",
               drafts, draft_tokens, accepted, gen, running, waiting);
    for (int i = 0; i < n_pos; i++)
        buf_printf(&b, "vllm:spec_decode_num_accepted_tokens_per_pos_total{position=\"%d\"} %.17g\n", i, pos[i]);
    return b.data;
}

/* Seed 004's first cell: its counters through anvil's formulas give its
 * derived figures. */
Test(srv_summary, seed004_cell_formulas)
{
    const double zero[7] = {0};
    /* the seed's per-position acceptance × drafts, rounded as it rounds them */
    const double share[7] = {0.7699, 0.5011, 0.2825, 0.18, 0.1071, 0.0638, 0.0387};
    double pos[7];
    for (int i = 0; i < 7; i++)
        pos[i] = round(share[i] * 439);
    char *t0 = vllm_text(1000, 7000, 2000, 50000, zero, 7, 1, 0);
    double p1[7];
    for (int i = 0; i < 7; i++)
        p1[i] = pos[i];
    char *t1 = vllm_text(1000 + 439, 7000 + 3073, 2000 + 853, 50000 + 1293, p1, 7, 1, 0);
    struct srv_series s = {0};
    /* the seed's window unrounded: its aggregate_tps = 1293 tokens / window */
    int64_t ws = 100 * S, we = ws + llround(1293 / 129.45196578500713 * 1e9);
    struct srv_reading a = reading_of(t0, SRV_VLLM, ws - 2000000, ws - 1000000, OBS_PRE_RUN);
    struct srv_reading b = reading_of(t1, SRV_VLLM, we + 1000000, we + 2000000, OBS_POST_RUN);
    cr_assert_eq(srv_series_add(&s, &a), 0);
    cr_assert_eq(srv_series_add(&s, &b), 0);
    struct srv_client c = {.window_start = ws, .window_end = we, .rule = OBS_COVER, .output_tokens = 1293,
                           .ttft_mean_ms = NAN, .concurrency = 1};
    struct srv_summary o;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_assert(o.available, "%s", o.reason);
    cr_expect_float_eq(o.spec_accept_rate, 0.2775789131142206, 1e-12);
    cr_expect_float_eq(o.spec_accept_length, 2.9430523917995446, 1e-12);
    cr_expect_eq(o.engine_steps, 440.0);
    cr_expect_float_eq(o.accept_len_effective, 2.9386363636363635, 1e-12);
    cr_expect_float_eq(o.steps_per_s, 44.05171302815401, 1e-7, "%.17g", o.steps_per_s);
    cr_expect_eq(o.server_output_tokens, 1293);
    cr_assert_eq(o.n_pos_accept, 7);
    for (int i = 0; i < 7; i++)
        cr_expect_float_eq(o.pos_accept[i], share[i], 6e-4, "position %d: %g", i, o.pos_accept[i]);
    cr_expect_not(o.other_traffic);
    cr_expect_eq(o.token_excess, 0);
    cr_expect_eq(o.start_w, 0);
    cr_expect_eq(o.end_w, 1);
    cr_expect_float_eq(o.start_lo_ms, -1.5, 1e-9);
    cr_expect_float_eq(o.end_hi_ms, 1.5, 1e-9);
    srv_summary_free(&o);
    srv_series_free(&s);
    free(t0);
    free(t1);
}

/* Readings at 0, 1, ..., 10 s of a counter growing 100/s and a gauge equal
 * to the second; window [2.5 s, 7.5 s]. */
static void ramp(struct srv_series *s, int64_t jitter_ns)
{
    const double none[1] = {0};
    for (int i = 0; i <= 10; i++) {
        char *t = vllm_text(0, 0, 0, 100.0 * i, none, 0, i, i % 2);
        /* not periodic: the series keeps every reading's detail */
        struct srv_reading r = reading_of(t, SRV_VLLM, i * S, i * S + jitter_ns, OBS_AFTER_LAST);
        cr_assert_eq(srv_series_add(s, &r), 0);
        free(t);
    }
}

Test(srv_summary, cover_takes_the_outer_readings_interpolate_the_linear_share)
{
    struct srv_series s = {0};
    ramp(&s, 0);
    struct srv_client c = {.window_start = 2 * S + S / 2, .window_end = 7 * S + S / 2, .rule = OBS_COVER,
                           .output_tokens = 500, .ttft_mean_ms = NAN};
    struct srv_summary o;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_assert(o.available, "%s", o.reason);
    cr_expect_eq(o.server_output_tokens, 600, "readings at 2 s and 8 s");
    srv_summary_free(&o);
    c.rule = OBS_INTERPOLATE;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_expect_float_eq(o.server_output_tokens, 500, 1e-9);
    cr_expect_float_eq(o.start_w, 0.5, 1e-12);
    /* gauges: samples at 3..7 s; held until the next, the last until 7.5 s */
    const struct obs_gauge *g = &o.gauge[SV_RUNNING];
    cr_expect_eq(g->samples, 5);
    cr_expect_float_eq(g->mean, 5, 1e-12);
    cr_expect_eq(g->max, 7);
    cr_expect_float_eq(g->time_weighted, (3 + 4 + 5 + 6 + 7 * 0.5) / 4.5, 1e-12);
    cr_expect_float_eq(o.queue_fraction, 3.0 / 5.0, 1e-12, "waiting > 0 at 3, 5, 7 s");
    cr_expect_eq(o.max_queue_reqs, 1);
    srv_summary_free(&o);
    srv_series_free(&s);
}

Test(srv_summary, other_traffic_is_flagged)
{
    struct srv_series s = {0};
    ramp(&s, 0);
    struct srv_client c = {.window_start = 2 * S, .window_end = 8 * S, .rule = OBS_COVER, .output_tokens = 500,
                           .ttft_mean_ms = NAN};
    struct srv_summary o;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_expect_eq(o.server_output_tokens, 600);
    cr_expect_eq(o.token_excess, 100);
    cr_expect(o.other_traffic);
    srv_summary_free(&o);
    srv_series_free(&s);
}

Test(srv_summary, a_counter_going_backwards_or_no_reading_after_the_end_is_unavailable)
{
    const double none[1] = {0};
    char *t0 = vllm_text(0, 0, 0, 900, none, 0, 0, 0), *t1 = vllm_text(0, 0, 0, 20, none, 0, 0, 0);
    struct srv_series s = {0};
    struct srv_reading a = reading_of(t0, SRV_VLLM, 0, 1, OBS_PRE_RUN), b = reading_of(t1, SRV_VLLM, 10 * S, 10 * S + 1, OBS_POST_RUN);
    srv_series_add(&s, &a);
    srv_series_add(&s, &b);
    struct srv_client c = {.window_start = S, .window_end = 9 * S, .rule = OBS_COVER, .output_tokens = 10,
                           .ttft_mean_ms = NAN};
    struct srv_summary o;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_expect_not(o.available);
    cr_expect(strstr(o.reason, "generation_tokens went backwards"), "%s", o.reason);
    srv_summary_free(&o);
    srv_series_free(&s);
    /* the server went away: the end has only failed scrapes */
    struct srv_reading ok = reading_of(t0, SRV_VLLM, 0, 1, OBS_PRE_RUN);
    struct srv_reading gone = {.t_sent = 10 * S, .t_done = 10 * S + 5, .phase = OBS_POST_RUN};
    snprintf(gone.error, sizeof gone.error, "connection refused");
    srv_series_add(&s, &ok);
    srv_series_add(&s, &gone);
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_expect_not(o.available);
    cr_expect(strstr(o.reason, "no scrape succeeded after the window's end; last error: connection refused"),
              "%s", o.reason);
    cr_expect_eq(o.scrapes_failed, 1);
    cr_expect_eq(o.scrapes_ok, 1);
    srv_summary_free(&o);
    srv_series_free(&s);
    free(t0);
    free(t1);
}

/* Histograms: exact means from Δsum/Δcount, percentiles estimated from
 * Δbuckets; the TTFT split from the means. */
Test(srv_summary, queue_and_prefill_estimates_and_the_ttft_split)
{
    const char *fmt =
        "# TYPE vllm:request_queue_time_seconds histogram\n"
        "vllm:request_queue_time_seconds_bucket{le=\"0.3\"} %d\nvllm:request_queue_time_seconds_bucket{le=\"0.5\"} %d\n"
        "vllm:request_queue_time_seconds_bucket{le=\"+Inf\"} %d\nvllm:request_queue_time_seconds_count %d\n"
        "vllm:request_queue_time_seconds_sum %g\n"
        "# TYPE vllm:request_prefill_time_seconds histogram\n"
        "vllm:request_prefill_time_seconds_bucket{le=\"0.3\"} %d\nvllm:request_prefill_time_seconds_bucket{le=\"+Inf\"} %d\n"
        "vllm:request_prefill_time_seconds_count %d\nvllm:request_prefill_time_seconds_sum %g\n";
    char t0[2048], t1[2048];
    snprintf(t0, sizeof t0, fmt, 5, 5, 5, 5, 0.5, 5, 5, 5, 0.25);
    snprintf(t1, sizeof t1, fmt, 5 + 50, 5 + 90, 5 + 100, 5 + 100, 0.5 + 20.0, 5 + 100, 5 + 100, 5 + 100, 0.25 + 5.0);
    struct srv_series s = {0};
    struct srv_reading a = reading_of(t0, SRV_VLLM, 0, 1, OBS_PRE_RUN), b = reading_of(t1, SRV_VLLM, 10 * S, 10 * S + 1, OBS_POST_RUN);
    srv_series_add(&s, &a);
    srv_series_add(&s, &b);
    struct srv_client c = {.window_start = S, .window_end = 9 * S, .rule = OBS_COVER, .output_tokens = NAN,
                           .ttft_mean_ms = 300};
    struct srv_summary o;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_assert(o.available, "%s", o.reason);
    const struct srv_hist_summary *q = &o.hist[SVH_QUEUE];
    cr_expect_eq(q->count, 100);
    cr_expect_float_eq(q->mean, 0.2, 1e-12);
    cr_expect_float_eq(q->p50, 0.3, 1e-12);
    cr_expect_float_eq(q->p90, 0.5, 1e-12);
    cr_expect_eq(q->p99, 0.5, "in +Inf: the largest finite bound");
    cr_expect_eq(q->p99_lo, 0.5);
    cr_expect_float_eq(o.queue_ms, 200, 1e-9);
    cr_expect_float_eq(o.prefill_ms, 50, 1e-9);
    cr_expect_float_eq(o.transfer_ms, 50, 1e-9);
    cr_expect(isnan(o.hist[SVH_DECODE].count));
    srv_summary_free(&o);
    srv_series_free(&s);
}

Test(srv_summary, sglang_acceptance_from_verify_calls_then_server_info_then_gauge)
{
    const char *fmt = "sglang:generation_tokens_total %g\nsglang:spec_verify_calls_total %g\n"
                      "sglang:spec_accept_length{tp_rank=\"0\"} 2.5\nsglang:spec_accept_rate{tp_rank=\"0\"} 0.4\n"
                      "sglang:max_total_num_tokens{tp_rank=\"0\"} 1000\n";
    char t0[512], t1[512];
    snprintf(t0, sizeof t0, fmt, 100.0, 40.0);
    snprintf(t1, sizeof t1, fmt, 100.0 + 3000, 40.0 + 1000);
    struct srv_series s = {0};
    struct srv_reading a = reading_of(t0, SRV_SGLANG, 0, 1, OBS_PRE_RUN);
    struct srv_reading m = reading_of(t0, SRV_SGLANG, 5 * S, 5 * S + 1, OBS_PERIODIC);
    struct srv_reading b = reading_of(t1, SRV_SGLANG, 10 * S, 10 * S + 1, OBS_POST_RUN);
    srv_series_add(&s, &a);
    srv_series_add(&s, &m);
    srv_series_add(&s, &b);
    struct srv_client c = {.window_start = S, .window_end = 9 * S, .rule = OBS_COVER, .output_tokens = 3000,
                           .ttft_mean_ms = NAN, .concurrency = 4, .tokens_per_request = 300};
    struct srv_summary o;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_assert(o.available, "%s", o.reason);
    cr_expect_eq(o.spec_accept_length, 3.0);
    cr_expect_str_eq(o.spec_source, "counters");
    cr_expect_eq(o.engine_steps, 1000);
    cr_expect_float_eq(o.spec_accept_rate, 0.4, 1e-12);
    cr_expect_eq(o.kv_pool_tokens, 1000);
    cr_expect_eq(o.capacity_limited, 1, "4 × 300 tokens > a pool of 1000");
    srv_summary_free(&o);
    srv_series_free(&s);
    /* no verify counter: the server's lifetime figure, else the gauge */
    const char *g = "sglang:spec_accept_length{tp_rank=\"0\"} 2.5\n";
    struct srv_reading x = reading_of(g, SRV_SGLANG, 0, 1, OBS_PRE_RUN);
    struct srv_reading y = reading_of(g, SRV_SGLANG, 5 * S, 5 * S + 1, OBS_PERIODIC);
    struct srv_reading z = reading_of(g, SRV_SGLANG, 10 * S, 10 * S + 1, OBS_POST_RUN);
    srv_series_add(&s, &x);
    srv_series_add(&s, &y);
    srv_series_add(&s, &z);
    struct srv_info info = {.max_total_num_tokens = 5000, .avg_spec_accept_length = 2.75};
    cr_assert_eq(srv_summarize(&s, &c, &info, &o), 0);
    cr_expect_eq(o.spec_accept_length, 2.75);
    cr_expect_str_eq(o.spec_source, "server_info");
    cr_expect_eq(o.kv_pool_tokens, 5000);
    cr_expect_eq(o.capacity_limited, 0);
    srv_summary_free(&o);
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_expect_eq(o.spec_accept_length, 2.5);
    cr_expect_str_eq(o.spec_source, "gauge");
    srv_summary_free(&o);
    srv_series_free(&s);
}

/* A long run keeps the histograms of boundary readings and the few before
 * each, not of every periodic reading. */
Test(srv_summary, the_series_drops_old_periodic_detail_but_keeps_the_boundaries)
{
    struct srv_series s = {0};
    const double none[1] = {0};
    char *t = vllm_text(0, 0, 0, 1, none, 0, 0, 0);
    for (int i = 0; i < 100; i++) {
        struct srv_reading r = reading_of(t, SRV_VLLM, i * S, i * S + 1, i == 50 ? OBS_WINDOW_START : OBS_PERIODIC);
        cr_assert_eq(srv_series_add(&s, &r), 0);
    }
    for (size_t i = 0; i < s.n; i++) {
        bool want = (i >= 46 && i <= 50) || i >= 100 - SRV_SERIES_KEEP - 1;
        cr_expect_eq(s.r[i].detail != NULL, want, "reading %zu", i);
        cr_expect_eq(s.r[i].v[SV_GEN_TOKENS], 1, "scalars always stay");
    }
    srv_series_free(&s);
    free(t);
}

static int said;
static void count_say(void *ud, const char *msg)
{
    (void)ud;
    (void)msg;
    said++;
}

/* auto against a server without /metrics: off, without a word; an explicit
 * URL that does not answer: on, with one warning, recorded as unavailable. */
/* The gauge over the readings that answered: a value holds until the next
 * reading, answered or not, so a failed stretch is nobody's. Readings at
 * 0..10 s: 0 at 0 s (the load just starting), failures at 1..5 s, 4 at
 * 6..10 s. Holding the 0 across the failures read 1.6 for a server that
 * ran 4 whenever it was seen busy. */
Test(obs_gauge, a_failed_reading_ends_the_hold_and_counts_against_coverage)
{
    int64_t m[11];
    double v[11];
    for (int i = 0; i <= 10; i++) {
        m[i] = i * S;
        v[i] = i == 0 ? 0 : i <= 5 ? NAN : 4;
    }
    struct obs_gauge g;
    cr_assert_eq(obs_gauge_summary(m, v, 11, 0, 10 * S, &g), 0);
    cr_expect_eq(g.samples, 6);
    cr_expect_eq(g.missed, 5);
    /* held: 0 over [0, 1) s, 4 over [6, 10) s: 5 s of 10 */
    cr_expect_float_eq(g.coverage, 5.0 / 10.0, 1e-12);
    cr_expect_float_eq(g.time_weighted, (0 * 1.0 + 4 * 4.0) / 5.0, 1e-12);
    cr_expect_float_eq(g.mean, 20.0 / 6.0, 1e-12);
    cr_expect_eq(g.max, 4);
    cr_expect(obs_gauge_require(&g, OBS_GAUGE_MIN_COVERAGE), "50%% is enough");
    /* one more failure (at 6 s): 4 s of 10 */
    v[6] = NAN;
    cr_assert_eq(obs_gauge_summary(m, v, 11, 0, 10 * S, &g), 0);
    cr_expect_float_eq(g.coverage, 4.0 / 10.0, 1e-12);
    cr_expect_float_eq(g.time_weighted, (0 * 1.0 + 4 * 3.0) / 4.0, 1e-12);
    cr_expect_not(obs_gauge_require(&g, OBS_GAUGE_MIN_COVERAGE));
    cr_expect(isnan(g.time_weighted) && isnan(g.mean) && isnan(g.max) && isnan(g.min) && isnan(g.median) &&
              isnan(g.nonzero_share), "unavailable, not low");
    cr_expect_eq(g.samples, 5, "what was read is still told");
    cr_expect_float_eq(g.coverage, 0.4, 1e-12);
    /* every reading answered: the whole window from the first, as before */
    for (int i = 0; i <= 10; i++)
        v[i] = i;
    cr_assert_eq(obs_gauge_summary(m, v, 11, S / 2, 10 * S, &g), 0);
    cr_expect_float_eq(g.coverage, 9.0 / 9.5, 1e-12);
    cr_expect_float_eq(g.time_weighted, (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9) / 9.0, 1e-12);
}

/* llama.cpp text with these values (no labels, as it serves them). */
static char *llamacpp_text(double prompt, double prompt_s, double gen, double running)
{
    char *t = malloc(1024);
    snprintf(t, 1024,
             "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total %.17g\n"
             "# TYPE llamacpp:prompt_seconds_total counter\nllamacpp:prompt_seconds_total %.17g\n"
             "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total %.17g\n"
             "# TYPE llamacpp:n_decode_total counter\nllamacpp:n_decode_total %.17g\n"
             "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing %.17g\n"
             "# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 0\n",
             prompt, prompt_s, gen, gen, running);
    return t;
}

static void add_failed(struct srv_series *s, int64_t sent, int64_t done)
{
    struct srv_reading r = {.t_due = sent, .t_sent = sent, .t_done = done, .phase = OBS_PERIODIC};
    snprintf(r.error, sizeof r.error, "GET http://h/metrics: Timeout was reached");
    cr_assert_eq(srv_series_add(s, &r), 0);
}

/* A llama.cpp run whose scrapes time out while its 4 slots are busy: the
 * pre-run reading (0 running) and the readings that answered (4) around
 * failures. Counted and shown; the running gauge is over what answered,
 * and unavailable under 50% coverage, not a low mean. Its prefix hit rate
 * and prefill time come from its counters against the client's prompts. */
Test(srv_summary, llamacpp_failed_scrapes_coverage_and_prompt_counters)
{
    struct srv_series s = {0};
    /* pre-run at 0 s: nothing processed yet */
    char *t = llamacpp_text(0, 0, 0, 0);
    struct srv_reading r = reading_of(t, SRV_LLAMACPP, 0, S / 100, OBS_PRE_RUN);
    cr_assert_eq(srv_series_add(&s, &r), 0);
    free(t);
    /* window [1 s, 11 s]: answered at 1, 4 and 8 s (4 running), failed (1 s each) between */
    int ok_at[] = {1, 4, 8};
    for (int k = 0; k < 3; k++) {
        t = llamacpp_text(1000.0 * k, 0.5 * k, 100.0 * k, 4);
        r = reading_of(t, SRV_LLAMACPP, ok_at[k] * S, ok_at[k] * S + S / 100, OBS_PERIODIC);
        cr_assert_eq(srv_series_add(&s, &r), 0);
        free(t);
        if (k < 2)
            for (int f = ok_at[k] + 1; f < ok_at[k + 1]; f++)
                add_failed(&s, f * S, f * S + S);
    }
    for (int f = 9; f <= 10; f++)
        add_failed(&s, f * S, f * S + S);
    /* after the end at 12 s: 3000 of 4000 client prompt tokens processed, 1.5 s of prefill */
    t = llamacpp_text(3000, 1.5, 300, 0);
    r = reading_of(t, SRV_LLAMACPP, 12 * S, 12 * S + S / 100, OBS_POST_RUN);
    cr_assert_eq(srv_series_add(&s, &r), 0);
    free(t);
    struct srv_client c = {.window_start = S, .window_end = 11 * S, .rule = OBS_COVER, .output_tokens = 300,
                           .ttft_mean_ms = NAN, .concurrency = 4, .prompt_tokens = 4000, .prompt_requests = 3};
    struct srv_summary o;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_assert(o.available, "%s", o.reason);
    cr_expect_eq(o.scrapes_ok, 5);
    cr_expect_eq(o.scrapes_failed, 7);
    cr_expect_str_eq(o.last_error, "GET http://h/metrics: Timeout was reached");
    /* readings inside: ok 1.005, fail 2.5, 3.5, ok 4.005, fail 5.5, 6.5, 7.5, ok 8.005, fail 9.5, 10.5 */
    const struct obs_gauge *g = &o.gauge[SV_RUNNING];
    cr_expect_eq(g->samples, 3);
    cr_expect_eq(g->missed, 7);
    double held = (2.5 - 1.005) + (5.5 - 4.005) + (9.5 - 8.005);
    cr_expect_float_eq(g->coverage, held / 10, 1e-9);
    cr_expect(isnan(o.avg_running_reqs) && isnan(o.max_running_reqs), "%g / %g", o.avg_running_reqs,
              o.max_running_reqs);
    cr_expect_eq(o.underfilled, -1, "not known, not 'never ran 4'");
    cr_expect(strstr(o.gauge_reason, "the scrapes that answered held 45% of the window (7 of 10 readings inside "
                                     "it failed)"), "%s", o.gauge_reason);
    cr_expect_float_eq(o.gauge_coverage, held / 10, 1e-9);
    /* counters: Δ over the covering readings (pre-run, post-run) */
    cr_expect_float_eq(o.prefix_cache_hit_rate, 1 - 3000.0 / 4000.0, 1e-12);
    cr_expect_str_eq(o.prefix_source, "llamacpp:prompt_tokens_total vs usage.prompt_tokens");
    cr_expect_float_eq(o.prefill_ms, 1.5 / 3 * 1e3, 1e-9);
    srv_summary_free(&o);
    /* more processed than the client sent: other traffic, no hit rate */
    c.prompt_tokens = 2000;
    cr_assert_eq(srv_summarize(&s, &c, NULL, &o), 0);
    cr_expect(isnan(o.prefix_cache_hit_rate));
    srv_summary_free(&o);
    srv_series_free(&s);
}

Test(observe, auto_without_metrics_is_off_silently_an_explicit_url_warns)
{
    struct observe_cfg cfg = {.server_metrics = "auto", .scrape_interval_ms = 1000,
                              .base_url = "http://127.0.0.1:1/v1", .telemetry = OBS_MODE_OFF,
                              .telemetry_interval_ms = 1000, .say = count_say};
    struct observe *o = observe_new(&cfg);
    observe_prepare(o);
    struct sampler *list[2];
    cr_expect_eq(observe_samplers(o, list, 2), 0);
    struct observe_client c = {.window_start = 1, .window_end = 2, .output_tokens = NAN, .ttft_mean_ms = NAN};
    struct observe_report r;
    cr_assert_eq(observe_summarize(o, &c, &r), 0);
    cr_expect_not(r.server_enabled);
    cr_expect(strstr(r.server_note, "auto: GET http://127.0.0.1:1/metrics: "), "%s", r.server_note);
    cr_expect_eq(said, 0);
    cr_expect_not(r.hardware_enabled);
    cr_expect_str_eq(r.hardware_note, "--telemetry off");
    observe_report_free(&r);
    observe_free(o);
    cfg.server_metrics = "http://127.0.0.1:1/metrics";
    o = observe_new(&cfg);
    observe_prepare(o);
    cr_expect_eq(observe_samplers(o, list, 2), 1);
    cr_expect_str_eq(list[0]->name, "server_metrics");
    cr_expect(list[0]->may_block, "scrapes never run on the measuring loop");
    cr_expect_eq(list[0]->period_ns, 1000000000);
    cr_expect_eq(said, 1);
    cr_assert_eq(observe_summarize(o, &c, &r), 0);
    cr_expect(r.server_enabled);
    cr_expect_not(r.server.available);
    cr_expect(strstr(r.server.reason, "no scrape succeeded before the window's start"), "%s", r.server.reason);
    observe_report_free(&r);
    observe_free(o);
}
