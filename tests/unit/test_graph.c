/* test_graph.c — graph data (seed 000's schema): the reader takes seed 000
 * and the writer gives it back unchanged; bad fields are named by path; the
 * definitions written into metric_semantics are docs/METHODOLOGY.md's words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "artifact/graph.h"
#include "testutil.h"

static cJSON *seed000(void)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-000.json", &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    cr_assert(j);
    return j;
}

Test(graph, seed_000_reads_and_writes_back_unchanged)
{
    cJSON *j = seed000();
    struct graph_data g;
    char err[512];
    cr_assert_eq(graph_from_json(j, "seed-000", &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g.n_charts, 13);
    cr_assert_str_eq(g.charts[0].metric, "metrics.ttft_p50_ms");
    cr_assert_eq(g.charts[0].n_series, 2);
    cr_assert_eq(g.charts[0].series[0].points[0].value, 2331.2613000161946);
    cr_assert_str_eq(g.charts[0].series[0].points[0].sha256,
                     "5d2425e52003462cd0b4d2389fe4388c86b74bf042331688c7c19d62645ba596");
    cr_assert_eq(g.n_semantics, 10);
    cJSON *back = graph_to_json(&g);
    cr_assert(back);
    cr_assert(cJSON_Compare(j, back, true), "seed 000 written back differs");
    cJSON_Delete(back);
    graph_free(&g);
    cJSON_Delete(j);
}

static void graph_error(const char *path_desc, void (*edit)(cJSON *), const char *want)
{
    cJSON *j = seed000();
    edit(j);
    struct graph_data g;
    char err[512];
    cr_assert_eq(graph_from_json(j, "g.json", &g, err, sizeof err), -1, "%s accepted", path_desc);
    cr_assert(strstr(err, want), "'%s' does not say '%s'", err, want);
    cJSON_Delete(j);
}

static cJSON *point(cJSON *j, int c, int s, int p)
{
    cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "charts"), c);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(ch, "series"), s),
                                                  "points"), p);
}

static void bad_sha(cJSON *j) { cJSON_ReplaceItemInObject(point(j, 2, 1, 0), "artifact_sha256", cJSON_CreateString("abc")); }
static void bad_value(cJSON *j) { cJSON_ReplaceItemInObject(point(j, 2, 0, 3), "value", cJSON_CreateString("1")); }
static void no_metric(cJSON *j) { cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "charts"), 4), "metric"); }
static void bad_schema(cJSON *j) { cJSON_ReplaceItemInObject(j, "schema", cJSON_CreateString("x/v2")); }
static void no_series(cJSON *j) { cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "charts"), 1), "series", cJSON_CreateArray()); }

Test(graph, reader_names_bad_fields)
{
    graph_error("sha", bad_sha, "g.json: charts[2].series[1].points[0].artifact_sha256: expected 64");
    graph_error("value", bad_value, "g.json: charts[2].series[0].points[3].value: expected a number");
    graph_error("metric", no_metric, "g.json: charts[4].metric");
    graph_error("schema", bad_schema, "g.json: schema: expected");
    graph_error("series", no_series, "g.json: charts[1].series: expected at least one");
}

Test(graph, definitions_are_methodology_words)
{
    size_t len;
    char *doc = tu_read_file("docs/METHODOLOGY.md", &len);
    const char *metrics[] = {"metrics.ttft_p50_ms", "metrics.tpot_p99_ms", "metrics.e2e_p50_ms",
                             "metrics.decode_tok_s_p50", "metrics.effective_prefill_tok_s_p50",
                             "metrics.throughput_tok_s", "metrics.itl_p99_ms", "metrics.request_throughput",
                             "metrics.mean_inter_token_latency_ms_p50", "metrics.itl_per_token_p50_ms"};
    const char *keys[] = {"ttft", "tpot", "e2e", "decode", "effective_prefill", "aggregate", "itl",
                          "request_throughput", "mean_itl", "itl_per_token"};
    for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++) {
        const char *key, *text;
        cr_assert_eq(graph_semantic_of(metrics[i], &key, &text), 0, "%s", metrics[i]);
        cr_assert_str_eq(key, keys[i], "%s", metrics[i]);
        cr_assert(strstr(doc, text), "the definition of %s is not METHODOLOGY.md's: %s", metrics[i], text);
    }
    cr_assert(strstr(doc, graph_percentiles_text));
    const char *key, *text;
    cr_assert_eq(graph_semantic_of("metrics.ttft_p50_msx", &key, &text), -1);
    cr_assert_eq(graph_semantic_of("metrics.unknown_p50_ms", &key, &text), -1);
    free(doc);
}
