/* html_decode.c — a decode matrix for the report (see html_parts.h): the
 * matrix's facts, its contexts and concurrencies, every cell's figures
 * and marks, its bursts, prefill entries and event log, as decode.js draws
 * them. Units as the artifact's (seconds, tokens, tokens/s). */
#include "report/html_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact/json.h"

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The distinct contexts (ctx true) or concurrencies of the n cells c,
 * sorted, as a JSON array. */
static cJSON *axis(const struct decode_cell *c, size_t n, bool ctx)
{
    long *u = malloc((n ? n : 1) * sizeof *u);
    cJSON *a = cJSON_CreateArray();
    if (!u)
        return a;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        long v = ctx ? c[i].context_tokens : c[i].concurrency;
        size_t j = 0;
        while (j < k && u[j] != v)
            j++;
        if (j == k)
            u[k++] = v;
    }
    qsort(u, k, sizeof *u, cmp_long);
    for (size_t j = 0; j < k; j++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)u[j]));
    free(u);
    return a;
}

static void add_whole(cJSON *o, const char *k, long v)
{
    if (v == ARTIFACT_NONE)
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, (double)v);
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    if (v && *v)
        cJSON_AddStringToObject(o, k, v);
}

/* One cell: where it is, what the client and the server measured, and
 * why it is marked. */
static cJSON *cell_json(const struct decode_cell *e, const struct cost *cost)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ctx", (double)e->context_tokens);
    cJSON_AddNumberToObject(o, "conc", (double)e->concurrency);
    html_add_num(o, "tps", e->aggregate_tps);
    html_add_num(o, "per_req_tps", e->per_request_avg_tps);
    html_add_num(o, "ttft_p50", e->ttft.p50);
    html_add_num(o, "ttft_p99", e->ttft.p99);
    html_add_num(o, "itl_p50", e->inter_token_latency.p50);
    html_add_num(o, "itl_p99", e->inter_token_latency.p99);
    html_add_num(o, "accept_len", e->server_spec_accept_length);
    html_add_num(o, "accept_eff", e->server_accept_len_effective);
    html_add_num(o, "steps_s", e->server_steps_per_s);
    if (cost)
        html_add_num(o, "cost", cost_per_mtok(cost, e->aggregate_tps));
    add_whole(o, "eff_conc", e->effective_concurrency);
    add_whole(o, "completed", e->completed_request_count);
    add_whole(o, "errors", e->num_errors);
    cJSON_AddBoolToObject(o, "capacity_limited", e->capacity_limited);
    cJSON_AddBoolToObject(o, "underfilled", e->underfilled);
    cJSON_AddBoolToObject(o, "timed_out", e->warmup_timed_out);
    add_str(o, "capacity_reason", e->capacity_reason);
    add_str(o, "timeout_reason", e->timeout_reason);
    return o;
}

/* One prefill entry: the client's rate and, where the server's histogram
 * validated it, the server's. */
static cJSON *prefill_json(const struct decode_prefill *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ctx", (double)p->context_tokens);
    add_whole(o, "prompt_tokens", p->prompt_tokens);
    add_whole(o, "samples", p->samples);
    html_add_num(o, "ttft", p->ttft_seconds);
    html_add_num(o, "tok_s", p->tok_per_sec);
    const struct decode_prefill_check *v = &p->server_validation;
    /* the seed's convention: 0 and an empty method when the server did not validate it */
    bool valid = v->method && *v->method && !(v->invalid_reason && *v->invalid_reason) && v->tok_per_sec > 0;
    html_add_num(o, "server_tok_s", valid ? v->tok_per_sec : NAN);
    add_str(o, "server_method", valid ? v->method : NULL);
    add_str(o, "invalid_reason", v->invalid_reason);
    add_str(o, "method", p->method);
    return o;
}

static void facts(cJSON *o, const struct decode_metadata *m)
{
    add_str(o, "engine", m->engine);
    add_str(o, "model", m->model);
    add_str(o, "server", m->server);
    add_str(o, "mode", m->decode_mode);
    html_add_num(o, "window_s", m->duration_per_test);
    add_whole(o, "max_tokens", m->max_tokens);
    html_add_num(o, "kv_tokens", m->max_total_tokens);
    add_whole(o, "cells_planned", m->cells_planned);
    add_whole(o, "cells_done", m->cells_done);
    if (m->incomplete)
        cJSON_AddStringToObject(o, "incomplete", m->incomplete_reason ? m->incomplete_reason : "no reason given");
}

cJSON *html_decode(const struct artifact_any *a, const struct cost *cost)
{
    const struct decode_matrix *m = &a->u.decode;
    const struct cost *priced = cost && isfinite(cost->gpu_hour_usd) ? cost : NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", html_base_name(a->path));
    facts(o, &m->metadata);
    cJSON_AddBoolToObject(o, "priced", priced != NULL);
    cJSON_AddItemToObject(o, "contexts", axis(m->results, m->n_results, true));
    cJSON_AddItemToObject(o, "concurrency", axis(m->results, m->n_results, false));
    cJSON *cells = cJSON_AddArrayToObject(o, "cells"), *bursts = cJSON_AddArrayToObject(o, "bursts");
    for (size_t i = 0; i < m->n_results; i++)
        cJSON_AddItemToArray(cells, cell_json(&m->results[i], priced));
    for (size_t i = 0; i < m->n_burst_results; i++)
        cJSON_AddItemToArray(bursts, cell_json(&m->burst_results[i], NULL));
    cJSON *pre = cJSON_AddArrayToObject(o, "prefill");
    for (size_t i = 0; i < m->prefill.n; i++)
        if (m->prefill.v[i].present)
            cJSON_AddItemToArray(pre, prefill_json(&m->prefill.v[i]));
    cJSON_AddItemToObject(o, "events", html_strings((const char *const *)m->event_log, m->n_event_log));
    return o;
}
