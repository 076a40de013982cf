/* decode_matrix.c — seed 004's decode matrix: the field tables, the one
 * writer and the checked reader that walk them, and the run directory's
 * cell, prefill and burst caches. */
#include "artifact/decode_matrix.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact/json.h"
#include "core/file.h"
#include "core/redact.h"

char *decode_text(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* A row whose key is not the member's name. */
#define F_KEY(k, kind, T, m, R, W) {k, kind, offsetof(T, m), (R), (W), NULL, NULL, 0, 0, NULL, NULL}
#define OPT (JR_OPTIONAL | JR_NULLABLE)

/* ---- custom codecs: lists and maps no row kind fits ---- */

/* concurrency_levels, context_lengths: [N, ...] */
static void longs_write(cJSON *o, const char *key, const void *value)
{
    const struct decode_longs *l = value;
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; a && i < l->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)l->v[i]));
}

static void longs_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct decode_longs *l = value;
    const cJSON *a = jread_array(r, o, key, flags);
    size_t n = a ? (size_t)cJSON_GetArraySize(a) : 0;
    if (!n)
        return;
    if (!(l->v = calloc(n, sizeof *l->v))) {
        jread_fail(r, key, "out of memory");
        return;
    }
    size_t mark = jread_enter(r, key);
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        double d = cJSON_GetNumberValue(e);
        if (!cJSON_IsNumber(e) || d != floor(d) || d < 0 || d > 9007199254740992.0) {   /* 2^53: a long exactly */
            size_t m2 = jread_enter_index(r, (int)l->n);
            jread_fail(r, NULL, "expected a whole number from 0 to 2^53");
            jread_leave(r, m2);
            break;
        }
        l->v[l->n++] = (long)d;
    }
    jread_leave(r, mark);
}

static void longs_free(void *value)
{
    struct decode_longs *l = value;
    free(l->v);
    *l = (struct decode_longs){0};
}

static const struct field_codec longs_codec = {longs_write, longs_read, longs_free};

/* server_spec_pos_accept: [p, null, ...] */
static void pos_write(cJSON *o, const char *key, const void *value)
{
    const struct decode_pos_accept *p = value;
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int i = 0; a && i < p->n; i++)
        cJSON_AddItemToArray(a, isfinite(p->v[i]) ? cJSON_CreateNumber(p->v[i]) : cJSON_CreateNull());
}

static void pos_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct decode_pos_accept *p = value;
    const cJSON *a = jread_array(r, o, key, flags);
    const cJSON *e;
    size_t mark = jread_enter(r, key);
    cJSON_ArrayForEach(e, a) {
        if (p->n == SRV_MAX_POS)
            break;
        if (!cJSON_IsNumber(e) && !cJSON_IsNull(e)) {
            size_t m2 = jread_enter_index(r, p->n);
            jread_fail(r, NULL, "expected a number or null");
            jread_leave(r, m2);
            break;
        }
        p->v[p->n++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    }
    jread_leave(r, mark);
}

static const struct field_codec pos_codec = {pos_write, pos_read, NULL};

/* {"name": "value", ...} */
int decode_strmap_set(struct decode_strmap *m, const char *key, const char *value)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->key[i], key)) {
            char *v = strdup(value);
            if (!v)
                return -1;
            free(m->value[i]);
            m->value[i] = v;
            return 0;
        }
    char **k = realloc(m->key, (m->n + 1) * sizeof *k);
    if (k)
        m->key = k;
    char **v = realloc(m->value, (m->n + 1) * sizeof *v);
    if (v)
        m->value = v;
    char *ks = strdup(key), *vs = strdup(value);
    if (!k || !v || !ks || !vs) {
        free(ks);
        free(vs);
        return -1;
    }
    m->key[m->n] = ks;
    m->value[m->n++] = vs;
    return 0;
}

const char *decode_strmap_get(const struct decode_strmap *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->key[i], key))
            return m->value[i];
    return NULL;
}

static void strmap_write(cJSON *o, const char *key, const void *value)
{
    const struct decode_strmap *m = value;
    cJSON *j = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; j && i < m->n; i++)
        cJSON_AddStringToObject(j, m->key[i], m->value[i]);
}

static void strmap_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct decode_strmap *m = value;
    const cJSON *j = jread_object(r, o, key, flags), *e;
    size_t mark = jread_enter(r, key);
    cJSON_ArrayForEach(e, j) {
        if (!cJSON_IsString(e)) {
            jread_fail(r, e->string, "expected a string");
            break;
        }
        if (decode_strmap_set(m, e->string, e->valuestring) != 0) {
            jread_fail(r, e->string, "out of memory");
            break;
        }
    }
    jread_leave(r, mark);
}

static void strmap_free(void *value)
{
    struct decode_strmap *m = value;
    for (size_t i = 0; i < m->n; i++) {
        free(m->key[i]);
        free(m->value[i]);
    }
    free(m->key);
    free(m->value);
    *m = (struct decode_strmap){0};
}

static const struct field_codec strmap_codec = {strmap_write, strmap_read, strmap_free};

/* {"name": {"runtime": ..., "expected": ...}} */
static void mismatch_write(cJSON *o, const char *key, const void *value)
{
    const struct decode_mismatches *m = value;
    cJSON *j = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; j && i < m->n; i++) {
        cJSON *e = cJSON_AddObjectToObject(j, m->v[i].name);
        artifact_add_string(e, "runtime", m->v[i].runtime);
        artifact_add_string(e, "expected", m->v[i].expected);
    }
}

static void mismatch_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct decode_mismatches *m = value;
    const cJSON *j = jread_object(r, o, key, flags), *e;
    int n = j ? cJSON_GetArraySize(j) : 0;
    if (!n)
        return;
    if (!(m->v = calloc((size_t)n, sizeof *m->v))) {
        jread_fail(r, key, "out of memory");
        return;
    }
    size_t mark = jread_enter(r, key);
    cJSON_ArrayForEach(e, j) {
        struct decode_mismatch *x = &m->v[m->n++];
        if (!(x->name = strdup(e->string)) || !cJSON_IsObject(e)) {
            jread_fail(r, e->string, "expected an object");
            break;
        }
        size_t m2 = jread_enter(r, e->string);
        jread_string(r, e, "runtime", OPT, &x->runtime);
        jread_string(r, e, "expected", OPT, &x->expected);
        jread_leave(r, m2);
    }
    jread_leave(r, mark);
}

static void mismatch_free(void *value)
{
    struct decode_mismatches *m = value;
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].name);
        free(m->v[i].runtime);
        free(m->v[i].expected);
    }
    free(m->v);
    *m = (struct decode_mismatches){0};
}

static const struct field_codec mismatch_codec = {mismatch_write, mismatch_read, mismatch_free};

/* ---- hardware ---- */

#define HW_ROWS(T, W)                                                                                          \
    F_KEY("samples", FIELD_NUMBER, T, samples, OPT, W),                                                        \
    F_KEY("duration_seconds", FIELD_NUMBER, T, duration_seconds, OPT, W),                                      \
    F_KEY("gpu_count", FIELD_NUMBER, T, gpu_count, OPT, W),                                                    \
    F_KEY("cpu_util_avg_pct", FIELD_NUMBER, T, cpu_util_avg_pct, OPT, W),                                      \
    F_KEY("cpu_temp_max_c", FIELD_NUMBER, T, cpu_temp_max_c, OPT, W),                                          \
    F_KEY("gpu_util_avg_pct", FIELD_NUMBER, T, gpu_util_avg_pct, OPT, W),                                      \
    F_KEY("gpu_util_max_pct", FIELD_NUMBER, T, gpu_util_max_pct, OPT, W),                                      \
    F_KEY("mem_util_avg_pct", FIELD_NUMBER, T, mem_util_avg_pct, OPT, W),                                      \
    F_KEY("mem_util_max_pct", FIELD_NUMBER, T, mem_util_max_pct, OPT, W),                                      \
    F_KEY("temp_avg_c", FIELD_NUMBER, T, temp_avg_c, OPT, W),                                                  \
    F_KEY("temp_max_c", FIELD_NUMBER, T, temp_max_c, OPT, W),                                                  \
    F_KEY("power_total_avg_w", FIELD_NUMBER, T, power_total_avg_w, OPT, W),                                    \
    F_KEY("power_total_max_w", FIELD_NUMBER, T, power_total_max_w, OPT, W),                                    \
    F_KEY("power_limit_total_w", FIELD_NUMBER, T, power_limit_total_w, OPT, W),                                \
    F_KEY("vram_used_avg_mb", FIELD_NUMBER, T, vram_used_avg_mb, OPT, W),                                      \
    F_KEY("vram_used_max_mb", FIELD_NUMBER, T, vram_used_max_mb, OPT, W),                                      \
    F_KEY("vram_total_mb", FIELD_NUMBER, T, vram_total_mb, OPT, W),                                            \
    F_KEY("vram_used_avg_pct", FIELD_NUMBER, T, vram_used_avg_pct, OPT, W),                                    \
    F_KEY("vram_used_max_pct", FIELD_NUMBER, T, vram_used_max_pct, OPT, W),                                    \
    F_KEY("pcie_rx_avg_mb_s", FIELD_NUMBER, T, pcie_rx_avg_mb_s, OPT, W),                                      \
    F_KEY("pcie_rx_max_mb_s", FIELD_NUMBER, T, pcie_rx_max_mb_s, OPT, W),                                      \
    F_KEY("pcie_tx_avg_mb_s", FIELD_NUMBER, T, pcie_tx_avg_mb_s, OPT, W),                                      \
    F_KEY("pcie_tx_max_mb_s", FIELD_NUMBER, T, pcie_tx_max_mb_s, OPT, W)

static const struct field hw_rows[] = {HW_ROWS(struct decode_hw, 0)};
const struct field_table decode_hw_table = FIELD_TABLE("decode_hw", struct decode_hw, hw_rows, present);

void decode_hw_of(const struct observe_report *obs, struct decode_hw *out)
{
    *out = (struct decode_hw){0};
    if (!obs || !obs->hardware_enabled || !obs->hardware.available || obs->hardware.n_gpus == 0)
        return;
    const struct hw_run_summary *s = &obs->hardware.run;
    *out = (struct decode_hw){
        .present = true, .samples = s->samples, .duration_seconds = s->duration_seconds,
        .gpu_count = s->gpu_count, .cpu_util_avg_pct = s->cpu_util_avg_pct, .cpu_temp_max_c = s->cpu_temp_max_c,
        .gpu_util_avg_pct = s->gpu_util_avg_pct, .gpu_util_max_pct = s->gpu_util_max_pct,
        .mem_util_avg_pct = s->mem_util_avg_pct, .mem_util_max_pct = s->mem_util_max_pct,
        .temp_avg_c = s->temp_avg_c, .temp_max_c = s->temp_max_c, .power_total_avg_w = s->power_total_avg_w,
        .power_total_max_w = s->power_total_max_w, .power_limit_total_w = s->power_limit_total_w,
        .vram_used_avg_mb = s->vram_used_avg_mb, .vram_used_max_mb = s->vram_used_max_mb,
        .vram_total_mb = s->vram_total_mb, .vram_used_avg_pct = s->vram_used_avg_pct,
        .vram_used_max_pct = s->vram_used_max_pct, .pcie_rx_avg_mb_s = s->pcie_rx_avg_mb_s,
        .pcie_rx_max_mb_s = s->pcie_rx_max_mb_s, .pcie_tx_avg_mb_s = s->pcie_tx_avg_mb_s,
        .pcie_tx_max_mb_s = s->pcie_tx_max_mb_s,
    };
}

/* ---- cells ---- */

#define T struct decode_request_sample
static const struct field sample_rows[] = {
    F_NUM(T, ttft, OPT, "s"),
    F_NUM(T, time_to_second_token, OPT, "s"),
    F_NUM(T, latency, OPT, "s"),
    F_NUM(T, inter_token_latency_avg, OPT, "s"),
    F_NUM(T, chunk_inter_token_latency_avg, OPT, "s"),
    F_WHOLE(T, input_tokens, OPT, "tokens"),
    F_WHOLE(T, output_tokens, OPT, "tokens"),
    F_NUM(T, output_tps_per_user, OPT, "tok/s"),
    F_NUM(T, e2e_output_tps_per_user, OPT, "tok/s"),
    F_BOOL(T, completed, JR_OPTIONAL),
};
#undef T
const struct field_table decode_sample_table =
    FIELD_TABLE_ALWAYS("decode_request_sample", struct decode_request_sample, sample_rows);

#define T struct decode_gate_point
static const struct field gate_rows[] = {
    F_NUM(T, t_s, OPT, "s"),
    F_NUM(T, running_reqs, OPT, NULL),
    F_NUM(T, queue_reqs, OPT, NULL),
    F_WHOLE(T, active_streams, OPT, NULL),
    F_WHOLE(T, decoding_streams, OPT, NULL),
    F_BOOL(T, met, JR_OPTIONAL),
};
#undef T
const struct field_table decode_gate_point_table =
    FIELD_TABLE_ALWAYS("decode_gate_point", struct decode_gate_point, gate_rows);

#define STAT4(T, m, unit)                                                                                      \
    {#m "_avg", FIELD_NUMBER, offsetof(T, m.avg), OPT, 0, unit, NULL, 0, 0, NULL, NULL},                        \
    {#m "_p50", FIELD_NUMBER, offsetof(T, m.p50), OPT, 0, unit, NULL, 0, 0, NULL, NULL},                        \
    {#m "_p90", FIELD_NUMBER, offsetof(T, m.p90), OPT, 0, unit, NULL, 0, 0, NULL, NULL},                        \
    {#m "_p99", FIELD_NUMBER, offsetof(T, m.p99), OPT, 0, unit, NULL, 0, 0, NULL, NULL}

#define T struct decode_cell
/* the keys a burst entry and a duration cell share, in the seed's order: before and after
 * server_output_tokens (a duration cell's alone) */
#define CELL_HEAD                                                                                              \
    F_WHOLE(T, concurrency, 0, NULL),                                                                          \
    F_WHOLE(T, context_tokens, 0, "tokens"),                                                                   \
    F_STR(T, benchmark_mode, OPT),                                                                             \
    F_WHOLE(T, request_count_target, OPT, NULL),                                                               \
    F_WHOLE(T, warmup_request_count, OPT, NULL),                                                               \
    F_NUM(T, measurement_seconds, OPT, "s"),                                                                   \
    F_NUM(T, measurement_wall_seconds, OPT, "s"),                                                              \
    F_WHOLE(T, client_output_tokens, OPT, "tokens")
#define CELL_BODY                                                                                              \
    F_STR(T, aggregate_source, OPT),                                                                           \
    F_NUM(T, aggregate_tps, JR_NULLABLE, "tok/s"),                                                             \
    F_NUM(T, per_request_avg_tps, OPT, "tok/s"),                                                               \
    STAT4(T, ttft, "s"), STAT4(T, time_to_second_token, "s"), STAT4(T, request_latency, "s"),                  \
    STAT4(T, inter_token_latency, "s"), STAT4(T, output_tps_per_user, "tok/s"),                                \
    STAT4(T, e2e_output_tps_per_user, "tok/s"), STAT4(T, chunk_inter_token_latency, "s"),                      \
    F_NUM(T, input_seq_len_avg, OPT, "tokens"),                                                                \
    STAT4(T, output_seq_len, "tokens"),                                                                        \
    F_WHOLE(T, request_count, OPT, NULL),                                                                      \
    F_WHOLE(T, completed_request_count, OPT, NULL),                                                            \
    F_ARR(T, request_samples, n_request_samples, JR_OPTIONAL, &decode_sample_table),                           \
    F_WHOLE(T, total_tokens, OPT, "tokens"),                                                                   \
    F_NUM(T, wall_time, OPT, "s"),                                                                             \
    F_WHOLE(T, num_completed, OPT, NULL),                                                                      \
    F_WHOLE(T, num_errors, OPT, NULL)

static const struct field cell_rows[] = {
    CELL_HEAD,
    F_WHOLE(T, server_output_tokens, OPT, "tokens"),
    CELL_BODY,
    F_NUM(T, server_gen_throughput, OPT, "tok/s"),
    F_NUM(T, server_utilization, OPT, NULL),
    F_NUM(T, server_spec_accept_rate, OPT, NULL),
    F_NUM(T, server_spec_accept_length, OPT, "tokens"),
    F_WHOLE(T, server_spec_drafts, OPT, NULL),
    F_WHOLE(T, server_spec_draft_tokens, OPT, "tokens"),
    F_WHOLE(T, server_spec_accepted_tokens, OPT, "tokens"),
    F_CUSTOM(T, server_spec_pos_accept, JR_OPTIONAL, &pos_codec),
    F_NUM(T, server_engine_steps, OPT, NULL),
    F_NUM(T, server_steps_per_s, OPT, "1/s"),
    F_NUM(T, server_accept_len_effective, OPT, "tokens"),
    F_NUM(T, accept_norm_tps, OPT, "tok/s"),
    F_NUM(T, accept_norm_ref_len, OPT, "tokens"),
    F_NUM(T, avg_running_reqs, OPT, NULL),
    F_NUM(T, max_running_reqs, OPT, NULL),
    F_WHOLE(T, effective_concurrency, OPT, NULL),
    F_NUM(T, avg_queue_reqs, OPT, NULL),
    F_NUM(T, max_queue_reqs, OPT, NULL),
    F_NUM(T, queue_fraction, OPT, NULL),
    F_BOOL(T, underfilled, JR_OPTIONAL),
    F_BOOL(T, warmup_timed_out, JR_OPTIONAL),
    F_NUM(T, warmup_duration, OPT, "s"),
    F_STR(T, ready_reason, OPT),
    F_STR(T, timeout_reason, OPT),
    F_BOOL(T, capacity_limited, JR_OPTIONAL),
    F_STR(T, capacity_reason, OPT),
    {"hardware_summary", FIELD_OBJECT, offsetof(T, hardware_summary), OPT, FW_NULL, NULL, NULL, 0, 0,
     &decode_hw_table, NULL},
    F_ARR(T, ready_trace, n_ready_trace, JR_OPTIONAL, &decode_gate_point_table),
    F_NUM(T, window_start_monotonic_ns, OPT, "ns"),
    F_NUM(T, window_end_monotonic_ns, OPT, "ns"),
};
static const struct field burst_rows[] = {CELL_HEAD, CELL_BODY};
#undef T
const struct field_table decode_cell_table = FIELD_TABLE_ALWAYS("decode_cell", struct decode_cell, cell_rows);
const struct field_table decode_burst_cell_table =
    FIELD_TABLE_ALWAYS("decode_burst_cell", struct decode_cell, burst_rows);

/* ---- prefill ---- */

#define T struct decode_prefill_check
static const struct field check_rows[] = {
    F_STR(T, method, OPT),
    F_NUM(T, tok_per_sec, OPT, "tok/s"),
    F_NUM(T, prefill_seconds, OPT, "s"),
    F_WHOLE(T, prompt_tokens, OPT, "tokens"),
    F_WHOLE(T, request_prompt_tokens, OPT, "tokens"),
    F_WHOLE(T, cached_tokens, OPT, "tokens"),
    F_STR(T, token_source, OPT),
    F_WHOLE(T, samples, OPT, NULL),
    F_STR(T, invalid_reason, OPT),
};
#undef T
const struct field_table decode_prefill_check_table =
    FIELD_TABLE_ALWAYS("decode_prefill_check", struct decode_prefill_check, check_rows);

#define T struct decode_prefill
static const struct field prefill_rows[] = {
    F_NUM(T, ttft_seconds, OPT, "s"),
    F_NUM(T, prefill_seconds, OPT, "s"),
    F_NUM(T, tok_per_sec, OPT, "tok/s"),
    F_NUM(T, client_ttft_seconds, OPT, "s"),
    F_NUM(T, client_tok_per_sec, OPT, "tok/s"),
    F_WHOLE(T, prompt_tokens, OPT, "tokens"),
    F_WHOLE(T, samples, OPT, NULL),
    F_STR(T, method, OPT),
    F_OBJ(T, server_validation, JR_OPTIONAL, &decode_prefill_check_table),
    {"hardware_summary", FIELD_OBJECT, offsetof(T, hardware_summary), OPT, FW_EMPTY, NULL, NULL, 0, 0,
     &decode_hw_table, NULL},
    {"concurrent_streams", FIELD_WHOLE, offsetof(T, concurrent_streams), OPT, FW_OMIT_NONE, NULL, NULL, 0, 0,
     NULL, NULL},
};
#undef T
const struct field_table decode_prefill_table =
    FIELD_TABLE("decode_prefill", struct decode_prefill, prefill_rows, present);

/* An entry read back: an empty hardware_summary ({}) is none. */
static void prefill_settle(struct decode_prefill *e)
{
    if (isnan(e->hardware_summary.samples))
        fields_free(&decode_hw_table, &e->hardware_summary);
}

cJSON *decode_prefill_json(const struct decode_prefill *e)
{
    return fields_to_json(&decode_prefill_table, e);
}

cJSON *decode_prefill_map_json(const struct decode_prefill *e, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "%ld", e[i].context_tokens);
        cJSON_AddItemToObject(o, key, decode_prefill_json(&e[i]));
    }
    return o;
}

static void prefill_map_write(cJSON *o, const char *key, const void *value)
{
    const struct decode_prefill_map *m = value;
    cJSON_AddItemToObject(o, key, decode_prefill_map_json(m->v, m->n));
}

/* A key that is a whole number (a context length in tokens, a
 * concurrency), written as a decimal string; what names it in messages. */
static int number_key(struct jread *r, const char *k, const char *what, long *out)
{
    char *end;
    errno = 0;
    long v = k ? strtol(k, &end, 10) : -1;
    if (!k || errno || end == k || *end || v < 0)
        return jread_fail(r, k, "expected %s as the key", what);
    *out = v;
    return 0;
}

/* Reads the prefill object j into m. */
static void prefill_map_read_object(struct jread *r, const cJSON *j, struct decode_prefill_map *m)
{
    int n = cJSON_GetArraySize(j);
    if (!n)
        return;
    if (!(m->v = calloc((size_t)n, sizeof *m->v))) {
        jread_fail(r, NULL, "out of memory");
        return;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, j) {
        long ctx;
        if (number_key(r, e->string, "a context length in tokens", &ctx) != 0)
            return;
        if (!cJSON_IsObject(e)) {
            jread_fail(r, e->string, "expected an object");
            return;
        }
        struct decode_prefill *p = &m->v[m->n++];
        size_t mark = jread_enter(r, e->string);
        fields_read(r, e, &decode_prefill_table, p);
        jread_leave(r, mark);
        p->context_tokens = ctx;
        prefill_settle(p);
        if (r->failed)
            return;
    }
}

static void prefill_map_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    const cJSON *j = jread_object(r, o, key, flags);
    if (!j)
        return;
    size_t mark = jread_enter(r, key);
    prefill_map_read_object(r, j, value);
    jread_leave(r, mark);
}

static void prefill_map_free(void *value)
{
    struct decode_prefill_map *m = value;
    for (size_t i = 0; i < m->n; i++)
        decode_prefill_free(&m->v[i]);
    free(m->v);
    *m = (struct decode_prefill_map){0};
}

static const struct field_codec prefill_map_codec = {prefill_map_write, prefill_map_read, prefill_map_free};

/* ---- summary tables ---- */

static void tps_write(cJSON *o, const char *key, const void *value)
{
    const struct decode_tps_table *t = value;
    cJSON *j = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; j && i < t->n; i++) {
        char ck[32], cc[32];
        snprintf(ck, sizeof ck, "%ld", t->v[i].context_tokens);
        snprintf(cc, sizeof cc, "%ld", t->v[i].concurrency);
        cJSON *row = cJSON_GetObjectItemCaseSensitive(j, ck);
        if (!row)
            row = cJSON_AddObjectToObject(j, ck);
        artifact_add_number(row, cc, t->v[i].tps);
    }
}

static void tps_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    struct decode_tps_table *t = value;
    const cJSON *j = jread_object(r, o, key, flags), *row, *e;
    size_t n = 0;
    cJSON_ArrayForEach(row, j) {
        if (!cJSON_IsObject(row)) {     /* {"context": {"concurrency": tok/s}} */
            size_t mark = jread_enter(r, key);
            jread_fail(r, row->string, "expected an object of tok/s by concurrency");
            jread_leave(r, mark);
            return;
        }
        n += (size_t)cJSON_GetArraySize(row);
    }
    if (!n)
        return;
    if (!(t->v = calloc(n, sizeof *t->v))) {
        jread_fail(r, key, "out of memory");
        return;
    }
    size_t mark = jread_enter(r, key);
    cJSON_ArrayForEach(row, j) {
        long ctx, conc;
        if (number_key(r, row->string, "a context length in tokens", &ctx) != 0)
            break;
        size_t m2 = jread_enter(r, row->string);
        cJSON_ArrayForEach(e, row) {
            if (number_key(r, e->string, "a concurrency", &conc) != 0)
                break;
            t->v[t->n++] = (struct decode_tps){ctx, conc, NAN};
            jread_number(r, row, e->string, JR_NULLABLE, &t->v[t->n - 1].tps);
        }
        jread_leave(r, m2);
    }
    jread_leave(r, mark);
}

static void tps_free(void *value)
{
    struct decode_tps_table *t = value;
    free(t->v);
    *t = (struct decode_tps_table){0};
}

static const struct field_codec tps_codec = {tps_write, tps_read, tps_free};

static int summarize(struct decode_tps_table *t, const struct decode_cell *c, size_t n, bool zero_for_none)
{
    tps_free(t);
    if (!n)
        return 0;
    if (!(t->v = calloc(n, sizeof *t->v)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        double v = c[i].aggregate_tps;
        t->v[t->n++] = (struct decode_tps){c[i].context_tokens, c[i].concurrency,
                                           zero_for_none && !isfinite(v) ? 0 : v};
    }
    return 0;
}

int decode_matrix_summarize(struct decode_matrix *m)
{
    return summarize(&m->summary_table, m->results, m->n_results, false) == 0 &&
                   summarize(&m->burst_summary_table, m->burst_results, m->n_burst_results, true) == 0
               ? 0
               : -1;
}

/* ---- startup diagnostics ---- */

#define T struct decode_p2p
static const struct field p2p_rows[] = {
    F_BOOL(T, effective, JR_OPTIONAL),
    F_BOOL(T, configured, JR_OPTIONAL),
    F_STR(T, params_path, OPT),
    F_BOOL(T, params_available, JR_OPTIONAL),
    F_STR(T, modprobe_path, OPT),
    F_BOOL(T, modprobe_available, JR_OPTIONAL),
    F_CUSTOM(T, runtime, JR_OPTIONAL, &strmap_codec),
    F_CUSTOM(T, expected, JR_OPTIONAL, &strmap_codec),
    F_STRS(T, missing, n_missing, JR_OPTIONAL),
    F_CUSTOM(T, mismatched, JR_OPTIONAL, &mismatch_codec),
    F_STR(T, registry_dwords, OPT),
    F_STR(T, suggested_modprobe_line, OPT),
    F_STR(T, suggested_reload, OPT),
};
#undef T
const struct field_table decode_p2p_table = FIELD_TABLE("decode_p2p", struct decode_p2p, p2p_rows, present);

#define T struct decode_not_run
static const struct field not_run_rows[] = {
    F_STR(T, status, OPT),
    {"reason", FIELD_STRING, offsetof(T, reason), OPT, FW_OMIT_NONE, NULL, NULL, 0, 0, NULL, NULL},
};
#undef T
const struct field_table decode_not_run_table =
    FIELD_TABLE("decode_not_run", struct decode_not_run, not_run_rows, present);

#define T struct decode_capture
static const struct field capture_rows[] = {
    F_STRS(T, cmd, n_cmd, JR_OPTIONAL),
    F_NUM(T, returncode, OPT, NULL),
    F_KEY("stdout", FIELD_STRING, T, out, OPT, 0),
    F_KEY("stderr", FIELD_STRING, T, err, OPT, 0),
};
#undef T
const struct field_table decode_capture_table =
    FIELD_TABLE("decode_capture", struct decode_capture, capture_rows, present);

#define T struct decode_args
static const struct field args_rows[] = {
    F_STR(T, concurrency, OPT),
    F_STR(T, contexts, OPT),
    F_WHOLE(T, max_tokens, OPT, "tokens"),
    F_NUM(T, duration, OPT, "s"),
    F_WHOLE(T, request_count, OPT, NULL),
    F_BOOL(T, run_burst, JR_OPTIONAL),
    F_BOOL(T, standalone_prefill, JR_OPTIONAL),
    F_BOOL(T, prefill_only, JR_OPTIONAL),
    F_BOOL(T, skip_prefill, JR_OPTIONAL),
    F_STR(T, prefill_contexts, OPT),
    F_STR(T, prefill_metric, OPT),
    F_WHOLE(T, prefill_samples, OPT, NULL),
    F_WHOLE(T, burst_requests_per_concurrency, OPT, NULL),
    F_WHOLE(T, dcp_size, OPT, NULL),
    F_WHOLE(T, kv_budget, OPT, "tokens"),
    F_NUM(T, ready_stable_s, OPT, "s"),
    F_NUM(T, cell_warmup_timeout_s, OPT, "s"),
};
#undef T
const struct field_table decode_args_table = FIELD_TABLE("decode_args", struct decode_args, args_rows, present);

#define T struct decode_diag
static const struct field diag_rows[] = {
    F_STR(T, version, OPT),
    F_STR(T, server_url, OPT),
    F_STR(T, hostname, OPT),
    F_STR(T, uname, OPT),
    F_OBJ(T, args, JR_OPTIONAL, &decode_args_table),
    F_CUSTOM(T, env, JR_OPTIONAL, &strmap_codec),
    F_OBJ(T, nvidia_p2p_override, JR_OPTIONAL, &decode_p2p_table),
    F_OBJ(T, p2pmark, JR_OPTIONAL, &decode_not_run_table),
    F_OBJ(T, amd_fabric, JR_OPTIONAL, &decode_not_run_table),
    F_OBJ(T, nvidia_smi_query, JR_OPTIONAL, &decode_capture_table),
    F_OBJ(T, nvidia_smi_topo, JR_OPTIONAL, &decode_capture_table),
};
#undef T
const struct field_table decode_diag_table = FIELD_TABLE("decode_diag", struct decode_diag, diag_rows, present);

void decode_diag_free(struct decode_diag *d)
{
    fields_free(&decode_diag_table, d);
}

void decode_p2p_free(struct decode_p2p *p)
{
    fields_free(&decode_p2p_table, p);
}

void decode_capture_free(struct decode_capture *c)
{
    fields_free(&decode_capture_table, c);
}

/* ---- metadata, methodology, the matrix ---- */

#define T struct decode_metadata
static const struct field metadata_rows[] = {
    F_STR(T, version, OPT),
    F_STR(T, engine, OPT),
    F_STR(T, model, OPT),
    F_STR(T, server, OPT),
    F_STR(T, timestamp, OPT),
    F_STR(T, decode_mode, JR_NONEMPTY),
    F_STR(T, primary_decode_layer, OPT),
    F_NUM(T, duration_per_test, JR_OPTIONAL, "s"),
    F_WHOLE(T, request_count, OPT, NULL),
    F_WHOLE(T, warmup_request_count, OPT, NULL),
    F_BOOL(T, run_burst, JR_OPTIONAL),
    F_STR(T, prefill_mode, OPT),
    F_BOOL(T, standalone_prefill, JR_OPTIONAL),
    F_BOOL(T, prefill_only, JR_OPTIONAL),
    F_BOOL(T, skip_prefill, JR_OPTIONAL),
    F_STR(T, burst_e2e_status, OPT),
    F_WHOLE(T, burst_request_count, OPT, NULL),
    F_WHOLE(T, burst_warmup_request_count, OPT, NULL),
    F_WHOLE(T, burst_requests_per_concurrency, OPT, NULL),
    F_NUM(T, decode_warmup_seconds, OPT, "s"),
    F_WHOLE(T, decode_warmup_context, OPT, "tokens"),
    F_WHOLE(T, decode_warmup_concurrency, OPT, NULL),
    F_NUM(T, cell_warmup_timeout_seconds, OPT, "s"),
    F_STR(T, cell_warmup_timeout_policy, OPT),
    F_NUM(T, ready_stable_seconds, OPT, "s"),
    F_BOOL(T, show_capacity_limited_values, JR_OPTIONAL),
    {"max_tokens", FIELD_WHOLE, offsetof(T, max_tokens), OPT, 0, "tokens", NULL, 1, 0, NULL, NULL},
    F_NUM(T, temperature, OPT, NULL),
    F_BOOL(T, ignore_eos, JR_OPTIONAL),
    F_NUM(T, max_total_tokens, OPT, "tokens"),
    F_WHOLE(T, dcp_size, OPT, NULL),
    F_BOOL(T, metrics_available, JR_OPTIONAL),
    F_STR(T, metrics_warning, OPT),
    F_CUSTOM(T, concurrency_levels, JR_OPTIONAL, &longs_codec),
    F_CUSTOM(T, context_lengths, JR_OPTIONAL, &longs_codec),
    F_BOOL(T, startup_diagnostics_available, JR_OPTIONAL),
    F_BOOL(T, nvidia_p2p_override_effective, JR_OPTIONAL),
    F_STR(T, p2pmark_status, OPT),
    F_STR(T, amd_fabric_status, OPT),
    F_WHOLE(T, cells_planned, OPT, NULL),
    F_WHOLE(T, cells_done, OPT, NULL),
    F_BOOL(T, incomplete, JR_OPTIONAL),
    F_STR(T, incomplete_reason, OPT),
};
#undef T
const struct field_table decode_metadata_table =
    FIELD_TABLE("decode_metadata", struct decode_metadata, metadata_rows, present);

#define T struct decode_method
static const struct field method_rows[] = {
    F_STR(T, name, OPT),
    F_BOOL(T, present, JR_OPTIONAL),
    {"mode", FIELD_STRING, offsetof(T, mode), OPT, FW_OMIT_NONE, NULL, NULL, 0, 0, NULL, NULL},
    {"status", FIELD_STRING, offsetof(T, status), OPT, FW_OMIT_NONE, NULL, NULL, 0, 0, NULL, NULL},
    F_STR(T, formula, OPT),
    F_STR(T, notes, OPT),
};
#undef T
const struct field_table decode_method_table =
    FIELD_TABLE("decode_method", struct decode_method, method_rows, present_obj);

#define T struct decode_methodology
static const struct field methodology_rows[] = {
    F_OBJ(T, prefill, JR_OPTIONAL, &decode_method_table),
    F_OBJ(T, sustained_decode, JR_OPTIONAL, &decode_method_table),
    F_OBJ(T, burst_e2e_decode, JR_OPTIONAL, &decode_method_table),
    F_OBJ(T, acceptance_normalization, JR_OPTIONAL, &decode_method_table),
};
#undef T
const struct field_table decode_methodology_table =
    FIELD_TABLE("decode_methodology", struct decode_methodology, methodology_rows, present);

#define T struct decode_matrix
static const struct field matrix_rows[] = {
    F_OBJ(T, metadata, 0, &decode_metadata_table),
    F_OBJ(T, startup_diagnostics, JR_OPTIONAL, &decode_diag_table),
    F_OBJ(T, nvidia_p2p_override, JR_OPTIONAL, &decode_p2p_table),
    F_OBJ(T, p2pmark, JR_OPTIONAL, &decode_not_run_table),
    F_OBJ(T, amd_fabric, JR_OPTIONAL, &decode_not_run_table),
    {"hardware_run_summary", FIELD_OBJECT, offsetof(T, hardware_run_summary), OPT, FW_NULL, NULL, NULL, 0, 0,
     &decode_hw_table, NULL},
    F_STRS(T, event_log, n_event_log, JR_OPTIONAL),
    F_CUSTOM(T, prefill, OPT, &prefill_map_codec),
    F_ARR(T, results, n_results, 0, &decode_cell_table),
    F_CUSTOM(T, summary_table, OPT, &tps_codec),
    F_ARR(T, burst_results, n_burst_results, JR_OPTIONAL, &decode_burst_cell_table),
    F_CUSTOM(T, burst_summary_table, OPT, &tps_codec),
    F_OBJ(T, methodology, JR_OPTIONAL, &decode_methodology_table),
};
#undef T
const struct field_table decode_matrix_table =
    FIELD_TABLE_ALWAYS("decode_matrix", struct decode_matrix, matrix_rows);

bool decode_matrix_is(const cJSON *j)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(j, "metadata");
    return cJSON_IsObject(j) && cJSON_IsObject(meta)
           && cJSON_GetObjectItemCaseSensitive(meta, "decode_mode")
           && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "results"));
}

int decode_matrix_from_json(const cJSON *j, const char *name, struct decode_matrix *out, char *err,
                            size_t errlen)
{
    struct jread r;
    memset(out, 0, sizeof *out);
    if (jread_document(&r, j, name, err, errlen) == 0 && fields_read(&r, j, &decode_matrix_table, out) == 0 &&
        out->n_results == 0)
        jread_fail(&r, "results", "expected at least one cell");
    if (r.failed) {
        decode_matrix_free(out);
        return -1;
    }
    return 0;
}

cJSON *decode_matrix_to_json(const struct decode_matrix *m)
{
    return fields_to_json(&decode_matrix_table, m);
}

int decode_matrix_write(const char *path, const struct decode_matrix *m, const struct secrets *sec, char *err,
                        size_t errlen)
{
    cJSON *doc = decode_matrix_to_json(m);
    if (!doc || (sec && secrets_scrub_json(sec, doc) != 0)) {
        cJSON_Delete(doc);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    struct decode_matrix back;
    int rc = decode_matrix_from_json(doc, path, &back, err, errlen);
    if (rc == 0) {
        decode_matrix_free(&back);
        rc = artifact_write_file(path, doc, err, errlen);
    }
    cJSON_Delete(doc);
    return rc;
}

void decode_matrix_free(struct decode_matrix *m)
{
    fields_free(&decode_matrix_table, m);
    memset(m, 0, sizeof *m);
}

/* ---- the pieces ---- */

cJSON *decode_cell_json(const struct decode_cell *c, bool burst)
{
    return fields_to_json(burst ? &decode_burst_cell_table : &decode_cell_table, c);
}

void decode_cell_init(struct decode_cell *c)
{
    memset(c, 0, sizeof *c);
    fields_free(&decode_cell_table, c);     /* frees nothing; leaves every number none */
}

void decode_cell_free(struct decode_cell *c)
{
    fields_free(&decode_cell_table, c);
}

void decode_prefill_free(struct decode_prefill *e)
{
    fields_free(&decode_prefill_table, e);
}

/* A deep copy through the writer and the reader: one definition of what a
 * cell holds. */
int decode_struct_copy(const struct field_table *t, void *dst, const void *src)
{
    cJSON *j = fields_to_json(t, src);
    char err[200];
    struct jread r;
    jread_init(&r, t->name, err, sizeof err);
    int rc = j && fields_read(&r, j, t, dst) == 0 ? 0 : -1;
    cJSON_Delete(j);
    if (rc != 0)
        fields_free(t, dst);
    return rc;
}

int decode_prefill_copy(struct decode_prefill *dst, const struct decode_prefill *src)
{
    int rc = decode_struct_copy(&decode_prefill_table, dst, src);
    dst->context_tokens = src->context_tokens;
    dst->present = src->present;
    prefill_settle(dst);
    return rc;
}

/* ---- the run directory's caches ---- */

#define T struct decode_plan
static const struct field plan_rows[] = {
    F_STR(T, server, OPT),
    F_STR(T, model, OPT),
    F_CUSTOM(T, concurrency_levels, JR_OPTIONAL, &longs_codec),
    F_CUSTOM(T, context_lengths, JR_OPTIONAL, &longs_codec),
    F_NUM(T, duration_per_test, OPT, "s"),
    F_WHOLE(T, max_tokens, OPT, "tokens"),
};
#undef T
static const struct field_table plan_table = FIELD_TABLE_ALWAYS("decode_plan", struct decode_plan, plan_rows);

int decode_plan_keep(const char *path, const char *dir, const struct decode_plan *p, char *err, size_t errlen)
{
    cJSON *want = fields_to_json(&plan_table, p);
    char *old = file_read_all(path, NULL);
    int rc = 0;
    if (!want) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    } else if (old) {
        cJSON *have = cJSON_Parse(old);
        if (!have || !cJSON_Compare(have, want, 1)) {
            char *w = cJSON_PrintUnformatted(want);
            snprintf(err, errlen, "%s holds a decode matrix of another plan (%s); this one is %s: use another "
                     "--out-dir", dir, old, w ? w : "?");
            free(w);
            rc = -1;
        } else {
            rc = 1;
        }
        cJSON_Delete(have);
    } else if (artifact_write_file(path, want, err, errlen) != 0) {
        rc = -1;
    }
    free(old);
    cJSON_Delete(want);
    return rc;
}

/* The text of path, else of its fallback (moved into place when it can be). */
static char *read_kept(const char *path)
{
    char *text = file_read_all(path, NULL), fb[4400] = "";
    if (!text) {    /* written to its fallback when the directory could not take it */
        artifact_fallback_path(path, fb, sizeof fb);
        text = file_read_all(fb, NULL);
        char err[1400];
        if (text && artifact_place_text(path, text, err, sizeof err) == 0)
            unlink(fb);
    }
    return text;
}

/* Parses path's text for a checked read. Returns the JSON, or NULL with
 * *rc 1 (no file) or -1 (err says why). */
static cJSON *parse_kept(const char *path, struct jread *r, int *rc)
{
    char *text = read_kept(path);
    *rc = text ? 0 : 1;
    cJSON *j = NULL;
    if (text && jread_parse(r, text, strlen(text), &j) != 0)
        *rc = -1;
    free(text);
    return j;
}

struct cell_file {
    struct decode_cell result;
    struct decode_prefill scout;
};

static const struct field cell_file_rows[] = {
    F_OBJ(struct cell_file, result, 0, &decode_cell_table),
    {"scout", FIELD_OBJECT, offsetof(struct cell_file, scout), OPT, FW_NULL, NULL, NULL, 0, 0,
     &decode_prefill_table, NULL},
};
static const struct field_table cell_file_table =
    FIELD_TABLE_ALWAYS("decode_cell_file", struct cell_file, cell_file_rows);

int decode_cell_file_write(const char *path, const struct decode_cell *c, const struct decode_prefill *scout,
                           char *err, size_t errlen)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "result", decode_cell_json(c, false));
    cJSON_AddItemToObject(j, "scout", scout && scout->present ? decode_prefill_json(scout) : cJSON_CreateNull());
    int rc = artifact_write_file(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

int decode_cell_file_read(const char *path, struct decode_cell *c, struct decode_prefill *scout, char *err,
                          size_t errlen)
{
    struct jread r;
    jread_init(&r, path, err, errlen);
    int rc;
    cJSON *j = parse_kept(path, &r, &rc);
    struct cell_file f;
    memset(&f, 0, sizeof f);
    if (j && fields_read(&r, j, &cell_file_table, &f) != 0)
        rc = -1;
    cJSON_Delete(j);
    if (rc != 0) {
        fields_free(&cell_file_table, &f);
        return rc;
    }
    f.scout.context_tokens = f.result.context_tokens;
    prefill_settle(&f.scout);
    *c = f.result;
    *scout = f.scout;
    return 0;
}

int decode_prefill_cache_write(const char *path, const struct decode_prefill *e, char *err, size_t errlen)
{
    cJSON *j = decode_prefill_map_json(e, 1);
    int rc = artifact_write_file(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

int decode_prefill_cache_read(const char *path, struct decode_prefill *e, char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, path, err, errlen);
    int rc;
    cJSON *j = parse_kept(path, &r, &rc);
    struct decode_prefill_map m = {0};
    if (j && !cJSON_IsObject(j))
        jread_fail(&r, NULL, "not a JSON object");
    if (j && !r.failed)
        prefill_map_read_object(&r, j, &m);
    if (j && !r.failed && m.n != 1)
        jread_fail(&r, NULL, "expected one prefill entry, found %zu", m.n);
    cJSON_Delete(j);
    if (rc == 0 && r.failed)
        rc = -1;
    if (rc == 0) {
        *e = m.v[0];
        m.n = 0;
    }
    prefill_map_free(&m);
    return rc;
}

struct burst_file {
    struct decode_cell *burst_results;
    size_t n_burst_results;
    struct decode_tps_table burst_summary_table;
};

static const struct field burst_file_rows[] = {
    F_ARR(struct burst_file, burst_results, n_burst_results, 0, &decode_burst_cell_table),
    F_CUSTOM(struct burst_file, burst_summary_table, OPT, &tps_codec),
};
static const struct field_table burst_file_table =
    FIELD_TABLE_ALWAYS("decode_burst_file", struct burst_file, burst_file_rows);

int decode_burst_cache_write(const char *path, const struct decode_cell *c, char *err, size_t errlen)
{
    struct burst_file f = {.burst_results = (struct decode_cell *)c, .n_burst_results = 1};
    if (summarize(&f.burst_summary_table, c, 1, true) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cJSON *j = fields_to_json(&burst_file_table, &f);
    tps_free(&f.burst_summary_table);
    int rc = artifact_write_file(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

int decode_burst_cache_read(const char *path, struct decode_cell *c, char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, path, err, errlen);
    int rc;
    cJSON *j = parse_kept(path, &r, &rc);
    struct burst_file f;
    memset(&f, 0, sizeof f);
    if (j && fields_read(&r, j, &burst_file_table, &f) == 0 && f.n_burst_results != 1)
        jread_fail(&r, "burst_results", "expected one burst, found %zu", f.n_burst_results);
    cJSON_Delete(j);
    if (rc == 0 && r.failed)
        rc = -1;
    if (rc == 0) {
        *c = f.burst_results[0];
        f.n_burst_results = 0;
    }
    fields_free(&burst_file_table, &f);
    return rc;
}
