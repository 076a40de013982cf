/* test_sim_faults.c — `anvil sim`'s injected faults: each produces its
 * documented reply, is traced and counted, and is reproducible under --seed. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

#define MS 1000000LL
#define STREAM "{\"prompt\":\"a b c\",\"max_tokens\":%d,\"ignore_eos\":true,\"stream\":true}"

static cJSON *jget(const cJSON *o, const char *path) { return harness_json_path(o, path); }

static void start(struct sim_proc *p, const char *const args[])
{
    cr_assert_eq(sim_start(p, args), 0, "sim did not start");
}

static void stop_clean(struct sim_proc *p)
{
    cr_assert_eq(sim_stop(p), 0, "sim did not exit 0 on SIGTERM (sanitizer report above?)");
}

static void post_stream(const struct sim_proc *p, int tokens, const char *rid, struct http_reply *r)
{
    char url[256], body[256], hdr[64];
    snprintf(url, sizeof url, "%s/completions", p->base_url);
    snprintf(body, sizeof body, STREAM, tokens);
    snprintf(hdr, sizeof hdr, "X-Request-Id: %s", rid);
    http_do("POST", url, body, hdr, 0, r);
}

/* The single trace line of a run (the caller deletes it). */
static cJSON *only_line(const char *trace)
{
    cJSON *l[4];
    int n = harness_read_jsonl(trace, l, 4);
    cr_assert_eq(n, 1, "one trace line, got %d", n);
    return l[0];
}

static void check_fail(const char *status, bool retry_after, const char *mode)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    if (!strcmp(mode, "fixed"))
        start(&p, (const char *const[]){"--fail-rate", "1", "--fail-status", status, "--ttft-ms", "1",
                                        "--trace", trace, NULL});
    else
        start(&p, (const char *const[]){"--fail-rate", "1", "--fail-status", status, "--trace", trace, NULL});
    struct http_reply r;
    post_stream(&p, 5, "f1", &r);
    cr_expect_eq(r.status, atoi(status));
    cr_expect_eq(strstr(r.headers, "Retry-After: 1") != NULL, retry_after, "%s headers:\n%s", status, r.headers);
    cJSON *j = cJSON_Parse(r.body);
    cr_assert_not_null(j, "error body is JSON: %s", r.body);
    cr_expect_eq(jget(j, "error.code")->valuedouble, atoi(status));
    cr_expect(cJSON_IsString(jget(j, "error.message")));
    cJSON_Delete(j);
    http_reply_free(&r);
    cr_expect_eq(harness_metric(p.root_url, "anvil_sim:faults_total{kind=\"fail\",model_name=\"anvil-sim\"}"), 1);
    stop_clean(&p);
    cJSON *l = only_line(trace);
    unlink(trace);
    cr_expect_eq(jget(l, "status")->valuedouble, atoi(status));
    cr_expect_str_eq(cJSON_GetStringValue(jget(l, "fault")), "fail");
    cJSON_Delete(l);
}

Test(sim_faults, fail_status_with_retry_after, .timeout = 60)
{
    check_fail("429", true, "engine");
    check_fail("503", true, "fixed");
    check_fail("500", false, "engine");
}

Test(sim_faults, disconnect_closes_mid_stream, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--disconnect-rate", "1", "--decode-base-ms", "1", "--trace", trace, NULL});
    struct http_reply r;
    post_stream(&p, 50, "d1", &r);
    cr_expect_eq(r.status, 200);
    cr_expect_neq(r.curl_code, 0, "the transfer did not complete");
    cr_expect(strstr(r.body, "[DONE]") == NULL);
    cr_expect(strstr(r.body, "data: {") != NULL, "some tokens came first");
    for (int i = 0; i < 200 && isnan(harness_metric(p.root_url, "x")) &&
         harness_metric(p.root_url, "vllm:request_success_total{finished_reason=\"abort\",model_name=\"anvil-sim\"}") < 1; i++)
        harness_sleep_ms(10);
    http_reply_free(&r);
    stop_clean(&p);
    cJSON *l = only_line(trace);
    unlink(trace);
    cr_expect_str_eq(cJSON_GetStringValue(jget(l, "fault")), "disconnect");
    cr_expect_str_eq(cJSON_GetStringValue(jget(l, "finish_reason")), "abort");
    cr_expect(cJSON_IsFalse(jget(l, "client_closed")), "the server cut it, not the client");
    double sent = jget(l, "completion_tokens")->valuedouble;
    cr_expect(sent >= 1 && sent < 50, "cut mid-stream after %g tokens", sent);
    cJSON_Delete(l);
}

Test(sim_faults, stream_error_inside_200, .timeout = 60)
{
    const char *flavors[] = {"anvil", "sglang"};
    for (int f = 0; f < 2; f++) {
        struct sim_proc p;
        if (f == 0)
            start(&p, (const char *const[]){"--stream-error-rate", "1", NULL});
        else
            start(&p, (const char *const[]){"--stream-error-rate", "1", "--flavor", "sglang", NULL});
        struct http_reply r;
        post_stream(&p, 30, "e1", &r);
        cr_expect_eq(r.status, 200);
        cr_expect_eq(r.curl_code, 0, "the stream ends properly");
        const char *e = strstr(r.body, "data: {\"error\": {");
        cr_expect_not_null(e, "%s: in-stream error event:\n%s", flavors[f], r.body);
        cr_expect(e && strstr(e, "data: [DONE]") != NULL, "[DONE] after the error");
        cr_expect(e && strstr(e, "\"code\": 500") != NULL);
        if (f == 1)
            cr_expect(e && strstr(e, "\"object\": \"error\"") != NULL, "SGLang's error object");
        http_reply_free(&r);
        cr_expect_eq(harness_metric(p.root_url, f ? "sglang:num_aborted_requests_total{engine_type=\"unified\",model_name=\"anvil-sim\"}"
                                                  : "vllm:request_success_total{finished_reason=\"error\",model_name=\"anvil-sim\"}"), 1);
        stop_clean(&p);
    }
}

static int64_t max_gap(const cJSON *l)
{
    const cJSON *ch = jget(l, "chunks");
    int64_t gap = 0;
    for (int i = 1; i < cJSON_GetArraySize(ch); i++) {
        int64_t d = (int64_t)(jget(cJSON_GetArrayItem(ch, i), "t_ns")->valuedouble -
                              jget(cJSON_GetArrayItem(ch, i - 1), "t_ns")->valuedouble);
        gap = d > gap ? d : gap;
    }
    return gap;
}

Test(sim_faults, stall_and_slow_headers, .timeout = 60)
{
    const char *modes[][8] = {{"--stall-ms", "200", "--decode-base-ms", "2", NULL},
                              {"--stall-ms", "200", "--ttft-ms", "2", "--itl-ms", "2", NULL}};
    for (int m = 0; m < 2; m++) {
        char trace[64];
        cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
        const char *args[12];
        int n = 0;
        for (; modes[m][n]; n++)
            args[n] = modes[m][n];
        args[n++] = "--trace";
        args[n++] = trace;
        args[n] = NULL;
        struct sim_proc p;
        start(&p, args);
        struct http_reply r;
        post_stream(&p, 10, "s1", &r);
        cr_expect_eq(r.status, 200);
        http_reply_free(&r);
        stop_clean(&p);
        cJSON *l = only_line(trace);
        unlink(trace);
        int64_t gap = max_gap(l);
        cr_expect(gap >= 200 * MS && gap < 260 * MS, "mode %d: one pause of 200 ms, max gap %.1f ms", m, gap / 1e6);
        cr_expect_str_eq(cJSON_GetStringValue(jget(l, "fault")), "stall");
        cJSON_Delete(l);
    }
    struct sim_proc p;
    start(&p, (const char *const[]){"--slow-headers-ms", "300", NULL});
    struct http_reply r;
    post_stream(&p, 3, "h1", &r);
    cr_expect_eq(r.status, 200);
    cr_expect_geq(r.ttfb_s, 0.3, "no byte before 300 ms (first byte at %.3f s)", r.ttfb_s);
    http_reply_free(&r);
    stop_clean(&p);
}

/* Which of 40 request ids fail at --fail-rate 0.5, as a bit mask. */
static uint64_t failing_set(const char *seed)
{
    struct sim_proc p;
    start(&p, (const char *const[]){"--fail-rate", "0.5", "--seed", seed, "--decode-base-ms", "0",
                                    "--prefill-tok-s", "0", NULL});
    uint64_t mask = 0;
    for (int i = 0; i < 40; i++) {
        char rid[16];
        snprintf(rid, sizeof rid, "q%d", i);
        struct http_reply r;
        post_stream(&p, 1, rid, &r);
        if (r.status == 503)
            mask |= 1ULL << i;
        http_reply_free(&r);
    }
    stop_clean(&p);
    return mask;
}

Test(sim_faults, deterministic_under_seed, .timeout = 60)
{
    uint64_t a = failing_set("3"), b = failing_set("3"), c = failing_set("4");
    cr_expect_eq(a, b, "same seed, same request ids: same failures");
    cr_expect_neq(a, c, "another seed: other failures");
    int n = __builtin_popcountll(a);
    cr_expect(n > 8 && n < 32, "about half fail: %d of 40", n);
}

/* --metrics-fail-rate: while a request is in flight, the n-th /metrics
 * fails when floor((n+1)P) > floor(nP) (P = 0.5: every second one), 503
 * with a text body; while idle every scrape answers. */
Test(sim_faults, metrics_fail_rate_spreads_503s_over_busy_scrapes, .timeout = 60)
{
    struct sim_proc p;
    start(&p, (const char *const[]){"--metrics-fail-rate", "0.5", "--ttft-ms", "3000", "--flavor", "llamacpp", NULL});
    char url[160];
    snprintf(url, sizeof url, "%s/metrics", p.root_url);
    struct http_reply r;
    http_do("GET", url, NULL, NULL, 0, &r);
    cr_expect_eq(r.status, 200, "idle: answered");
    http_reply_free(&r);
    /* a request in flight for 3 s: sent, never read */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p.port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char body[128], req[512];
    int bn = snprintf(body, sizeof body, STREAM, 4);
    int rn = snprintf(req, sizeof req, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: %d\r\n\r\n%s", bn, body);
    cr_assert_eq(write(fd, req, (size_t)rn), rn);
    harness_sleep_ms(200);
    int want[] = {200, 503, 200, 503, 200, 503};
    for (int i = 0; i < 6; i++) {
        http_do("GET", url, NULL, NULL, 0, &r);
        cr_expect_eq(r.status, want[i], "busy scrape %d: %ld", i, r.status);
        if (want[i] == 503)
            cr_expect(strstr(r.body, "--metrics-fail-rate"), "%s", r.body);
        http_reply_free(&r);
    }
    close(fd);
    stop_clean(&p);
}
