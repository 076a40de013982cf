/* burst.c — finite request bursts per context and concurrency, their
 * seed-004 figures and JSON. */
#include "decode/burst.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "stats/dist.h"
#include "stats/metrics.h"

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

/* ---- per request ---- */

void burst_sample_figures(struct burst_sample *s)
{
    double n = (double)s->output_tokens, gen = s->latency_s - s->ttft_s;
    bool spans = s->completed && n > 1 && gen > 0;
    s->inter_token_latency_avg_s = spans ? gen / (n - 1) : NAN;
    s->output_tps_per_user = spans ? (n - 1) / gen : NAN;
    s->e2e_output_tps_per_user = s->completed && s->latency_s > 0 && n > 0 ? n / s->latency_s : NAN;
}

static double since(int64_t from, int64_t to)
{
    return from && to ? (double)(to - from) / 1e9 : NAN;
}

void burst_sample_of(const struct req_record *r, struct burst_sample *out)
{
    struct req_metrics m;
    metrics_derive(r, &m);
    *out = (struct burst_sample){
        .ttft_s = since(r->t_start, r->t_first_output), .latency_s = since(r->t_start, r->t_end),
        .time_to_second_token_s = r->n_chunks >= 2 ? since(r->chunks[0].t_ns, r->chunks[1].t_ns) : NAN,
        .chunk_inter_token_latency_avg_s = r->n_chunks >= 2
            ? since(r->chunks[0].t_ns, r->chunks[r->n_chunks - 1].t_ns) / (double)(r->n_chunks - 1) : NAN,
        .input_tokens = r->prompt_tokens, .output_tokens = m.output_tokens, .completed = true,
    };
    burst_sample_figures(out);
}

/* ---- per cell ---- */

/* Which figure of a sample a stat is over, and whether only completed
 * samples count. */
static double sample_value(const struct burst_sample *s, int k)
{
    switch (k) {
    case 0: return s->ttft_s;
    case 1: return s->time_to_second_token_s;
    case 2: return s->completed ? s->latency_s : NAN;
    case 3: return s->inter_token_latency_avg_s;
    case 4: return s->output_tps_per_user;
    case 5: return s->completed ? s->e2e_output_tps_per_user : NAN;
    case 6: return s->chunk_inter_token_latency_avg_s;
    case 7: return s->completed ? (double)s->output_tokens : NAN;
    default: return s->input_tokens >= 0 ? (double)s->input_tokens : NAN;
    }
}

/* The stats of the cell in sample_value's order. */
static struct burst_stat *stat_of(struct burst_cell *c, int k)
{
    struct burst_stat *v[] = {&c->ttft, &c->time_to_second_token, &c->request_latency, &c->inter_token_latency,
                              &c->output_tps_per_user, &c->e2e_output_tps_per_user, &c->chunk_inter_token_latency,
                              &c->output_seq_len};
    return v[k];
}

int burst_cell_aggregate(struct burst_cell *c)
{
    double *v = malloc((c->n_samples ? c->n_samples : 1) * sizeof *v);
    if (!v)
        return -1;
    for (int k = 0; k < 9; k++) {
        for (size_t i = 0; i < c->n_samples; i++)
            v[i] = sample_value(&c->samples[i], k);
        struct dist d;
        dist_compute(v, c->n_samples, PCT_LINEAR, &d);  /* the seed's percentiles: numpy's default */
        if (k == 8) {
            c->input_seq_len_avg = d.mean;
            break;
        }
        *stat_of(c, k) = (struct burst_stat){d.mean, d.p50, d.p90, d.p99};
    }
    free(v);
    c->aggregate_tps = c->measurement_s > 0 ? (double)c->client_output_tokens / c->measurement_s : NAN;
    c->per_request_avg_tps = c->concurrency > 0 ? c->aggregate_tps / (double)c->concurrency : NAN;
    return 0;
}

/* The cell's samples, counts and figures from a finished run. */
static int cell_of_run(struct burst_cell *c, const struct run_result *r)
{
    c->sent = r->summarized && r->summary.sent > 0;
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
        struct burst_sample *x = &c->samples[c->n_samples++];
        burst_sample_of(rec, x);
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
    return c->out_dir ? c->out_dir : c->base.out_dir ? c->base.out_dir : "results";
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
    rc.input_len = tokens;
    rc.concurrency = conc;
    rc.num_prompts = cell->request_count_target;
    rc.warmup = c->warmup_requests;
    rc.request_rate = INFINITY;
    rc.duration_s = rc.warmup_s = 0;
    rc.dataset = NULL;
    rc.multi_turn = false;
    rc.agentic_file = NULL;
    rc.agentic_sessions = 0;
    rc.shared_prefix_len = 0;
    rc.prefix_hit_rate = 0;
    rc.input_range = rc.output_range = 0;
    rc.trace_speed = rc.trace_start_s = rc.trace_duration_s = 0;
    rc.out = cell->artifact_path;
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

/* ---- JSON ---- */

/* A finite number, else 0 (seed 004 writes 0 where there is no figure). */
static double fig(double v)
{
    return isfinite(v) ? v : 0;
}

static void add_stat(cJSON *o, const char *name, const struct burst_stat *s, bool all)
{
    static const char *const suffix[] = {"avg", "p50", "p90", "p99"};
    const double v[] = {s->avg, s->p50, s->p90, s->p99};
    for (int i = 0; i < (all ? 4 : 1); i++) {
        char key[96];
        snprintf(key, sizeof key, "%s_%s", name, suffix[i]);
        cJSON_AddNumberToObject(o, key, fig(v[i]));
    }
}

static cJSON *sample_json(const struct burst_sample *s)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddNumberToObject(j, "ttft", fig(s->ttft_s));
    cJSON_AddNumberToObject(j, "time_to_second_token", fig(s->time_to_second_token_s));
    cJSON_AddNumberToObject(j, "latency", s->completed ? fig(s->latency_s) : 0);
    cJSON_AddNumberToObject(j, "inter_token_latency_avg", fig(s->inter_token_latency_avg_s));
    cJSON_AddNumberToObject(j, "chunk_inter_token_latency_avg", fig(s->chunk_inter_token_latency_avg_s));
    cJSON_AddNumberToObject(j, "input_tokens", s->input_tokens >= 0 ? (double)s->input_tokens : 0);
    cJSON_AddNumberToObject(j, "output_tokens", (double)s->output_tokens);
    cJSON_AddNumberToObject(j, "output_tps_per_user", fig(s->output_tps_per_user));
    cJSON_AddNumberToObject(j, "e2e_output_tps_per_user", fig(s->e2e_output_tps_per_user));
    if (!cJSON_AddBoolToObject(j, "completed", s->completed)) {    /* out of memory */
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

cJSON *burst_cell_json(const struct burst_cell *c)
{
    cJSON *j = cJSON_CreateObject(), *samples = cJSON_CreateArray();
    bool ok = j && samples;
    for (size_t i = 0; ok && i < c->n_samples; i++) {
        cJSON *s = sample_json(&c->samples[i]);
        ok = s && cJSON_AddItemToArray(samples, s);
        if (!ok)
            cJSON_Delete(s);
    }
    if (!ok) {
        cJSON_Delete(samples);
        cJSON_Delete(j);
        return NULL;
    }
    cJSON_AddNumberToObject(j, "concurrency", (double)c->concurrency);
    cJSON_AddNumberToObject(j, "context_tokens", (double)c->context_tokens);
    cJSON_AddStringToObject(j, "benchmark_mode", "burst");
    cJSON_AddNumberToObject(j, "request_count_target", (double)c->request_count_target);
    cJSON_AddNumberToObject(j, "warmup_request_count", (double)c->warmup_request_count);
    cJSON_AddNumberToObject(j, "measurement_seconds", fig(c->measurement_s));
    cJSON_AddNumberToObject(j, "measurement_wall_seconds", fig(c->measurement_wall_s));
    cJSON_AddNumberToObject(j, "client_output_tokens", (double)c->client_output_tokens);
    cJSON_AddStringToObject(j, "aggregate_source", c->aggregate_source ? c->aggregate_source : "openai_usage");
    cJSON_AddNumberToObject(j, "aggregate_tps", fig(c->aggregate_tps));
    cJSON_AddNumberToObject(j, "per_request_avg_tps", fig(c->per_request_avg_tps));
    add_stat(j, "ttft", &c->ttft, true);
    add_stat(j, "time_to_second_token", &c->time_to_second_token, true);
    add_stat(j, "request_latency", &c->request_latency, true);
    add_stat(j, "inter_token_latency", &c->inter_token_latency, true);
    add_stat(j, "output_tps_per_user", &c->output_tps_per_user, true);
    add_stat(j, "e2e_output_tps_per_user", &c->e2e_output_tps_per_user, true);
    add_stat(j, "chunk_inter_token_latency", &c->chunk_inter_token_latency, true);
    cJSON_AddNumberToObject(j, "input_seq_len_avg", fig(c->input_seq_len_avg));
    add_stat(j, "output_seq_len", &c->output_seq_len, true);
    cJSON_AddNumberToObject(j, "request_count", (double)c->request_count);
    cJSON_AddNumberToObject(j, "completed_request_count", (double)c->completed_request_count);
    if (!cJSON_AddItemToObject(j, "request_samples", samples))
        cJSON_Delete(samples);
    cJSON_AddNumberToObject(j, "total_tokens", (double)c->total_tokens);
    cJSON_AddNumberToObject(j, "wall_time", fig(c->wall_time_s));
    cJSON_AddNumberToObject(j, "num_completed", (double)c->num_completed);
    cJSON_AddNumberToObject(j, "num_errors", (double)c->num_errors);
    if (!cJSON_GetObjectItem(j, "num_errors")) {    /* cJSON could not allocate one of them */
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

/* The row of context tokens in the summary table, added when new. */
static cJSON *table_row(cJSON *table, long tokens)
{
    char key[32];
    snprintf(key, sizeof key, "%ld", tokens);
    cJSON *row = cJSON_GetObjectItemCaseSensitive(table, key);
    return row ? row : cJSON_AddObjectToObject(table, key);
}

int burst_add_json(cJSON *doc, const struct burst_cell *cells, size_t n)
{
    cJSON *results = cJSON_AddArrayToObject(doc, "burst_results");
    cJSON *table = cJSON_AddObjectToObject(doc, "burst_summary_table");
    if (!results || !table)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!cells[i].sent)
            continue;
        cJSON *c = burst_cell_json(&cells[i]), *row = table_row(table, cells[i].context_tokens);
        char key[32];
        snprintf(key, sizeof key, "%ld", cells[i].concurrency);
        if (!c || !cJSON_AddItemToArray(results, c) || !row ||
            !cJSON_AddNumberToObject(row, key, fig(cells[i].aggregate_tps))) {
            cJSON_Delete(c);
            return -1;
        }
    }
    return 0;
}

cJSON *burst_methodology_json(bool ran)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "name", "Burst / E2E Decode");
    cJSON_AddBoolToObject(j, "present", ran);
    cJSON_AddStringToObject(j, "status", ran ? "measured" : "not run; use --run-burst");
    cJSON_AddStringToObject(j, "formula", "sum(completion_tokens) / profiling_wall_time");
    cJSON_AddStringToObject(j, "notes", "Finite client-facing request burst using OpenAI stream usage. It includes "
                            "request admission, scheduling, prefill/cache behavior, and completion.");
    if (!cJSON_GetObjectItem(j, "notes")) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
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
