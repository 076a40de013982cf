/* test_burst.c — finite bursts per context and concurrency
 * (decode/burst.h) against `anvil sim`: every request of every burst sent
 * at its concurrency and completed, Σ completion tokens over the profiling
 * wall time, the samples' figures from the requests' own times, context 0
 * as a minimal prompt, and the seed-shaped results and summary table. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "decode/burst.h"
#include "harness.h"

/* What a burst test runs: these concurrencies at these contexts, 2
 * requests per concurrency of output_len tokens each; no_calib sends no
 * calibration probe (for a simulator that refuses every POST). */
struct burst_case {
    const long *conc, *ctx;
    size_t n_conc, n_ctx;
    long output_len;
    bool no_calib;
};

/* A burst's results[] entry as the artifact writes it. */
static cJSON *cell_json(const struct burst_cell *x)
{
    struct decode_cell c;
    cr_assert_eq(burst_cell_typed(x, &c), 0);
    cJSON *j = decode_cell_json(&c, true);
    decode_cell_free(&c);
    return j;
}

/* Runs k against a simulator started with sim_args, writing into dir;
 * fills *r (the caller frees it). Returns burst_run's status. */
static int burst_against(const char *const sim_args[], const struct burst_case *k, const char *dir,
                         struct burst_result *r)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    struct run_config base;
    run_config_defaults(&base);
    base.transport.base_url = sim.base_url;
    base.workload.output_len = k->output_len;
    base.observe.telemetry = OBS_MODE_OFF;
    if (k->no_calib)
        base.workload.calib = CALIB_NONE;
    base.log = tmpfile();
    struct burst_config c;
    char err[256];
    cr_assert_eq(burst_config_from_run(&c, &base, k->conc, k->n_conc, k->ctx, k->n_ctx, err, sizeof err), 0, "%s",
                 err);
    c.requests_per_concurrency = 2;
    c.out_dir = dir;
    int rc = burst_run(&c, r);
    cr_assert_eq(sim_stop(&sim), 0);
    fclose(base.log);
    return rc;
}

static void remove_dir(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(burst_e2e, bursts_per_context_and_concurrency, .timeout = 60)
{
    char dir[] = "/tmp/anvil-burst-XXXXXX", trace[64];
    cr_assert(mkdtemp(dir));
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", "--trace", trace, NULL};
    const long conc[] = {1, 2}, ctx[] = {0, 64};
    struct burst_result r;
    int rc = burst_against(sim_args, &(struct burst_case){conc, ctx, 2, 2, 8, false}, dir, &r);
    cr_assert_eq(rc, 0, "%s", r.n ? r.cells[0].error : "");
    cr_assert_eq(r.n, 4);
    for (size_t i = 0; i < r.n; i++) {
        const struct burst_cell *x = &r.cells[i];
        cr_assert_eq(x->context_tokens, ctx[i / 2]);
        cr_assert_eq(x->concurrency, conc[i % 2]);
        cr_assert_eq(x->request_count_target, 2 * x->concurrency);
        cr_assert_eq(x->request_count, x->request_count_target);
        cr_assert_eq(x->num_completed, x->request_count, "%s", x->error);
        cr_assert_eq(x->client_output_tokens, 8 * x->request_count);
        cr_assert_str_eq(x->aggregate_source, "openai_usage");
        cr_assert_eq(x->aggregate_tps, (double)x->client_output_tokens / x->measurement_s);
        cr_assert_eq(x->n_samples, (size_t)x->request_count);
        cr_assert_gt(x->wall_time_s, x->measurement_s, "the run took longer than its burst");
        for (size_t k = 0; k < x->n_samples; k++) {
            const struct decode_request_sample *s = &x->samples[k];
            cr_assert(s->completed && s->output_tokens == 8);
            cr_assert(s->ttft > 0 && s->latency > s->ttft);
            cr_assert_eq(s->output_tps_per_user, 7 / (s->latency - s->ttft));
            cr_assert_eq(s->e2e_output_tps_per_user, 8 / s->latency);
            if (x->context_tokens == 64)
                cr_assert_leq(labs(s->input_tokens - 64), 4, "%ld", s->input_tokens);
            else
                cr_assert_lt(s->input_tokens, 32, "a minimal prompt: %ld tokens", s->input_tokens);
        }
        cr_assert(access(x->artifact_path, F_OK) == 0, "%s", x->artifact_path);
    }
    struct decode_matrix m = {.burst_results = calloc(r.n, sizeof *m.burst_results)};
    for (size_t i = 0; i < r.n; i++)
        if (r.cells[i].sent)
            cr_assert_eq(burst_cell_typed(&r.cells[i], &m.burst_results[m.n_burst_results++]), 0);
    cr_assert_eq(decode_matrix_summarize(&m), 0);
    cJSON *doc = decode_matrix_to_json(&m);
    decode_matrix_free(&m);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "burst_results")), 4);
    const cJSON *row = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "burst_summary_table"), "64");
    cr_assert_eq(cJSON_GetObjectItem(row, "2")->valuedouble, r.cells[3].aggregate_tps);
    cJSON_Delete(doc);
    burst_result_free(&r);
    /* the server saw 2 + 4 requests per context, no more */
    cJSON *lines[64];
    int n = harness_read_jsonl(trace, lines, 64), measured = 0;
    for (int i = 0; i < n; i++) {
        measured += cJSON_IsString(cJSON_GetObjectItem(lines[i], "request_id"));
        cJSON_Delete(lines[i]);
    }
    cr_assert_eq(measured, 12);
    unlink(trace);
    remove_dir(dir);
}

/* A burst whose requests all fail is recorded, not lost: sent, every
 * request an error, the first one's cause in the cell's error, the cell
 * rendered with its zero tokens and null where there is no figure (as a
 * decode cell). */
Test(burst_e2e, a_failing_burst_says_why, .timeout = 30)
{
    char dir[] = "/tmp/anvil-burst-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", "--fail-rate", "1", "--fail-status", "500", NULL};
    const long conc[] = {1}, ctx[] = {16};
    struct burst_result r;      /* the simulator refuses every POST, calibration probes too */
    cr_assert_eq(burst_against(sim_args, &(struct burst_case){conc, ctx, 1, 1, 4, true}, dir, &r), -1);
    cr_assert_eq(r.n, 1);
    const struct burst_cell *x = &r.cells[0];
    cr_assert(x->sent);
    cr_assert_eq(x->num_errors, 2);
    cr_assert_eq(x->num_completed, 0);
    cr_assert(strstr(x->error, "2 of 2 requests failed (first: http"), "%s", x->error);
    cJSON *j = cell_json(x);
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "aggregate_tps")));
    cr_assert_eq(cJSON_GetObjectItem(j, "aggregate_tps")->valuedouble, 0);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "ttft_avg")), "no sample: no TTFT, never 0");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "request_samples")), 0);
    cJSON_Delete(j);
    burst_result_free(&r);
    remove_dir(dir);
}

/* A burst's TTFT is the decode cells' (decode/sample.h): send → first
 * content, not → first output. With 3 reasoning tokens streamed before the
 * content, each request_samples[].ttft is the run artifact's ttft_ms of the
 * same request (first content), which lies past its
 * time_to_first_output_ms (the reasoning). */
Test(burst_e2e, ttft_counts_to_the_first_content_not_the_reasoning, .timeout = 30)
{
    char dir[] = "/tmp/anvil-burst-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *sim_args[] = {"--ttft-ms", "2", "--itl-ms", "5", "--reasoning-tokens", "3", NULL};
    const long conc[] = {1}, ctx[] = {16};
    struct burst_result r;
    int rc = burst_against(sim_args, &(struct burst_case){conc, ctx, 1, 1, 8, false}, dir, &r);
    cr_assert_eq(rc, 0, "%s", r.n ? r.cells[0].error : "");
    cJSON *cell = cell_json(&r.cells[0]), *run = harness_load_json(r.cells[0].artifact_path);
    cr_assert(cell && run, "%s", r.cells[0].artifact_path);
    const cJSON *samples = cJSON_GetObjectItem(cell, "request_samples");
    const cJSON *timings = cJSON_GetObjectItem(run, "request_timings");
    cr_assert_eq(cJSON_GetArraySize(samples), 2);
    cr_assert_eq(cJSON_GetArraySize(timings), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *s = cJSON_GetArrayItem(samples, i), *t = cJSON_GetArrayItem(timings, i);
        double ttft_ms = harness_num(s, "ttft") * 1000;
        double content_ms = harness_num(t, "ttft_ms"), output_ms = harness_num(t, "time_to_first_output_ms");
        cr_assert_gt(content_ms, output_ms, "request %d: the reasoning came first", i);
        cr_expect_leq(fabs(ttft_ms - content_ms), 1e-6, "request %d: TTFT %.6f ms, first content at %.6f ms, "
                      "first output (reasoning) at %.6f ms", i, ttft_ms, content_ms, output_ms);
    }
    cJSON_Delete(cell);
    cJSON_Delete(run);
    burst_result_free(&r);
    remove_dir(dir);
}
