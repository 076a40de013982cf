/* test_sim_engine.c — end-to-end tests of `anvil sim`'s engine model over
 * HTTP: queueing, KV-cache limits, step-time formula, speculative decoding,
 * prefix caching, reasoning, /metrics against the trace, and the seed 003
 * profile. Each test starts its own simulator ($ANVIL_BIN). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "harness.h"

#define MS 1000000LL

static cJSON *jget(const cJSON *o, const char *path) { return harness_json_path(o, path); }

static double jnum(const cJSON *o, const char *path)
{
    const cJSON *v = jget(o, path);
    cr_assert(cJSON_IsNumber(v), "%s is not a number", path);
    return v->valuedouble;
}

static void start(struct sim_proc *p, const char *const args[])
{
    cr_assert_eq(sim_start(p, args), 0, "sim did not start");
}

static void stop_clean(struct sim_proc *p)
{
    cr_assert_eq(sim_stop(p), 0, "sim did not exit 0 on SIGTERM (sanitizer report above?)");
}

/* A completions body: a prompt of words distinct per tag (no shared prefix
 * unless the tag repeats), max_tokens out, ignore_eos, streamed with usage. */
static char *body_words(int tag, int words, int out)
{
    size_t cap = (size_t)words * 12 + 256;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "{\"prompt\":\"");
    for (int i = 0; i < words; i++)
        n += (size_t)snprintf(b + n, cap - n, "w%d_%d ", tag, i);
    snprintf(b + n, cap - n, "\",\"max_tokens\":%d,\"ignore_eos\":true,\"stream\":true,"
             "\"stream_options\":{\"include_usage\":true}}", out);
    return b;
}

/* Runs n streamed completions at once, tagged X-Request-Id r<i>. */
static void run_many(const struct sim_proc *p, char *bodies[], int n, struct http_reply *rep,
                     void (*tick)(void *), void *arg)
{
    char url[256];
    snprintf(url, sizeof url, "%s/completions", p->base_url);
    char **hdr = calloc((size_t)n, sizeof *hdr);
    for (int i = 0; i < n; i++) {
        hdr[i] = malloc(48);
        snprintf(hdr[i], 48, "X-Request-Id: r%d", i);
    }
    cr_assert_eq(http_post_many(url, (const char *const *)bodies, (const char *const *)hdr, n, rep,
                                tick, arg), 0);
    for (int i = 0; i < n; i++)
        free(hdr[i]);
    free(hdr);
}

/* Samples the engine gauges while requests run. */
struct gauges {
    const char *root;
    double max_running, max_waiting, max_kv;
};

static void sample_gauges(void *arg)
{
    struct gauges *g = arg;
    double r = harness_metric(g->root, "vllm:num_requests_running{model_name=\"anvil-sim\"}");
    double w = harness_metric(g->root, "vllm:num_requests_waiting{model_name=\"anvil-sim\"}");
    double k = harness_metric(g->root, "vllm:kv_cache_usage_perc{model_name=\"anvil-sim\"}");
    g->max_running = r > g->max_running ? r : g->max_running;
    g->max_waiting = w > g->max_waiting ? w : g->max_waiting;
    g->max_kv = k > g->max_kv ? k : g->max_kv;
}

static int64_t ttft_of(const cJSON *l)
{
    return (int64_t)(jnum(l, "first_token_ns") - jnum(l, "received_ns"));
}

Test(sim_engine_e2e, queues_beyond_max_num_seqs_and_ttft_grows, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--max-num-seqs", "2", "--decode-base-ms", "5",
                                    "--decode-ms-per-seq", "0", "--prefill-tok-s", "0",
                                    "--trace", trace, NULL});
    enum { N = 6 };
    char *bodies[N];
    for (int i = 0; i < N; i++)
        bodies[i] = body_words(i, 8, 20);
    struct http_reply rep[N];
    struct gauges g = {.root = p.root_url};
    run_many(&p, bodies, N, rep, sample_gauges, &g);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(rep[i].status, 200);
        http_reply_free(&rep[i]);
        free(bodies[i]);
    }
    stop_clean(&p);
    cr_expect_eq(g.max_running, 2, "never more than --max-num-seqs running");
    cr_expect_geq(g.max_waiting, 1, "the rest waited");
    cJSON *lines[N];
    cr_assert_eq(harness_read_jsonl(trace, lines, N), N);
    unlink(trace);
    /* admitted in pairs: the third pair waits for two whole replies */
    int64_t ttft[N];
    for (int i = 0; i < N; i++)
        ttft[i] = ttft_of(lines[i]);
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < N; i++) {
        lo = ttft[i] < lo ? ttft[i] : lo;
        hi = ttft[i] > hi ? ttft[i] : hi;
        /* overlap: at most 2 admitted-but-unfinished at once */
        int overlap = 0;
        double a = jnum(lines[i], "admitted_ns");
        for (int j = 0; j < N; j++)
            overlap += jnum(lines[j], "admitted_ns") <= a && jnum(lines[j], "finished_ns") > a;
        cr_expect_leq(overlap, 2);
    }
    /* each reply takes 20 steps of 5 ms: the last pair waits ~2 of them */
    cr_expect_gt(hi - lo, 150 * MS, "TTFT grows with queue position: %.1f..%.1f ms", lo / 1e6, hi / 1e6);
    for (int i = 0; i < N; i++)
        cJSON_Delete(lines[i]);
}

Test(sim_engine_e2e, kv_cache_caps_running_for_long_prompts, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    /* 64 blocks of 16; each request: 400 prompt + 40 out = 28 blocks → 2 fit */
    start(&p, (const char *const[]){"--kv-cache-tokens", "1024", "--max-model-len", "512",
                                    "--decode-base-ms", "3", "--prefill-tok-s", "200000",
                                    "--trace", trace, NULL});
    enum { N = 5 };
    char *bodies[N];
    for (int i = 0; i < N; i++)
        bodies[i] = body_words(i, 399, 40);
    struct http_reply rep[N];
    struct gauges g = {.root = p.root_url};
    run_many(&p, bodies, N, rep, sample_gauges, &g);
    for (int i = 0; i < N; i++) {
        cr_expect(strstr(rep[i].body, "\"completion_tokens\":40") != NULL, "exact tokens");
        http_reply_free(&rep[i]);
        free(bodies[i]);
    }
    double preempt = harness_metric(p.root_url, "vllm:num_preemptions_total{model_name=\"anvil-sim\"}");
    stop_clean(&p);
    cr_expect_leq(g.max_running, 2, "KV holds two 440-token sequences, saw %g", g.max_running);
    cr_expect_gt(g.max_kv, 0.5);
    cJSON *lines[N];
    cr_assert_eq(harness_read_jsonl(trace, lines, N), N);
    unlink(trace);
    double traced = 0;
    for (int i = 0; i < N; i++) {
        traced += cJSON_GetArraySize(jget(lines[i], "preemptions"));
        cr_expect_eq(jnum(lines[i], "completion_tokens"), 40);
        cJSON_Delete(lines[i]);
    }
    cr_expect_eq(preempt, traced, "/metrics preemptions match the trace");
}

/* Median of the gaps between a trace line's chunks, ns. */
static int64_t median_gap(const cJSON *l)
{
    const cJSON *ch = jget(l, "chunks");
    int n = cJSON_GetArraySize(ch);
    int64_t gaps[512];
    int k = 0;
    for (int i = 1; i < n && k < 512; i++)
        gaps[k++] = (int64_t)(jnum(cJSON_GetArrayItem(ch, i), "t_ns") -
                              jnum(cJSON_GetArrayItem(ch, i - 1), "t_ns"));
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && gaps[j] < gaps[j - 1]; j--) {
            int64_t t = gaps[j];
            gaps[j] = gaps[j - 1];
            gaps[j - 1] = t;
        }
    return k ? gaps[k / 2] : 0;
}

Test(sim_engine_e2e, tpot_grows_with_batch_per_formula, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    /* step = 4 ms + 2 ms per sequence (no prefill or attention cost) */
    start(&p, (const char *const[]){"--decode-base-ms", "4", "--decode-ms-per-seq", "2",
                                    "--attn-ms-per-ktok", "0", "--prefill-tok-s", "0",
                                    "--trace", trace, NULL});
    const int sizes[] = {1, 8};
    for (int s = 0; s < 2; s++) {
        char *bodies[8];
        struct http_reply rep[8];
        for (int i = 0; i < sizes[s]; i++)
            bodies[i] = body_words(100 * s + i, 4, 30);
        run_many(&p, bodies, sizes[s], rep, NULL, NULL);
        for (int i = 0; i < sizes[s]; i++) {
            http_reply_free(&rep[i]);
            free(bodies[i]);
        }
    }
    stop_clean(&p);
    cJSON *lines[9];
    cr_assert_eq(harness_read_jsonl(trace, lines, 9), 9);
    unlink(trace);
    double first = INFINITY;   /* the batch-1 request arrived before all others */
    for (int i = 0; i < 9; i++)
        first = fmin(first, jnum(lines[i], "received_ns"));
    for (int i = 0; i < 9; i++) {
        bool alone = jnum(lines[i], "received_ns") == first;
        int64_t want = (4 + 2 * (alone ? 1 : 8)) * MS, gap = median_gap(lines[i]);
        cr_expect(gap >= want && gap <= want + MS, "batch %d: median ITL %.3f ms, formula %.0f ms",
                  alone ? 1 : 8, gap / 1e6, want / 1e6);
        cJSON_Delete(lines[i]);
    }
}

/* Splits an SSE body into parsed JSON events (skips [DONE]); returns the count. */
static int sse_events(const char *body, cJSON **ev, int cap)
{
    int n = 0;
    for (const char *p = body; (p = strstr(p, "data: ")) && n < cap; p += 6) {
        const char *end = strstr(p, "\n\n");
        cr_assert_not_null(end);
        if (strncmp(p + 6, "[DONE]", 6) != 0) {
            ev[n] = cJSON_ParseWithLength(p + 6, (size_t)(end - p - 6));
            cr_assert_not_null(ev[n], "not JSON: %.80s", p + 6);
            n++;
        }
    }
    return n;
}

static int count_words(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == ' ';
    return n;
}

Test(sim_engine_e2e, speculative_chunks_carry_several_tokens_usage_exact, .timeout = 60)
{
    struct sim_proc p;
    start(&p, (const char *const[]){"--num-speculative-tokens", "3", "--spec-acceptance", "0.8",
                                    "--decode-base-ms", "1", "--seed", "5", NULL});
    char *body = body_words(1, 10, 100);
    char url[256];
    snprintf(url, sizeof url, "%s/completions", p.base_url);
    int chunks[2];
    for (int run = 0; run < 2; run++) {
        struct http_reply r;
        cr_assert_eq(http_post(url, body, &r), 0);
        cJSON *ev[256];
        int n = sse_events(r.body, ev, 256);
        int words = 0, multi = 0;
        for (int i = 0; i + 1 < n; i++) {
            int w = count_words(cJSON_GetStringValue(jget(ev[i], "choices.0.text")));
            words += w;
            multi += w > 1;
            cr_expect_leq(w, 4);
        }
        cr_expect_eq(words, 100, "every token's text arrives");
        cr_expect_gt(multi, 5, "speculative steps send several tokens per chunk");
        cr_expect_eq(jnum(ev[n - 1], "usage.completion_tokens"), 100);
        chunks[run] = n;
        for (int i = 0; i < n; i++)
            cJSON_Delete(ev[i]);
        http_reply_free(&r);
    }
    cr_expect_eq(chunks[0], chunks[1], "--seed makes acceptance reproducible");
    double drafts = harness_metric(p.root_url, "vllm:spec_decode_num_drafts_total{model_name=\"anvil-sim\"}");
    double acc = harness_metric(p.root_url, "vllm:spec_decode_num_accepted_tokens_total{model_name=\"anvil-sim\"}");
    double pos0 = harness_metric(p.root_url,
        "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"anvil-sim\",position=\"0\"}");
    double gen = harness_metric(p.root_url, "vllm:generation_tokens_total{model_name=\"anvil-sim\"}");
    cr_expect_eq(gen, 200);
    cr_expect_gt(drafts, 0);
    cr_expect(pos0 / drafts > 0.6 && pos0 / drafts < 0.95, "position 0 acceptance %.2f", pos0 / drafts);
    cr_expect_leq(gen, 2 + drafts * 4);
    cr_expect_geq(gen, 2 + drafts + acc - 2, "tokens = prefill + steps + accepted");
    free(body);
    stop_clean(&p);
}

Test(sim_engine_e2e, prefix_cache_hits_repeated_prompts, .timeout = 60)
{
    struct sim_proc p;
    start(&p, (const char *const[]){"--enable-prefix-caching", "--prefill-tok-s", "10000", NULL});
    char *body = body_words(7, 200, 4);   /* 201 tokens: 12 full blocks */
    char url[256];
    snprintf(url, sizeof url, "%s/completions", p.base_url);
    double cached[2];
    for (int i = 0; i < 2; i++) {
        struct http_reply r;
        cr_assert_eq(http_post(url, body, &r), 0);
        cJSON *ev[16];
        int n = sse_events(r.body, ev, 16);
        cached[i] = jnum(ev[n - 1], "usage.prompt_tokens_details.cached_tokens");
        cr_expect_eq(jnum(ev[n - 1], "usage.prompt_tokens"), 201);
        for (int k = 0; k < n; k++)
            cJSON_Delete(ev[k]);
        http_reply_free(&r);
    }
    cr_expect_eq(cached[0], 0);
    cr_expect_eq(cached[1], 192, "12 full blocks of 16 hit");
    cr_expect_eq(harness_metric(p.root_url, "vllm:prefix_cache_hits_total{model_name=\"anvil-sim\"}"), 192);
    cr_expect_eq(harness_metric(p.root_url, "vllm:prefix_cache_queries_total{model_name=\"anvil-sim\"}"), 402);
    free(body);
    stop_clean(&p);
}

static void check_reasoning(const char *flavor, const char *key)
{
    struct sim_proc p;
    start(&p, (const char *const[]){"--reasoning-tokens", "3", "--flavor", flavor, NULL});
    char url[256];
    snprintf(url, sizeof url, "%s/chat/completions", p.base_url);
    struct http_reply r;
    cr_assert_eq(http_post(url, "{\"messages\":[{\"role\":\"user\",\"content\":\"think\"}],"
                           "\"max_tokens\":6,\"ignore_eos\":true,\"stream\":true,"
                           "\"stream_options\":{\"include_usage\":true}}", &r), 0);
    cJSON *ev[32];
    int n = sse_events(r.body, ev, 32), reasoning = 0, content = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *rs = jget(ev[i], "choices.0.delta");
        const char *rv = cJSON_GetStringValue(jget(rs, key));
        const char *cv = cJSON_GetStringValue(jget(rs, "content"));
        if (rv && *rv) {
            cr_expect_eq(content, 0, "%s: reasoning comes first", flavor);
            reasoning++;
        }
        content += cv && *cv;
        cJSON_Delete(ev[i]);
    }
    cr_expect_eq(reasoning, 3, "%s: 3 reasoning chunks in %s", flavor, key);
    cr_expect_eq(content, 3, "%s: then 3 content chunks", flavor);
    http_reply_free(&r);
    stop_clean(&p);
}

Test(sim_engine_e2e, reasoning_tokens_stream_first, .timeout = 60)
{
    check_reasoning("vllm", "reasoning");
    check_reasoning("sglang", "reasoning_content");
}

Test(sim_engine_e2e, metrics_consistent_with_trace, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    struct sim_proc p;
    start(&p, (const char *const[]){"--num-speculative-tokens", "2", "--decode-base-ms", "2",
                                    "--trace", trace, NULL});
    enum { N = 12 };
    char *bodies[N];
    for (int i = 0; i < N; i++)
        bodies[i] = body_words(i, 20 + i, 10 + 3 * i);
    struct http_reply rep[N];
    run_many(&p, bodies, N, rep, NULL, NULL);
    for (int i = 0; i < N; i++) {
        http_reply_free(&rep[i]);
        free(bodies[i]);
    }
#define M(name) harness_metric(p.root_url, name "{model_name=\"anvil-sim\"}")
    double gen = M("vllm:generation_tokens_total"), prompt = M("vllm:prompt_tokens_total");
    double ttft_n = M("vllm:time_to_first_token_seconds_count");
    double ttft_s = M("vllm:time_to_first_token_seconds_sum");
    double e2e_n = M("vllm:e2e_request_latency_seconds_count");
    double len = harness_metric(p.root_url, "vllm:request_success_total{finished_reason=\"length\",model_name=\"anvil-sim\"}");
    cr_expect_eq(M("vllm:num_requests_running"), 0);
    cr_expect_eq(M("vllm:kv_cache_usage_perc"), 0);
#undef M
    stop_clean(&p);
    cJSON *lines[N];
    cr_assert_eq(harness_read_jsonl(trace, lines, N), N);
    unlink(trace);
    double sum_gen = 0, sum_prompt = 0, sum_ttft = 0;
    for (int i = 0; i < N; i++) {
        sum_gen += jnum(lines[i], "completion_tokens");
        sum_prompt += jnum(lines[i], "prompt_tokens");
        sum_ttft += (double)ttft_of(lines[i]) / 1e9;
        cr_expect_geq(jnum(lines[i], "admitted_ns"), jnum(lines[i], "received_ns"));
        cr_expect_gt(cJSON_GetArraySize(jget(lines[i], "prefill_chunks")), 0);
        cJSON_Delete(lines[i]);
    }
    cr_expect_eq(gen, sum_gen);
    cr_expect_eq(prompt, sum_prompt);
    cr_expect_eq(ttft_n, N);
    cr_expect_eq(e2e_n, N);
    cr_expect_eq(len, N);
    cr_expect(fabs(ttft_s - sum_ttft) < 1e-3 * N, "TTFT sum %.6f vs trace %.6f", ttft_s, sum_ttft);
}

Test(sim_engine_e2e, engine_flags_rejected_in_fixed_mode)
{
    char out[256], err[512];
    int st;
    const char *bin = harness_anvil_bin();
    cr_assert_eq(run_cmd_err((const char *const[]){bin, "sim", "--ttft-ms", "5", "--max-num-seqs",
                                                   "4", NULL}, out, sizeof out, err, sizeof err, &st), 0);
    cr_expect_eq(st, 2);
    cr_expect(strstr(err, "--max-num-seqs") != NULL, "%s", err);
    cr_assert_eq(run_cmd_err((const char *const[]){bin, "sim", "--kv-cache-tokens", "100", NULL},
                             out, sizeof out, err, sizeof err, &st), 0);
    cr_expect_eq(st, 2, "a KV cache smaller than one max-length sequence");
    cr_assert_eq(run_cmd_err((const char *const[]){bin, "sim", "--spec-acceptance", "0.5,0.9", NULL},
                             out, sizeof out, err, sizeof err, &st), 0);
    cr_expect_eq(st, 2, "acceptance may not increase with position");
    cr_assert_eq(run_cmd_err((const char *const[]){bin, "sim", "--profile", "/nonexistent.json", NULL},
                             out, sizeof out, err, sizeof err, &st), 0);
    cr_expect_eq(st, 2);
}

/* ---- the seed 003 profile ------------------------------------------------------- */

/* Medians of the seed's sglang rows short-128-64-c{1,4,8,16,32}, read from
 * the seed file when present (else these copies of them). */
static const int levels[] = {1, 4, 8, 16, 32};
static const double seed_ttft[] = {126.55, 245.43, 250.00, 257.12, 385.31};
static const double seed_tpot[] = {6.847, 9.052, 12.320, 16.595, 23.292};
static const double seed_tput[] = {114.7, 324.2, 499.5, 784.0, 1112.0};

static void seed_medians(double ttft[5], double tpot[5], double tput[5])
{
    memcpy(ttft, seed_ttft, sizeof seed_ttft);
    memcpy(tpot, seed_tpot, sizeof seed_tpot);
    memcpy(tput, seed_tput, sizeof seed_tput);
    char *text = harness_read_file("tests/data/seed-003.json", NULL);
    cJSON *seed = text ? cJSON_Parse(text) : NULL;
    free(text);
    cr_assert(seed, "tests/data/seed-003.json must be readable: the medians come from it");
    const cJSON *a;
    cJSON_ArrayForEach(a, jget(seed, "aggregates")) {
        for (int i = 0; i < 5; i++) {
            char id[32];
            snprintf(id, sizeof id, "short-128-64-c%d", levels[i]);
            if (strcmp(cJSON_GetStringValue(jget(a, "engine")), "sglang") ||
                strcmp(cJSON_GetStringValue(jget(a, "case_id")), id))
                continue;
            ttft[i] = jnum(a, "metrics.p50_ttft_ms.median");
            tpot[i] = jnum(a, "metrics.p50_tpot_ms.median");
            tput[i] = jnum(a, "metrics.output_throughput.median");
        }
    }
    cJSON_Delete(seed);
}

static pid_t spawn_run(const char *base_url, int c, const char *out)
{
    char conc[16], n[16];
    snprintf(conc, sizeof conc, "%d", c);
    snprintf(n, sizeof n, "%d", c * 4 < 8 ? 8 : c * 4);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        const char *bin = harness_anvil_bin();
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        execl(bin, bin, "run", "--base-url", base_url, "--endpoint", "completions", "--concurrency",
              conc, "--num-prompts", n, "--input-len", "128", "--output-len", "64", "--out", out,
              (char *)NULL);
        _exit(127);
    }
    return pid;
}

static bool within(double got, double want, double tol)
{
    return fabs(got / want - 1) <= tol;
}

/* The profile is fitted so that short-128-64-c1..c32 land within 25% of the
 * seed's medians (median TTFT, median TPOT, output throughput). All five
 * concurrencies run at once, each against its own simulator: ~8 s. */
Test(sim_engine_e2e, seed003_profile_matches_seed_within_25_percent, .timeout = 120)
{
    double ttft[5], tpot[5], tput[5];
    seed_medians(ttft, tpot, tput);
    struct sim_proc sims[5];
    pid_t runs[5];
    char outs[5][64];
    for (int i = 0; i < 5; i++)
        start(&sims[i], (const char *const[]){"--profile", "profiles/seed003-sglang.json", NULL});
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(harness_tmpfile(outs[i], sizeof outs[i]), 0);
        runs[i] = spawn_run(sims[i].base_url, levels[i], outs[i]);
    }
    for (int i = 0; i < 5; i++) {
        int ws;
        cr_assert_eq(waitpid(runs[i], &ws, 0), runs[i]);
        cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "anvil run c%d failed", levels[i]);
    }
    for (int i = 0; i < 5; i++)
        stop_clean(&sims[i]);
    for (int i = 0; i < 5; i++) {
        char *text = harness_read_file(outs[i], NULL);
        unlink(outs[i]);
        cJSON *a = text ? cJSON_Parse(text) : NULL;
        free(text);
        cr_assert_not_null(a, "no artifact for c%d", levels[i]);
        double t = jnum(a, "metrics.ttft_p50_ms"), o = jnum(a, "metrics.tpot_p50_ms");
        double x = jnum(a, "metrics.throughput_tok_s");
        fprintf(stderr, "seed003 c%-2d TTFT %.1f/%.1f ms  TPOT %.2f/%.2f ms  tok/s %.0f/%.0f\n",
                levels[i], t, ttft[i], o, tpot[i], x, tput[i]);
        cr_expect(within(t, ttft[i], 0.25), "c%d TTFT p50 %.1f vs seed %.1f", levels[i], t, ttft[i]);
        cr_expect(within(o, tpot[i], 0.25), "c%d TPOT p50 %.2f vs seed %.2f", levels[i], o, tpot[i]);
        cr_expect(within(x, tput[i], 0.25), "c%d throughput %.0f vs seed %.0f", levels[i], x, tput[i]);
        cJSON_Delete(a);
    }
}
