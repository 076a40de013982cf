/* test_burst.c — a burst cell's figures checked against seed 004's own
 * numbers (its results[] cells share burst_results' client-side keys:
 * every cell figure from its samples; the per-request formulas are the
 * decode sample's, tests/unit/test_decode.c), the JSON shape against the
 * seed's keys and types, the summary table and the methodology entry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "decode/burst.h"
#include "artifact/decode_matrix.h"
#include "artifact/fields.h"
#include "testutil.h"

static cJSON *seed(void)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-004.json", &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    cr_assert(j, "seed 004 is not JSON");
    return j;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert(cJSON_IsNumber(v), "'%s' is not a number", k);
    return v->valuedouble;
}

/* a and b equal to 12 significant digits (the seed's numbers went through
 * Python's float formatting and its own summation order) */
static void assert_close(double a, double b, const char *what)
{
    cr_assert_leq(fabs(a - b), 1e-12 * fmax(1, fabs(b)), "%s: %.17g, the seed's %.17g", what, a, b);
}

/* The samples of a seed cell, as the seed holds them. */
static struct decode_request_sample *samples_of(const cJSON *cell, size_t *n)
{
    const cJSON *s = cJSON_GetObjectItem(cell, "request_samples");
    *n = (size_t)cJSON_GetArraySize(s);
    struct decode_request_sample *v = calloc(*n, sizeof *v);
    size_t i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, s) {
        v[i++] = (struct decode_request_sample){
            .ttft = num(x, "ttft"), .time_to_second_token = num(x, "time_to_second_token"),
            .latency = num(x, "latency"), .inter_token_latency_avg = num(x, "inter_token_latency_avg"),
            .chunk_inter_token_latency_avg = num(x, "chunk_inter_token_latency_avg"),
            .input_tokens = (long)num(x, "input_tokens"), .output_tokens = (long)num(x, "output_tokens"),
            .output_tps_per_user = num(x, "output_tps_per_user"),
            .e2e_output_tps_per_user = num(x, "e2e_output_tps_per_user"),
            .completed = cJSON_IsTrue(cJSON_GetObjectItem(x, "completed")),
        };
    }
    return v;
}

/* Every mean and percentile of every seed cell from its samples: TTFT,
 * second token, ITL, per-user tok/s and chunk ITL over all samples; latency,
 * E2E tok/s and output length over completed ones; linear percentiles. */
Test(burst, cell_figures_reproduce_the_seeds_cells)
{
    static const char *const stats[] = {"ttft", "time_to_second_token", "request_latency", "inter_token_latency",
                                        "output_tps_per_user", "e2e_output_tps_per_user",
                                        "chunk_inter_token_latency", "output_seq_len"};
    static const char *const suffix[] = {"avg", "p50", "p90", "p99"};
    cJSON *s = seed();
    const cJSON *cell;
    int cells = 0;
    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(s, "results")) {
        struct burst_cell c = {.concurrency = (long)num(cell, "concurrency"),
                               .client_output_tokens = (long)num(cell, "client_output_tokens"),
                               .measurement_s = num(cell, "measurement_seconds")};
        c.samples = samples_of(cell, &c.n_samples);
        cr_assert_eq(burst_cell_aggregate(&c), 0);
        const struct decode_sample_stats *st = &c.stats;
        const struct decode_stat4 *got[] = {&st->ttft, &st->time_to_second_token, &st->request_latency,
                                            &st->inter_token_latency, &st->output_tps_per_user,
                                            &st->e2e_output_tps_per_user, &st->chunk_inter_token_latency,
                                            &st->output_seq_len};
        for (int k = 0; k < 8; k++) {
            const double v[] = {got[k]->avg, got[k]->p50, got[k]->p90, got[k]->p99};
            for (int p = 0; p < 4; p++) {
                char key[96];
                snprintf(key, sizeof key, "%s_%s", stats[k], suffix[p]);
                assert_close(v[p], num(cell, key), key);
            }
        }
        assert_close(st->input_seq_len_avg, num(cell, "input_seq_len_avg"), "input_seq_len_avg");
        /* the seed divides by a window a few µs longer than measurement_seconds: tokens / time to
         * 1e-7; its last cell took its tokens from Prometheus, not the client's count */
        bool client = !strcmp(cJSON_GetObjectItem(cell, "aggregate_source")->valuestring, "openai_continuous_usage");
        cr_assert(client || c.client_output_tokens == 0);
        if (client)
                cr_assert_leq(fabs(c.aggregate_tps - num(cell, "aggregate_tps")), 1e-7 * num(cell, "aggregate_tps"),
                          "aggregate_tps %.17g, the seed's %.17g", c.aggregate_tps, num(cell, "aggregate_tps"));
        assert_close(num(cell, "aggregate_tps") / (double)c.concurrency, num(cell, "per_request_avg_tps"),
                     "per_request_avg_tps = aggregate_tps / concurrency");
        assert_close(c.per_request_avg_tps, c.aggregate_tps / (double)c.concurrency, "per_request_avg_tps");
        burst_cell_free(&c);
        cells++;
    }
    cr_assert_eq(cells, 6);
    cJSON_Delete(s);
}

static cJSON *methodology_json(bool ran)
{
    struct decode_method m;
    cr_assert_eq(burst_methodology(ran, &m), 0);
    cJSON *j = fields_to_json(&decode_method_table, &m);
    fields_free(&decode_method_table, &m);
    return j;
}

/* A cell's keys are the seed results[] cell's client-side keys, in the
 * seed's order and with its types; request_samples entries have exactly the
 * seed's keys. */
Test(burst, cell_json_has_the_seeds_keys_in_order)
{
    cJSON *s = seed();
    const cJSON *want = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "results"), 0);
    struct burst_cell c = {.concurrency = 2, .context_tokens = 0, .request_count_target = 10,
                           .client_output_tokens = 2048, .measurement_s = 4.0, .measurement_wall_s = 4.0,
                           .aggregate_source = "openai_usage", .request_count = 10, .completed_request_count = 2,
                           .total_tokens = 2048, .wall_time_s = 5.5, .num_completed = 2, .num_errors = 8,
                           .sent = true};
    c.samples = samples_of(want, &c.n_samples);
    cr_assert_eq(burst_cell_aggregate(&c), 0);
    struct decode_cell typed;
    cr_assert_eq(burst_cell_typed(&c, &typed), 0);
    cJSON *got = decode_cell_json(&typed, true);
    decode_cell_free(&typed);
    cr_assert(got);
    const cJSON *w = want->child;
    int matched = 0;
    for (const cJSON *g = got->child; g; g = g->next) {
        while (w && strcmp(w->string, g->string))
            w = w->next;
        cr_assert(w, "'%s' is not a key of the seed's cells, or out of the seed's order", g->string);
        cr_assert_eq(g->type & 0xff, w->type & 0xff, "'%s': not the seed's type", g->string);
        matched++;
    }
    cr_assert_eq(matched, 51, "%d keys", matched);
    cr_assert_str_eq(cJSON_GetObjectItem(got, "benchmark_mode")->valuestring, "burst");
    cr_assert_eq(num(got, "aggregate_tps"), 512);
    cr_assert_eq(num(got, "per_request_avg_tps"), 256);
    const cJSON *gs = cJSON_GetArrayItem(cJSON_GetObjectItem(got, "request_samples"), 0);
    const cJSON *ws = cJSON_GetArrayItem(cJSON_GetObjectItem(want, "request_samples"), 0);
    const cJSON *a = gs->child, *b = ws->child;
    for (; a && b; a = a->next, b = b->next) {
        cr_assert_str_eq(a->string, b->string);
        cr_assert_eq(a->type & 0xff, b->type & 0xff, "request_samples[0].%s", a->string);
    }
    cr_assert(!a && !b, "request_samples entries have the seed's keys");
    cJSON_Delete(got);
    burst_cell_free(&c);
    cJSON_Delete(s);
}

Test(burst, summary_table_is_context_then_concurrency)
{
    cJSON *s = seed();
    const cJSON *shape = cJSON_GetObjectItem(s, "summary_table");   /* the seed's burst table is empty: its */
    struct burst_cell c[3] = {                                       /* decode table has the same shape */
        {.concurrency = 1, .context_tokens = 0, .aggregate_tps = 120.5, .sent = true},
        {.concurrency = 2, .context_tokens = 0, .aggregate_tps = 230.25, .sent = true},
        {.concurrency = 1, .context_tokens = 65536, .aggregate_tps = NAN, .sent = true},
    };
    struct decode_matrix m = {.n_burst_results = 3, .burst_results = calloc(3, sizeof *m.burst_results)};
    for (int i = 0; i < 3; i++)
        cr_assert_eq(burst_cell_typed(&c[i], &m.burst_results[i]), 0);
    cr_assert_eq(decode_matrix_summarize(&m), 0);
    cJSON *doc = decode_matrix_to_json(&m);
    decode_matrix_free(&m);
    const cJSON *t = cJSON_GetObjectItem(doc, "burst_summary_table");
    cr_assert_eq(cJSON_GetArraySize(t), 2);
    cr_assert_eq(num(cJSON_GetObjectItem(t, "0"), "2"), 230.25);
    cr_assert_eq(num(cJSON_GetObjectItem(t, "65536"), "1"), 0, "no figure: 0, as the seed writes it");
    cr_assert_eq(cJSON_GetObjectItem(shape, "0")->type & 0xff, cJSON_GetObjectItem(t, "0")->type & 0xff);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "burst_results")), 3);
    cJSON_Delete(doc);
    cJSON_Delete(s);
}

Test(burst, methodology_entry_has_the_seeds_keys)
{
    cJSON *s = seed();
    const cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(s, "methodology"), "burst_e2e_decode");
    cJSON *got = methodology_json(false);
    const cJSON *a = got->child, *b = want->child;
    for (; a && b; a = a->next, b = b->next) {
        cr_assert_str_eq(a->string, b->string);
        cr_assert_eq(a->type & 0xff, b->type & 0xff, "%s", a->string);
        if (cJSON_IsString(b))
            cr_assert_str_eq(a->valuestring, b->valuestring, "%s", a->string);
    }
    cr_assert(!a && !b);
    cJSON_Delete(got);
    got = methodology_json(true);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(got, "present")));
    cJSON_Delete(got);
    cJSON_Delete(s);
}

Test(burst, config_rejects_empty_lists_and_bad_values)
{
    struct run_config base;
    run_config_defaults(&base);
    struct burst_config c;
    char err[256];
    const long conc[] = {1, 2}, bad_conc[] = {0}, ctx[] = {0, 4096}, bad_ctx[] = {-1};
    cr_assert_eq(burst_config_from_run(&c, &base, conc, 2, ctx, 2, err, sizeof err), 0);
    cr_assert_eq(c.requests_per_concurrency, 5);
    cr_assert_eq(burst_config_from_run(&c, &base, bad_conc, 1, ctx, 2, err, sizeof err), -1);
    cr_assert(strstr(err, "concurrency 0"), "%s", err);
    cr_assert_eq(burst_config_from_run(&c, &base, conc, 2, bad_ctx, 1, err, sizeof err), -1);
    cr_assert_eq(burst_config_from_run(&c, &base, conc, 0, ctx, 2, err, sizeof err), -1);
}
