/* test_summary.c — run-level numbers from hand-built records. */
#include <math.h>

#include <criterion/criterion.h>

#include "stats/metrics.h"
#include "stats/summary.h"

#define NO_SLO {NAN, NAN, NAN}
#define MS(x) ((int64_t)((x) * 1000000.0))

/* A completed request: starts at start_ms, first output after ttft_ms, one
 * chunk per token every itl_ms, ends at the last token. */
static void completed(struct req_record *r, int idx, double start_ms, double ttft_ms, double itl_ms,
                      long tokens, long prompt)
{
    record_init(r, idx, false, 100, 4);
    r->t_start = MS(1000 + start_ms);
    r->t_headers = r->t_first_byte = r->t_first_event = r->t_start + MS(0.5);
    for (long i = 0; i < tokens; i++)
        record_add_chunk(r, r->t_start + MS(ttft_ms + itl_ms * (double)i), -1, 0, true);
    r->t_first_output = r->t_first_content = r->chunks[0].t_ns;
    r->t_end = r->chunks[tokens - 1].t_ns;
    r->content_chunks = (int)tokens;
    r->completion_tokens = tokens;
    r->prompt_tokens = prompt;
    r->done_seen = true;
}

Test(summary, throughput_latency_and_failures)
{
    struct req_record r[3];
    completed(&r[0], 0, 0, 50, 10, 4, 100);     /* ends at 80 ms */
    completed(&r[1], 1, 10, 60, 20, 4, 100);    /* ends at 10 + 120 = 130 ms */
    record_init(&r[2], 2, false, 100, 4);       /* failed: excluded from latencies */
    r[2].t_start = MS(1000 + 5);
    r[2].t_end = MS(1000 + 200);
    record_fail(&r[2], FAIL_HTTP, "HTTP 503");
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 3, &(struct summary_opts){.method = PCT_NEAREST, .ignore_eos = true, .check_prompt_tokens = true, .slo = NO_SLO}, &s), 0);
    cr_assert_eq(s.completed, 2);
    cr_assert_eq(s.failed, 1);
    cr_assert_float_eq(s.duration_ms, 200.0, 1e-9, "first start → last end, failures included");
    cr_assert_eq(s.output_tokens, 8);
    cr_assert_float_eq(s.output_throughput, 8 / 0.2, 1e-9);
    cr_assert_float_eq(s.total_token_throughput, 208 / 0.2, 1e-9);
    cr_assert_float_eq(s.request_throughput, 2 / 0.2, 1e-9);
    cr_assert_eq(s.d[D_TTFT].samples, 2);
    cr_assert_float_eq(s.d[D_TTFT].mean, 55.0, 1e-9);
    cr_assert_float_eq(s.d[D_TPOT].max, 20.0, 1e-9);        /* (130-10-60)/3 */
    cr_assert_eq(s.d[D_ITL_CHUNK].samples, 6);
    cr_assert_float_eq(s.d[D_ITL_CHUNK].p50, 10.0, 1e-9); /* p50 of {10,10,10,20,20,20} = 3rd */
    cr_assert_eq(s.inv.violations[INV_IGNORE_EOS], 0);
    cr_assert_eq(s.inv.checked, 2);
    cr_assert_eq(s.prompt_mismatch, 0);
    for (int i = 0; i < 3; i++)
        record_free(&r[i]);
}

Test(summary, flags_ignore_eos_and_prompt_mismatches)
{
    struct req_record r[3];
    completed(&r[0], 0, 0, 50, 10, 3, 100);     /* 3 tokens, max_tokens 4 */
    completed(&r[1], 1, 0, 50, 10, 4, 93);      /* prompt truncated */
    completed(&r[2], 2, 0, 50, 10, 4, -1);      /* no prompt count reported */
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 3, &(struct summary_opts){.method = PCT_NEAREST, .ignore_eos = true, .check_prompt_tokens = true, .slo = NO_SLO}, &s), 0);
    cr_assert_eq(s.inv.violations[INV_IGNORE_EOS], 1);
    cr_assert_eq(s.inv.violations[INV_USAGE], 1, "r2 reported no prompt tokens");
    cr_assert_eq(s.prompt_mismatch, 2);
    cr_assert_eq(s.prompt_token_reports, 2);
    for (int i = 0; i < 3; i++)
        record_free(&r[i]);
}

Test(summary, prompt_tolerance_is_one_percent_or_four_tokens)
{
    cr_assert_eq(record_prompt_tolerance(100), 4);
    cr_assert_eq(record_prompt_tolerance(4096), 40);
}

Test(summary, prompt_mismatch_beyond_the_tolerance_only)
{
    struct req_record r[3];
    completed(&r[0], 0, 0, 50, 10, 4, 1000 - 10);   /* planned 1000: ±10 is within */
    completed(&r[1], 1, 0, 50, 10, 4, 1000 + 10);
    completed(&r[2], 2, 0, 50, 10, 4, 1000 + 11);   /* one token beyond */
    for (int i = 0; i < 3; i++)
        r[i].planned_prompt_tokens = 1000;
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 3, &(struct summary_opts){.method = PCT_NEAREST, .check_prompt_tokens = true, .slo = NO_SLO}, &s), 0);
    cr_assert_eq(s.prompt_mismatch, 1);
    for (int i = 0; i < 3; i++)
        record_free(&r[i]);
}

Test(summary, one_token_reply_has_undefined_tpot_not_zero)
{
    struct req_record r;
    completed(&r, 0, 0, 50, 10, 1, 100);
    struct req_metrics m;
    metrics_derive(&r, &m);
    cr_assert(isnan(m.tpot_ms) && isnan(m.decode_tok_s));
    struct run_summary s;
    cr_assert_eq(summary_compute(&r, 1, &(struct summary_opts){.method = PCT_NEAREST, .slo = NO_SLO}, &s), 0);
    cr_assert_eq(s.d[D_TPOT].samples, 0);
    cr_assert_eq(s.d[D_TTFT].samples, 1);
    record_free(&r);
}

Test(summary, per_token_itl_uses_continuous_usage_when_known)
{
    struct req_record r;
    record_init(&r, 0, false, 10, 9);
    r.t_start = MS(1);
    record_add_chunk(&r, MS(11), 1, 0, true);
    record_add_chunk(&r, MS(21), 4, 0, true);   /* 10 ms gap, 4 tokens: 2.5 ms/token */
    record_add_chunk(&r, MS(41), -1, 0, true);  /* unknown: (9-1)/(3-1) = 4 tokens per later chunk */
    cr_assert_float_eq(metrics_itl_per_token_ms(&r, 1, 9), 2.5, 1e-9);
    cr_assert_float_eq(metrics_itl_per_token_ms(&r, 2, 9), 5.0, 1e-9);
    record_free(&r);
}

Test(summary, goodput_counts_requests_meeting_every_slo)
{
    struct req_record r[3];
    completed(&r[0], 0, 0, 50, 10, 4, 100);     /* TTFT 50, TPOT 10, E2E 80 */
    completed(&r[1], 1, 0, 60, 20, 4, 100);     /* TTFT 60, TPOT 20, E2E 120 */
    completed(&r[2], 2, 100, 40, 30, 1, 100);   /* one token: TPOT undefined; ends at 140 */
    struct summary_opts o = {.method = PCT_NEAREST, .slo = NO_SLO};
    cr_assert_eq(slo_parse("ttft:55,tpot:15", &o.slo), 0);
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 3, &o, &s), 0);
    cr_assert_eq(s.good, 2, "r0 meets both; r1 misses TTFT; r2 has no TPOT to miss");
    cr_assert_float_eq(s.goodput_rps, 2 / 0.140, 1e-9);
    o.slo = (struct slo)NO_SLO;
    cr_assert_eq(slo_parse("e2el:100", &o.slo), 0);
    cr_assert_eq(summary_compute(r, 3, &o, &s), 0);
    cr_assert_eq(s.good, 2);
    struct slo bad = NO_SLO;
    cr_assert_eq(slo_parse("ttft=5", &bad), -1);
    cr_assert_eq(slo_parse("itl:5", &bad), -1);
    cr_assert_eq(slo_parse("ttft:-1", &bad), -1);
    cr_assert_eq(slo_parse("ttft:50,ttft:60", &bad), -1, "a bound given twice is an error");
    struct slo two = NO_SLO;
    cr_assert_eq(slo_parse("ttft:50", &two), 0);
    cr_assert_eq(slo_parse("tpot:10", &two), 0, "vLLM's form: one value per argument");
    cr_assert_eq(slo_parse("ttft:60", &two), -1);
    cr_assert_float_eq(two.ttft_ms, 50, 0);
    for (int i = 0; i < 3; i++)
        record_free(&r[i]);
}

/* Duration mode: tokens are counted by when they arrived, whatever request
 * they belong to; requests straddling an edge contribute their inside part. */
Test(summary, window_counts_tokens_by_timestamp_at_the_edges)
{
    struct req_record r[3];
    completed(&r[0], 0, 0, 50, 10, 4, 100);     /* chunks at 50, 60, 70, 80 ms */
    r[0].warmup = true;                         /* sent before the window: tokens count, latency not */
    completed(&r[1], 1, 60, 10, 10, 4, 100);    /* chunks at 70, 80, 90, 100 ms */
    record_init(&r[2], 2, false, 100, 4);       /* cut at the window end, no usage: 1 token per chunk */
    r[2].t_start = MS(1000 + 80);
    record_add_chunk(&r[2], MS(1000 + 85), -1, 0, true);
    record_add_chunk(&r[2], MS(1000 + 95), -1, 0, true);
    r[2].t_end = MS(1000 + 95);
    r[2].cut = true;
    struct summary_opts o = {.method = PCT_NEAREST, .slo = NO_SLO, .window_start = MS(1000 + 60),
                             .window_end = MS(1000 + 90)};
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 3, &o, &s), 0);
    /* inside [60, 90]: r0 at 60,70,80 (3); r1 at 70,80,90 (3); r2 at 85 (1, the run's 8/8 per chunk) */
    cr_assert_float_eq(s.window_tokens, 7.0, 1e-9);
    cr_assert_float_eq(s.aggregate_tps, 7.0 / 0.030, 1e-6);
    cr_assert_eq(s.completed, 1, "the warm-up is not a measured request");
    cr_assert_eq(s.cut, 1);
    cr_assert_eq(s.failed, 0, "a cut request is incomplete, not failed");
    cr_assert_eq(s.d[D_TTFT].samples, 1);
    for (int i = 0; i < 3; i++)
        record_free(&r[i]);
}

Test(summary, invariants_catch_a_late_end_and_bad_order)
{
    struct req_record r[2];
    completed(&r[0], 0, 0, 50, 10, 4, 100);
    r[0].t_end += MS(40);                       /* usage + [DONE] 40 ms after the last token */
    completed(&r[1], 1, 0, 50, 10, 4, 100);
    r[1].t_headers = r[1].t_first_output + MS(1);   /* headers after the first output: impossible */
    struct summary_opts o = {.method = PCT_NEAREST, .slo = NO_SLO};
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 2, &o, &s), 0);
    cr_assert_eq(s.inv.violations[INV_LATE_END], 1);
    cr_assert_eq(s.inv.violations[INV_ORDER], 1);
    cr_assert_eq(s.inv.n_examples, 2);
    cr_assert_str_eq(invariant_name(s.inv.examples[0].what), "late_end");
    cr_assert_eq(invariants_total(&s.inv), 2);
    for (int i = 0; i < 2; i++)
        record_free(&r[i]);
}

/* A lagging loop changes numbers only through arrivals it dated by its own
 * clock: with kernel receive stamps it is lag, not client-bound (12 of 14
 * llama.cpp runs were flagged client_bound though every arrival was
 * kernel-stamped and the numbers matched the server's within 1-5 ms). */
Test(summary, client_bound_only_when_lag_reached_clock_stamped_arrivals)
{
    struct req_record r;
    completed(&r, 0, 0, 50, 10, 4, 100);
    double quiet[100], busy[100];
    for (int i = 0; i < 100; i++) {
        quiet[i] = 0.05;
        busy[i] = i < 95 ? 0.05 : 3.0;          /* p99 = 3 ms */
    }
    struct summary_opts o = {.method = PCT_NEAREST, .slo = NO_SLO, .loop_lag_ms = quiet, .n_loop_lag = 100,
                             .stamps_kernel = 1000, .stamps_clock = 0};
    struct run_summary s;
    cr_assert_eq(summary_compute(&r, 1, &o, &s), 0);
    cr_assert_not(s.client_bound);
    cr_assert_not(s.loop_lagged);
    cr_assert_float_eq(s.loop_lag.max, 0.05, 1e-12);
    o.loop_lag_ms = busy;                       /* lag, every arrival kernel-stamped */
    cr_assert_eq(summary_compute(&r, 1, &o, &s), 0);
    cr_assert(s.loop_lagged);
    cr_assert_not(s.client_bound);
    o.stamps_clock = 10;                        /* 1%: the bound itself */
    cr_assert_eq(summary_compute(&r, 1, &o, &s), 0);
    cr_assert_not(s.client_bound);
    o.stamps_clock = 50;                        /* ~5% dated by the client's clock while it lagged */
    cr_assert_eq(summary_compute(&r, 1, &o, &s), 0);
    cr_assert(s.clock_stamps_lagged);
    cr_assert(s.client_bound);
    record_free(&r);
}

/* A completed request whose first answer shares its stamp with later
 * output (record.h) makes the run client-bound, counted; a failed one is
 * not counted. */
Test(summary, client_bound_when_a_first_output_was_merged)
{
    struct req_record r[3];
    for (int i = 0; i < 3; i++)
        completed(&r[i], i, 0, 50, 10, 4, 100);
    struct summary_opts o = {.method = PCT_NEAREST, .slo = NO_SLO};
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 3, &o, &s), 0);
    cr_assert_eq(s.first_output_merged, 0);
    cr_assert_not(s.client_bound);
    r[1].first_output_merged = true;
    r[2].first_output_merged = true;
    record_fail(&r[2], FAIL_TIMEOUT, "idle timeout");
    cr_assert_eq(summary_compute(r, 3, &o, &s), 0);
    cr_assert_eq(s.first_output_merged, 1);
    cr_assert(s.client_bound);
    cr_assert_not(s.clock_stamps_lagged);
    cr_assert_not(s.sends_late);
    for (int i = 0; i < 3; i++)
        record_free(&r[i]);
}

Test(summary, client_bound_when_sends_run_late_without_a_cap)
{
    struct req_record r;
    completed(&r, 0, 0, 50, 10, 4, 100);
    r.t_scheduled = r.t_start - MS(5);         /* sent 5 ms after its scheduled time */
    struct summary_opts o = {.method = PCT_NEAREST, .slo = NO_SLO, .lateness_is_client = true};
    struct run_summary s;
    cr_assert_eq(summary_compute(&r, 1, &o, &s), 0);
    cr_assert(s.sends_late);
    cr_assert(s.client_bound);
    o.lateness_is_client = false;               /* with a cap, it waited for a slot */
    cr_assert_eq(summary_compute(&r, 1, &o, &s), 0);
    cr_assert_not(s.client_bound);
    record_free(&r);
}

Test(summary, peak_output_tps_counts_tokens_in_the_busiest_second)
{
    struct req_record r[2];
    /* 3 chunks carrying 12 tokens (4 each) within 20 ms, and a lone chunk 2 s later */
    record_init(&r[0], 0, false, 10, 12);
    r[0].t_start = MS(1000);
    for (int i = 0; i < 3; i++)
        record_add_chunk(&r[0], MS(1010 + 10 * i), -1, 0, true);
    r[0].t_first_output = r[0].t_first_content = r[0].chunks[0].t_ns;
    r[0].t_end = MS(1030);
    r[0].completion_tokens = 12;
    r[0].prompt_tokens = 10;
    completed(&r[1], 1, 2000, 10, 10, 1, 10);
    struct summary_opts o = {.method = PCT_NEAREST, .slo = NO_SLO};
    struct run_summary s;
    cr_assert_eq(summary_compute(r, 2, &o, &s), 0);
    cr_assert_float_eq(s.peak_output_tps_1s, 12.0, 1e-9, "tokens, not chunks: %g", s.peak_output_tps_1s);
    for (int i = 0; i < 2; i++)
        record_free(&r[i]);
}
