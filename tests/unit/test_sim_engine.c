/* test_sim_engine.c — unit tests of the engine model (src/sim/engine.h),
 * its KV cache (kvcache.h), acceptance draws (spec.h) and parameter
 * profiles (profile.h), on a virtual clock: every step ends exactly when
 * the formula says, so timings are checked to the nanosecond. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/engine.h"
#include "sim/kvcache.h"
#include "sim/profile.h"
#include "sim/spec.h"

#define MAXSEQ 64

/* What the hook saw, per sequence index (seq.user). */
struct run {
    int64_t first_ns[MAXSEQ];    /* first token time */
    int64_t done_ns[MAXSEQ];
    int64_t tokens[MAXSEQ];      /* tokens delivered */
    int64_t chunks[MAXSEQ];      /* on_tokens calls */
    int64_t max_chunk[MAXSEQ];
    int64_t max_running;
};

static void on_tokens(void *ctx, struct sim_seq *s, int64_t first, int64_t n, bool done, int64_t now)
{
    struct run *r = ctx;
    intptr_t i = (intptr_t)s->user;
    cr_assert_eq(first, r->tokens[i], "tokens arrive in order");
    if (r->tokens[i] == 0)
        r->first_ns[i] = now;
    r->tokens[i] += n;
    r->chunks[i]++;
    r->max_chunk[i] = n > r->max_chunk[i] ? n : r->max_chunk[i];
    if (done)
        r->done_ns[i] = now;
}

static struct sim_engine_params base_params(void)
{
    struct sim_engine_params p;
    sim_engine_params_default(&p);
    p.decode_base_ms = 10;
    p.decode_ms_per_seq = 1;
    p.attn_ms_per_ktok = 0;
    p.prefill_tok_s = 1000;   /* 1 ms per prompt token */
    return p;
}

static void seq_init(struct sim_seq *s, intptr_t idx, int64_t prompt, int64_t out)
{
    memset(s, 0, sizeof *s);
    s->prompt_tokens = prompt;
    s->output_tokens = out;
    s->key = (uint64_t)idx * 7919 + 1;
    s->user = (void *)idx;
}

/* Runs the engine from t = 0 until idle; returns the end time. */
static int64_t run_all(struct sim_engine *e, struct run *r)
{
    int64_t now = 0, wake;
    for (int guard = 0; guard < 1000000; guard++) {
        int64_t d = sim_engine_plan(e, now, &wake);
        if (sim_engine_running(e) > r->max_running)
            r->max_running = sim_engine_running(e);
        if (d < 0) {
            if (wake == 0)
                return now;
            now = wake;
            continue;
        }
        now += d;
        sim_engine_complete(e, now);
    }
    cr_assert_fail("engine did not drain");
    return now;
}

Test(sim_engine, step_formula_units)
{
    struct sim_engine_params p = base_params();
    p.attn_ms_per_ktok = 2;
    p.prefill_base_ms = 3;
    p.draft_ms_per_token = 0.5;
    /* 10 + 1*4 + 2*(5000/1000) + (3 + 1000*100/1000) + 0.5*6 = 10+4+10+103+3 = 130 ms */
    cr_expect_eq(sim_engine_step_ns(&p, 4, 5000, 100, 6), 130 * 1000000LL);
    /* no prefill tokens: no prefill_base */
    cr_expect_eq(sim_engine_step_ns(&p, 1, 0, 0, 0), 11 * 1000000LL);
    p.prefill_tok_s = 0;   /* free prefill */
    cr_expect_eq(sim_engine_step_ns(&p, 1, 0, 50, 0), 14 * 1000000LL);
}

Test(sim_engine, queues_beyond_max_num_seqs)
{
    struct sim_engine_params p = base_params();
    p.max_num_seqs = 3;
    struct run r = {0};
    struct sim_engine_hooks h = {on_tokens, &r};
    struct sim_engine *e = sim_engine_new(&p, &h);
    struct sim_seq s[8];
    for (int i = 0; i < 8; i++) {
        seq_init(&s[i], i, 10, 5);
        sim_engine_submit(e, &s[i]);
    }
    int64_t wake;
    cr_assert_geq(sim_engine_plan(e, 0, &wake), 0);
    cr_expect_eq(sim_engine_running(e), 3);
    cr_expect_eq(sim_engine_waiting(e), 5);
    sim_engine_complete(e, 1);
    run_all(e, &r);
    cr_expect_eq(r.max_running, 3);
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(r.tokens[i], 5);
        cr_expect_eq(s[i].state, SIM_SEQ_DONE);
        sim_seq_release(&s[i]);
        if (i > 0)   /* TTFT grows with queue position (FCFS) */
            cr_expect_geq(r.first_ns[i], r.first_ns[i - 1]);
    }
    cr_expect_gt(r.first_ns[7], r.done_ns[0], "the 8th waits for a slot");
    cr_expect_eq(sim_engine_kv_used_blocks(e), 0, "every block is back");
    sim_engine_free(e);
}

Test(sim_engine, decode_step_time_follows_formula)
{
    struct sim_engine_params p = base_params();
    for (int n = 1; n <= 16; n *= 4) {
        struct run r = {0};
        struct sim_engine_hooks h = {on_tokens, &r};
        struct sim_engine *e = sim_engine_new(&p, &h);
        struct sim_seq s[16];
        for (int i = 0; i < n; i++) {
            seq_init(&s[i], i, 4, 11);
            sim_engine_submit(e, &s[i]);
        }
        run_all(e, &r);
        /* one prefill step, then 10 decode steps of 10 + 1*n ms each */
        int64_t tpot = (r.done_ns[0] - r.first_ns[0]) / 10;
        cr_expect_eq(tpot, (10 + n) * 1000000LL, "n=%d: TPOT %lld ns", n, (long long)tpot);
        cr_expect_eq(r.first_ns[0], sim_engine_step_ns(&p, n, 4 * n, 4 * n, 0));
        for (int i = 0; i < n; i++)
            sim_seq_release(&s[i]);
        sim_engine_free(e);
    }
}

Test(sim_engine, chunked_prefill_respects_budget)
{
    struct sim_engine_params p = base_params();
    p.max_num_batched_tokens = 100;
    struct run r = {0};
    struct sim_engine_hooks h = {on_tokens, &r};
    struct sim_engine *e = sim_engine_new(&p, &h);
    struct sim_seq s;
    seq_init(&s, 0, 250, 2);
    sim_engine_submit(e, &s);
    run_all(e, &r);
    cr_assert_eq(s.n_events, 3, "250 tokens in chunks of 100, 100, 50");
    cr_expect_eq(s.events[0].tokens, 100);
    cr_expect_eq(s.events[2].tokens, 50);
    cr_expect_eq(r.tokens[0], 2);
    sim_seq_release(&s);
    sim_engine_free(e);
}

Test(sim_engine, kv_cache_caps_running_and_preempts_newest)
{
    struct sim_engine_params p = base_params();
    p.block_size = 16;
    p.kv_cache_tokens = 16 * 20;          /* 20 blocks */
    p.max_num_batched_tokens = 4096;
    struct run r = {0};
    struct sim_engine_hooks h = {on_tokens, &r};
    struct sim_engine *e = sim_engine_new(&p, &h);
    struct sim_seq s[4];
    for (int i = 0; i < 4; i++) {     /* 96-token prompts: 6 blocks each, 3 fit */
        seq_init(&s[i], i, 96, 40);
        sim_engine_submit(e, &s[i]);
    }
    int64_t wake;
    sim_engine_plan(e, 0, &wake);
    cr_expect_eq(sim_engine_running(e), 3, "KV holds three 96-token prompts");
    cr_expect_eq(sim_engine_waiting(e), 1);
    sim_engine_complete(e, 1);
    run_all(e, &r);
    /* growing to 96+40 tokens = 9 blocks each cannot fit three: preemptions */
    int64_t preempted = 0;
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(r.tokens[i], 40, "seq %d got every token despite preemption", i);
        preempted += s[i].preemptions;
        sim_seq_release(&s[i]);
    }
    cr_expect_gt(preempted, 0);
    cr_expect_eq(sim_engine_stats(e)->preemptions, (uint64_t)preempted);
    cr_expect_eq(sim_engine_kv_used_blocks(e), 0);
    sim_engine_free(e);
}

Test(sim_engine, speculative_decoding_chunks_and_counts)
{
    struct sim_engine_params p = base_params();
    p.num_speculative_tokens = 3;
    double acc[] = {0.8, 0.6, 0.4};
    for (int i = 0; i < 3; i++)
        p.spec_acceptance[i] = acc[i];
    struct run r = {0};
    struct sim_engine_hooks h = {on_tokens, &r};
    struct sim_engine *e = sim_engine_new(&p, &h);
    enum { N = 40, OUT = 200 };
    struct sim_seq s[N];
    for (int i = 0; i < N; i++) {
        seq_init(&s[i], i, 8, OUT);
        sim_engine_submit(e, &s[i]);
    }
    run_all(e, &r);
    const struct sim_engine_stats *st = sim_engine_stats(e);
    uint64_t decode_steps = 0;
    for (int i = 0; i < N; i++) {
        decode_steps += s[i].decode_steps;
        cr_expect_eq(r.tokens[i], OUT, "exact output length");
        cr_expect_leq(r.max_chunk[i], 4);
        cr_expect_lt(r.chunks[i], OUT, "several tokens per chunk");
        sim_seq_release(&s[i]);
    }
    cr_expect_eq(st->generation_tokens, (uint64_t)N * OUT);
    /* tokens = one per prefill + one per decode step + accepted drafts; the
     * last steps of a reply verify fewer (or no) drafts */
    cr_expect_eq(st->generation_tokens, N + decode_steps + st->spec_accepted);
    cr_expect_leq(st->spec_drafts, decode_steps);
    for (int i = 0; i < 3; i++) {
        double rate = (double)st->spec_accepted_pos[i] / (double)st->spec_drafts;
        cr_expect(fabs(rate - acc[i]) < 0.05, "position %d rate %.3f vs %.1f", i, rate, acc[i]);
    }
    sim_engine_free(e);
}

Test(sim_engine, spec_draws_are_deterministic)
{
    double acc[SIM_SPEC_MAX] = {0.9, 0.5, 0.1};
    for (uint64_t step = 0; step < 100; step++) {
        int a = sim_spec_accepted(acc, 3, 42, step);
        cr_expect_eq(a, sim_spec_accepted(acc, 3, 42, step));
        cr_expect(a >= 0 && a <= 3);
    }
    double none[SIM_SPEC_MAX] = {0};
    cr_expect_eq(sim_spec_accepted(none, 3, 1, 1), 0);
    double all[SIM_SPEC_MAX] = {1, 1, 1};
    cr_expect_eq(sim_spec_accepted(all, 3, 1, 1), 3);
}

Test(sim_engine, prefix_cache_hits_repeated_prompt)
{
    struct sim_engine_params p = base_params();
    p.enable_prefix_caching = true;
    struct run r = {0};
    struct sim_engine_hooks h = {on_tokens, &r};
    struct sim_engine *e = sim_engine_new(&p, &h);
    int64_t ids[100];
    for (int i = 0; i < 100; i++)
        ids[i] = 1000 + i;
    uint64_t hashes[6];
    cr_assert_eq(sim_kv_block_hashes(ids, 100, 16, hashes), 6);
    struct sim_seq a, b;
    seq_init(&a, 0, 100, 3);
    a.block_hashes = hashes;
    a.n_block_hashes = 6;
    sim_engine_submit(e, &a);
    run_all(e, &r);
    cr_expect_eq(a.cached_tokens, 0);
    seq_init(&b, 1, 100, 3);
    b.block_hashes = hashes;
    b.n_block_hashes = 6;
    sim_engine_submit(e, &b);
    run_all(e, &r);
    cr_expect_eq(b.cached_tokens, 96, "six full blocks hit");
    cr_expect_eq(b.events[0].tokens, 4, "only the rest is prefilled");
    cr_expect_eq(sim_engine_stats(e)->prefix_hits, 96);
    cr_expect_eq(sim_engine_stats(e)->prefix_queries, 200);
    sim_seq_release(&a);
    sim_seq_release(&b);
    sim_engine_free(e);
}

Test(sim_engine, stall_pauses_a_sequence)
{
    struct sim_engine_params p = base_params();
    struct run r = {0};
    struct sim_engine_hooks h = {on_tokens, &r};
    struct sim_engine *e = sim_engine_new(&p, &h);
    struct sim_seq s;
    seq_init(&s, 0, 4, 10);
    s.stall_after = 5;
    s.stall_ns = 500 * 1000000LL;
    sim_engine_submit(e, &s);
    run_all(e, &r);
    /* 9 decode steps of 11 ms plus the 500 ms pause */
    cr_expect_geq(r.done_ns[0] - r.first_ns[0], 9 * 11 * 1000000LL + 500 * 1000000LL);
    cr_expect_eq(r.tokens[0], 10);
    sim_seq_release(&s);
    sim_engine_free(e);
}

Test(sim_engine, abort_frees_blocks)
{
    struct sim_engine_params p = base_params();
    struct run r = {0};
    struct sim_engine_hooks h = {on_tokens, &r};
    struct sim_engine *e = sim_engine_new(&p, &h);
    struct sim_seq s;
    seq_init(&s, 0, 64, 100);
    sim_engine_submit(e, &s);
    int64_t wake;
    sim_engine_plan(e, 0, &wake);
    cr_expect_gt(sim_engine_kv_used_blocks(e), 0);
    sim_engine_abort(e, &s);   /* mid-step: the step must skip it */
    sim_engine_complete(e, 10);
    cr_expect_eq(r.tokens[0], 0);
    cr_expect_eq(sim_engine_kv_used_blocks(e), 0);
    cr_expect_eq(sim_engine_running(e), 0);
    sim_seq_release(&s);
    sim_engine_free(e);
}

Test(sim_kvcache, lru_reuse_and_lookup)
{
    struct sim_kv kv;
    cr_assert_eq(sim_kv_init(&kv, 3, 16), 0);
    int32_t a = sim_kv_alloc(&kv), b = sim_kv_alloc(&kv), c = sim_kv_alloc(&kv);
    cr_expect_eq(sim_kv_alloc(&kv), -1, "pool exhausted");
    sim_kv_publish(&kv, a, 111);
    sim_kv_publish(&kv, b, 222);
    cr_expect_eq(sim_kv_lookup(&kv, 111), a);
    sim_kv_release(&kv, a);
    sim_kv_release(&kv, b);
    cr_expect_eq(kv.free_blocks, 2);
    cr_expect_eq(sim_kv_lookup(&kv, 222), b, "a freed block stays hit-able");
    sim_kv_acquire(&kv, b);   /* hit */
    cr_expect_eq(kv.free_blocks, 1);
    cr_expect_eq(sim_kv_alloc(&kv), a, "the least recently freed block is reused");
    cr_expect_eq(sim_kv_lookup(&kv, 111), -1, "and loses its hash");
    sim_kv_release(&kv, c);
    sim_kv_free(&kv);
}

Test(sim_profile, loads_and_rejects)
{
    char path[] = "/tmp/anvil-prof-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"description\":\"x\",\"max_num_seqs\":7,\"decode_base_ms\":1.5,"
          "\"enable_prefix_caching\":true,\"spec_acceptance\":[0.9,0.5]}", f);
    fclose(f);
    struct sim_engine_params p;
    sim_engine_params_default(&p);
    char err[512];
    cr_assert_eq(sim_profile_load(path, &p, err, sizeof err), 0, "%s", err);
    cr_expect_eq(p.max_num_seqs, 7);
    cr_expect_eq(p.decode_base_ms, 1.5);
    cr_expect(p.enable_prefix_caching);
    cr_expect_eq(p.spec_acceptance[1], 0.5);
    cr_expect_eq(p.spec_acceptance[2], 0);
    f = fopen(path, "w");
    fputs("{\"max_num_seqs\":0}", f);
    fclose(f);
    cr_expect_eq(sim_profile_load(path, &p, err, sizeof err), -1);
    cr_expect(strstr(err, "max_num_seqs") != NULL, "%s", err);
    cr_expect_eq(p.max_num_seqs, 7, "nothing half-applied");
    f = fopen(path, "w");
    fputs("{\"bogus\":1}", f);
    fclose(f);
    cr_expect_eq(sim_profile_load(path, &p, err, sizeof err), -1);
    cr_expect(strstr(err, "bogus") != NULL, "%s", err);
    unlink(path);
    cr_expect_eq(sim_profile_load("/nonexistent/x.json", &p, err, sizeof err), -1);
}

Test(sim_profile, shipped_profiles_load)
{
    const char *files[] = {"profiles/seed003-sglang.json", "profiles/zero-cost.json",
                           "profiles/llama3-8b-h100-vllm.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        struct sim_engine_params p;
        sim_engine_params_default(&p);
        char err[512];
        cr_expect_eq(sim_profile_load(files[i], &p, err, sizeof err), 0, "%s: %s", files[i], err);
        cr_expect_eq(sim_engine_params_check(&p, 32768, err, sizeof err), 0, "%s: %s", files[i], err);
    }
}

Test(sim_profile, check_rejects_cache_smaller_than_a_sequence)
{
    struct sim_engine_params p;
    sim_engine_params_default(&p);
    p.kv_cache_tokens = 1000;
    char err[512];
    cr_expect_eq(sim_engine_params_check(&p, 32768, err, sizeof err), -1);
    cr_expect(strstr(err, "--kv-cache-tokens") != NULL);
    cr_expect_eq(sim_engine_params_check(&p, 512, err, sizeof err), 0);
}
