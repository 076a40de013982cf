/* decode_matrix.c — the checked reader of seed 004's decode matrix. */
#include "artifact/decode_matrix.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"
#include "artifact/observe.h"

bool decode_matrix_is(const cJSON *j)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
    return cJSON_IsObject(j) && cJSON_IsObject(meta)
           && cJSON_GetObjectItemCaseSensitive(meta, "decode_mode")
           && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "results"));
}

static void read_cell(struct jread *r, const cJSON *o, struct decode_cell *c)
{
    const unsigned opt = JR_OPTIONAL;
    jread_whole(r, o, "concurrency", 0, 0, &c->concurrency);
    jread_whole(r, o, "context_tokens", 0, 0, &c->context_tokens);
    jread_number(r, o, "aggregate_tps", 0, &c->aggregate_tps);
    jread_number(r, o, "measurement_seconds", opt, &c->measurement_s);
    jread_number(r, o, "per_request_avg_tps", opt, &c->per_request_avg_tps);
    jread_number(r, o, "ttft_p50", opt, &c->ttft_p50_s);
    jread_number(r, o, "ttft_p99", opt, &c->ttft_p99_s);
    jread_number(r, o, "inter_token_latency_p50", opt, &c->itl_p50_s);
    jread_number(r, o, "inter_token_latency_p99", opt, &c->itl_p99_s);
    jread_number(r, o, "avg_running_reqs", opt, &c->avg_running_reqs);
    jread_number(r, o, "server_spec_accept_length", opt, &c->spec_accept_length);
    jread_whole(r, o, "completed_request_count", opt | JR_NULLABLE, 0, &c->completed);
    jread_whole(r, o, "request_count", opt | JR_NULLABLE, 0, &c->requests);
    jread_whole(r, o, "num_errors", opt | JR_NULLABLE, 0, &c->errors);
    jread_bool(r, o, "underfilled", opt, &c->underfilled);
    jread_bool(r, o, "warmup_timed_out", JR_OPTIONAL, &c->warmup_timed_out);
    jread_bool(r, o, "capacity_limited", opt, &c->capacity_limited);
}

/* A prefill key: a context length in tokens, written as a decimal string. */
static int context_key(struct jread *r, const char *k, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(k, &end, 10);
    if (errno || end == k || *end || v < 0)
        return jread_fail(r, k, "expected a context length in tokens as the key");
    *out = v;
    return 0;
}

static void read_prefill(struct jread *r, const cJSON *pre, struct decode_matrix *m)
{
    int n = cJSON_GetArraySize(pre);
    m->prefill = calloc(n ? (size_t)n : 1, sizeof *m->prefill);
    if (!m->prefill) {
        jread_fail(r, "prefill", "out of memory");
        return;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, pre) {
        struct decode_prefill *p = &m->prefill[m->n_prefill++];
        p->prompt_tokens = ARTIFACT_NONE;
        if (context_key(r, e->string, &p->context_tokens) != 0)
            return;
        if (!cJSON_IsObject(e)) {
            jread_fail(r, e->string, "expected an object");
            return;
        }
        size_t mark = jread_enter(r, e->string);
        jread_number(r, e, "ttft_seconds", JR_OPTIONAL, &p->ttft_s);
        jread_number(r, e, "tok_per_sec", JR_OPTIONAL, &p->tok_per_sec);
        jread_whole(r, e, "prompt_tokens", JR_OPTIONAL | JR_NULLABLE, 0, &p->prompt_tokens);
        jread_string(r, e, "method", JR_OPTIONAL | JR_NULLABLE, &p->method);
        jread_leave(r, mark);
    }
}

/* jread_each's reader of the results (ctx: the decode matrix). */
static void read_cell_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct decode_matrix *m = ctx;
    read_cell(r, o, &m->cells[i]);
    m->n_cells++;
}

int decode_matrix_from_json(const cJSON *j, const char *name, struct decode_matrix *out, char *err,
                            size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    *out = (struct decode_matrix){.duration_per_test_s = NAN, .max_tokens = ARTIFACT_NONE};
    if (!cJSON_IsObject(j)) {
        jread_fail(&r, NULL, "expected a JSON object");
        return -1;
    }
    const cJSON *meta = jread_object(&r, j, "metadata", 0);
    if (meta) {
        size_t mark = jread_enter(&r, "metadata");
        const unsigned opt = JR_OPTIONAL | JR_NULLABLE;
        jread_string(&r, meta, "decode_mode", JR_NONEMPTY, &out->decode_mode);
        jread_string(&r, meta, "engine", opt, &out->engine);
        jread_string(&r, meta, "model", opt, &out->model);
        jread_string(&r, meta, "server", opt, &out->server);
        jread_string(&r, meta, "timestamp", opt, &out->timestamp);
        jread_number(&r, meta, "duration_per_test", JR_OPTIONAL, &out->duration_per_test_s);
        jread_whole(&r, meta, "max_tokens", opt, 1, &out->max_tokens);
        jread_leave(&r, mark);
    }
    const cJSON *res = jread_array(&r, j, "results", 0);
    int n = res ? cJSON_GetArraySize(res) : 0;
    if (res && n == 0)
        jread_fail(&r, "results", "expected at least one cell");
    if (!r.failed && !(out->cells = calloc((size_t)n, sizeof *out->cells)))
        jread_fail(&r, "results", "out of memory");
    jread_each(&r, "results", res, read_cell_at, out);
    const cJSON *pre = jread_object(&r, j, "prefill", JR_OPTIONAL | JR_NULLABLE);
    if (pre && !r.failed) {
        size_t mark = jread_enter(&r, "prefill");
        read_prefill(&r, pre, out);
        jread_leave(&r, mark);
    }
    if (r.failed) {
        decode_matrix_free(out);
        return -1;
    }
    return 0;
}

void decode_matrix_free(struct decode_matrix *m)
{
    free(m->engine);
    free(m->model);
    free(m->server);
    free(m->timestamp);
    free(m->decode_mode);
    free(m->cells);
    for (size_t i = 0; i < m->n_prefill; i++)
        free(m->prefill[i].method);
    free(m->prefill);
    *m = (struct decode_matrix){.duration_per_test_s = NAN, .max_tokens = ARTIFACT_NONE};
}

/* ---- writing ---- */

static void add_stat4(cJSON *o, const char *name, const struct decode_stat4 *s)
{
    char k[96];
    const struct { const char *suf; double v; } f[] = {
        {"avg", s->avg}, {"p50", s->p50}, {"p90", s->p90}, {"p99", s->p99},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        snprintf(k, sizeof k, "%s_%s", name, f[i].suf);
        artifact_add_number(o, k, f[i].v);
    }
}

/* A count the server reports as a float counter: whole when finite, else null. */
static void add_count(cJSON *o, const char *k, double v)
{
    artifact_add_whole(o, k, isfinite(v) ? (long)llround(v) : ARTIFACT_NONE);
}

static cJSON *sample_json(const struct decode_request_sample *s)
{
    cJSON *o = cJSON_CreateObject();
    artifact_add_number(o, "ttft", s->ttft);
    artifact_add_number(o, "time_to_second_token", s->time_to_second_token);
    artifact_add_number(o, "latency", s->latency);
    artifact_add_number(o, "inter_token_latency_avg", s->inter_token_latency_avg);
    artifact_add_number(o, "chunk_inter_token_latency_avg", s->chunk_inter_token_latency_avg);
    artifact_add_whole(o, "input_tokens", s->input_tokens);
    artifact_add_whole(o, "output_tokens", s->output_tokens);
    artifact_add_number(o, "output_tps_per_user", s->output_tps_per_user);
    artifact_add_number(o, "e2e_output_tps_per_user", s->e2e_output_tps_per_user);
    cJSON_AddBoolToObject(o, "completed", s->completed);
    return o;
}

static void add_server_fields(cJSON *o, const struct decode_cell_out *c)
{
    artifact_add_number(o, "server_gen_throughput", c->server_gen_throughput);
    artifact_add_number(o, "server_utilization", c->server_utilization);
    artifact_add_number(o, "server_spec_accept_rate", c->server_spec_accept_rate);
    artifact_add_number(o, "server_spec_accept_length", c->server_spec_accept_length);
    add_count(o, "server_spec_drafts", c->server_spec_drafts);
    add_count(o, "server_spec_draft_tokens", c->server_spec_draft_tokens);
    add_count(o, "server_spec_accepted_tokens", c->server_spec_accepted_tokens);
    cJSON *pos = cJSON_AddArrayToObject(o, "server_spec_pos_accept");
    for (int i = 0; pos && i < c->n_pos_accept; i++)
        cJSON_AddItemToArray(pos, isfinite(c->pos_accept[i]) ? cJSON_CreateNumber(c->pos_accept[i])
                                                              : cJSON_CreateNull());
    artifact_add_number(o, "server_engine_steps", c->server_engine_steps);
    artifact_add_number(o, "server_steps_per_s", c->server_steps_per_s);
    artifact_add_number(o, "server_accept_len_effective", c->server_accept_len_effective);
    artifact_add_number(o, "accept_norm_tps", c->accept_norm_tps);
    artifact_add_number(o, "accept_norm_ref_len", c->accept_norm_ref_len);
    artifact_add_number(o, "avg_running_reqs", c->avg_running_reqs);
    artifact_add_number(o, "max_running_reqs", c->max_running_reqs);
    artifact_add_whole(o, "effective_concurrency", c->effective_concurrency);
    artifact_add_number(o, "avg_queue_reqs", c->avg_queue_reqs);
    artifact_add_number(o, "max_queue_reqs", c->max_queue_reqs);
    artifact_add_number(o, "queue_fraction", c->queue_fraction);
}

cJSON *decode_cell_json(const struct decode_cell_out *c, const struct observe_report *obs)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    artifact_add_whole(o, "concurrency", c->concurrency);
    artifact_add_whole(o, "context_tokens", c->context_tokens);
    cJSON_AddStringToObject(o, "benchmark_mode", "duration");
    artifact_add_whole(o, "request_count_target", 0);
    artifact_add_whole(o, "warmup_request_count", c->warmup_request_count);
    artifact_add_number(o, "measurement_seconds", c->measurement_seconds);
    artifact_add_number(o, "measurement_wall_seconds", c->measurement_wall_seconds);
    artifact_add_whole(o, "client_output_tokens", c->client_output_tokens);
    add_count(o, "server_output_tokens", c->server_output_tokens);
    artifact_add_string(o, "aggregate_source", c->aggregate_source);
    artifact_add_number(o, "aggregate_tps", c->aggregate_tps);
    artifact_add_number(o, "per_request_avg_tps", c->per_request_avg_tps);
    add_stat4(o, "ttft", &c->ttft);
    add_stat4(o, "time_to_second_token", &c->time_to_second_token);
    add_stat4(o, "request_latency", &c->request_latency);
    add_stat4(o, "inter_token_latency", &c->inter_token_latency);
    add_stat4(o, "output_tps_per_user", &c->output_tps_per_user);
    add_stat4(o, "e2e_output_tps_per_user", &c->e2e_output_tps_per_user);
    add_stat4(o, "chunk_inter_token_latency", &c->chunk_inter_token_latency);
    artifact_add_number(o, "input_seq_len_avg", c->input_seq_len_avg);
    add_stat4(o, "output_seq_len", &c->output_seq_len);
    artifact_add_whole(o, "request_count", c->request_count);
    artifact_add_whole(o, "completed_request_count", c->completed_request_count);
    cJSON *rs = cJSON_AddArrayToObject(o, "request_samples");
    for (size_t i = 0; rs && i < c->n_samples; i++)
        cJSON_AddItemToArray(rs, sample_json(&c->samples[i]));
    artifact_add_whole(o, "total_tokens", c->total_tokens);
    artifact_add_number(o, "wall_time", c->wall_time);
    artifact_add_whole(o, "num_completed", c->num_completed);
    artifact_add_whole(o, "num_errors", c->num_errors);
    add_server_fields(o, c);
    cJSON_AddBoolToObject(o, "underfilled", c->underfilled);
    cJSON_AddBoolToObject(o, "warmup_timed_out", c->warmup_timed_out);
    artifact_add_number(o, "warmup_duration", c->warmup_duration);
    cJSON_AddStringToObject(o, "ready_reason", c->ready_reason ? c->ready_reason : "");
    cJSON_AddStringToObject(o, "timeout_reason", c->timeout_reason ? c->timeout_reason : "");
    cJSON_AddBoolToObject(o, "capacity_limited", c->capacity_limited);
    cJSON_AddStringToObject(o, "capacity_reason", c->capacity_reason ? c->capacity_reason : "");
    cJSON_AddItemToObject(o, "hardware_summary", obs ? artifact_hardware_run_summary(obs) : cJSON_CreateNull());
    return o;
}

int decode_matrix_write(const char *path, const cJSON *doc, char *err, size_t errlen)
{
    struct decode_matrix m;
    if (decode_matrix_from_json(doc, path, &m, err, errlen) != 0)
        return -1;
    decode_matrix_free(&m);
    return artifact_write_file(path, doc, err, errlen);
}
