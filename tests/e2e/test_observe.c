/* test_observe.c — `anvil run`'s server_metrics against the simulator's
 * ground truth (its trace), for every flavor: speculative acceptance,
 * acceptance length, per-position acceptance, engine steps, prefix-cache
 * hit rate, preemptions, queue and prefill times; and a /metrics that is
 * huge, malformed, slow or gone mid-run, recorded without failing the run.
 *
 * Exactness: with --num-prompts and no warm-up the counters' readings are
 * taken before the first request and after the last (the covering rule), so
 * every delta must equal the trace's sum over the measured requests exactly;
 * means from histogram sums are exact to the 10 significant digits the
 * simulator prints (relative bound 1e-8). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

static double jnum(const cJSON *o, const char *path)
{
    const cJSON *v = harness_json_path(o, path);
    cr_assert(cJSON_IsNumber(v), "%s is not a number", path);
    return v->valuedouble;
}

static const char *jstr(const cJSON *o, const char *path)
{
    const cJSON *v = harness_json_path(o, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Sums over the trace's measured requests (X-Request-Id anvil-req-N). */
struct truth {
    int requests;
    double completion, prompt, cached, drafts, draft_tokens, accepted, pos[16], preemptions;
    double queue_s, prefill_s;  /* Σ admitted − received, Σ first token − admitted */
};

static struct truth read_truth(const char *trace)
{
    static cJSON *lines[4096];
    int n = harness_read_jsonl(trace, lines, 4096);
    cr_assert_geq(n, 1, "trace %s unreadable", trace);
    struct truth t = {0};
    for (int i = 0; i < n; i++) {
        const char *id = jstr(lines[i], "request_id");
        if (id && !strncmp(id, "anvil-req-", 10)) {
            t.requests++;
            t.completion += jnum(lines[i], "completion_tokens");
            t.prompt += jnum(lines[i], "prompt_tokens");
            t.cached += jnum(lines[i], "cached_tokens");
            t.preemptions += cJSON_GetArraySize(harness_json_path(lines[i], "preemptions"));
            t.queue_s += (jnum(lines[i], "admitted_ns") - jnum(lines[i], "received_ns")) / 1e9;
            t.prefill_s += (jnum(lines[i], "first_token_ns") - jnum(lines[i], "admitted_ns")) / 1e9;
            const cJSON *spec = harness_json_path(lines[i], "spec");
            if (cJSON_IsObject(spec)) {
                t.drafts += jnum(spec, "drafts");
                t.draft_tokens += jnum(spec, "draft_tokens");
                t.accepted += jnum(spec, "accepted");
                const cJSON *p;
                int k = 0;
                cJSON_ArrayForEach(p, cJSON_GetObjectItem(spec, "accepted_per_pos"))
                    t.pos[k++] += p->valuedouble;
            }
        }
        cJSON_Delete(lines[i]);
    }
    return t;
}

/* Runs anvil run with extra args against sim; returns the artifact. */
static cJSON *run_anvil(const struct sim_proc *sim, const char *const extra[], char *out, size_t cap, int *status)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[64] = {harness_anvil_bin(), "run", "--base-url", sim->base_url, "--out", art,
                            "--scrape-interval-ms", "50"};
    int n = 8;
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    cr_assert_eq(run_cmd_err(argv, out, cap, out + cap / 2, cap / 2, status), 0);
    cJSON *a = harness_load_json(art);
    unlink(art);
    return a;
}

static void expect_rel(double got, double want, double rel, const char *what)
{
    cr_expect(fabs(got - want) <= rel * fabs(want), "%s: %.17g, truth %.17g", what, got, want);
}

/* vLLM names (the default flavor): every derived figure equals the trace's. */
Test(observe_e2e, vllm_speculative_prefix_cache_and_queue_times_equal_the_trace, .timeout = 90)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--num-speculative-tokens", "3", "--spec-acceptance", "0.8,0.6,0.4",
                              "--enable-prefix-caching", "--frontend-ms", "1", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    static char out[65536];
    int status;
    const char *extra[] = {"--concurrency", "8", "--num-prompts", "40", "--input-len", "128", "--output-len",
                           "48", "--shared-prefix-len", "64", NULL};
    cJSON *a = run_anvil(&sim, extra, out, sizeof out, &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    struct truth t = read_truth(trace);
    unlink(trace);
    cr_assert_eq(t.requests, 40);
    const cJSON *m = cJSON_GetObjectItem(a, "server_metrics");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(m, "available")), "%s", jstr(m, "reason"));
    cr_expect_str_eq(jstr(m, "engine"), "vllm");
    cr_expect_str_eq(jstr(m, "window.rule"), "covering");
    cr_expect_eq(jnum(m, "derived.server_output_tokens"), t.completion);
    cr_expect_eq(jnum(m, "cross_checks.client_output_tokens"), t.completion);
    cr_expect(cJSON_IsFalse(harness_json_path(m, "cross_checks.other_traffic")));
    cr_expect_eq(jnum(m, "counters.prompt_tokens"), t.prompt);
    cr_expect_eq(jnum(m, "derived.server_spec_drafts"), t.drafts);
    cr_expect_eq(jnum(m, "derived.server_spec_draft_tokens"), t.draft_tokens);
    cr_expect_eq(jnum(m, "derived.server_spec_accepted_tokens"), t.accepted);
    cr_assert_gt(t.drafts, 0);
    expect_rel(jnum(m, "derived.server_spec_accept_rate"), t.accepted / t.draft_tokens, 1e-12, "acceptance rate");
    expect_rel(jnum(m, "derived.server_spec_accept_length"), 1 + t.accepted / t.drafts, 1e-12, "acceptance length");
    for (int i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "derived.server_spec_pos_accept.%d", i);
        expect_rel(jnum(m, path), t.pos[i] / t.drafts, 1e-12, "per-position acceptance");
    }
    /* seed 004: engine_steps = drafts + max(0, out − (accepted + drafts)) = Σ (completion − accepted) */
    cr_expect_eq(jnum(m, "derived.server_engine_steps"), t.completion - t.accepted);
    expect_rel(jnum(m, "derived.server_steps_per_s"), (t.completion - t.accepted) / jnum(m, "window.seconds"), 1e-12,
               "steps/s");
    expect_rel(jnum(m, "derived.server_accept_len_effective"), t.completion / (t.completion - t.accepted), 1e-12,
               "effective acceptance length");
    cr_assert_gt(t.cached, 0, "the shared prefix is served from the cache");
    cr_expect_eq(t.preemptions, 0);
    expect_rel(jnum(m, "derived.prefix_cache_hit_rate"), t.cached / t.prompt, 1e-12, "hit rate");
    cr_expect_eq(jnum(m, "derived.preemptions"), 0);
    cr_expect_eq(jnum(m, "derived.kv_pool_tokens"), 524288);
    cr_expect_eq(jnum(m, "histograms.queue_time.count"), 40);
    expect_rel(jnum(m, "cross_checks.ttft_split_ms.server_queue_mean"), t.queue_s / 40 * 1e3, 1e-8, "queue mean");
    expect_rel(jnum(m, "cross_checks.ttft_split_ms.server_prefill_mean"), t.prefill_s / 40 * 1e3, 1e-8,
               "prefill mean");
    double split = jnum(m, "cross_checks.ttft_split_ms.server_queue_mean") +
                   jnum(m, "cross_checks.ttft_split_ms.server_prefill_mean") +
                   jnum(m, "cross_checks.ttft_split_ms.transfer_mean");
    expect_rel(split, jnum(m, "cross_checks.ttft_split_ms.client_ttft_mean"), 1e-12, "queue + prefill + transfer");
    cr_expect_geq(jnum(m, "scrapes.ok"), 4, "before, boundaries, after");
    cr_expect_eq(jnum(m, "scrapes.failed"), 0);
    cr_expect_leq(jnum(m, "derived.max_running_reqs"), 8);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(a, "hardware_run_summary")), "no GPU here");
    cr_expect(strstr(out, "Server metrics"), "the summary has a server section:\n%s", out);
    cJSON_Delete(a);
}

/* A KV cache too small for the batch: the preemption counter's delta is the
 * trace's count of preemptions. */
Test(observe_e2e, preemptions_equal_the_trace, .timeout = 90)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--kv-cache-tokens", "1024", "--max-model-len", "1024", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    static char out[65536];
    int status;
    const char *extra[] = {"--concurrency", "8", "--num-prompts", "24", "--input-len", "128", "--output-len", "64",
                           NULL};
    cJSON *a = run_anvil(&sim, extra, out, sizeof out, &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    struct truth t = read_truth(trace);
    unlink(trace);
    const cJSON *m = cJSON_GetObjectItem(a, "server_metrics");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(m, "available")), "%s", jstr(m, "reason"));
    cr_assert_gt(t.preemptions, 0, "the cache holds 64 blocks, the batch needs 96");
    cr_expect_eq(jnum(m, "derived.preemptions"), t.preemptions);
    cr_expect_eq(jnum(m, "derived.server_output_tokens"), t.completion);
    cr_expect_eq(jnum(m, "derived.kv_pool_tokens"), 1024);
    cr_expect(cJSON_IsTrue(harness_json_path(m, "derived.capacity_limited")), "8 × 192 tokens > 1024");
    cJSON_Delete(a);
}

/* SGLang names: acceptance length from generation tokens over verify
 * calls, the hit rate from cached over prompt tokens, the pool from the
 * gauge, /server_info found. */
Test(observe_e2e, sglang_flavor_equals_the_trace, .timeout = 90)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--flavor", "sglang", "--num-speculative-tokens", "4", "--spec-acceptance", "0.7",
                              "--enable-prefix-caching", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    static char out[65536];
    int status;
    const char *extra[] = {"--concurrency", "4", "--num-prompts", "16", "--input-len", "96", "--output-len", "40",
                           "--shared-prefix-len", "48", NULL};
    cJSON *a = run_anvil(&sim, extra, out, sizeof out, &status);
    cr_assert_eq(status, 0, "%s", out);
    cr_assert_eq(sim_stop(&sim), 0);
    struct truth t = read_truth(trace);
    unlink(trace);
    const cJSON *m = cJSON_GetObjectItem(a, "server_metrics");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(m, "available")), "%s", jstr(m, "reason"));
    cr_expect_str_eq(jstr(m, "engine"), "sglang");
    cr_expect(jstr(m, "server_info") && strstr(jstr(m, "server_info"), "/server_info"));
    cr_expect_eq(jnum(m, "derived.server_output_tokens"), t.completion);
    cr_expect_str_eq(jstr(m, "derived.server_spec_source"), "counters");
    /* the simulator counts one verify call per decode step with drafts */
    expect_rel(jnum(m, "derived.server_spec_accept_length"), t.completion / t.drafts, 1e-12, "acceptance length");
    expect_rel(jnum(m, "derived.server_engine_steps"), t.drafts, 1e-12, "engine steps");
    expect_rel(jnum(m, "derived.prefix_cache_hit_rate"), t.cached / t.prompt, 1e-12, "hit rate");
    cr_expect_eq(jnum(m, "derived.kv_pool_tokens"), 524288);
    cJSON_Delete(a);
}

/* llama.cpp and vLLM's own flavor (with _created twins): the engine is
 * recognized and the token counters match. */
Test(observe_e2e, llamacpp_and_vllm_flavors, .timeout = 90)
{
    const char *flavors[] = {"llamacpp", "vllm"}, *engines[] = {"llama.cpp", "vllm"};
    for (int f = 0; f < 2; f++) {
        char trace[64];
        cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
        const char *sim_args[] = {"--flavor", flavors[f], "--trace", trace, NULL};
        struct sim_proc sim;
        cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
        static char out[65536];
        int status;
        const char *extra[] = {"--concurrency", "2", "--num-prompts", "6", "--input-len", "64", "--output-len", "16",
                               NULL};
        cJSON *a = run_anvil(&sim, extra, out, sizeof out, &status);
        cr_assert_eq(status, 0, "%s", out);
        cr_assert_eq(sim_stop(&sim), 0);
        struct truth t = read_truth(trace);
        unlink(trace);
        const cJSON *m = cJSON_GetObjectItem(a, "server_metrics");
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(m, "available")), "%s: %s", flavors[f], jstr(m, "reason"));
        cr_expect_str_eq(jstr(m, "engine"), engines[f]);
        cr_expect_eq(jnum(m, "derived.server_output_tokens"), t.completion, "%s", flavors[f]);
        cr_expect_eq(jnum(m, "counters.prompt_tokens"), t.prompt, "%s", flavors[f]);
        cr_expect_gt(jnum(m, "derived.batch_steps"), 0, "%s: engine steps", flavors[f]);
        if (f == 0) {
            /* llama.cpp has no prefix-cache counters or prefill histogram: Δ prompt_tokens_total
             * against the client's usage (the simulator counts every prompt token: rate 0), and
             * Δ prompt_seconds_total (the simulator's Σ first token − received) per request */
            cr_expect_eq(jnum(m, "derived.prefix_cache_hit_rate"), 0);
            cr_expect_str_eq(jstr(m, "derived.prefix_cache_hit_rate_source"),
                             "llamacpp:prompt_tokens_total vs usage.prompt_tokens");
            expect_rel(jnum(m, "cross_checks.ttft_split_ms.server_prefill_mean"),
                       (t.queue_s + t.prefill_s) / t.requests * 1e3, 1e-4, "llama.cpp prefill mean");
            cr_expect(strstr(out, "Server prefill (mean ms):"), "%s", out);
        }
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(m, "raw_counters"))
            cr_expect_null(strstr(r->string, "_created"), "%s", r->string);
        cJSON_Delete(a);
    }
}

/* A llama.cpp-shaped server whose /metrics fails while its batch runs
 * (the simulator's --metrics-fail-rate: an exact, evenly spread share of the
 * scrapes taken while requests are in flight). Failed scrapes are counted
 * and shown; gauges are over the scrapes that answered, with their
 * coverage; under 50% they are unavailable, not low. Before, the answered
 * samples were held across the failures and the gauges read as measured
 * ("running 3.86 / 4", nothing said). */
Test(observe_e2e, failed_scrapes_are_counted_and_gauges_tell_their_coverage, .timeout = 90)
{
    const char *rates[] = {"0.75", "0.25"};
    for (int k = 0; k < 2; k++) {
        const char *sim_args[] = {"--flavor", "llamacpp", "--metrics-fail-rate", rates[k], NULL};
        struct sim_proc sim;
        cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
        static char out[65536];
        int status;
        const char *extra[] = {"--concurrency", "4", "--num-prompts", "16", "--input-len", "256", "--output-len",
                               "128", NULL};
        cJSON *a = run_anvil(&sim, extra, out, sizeof out, &status);
        cr_assert_eq(sim_stop(&sim), 0);
        cr_assert_eq(status, 0, "%s", out);
        const cJSON *m = cJSON_GetObjectItem(a, "server_metrics");
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(m, "available")), "rate %s: %s", rates[k], jstr(m, "reason"));
        double ok = jnum(m, "scrapes.ok"), failed = jnum(m, "scrapes.failed");
        cr_expect_gt(failed, 4, "rate %s", rates[k]);
        const char *last = jstr(m, "scrapes.last_error");
        cr_expect(last && strstr(last, "HTTP 503"), "%s", last ? last : "(null)");
        char line[128];
        snprintf(line, sizeof line, "%.0f / %.0f", ok, failed);
        cr_expect(strstr(out, "Scrapes (ok / failed):") && strstr(out, line), "summary shows %s: %s", line, out);
        const cJSON *g = harness_json_path(m, "gauges.running_requests");
        double cover = jnum(g, "coverage"), samples = jnum(g, "samples"), missed = jnum(g, "missed");
        cr_expect_leq(samples + missed, ok + failed);
        cr_expect_gt(cover, 0);
        cr_expect_leq(cover, 1);
        if (k == 0) {
            /* 3 of 4 busy scrapes fail: the samples hold about a quarter of the window */
            cr_expect_lt(cover, 0.5, "coverage %g", cover);
            cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(g, "available")));
            cr_expect(cJSON_IsNull(cJSON_GetObjectItem(g, "time_weighted_mean")));
            cr_expect(cJSON_IsNull(harness_json_path(m, "derived.avg_running_reqs")));
            cr_expect(cJSON_IsNull(harness_json_path(m, "derived.max_running_reqs")));
            cr_expect(cJSON_IsNull(harness_json_path(m, "derived.underfilled")));
            const char *why = jstr(m, "derived.gauge_reason");
            cr_expect(why && strstr(why, "under the 50% a gauge needs"), "%s", why ? why : "(null)");
            cr_expect(strstr(out, "Running requests (mean / max):                     n/a / n/a"), "%s", out);
            cr_expect(strstr(out, "note: the scrapes that answered held "), "%s", out);
        } else {
            cr_expect_geq(cover, 0.5, "coverage %g", cover);
            cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(g, "available")));
            cr_expect(cJSON_IsNull(harness_json_path(m, "derived.gauge_reason")));
            /* a closed loop of 4 on a server with room for them: 4 ran whenever it was seen busy */
            cr_expect_eq(jnum(m, "derived.max_running_reqs"), 4);
            char note[96];
            snprintf(note, sizeof note, "note: the gauges are over the scrapes that answered, %.0f%% of the window",
                     100 * jnum(m, "derived.gauge_coverage"));
            cr_expect(strstr(out, note), "%s: %s", note, out);
        }
        cJSON_Delete(a);
    }
}

/* ---- a /metrics that misbehaves ---------------------------------------------------------- */

/* A one-thread HTTP server answering every connection with a Prometheus
 * body after delay_ms, and closing its listener after `answers` of them
 * (0 = never): the server going away mid-run. */
struct mini {
    int fd, port, delay_ms, answers;
    pthread_t th;
};

static void *mini_serve(void *arg)
{
    struct mini *m = arg;
    for (int served = 0; m->answers == 0 || served < m->answers; served++) {
        int c = accept(m->fd, NULL, NULL);
        if (c < 0)
            break;
        char req[4096];
        (void)!read(c, req, sizeof req);
        harness_sleep_ms(m->delay_ms);
        const char *body = "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total 5\n";
        char head[256];
        int hn = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\n\r\n", strlen(body));
        /* the client may have given up: no SIGPIPE for this process */
        (void)!send(c, head, (size_t)hn, MSG_NOSIGNAL);
        (void)!send(c, body, strlen(body), MSG_NOSIGNAL);
        close(c);
    }
    close(m->fd);
    return NULL;
}

static void mini_start(struct mini *m)
{
    m->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    cr_assert_eq(bind(m->fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(m->fd, 16), 0);
    getsockname(m->fd, (struct sockaddr *)&a, &len);
    m->port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&m->th, NULL, mini_serve, m), 0);
    pthread_detach(m->th);
}

/* Runs a closed loop with --server-metrics url; the run must complete with
 * every request measured, and server_metrics must say unavailable, naming want. */
static void expect_unavailable(const char *url, const char *want)
{
    struct sim_proc sim;
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "5", NULL};
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    static char out[65536];
    int status;
    const char *extra[] = {"--server-metrics", url, "--concurrency", "2", "--num-prompts", "20", "--input-len", "32",
                           "--output-len", "16", NULL};
    cJSON *a = run_anvil(&sim, extra, out, sizeof out, &status);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_expect_eq(status, 0, "the run goes on: %s", out);
    cr_expect_eq(harness_num(a, "completed"), 20);
    const cJSON *m = cJSON_GetObjectItem(a, "server_metrics");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(m, "enabled")));
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(m, "available")), "%s", url);
    const char *why = jstr(m, "reason");
    cr_expect(why && strstr(why, want), "%s: reason '%s', want '%s'", url, why ? why : "(null)", want);
    cJSON_Delete(a);
}

Test(observe_e2e, huge_malformed_absent_metrics_are_recorded_the_run_goes_on, .timeout = 90)
{
    char huge[64], bad[64], url[128];
    cr_assert_eq(harness_tmpfile(huge, sizeof huge), 0);
    FILE *f = fopen(huge, "w");
    for (int i = 0; i < 300000; i++)
        fprintf(f, "vllm:generation_tokens_total{i=\"%08d\"} 1\n", i);
    fclose(f);
    snprintf(url, sizeof url, "file://%s", huge);
    expect_unavailable(url, "larger than 8388608 bytes");
    unlink(huge);
    cr_assert_eq(harness_tmpfile(bad, sizeof bad), 0);
    f = fopen(bad, "w");
    fputs("# TYPE ok counter\nok 1\n<html>not metrics</html>\n", f);
    fclose(f);
    snprintf(url, sizeof url, "file://%s", bad);
    expect_unavailable(url, "is not Prometheus text: line 3");
    unlink(bad);
    struct mini m = {.delay_ms = 0, .answers = 1};
    mini_start(&m);     /* answers once, then refuses: nothing listens */
    char probe[128];
    snprintf(probe, sizeof probe, "http://127.0.0.1:%d/metrics", m.port);
    struct http_reply r;
    http_get(probe, &r);
    http_reply_free(&r);
    harness_sleep_ms(50);
    expect_unavailable(probe, "no scrape succeeded before the window's start");
}

Test(observe_e2e, slow_metrics_time_out_the_run_goes_on, .timeout = 90)
{
    struct mini m = {.delay_ms = 2500, .answers = 0};
    mini_start(&m);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", m.port);
    expect_unavailable(url, "timed out after 2000 ms");
}

Test(observe_e2e, metrics_gone_mid_run_are_unavailable, .timeout = 90)
{
    struct mini m = {.delay_ms = 0, .answers = 3};   /* the first reading, two more, then gone */
    mini_start(&m);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", m.port);
    expect_unavailable(url, "no scrape succeeded after the window's end");
}

/* Duration mode: the load runs through both boundaries, so counters are
 * interpolated there; the server's tokens in the window agree with the
 * tokens the client saw arrive in it, to within what 50 ms of readings
 * around each boundary can blur (2%). */
Test(observe_e2e, duration_mode_interpolates_at_the_boundaries, .timeout = 90)
{
    struct sim_proc sim;
    const char *sim_args[] = {"--decode-base-ms", "4", NULL};
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    static char out[65536];
    int status;
    const char *extra[] = {"--duration", "2", "--warmup-s", "0.5", "--concurrency", "4", "--input-len", "64",
                           "--output-len", "200", NULL};
    cJSON *a = run_anvil(&sim, extra, out, sizeof out, &status);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    const cJSON *m = cJSON_GetObjectItem(a, "server_metrics");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(m, "available")), "%s", jstr(m, "reason"));
    cr_expect_str_eq(jstr(m, "window.rule"), "interpolated");
    cr_expect_lt(jnum(m, "window.start_readings_ms.0"), 0);
    cr_expect_gt(jnum(m, "window.start_readings_ms.1"), 0);
    double server = jnum(m, "derived.server_output_tokens"), client = jnum(m, "cross_checks.client_output_tokens");
    cr_expect_float_eq(client, jnum(a, "metrics.aggregate_tps") * jnum(m, "window.seconds"), 1e-6 * client);
    cr_expect_leq(fabs(server - client), 0.02 * client, "server %g, client %g tokens in the window", server, client);
    cr_expect(cJSON_IsFalse(harness_json_path(m, "cross_checks.other_traffic")));
    cr_expect_geq(jnum(m, "gauges.running_requests.samples"), 20, "readings every 50 ms over 2 s");
    cr_expect_float_eq(jnum(m, "gauges.running_requests.time_weighted_mean"), 4, 0.5);
    cJSON_Delete(a);
}
