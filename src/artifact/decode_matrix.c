/* decode_matrix.c — the checked reader of seed 004's decode matrix. */
#include "artifact/decode_matrix.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"

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
