/* test_show.c — every seed reads as its kind through artifact_any_read and
 * shows with the file's own numbers; the four output formats carry the same
 * cells (CSV quoting, Markdown escaping, JSON numbers); the decode-matrix
 * reader names a bad field by its path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "artifact/any.h"
#include "report/rtable.h"
#include "report/show.h"
#include "testutil.h"

static const struct {
    const char *path;
    enum artifact_kind kind;
} seeds[] = {
    {"tests/data/seed-000.json", AK_GRAPH},
    {"tests/data/seed-001.json", AK_BENCHMARK},
    {"tests/data/seed-002.json", AK_LOAD_CURVE},
    {"tests/data/seed-003.json", AK_MATRIX},
    {"tests/data/seed-004.json", AK_DECODE_MATRIX},
};

/* The table whose title starts with prefix. */
static const struct rtable *table(const struct rdoc *d, const char *prefix)
{
    for (size_t i = 0; i < d->n_tables; i++)
        if (!strncmp(d->tables[i]->title, prefix, strlen(prefix)))
            return d->tables[i];
    cr_assert_fail("no table titled '%s...'", prefix);
    return NULL;
}

/* The cell in the row whose first cell is key, column col. */
static const struct rcell *cell(const struct rtable *t, const char *key, size_t col)
{
    for (size_t r = 0; r < t->ncells / t->ncols; r++)
        if (t->cells[r * t->ncols].text && !strcmp(t->cells[r * t->ncols].text, key))
            return &t->cells[r * t->ncols + col];
    cr_assert_fail("no row '%s' in '%s'", key, t->title);
    return NULL;
}

static double raw_num(const char *path, const char *k1, const char *k2)
{
    size_t len;
    char *text = tu_read_file(path, &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *o = cJSON_GetObjectItem(j, k1);
    if (k2)
        o = cJSON_GetObjectItem(o, k2);
    cr_assert(cJSON_IsNumber(o), "%s: %s.%s", path, k1, k2 ? k2 : "");
    double v = o->valuedouble;
    cJSON_Delete(j);
    return v;
}

Test(show, every_seed_reads_as_its_kind_and_prints_in_every_format)
{
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
        struct artifact_any a;
        char err[512];
        cr_assert_eq(artifact_any_read(seeds[i].path, &a, err, sizeof err), 0, "%s", err);
        cr_assert_eq(a.kind, seeds[i].kind, "%s read as %s", seeds[i].path, artifact_kind_name(a.kind));
        cr_assert_eq(strlen(a.sha256), 64);
        struct rdoc d = {0};
        show_artifact(&d, &a, NULL);
        cr_assert_geq(d.n_tables, 2, "%s", seeds[i].path);
        for (int f = RF_TABLE; f <= RF_JSON; f++) {
            char *buf = NULL;
            size_t n = 0;
            FILE *out = open_memstream(&buf, &n);
            cr_assert_eq(rdoc_print(&d, (enum rformat)f, out), 0);
            fclose(out);
            cr_assert_gt(n, 100, "%s as %s", seeds[i].path, rformat_names[f]);
            if (f == RF_JSON) {
                cJSON *j = cJSON_Parse(buf);
                cr_assert(cJSON_IsArray(cJSON_GetObjectItem(j, "tables")), "%s: JSON output", seeds[i].path);
                cr_assert_eq((size_t)cJSON_GetArraySize(cJSON_GetObjectItem(j, "tables")), d.n_tables);
                cJSON_Delete(j);
            }
            free(buf);
        }
        rdoc_free(&d);
        artifact_any_free(&a);
    }
}

Test(show, benchmark_tables_carry_the_seed_numbers)
{
    const char *p = "tests/data/seed-001.json";
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read(p, &a, err, sizeof err), 0, "%s", err);
    struct cost cost = {2.0, 1};
    struct rdoc d = {0};
    show_artifact(&d, &a, &cost);
    const struct rtable *lat = table(&d, "Latency");
    cr_assert_eq(cell(lat, "TTFT", 2)->num, raw_num(p, "metrics", "ttft_p50_ms"));
    cr_assert_eq(cell(lat, "TTFT", 4)->num, raw_num(p, "metrics", "ttft_p99_ms"));
    cr_assert_eq(cell(lat, "E2E", 1)->num, raw_num(p, "metrics", "e2e_mean_ms"));
    const struct rtable *run = table(&d, p);
    double tps = raw_num(p, "metrics", "throughput_tok_s");
    cr_assert_eq(cell(run, "Output token throughput (tok/s):", 1)->num, tps);
    cr_assert_eq(cell(run, "Successful requests:", 1)->num, 16);
    /* the run's own start and end (UTC), as the file has them */
    cr_assert_str_eq(cell(run, "Started:", 1)->text, a.u.bench.started_at);
    cr_assert_str_eq(cell(run, "Finished:", 1)->text, a.u.bench.finished_at);
    cr_assert_str_eq(a.u.bench.started_at, "2026-09-05T03:46:17Z");
    /* $2 per GPU-hour at tps tokens/s: 2 / (tps * 3600) * 1e6 USD per million tokens */
    cr_assert_float_eq(cell(run, "Cost (USD per million output tokens):", 1)->num, 2.0 / (tps * 3600) * 1e6, 1e-12);
    rdoc_free(&d);
    artifact_any_free(&a);
}

Test(show, decode_matrix_cells_and_prefill)
{
    const char *p = "tests/data/seed-004.json";
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read(p, &a, err, sizeof err), 0, "%s", err);
    const struct decode_matrix *m = &a.u.decode;
    cr_assert_eq(m->n_results, 6);
    cr_assert_str_eq(m->metadata.engine, "vllm");
    cr_assert_eq(m->results[0].aggregate_tps, 129.45196578500713);
    cr_assert_eq(m->results[5].concurrency, 4);
    cr_assert_eq(m->results[5].context_tokens, 65536);
    cr_assert(m->results[5].capacity_limited && m->results[5].underfilled);
    cr_assert(!m->results[0].capacity_limited);
    cr_assert_eq(m->prefill.n, 2);
    cr_assert_eq(m->prefill.v[1].context_tokens, 65536);
    cr_assert_eq(m->prefill.v[1].prompt_tokens, 64513);
    struct rdoc d = {0};
    show_artifact(&d, &a, NULL);
    const struct rtable *t = table(&d, "Sustained decode");
    cr_assert_eq(t->ncells / t->ncols, 6);
    cr_assert_eq(t->cells[4].num, 0.13393967098090798 * 1000);     /* TTFT p50 of cell 0, ms */
    /* the limits column names a timed-out warm-up too (it was left out before) */
    cr_assert_str_eq(t->cells[0 * t->ncols + 10].text, "-");
    cr_assert_str_eq(t->cells[2 * t->ncols + 10].text, "capacity-limited, underfilled, warm-up timed out");
    cr_assert_str_eq(t->cells[5 * t->ncols + 10].text, "capacity-limited, underfilled, warm-up timed out");
    /* metadata.timestamp is when the file was written (after the event log's last cell), not
     * when the run started: labelled so (it read "Started:" before) */
    const struct rtable *head = table(&d, p);
    cr_assert_str_eq(cell(head, "Written:", 1)->text, "2026-08-28T01:14:26.824486");
    for (size_t r = 0; r < head->ncells / head->ncols; r++)
        cr_assert_str_neq(head->cells[r * head->ncols].text, "Started:");
    rdoc_free(&d);
    artifact_any_free(&a);
}

/* Seed 004 with one value replaced: the reader names its path. */
static void decode_error(const char *from, const char *to, const char *want)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-004.json", &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    cJSON *res = cJSON_GetObjectItem(j, "results");
    cJSON *c2 = cJSON_GetArrayItem(res, 2);
    if (!strcmp(from, "results"))
        cJSON_ReplaceItemInObject(j, "results", cJSON_CreateArray());
    else
        cJSON_ReplaceItemInObject(c2, from, cJSON_CreateString(to));
    struct decode_matrix m;
    char err[512];
    cr_assert_eq(decode_matrix_from_json(j, "d.json", &m, err, sizeof err), -1);
    cr_assert(strstr(err, want), "'%s' does not say '%s'", err, want);
    cJSON_Delete(j);
}

Test(show, decode_matrix_reader_names_bad_fields)
{
    decode_error("concurrency", "four", "d.json: results[2].concurrency: expected");
    decode_error("aggregate_tps", "fast", "d.json: results[2].aggregate_tps");
    decode_error("capacity_limited", "yes", "d.json: results[2].capacity_limited");
    decode_error("results", NULL, "d.json: results: expected at least one cell");
}

Test(show, unknown_and_broken_files_are_named)
{
    char path[] = "/tmp/anvil-show-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"schema\": \"something/v9\"}", f);
    fclose(f);
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read(path, &a, err, sizeof err), -1);
    cr_assert(strstr(err, path) && strstr(err, "not an artifact anvil reads") && strstr(err, "something/v9"), "%s", err);
    f = fopen(path, "w");
    fputs("{\"schema\": \"anvil-serving.benchmark/v1\", \"engine\": 3}", f);
    fclose(f);
    cr_assert_eq(artifact_any_read(path, &a, err, sizeof err), -1);
    cr_assert(strstr(err, path) && strstr(err, "engine"), "%s", err);
    unlink(path);
    cr_assert_eq(artifact_any_read(path, &a, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot read"), "%s", err);
}

Test(show, formats_quote_and_escape)
{
    struct rdoc d = {0};
    struct rtable *t = rdoc_table(&d, "T", 3, "name", "v", "w");
    rtable_text(t, "a,\"b\"|c");
    rtable_num(t, 1.5, 2);
    rtable_num(t, NAN, 2);
    rdoc_note(&d, "n %d", 7);
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    rdoc_print(&d, RF_CSV, out);
    fclose(out);
    cr_assert_str_eq(buf, "# T\nname,v,w\n\"a,\"\"b\"\"|c\",1.50,\n\n# note: n 7\n");
    free(buf);
    out = open_memstream(&buf, &n);
    rdoc_print(&d, RF_MARKDOWN, out);
    fclose(out);
    cr_assert_str_eq(buf, "### T\n\n| name | v | w |\n| --- | ---: | ---: |\n| a,\"b\"\\|c | 1.50 | n/a |\n\n- note: n 7\n");
    free(buf);
    out = open_memstream(&buf, &n);
    rdoc_print(&d, RF_JSON, out);
    fclose(out);
    cJSON *j = cJSON_Parse(buf);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tables"), 0), "rows"), 0);
    cr_assert_str_eq(cJSON_GetArrayItem(row, 0)->valuestring, "a,\"b\"|c");
    cr_assert_eq(cJSON_GetArrayItem(row, 1)->valuedouble, 1.5);
    cr_assert(cJSON_IsNull(cJSON_GetArrayItem(row, 2)));
    cJSON_Delete(j);
    free(buf);
    out = open_memstream(&buf, &n);
    rdoc_print(&d, RF_TABLE, out);
    fclose(out);
    cr_assert_str_eq(buf, "== T ==\nname        v    w\n------------------\na,\"b\"|c  1.50  n/a\nnote: n 7\n");
    free(buf);
    rdoc_free(&d);
}

/* The printed document of d in format f (caller frees). */
static char *printed(const struct rdoc *d, enum rformat f)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    cr_assert_eq(rdoc_print(d, f, out), 0);
    fclose(out);
    return buf;
}

/* A field's name keeps its colon in the text table and Markdown, not in
 * CSV or JSON, where it is a key (before: "Engine:,sglang" in CSV, "Engine:"
 * in JSON). */
Test(show, csv_and_json_field_names_have_no_colon)
{
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read("tests/data/seed-001.json", &a, err, sizeof err), 0, "%s", err);
    struct rdoc d = {0};
    show_artifact(&d, &a, NULL);
    char *csv = printed(&d, RF_CSV), *json = printed(&d, RF_JSON), *text = printed(&d, RF_TABLE);
    char *md = printed(&d, RF_MARKDOWN);
    cr_assert(strstr(csv, "\nEngine,sglang\n") && strstr(csv, "\nSuccessful requests,16\n"), "%s", csv);
    cr_assert_null(strstr(csv, ":,"), "%s", csv);
    cJSON *j = cJSON_Parse(json);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tables"), 0),
                                                             "rows"), 0);
    cr_assert_str_eq(cJSON_GetArrayItem(row, 0)->valuestring, "Engine");
    cr_assert_str_eq(cJSON_GetArrayItem(row, 1)->valuestring, "sglang");
    cJSON_Delete(j);
    cr_assert(strstr(text, "\nEngine:  ") && strstr(text, "\nSuccessful requests:  "), "%s", text);
    cr_assert(strstr(md, "| Engine: | sglang |"), "%s", md);
    free(csv);
    free(json);
    free(text);
    free(md);
    rdoc_free(&d);
    artifact_any_free(&a);
}

/* rtable_label adds one colon for the text table and CSV drops that one
 * only: a colon inside the name and a value's own colon stay. */
Test(show, a_label_loses_only_its_own_colon)
{
    char *csv, *text;
    struct rdoc e = {0};
    struct rtable *t = rdoc_table(&e, "T", 2, "field", "value");
    rtable_label(t, "Ratio a:b");
    rtable_text(t, "x:");
    csv = printed(&e, RF_CSV);
    cr_assert_str_eq(csv, "# T\nfield,value\nRatio a:b,x:\n");
    text = printed(&e, RF_TABLE);
    cr_assert(strstr(text, "Ratio a:b:  x:"), "%s", text);
    free(csv);
    free(text);
    rdoc_free(&e);
}

/* A matrix row of a duration round that every request outlasted (nothing completed,
 * the window counted tokens) is named in show's notes as the sweep's
 * results table names it (before: show said nothing of it, the row read as
 * 0 completed). */
Test(show, matrix_rounds_that_outlasted_the_window_are_noted)
{
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read("tests/data/seed-003.json", &a, err, sizeof err), 0, "%s", err);
    struct rdoc d = {0};
    show_artifact(&d, &a, NULL);
    for (size_t i = 0; i < d.n_notes; i++)
        cr_assert_null(strstr(d.notes[i], "outlasted the window"), "%s", d.notes[i]);
    rdoc_free(&d);
    a.u.matrix.rows[0].outlasted_window = a.u.matrix.rows[1].outlasted_window = true;
    struct rdoc e = {0};
    show_artifact(&e, &a, NULL);
    bool noted = false;
    for (size_t i = 0; i < e.n_notes; i++)
        noted |= strstr(e.notes[i], "2 duration-mode rounds where every request outlasted the window") != NULL;
    cr_assert(noted);
    rdoc_free(&e);
    artifact_any_free(&a);
}

/* A duration-mode run's cost is charged on the window's throughput
 * (aggregate_tps), as the sweep's results table charges it, and its output
 * throughput row is the window's too (the mode's headline, as the report's
 * card shows it; it was the completed requests'), the completed requests'
 * figure on a row of its own. Before, show charged the completed requests'
 * throughput: 286.6 against the window's 427 tok/s in #12's round, no cost
 * at all when none completed. */
Test(show, a_duration_runs_cost_is_the_windows)
{
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read("tests/data/seed-001.json", &a, err, sizeof err), 0, "%s", err);
    double tps = bench_output_tps(&a.u.bench);
    a.u.bench.duration_mode.present = true;
    a.u.bench.duration_mode.aggregate_tps = 2 * tps;
    struct cost cost = {2.0, 1};
    struct rdoc d = {0};
    show_artifact(&d, &a, &cost);
    const struct rtable *run = table(&d, "tests/data/seed-001.json");
    cr_assert_eq(cell(run, "Output token throughput (tok/s):", 1)->num, 2 * tps);
    cr_assert_eq(cell(run, "Output token throughput of completed requests (tok/s):", 1)->num, tps);
    cr_assert_float_eq(cell(run, "Cost (USD per million output tokens):", 1)->num,
                       2.0 / (2 * tps * 3600) * 1e6, 1e-12);
    rdoc_free(&d);
    artifact_any_free(&a);
}
