/* test_benchmark.c — the typed benchmark/v1 artifact: every field table
 * survives a generated round trip, write ∘ read gives back the bytes anvil
 * wrote, seed 001 reads with its real values, and a missing or mistyped key
 * is an error naming the file and the key path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "artifact/benchmark.h"
#include "artifact/benchmark_fields.h"
#include "fields_sample.h"
#include "testutil.h"

/* ---- the field tables: one round trip per table ---- */

/* Every table of the artifact: each row filled with a value of its own,
 * written, read back and compared row by row (tests/unit/fields_sample.h),
 * so a row the writer or the reader skips fails. */
Test(benchmark, every_table_survives_a_generated_round_trip)
{
    size_t n;
    const struct field_table *const *t = benchmark_field_tables(&n);
    cr_assert_geq(n, 26);
    for (size_t i = 0; i < n; i++) {
        char why[256] = "";
        cr_assert(fields_sample_round_trip(t[i], why, sizeof why), "%s: %s", t[i]->name, why);
    }
}

/* The tables list every table the document's rows reach. */
static void reached(const struct field *f, const char *path, void *ctx)
{
    (void)path;
    if (!f->sub)
        return;
    size_t n;
    const struct field_table *const *t = benchmark_field_tables(&n);
    bool listed = false;
    for (size_t i = 0; i < n; i++)
        listed |= t[i] == f->sub;
    cr_assert(listed, "%s's table is not in benchmark_field_tables", f->key);
    ++*(int *)ctx;
}

Test(benchmark, the_table_list_holds_every_nested_table)
{
    int subs = 0;
    fields_walk(&benchmark_fields, "", reached, &subs);
    cr_assert_geq(subs, 23);
}

/* Every number-valued row names its unit unless it is a count of nothing
 * in particular or an index: a key ending in _ms, _s, _ns, _tok_s or
 * X_per_s (X/s) has its unit. */
static void unit_of_suffix(const struct field *f, const char *path, void *ctx)
{
    (void)ctx;
    if (f->kind != FIELD_NUMBER || !strcmp(f->key, "content_chunks_s"))  /* seed 001's, always null */
        return;
    size_t n = strlen(f->key);
    char per[64] = "";      /* X_per_s: X/s (ceiling_events_per_s: events/s) */
    if (n > 6 && !strcmp(f->key + n - 6, "_per_s")) {
        const char *w = f->key + n - 6;
        while (w > f->key && w[-1] != '_')
            w--;
        snprintf(per, sizeof per, "%.*s/s", (int)(f->key + n - 6 - w), w);
    }
    const char *want = per[0] ? per
                     : n > 3 && !strcmp(f->key + n - 3, "_ms") ? "ms"
                     : n > 6 && !strcmp(f->key + n - 6, "_tok_s") ? "tok/s"
                     : n > 3 && !strcmp(f->key + n - 3, "_ns") ? "ns"
                     : n > 2 && !strcmp(f->key + n - 2, "_s") ? "s" : NULL;
    if (want)
        cr_assert(f->unit && !strcmp(f->unit, want), "%s: unit %s, want %s", path, f->unit ? f->unit : "none", want);
}

Test(benchmark, rows_carry_the_unit_their_key_names)
{
    fields_walk(&benchmark_fields, "", unit_of_suffix, NULL);
}

/* ---- whole artifacts: write ∘ read is the identity ---- */

/* Artifacts written by anvil before its reader and writer became tables:
 * every field at a value of its own (every-field.json: SLOs, calibration
 * search with a refused and a truncated probe, energy, invariants, threads,
 * observation blocks) and real runs, cut to two request_timings. */
static const char *const written[] = {
    "tests/data/benchmark/every-field.json", "tests/data/benchmark/run-slo.json",
    "tests/data/benchmark/run-agentic.json", "tests/data/benchmark/run-duration.json",
    "tests/data/benchmark/run-trace.json", "tests/data/benchmark/run-prefix.json",
    "tests/data/benchmark/run-images.json",
};

static cJSON *parse_file(const char *path)
{
    char *text = tu_read_file(path, NULL);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert(j, "%s", path);
    return j;
}

/* j read, written and printed (artifact_print). */
static char *rewritten(const cJSON *j, const char *name)
{
    struct benchmark b;
    char err[256];
    cr_assert_eq(benchmark_from_json(j, name, &b, err, sizeof err), 0, "%s", err);
    cJSON *w = benchmark_to_json(&b);
    benchmark_free(&b);
    char *text = artifact_print(w);
    cJSON_Delete(w);
    return text;
}

/* The first line where a and b differ, for the message. */
static int first_difference(const char *a, const char *b)
{
    int line = 1;
    for (; *a && *a == *b; a++, b++)
        line += *a == '\n';
    return line;
}

Test(benchmark, write_of_read_gives_back_the_same_bytes)
{
    for (size_t i = 0; i < sizeof written / sizeof *written; i++) {
        cJSON *j = parse_file(written[i]);
        char *want = artifact_print(j), *got = rewritten(j, written[i]);
        cr_assert_str_eq(got, want, "%s: differs from line %d", written[i], first_difference(got, want));
        free(want);
        free(got);
        cJSON_Delete(j);
    }
}

/* What every-field.json holds in the fields custom codecs read, by value. */
Test(benchmark, custom_fields_read_their_values)
{
    struct benchmark b;
    char err[256];
    cr_assert_eq(benchmark_read_file(written[0], &b, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(b.schema, BENCHMARK_SCHEMA);
    cr_assert_eq(b.context_distribution.n, 3);
    cr_assert_str_eq(b.context_distribution.v[2].key, "s157");
    cr_assert_eq(b.context_distribution.v[2].count, 158);
    cr_assert(cJSON_IsArray(cJSON_GetObjectItem(b.manifest, "a")));
    cr_assert(cJSON_IsNull(b.hardware_run_summary), "a null kept as null");
    cr_assert(b.invariants.present);
    cr_assert_eq(b.invariants.v.n_examples, 2);
    cr_assert_str_eq(invariant_name(b.invariants.v.examples[1].what), "ignore_eos");
    cr_assert_str_eq(b.invariants.v.examples[1].detail, "detail 171");
    const struct bench_calib_search *s = &b.calibration.search;
    cr_assert(s->present && s->converged);
    cr_assert_eq(s->n_steps, 3);
    cr_assert_eq(s->steps[1].tokens, ARTIFACT_NONE, "a refused probe: null");
    cr_assert(s->steps[2].truncated && !s->steps[1].truncated);
    cr_assert_eq(b.workload.prefix_cache.server_met, 1);
    cr_assert_eq(b.client.threads, 2);
    cr_assert_eq(b.client.per_thread[1].loop_lag_ms.samples, 152);
    cr_assert_eq(b.client.per_thread[1].loop_lag_ms.p99, 150.25);
    cr_assert(b.metrics.energy.present);
    cr_assert_eq(b.metrics.energy.energy_j, 12.5);
    cr_assert(isnan(b.metrics.energy.output_tokens_per_joule));
    cr_assert_eq(b.metrics.dist.scheduled_e2e.samples, 419);
    cr_assert(isinf(b.burstiness));
    cr_assert_eq(b.good_requests, 33);
    cr_assert(b.provenance.present);
    cr_assert_eq(b.provenance.n_command_line, 3);
    benchmark_free(&b);
}

/* Whether every value of a is in b with the same value (objects may hold
 * more keys in b); counts the values kept and the keys missing from b. */
static void within(const cJSON *a, const cJSON *b, const char *path, int *kept, int *dropped)
{
    if (!(cJSON_IsObject(a) && cJSON_IsObject(b)) && !(cJSON_IsArray(a) && cJSON_IsArray(b))) {
        cr_assert(cJSON_Compare(a, b, true), "%s: not the seed's value", path);
        ++*kept;
        return;
    }
    if (cJSON_IsArray(a))
        cr_assert_eq(cJSON_GetArraySize(a), cJSON_GetArraySize(b), "%s: length", path);
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, a) {
        char sub[256];
        if (e->string)
            snprintf(sub, sizeof sub, "%s.%s", path, e->string);
        else
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
        const cJSON *x = e->string ? cJSON_GetObjectItemCaseSensitive(b, e->string) : cJSON_GetArrayItem(b, i);
        i++;
        if (!x) {
            cr_log_warn("%s: not read", sub);
            ++*dropped;
            continue;
        }
        within(e, x, sub, kept, dropped);
    }
}

/* Nulls and absent blocks survive: seed 001 lacks anvil's additions, so
 * what anvil writes of it is mostly null or absent; reading that and
 * writing it again gives the same bytes, and every key of the seed anvil
 * reads is written with the seed's value. */
Test(benchmark, nulls_and_absent_blocks_survive_and_seed001_keeps_its_values)
{
    cJSON *seed = parse_file("tests/data/seed-001.json");
    char *once = rewritten(seed, "seed-001.json");
    cJSON *w = cJSON_Parse(once);
    char *twice = rewritten(w, "once.json");
    cr_assert_str_eq(twice, once, "differs from line %d", first_difference(twice, once));
    int kept = 0, dropped = 0;
    within(seed, w, "", &kept, &dropped);
    cr_assert_eq(kept, 390, "every value of the seed: %d", kept);
    cr_assert_eq(dropped, 0);
    free(once);
    free(twice);
    cJSON_Delete(w);
    cJSON_Delete(seed);
}

/* ---- seed 001 ---- */

Test(benchmark, reads_seed001_with_its_values)
{
    struct benchmark b;
    char err[256], sha[65];
    cr_assert_eq(benchmark_read_file("tests/data/seed-001.json", &b, sha, err, sizeof err), 0, "%s", err);
    cr_assert_eq(strlen(sha), 64);
    cr_assert_str_eq(b.measurement_protocol, "capacity-v3");
    cr_assert_str_eq(b.run_id, "benchmark-20260905T034617Z");
    cr_assert_str_eq(b.engine, "sglang");
    cr_assert_str_eq(b.model, "qwen38-27b-inferact-nvfp4-pro6000-dflash2-k12-chunk1k-mamba40");
    cr_assert_str_eq(b.gpu, "Primary Node / RTX PRO 6000 Blackwell Max-Q / TP=1");
    cr_assert_eq(b.concurrency, 8);
    cr_assert_eq(b.requests, 16);
    cr_assert_eq(b.completed, 16);
    cr_assert_eq(b.failed, 0);
    cr_assert_eq(b.context_tokens, 4096);
    cr_assert_eq(b.context_distribution.n, 1);
    cr_assert_str_eq(b.context_distribution.v[0].key, "4096");
    cr_assert_eq(b.context_distribution.v[0].count, 16);
    cr_assert_eq(b.context_seed, 0);
    cr_assert_eq(b.max_context_tokens, 262144);
    cr_assert_eq(b.max_tokens, 512);
    cr_assert_eq(b.wall_clock_ms, 1649.7957999818027);
    cr_assert_null(b.manifest);
    cr_assert(b.serve_flags.present && !b.serve_flags.no_thinking);
    cr_assert_str_eq(b.serve_flags.thinking_mode, "disabled");
    cr_assert_null(b.serve_flags.reasoning_effort);
    cr_assert_str_eq(b.timing_methodology.clock, "client time.perf_counter");
    cr_assert_null(b.timing_methodology.request_start, "an entry seed 001 does not have");
    const struct bench_metrics *m = &b.metrics;
    cr_assert_eq(m->dist.ttft.p50, 184.22580009792);
    cr_assert_eq(m->dist.ttft.samples, 16);
    cr_assert_eq(m->dist.tpot.p99, 16.090928001794964);
    cr_assert_eq(m->dist.e2e.min, 621.0167999379337);
    cr_assert_eq(m->dist.decode_tok_s.p25, 73.59704660750094);
    cr_assert_eq(m->dist.mean_inter_token_latency.p90, 14.522662069166786);
    cr_assert_eq(m->dist.prompt_tokens.mean, 3613.375);
    cr_assert_eq(m->dist.itl.samples, 0, "seed 001 has no per-chunk ITL");
    cr_assert(isnan(m->dist.itl.p50));
    cr_assert_eq(m->content_chunks, 232);
    cr_assert_eq(m->output_tokens, 790);
    cr_assert_eq(m->prompt_tokens, 57814);
    cr_assert_eq(m->throughput_tok_s, 478.84713975433425);
    cr_assert(isnan(m->prefix_cache_hit_avg));
    cr_assert_eq(m->output_token_sources.n, 1);
    cr_assert_str_eq(m->output_token_sources.v[0].key, "usage");
    cr_assert_eq(m->output_token_sources.v[0].count, 16);
    cr_assert_eq(b.n_request_timings, 16);
    const struct bench_timing *t = &b.request_timings[0];
    cr_assert_eq(t->e2e_ms, 738.2585000013933);
    cr_assert_eq(t->ttft_ms, 185.5957000516355);
    cr_assert_eq(t->output_tokens, 48);
    cr_assert_eq(t->prompt_tokens, 3613);
    cr_assert_str_eq(t->output_token_source, "usage");
    cr_assert(isnan(t->time_to_headers_ms), "anvil's additions are absent");
    cr_assert_eq(b.request_timings[15].request_index, 15);
    cr_assert_eq(b.request_timings[15].prompt_tokens, 3614);
    cr_assert_eq(b.n_failures, 0);
    cr_assert_null(b.endpoint);
    cr_assert_eq(b.not_sent, ARTIFACT_NONE);
    cr_assert_not(b.incomplete);
    cr_assert_not(b.client.present);
    cr_assert_not(b.sweep.present);
    cr_assert_not(b.provenance.present);
    benchmark_free(&b);
}

/* ---- errors ---- */

/* The member named by one path segment: "key" or "key[index]". */
static cJSON *member(cJSON *o, const char *seg)
{
    char name[64];
    const char *br = strchr(seg, '[');
    snprintf(name, sizeof name, "%.*s", (int)(br ? (size_t)(br - seg) : strlen(seg)), seg);
    cJSON *v = cJSON_GetObjectItem(o, name);
    return br ? cJSON_GetArrayItem(v, atoi(br + 1)) : v;
}

/* Seed 001 with one change (the member at path "a.b[2].c" set to the JSON
 * value, or deleted when value is NULL), read under the name "x.json": the
 * read must fail; its message goes into err. */
static void read_changed(const char *path, const char *value, char *err, size_t errlen)
{
    char *text = tu_read_file("tests/data/seed-001.json", NULL);
    cJSON *j = cJSON_Parse(text);
    free(text);
    char segs[128];
    snprintf(segs, sizeof segs, "%s", path);
    cJSON *o = j;
    char *last = segs;
    for (char *dot; o && (dot = strchr(last, '.')); last = dot + 1) {
        *dot = '\0';
        o = member(o, last);
    }
    cr_assert(o, "%s", path);
    if (value)
        cJSON_ReplaceItemInObject(o, last, cJSON_Parse(value));
    else
        cJSON_DeleteItemFromObject(o, last);
    struct benchmark b;
    int rc = benchmark_from_json(j, "x.json", &b, err, errlen);
    cJSON_Delete(j);
    cr_assert_eq(rc, -1, "%s %s is accepted", path, value ? value : "deleted");
    benchmark_free(&b);
}

Test(benchmark, missing_or_mistyped_keys_name_the_file_and_the_key)
{
    struct { const char *path, *value, *want; } cases[] = {
        {"completed", NULL, "x.json: completed: missing"},
        {"metrics", NULL, "x.json: metrics: missing"},
        {"context_tokens", NULL, "x.json: context_tokens: missing"},
        {"metrics.ttft_p50_ms", "\"fast\"", "x.json: metrics.ttft_p50_ms: expected a number, got a string"},
        {"concurrency", "8.5", "x.json: concurrency: expected a whole number ≥ 0, got 8.5"},
        {"engine", "null", "x.json: engine: expected a non-empty string, got null"},
        {"schema", "\"anvil-serving.matrix/v1\"", "x.json: schema: expected \"anvil-serving.benchmark/v1\""},
        {"request_timings[3].e2e_ms", NULL, "x.json: request_timings[3].e2e_ms: missing"},
        {"request_timings[2].output_tokens", "\"48\"", "x.json: request_timings[2].output_tokens: expected a whole number"},
        {"serve_flags.no_thinking", "0", "x.json: serve_flags.no_thinking: expected true or false, got a number"},
        {"context_distribution.4096", "-1", "x.json: context_distribution.4096: expected a whole number ≥ 0"},
        {"failures", "{}", "x.json: failures: expected an array, got an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[256];
        read_changed(cases[i].path, cases[i].value, err, sizeof err);
        cr_assert(strstr(err, cases[i].want) == err, "case %zu: '%s', want '%s'", i, err, cases[i].want);
        cr_assert_null(strchr(err, '\n'), "one line");
    }
}

Test(benchmark, errors_inside_anvil_blocks_name_the_path)
{
    cJSON *j = parse_file(written[0]);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "provenance"), "cpu_cores", cJSON_CreateString("two"));
    char err[256];
    struct benchmark b;
    cr_assert_eq(benchmark_from_json(j, "r.json", &b, err, sizeof err), -1);
    cr_assert_str_eq(err, "r.json: provenance.cpu_cores: expected a whole number ≥ 1, got a string");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "client"), "loop_lag_ms"), "p99");
    cJSON_DeleteItemFromObject(j, "provenance");
    cr_assert_eq(benchmark_from_json(j, NULL, &b, err, sizeof err), -1);
    cr_assert_str_eq(err, "client.loop_lag_ms.p99: missing");
    cJSON_Delete(j);
}

/* client.threads and client.per_thread: an artifact from before them
 * (neither key) reads as "not recorded"; per_thread must have one entry per
 * thread, and threads is at least 1. */
Test(benchmark, client_threads_absent_reads_as_unrecorded_and_per_thread_must_match)
{
    struct benchmark b;
    cJSON *j = parse_file(written[0]);
    cJSON *c = cJSON_GetObjectItem(j, "client");
    char err[256];
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.client.threads, 2);
    cr_assert_eq(b.client.n_per_thread, 2);
    benchmark_free(&b);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(c, "per_thread"), 1);
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), -1);
    cr_assert_str_eq(err, "t.json: client.per_thread: has 1 entries for 2 threads");
    cJSON_DeleteItemFromObject(c, "per_thread");
    cJSON_ReplaceItemInObject(c, "threads", cJSON_CreateNumber(0));
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), -1);
    cr_assert(strstr(err, "t.json: client.threads: expected a whole number ≥ 1") == err, "%s", err);
    cJSON_DeleteItemFromObject(c, "threads");
    cr_assert_eq(benchmark_from_json(j, "t.json", &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.client.threads, 0);
    cr_assert_null(b.client.per_thread);
    benchmark_free(&b);
    cJSON_Delete(j);
}

Test(benchmark, unreadable_and_non_json_files_are_errors)
{
    struct benchmark b;
    char err[256];
    cr_assert_eq(benchmark_read_file("/nonexistent/r.json", &b, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/r.json") && strstr(err, "cannot read"), "%s", err);
    cr_assert_eq(benchmark_read_file("tests/unit/test_benchmark.c", &b, NULL, err, sizeof err), -1);
    cr_assert_str_eq(err, "tests/unit/test_benchmark.c: not valid JSON");
}
