/* test_load.c — open-loop load end to end: achieved rates, the concurrency
 * cap seen from the server's side, and client-side queueing made visible. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static cJSON *run_against(const char *const sim_args[], const char *const run_args[], const char *trace)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[64] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--out", art};
    int n = 6;
    for (int i = 0; run_args[i]; i++)
        argv[n++] = run_args[i];
    argv[n] = NULL;
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "anvil run exited %d:\n%s", status, out);
    char *text = harness_read_file(art, NULL);
    cJSON *a = cJSON_Parse(text);
    free(text);
    unlink(art);
    cr_assert(a);
    (void)trace;
    return a;
}

static void check_rate(const char *burstiness)
{
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    const char *run_args[] = {"--request-rate", "500", "--burstiness", burstiness, "--num-prompts", "2000",
                              "--input-len", "16", "--output-len", "2", "--seed", "0", NULL};
    cJSON *a = run_against(sim_args, run_args, NULL);
    cr_assert_eq(harness_num(a, "completed"), 2000);
    cr_assert_str_eq(cJSON_GetObjectItem(a, "load_mode")->valuestring, "open-loop");
    double rate = harness_num(a, "achieved_request_rate");
    cr_assert(fabs(rate - 500) / 500 < 0.02, "burstiness %s: achieved %.2f req/s for 500", burstiness, rate);
    cJSON_Delete(a);
}

Test(load_e2e, constant_rate_is_achieved_within_2_percent, .timeout = 120)
{
    check_rate("inf");
}

Test(load_e2e, poisson_rate_is_achieved_within_2_percent, .timeout = 120)
{
    check_rate("1");
}

/* max requests the server had in flight at once, from its trace */
static int max_in_flight(const char *trace)
{
    char *text = harness_read_file(trace, NULL);
    cr_assert(text);
    int64_t ev[2 * 512];
    int n = 0;
    for (char *line = strtok(text, "\n"); line && n < 1024; line = strtok(NULL, "\n")) {
        cJSON *t = cJSON_Parse(line);
        ev[n++] = (int64_t)harness_num(t, "received_ns") * 2 + 1;   /* odd: arrival */
        ev[n++] = (int64_t)harness_num(t, "finished_ns") * 2;       /* even: departure, first on ties */
        cJSON_Delete(t);
    }
    free(text);
    int cur = 0, max = 0;
    for (int i = 0; i < n; i++)             /* insertion sort: n is small */
        for (int j = i; j > 0 && ev[j] < ev[j - 1]; j--) {
            int64_t x = ev[j]; ev[j] = ev[j - 1]; ev[j - 1] = x;
        }
    for (int i = 0; i < n; i++) {
        cur += (ev[i] & 1) ? 1 : -1;
        if (cur > max)
            max = cur;
    }
    return max;
}

Test(load_e2e, concurrency_cap_holds_and_queueing_is_visible, .timeout = 120)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    /* each request lasts ≈ 5 + 9·5 = 50 ms; 100 req/s would need ≈ 5 in flight */
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "5", "--trace", trace, NULL};
    const char *run_args[] = {"--request-rate", "100", "--burstiness", "inf", "--max-concurrency", "2",
                              "--num-prompts", "60", "--input-len", "16", "--output-len", "10", NULL};
    cJSON *a = run_against(sim_args, run_args, trace);
    cr_assert_eq(harness_num(a, "completed"), 60);
    cr_assert_leq(max_in_flight(trace), 2, "the server saw more than --max-concurrency in flight");
    const cJSON *m = cJSON_GetObjectItem(a, "metrics");
    /* 60 requests at 2 × 20 req/s take ≈ 1.5 s although scheduled over 0.6 s: the last waits ≈ 0.9 s */
    cr_assert_gt(harness_num(m, "send_lateness_max_ms"), 500, "client-side queueing shows as send lateness");
    cr_assert_gt(harness_num(m, "scheduled_ttft_p99_ms"), harness_num(m, "ttft_p99_ms") + 400,
                 "TTFT from the scheduled time includes the queueing");
    cr_assert_lt(harness_num(m, "ttft_p50_ms"), 20, "TTFT from the actual send does not");
    double rate = harness_num(a, "achieved_request_rate");
    cr_assert_lt(rate, 50, "achieved %.1f req/s: the cap limits the rate below the 100 asked", rate);
    cJSON_Delete(a);
    unlink(trace);
}

Test(load_e2e, duration_mode_counts_tokens_inside_the_window, .timeout = 60)
{
    /* 4 streams, each request 20 + 49·10 = 510 ms for 50 tokens: 4 × 50 / 0.51 ≈ 392 tok/s */
    const char *sim_args[] = {"--ttft-ms", "20", "--itl-ms", "10", NULL};
    const char *run_args[] = {"--duration", "2", "--warmup-s", "0.5", "--concurrency", "4",
                              "--input-len", "16", "--output-len", "50", NULL};
    cJSON *a = run_against(sim_args, run_args, NULL);
    const cJSON *dm = cJSON_GetObjectItem(a, "duration_mode");
    cr_assert(cJSON_IsObject(dm));
    double tps = harness_num(dm, "aggregate_tps");
    cr_assert(fabs(tps - 392.2) / 392.2 < 0.05, "aggregate %.1f tok/s for ≈ 392", tps);
    cr_assert_float_eq(harness_num(dm, "window_s"), 2.0, 0.01);
    cr_assert_eq(harness_num(dm, "incomplete_requests"), 4, "every stream straddles the window's end");
    cr_assert_geq(harness_num(a, "completed"), 8);
    cr_assert_eq(harness_num(a, "failed"), 0);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "incomplete")), "a duration run that ran its course is complete");
    cr_assert_eq(harness_num(a, "not_sent"), 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(a, "request_timings")), (int)harness_num(a, "completed"),
                 "warm-ups and cut requests are not listed with the measured ones");
    cr_assert_gt(harness_num(dm, "warmup_requests"), 0);
    cJSON_Delete(a);
}

/* Every reply outlasts the window (2,000 tokens at 2 ms against 0.5 s): the
 * run measured the window's tokens and is complete, exit 0, with a note
 * that it is capacity-limited. Failed before: exit 1, as if nothing had
 * been measured. */
Test(load_e2e, duration_run_whose_replies_outlast_the_window_is_complete, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    const char *run_args[] = {"--duration", "0.5", "--concurrency", "2", "--input-len", "16",
                              "--output-len", "2000", NULL};
    cJSON *a = run_against(sim_args, run_args, NULL);
    cr_assert_eq(harness_num(a, "completed"), 0);
    cr_assert_eq(harness_num(a, "failed"), 0);
    const cJSON *dm = cJSON_GetObjectItem(a, "duration_mode");
    cr_assert_gt(harness_num(dm, "tokens_in_window"), 0);
    cr_assert_eq(harness_num(dm, "incomplete_requests"), 2);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "incomplete")));
    cJSON_Delete(a);
}

#define MAX_TURN_REQ 1024

/* 4 conversations × 3 user turns, expanded by --multi-turn into entries
 * 0–11 (conversation = entry / 3); request seq uses entry seq % 12. Each
 * turn must reach the server only after the previous turn's reply ended,
 * whatever the load shape. Returns the artifact (caller deletes). */
static cJSON *turns_follow_replies(const char *const load_args[])
{
    char data[64], trace[64], spec[80];
    cr_assert_eq(harness_tmpfile(data, sizeof data), 0);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    FILE *f = fopen(data, "w");
    cr_assert(f);
    for (int c = 0; c < 4; c++)
        fprintf(f, "{\"messages\": [{\"role\": \"user\", \"content\": \"hello %d\"}, {\"role\": \"assistant\", "
                   "\"content\": \"hi\"}, {\"role\": \"user\", \"content\": \"and then?\"}, {\"role\": "
                   "\"assistant\", \"content\": \"more\"}, {\"role\": \"user\", \"content\": \"thanks\"}]}\n", c);
    fclose(f);
    snprintf(spec, sizeof spec, "jsonl:%s", data);
    const char *sim_args[] = {"--ttft-ms", "20", "--itl-ms", "5", "--trace", trace, NULL};
    const char *run_args[16] = {"--dataset", spec, "--multi-turn", "--output-len", "4"};
    int n = 5;
    for (int i = 0; load_args[i]; i++)
        run_args[n++] = load_args[i];
    cJSON *a = run_against(sim_args, run_args, NULL);
    static struct cJSON *lines[MAX_TURN_REQ];
    int k = harness_read_jsonl(trace, lines, MAX_TURN_REQ);
    cr_assert_gt(k, 0);
    static double received[MAX_TURN_REQ], finished[MAX_TURN_REQ];
    for (int i = 0; i < MAX_TURN_REQ; i++)
        received[i] = finished[i] = NAN;
    for (int i = 0; i < k; i++) {
        int seq;
        cr_assert_eq(sscanf(cJSON_GetObjectItem(lines[i], "request_id")->valuestring, "anvil-req-%d", &seq), 1);
        cr_assert_lt(seq, MAX_TURN_REQ);
        received[seq] = harness_num(lines[i], "received_ns");
        finished[seq] = harness_num(lines[i], "finished_ns");
        cJSON_Delete(lines[i]);
    }
    for (int seq = 1; seq < MAX_TURN_REQ; seq++)
        if (seq % 12 % 3 && !isnan(received[seq]))
            cr_assert_geq(received[seq], finished[seq - 1], "turn %d of request %d reached the server "
                          "%.3f ms before the previous reply ended", seq % 12 % 3, seq,
                          (finished[seq - 1] - received[seq]) / 1e6);
    unlink(data);
    unlink(trace);
    return a;
}

Test(load_e2e, multi_turn_turns_follow_replies_in_a_closed_loop, .timeout = 60)
{
    const char *load[] = {"--num-prompts", "12", "--concurrency", "4", NULL};
    cJSON *a = turns_follow_replies(load);
    cr_assert_eq(harness_num(a, "completed"), 12);
    cJSON_Delete(a);
}

Test(load_e2e, multi_turn_turns_follow_replies_in_an_open_loop, .timeout = 60)
{
    const char *load[] = {"--num-prompts", "12", "--request-rate", "1000", NULL};
    cJSON *a = turns_follow_replies(load);
    cr_assert_eq(harness_num(a, "completed"), 12);
    cr_assert_lt(harness_num(cJSON_GetObjectItem(a, "metrics"), "send_lateness_p99_ms"), 5,
                 "a held turn's wait is not lateness");
    cJSON_Delete(a);
}

/* Held turns go out of order: what was sent is still the whole run. */
Test(load_e2e, multi_turn_in_duration_mode_counts_what_was_sent, .timeout = 60)
{
    const char *load[] = {"--concurrency", "4", "--duration", "1", NULL};
    cJSON *a = turns_follow_replies(load);
    cr_assert_eq(harness_num(a, "not_sent"), 0);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(a, "incomplete")), "%s",
              cJSON_GetStringValue(cJSON_GetObjectItem(a, "incomplete_reason")));
    cr_assert_gt(harness_num(a, "completed"), 12);
    cJSON_Delete(a);
}

/* Two measuring threads: a turn still waits for its previous reply,
 * whichever thread ran it. */
Test(load_e2e, multi_turn_turns_follow_replies_over_two_threads, .timeout = 60)
{
    const char *closed[] = {"--num-prompts", "12", "--concurrency", "4", "--threads", "2", NULL};
    cJSON *a = turns_follow_replies(closed);
    cr_assert_eq(harness_num(a, "completed"), 12);
    cJSON_Delete(a);
    const char *open[] = {"--num-prompts", "12", "--request-rate", "1000", "--threads", "2", NULL};
    a = turns_follow_replies(open);
    cr_assert_eq(harness_num(a, "completed"), 12);
    cJSON_Delete(a);
}

/* The cap counts every thread's requests: with two loops that may each hold
 * the whole cap, the server still never sees more than --max-concurrency. */
Test(load_e2e, concurrency_cap_holds_over_two_threads, .timeout = 120)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "5", "--trace", trace, NULL};
    const char *run_args[] = {"--request-rate", "200", "--burstiness", "1", "--max-concurrency", "3",
                              "--threads", "2", "--num-prompts", "80", "--input-len", "16", "--output-len", "10",
                              NULL};
    cJSON *a = run_against(sim_args, run_args, trace);
    cr_assert_eq(harness_num(a, "completed"), 80);
    int most = max_in_flight(trace);
    cr_assert_leq(most, 3, "the server saw %d in flight with --max-concurrency 3 over two threads", most);
    cr_assert_eq(most, 3, "200 req/s of 50 ms requests keep the cap full");
    cJSON_Delete(a);
    unlink(trace);
}

/* A closed loop opens one connection per stream before measuring, past
 * 1,024 too (the cap there left the first wave's other sends paying a
 * handshake, or a SYN retransmit when the server's queue overflowed). */
Test(load_e2e, closed_loop_prewarms_a_connection_per_stream_past_1024, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "0", "--itl-ms", "0", NULL};
    const char *run_args[] = {"--concurrency", "1100", "--num-prompts", "1100", "--threads", "2",
                              "--input-len", "4", "--output-len", "1", "--calibration", "none", NULL};
    cJSON *a = run_against(sim_args, run_args, NULL);
    cr_assert_eq(harness_num(a, "completed"), 1100);
    cr_assert_eq(harness_num(a, "prewarmed_connections"), 1100, "pre-warmed %.0f connections for 1100 streams",
                 harness_num(a, "prewarmed_connections"));
    cJSON_Delete(a);
}
