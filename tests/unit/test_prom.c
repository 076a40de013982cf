/* test_prom.c — the Prometheus / OpenMetrics text parser: the recorded
 * servers' /metrics bodies, every syntax rule of prom.h, and errors that
 * name their line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "observe/prom.h"
#include "testutil.h"

/* The sample named name whose labels include every name=value pair of
 * want ("a=x,b=y", or "" for any), or NULL. */
static const struct prom_sample *find(const struct prom_snapshot *s, const char *name, const char *want)
{
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *m = &s->samples[i];
        if (strcmp(m->name, name))
            continue;
        char buf[512];
        snprintf(buf, sizeof buf, "%s", want);
        bool ok = true;
        for (char *tok = strtok(buf, ","); tok && ok; tok = strtok(NULL, ",")) {
            char *eq = strchr(tok, '=');
            *eq = '\0';
            const char *v = prom_label(m, tok);
            ok = v && !strcmp(v, eq + 1);
        }
        if (ok)
            return m;
    }
    return NULL;
}

static void parse_fixture(const char *path, struct prom_snapshot *s)
{
    char *text = tu_read_file(path, NULL);
    int status;
    const char *body = tu_fixture_body(text, &status);
    cr_assert_eq(status, 200);
    char err[256] = "";
    cr_assert_eq(prom_parse(body, strlen(body), s, err, sizeof err), 0, "%s: %s", path, err);
    free(text);
}

Test(prom, vllm_fixture_counters_created_twins_and_histograms)
{
    struct prom_snapshot s;
    parse_fixture("tests/data/fixtures/vllm/metrics.txt", &s);
    const struct prom_sample *g = find(&s, "vllm:generation_tokens_total", "engine=0");
    cr_assert(g);
    cr_expect_eq(g->value, 151204.0);
    cr_expect_eq(g->type, PROM_COUNTER);
    cr_expect_str_eq(g->family, "vllm:generation_tokens_total");
    cr_expect_str_eq(prom_label(g, "model_name"), "Qwen/Qwen2.5-7B-Instruct");
    /* the _created twin is a gauge family of its own, never part of the counter */
    const struct prom_sample *c = find(&s, "vllm:generation_tokens_created", "");
    cr_assert(c);
    cr_expect_eq(c->type, PROM_GAUGE);
    cr_expect_str_eq(c->family, "vllm:generation_tokens_created");
    /* a histogram despite its _total suffix */
    const struct prom_sample *b = find(&s, "vllm:iteration_tokens_total_bucket", "le=+Inf");
    cr_assert(b);
    cr_expect_eq(b->type, PROM_HISTOGRAM);
    cr_expect_str_eq(b->family, "vllm:iteration_tokens_total");
    cr_expect_eq(b->value, 60012.0);
    const struct prom_sample *sum = find(&s, "vllm:iteration_tokens_total_sum", "");
    cr_assert(sum);
    cr_expect_eq(sum->value, 1994414.0);
    cr_expect_eq(find(&s, "vllm:iteration_tokens_total_created", "")->type, PROM_GAUGE);
    cr_expect_eq(find(&s, "process_virtual_memory_bytes", "")->value, 49623113728.0);
    cr_expect_eq(find(&s, "vllm:prefix_cache_queries_total", "")->value, 1843210.0);
    const struct prom_sample *cc = find(&s, "vllm:cache_config_info", "");
    cr_assert(cc);
    cr_expect_str_eq(prom_label(cc, "num_gpu_blocks"), "28410");
    cr_expect_str_eq(prom_label(cc, "block_size"), "16");
    cr_expect_null(prom_label(cc, "model_name"));
    cr_expect_eq(find(&s, "vllm:spec_decode_num_accepted_tokens_per_pos_total", "position=2")->value, 25346.0);
    bool help = false;
    for (size_t i = 0; i < s.n_families; i++)
        if (!strcmp(s.families[i].name, "vllm:kv_cache_usage_perc"))
            help = s.families[i].help && !strcmp(s.families[i].help, "KV-cache usage. 1 means 100 percent usage.");
    cr_expect(help);
    prom_snapshot_free(&s);
}

Test(prom, sglang_fixture_sum_first_histograms_and_rank_labels)
{
    struct prom_snapshot s;
    parse_fixture("tests/data/fixtures/sglang/metrics.txt", &s);
    const struct prom_sample *t = find(&s, "sglang:generation_tokens_total", "is_streaming=true");
    cr_assert(t);
    cr_expect_eq(t->value, 151100.0);
    cr_expect_eq(find(&s, "sglang:max_total_num_tokens", "tp_rank=0")->value, 471234.0);
    const struct prom_sample *h = find(&s, "sglang:time_to_first_token_seconds_sum", "");
    cr_assert(h);
    cr_expect_eq(h->type, PROM_HISTOGRAM);
    cr_expect_str_eq(h->family, "sglang:time_to_first_token_seconds");
    cr_expect_eq(find(&s, "sglang:inter_token_latency_seconds_count", "")->value, 150704.0);
    prom_snapshot_free(&s);
}

Test(prom, llamacpp_fixture_unlabelled_samples)
{
    struct prom_snapshot s;
    parse_fixture("tests/data/fixtures/llamacpp/metrics.txt", &s);
    cr_expect_eq(s.n_samples, 12);
    const struct prom_sample *d = find(&s, "llamacpp:n_decode_total", "");
    cr_assert(d);
    cr_expect_eq(d->value, 3036.0);
    cr_expect_eq(d->n_labels, 0);
    cr_expect_eq(d->type, PROM_COUNTER);
    cr_expect_eq(find(&s, "llamacpp:kv_cache_usage_ratio", "")->value, 0.0366211);
    prom_snapshot_free(&s);
}

static int parse_str(const char *text, struct prom_snapshot *s, char *err, size_t errlen)
{
    return prom_parse(text, strlen(text), s, err, errlen);
}

Test(prom, label_escapes_unescape_and_the_series_key_round_trips)
{
    const char *text = "m{a=\"q\\\"b\\\\c\\nd\",b=\"\",} 1\n";
    struct prom_snapshot s;
    char err[200];
    cr_assert_eq(parse_str(text, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n_samples, 1);
    cr_expect_str_eq(prom_label(&s.samples[0], "a"), "q\"b\\c\nd");
    cr_expect_str_eq(prom_label(&s.samples[0], "b"), "");
    struct buf k;
    buf_init(&k, 4096);
    cr_assert_eq(prom_series_key(&s.samples[0], &k), 0);
    cr_expect_str_eq(k.data, "m{a=\"q\\\"b\\\\c\\nd\",b=\"\"}");
    buf_printf(&k, " 2\n");
    struct prom_snapshot again;
    cr_assert_eq(prom_parse(k.data, k.len, &again, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(prom_label(&again.samples[0], "a"), "q\"b\\c\nd");
    cr_expect_eq(again.samples[0].value, 2.0);
    buf_free(&k);
    prom_snapshot_free(&s);
    prom_snapshot_free(&again);
}

Test(prom, special_values_timestamps_tabs_crlf_and_exemplars)
{
    const char *text =
        "# TYPE g gauge\r\n"
        "g{k=\"nan\"} NaN\r\n"
        "g{k=\"pinf\"}\t+Inf 1712345678901\r\n"
        "g{k=\"ninf\"} -Inf\n"
        "g{k=\"exp\"} 1.5e+06\n"
        "  \n"
        "# a free comment\n"
        "# UNIT g seconds\n"
        "g {k=\"sp\"} 3 # {trace_id=\"x\"} 1.0 12\n";
    struct prom_snapshot s;
    char err[200];
    cr_assert_eq(parse_str(text, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n_samples, 5);
    cr_expect(isnan(s.samples[0].value));
    cr_expect(isinf(s.samples[1].value) && s.samples[1].value > 0);
    cr_expect(s.samples[1].has_timestamp);
    cr_expect_eq(s.samples[1].timestamp, 1712345678901.0);
    cr_expect(isinf(s.samples[2].value) && s.samples[2].value < 0);
    cr_expect_eq(s.samples[3].value, 1.5e6);
    cr_expect_eq(s.samples[4].value, 3.0);
    cr_expect_not(s.samples[4].has_timestamp);
    for (size_t i = 0; i < s.n_samples; i++)
        cr_expect_eq(s.samples[i].type, PROM_GAUGE);
    prom_snapshot_free(&s);
}

Test(prom, openmetrics_families_by_suffix_and_eof)
{
    const char *text =
        "# TYPE req counter\n# HELP req Requests.\\nTwo lines \\\\ ok\n"
        "req_total 5\nreq_created 1.7e9\n"
        "# TYPE lat histogram\n"
        "lat_bucket{le=\"0.1\"} 1\nlat_bucket{le=\"+Inf\"} 2\nlat_count 2\nlat_sum 0.3\nlat_created 1.7e9\n"
        "# TYPE q summary\nq{quantile=\"0.5\"} 0.2\nq_sum 1\nq_count 4\n"
        "# TYPE build info\nbuild_info{version=\"1\"} 1\n"
        "other_total 9\n"
        "# EOF\n";
    struct prom_snapshot s;
    char err[200];
    cr_assert_eq(parse_str(text, &s, err, sizeof err), 0, "%s", err);
    cr_expect(s.eof);
    const char *fam[] = {"req", "req", "lat", "lat", "lat", "lat", "lat", "q", "q", "q", "build", "other_total"};
    enum prom_type types[] = {PROM_COUNTER, PROM_COUNTER, PROM_HISTOGRAM, PROM_HISTOGRAM, PROM_HISTOGRAM,
                              PROM_HISTOGRAM, PROM_HISTOGRAM, PROM_SUMMARY, PROM_SUMMARY, PROM_SUMMARY,
                              PROM_INFO, PROM_UNTYPED};
    cr_assert_eq(s.n_samples, sizeof fam / sizeof *fam);
    for (size_t i = 0; i < s.n_samples; i++) {
        cr_expect_str_eq(s.samples[i].family, fam[i], "sample %zu (%s)", i, s.samples[i].name);
        cr_expect_eq(s.samples[i].type, types[i], "sample %zu (%s)", i, s.samples[i].name);
    }
    cr_expect_str_eq(s.families[0].help, "Requests.\nTwo lines \\ ok");
    prom_snapshot_free(&s);
}

/* Each malformed text fails with an error naming its line. */
Test(prom, malformed_text_is_an_error_naming_the_line)
{
    static const struct { const char *text, *want; } cases[] = {
        {"a 1\nb{x=\"\\t\"} 1\n", "line 2: invalid escape"},
        {"a{x=\"open} 1\n", "line 1: unterminated label value"},
        {"a{x=\"1\",x=\"2\"} 1\n", "line 1: label 'x' given twice"},
        {"# TYPE a countr\n", "line 1: unknown metric type"},
        {"ok 1\na 1x\n", "line 2: invalid value"},
        {"a 1 2 3\n", "line 1: unexpected text"},
        {"a\n", "line 1: expected a space"},
        {"a{x=\"1\"\n", "line 1: unterminated label set"},
        {"a{x=\"1\" y=\"2\"} 1\n", "line 1: expected ',' or '}'"},
        {"a{1x=\"1\"} 2\n", "line 1: invalid label name"},
        {"a{x \"1\"} 2\n", "line 1: expected '='"},
        {"9a 1\n", "line 1: a sample must start"},
        {"a 1\n# EOF\nb 2\n", "line 3: text after # EOF"},
        {"a 1 nan(1)\n", "line 1: invalid timestamp"},
        {"a=1\n", "line 1: expected a space"},
        {"# TYPE 1a gauge\n", "line 1: # TYPE without a valid metric name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct prom_snapshot s;
        char err[200] = "";
        cr_expect_eq(parse_str(cases[i].text, &s, err, sizeof err), -1, "case %zu parsed", i);
        cr_expect(strstr(err, cases[i].want), "case %zu: got '%s', want '%s'", i, err, cases[i].want);
        cr_expect_eq(s.n_samples, 0);
        cr_expect_null(s.arena);
    }
    struct prom_snapshot s;
    char err[200] = "";
    const char nul[] = "a 1\nb 2\0\n";
    cr_expect_eq(prom_parse(nul, sizeof nul - 1, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "line 2: NUL byte"), "%s", err);
}

/* A sample of a family typed after it keeps the type it was read with;
 * a second TYPE changes the family for the samples after it. */
Test(prom, samples_before_their_type_are_untyped)
{
    struct prom_snapshot s;
    char err[200];
    cr_assert_eq(parse_str("x 1\n# TYPE x gauge\nx 2\n", &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.samples[0].type, PROM_UNTYPED);
    cr_expect_eq(s.samples[1].type, PROM_GAUGE);
    cr_expect_eq(s.n_families, 1);
    prom_snapshot_free(&s);
}

/* Many families: the hash table keeps lookups linear overall. */
Test(prom, twenty_thousand_families)
{
    struct buf b;
    buf_init(&b, 1u << 24);
    for (int i = 0; i < 20000; i++)
        buf_printf(&b, "# TYPE f%d_total counter\nf%d_total{i=\"%d\"} %d\n", i, i, i, i);
    struct prom_snapshot s;
    char err[200];
    cr_assert_eq(prom_parse(b.data, b.len, &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.n_samples, 20000);
    cr_expect_eq(s.n_families, 20000);
    cr_expect_eq(s.samples[12345].value, 12345.0);
    cr_expect_str_eq(s.samples[12345].family, "f12345_total");
    cr_expect_eq(s.samples[12345].type, PROM_COUNTER);
    prom_snapshot_free(&s);
    buf_free(&b);
}
