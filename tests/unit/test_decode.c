/* test_decode.c — the decode matrix's pure parts against seed 004's own
 * numbers: per-user rates, the cell statistics over its request samples,
 * engine steps and steps/s, the grid (lists, order, timeouts), the
 * readiness gate's stability rule, the P2P override reader, and the
 * writer's cell and prefill objects read back by the reader. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact/decode_matrix.h"
#include "artifact/fields.h"
#include "artifact/json.h"
#include "decode/cell.h"
#include "decode/diag.h"
#include "decode/gate.h"
#include "decode/grid.h"
#include "decode/sample.h"
#include "fields_sample.h"
#include "testutil.h"

static cJSON *seed(void)
{
    char *text = tu_read_file("tests/data/seed-004.json", NULL);
    cr_assert(text, "tests/data/seed-004.json");
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert(j);
    return j;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    cr_assert(cJSON_IsNumber(v), "%s", k);
    return v->valuedouble;
}

static void near(double got, double want, const char *what)
{
    cr_expect(fabs(got - want) <= 1e-9 * fmax(1, fabs(want)), "%s: %.17g, seed %.17g", what, got, want);
}

/* Per request, with n output tokens, TTFT t and latency L (s):
 * output_tps_per_user = (n − 1) / (L − t), inter_token_latency_avg =
 * (L − t) / (n − 1), e2e_output_tps_per_user = n / L, for every completed
 * sample of the seed. */
Test(decode_unit, output_tps_per_user_is_n_minus_1_over_latency_minus_ttft_in_the_seed)
{
    cJSON *j = seed();
    int checked = 0;
    const cJSON *cell, *s;
    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(j, "results")) {
        cJSON_ArrayForEach(s, cJSON_GetObjectItem(cell, "request_samples")) {
            if (!cJSON_IsTrue(cJSON_GetObjectItem(s, "completed")))
                continue;
            long n = (long)num(s, "output_tokens");
            near(decode_output_tps_per_user(n, num(s, "ttft"), num(s, "latency")), num(s, "output_tps_per_user"),
                 "output_tps_per_user");
            near(decode_inter_token_latency(n, num(s, "ttft"), num(s, "latency")),
                 num(s, "inter_token_latency_avg"), "inter_token_latency_avg");
            near((double)n / num(s, "latency"), num(s, "e2e_output_tps_per_user"), "e2e_output_tps_per_user");
            checked++;
        }
    }
    cr_expect_eq(checked, 26, "every completed sample of the seed's six cells");
    cr_expect(isnan(decode_output_tps_per_user(1, 0.1, 0.2)), "one token has no decode rate");
    cr_expect(isnan(decode_inter_token_latency(1, 0.1, 0.2)), "one token has no inter-token latency");
    cJSON_Delete(j);
}

/* One figure's values over a cell's samples (completed only when asked). */
static size_t values(const cJSON *cell, const char *k, bool completed_only, double *v)
{
    size_t n = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(cell, "request_samples")) {
        if (!completed_only || cJSON_IsTrue(cJSON_GetObjectItem(s, "completed")))
            v[n++] = num(s, k);
    }
    return n;
}

/* A reasoning stream: 3 reasoning tokens at 10, 20, 30 ms, then 7 content
 * tokens to 100 ms (10 in usage). TTFT is the first content (40 ms); the
 * per-user rate and ITL count the 10 tokens from the first output (10 ms):
 * (10 − 1) / 0.09 s. From the first content they read 10 tokens over 60 ms,
 * 1.5× too fast (as they did before). */
Test(decode_unit, a_reasoning_streams_decode_rate_counts_from_its_first_output)
{
    struct out_chunk ch[10];
    for (int i = 0; i < 10; i++)
        ch[i] = (struct out_chunk){.t_ns = (int64_t)(i + 1) * 10000000, .tokens = 1, .content = i >= 3};
    struct req_record r = {.t_start = 1, .t_first_output = ch[0].t_ns, .t_first_content = ch[3].t_ns,
                           .t_end = ch[9].t_ns, .completion_tokens = 10, .prompt_tokens = 16, .done_seen = true,
                           .chunks = ch, .n_chunks = 10, .fail = FAIL_NONE};
    struct decode_request_sample x;
    decode_sample_of(&r, &x);
    cr_assert_float_eq(x.ttft, 0.04, 1e-6);
    cr_assert_float_eq(x.output_tps_per_user, 9 / 0.09, 1e-3, "%g", x.output_tps_per_user);
    cr_assert_float_eq(x.inter_token_latency_avg, 0.01, 1e-6, "%g", x.inter_token_latency_avg);
}

Test(decode_unit, cell_statistics_reproduce_the_seed_from_its_samples)
{
    cJSON *j = seed();
    const struct { const char *sample, *cell; bool completed; } f[] = {
        {"ttft", "ttft", false}, {"time_to_second_token", "time_to_second_token", false},
        {"latency", "request_latency", true}, {"inter_token_latency_avg", "inter_token_latency", false},
        {"output_tps_per_user", "output_tps_per_user", false},
        {"e2e_output_tps_per_user", "e2e_output_tps_per_user", true},
        {"chunk_inter_token_latency_avg", "chunk_inter_token_latency", false},
    };
    const cJSON *cell;
    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(j, "results")) {
        for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
            double v[64];
            size_t n = values(cell, f[i].sample, f[i].completed, v);
            struct decode_stat4 st;
            decode_stat4_of(v, n, &st);
            char k[96];
            snprintf(k, sizeof k, "%s_avg", f[i].cell);
            near(st.avg, num(cell, k), k);
            snprintf(k, sizeof k, "%s_p50", f[i].cell);
            near(st.p50, num(cell, k), k);
            snprintf(k, sizeof k, "%s_p90", f[i].cell);
            near(st.p90, num(cell, k), k);
            snprintf(k, sizeof k, "%s_p99", f[i].cell);
            near(st.p99, num(cell, k), k);
        }
    }
    cJSON_Delete(j);
}

Test(decode_unit, engine_steps_and_steps_per_s_follow_the_seed_formula)
{
    cJSON *j = seed();
    int checked = 0;
    const cJSON *cell;
    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(j, "results")) {
        if (num(cell, "server_spec_drafts") == 0)
            continue;   /* the seed's empty window: no steps */
        double steps, len, sps;
        decode_engine_steps(num(cell, "server_output_tokens"), num(cell, "server_spec_drafts"),
                            num(cell, "server_spec_accepted_tokens"), num(cell, "aggregate_tps"), &steps, &len, &sps);
        near(steps, num(cell, "server_engine_steps"), "server_engine_steps");
        near(len, num(cell, "server_accept_len_effective"), "server_accept_len_effective");
        near(sps, num(cell, "server_steps_per_s"), "server_steps_per_s");
        checked++;
    }
    cr_expect_eq(checked, 5);
    cJSON_Delete(j);
}

Test(decode_unit, size_lists_take_k_and_refuse_what_is_not_a_list)
{
    long v[DECODE_MAX_LIST];
    char err[300];
    cr_assert_eq(decode_parse_sizes("0,8k,64k", 0, v, DECODE_MAX_LIST, err, sizeof err), 3);
    cr_expect_eq(v[0], 0);
    cr_expect_eq(v[1], 8192);
    cr_expect_eq(v[2], 65536);
    const char *bad[] = {"", "1,,2", "1,1", "-1", "8m", "1,", "k"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_expect_eq(decode_parse_sizes(bad[i], 0, v, DECODE_MAX_LIST, err, sizeof err), -1, "%s", bad[i]);
    cr_expect_eq(decode_parse_sizes("0,1", 1, v, DECODE_MAX_LIST, err, sizeof err), -1, "below the minimum");
    cr_expect(strstr(err, "below 1"), "%s", err);
    char label[32];
    decode_size_label(65536, label, sizeof label);
    cr_expect_str_eq(label, "64k");
    decode_size_label(1000, label, sizeof label);
    cr_expect_str_eq(label, "1000");
}

Test(decode_unit, cells_run_in_the_seeds_order)
{
    /* seed 004's event log: C=1 ctx=0, C=1 ctx=64k, C=2 ctx=0, C=4 ctx=0, C=2 ctx=64k, C=4 ctx=64k */
    long conc[] = {4, 1, 2}, ctx[] = {65536, 0};
    struct decode_cell_ref o[6];
    cr_assert_eq(decode_cell_order(conc, 3, ctx, 2, o), 6);
    const long want[6][2] = {{1, 0}, {1, 65536}, {2, 0}, {4, 0}, {2, 65536}, {4, 65536}};
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(conc[o[i].conc_i], want[i][0], "cell %d", i);
        cr_expect_eq(ctx[o[i].ctx_i], want[i][1], "cell %d", i);
    }
}

Test(decode_unit, warmup_timeout_policy_by_context)
{
    cr_expect_eq(decode_warmup_timeout_s(0, 0), 60);
    cr_expect_eq(decode_warmup_timeout_s(32768, 0), 60);
    cr_expect_eq(decode_warmup_timeout_s(65536, 0), 120);
    cr_expect_eq(decode_warmup_timeout_s(131072, 0), 180);
    cr_expect_eq(decode_warmup_timeout_s(131072, 7.5), 7.5);
    cr_expect_eq(decode_prompt_len(65536, 1024), 64512);
    cr_expect_eq(decode_prompt_len(0, 1024), 0, "context 0: anvil run's minimal prompt (--input-len 0)");
    cr_expect_eq(decode_prompt_len(512, 1024), 0);
}

Test(decode_unit, client_gate_opens_only_after_the_condition_held_stable)
{
    struct decode_gate g;
    decode_gate_init(&g, 2, 0.5, NULL, NULL);
    const int64_t s = 1000000000;
    struct driver_gate dg = {.now = 10 * s, .in_flight = 2, .decoding = 1};
    cr_expect_not(decode_gate_ready(&g, &dg), "one stream still in prefill");
    dg.decoding = 2;
    cr_expect_not(decode_gate_ready(&g, &dg), "met, not yet stable");
    dg.now += s / 4;
    cr_expect_not(decode_gate_ready(&g, &dg));
    dg.now += s / 10;
    dg.decoding = 1;     /* a stream ended and its replacement is in prefill: the clock restarts */
    cr_expect_not(decode_gate_ready(&g, &dg));
    dg.decoding = 2;
    dg.now += s / 10;
    cr_expect_not(decode_gate_ready(&g, &dg));
    dg.now += s / 2;
    cr_expect(decode_gate_ready(&g, &dg));
    cr_expect(g.opened);
    cr_expect(strstr(g.ready_reason, "active_streams=2/2, decoding_streams=2/2, stable=0.5s"), "%s", g.ready_reason);
    cr_expect_geq(g.n_trace, 4);
    decode_gate_free(&g);
}

Test(decode_unit, server_gate_wants_c_running_and_none_queued)
{
    struct decode_gate g;
    decode_gate_init(&g, 2, 0, "http://127.0.0.1:1/metrics", NULL);
    struct driver_gate dg = {.now = 1, .in_flight = 2, .decoding = 2};
    cr_expect_not(decode_gate_ready(&g, &dg), "no scrape yet");
    g.running = 1;
    g.queued = 1;
    cr_expect_not(decode_gate_ready(&g, &dg), "the client's streams do not count when the server queues");
    cr_expect(strstr(g.last, "running_reqs=1/2, queue_reqs=1"), "%s", g.last);
    g.running = 2;
    g.queued = 0;
    cr_expect(decode_gate_ready(&g, &dg));
    decode_gate_free(&g);
}

Test(decode_unit, p2p_override_reads_the_driver_params_or_says_unavailable)
{
    char params[] = "/tmp/anvil-p2p-XXXXXX";
    int fd = mkstemp(params);
    cr_assert_geq(fd, 0);
    const char *text = "ResmanDebugLevel: 4294967295\nRegistryDwords: \"ForceP2P=0x11;RMForceP2PType=1;"
                       "RMPcieP2PType=2;GrdmaPciTopoCheckOverride=1;EnableResizableBar=1;DmaRemapPeerMmio=1\"\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct decode_diag_paths p = {.params = params, .modprobe = "/nonexistent/modprobe.conf"};
    struct decode_p2p o;
    cr_assert_eq(decode_p2p_override(&p, &o), 0);
    cr_expect(o.effective);
    cr_expect_not(o.configured);
    cr_expect_not(o.modprobe_available);
    cr_expect_str_eq(decode_strmap_get(&o.runtime, "DmaRemapPeerMmio"), "1");
    cr_expect_eq(o.n_missing, 0);
    decode_p2p_free(&o);
    unlink(params);
    p.params = "/nonexistent/params";
    cr_assert_eq(decode_p2p_override(&p, &o), 0);
    cr_expect_not(o.params_available);
    cr_expect_not(o.effective);
    cr_expect_eq(o.runtime.n, 0, "nothing read, nothing reported");
    cr_expect_eq(o.n_missing, 5);
    cJSON *j = fields_to_json(&decode_p2p_table, &o);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "missing")), 5);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "expected")), 5);
    cJSON_Delete(j);
    decode_p2p_free(&o);
}

Test(decode_unit, a_missing_program_is_returncode_minus_1_with_the_reason)
{
    const char *argv[] = {"/nonexistent/nvidia-smi", "topo", "-m", NULL};
    struct decode_capture o;
    cr_assert_eq(decode_run_capture(argv, &o), 0);
    cr_expect_eq(o.returncode, -1);
    cr_expect(strstr(o.err, "No such file"), "%s", o.err);
    cr_expect_eq(o.n_cmd, 3);
    cJSON *j = fields_to_json(&decode_capture_table, &o);
    cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "returncode")), -1, "written -1, not null");
    cJSON_Delete(j);
    decode_capture_free(&o);
    const char *echo[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    cr_assert_eq(decode_run_capture(echo, &o), 0);
    cr_expect_eq(o.returncode, 3);
    cr_expect_str_eq(o.out, "out\n");
    cr_expect_str_eq(o.err, "err\n");
    decode_capture_free(&o);
}

Test(decode_unit, written_cells_read_back)
{
    struct decode_request_sample s = {.ttft = 0.1, .latency = 1.1, .input_tokens = 10, .output_tokens = 101,
                                      .output_tps_per_user = 100, .completed = true};
    struct decode_matrix w = {0};
    fields_free(&decode_metadata_table, &w.metadata);   /* every number none */
    w.metadata.present = true;
    w.metadata.decode_mode = decode_text("duration");
    w.n_results = 1;
    w.results = calloc(1, sizeof *w.results);
    struct decode_cell *c = &w.results[0];
    decode_cell_init(c);
    c->concurrency = 2;
    c->context_tokens = 8192;
    c->aggregate_source = decode_text("openai_continuous_usage");
    c->aggregate_tps = 200;
    c->request_samples = malloc(sizeof s);
    *c->request_samples = s;
    c->n_request_samples = 1;
    c->capacity_limited = true;
    c->avg_running_reqs = 1.5;
    char err[300];
    struct prefill_entry p;
    cr_assert_eq(prefill_scout_entry(8192, 2, 8000, NULL, PREFILL_METRIC_CLIENT, &p, err, sizeof err), 0, "%s", err);
    w.prefill.v = calloc(1, sizeof *w.prefill.v);
    cr_assert_eq(prefill_entry_typed(&p, &w.prefill.v[0]), 0);
    w.prefill.n = 1;
    cJSON *doc = decode_matrix_to_json(&w);
    struct decode_matrix m;
    cr_assert_eq(decode_matrix_from_json(doc, "t", &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m.results[0].concurrency, 2);
    cr_expect_eq(m.results[0].aggregate_tps, 200);
    cr_expect(m.results[0].capacity_limited);
    cr_expect_eq(m.results[0].avg_running_reqs, 1.5);
    cr_expect_eq(m.results[0].request_samples[0].output_tokens, 101);
    cr_expect_eq(m.prefill.v[0].context_tokens, 8192);
    cr_expect_eq(m.prefill.v[0].tok_per_sec, 4000);
    decode_matrix_free(&m);
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "results"), 0);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(r0, "server_spec_drafts")), "unknown is null, never 0");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(r0, "hardware_summary")));
    const cJSON *p0 = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "prefill"), "8192");
    cr_expect(cJSON_IsObject(cJSON_GetObjectItem(p0, "hardware_summary")), "no reading: {} as the seed's");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p0, "hardware_summary")), 0);
    cJSON_Delete(doc);
    decode_matrix_free(&w);
    prefill_entry_free(&p);
}

/* Every table of the decode matrix survives a generated round trip: a
 * field the writer or the reader skipped would fail it. */
Test(decode_unit, every_decode_matrix_table_round_trips)
{
    const struct field_table *t[] = {
        &decode_matrix_table, &decode_cell_table, &decode_burst_cell_table, &decode_prefill_table,
        &decode_prefill_check_table, &decode_hw_table, &decode_sample_table, &decode_gate_point_table,
        &decode_metadata_table, &decode_diag_table, &decode_args_table, &decode_p2p_table, &decode_not_run_table,
        &decode_capture_table, &decode_method_table, &decode_methodology_table,
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char why[256] = "";
        cr_expect(fields_sample_round_trip(t[i], why, sizeof why), "%s: %s", t[i]->name, why);
    }
}

/* Seed 004 reads with the checked reader, and what the writer makes of it
 * holds every key path of the seed (the custom rows too: prefill keyed by
 * context, summary tables, lists and maps) and reads back the same. */
static void key_paths(const cJSON *j, const char *prefix, cJSON *out)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, j) {
        char p[512];
        bool digits = e->string && strspn(e->string, "0123456789") == strlen(e->string);
        snprintf(p, sizeof p, "%s.%s", prefix, !e->string ? "[]" : digits ? "N" : e->string);
        if (!cJSON_GetObjectItemCaseSensitive(out, p))
            cJSON_AddTrueToObject(out, p);
        if (cJSON_IsObject(e) || cJSON_IsArray(e))
            key_paths(e, p, out);
    }
}

Test(decode_unit, seed_004_reads_and_rewrites_with_every_key_path)
{
    cJSON *j = seed();
    struct decode_matrix m;
    char err[300];
    cr_assert_eq(decode_matrix_from_json(j, "seed-004.json", &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m.n_results, 6);
    cr_expect_eq(m.prefill.n, 2);
    cr_expect_eq(m.prefill.v[1].context_tokens, 65536);
    cr_expect_eq(m.metadata.context_lengths.n, 2);
    cr_expect_eq(m.summary_table.n, 6);
    cJSON *back = decode_matrix_to_json(&m);
    cJSON *want = cJSON_CreateObject(), *got = cJSON_CreateObject();
    key_paths(j, "", want);
    key_paths(back, "", got);
    const cJSON *k;
    cJSON_ArrayForEach(k, want)
        cr_expect(cJSON_GetObjectItemCaseSensitive(got, k->string), "the rewrite lacks %s", k->string);
    struct decode_matrix m2;
    cr_assert_eq(decode_matrix_from_json(back, "rewrite", &m2, err, sizeof err), 0, "%s", err);
    cJSON *again = decode_matrix_to_json(&m2);
    cr_expect(cJSON_Compare(back, again, true), "written, read and written again: the same");
    cJSON_Delete(again);
    cJSON_Delete(want);
    cJSON_Delete(got);
    cJSON_Delete(back);
    decode_matrix_free(&m2);
    decode_matrix_free(&m);
    cJSON_Delete(j);
}

/* Seed 004 writes its counters as whole numbers; the figures derived from
 * them must follow from the numbers written (server_engine_steps = drafts
 * + max(0, out − (accepted + drafts))), not from the unrounded window
 * deltas the server's interpolated counters give (174.67 steps). */
Test(decode_unit, counters_are_rounded_before_steps_are_derived)
{
    static struct observe_report obs;
    obs.server_enabled = true;
    obs.server.available = true;
    obs.server.server_output_tokens = 400.4;
    obs.server.delta[SV_SPEC_DRAFTS] = 100.33;
    obs.server.delta[SV_SPEC_DRAFT_TOKENS] = 300.6;
    obs.server.delta[SV_SPEC_ACCEPTED] = 125.34;
    struct decode_cell c;
    decode_cell_init(&c);
    c.client_output_tokens = 390;
    c.aggregate_tps = 200;
    decode_server_figures(&obs, 0, &c);
    cr_expect_eq(c.server_output_tokens, 400);
    cr_expect_eq(c.server_spec_drafts, 100);
    cr_expect_eq(c.server_spec_draft_tokens, 301);
    cr_expect_eq(c.server_spec_accepted_tokens, 125);
    double steps = 100 + fmax(0, 400 - (125 + 100));
    cr_expect_eq(c.server_engine_steps, steps, "steps %g, from the written counters %g", c.server_engine_steps, steps);
    cr_expect_eq(c.server_engine_steps, floor(c.server_engine_steps), "whole counters give whole steps");
    cr_expect_float_eq(c.server_accept_len_effective, 400 / steps, 1e-12);
    cr_expect_float_eq(c.server_steps_per_s, 200 / (400 / steps), 1e-9);
    decode_cell_free(&c);
}

/* The gate's scrapes at 0..4 s (each 10 ms long): prefills counted 3, 3, 3, 4 (+0.5 s), 6; prompt tokens
 * 1000, 1000, 3000 (the scout's 2000 arrive between 1 and 2 s), 3000, 9000; prefix hits 0 throughout. */
static void scout_gate(struct decode_gate *g)
{
    decode_gate_init(g, 1, 0, "http://127.0.0.1:1/metrics", NULL);
    const double count[] = {3, 3, 3, 4, 6}, sum[] = {1, 1, 1, 1.5, 2.5}, prompt[] = {1000, 1000, 3000, 3000, 9000};
    const int64_t s = 1000000000;
    for (int i = 0; i < 5; i++)
        g->prefill[g->n_prefill++] = (struct decode_gate_prefill){i * s, i * s + s / 100, count[i], sum[i],
                                                                  prompt[i], 0};
}

/* The scout's entry as the matrix makes it: the gate's report, prefill_scout_entry. */
static void scout(const struct decode_gate *g, double t_start, double t_first, double t_end, long prompt,
                  struct prefill_entry *e)
{
    const int64_t s = 1000000000;
    static struct observe_report obs;
    char err[300];
    cr_assert_eq(decode_gate_scout_report(g, (int64_t)(t_start * s), (int64_t)(t_first * s), (int64_t)(t_end * s),
                                          &obs), 0);
    cr_assert_eq(prefill_scout_entry(2048, t_first - t_start, prompt, &obs, PREFILL_METRIC_CLIENT, e, err,
                                     sizeof err), 0, "%s", err);
}

Test(decode_unit, the_scouts_server_prefill_is_one_histogram_observation_between_two_readings)
{
    static struct decode_gate g;
    scout_gate(&g);
    struct prefill_entry e;
    /* sent at 1.02 s, first token at 1.5 s, end at 2.5 s: prompt counter between readings 1 and 2 (its 2000
     * tokens), the histogram between 1 and 3 (one prefill of 0.5 s) */
    scout(&g, 1.02, 1.5, 2.5, 2000, &e);
    cr_expect_str_eq(e.server.invalid_reason, "");
    cr_expect_str_eq(e.server.method, "prometheus:kv_computed");
    cr_expect_eq(e.server.prefill_seconds, 0.5);
    cr_expect_eq(e.server.tok_per_sec, 4000);
    cr_expect_eq(e.server.samples, 1);
    cr_expect_str_eq(e.server.token_source, "prompt_tokens_counter");
    /* sent with the first scrape (0.005 s): no reading before it, no counter figure: the request's usage */
    scout(&g, 0.005, 1.5, 2.5, 2000, &e);
    cr_expect_str_eq(e.server.invalid_reason, "");
    cr_expect_str_eq(e.server.token_source, "request_usage");
    cr_expect_eq(e.server.tok_per_sec, 4000);
    /* end at 3.5 s: readings 1 and 4: three prefills, another request's among them */
    scout(&g, 1.02, 1.5, 3.5, 2000, &e);
    cr_expect(strstr(e.server.invalid_reason, "other traffic: the server's histogram counted 3 requests"), "%s",
              e.server.invalid_reason);
    cr_expect_eq(e.server.prefill_seconds, 0, "no figure when not valid (the seed's 0)");
    /* the prompt counter moved by another request's tokens too */
    scout(&g, 1.02, 1.5, 2.5, 500, &e);
    cr_expect(strstr(e.server.invalid_reason, "prompt-token counter moved by 2000, the requests reported 500"), "%s",
              e.server.invalid_reason);
    /* no reading after the end; the scout cut by the window */
    scout(&g, 1.02, 1.5, 4.5, 2000, &e);
    cr_expect(strstr(e.server.invalid_reason, "no /metrics reading after"), "%s", e.server.invalid_reason);
    const int64_t s = 1000000000;
    static struct observe_report obs;
    cr_assert_eq(decode_gate_scout_report(&g, s, 3 * s / 2, 0, &obs), 0);
    cr_expect(!obs.server.available && strstr(obs.server.reason, "did not finish"), "cut: %s", obs.server.reason);
    decode_gate_free(&g);
    /* without server metrics the gate has no report: the entry says not measured */
    static struct decode_gate off;
    decode_gate_init(&off, 1, 0, NULL, NULL);
    cr_expect_eq(decode_gate_scout_report(&off, s, 3 * s / 2, 2 * s, &obs), -1);
    decode_gate_free(&off);
}

/* A resumed run reads a cell file through the checked reader: what was
 * written reads back (its scout keyed by the cell's context), a file kept
 * at its fallback is found and moved into place, and a damaged one is
 * named by file and key path (the cell is then measured again). */
Test(decode_unit, cell_files_read_back_through_the_checked_reader)
{
    char dir[] = "/tmp/anvil-cellfile-XXXXXX", path[128], fb[256], err[600];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c2-ctx8192.json", dir);
    struct decode_cell c, got;
    struct decode_prefill scout = {0}, got_scout;
    decode_cell_init(&c);
    c.concurrency = 2;
    c.context_tokens = 8192;
    c.aggregate_tps = 123.5;
    c.server_spec_drafts = 17;
    struct prefill_entry p;
    cr_assert_eq(prefill_scout_entry(8192, 2, 8000, NULL, PREFILL_METRIC_CLIENT, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(prefill_entry_typed(&p, &scout), 0);
    scout.concurrent_streams = 1;
    cr_assert_eq(decode_cell_file_read(path, &got, &got_scout, err, sizeof err), 1, "no file yet");
    cr_assert_eq(decode_cell_file_write(path, &c, &scout, err, sizeof err), 0, "%s", err);
    cr_assert_eq(decode_cell_file_read(path, &got, &got_scout, err, sizeof err), 0, "%s", err);
    cr_expect_eq(got.aggregate_tps, 123.5);
    cr_expect_eq(got.server_spec_drafts, 17);
    cr_expect(got_scout.present);
    cr_expect_eq(got_scout.context_tokens, 8192);
    cr_expect_eq(got_scout.concurrent_streams, 1);
    cr_expect_not(got_scout.hardware_summary.present, "{} reads as no reading");
    decode_cell_free(&got);
    decode_prefill_free(&got_scout);
    artifact_fallback_path(path, fb, sizeof fb);
    cr_assert_eq(rename(path, fb), 0);
    cr_assert_eq(decode_cell_file_read(path, &got, &got_scout, err, sizeof err), 0, "%s", err);
    cr_expect_eq(access(path, F_OK), 0, "moved back into place");
    decode_cell_free(&got);
    decode_prefill_free(&got_scout);
    FILE *f = fopen(path, "w");
    fputs("{\"result\": {\"concurrency\": 2, \"context_tokens\": 8192, \"aggregate_tps\": \"fast\"}, \"scout\": null}", f);
    fclose(f);
    cr_assert_eq(decode_cell_file_read(path, &got, &got_scout, err, sizeof err), -1);
    cr_expect(strstr(err, path) && strstr(err, "result.aggregate_tps"), "%s", err);
    unlink(path);
    rmdir(dir);
    decode_cell_free(&c);
    decode_prefill_free(&scout);
    prefill_entry_free(&p);
}

/* Hostile decode matrices are refused and named, never read past: a row
 * of summary_table that is not an object (its items have no key: a NULL
 * key crashed the reader), a number row, and a list of concurrency levels
 * past what a long holds (a cast to long that is undefined). */
Test(decode_unit, hostile_tables_and_lists_are_refused_by_name)
{
    struct {
        const char *key, *value, *want;
    } cases[] = {
        {"summary_table", "{\"0\": [1, 2]}", "summary_table.0: expected an object of tok/s by concurrency"},
        {"summary_table", "{\"0\": 5}", "summary_table.0: expected an object of tok/s by concurrency"},
        {"summary_table", "{\"0\": {\"x\": 5}}", "expected a concurrency as the key"},
        {"burst_summary_table", "{\"0\": [1]}", "burst_summary_table.0: expected an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *j = seed();
        cJSON_ReplaceItemInObject(j, cases[i].key, cJSON_Parse(cases[i].value));
        struct decode_matrix m;
        char err[512];
        cr_assert_eq(decode_matrix_from_json(j, "d.json", &m, err, sizeof err), -1, "%s", cases[i].value);
        cr_assert(strstr(err, cases[i].want), "want '%s' in: %s", cases[i].want, err);
        cJSON_Delete(j);
    }
    const char *levels[] = {"[1, 1e300]", "[1, -2]", "[1.5]"};
    for (size_t i = 0; i < 3; i++) {
        cJSON *j = seed();
        cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "metadata"), "concurrency_levels", cJSON_Parse(levels[i]));
        struct decode_matrix m;
        char err[512];
        cr_assert_eq(decode_matrix_from_json(j, "d.json", &m, err, sizeof err), -1, "%s", levels[i]);
        cr_assert(strstr(err, "metadata.concurrency_levels["), "%s", err);
        cJSON_Delete(j);
    }
}
