/* test_registry.c — the metric registry (stats/registry.h): every definition
 * is its source document's words, names are unique, artifact keys map to
 * their rows, and each mode has its headline. The coverage of every
 * artifact's keys is tests/e2e/test_registry.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "stats/registry.h"
#include "testutil.h"

/* s with every run of white space made one space, in place. */
static char *squeeze(char *s)
{
    char *w = s;
    bool space = false;
    for (char *r = s; *r; r++) {
        if (isspace((unsigned char)*r)) {
            space = true;
            continue;
        }
        if (space && w != s)
            *w++ = ' ';
        space = false;
        *w++ = *r;
    }
    *w = '\0';
    return s;
}

Test(registry, every_definition_is_its_documents_words)
{
    size_t len;
    char *meth = squeeze(tu_read_file("docs/METHODOLOGY.md", &len));
    char *dec = squeeze(tu_read_file("docs/DECODE.md", &len));
    int missing = 0;
    for (size_t i = 0; i < metric_count(); i++) {
        const struct metric_def *d = metric_at(i);
        char *text = squeeze(strdup(d->definition));
        const char *doc = !strcmp(d->source, "docs/METHODOLOGY.md") ? meth : !strcmp(d->source, "docs/DECODE.md") ? dec : NULL;
        cr_expect(doc, "%s: unknown source %s", d->name, d->source);
        if (doc && !strstr(doc, text)) {
            cr_expect_fail("the definition of %s is not %s's words: %s", d->name, d->source, text);
            missing++;
        }
        free(text);
    }
    free(meth);
    free(dec);
    cr_assert_eq(missing, 0);
}

Test(registry, names_and_aliases_are_unique_and_rows_complete)
{
    for (size_t i = 0; i < metric_count(); i++) {
        const struct metric_def *d = metric_at(i);
        cr_expect(d->unit && d->unit[0] && d->label && d->label[0] && d->formula_source && d->definition[0],
                  "%s", d->name);
        cr_expect(d->modes != 0, "%s applies to no mode", d->name);
        cr_expect_eq(metric_find(d->name), d, "%s is found as itself", d->name);
        for (int a = 0; a < METRIC_MAX_ALIASES && d->aliases[a]; a++)
            cr_expect_eq(metric_find(d->aliases[a]), d, "alias %s of %s is another row's", d->aliases[a], d->name);
        for (size_t j = i + 1; j < metric_count(); j++) {
            const struct metric_def *e = metric_at(j);
            cr_expect_str_neq(d->name, e->name);
            cr_expect_str_neq(d->label, e->label, "%s and %s share a label", d->name, e->name);
            for (int a = 0; a < METRIC_MAX_ALIASES && e->aliases[a]; a++)
                cr_expect_str_neq(d->name, e->aliases[a], "%s is also an alias of %s", d->name, e->name);
        }
    }
}

Test(registry, artifact_keys_map_to_their_names)
{
    static const char *const keys[][2] = {
        {"ttft_p99_ms", "ttft"}, {"p99_ttft_ms", "ttft"}, {"mean_ttft_ms", "ttft"}, {"median_ttft_ms", "ttft"},
        {"ttft_quantiles_ms", "ttft"}, {"ttft_p50", "ttft"}, {"ttft_avg", "ttft"}, {"ttft_ms", "ttft"},
        {"metrics.ttft_p50_ms", "ttft"}, {"output_throughput", "output_throughput"},
        {"throughput_tok_s", "output_throughput"}, {"decode_tok_s_p50", "decode_tok_s"},
        {"decode_tok_s", "decode_tok_s"}, {"mean_inter_token_latency_ms_p50", "mean_inter_token_latency"},
        {"mean_e2el_ms", "e2e"}, {"request_latency_p99", "e2e"}, {"e2e_samples", "e2e"},
        {"avg_running_reqs", "running_reqs"}, {"max_queue_reqs", "queue_reqs"},
        {"measurement_seconds", "measurement"}, {"server_steps_per_s", "server_steps_per_s"},
        {"output_tps_per_user_p90", "output_tps_per_user"},
        {"generation_tps_per_user_p50", "generation_tps_per_user"}, {"content_chunks_s", "content_chunks_s"},
        {"prompt_token_samples", "prompt_tokens"}, {"output_seq_len_avg", "output_tokens"},
        {"wall_clock_ms", "wall_clock"}, {"peak_output_tps_1s", "peak_output_tps_1s"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct metric_def *d = metric_of_key(keys[i][0]);
        cr_expect(d, "%s names no row", keys[i][0]);
        if (d)
            cr_expect_str_eq(d->name, keys[i][1], "%s", keys[i][0]);
    }
    static const char *const none[] = {"ttft_p50_msx", "unknown_p50_ms", "p99_", "_ms", "", "mean_",
                                       "x_p99_ms"};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        cr_expect_null(metric_of_key(none[i]), "%s", none[i]);
}

/* Each mode has one headline: a run of N prompts reads the completed
 * requests' throughput, a duration window (and a burst) the window's. */
Test(registry, each_mode_has_one_headline)
{
    cr_assert_str_eq(metric_headline(METRIC_REQUESTS)->name, "output_throughput");
    cr_assert_str_eq(metric_headline(METRIC_DURATION)->name, "aggregate_tps");
    cr_assert_str_eq(metric_headline(METRIC_BURST)->name, "aggregate_tps");
    const enum metric_mode modes[] = {METRIC_REQUESTS, METRIC_DURATION, METRIC_BURST};
    for (size_t m = 0; m < 3; m++) {
        int n = 0;
        for (size_t i = 0; i < metric_count(); i++)
            n += (metric_at(i)->headline & (unsigned)modes[m]) != 0;
        cr_expect_eq(n, 1, "%s has %d headlines", metric_mode_name(modes[m]), n);
    }
}

/* Result tables and CSV take their metric headings from the registry:
 * a row's column with the statistic put in, else "label stat (unit)". */
Test(registry, column_headings_come_from_the_rows)
{
    char b[96];
    cr_assert_str_eq(metric_column("ttft", "p99", b, sizeof b), "TTFT p99 ms");
    cr_assert_str_eq(metric_column("tpot", "p50", b, sizeof b), "TPOT p50 ms");
    cr_assert_str_eq(metric_column("output_throughput", NULL, b, sizeof b), "out tok/s");
    cr_assert_str_eq(metric_column("throughput_tok_s", NULL, b, sizeof b), "out tok/s", "an alias");
    cr_assert_str_eq(metric_column("ttft", NULL, b, sizeof b), "TTFT ms");
    const struct metric_def *e2e = metric_find("e2e");
    cr_assert(e2e && !e2e->column);
    char want[96];
    snprintf(want, sizeof want, "%s p90 (%s)", e2e->label, e2e->unit);
    cr_assert_str_eq(metric_column("e2e", "p90", b, sizeof b), want);
    cr_assert_str_eq(metric_column("no_such_metric", "p50", b, sizeof b), "");
}
