/* burst.c — finite request bursts per context and concurrency, their
 * seed-004 figures and JSON. */
#include "decode/burst.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/decode_matrix.h"
#include "core/clock.h"

int burst_config_from_run(struct burst_config *out, const struct run_config *base, const long *concurrency,
                          size_t n_concurrency, const long *contexts, size_t n_contexts, char *err,
                          size_t errlen)
{
    *out = (struct burst_config){.base = *base, .concurrency = concurrency, .n_concurrency = n_concurrency,
                                 .contexts = contexts, .n_contexts = n_contexts,
                                 .requests_per_concurrency = BURST_REQUESTS_PER_CONCURRENCY};
    if (!n_concurrency || !n_contexts) {
        snprintf(err, errlen, "burst: no %s given", n_concurrency ? "context" : "concurrency");
        return -1;
    }
    for (size_t i = 0; i < n_concurrency; i++)
        if (concurrency[i] < 1) {
            snprintf(err, errlen, "burst: concurrency %ld: expected at least 1", concurrency[i]);
            return -1;
        }
    for (size_t i = 0; i < n_contexts; i++)
        if (contexts[i] < 0) {
            snprintf(err, errlen, "burst: context %ld: expected at least 0 tokens", contexts[i]);
            return -1;
        }
    return 0;
}

/* ---- per cell ---- */

int burst_cell_aggregate(struct burst_cell *c)
{
    if (decode_sample_stats_of(c->samples, c->n_samples, &c->stats) != 0)
        return -1;
    c->aggregate_tps = c->measurement_s > 0 ? (double)c->client_output_tokens / c->measurement_s : NAN;
    c->per_request_avg_tps = c->concurrency > 0 ? c->aggregate_tps / (double)c->concurrency : NAN;
    return 0;
}

/* The cell's samples, counts and figures from a finished run. */
static int cell_of_run(struct burst_cell *c, const struct run_result *r)
{
    c->sent = r->summarized && r->summary.sent > 0;
    if (run_stalled_text(r, c->error, sizeof c->error))  /* a burst cut by a stopped server is none */
        return 0;
    if (!r->summarized) {
        snprintf(c->error, sizeof c->error, "%s", r->error[0] ? r->error : "nothing was measured");
        return 0;
    }
    const struct run_summary *s = &r->summary;
    c->request_count = s->sent;
    c->completed_request_count = c->num_completed = s->completed;
    c->num_errors = s->failed;
    c->measurement_s = c->measurement_wall_s = s->duration_ms / 1000;
    if (!(c->samples = calloc(s->completed ? (size_t)s->completed : 1, sizeof *c->samples)))
        return -1;
    bool usage = true;
    for (int i = 0; i < r->n_records; i++) {
        const struct req_record *rec = &r->records[i];
        if (!rec->t_start || rec->fail != FAIL_NONE || rec->cut || c->n_samples >= (size_t)s->completed)
            continue;
        struct decode_request_sample *x = &c->samples[c->n_samples++];
        decode_sample_of(rec, x);
        c->client_output_tokens += x->output_tokens;
        usage &= rec->completion_tokens >= 0;
    }
    c->total_tokens = c->client_output_tokens;
    c->aggregate_source = usage ? "openai_usage" : "client_chunks";
    if (s->failed > 0 || s->completed == 0)
        run_failures_text(r, c->error, sizeof c->error);
    return burst_cell_aggregate(c);
}

static const char *dir_of(const struct burst_config *c)
{
    return c->out_dir ? c->out_dir : c->base.out.dir ? c->base.out.dir : "results";
}

/* One burst at context tokens and concurrency conc into cell. */
static int measure(const struct burst_config *c, long tokens, long conc, struct burst_cell *cell)
{
    *cell = (struct burst_cell){.concurrency = conc, .context_tokens = tokens,
                                .request_count_target = c->request_count > 0 ? c->request_count
                                                                              : conc * c->requests_per_concurrency,
                                .warmup_request_count = c->warmup_requests, .aggregate_source = "openai_usage",
                                .measurement_s = NAN, .measurement_wall_s = NAN};
    snprintf(cell->artifact_path, sizeof cell->artifact_path, "%s/burst-%ld-c%ld.json", dir_of(c), tokens, conc);
    struct run_config rc = c->base;
    rc.workload.input_len = tokens;
    rc.load.concurrency = conc;
    rc.load.num_prompts = cell->request_count_target;
    rc.load.warmup = c->warmup_requests;
    rc.load.request_rate = INFINITY;
    rc.load.duration_s = rc.load.warmup_s = 0;
    rc.workload.dataset = NULL;
    rc.workload.multi_turn = false;
    rc.workload.agentic_file = NULL;
    rc.workload.agentic_sessions = 0;
    rc.workload.shared_prefix_len = 0;
    rc.workload.prefix_hit_rate = 0;
    rc.workload.input_range = rc.workload.output_range = 0;
    rc.workload.trace_speed = rc.workload.trace_start_s = rc.workload.trace_duration_s = 0;
    rc.out.path = cell->artifact_path;
    rc.keep_records = true;     /* the burst's figures walk them */
    struct run_result r;
    int64_t t0 = clock_now_ns();
    cell->status = run_execute(&rc, &r);
    cell->wall_time_s = (double)(clock_now_ns() - t0) / 1e9;
    int rcode = cell_of_run(cell, &r);
    cell->observe = r.observe;  /* the cell keeps the report */
    r.observe = NULL;
    run_result_free(&r);
    return rcode;
}

int burst_run(const struct burst_config *c, struct burst_result *out)
{
    size_t n = c->n_contexts * c->n_concurrency;
    *out = (struct burst_result){.cells = calloc(n ? n : 1, sizeof *out->cells)};
    if (!out->cells)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < c->n_contexts; i++)
        for (size_t j = 0; j < c->n_concurrency; j++) {
            struct burst_cell *cell = &out->cells[out->n++];
            if (measure(c, c->contexts[i], c->concurrency[j], cell) != 0) {
                burst_result_free(out);
                return -1;
            }
            if (cell->status != RUN_OK || cell->num_errors || cell->num_completed < cell->request_count_target)
                rc = -1;
        }
    return rc;
}

/* ---- the artifact's entries ---- */

int burst_cell_typed(const struct burst_cell *c, struct decode_cell *o)
{
    *o = (struct decode_cell){
        .concurrency = c->concurrency, .context_tokens = c->context_tokens,
        .benchmark_mode = decode_text("burst"), .request_count_target = c->request_count_target,
        .warmup_request_count = c->warmup_request_count, .measurement_seconds = c->measurement_s,
        .measurement_wall_seconds = c->measurement_wall_s, .client_output_tokens = c->client_output_tokens,
        .server_output_tokens = ARTIFACT_NONE,
        .aggregate_source = decode_text(c->aggregate_source ? c->aggregate_source : "openai_usage"),
        .aggregate_tps = c->aggregate_tps, .per_request_avg_tps = c->per_request_avg_tps,
        .request_count = c->request_count, .completed_request_count = c->completed_request_count,
        .total_tokens = c->total_tokens, .num_completed = c->num_completed, .num_errors = c->num_errors,
        .wall_time = c->wall_time_s,
        .request_samples = c->n_samples ? malloc(c->n_samples * sizeof *c->samples) : NULL,
        .n_request_samples = c->n_samples,
    };
    decode_sample_stats_put(&c->stats, o);
    if (!o->benchmark_mode || !o->aggregate_source || (c->n_samples && !o->request_samples)) {
        o->n_request_samples = 0;
        decode_cell_free(o);
        return -1;
    }
    if (c->n_samples)
        memcpy(o->request_samples, c->samples, c->n_samples * sizeof *c->samples);
    return 0;
}

int burst_methodology(bool ran, struct decode_method *out)
{
    *out = (struct decode_method){
        .present_obj = true, .name = decode_text("Burst / E2E Decode"), .present = ran,
        .status = decode_text(ran ? "measured" : "not run; use --run-burst"),
        .formula = decode_text("sum(completion_tokens) / profiling_wall_time"),
        .notes = decode_text("Finite client-facing request burst using OpenAI stream usage. It includes request "
                             "admission, scheduling, prefill/cache behavior, and completion."),
    };
    if (!out->name || !out->status || !out->formula || !out->notes) {
        fields_free(&decode_method_table, out);
        return -1;
    }
    return 0;
}

/* ---- freeing ---- */

void burst_cell_free(struct burst_cell *c)
{
    free(c->samples);
    if (c->observe) {
        observe_report_free(c->observe);
        free(c->observe);
    }
    c->samples = NULL;
    c->n_samples = 0;
    c->observe = NULL;
}

void burst_result_free(struct burst_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        burst_cell_free(&r->cells[i]);
    free(r->cells);
    *r = (struct burst_result){0};
}
