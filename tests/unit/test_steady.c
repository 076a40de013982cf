/* test_steady.c — the steady-state detector on hand-built records whose
 * window and figures are worked out by hand in the comments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "report/table.h"
#include "stats/steady.h"
#include "stats/summary.h"

#define MS(x) ((int64_t)((x) * 1000000.0))
#define T0 1000.0       /* ms: the runs start at 1 s on the monotonic clock */

/* A completed request from start_ms (after T0) to start_ms + e2e_ms: its
 * first of `tokens` one-token chunks at ttft_ms, then one every itl_ms. */
static void request(struct req_record *r, int idx, double start_ms, double e2e_ms, double ttft_ms,
                    double itl_ms, long tokens)
{
    record_init(r, idx, false, 100, tokens);
    r->t_scheduled = r->t_start = MS(T0 + start_ms);
    r->t_headers = r->t_first_byte = r->t_first_event = r->t_start + MS(1);
    for (long i = 0; i < tokens; i++)
        record_add_chunk(r, r->t_start + MS(ttft_ms + itl_ms * (double)i), -1, 0, true);
    r->t_first_output = r->t_first_content = r->chunks[0].t_ns;
    r->t_end = r->t_start + MS(e2e_ms);
    r->content_chunks = (int)tokens;
    r->completion_tokens = tokens;
    r->prompt_tokens = 100;
    r->done_seen = true;
}

static void free_all(struct req_record *r, int n)
{
    for (int i = 0; i < n; i++)
        record_free(&r[i]);
    free(r);
}

/* Two closed-loop streams of back-to-back 1 s requests: stream A from 0 to
 * a_s seconds, stream B from b0_s to b1_s. Requests inside [b0, b1) get TTFT
 * 100 ms and chunks every 95 ms; the others TTFT 400 ms, chunks every 55
 * ms; 10 tokens each, the last chunk before the end at 1 s. */
static struct req_record *two_streams(int a_s, int b0_s, int b1_s, int *n)
{
    *n = a_s + (b1_s - b0_s);
    struct req_record *r = calloc((size_t)*n, sizeof *r);
    int k = 0;
    for (int s = 0; s < a_s; s++) {
        bool in = s >= b0_s && s < b1_s;
        request(&r[k], k, 1000.0 * s, 1000, in ? 100 : 400, in ? 95 : 55, 10);
        k++;
    }
    for (int s = b0_s; s < b1_s; s++, k++)
        request(&r[k], k, 1000.0 * s, 1000, 100, 95, 10);
    return r;
}

/* In flight: 1 over [0, 5), 2 over [5, 20), 1 over [20, 30). Against a
 * target of 2 (band 1.8–2.2) the stretch is [5, 20): 15 s of a 30 s run. */
Test(steady, closed_loop_reaches_the_stretch_at_target)
{
    int n;
    struct req_record *r = two_streams(30, 5, 20, &n);
    struct steady_opts o = steady_opts_of(2, INFINITY);
    struct steady_state st;
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert(st.reached, "%s", st.reason ? st.reason : "");
    cr_assert_null(st.reason);
    cr_assert_eq(st.basis, STEADY_IN_FLIGHT);
    cr_assert_float_eq(st.run_s, 30.0, 1e-9);
    cr_assert_float_eq(st.start_s, 5.0, 1e-9);
    cr_assert_float_eq(st.end_s, 20.0, 1e-9);
    cr_assert_float_eq(st.length_s, 15.0, 1e-9);
    cr_assert_float_eq(st.share, 0.5, 1e-9);
    cr_assert_float_eq(st.level, 2.0, 1e-9);
    /* inside [5, 20]: A's requests 5..19 and all 15 of B's */
    cr_assert_eq(st.requests, 30);
    cr_assert_float_eq(st.ttft.p50, 100.0, 1e-6);
    cr_assert_float_eq(st.ttft.p99, 100.0, 1e-6);
    cr_assert_float_eq(st.tpot.p50, (1000.0 - 100.0) / 9, 1e-6);    /* (E2E − first output) / (n − 1) */
    cr_assert_float_eq(st.itl.p50, 95.0, 1e-6);
    cr_assert_float_eq(st.e2e.p99, 1000.0, 1e-6);
    /* tokens in [5, 20]: every chunk of the 30 requests started in [5, 19]; A's request 4 ended its
     * chunks at 4.895 s: 300 tokens / 15 s; ended in (5, 20]: 30 requests / 15 s */
    cr_assert_float_eq(st.output_throughput, 20.0, 1e-9);
    cr_assert_float_eq(st.request_throughput, 2.0, 1e-9);

    /* the whole run differs: TTFT p99 400 (15 of 45 at 400), 450 tokens / 30 s */
    struct summary_opts so = {.method = PCT_NEAREST, .slo = {NAN, NAN, NAN}, .steady = o};
    struct run_summary s;
    cr_assert_eq(summary_compute(r, n, &so, &s), 0);
    cr_assert(s.steady.reached);
    cr_assert_float_eq(s.d[D_TTFT].p99, 400.0, 1e-6);
    cr_assert_float_eq(s.output_throughput, 15.0, 1e-9);
    cr_assert(steady_differs(s.d[D_TTFT].p99, s.steady.ttft.p99));
    cr_assert(steady_differs(s.output_throughput, s.steady.output_throughput));
    cr_assert_not(steady_differs(s.d[D_E2E].p50, s.steady.e2e.p50));
    free_all(r, n);
}

/* A ramp that ends 10 s after the first send: no step before it counts, so
 * the stretch is [10, 20), exactly the 10 s minimum. */
Test(steady, nothing_before_the_ramp_end_counts)
{
    int n;
    struct req_record *r = two_streams(30, 5, 20, &n);
    struct steady_opts o = steady_opts_of(2, INFINITY);
    o.not_before_s = 10;
    struct steady_state st;
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert(st.reached, "%s", st.reason ? st.reason : "");
    cr_assert_float_eq(st.start_s, 10.0, 1e-9);
    cr_assert_float_eq(st.length_s, 10.0, 1e-9);
    cr_assert_float_eq(st.not_before_s, 10.0, 1e-9);
    cr_assert_eq(st.requests, 20);      /* A's 10..19 and B's 10..19 */
    o.not_before_s = 10.5;              /* [10.5, 20): under 10 s */
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert_not(st.reached);
    cr_assert_str_eq(st.reason, STEADY_TOO_SHORT);
    free_all(r, n);
}

/* Two streams never make 4 in flight (band 3.6–4.4): never at target. */
Test(steady, closed_loop_never_at_its_target)
{
    int n;
    struct req_record *r = two_streams(30, 0, 30, &n);
    struct steady_opts o = steady_opts_of(4, INFINITY);
    struct steady_state st;
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert_not(st.reached);
    cr_assert_str_eq(st.reason, STEADY_NEVER);
    cr_assert(isnan(st.start_s) && isnan(st.length_s) && isnan(st.ttft.p50));
    cr_assert_eq(st.requests, 0);
    cr_assert_float_eq(st.run_s, 30.0, 1e-9);
    free_all(r, n);
}

/* At target the whole time, but for 8 s: too short; at target for 15 s of
 * a 200 s run (7.5 %): too small a share. */
Test(steady, too_short_and_too_small_a_share)
{
    int n;
    struct req_record *r = two_streams(8, 0, 8, &n);
    struct steady_opts o = steady_opts_of(2, INFINITY);
    struct steady_state st;
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert_not(st.reached);
    cr_assert_str_eq(st.reason, STEADY_TOO_SHORT);
    cr_assert_float_eq(st.length_s, 8.0, 1e-9);
    cr_assert(isnan(st.ttft.p50));
    free_all(r, n);

    r = two_streams(200, 5, 20, &n);
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert_not(st.reached);
    cr_assert_str_eq(st.reason, STEADY_TOO_SMALL);
    cr_assert_float_eq(st.length_s, 15.0, 1e-9);
    cr_assert_float_eq(st.share, 15.0 / 200, 1e-9);
    free_all(r, n);
}

/* Open loop at 10 req/s: a send every 100 ms for 40 s (400 requests). */
static struct req_record *open_loop(double done_every_ms, double e2e_ms, int *n)
{
    *n = 400;
    struct req_record *r = calloc(400, sizeof *r);
    for (int i = 0; i < 400; i++) {
        double end = done_every_ms * i + e2e_ms;        /* the server's completion */
        request(&r[i], i, 100.0 * i, end - 100.0 * i, 50, 10, 3);
    }
    return r;
}

/* Each request takes 300 ms. The completion rate is taken over trailing 5 s
 * windows (50 planned sends at 10/s): the first, [0, 5), holds ends 0.3 ..
 * 4.9 s (47 of 50 sends: in the band), and every later one 50, up to the
 * last step that ends before the last send (39.9 s), [34.5, 39.5). Steps
 * 9..78 ([4.5, 39.5)): 35 s of a 40.2 s run. */
Test(steady, open_loop_completions_keep_up)
{
    int n;
    struct req_record *r = open_loop(100, 300, &n);
    struct steady_opts o = steady_opts_of(0, 10.0);
    struct steady_state st;
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert(st.reached, "%s", st.reason ? st.reason : "");
    cr_assert_eq(st.basis, STEADY_COMPLETION_RATE);
    cr_assert_float_eq(st.run_s, 40.2, 1e-9);
    cr_assert_float_eq(st.start_s, 4.5, 1e-9);
    cr_assert_float_eq(st.end_s, 39.5, 1e-9);
    cr_assert_float_eq(st.level, (47 / 5.0 + 69 * 10.0) / 70, 1e-9);
    /* ended in (4.5, 39.5]: ends 4.6 .. 39.5 s, requests 43..392; inside: also sent ≥ 4.5 s (45..) */
    cr_assert_float_eq(st.request_throughput, 350 / 35.0, 1e-9);
    cr_assert_eq(st.requests, 392 - 45 + 1);
    cr_assert_float_eq(st.e2e.p50, 300.0, 1e-6);
    free_all(r, n);
}

/* The server completes one request every 200 ms while 10/s are sent: each
 * 5 s window ends 25 against 50 sent: never within 10 %. (After the last
 * send the sends taper through 25, [37.5, 42.5): the drain does not count.) */
Test(steady, open_loop_the_server_cannot_sustain)
{
    int n;
    struct req_record *r = open_loop(200, 300, &n);
    struct steady_opts o = steady_opts_of(0, 10.0);
    struct steady_state st;
    cr_assert_eq(steady_detect(r, n, &o, PCT_NEAREST, &st), 0);
    cr_assert_not(st.reached);
    cr_assert_str_eq(st.reason, STEADY_NEVER);
    free_all(r, n);
}

Test(steady, no_target_and_no_requests)
{
    struct steady_state st;
    struct steady_opts none = steady_opts_of(0, INFINITY);
    cr_assert_eq(none.basis, STEADY_NONE);
    cr_assert_eq(steady_detect(NULL, 0, &none, PCT_NEAREST, &st), 0);
    cr_assert_str_eq(st.reason, STEADY_NO_TARGET);
    struct steady_opts c = steady_opts_of(4, INFINITY);
    cr_assert_eq(steady_detect(NULL, 0, &c, PCT_NEAREST, &st), 0);
    cr_assert_str_eq(st.reason, STEADY_NO_REQUESTS);
    cr_assert_str_eq(steady_basis_name(STEADY_COMPLETION_RATE), "completion_rate");
    cr_assert(strlen(steady_reason_text(STEADY_NEVER)) > 10);
}

Test(steady, noise_is_five_percent_of_the_whole_run)
{
    cr_assert_not(steady_differs(100, 105));
    cr_assert(steady_differs(100, 105.1));
    cr_assert(steady_differs(100, 94.9));
    cr_assert_not(steady_differs(NAN, 1));
    cr_assert_not(steady_differs(1, NAN));
}

/* The end summary: one line that it was reached, and beside the whole run's
 * only the figures that differ by over 5 %: TTFT p99 (400 vs 100), TPOT,
 * ITL, the throughputs; not E2E (1000 ms throughout) nor median TTFT. */
Test(steady, the_summary_sets_differing_figures_beside_the_whole_runs)
{
    int n;
    struct req_record *r = two_streams(30, 5, 20, &n);
    struct summary_opts so = {.method = PCT_NEAREST, .slo = {NAN, NAN, NAN}, .steady = steady_opts_of(2, INFINITY)};
    struct run_summary s;
    cr_assert_eq(summary_compute(r, n, &so, &s), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    report_table(f, "t", &s, 0);
    fclose(f);
    const char *sec = strstr(text, " Steady state ");     /* the section, after the whole run's */
    cr_assert(sec, "%s", text);
    cr_assert(strstr(sec, "reached: 15.0 s from 5.0 s to 20.0 s after the first send (50 % of the run), "
                           "in flight within 10 % of 2\n"), "%s", text);
    cr_assert(strstr(sec, "P99 TTFT (ms):                           400.00       100.00\n"), "%s", text);
    cr_assert(strstr(sec, "Output token throughput (tok/s):          15.00        20.00\n"), "%s", text);
    cr_assert_null(strstr(sec, "Median TTFT (ms):  "), "%s", text);
    cr_assert_null(strstr(sec, "E2EL (ms):  "), "%s", text);
    free(text);
    free_all(r, n);

    r = two_streams(8, 0, 8, &n);
    cr_assert_eq(summary_compute(r, n, &so, &s), 0);
    f = open_memstream(&text, &len);
    report_table(f, "t", &s, 0);
    fclose(f);
    cr_assert(strstr(text, "not reached: the longest stretch within 10 % of the target lasted under 10 s\n"),
              "%s", text);
    cr_assert_null(strstr(text, "whole run"), "%s", text);
    free(text);
    free_all(r, n);
}
