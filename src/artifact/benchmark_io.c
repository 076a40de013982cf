/* benchmark_io.c — struct benchmark to JSON and back through field tables
 * (artifact/fields.h): every block of the artifact is a table of rows (key,
 * type, unit, member, how it may be absent), and benchmark_to_json,
 * benchmark_from_json, benchmark_free and the round-trip tests all walk the
 * same rows, so a key written is a key read. Custom codecs only for what no
 * row type holds: name → count maps, JSON kept as found, the invariants'
 * counts by name, the processes of a run spread over ranks. */
#include "artifact/benchmark.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/benchmark_fields.h"
#include "core/file.h"
#include "core/sha256.h"

/* Lookup flags of a field anvil writes that a seed-shaped file may lack. */
#define OPT (JR_OPTIONAL | JR_NULLABLE)

/* Rows with their key k, read flags R, write flags W and unit u; the short
 * forms below take the key from the member's name, in the struct T that is
 * #defined above each table. */
#define NUM_K(k, m, R, W, u)      {k, FIELD_NUMBER, offsetof(T, m), (R), (W), (u), NULL, 0, 0, NULL, NULL}
#define WHOLE_K(k, m, R, W, u, n) {k, FIELD_WHOLE, offsetof(T, m), (R), (W), (u), NULL, (n), 0, NULL, NULL}
#define STR_K(k, m, R, W)         {k, FIELD_STRING, offsetof(T, m), (R), (W), NULL, NULL, 0, 0, NULL, NULL}
#define OBJ_K(k, m, R, W, sub)    {k, FIELD_OBJECT, offsetof(T, m), (R), (W), NULL, NULL, 0, 0, (sub), NULL}
#define CUSTOM_K(k, m, R, W, c)   {k, FIELD_CUSTOM, offsetof(T, m), (R), (W), NULL, NULL, 0, 0, NULL, (c)}
#define NUM(m, R, u)              NUM_K(#m, m, R, 0, u)
#define WHOLE(m, R, u)            WHOLE_K(#m, m, R, 0, u, 0)
#define STR(m, R)                 STR_K(#m, m, R, 0)
#define BOOL(m, R)                {#m, FIELD_BOOL, offsetof(T, m), (R), 0, NULL, NULL, 0, 0, NULL, NULL}
#define OBJ(m, R, W, sub)         OBJ_K(#m, m, R, W, sub)
#define ARR(m, n, R, W, sub)      {#m, FIELD_ARRAY, offsetof(T, m), (R), (W), NULL, NULL, 0, offsetof(T, n), (sub), NULL}
#define CUSTOM(m, R, W, c)        CUSTOM_K(#m, m, R, W, c)

/* ---- codecs: what no row type holds ---- */

/* A name → count object, in file order. */
static void counts_write(cJSON *o, const char *key, const void *v)
{
    const struct bench_counts *c = v;
    cJSON *j = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; j && i < c->n; i++)
        cJSON_AddNumberToObject(j, c->v[i].key, (double)c->v[i].count);
}

static void counts_free(void *v)
{
    struct bench_counts *c = v;
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].key);
    free(c->v);
    *c = (struct bench_counts){0};
}

static void counts_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    struct bench_counts *c = v;
    *c = (struct bench_counts){0};
    const cJSON *j = jread_object(r, o, key, flags), *e;
    if (!j)
        return;
    size_t n = (size_t)cJSON_GetArraySize(j), mark = jread_enter(r, key);
    c->v = calloc(n ? n : 1, sizeof *c->v);
    if (!c->v)
        jread_fail(r, NULL, "out of memory");
    cJSON_ArrayForEach(e, j) {
        if (r->failed)
            break;
        struct bench_count *k = &c->v[c->n];
        if (jread_whole(r, j, e->string, 0, 0, &k->count) == 0 && !(k->key = strdup(e->string)))
            jread_fail(r, e->string, "out of memory");
        if (!r->failed)
            c->n++;
    }
    jread_leave(r, mark);
}

static const struct field_codec counts_codec = {counts_write, counts_read, counts_free};

static void json_free(void *v)
{
    cJSON_Delete(*(cJSON **)v);
    *(cJSON **)v = NULL;
}


/* The observation blocks (see struct benchmark): an object kept as found,
 * or with JR_NULLABLE null too; left out when absent. */
static void observed_write(cJSON *o, const char *key, const void *v)
{
    const cJSON *j = *(cJSON *const *)v;
    if (j)
        cJSON_AddItemToObject(o, key, cJSON_Duplicate(j, true));
}

static void observed_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    cJSON **out = v;
    const cJSON *j = jread_item(r, o, key, JR_OPTIONAL);
    if (!j)
        return;
    bool nullable = flags & JR_NULLABLE;
    if (!cJSON_IsObject(j) && !(nullable && cJSON_IsNull(j)))
        jread_fail(r, key, "expected an object%s", nullable ? " or null" : "");
    else if (!(*out = cJSON_Duplicate(j, true)))
        jread_fail(r, key, "out of memory");
}

static const struct field_codec observed_codec = {observed_write, observed_read, json_free};

/* The schema: always this one's, written and required. */
static void schema_write(cJSON *o, const char *key, const void *v)
{
    (void)v;
    cJSON_AddStringToObject(o, key, BENCHMARK_SCHEMA);
}

static void schema_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    (void)key;
    jread_schema(r, o, flags, BENCHMARK_SCHEMA, v);
}

static void string_free(void *v)
{
    free(*(char **)v);
    *(char **)v = NULL;
}

static const struct field_codec schema_codec = {schema_write, schema_read, string_free};

/* A distribution's samples (size_t): absent reads as 0. */
static void size_write(cJSON *o, const char *key, const void *v)
{
    cJSON_AddNumberToObject(o, key, (double)*(const size_t *)v);
}

static void size_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    long n;
    jread_whole(r, o, key, flags, 0, &n);
    *(size_t *)v = n == ARTIFACT_NONE ? 0 : (size_t)n;
}

static const struct field_codec size_codec = {size_write, size_read, NULL};

/* A count ≥ 1 with 0 = not recorded, written as null (client.threads). */
static void positive_write(cJSON *o, const char *key, const void *v)
{
    long n = *(const long *)v;
    artifact_add_whole(o, key, n > 0 ? n : ARTIFACT_NONE);
}

static void positive_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    jread_whole(r, o, key, flags, 1, v);
    if (*(long *)v < 0)
        *(long *)v = 0;
}

static const struct field_codec positive_codec = {positive_write, positive_read, NULL};

/* true, false or null as an int 1, 0, -1 (prefix_cache.server_met). */
static void tristate_write(cJSON *o, const char *key, const void *v)
{
    int t = *(const int *)v;
    cJSON_AddItemToObject(o, key, t < 0 ? cJSON_CreateNull() : cJSON_CreateBool(t));
}

static void tristate_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    const cJSON *j = jread_item(r, o, key, flags);
    *(int *)v = cJSON_IsTrue(j) ? 1 : cJSON_IsFalse(j) ? 0 : -1;
    if (j && !cJSON_IsBool(j) && !cJSON_IsNull(j))
        jread_fail(r, key, "expected true, false or null");
}

static const struct field_codec tristate_codec = {tristate_write, tristate_read, NULL};

/* A flag written only when true (calibration.steps[].truncated). */
static void true_write(cJSON *o, const char *key, const void *v)
{
    if (*(const bool *)v)
        cJSON_AddBoolToObject(o, key, true);
}

static void true_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    jread_bool(r, o, key, flags, v);
}

static const struct field_codec true_codec = {true_write, true_read, NULL};

/* provenance (artifact/provenance.h), under its own key. */
static void provenance_write_any(cJSON *o, const char *key, const void *v)
{
    (void)key;
    provenance_write(o, v);
}

static void provenance_read_any(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    (void)key;
    (void)flags;
    provenance_read(r, o, v);
}

static void provenance_free_any(void *v)
{
    provenance_free(v);
}

static const struct field_codec provenance_codec = {provenance_write_any, provenance_read_any,
                                                    provenance_free_any};

/* The invariant checks: violation counts by invariant name (a name the
 * file lacks counts 0) and the first few examples. */
static void invariants_write(cJSON *o, const char *key, const void *v)
{
    const struct bench_invariants *bi = v;
    if (!bi->present)
        return;
    const struct invariants *inv = &bi->v;
    cJSON *j = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(j, "checked", inv->checked);
    cJSON *vs = cJSON_AddObjectToObject(j, "violations");
    for (int i = 0; i < INV_COUNT; i++)
        cJSON_AddNumberToObject(vs, invariant_name((enum invariant)i), inv->violations[i]);
    cJSON *ex = cJSON_AddArrayToObject(j, "examples");
    for (int i = 0; ex && i < inv->n_examples; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "request_index", inv->examples[i].request_index);
        cJSON_AddStringToObject(e, "invariant", invariant_name(inv->examples[i].what));
        cJSON_AddStringToObject(e, "detail", inv->examples[i].detail);
        cJSON_AddItemToArray(ex, e);
    }
}

static int invariant_of(const char *name, enum invariant *out)
{
    for (int i = 0; i < INV_COUNT; i++)
        if (!strcmp(name, invariant_name((enum invariant)i))) {
            *out = (enum invariant)i;
            return 0;
        }
    return -1;
}

static void example_read(struct jread *r, const cJSON *e, struct inv_example *x)
{
    long index;
    char *what = NULL, *detail = NULL;
    jread_whole(r, e, "request_index", 0, 0, &index);
    jread_string(r, e, "invariant", 0, &what);
    jread_string(r, e, "detail", 0, &detail);
    if (!r->failed && invariant_of(what, &x->what) != 0)
        jread_fail(r, "invariant", "unknown invariant \"%s\"", what);
    if (!r->failed) {
        x->request_index = (int)index;
        snprintf(x->detail, sizeof x->detail, "%s", detail);
    }
    free(what);
    free(detail);
}

static void invariants_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *v)
{
    struct bench_invariants *bi = v;
    *bi = (struct bench_invariants){0};
    struct invariants *inv = &bi->v;
    const cJSON *j = jread_object(r, o, key, flags);
    if (!(bi->present = j != NULL))
        return;
    size_t mark = jread_enter(r, key);
    long n;
    jread_whole(r, j, "checked", 0, 0, &n);
    inv->checked = (int)n;
    const cJSON *vs = jread_object(r, j, "violations", 0);
    size_t vm = jread_enter(r, "violations");
    for (int i = 0; vs && i < INV_COUNT; i++) {
        jread_whole(r, vs, invariant_name((enum invariant)i), OPT, 0, &n);
        inv->violations[i] = n == ARTIFACT_NONE ? 0 : (int)n;
    }
    jread_leave(r, vm);
    const cJSON *ex = jread_array(r, j, "examples", 0), *e;
    if (cJSON_GetArraySize(ex) > INV_EXAMPLES)
        jread_fail(r, "examples", "expected at most %d entries", INV_EXAMPLES);
    size_t em = jread_enter(r, "examples");
    cJSON_ArrayForEach(e, ex) {
        if (r->failed)
            break;
        size_t m = jread_enter_index(r, inv->n_examples);
        example_read(r, e, &inv->examples[inv->n_examples++]);
        jread_leave(r, m);
    }
    jread_leave(r, em);
    jread_leave(r, mark);
}

static const struct field_codec invariants_codec = {invariants_write, invariants_read, NULL};

/* One per_rank entry: the fields every rank has, with their types. */
static void rank_entry_read(struct jread *r, const cJSON *e, int i, void *ctx)
{
    (void)i;
    (void)ctx;
    long whole;
    double num;
    char *host = NULL;
    jread_whole(r, e, "rank", 0, 0, &whole);
    jread_string(r, e, "host", 0, &host);
    free(host);
    const char *wholes[] = {"pid", "threads", "requests", "sent", "completed", "failed"};
    for (size_t k = 0; k < sizeof wholes / sizeof *wholes; k++)
        jread_whole(r, e, wholes[k], JR_OPTIONAL, 0, &whole);
    const char *nums[] = {"cpu_user_s", "cpu_sys_s", "loop_lag_p50_ms", "loop_lag_p99_ms", "loop_lag_max_ms",
                          "clock_offset_ms", "clock_offset_uncertainty_ms", "clock_drift_ms", "start_late_ms"};
    for (size_t k = 0; k < sizeof nums / sizeof *nums; k++)
        jread_number(r, e, nums[k], JR_OPTIONAL, &num);
}

/* The ranks block, when present: checked, then kept as found. */
static void ranks_read(struct jread *r, const cJSON *j, const char *key, unsigned flags, void *value)
{
    cJSON **out = value;
    const cJSON *v = jread_object(r, j, key, flags);
    if (!v)
        return;
    size_t mark = jread_enter(r, key);
    long count;
    char *alignment = NULL;
    jread_whole(r, v, "count", 0, 1, &count);
    jread_string(r, v, "alignment", JR_NONEMPTY, &alignment);
    free(alignment);
    double unc;
    jread_number(r, v, "max_offset_uncertainty_ms", JR_OPTIONAL, &unc);
    jread_array(r, v, "missing", 0);
    const cJSON *plan = jread_object(r, v, "plan", 0);
    if (plan) {
        size_t m2 = jread_enter(r, "plan");
        long n;
        jread_whole(r, plan, "num_prompts", 0, 0, &n);
        jread_whole(r, plan, "warmup", 0, 0, &n);
        jread_whole(r, plan, "concurrency", 0, 0, &n);
        jread_leave(r, m2);
    }
    jread_each(r, "per_rank", jread_array(r, v, "per_rank", 0), rank_entry_read, NULL);
    jread_leave(r, mark);
    if (!r->failed && !(*out = cJSON_Duplicate(v, true)))
        jread_fail(r, key, "out of memory");
}

static const struct field_codec ranks_codec = {observed_write, ranks_read, json_free};

/* ---- the tables, inner blocks first ---- */

#define T struct bench_slo
static const struct field slo_rows[] = {
    NUM(ttft_ms, 0, "ms"), NUM(tpot_ms, 0, "ms"), NUM(e2el_ms, 0, "ms"),
};
static const struct field_table slo_t = FIELD_TABLE("slo", T, slo_rows, present);
#undef T

#define T struct bench_serve_flags
static const struct field serve_flags_rows[] = {
    BOOL(no_thinking, 0), STR(reasoning_effort, JR_NULLABLE), BOOL(shared_prefix_burst, 0),
    STR(thinking_mode, JR_NULLABLE),
};
static const struct field_table serve_flags_t = FIELD_TABLE("serve_flags", T, serve_flags_rows, present);
#undef T

#define T struct bench_calib_step
static const struct field calib_step_rows[] = {
    WHOLE(filler_words, 0, "words"),
    WHOLE(tokens, JR_NULLABLE, "tokens"),       /* null: the server refused the probe */
    CUSTOM(truncated, JR_OPTIONAL, 0, &true_codec),
};
static const struct field_table calib_step_t = FIELD_TABLE_ALWAYS("calibration.steps", T, calib_step_rows);
#undef T

#define T struct bench_calib_search
static const struct field calib_search_rows[] = {
    WHOLE(target_tokens, 0, "tokens"), WHOLE(tolerance_tokens, 0, "tokens"), WHOLE(filler_words, 0, "words"),
    WHOLE(measured_tokens, 0, "tokens"), BOOL(converged, 0), ARR(steps, n_steps, 0, 0, &calib_step_t),
};
static const struct field_table calib_search_t = FIELD_TABLE("calibration.search", T, calib_search_rows, present);
#undef T

#define T struct bench_calibration
static const struct field calibration_rows[] = {
    STR(method, 0), STR(source, OPT), STR(cache_file, OPT), STR(cache_key, OPT), STR(shared_prefix_method, OPT),
    OBJ(search, JR_OPTIONAL, FW_INLINE, &calib_search_t),   /* there when target_tokens is */
};
static const struct field_table calibration_t = FIELD_TABLE("calibration", T, calibration_rows, present);
#undef T

#define T struct bench_server_gone
static const struct field server_gone_rows[] = {
    NUM(first_failure_s, 0, "s"), WHOLE(connect_failures, 0, "requests"), WHOLE(truncated, 0, "requests"),
};
static const struct field_table server_gone_t = FIELD_TABLE("server_gone", T, server_gone_rows, present);
#undef T

#define T struct bench_server_stalled
static const struct field server_stalled_rows[] = {
    NUM(stall_timeout_s, 0, "s"), NUM(detected_s, 0, "s"), NUM(silent_s, 0, "s"), WHOLE(in_flight, 0, "requests"),
};
static const struct field_table server_stalled_t = FIELD_TABLE("server_stalled", T, server_stalled_rows, present);
#undef T

#define T struct bench_duration_mode
static const struct field duration_rows[] = {
    NUM(duration_s, 0, "s"), NUM(warmup_s, 0, "s"), NUM(window_s, 0, "s"), NUM(tokens_in_window, 0, "tokens"),
    NUM(aggregate_tps, 0, "tok/s"), WHOLE(requests_started_in_window, 0, "requests"),
    WHOLE(incomplete_requests, 0, "requests"), WHOLE(warmup_requests, 0, "requests"),
    NUM(window_start_ns, OPT, "ns"), NUM(window_end_ns, OPT, "ns"), STR(token_source, OPT),
    NUM(server_tokens_in_window, OPT, "tokens"),
};
static const struct field_table duration_t = FIELD_TABLE("duration_mode", T, duration_rows, present);
#undef T

#define T struct bench_ramp
static const struct field ramp_rows[] = {
    STR(strategy, 0), NUM(start_rps, OPT, "req/s"), NUM(end_rps, OPT, "req/s"), NUM(ramp_up_s, OPT, "s"),
    NUM(end_s, 0, "s"), NUM(end_ns, OPT, "ns"),
};
static const struct field_table ramp_t = FIELD_TABLE("ramp", T, ramp_rows, present);
#undef T

#define T struct bench_steady
static const struct field steady_rows[] = {
    BOOL(reached, 0), STR(reason, JR_NULLABLE), STR(basis, JR_NONEMPTY), NUM(target, JR_NULLABLE, NULL),
    NUM(band, 0, "ratio"), NUM(not_before_s, 0, "s"), NUM(run_s, JR_NULLABLE, "s"),
    NUM(start_s, JR_NULLABLE, "s"), NUM(end_s, JR_NULLABLE, "s"), NUM(length_s, JR_NULLABLE, "s"),
    NUM(share, JR_NULLABLE, "ratio"), NUM(level, JR_NULLABLE, NULL), WHOLE(requests, 0, "requests"),
    NUM(ttft_p50_ms, JR_NULLABLE, "ms"), NUM(ttft_p99_ms, JR_NULLABLE, "ms"),
    NUM(tpot_p50_ms, JR_NULLABLE, "ms"), NUM(tpot_p99_ms, JR_NULLABLE, "ms"),
    NUM(itl_p50_ms, JR_NULLABLE, "ms"), NUM(itl_p99_ms, JR_NULLABLE, "ms"),
    NUM(e2e_p50_ms, JR_NULLABLE, "ms"), NUM(e2e_p99_ms, JR_NULLABLE, "ms"),
    NUM(output_throughput, JR_NULLABLE, "tok/s"), NUM(request_throughput, JR_NULLABLE, "req/s"),
};
static const struct field_table steady_t = FIELD_TABLE("steady_state", T, steady_rows, present);
#undef T

#define T struct bench_images
static const struct field images_rows[] = {
    WHOLE(per_request, 0, "images"), WHOLE(width, 0, "px"), WHOLE(height, 0, "px"), STR(format, 0),
    NUM(tokens_per_image, JR_NULLABLE, "tokens"),
};
static const struct field_table images_t = FIELD_TABLE("workload.images", T, images_rows, present);
#undef T

#define T struct bench_agentic_turn
static const struct field agentic_turn_rows[] = {
    WHOLE(turn, 0, NULL), WHOLE(requests, 0, "requests"), NUM(time_to_first_output_ms, 0, "ms"),
    NUM(ttft_ms, 0, "ms"), NUM(prompt_tokens, 0, "tokens"), NUM(cached_tokens, 0, "tokens"),
    NUM(think_time_ms, 0, "ms"), NUM(gap_ms, 0, "ms"), WHOLE(sub_agent_requests, 0, "requests"),
    NUM(sub_agent_time_to_first_output_ms, 0, "ms"), NUM(sub_agent_prompt_tokens, 0, "tokens"),
    NUM(sub_agent_cached_tokens, 0, "tokens"),
};
static const struct field_table agentic_turn_t = FIELD_TABLE_ALWAYS("workload.agentic.per_turn", T, agentic_turn_rows);
#undef T

#define T struct bench_agentic
static const struct field agentic_rows[] = {
    STR(source, JR_NULLABLE), WHOLE(sessions, 0, "sessions"), WHOLE(turns, 0, "requests"),
    WHOLE(sub_agent_requests, 0, "requests"), WHOLE(sessions_completed, 0, "sessions"),
    NUM(session_wall_ms_mean, 0, "ms"), NUM(session_wall_ms_p50, 0, "ms"), NUM(session_wall_ms_max, 0, "ms"),
    ARR(per_turn, n_per_turn, 0, 0, &agentic_turn_t),
};
static const struct field_table agentic_t = FIELD_TABLE("workload.agentic", T, agentic_rows, present);
#undef T

#define T struct bench_prefix_cache
static const struct field prefix_cache_rows[] = {
    STR(flush, 0), STR(flush_endpoint, JR_NULLABLE), NUM(target_hit_rate, JR_NULLABLE, "ratio"),
    WHOLE(groups, 0, "prefixes"), WHOLE(primed_requests, 0, "requests"), WHOLE(prefix_tokens, 0, "tokens"),
    NUM(achieved_hit_rate, JR_NULLABLE, "ratio"), NUM(tolerance, 0, "ratio"), BOOL(met, 0),
    NUM(server_hit_rate, JR_NULLABLE, "ratio"), STR(server_hit_rate_source, JR_NULLABLE),
    CUSTOM(server_met, 0, 0, &tristate_codec),
};
static const struct field_table prefix_cache_t = FIELD_TABLE("workload.prefix_cache", T, prefix_cache_rows, present);
#undef T

#define T struct bench_trace
static const struct field trace_rows[] = {
    STR(format, 0), WHOLE(lines, 0, "lines"), WHOLE(requests, 0, "requests"), WHOLE(block_tokens, 0, "tokens"),
    NUM(speed, 0, "x"), NUM(start_s, 0, "s"), NUM(duration_s, JR_NULLABLE, "s"), NUM(span_s, 0, "s"),
    NUM(theoretical_prefix_hit_rate, 0, "ratio"), NUM(measured_prefix_hit_rate, JR_NULLABLE, "ratio"),
    NUM(server_prefix_hit_rate, JR_NULLABLE, "ratio"), STR(server_prefix_hit_rate_source, JR_NULLABLE),
    WHOLE(late_sends, 0, "requests"), NUM(late_send_threshold_ms, 0, "ms"),
};
static const struct field_table trace_t = FIELD_TABLE("workload.trace", T, trace_rows, present);
#undef T

#define T struct bench_workload
static const struct field workload_rows[] = {
    STR(dataset, JR_NULLABLE), NUM(input_len_range, 0, "ratio"), NUM(output_len_range, 0, "ratio"),
    WHOLE(shared_prefix_len, 0, "tokens"), OBJ(images, JR_OPTIONAL, 0, &images_t),
    OBJ(agentic, JR_OPTIONAL, 0, &agentic_t), OBJ(prefix_cache, JR_OPTIONAL, 0, &prefix_cache_t),
    OBJ(trace, JR_OPTIONAL, 0, &trace_t),
};
static const struct field_table workload_t = FIELD_TABLE("workload", T, workload_rows, present);
#undef T

#define T struct bench_sweep
static const struct field sweep_rows[] = {
    STR(target, JR_NONEMPTY), STR(case_id, JR_NONEMPTY), WHOLE_K("round", round, 0, 0, NULL, 1),
};
static const struct field_table sweep_t = FIELD_TABLE("sweep", T, sweep_rows, present);
#undef T

#define T struct bench_loop_lag
static const struct field loop_lag_rows[] = {
    NUM(p50, 0, "ms"), NUM(p99, 0, "ms"), NUM(max, 0, "ms"), WHOLE(samples, 0, "samples"),
};
static const struct field_table loop_lag_t = FIELD_TABLE_ALWAYS("client.loop_lag_ms", T, loop_lag_rows);
#undef T

#define T struct bench_thread_lag
static const struct field thread_lag_rows[] = {
    NUM(p99, 0, "ms"), NUM(max, 0, "ms"), WHOLE(samples, 0, "samples"),
};
static const struct field_table thread_lag_t =
    FIELD_TABLE_ALWAYS("client.per_thread.loop_lag_ms", T, thread_lag_rows);
#undef T

#define T struct bench_arrival_stamps
static const struct field stamps_rows[] = {
    WHOLE(kernel_rx, 0, "reads"), WHOLE(client_clock, 0, "reads"),
};
static const struct field_table stamps_t = FIELD_TABLE_ALWAYS("client.arrival_stamps", T, stamps_rows);
#undef T

#define T struct bench_thread
static const struct field thread_rows[] = {
    WHOLE(requests, 0, "requests"), OBJ(loop_lag_ms, 0, 0, &thread_lag_t),
};
static const struct field_table thread_t = FIELD_TABLE_ALWAYS("client.per_thread", T, thread_rows);
#undef T

#define T struct bench_client
static const struct field client_rows[] = {
    NUM(cpu_user_s, 0, "s"), NUM(cpu_sys_s, 0, "s"), WHOLE(sse_events, 0, "events"),
    NUM(cpu_us_per_event, 0, "us"), NUM(cpu_utilization, 0, "ratio"), OBJ(loop_lag_ms, 0, 0, &loop_lag_t),
    NUM(send_lateness_p99_ms, 0, "ms"), OBJ(arrival_stamps, 0, 0, &stamps_t),
    CUSTOM(threads, OPT, 0, &positive_codec),   /* threads, transport, per_thread: absent or null in older files */
    STR(transport, OPT),
    ARR(per_thread, n_per_thread, OPT, FW_OMIT_NONE, &thread_t),
    /* the peak and the ceiling: absent in older files */
    WHOLE(peak_events_per_s_per_thread, OPT, "events/s"), NUM(ceiling_events_per_s, OPT, "events/s"),
    NUM(ceiling_share, OPT, "ratio"), STR(ceiling_measured_at, OPT),
};
static const struct field_table client_t = FIELD_TABLE("client", T, client_rows, present);
#undef T

/* The methodology's entries in anvil's order (a file may hold any of them). */
#define T struct bench_methodology
#define ENTRY(k) STR_K(#k, k, JR_OPTIONAL, FW_OMIT_NONE),
static const struct field methodology_rows[] = {
    ENTRY(clock) ENTRY(request_start) ENTRY(ttft) ENTRY(time_to_first_output) ENTRY(e2e) ENTRY(generation)
    ENTRY(tpot) ENTRY(mean_inter_token_latency) ENTRY(decode) ENTRY(effective_prefill) ENTRY(output_tokens)
    ENTRY(itl) ENTRY(throughput) ENTRY(distributions) ENTRY(percentile_method)
};
#undef ENTRY
static const struct field_table methodology_t = FIELD_TABLE("timing_methodology", T, methodology_rows, present);
#undef T

#define T struct bench_energy
static const struct field energy_rows[] = {
    NUM(energy_j, OPT, "J"), NUM(output_tokens_per_joule, OPT, "tokens/J"), NUM(joules_per_output_token, OPT, "J/token"),
};
static const struct field_table energy_t = FIELD_TABLE("metrics.energy", T, energy_rows, present);
#undef T

/* A distribution of `metrics` (artifact_add_dist's keys): seed 001 names
 * times <base>_<stat>_ms (sfx "_ms") and other units <base>_<stat>. */
#define STAT(d, base, stat, sfx, u) NUM_K(base "_" #stat sfx, dist.d.stat, OPT, 0, u)
/* The same distribution under an older base: read where a file has it, never written. */
#define STAT_OLD(d, base, stat, sfx, u) NUM_K(base "_" #stat sfx, dist.d.stat, OPT, FW_READONLY, u)
#define DIST_OLD(d, base, sfx, u)                                                                 \
    STAT_OLD(d, base, mean, sfx, u), STAT_OLD(d, base, min, sfx, u), STAT_OLD(d, base, max, sfx, u), \
    STAT_OLD(d, base, p25, sfx, u), STAT_OLD(d, base, p50, sfx, u), STAT_OLD(d, base, p75, sfx, u),  \
    STAT_OLD(d, base, p90, sfx, u), STAT_OLD(d, base, p95, sfx, u), STAT_OLD(d, base, p99, sfx, u),  \
    CUSTOM_K(base "_samples", dist.d.samples, OPT, FW_READONLY, &size_codec)
#define DIST(d, base, sfx, u)                                                                     \
    STAT(d, base, mean, sfx, u), STAT(d, base, min, sfx, u), STAT(d, base, max, sfx, u),          \
    STAT(d, base, p25, sfx, u), STAT(d, base, p50, sfx, u), STAT(d, base, p75, sfx, u),           \
    STAT(d, base, p90, sfx, u), STAT(d, base, p95, sfx, u), STAT(d, base, p99, sfx, u),           \
    CUSTOM_K(base "_samples", dist.d.samples, OPT, 0, &size_codec)

#define T struct bench_metrics
static const struct field metrics_rows[] = {
    DIST(ttft, "ttft", "_ms", "ms"),
    DIST(time_to_first_output, "time_to_first_output", "_ms", "ms"),
    DIST(e2e, "e2e", "_ms", "ms"),
    DIST(generation, "generation", "_ms", "ms"),
    DIST(tpot, "tpot", "_ms", "ms"),
    DIST(mean_inter_token_latency, "mean_inter_token_latency_ms", "", "ms"),   /* seed 001's alias of tpot */
    DIST(decode_tok_s, "decode_tok_s", "", "tok/s"),
    DIST(effective_prefill_tok_s, "effective_prefill_tok_s", "", "tok/s"),
    DIST(prompt_tokens, "prompt_tokens", "", "tokens"),
    /* anvil's additions */
    DIST(visible_generation, "visible_generation", "_ms", "ms"),
    DIST(output_tokens_per_request, "output_tokens_per_request", "", "tokens"),
    DIST(itl, "itl", "_ms", "ms"),
    /* 0: exact; past 262,144 gaps a histogram's bound (stats/hist.h); absent in older artifacts */
    NUM_K("itl_percentile_rel_error", dist.itl.rel_error, OPT, FW_OMIT_NONE, "ratio"),
    DIST(itl_per_token, "itl_per_token", "_ms", "ms"),
    NUM_K("itl_per_token_percentile_rel_error", dist.itl_per_token.rel_error, OPT, FW_OMIT_NONE, "ratio"),
    DIST(tokens_per_chunk, "tokens_per_chunk", "", "tokens"),
    DIST(time_to_headers, "time_to_headers", "_ms", "ms"),
    DIST(time_to_first_byte, "time_to_first_byte", "_ms", "ms"),
    DIST(time_to_first_event, "time_to_first_event", "_ms", "ms"),
    DIST(time_to_second_output, "time_to_second_output", "_ms", "ms"),
    /* output tokens / generation time; earlier artifacts called it output_tps_per_user, the
     * name seed 004 gives (n − 1) / (latency − ttft) (docs/METHODOLOGY.md, "The metric registry") */
    DIST(generation_tps_per_user, "generation_tps_per_user", "", "tok/s"),
    DIST_OLD(generation_tps_per_user, "output_tps_per_user", "", "tok/s"),
    DIST(send_lateness, "send_lateness", "_ms", "ms"),
    DIST(scheduled_ttft, "scheduled_ttft", "_ms", "ms"),
    DIST(scheduled_e2e, "scheduled_e2e", "_ms", "ms"),
    WHOLE(content_chunks, OPT, "chunks"), NUM(content_chunks_s, OPT, NULL), WHOLE(reasoning_chunks, OPT, "chunks"),
    WHOLE(tool_call_chunks, OPT, "chunks"), WHOLE(tool_calls, OPT, "calls"),
    CUSTOM(output_token_sources, OPT, 0, &counts_codec),
    WHOLE(output_tokens, OPT, "tokens"), WHOLE(prompt_tokens, OPT, "tokens"),
    WHOLE(prompt_token_samples, OPT, "requests"), NUM(prefix_cache_hit_avg, OPT, "ratio"),
    NUM(throughput_tok_s, OPT, "tok/s"), NUM(request_throughput, OPT, "req/s"),
    NUM(output_throughput, OPT, "tok/s"), NUM(total_token_throughput, OPT, "tok/s"),
    NUM(goodput_rps, OPT, "req/s"), NUM(aggregate_tps, OPT, "tok/s"), NUM(peak_output_tps_1s, OPT, "tok/s"),
    OBJ(energy, JR_OPTIONAL, FW_INLINE, &energy_t),         /* there when energy_j is */
};
static const struct field_table metrics_t = FIELD_TABLE_ALWAYS("metrics", T, metrics_rows);
#undef T
#undef DIST
#undef STAT

/* One request_timings entry: seed 001's fields are required, anvil's
 * additions optional. */
#define T struct bench_timing
static const struct field timing_rows[] = {
    WHOLE(content_chunks, 0, "chunks"), NUM(decode_tok_s, 0, "tok/s"), NUM(e2e_ms, 0, "ms"),
    NUM(effective_prefill_tok_s, 0, "tok/s"), NUM(generation_ms, 0, "ms"),
    NUM(mean_inter_token_latency_ms, 0, "ms"), STR(output_token_source, 0), WHOLE(output_tokens, 0, "tokens"),
    NUM(planned_context_tokens, 0, "tokens"), NUM(prompt_tokens, 0, "tokens"),
    WHOLE(reasoning_chunks, 0, "chunks"), WHOLE(request_index, 0, NULL), NUM(time_to_first_output_ms, 0, "ms"),
    NUM(tpot_ms, 0, "ms"), NUM(ttft_ms, 0, "ms"), NUM(visible_generation_ms, 0, "ms"),
    /* anvil's additions: the TTFT decomposition and what the stream held */
    NUM(time_to_headers_ms, OPT, "ms"), NUM(time_to_first_byte_ms, OPT, "ms"),
    NUM(time_to_first_event_ms, OPT, "ms"), NUM(time_to_second_output_ms, OPT, "ms"),
    NUM(generation_tps_per_user, OPT, "tok/s"), NUM_K("output_tps_per_user", generation_tps_per_user, OPT, FW_READONLY, "tok/s"),
    NUM(send_lateness_ms, OPT, "ms"), NUM(scheduled_ttft_ms, OPT, "ms"),
    NUM(scheduled_e2e_ms, OPT, "ms"), NUM(e2e_output_tps_per_user, OPT, "tok/s"),
    WHOLE(output_chunks, OPT, "chunks"), WHOLE(tool_call_chunks, OPT, "chunks"), WHOLE(tool_calls, OPT, "calls"),
    NUM(cached_tokens, OPT, "tokens"), STR(finish_reason, OPT), WHOLE(max_tokens, OPT, "tokens"),
    NUM(start_monotonic_ns, OPT, "ns"), BOOL(first_output_merged, JR_OPTIONAL),
    STR_K("trace_id", trace_id, OPT, FW_OMIT_NONE),
};
static const struct field_table timing_t = FIELD_TABLE_ALWAYS("request_timings", T, timing_rows);
#undef T

#define T struct bench_failure
static const struct field failure_rows[] = {
    WHOLE(request_index, 0, NULL), STR(category, 0), WHOLE(http_status, JR_NULLABLE, NULL), STR(phase, 0),
    STR(message, 0), NUM(elapsed_ms, 0, "ms"), STR_K("trace_id", trace_id, OPT, FW_OMIT_NONE),
};
static const struct field_table failure_t = FIELD_TABLE_ALWAYS("failures", T, failure_rows);
#undef T

#define T struct bench_ts_server
static const struct field ts_server_rows[] = {
    NUM(running_requests, OPT, "requests"), NUM(waiting_requests, OPT, "requests"),
    NUM(kv_cache_usage, OPT, "ratio"),
};
static const struct field_table ts_server_t = FIELD_TABLE("timeseries.rows.server", T, ts_server_rows, present);
#undef T

#define T struct bench_ts_gpu
static const struct field ts_gpu_rows[] = {
    NUM(util_pct, OPT, "%"), NUM(power_w, OPT, "W"), NUM(temp_c, OPT, "C"), NUM(mem_used_mb, OPT, "MiB"),
};
static const struct field_table ts_gpu_t = FIELD_TABLE("timeseries.rows.gpu", T, ts_gpu_rows, present);
#undef T

#define T struct bench_ts_row
static const struct field ts_row_rows[] = {
    NUM(t_s, 0, "s"), WHOLE(started, 0, "requests"), WHOLE(completed, 0, "requests"),
    WHOLE(failed, 0, "requests"), WHOLE(cut, 0, "requests"), WHOLE(output_tokens, 0, "tokens"),
    WHOLE(in_flight, 0, "requests"), NUM(ttft_p50_ms, 0, "ms"), NUM(ttft_p99_ms, 0, "ms"),
    NUM(itl_p50_ms, 0, "ms"), NUM(itl_p99_ms, 0, "ms"), WHOLE(ttft_samples, 0, "samples"),
    WHOLE(itl_samples, 0, "samples"), OBJ(server, OPT, FW_NULL, &ts_server_t), OBJ(gpu, OPT, FW_NULL, &ts_gpu_t),
};
static const struct field_table ts_row_t = FIELD_TABLE_ALWAYS("timeseries.rows", T, ts_row_rows);
#undef T

#define T struct bench_timeseries
static const struct field timeseries_rows[] = {
    NUM(interval_s, 0, "s"), NUM(requested_interval_s, 0, "s"), NUM(exact_from_s, 0, "s"),
    NUM(t0_monotonic_ns, 0, "ns"), WHOLE(late_requests, 0, "requests"), ARR(rows, n_rows, 0, 0, &ts_row_t),
};
static const struct field_table timeseries_t = FIELD_TABLE("timeseries", T, timeseries_rows, present);
#undef T

/* The document: seed 001's top level in anvil's order of writing, then
 * anvil's additions. */
#define T struct benchmark
static const struct field benchmark_rows[] = {
    CUSTOM(schema, 0, 0, &schema_codec),
    STR(measurement_protocol, OPT), STR(run_id, OPT), STR(started_at, OPT), STR(finished_at, OPT),
    STR(base_url, OPT), STR(model, OPT), STR(engine, JR_NONEMPTY), STR(gpu, OPT),
    WHOLE(concurrency, 0, "requests"), WHOLE(requests, OPT, "requests"), WHOLE(completed, 0, "requests"),
    WHOLE(failed, 0, "requests"), NUM(context_tokens, 0, "tokens"), NUM(context_tokens_measured, OPT, "tokens"),
    WHOLE(context_seed, OPT, NULL), NUM(max_context_tokens, OPT, "tokens"), STR(max_context_source, OPT),
    NUM(max_input_tokens, OPT, "tokens"), WHOLE(max_tokens, 0, "tokens"), NUM(wall_clock_ms, OPT, "ms"),
    /* JSON kept as found (seed 001's manifest, source_recipe, tier), null when absent */
    CUSTOM(manifest, JR_OPTIONAL, 0, &field_json_codec), CUSTOM(source_recipe, JR_OPTIONAL, 0, &field_json_codec),
    CUSTOM(tier, JR_OPTIONAL, 0, &field_json_codec), OBJ(serve_flags, JR_OPTIONAL, 0, &serve_flags_t),
    CUSTOM(context_distribution, OPT, 0, &counts_codec),
    /* anvil's additions */
    STR(endpoint, OPT), STR(engine_detected, OPT), STR(engine_version, OPT),
    WHOLE(warmup_requests, OPT, "requests"), NUM(request_rate, OPT, "req/s"),
    NUM_K("burstiness", burstiness, OPT | JR_INF, FW_INF, NULL),    /* "inf": constant gaps */
    NUM(achieved_request_rate, OPT, "req/s"), STR(load_mode, OPT), OBJ(slo, JR_OPTIONAL, 0, &slo_t),
    WHOLE_K("good_requests", good_requests, OPT, FW_OMIT_NONE, "requests", 0),     /* only with SLOs */
    NUM_K("good_request_share", good_request_share, OPT, FW_WITH_PREV, "ratio"),
    WHOLE(prewarmed_connections, OPT, "connections"), BOOL(ignore_eos, JR_OPTIONAL),
    WHOLE(not_sent, OPT, "requests"), BOOL(incomplete, JR_OPTIONAL), STR(incomplete_reason, OPT),
    WHOLE(ignore_eos_violations, OPT, "requests"), CUSTOM(invariants, JR_OPTIONAL, 0, &invariants_codec),
    WHOLE(prompt_token_mismatches, OPT, "requests"), WHOLE(usage_over_max_tokens, OPT, "requests"),
    BOOL(cache_contaminated, JR_OPTIONAL), WHOLE(journal_lines_lost, OPT, "lines"),
    /* absent in older artifacts, and then left out */
    WHOLE_K("max_request_rows", max_request_rows, OPT, FW_OMIT_NONE, "requests", 0),
    WHOLE_K("request_rows_left_out", request_rows_left_out, OPT, FW_OMIT_NONE, "requests", 0),
    NUM(shared_prefix_tokens, OPT, "tokens"), OBJ(server_gone, JR_OPTIONAL, 0, &server_gone_t),
    OBJ(server_stalled, JR_OPTIONAL, 0, &server_stalled_t), CUSTOM(failed_by_category, OPT, 0, &counts_codec),
    OBJ(calibration, JR_OPTIONAL, 0, &calibration_t), OBJ(duration_mode, OPT, FW_NULL, &duration_t),
    OBJ(ramp, JR_OPTIONAL, 0, &ramp_t),
    OBJ(steady_state, JR_OPTIONAL, 0, &steady_t),
    OBJ(workload, JR_OPTIONAL, 0, &workload_t), OBJ(sweep, OPT, FW_NULL, &sweep_t),
    OBJ(client, JR_OPTIONAL, 0, &client_t), BOOL(client_bound, JR_OPTIONAL), STR(client_bound_reason, OPT),
    WHOLE(first_output_merged_requests, OPT, "requests"), CUSTOM(provenance, JR_OPTIONAL, 0, &provenance_codec),
    OBJ(timing_methodology, JR_OPTIONAL, 0, &methodology_t), OBJ(metrics, 0, 0, &metrics_t),
    ARR(request_timings, n_request_timings, OPT, 0, &timing_t), ARR(failures, n_failures, OPT, 0, &failure_t),
    /* what the server and the hardware said, and the ranks: kept as found */
    CUSTOM(server_metrics, JR_OPTIONAL, 0, &observed_codec), CUSTOM(hardware, JR_OPTIONAL, 0, &observed_codec),
    CUSTOM(hardware_run_summary, OPT, 0, &observed_codec), OBJ(timeseries, JR_OPTIONAL, 0, &timeseries_t),
    CUSTOM(ranks, JR_OPTIONAL, 0, &ranks_codec),
};
const struct field_table benchmark_fields = FIELD_TABLE_ALWAYS("benchmark", T, benchmark_rows);
#undef T

const struct field_table *const *benchmark_field_tables(size_t *n)
{
    static const struct field_table *const all[] = {
        &benchmark_fields, &serve_flags_t, &slo_t, &server_gone_t, &server_stalled_t, &calibration_t,
        &calib_search_t, &calib_step_t, &duration_t, &ramp_t, &steady_t, &workload_t, &images_t, &agentic_t,
        &agentic_turn_t,
        &prefix_cache_t, &trace_t, &sweep_t, &client_t, &loop_lag_t, &stamps_t, &thread_t, &thread_lag_t,
        &methodology_t, &metrics_t, &energy_t, &timing_t, &failure_t,
        &timeseries_t, &ts_row_t, &ts_server_t, &ts_gpu_t,
    };
    *n = sizeof all / sizeof *all;
    return all;
}

/* ---- distributions (for writers outside these tables) ---- */

/* The key of statistic stat of the distribution base (as DIST's rows). */
static void stat_key(char *k, size_t cap, const char *base, bool ms, const char *stat)
{
    snprintf(k, cap, "%s_%s%s", base, stat, ms ? "_ms" : "");
}

void artifact_add_dist(cJSON *o, const char *base, bool ms, const struct dist *d)
{
    const char *names[3] = {"mean", "min", "max"};
    double vals[3] = {d->mean, d->min, d->max};
    char k[96];
    for (int i = 0; i < 3; i++) {
        stat_key(k, sizeof k, base, ms, names[i]);
        artifact_add_number(o, k, vals[i]);
    }
    for (int i = 0; i < DIST_NPCT; i++) {
        stat_key(k, sizeof k, base, ms, dist_pct_names[i]);
        artifact_add_number(o, k, dist_pct_of(d, i));
    }
    snprintf(k, sizeof k, "%s_samples", base);
    size_write(o, k, &d->samples);
}

/* ---- the document ---- */

cJSON *benchmark_timing_json(const struct bench_timing *t)
{
    return fields_to_json(&timing_t, t);
}

cJSON *benchmark_failure_json(const struct bench_failure *f)
{
    return fields_to_json(&failure_t, f);
}

cJSON *benchmark_timeseries_json(const struct bench_timeseries *t)
{
    return fields_to_json(&timeseries_t, t);
}

cJSON *benchmark_to_json(const struct benchmark *b)
{
    return fields_to_json(&benchmark_fields, b);
}

/* What no row says: client.per_thread has one entry per thread. */
static void check_threads(struct jread *r, const struct bench_client *c)
{
    if (r->failed || !c->per_thread || c->n_per_thread == (size_t)c->threads)
        return;
    size_t mark = jread_enter(r, "client");
    jread_fail(r, "per_thread", "has %zu entries for %ld threads", c->n_per_thread, c->threads);
    jread_leave(r, mark);
}

int benchmark_from_json(const cJSON *j, const char *name, struct benchmark *out, char *err,
                        size_t errlen)
{
    struct jread r;
    *out = (struct benchmark){0};
    if (jread_document(&r, j, name, err, errlen) != 0)
        return -1;
    fields_read(&r, j, &benchmark_fields, out);
    check_threads(&r, &out->client);
    if (r.failed) {
        benchmark_free(out);
        return -1;
    }
    return 0;
}

int benchmark_read_file(const char *path, struct benchmark *out, char *sha_out, char *err,
                        size_t errlen)
{
    *out = (struct benchmark){0};
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read", path);
        return -1;
    }
    if (sha_out && sha256_hex(text, len, sha_out) != 0)
        sha_out[0] = '\0';
    cJSON *j = artifact_parse(text, len, path, err, errlen);
    int rc = j ? benchmark_from_json(j, path, out, err, errlen) : -1;
    cJSON_Delete(j);
    free(text);
    return rc;
}

void benchmark_free(struct benchmark *b)
{
    fields_free(&benchmark_fields, b);
    *b = (struct benchmark){0};
}
