/* test_prefill.c — seed 004's `prefill` entries: the JSON shape (every key,
 * in order, with the seed's type), the formulas checked against the seed's
 * own numbers (prompt_tokens / TTFT, the server's prompt_tokens / prefill
 * time), and the server-side validation's checks for contamination. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "decode/prefill.h"
#include "artifact/decode_matrix.h"
#include "artifact/fields.h"
#include "testutil.h"

/* The typed entries as the artifact's writer renders them. */
static cJSON *entry_json(const struct prefill_entry *e)
{
    struct decode_prefill d;
    cr_assert_eq(prefill_entry_typed(e, &d), 0);
    cJSON *j = decode_prefill_json(&d);
    decode_prefill_free(&d);
    return j;
}

static cJSON *entries_json(const struct prefill_entry *e, size_t n)
{
    struct decode_prefill_map m;
    cr_assert_eq(prefill_entries_typed(e, n, &m), 0);
    cJSON *j = decode_prefill_map_json(m.v, m.n);
    for (size_t i = 0; i < m.n; i++)
        decode_prefill_free(&m.v[i]);
    free(m.v);
    return j;
}

static cJSON *methodology_json(enum prefill_method mode)
{
    struct decode_method m;
    cr_assert_eq(prefill_methodology(mode, &m), 0);
    cJSON *j = fields_to_json(&decode_method_table, &m);
    fields_free(&decode_method_table, &m);
    return j;
}

static cJSON *seed_prefill(void)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-004.json", &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    cr_assert(j, "seed 004 is not JSON");
    return j;
}

/* Same keys in the same order, each with the same JSON type, recursively
 * through objects (arrays: their first element). */
static void assert_same_shape(const cJSON *got, const cJSON *want, const char *path)
{
    cr_assert_eq(got->type & 0xff, want->type & 0xff, "%s: type %d, the seed's %d", path, got->type & 0xff,
                 want->type & 0xff);
    if (!cJSON_IsObject(want))
        return;
    const cJSON *g = got->child, *w = want->child;
    for (; g && w; g = g->next, w = w->next) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%s", path, w->string);
        cr_assert_str_eq(g->string, w->string, "%s: key '%s', the seed's '%s'", path, g->string, w->string);
        assert_same_shape(g, w, sub);
    }
    cr_assert(!g && !w, "%s: %s keys than the seed", path, g ? "more" : "fewer");
}

/* A server report with nothing measured but what the test sets. */
static struct observe_report *server_report(void)
{
    struct observe_report *r = calloc(1, sizeof *r);
    r->server_enabled = true;
    r->server.available = true;
    for (int i = 0; i < SV_N; i++)
        r->server.delta[i] = NAN;
    for (int h = 0; h < SVH_N; h++)
        r->server.hist[h] = (struct srv_hist_summary){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    r->server.token_excess = 0;
    return r;
}

/* The server's figures of seed 004's 64k scout: one request, 64,513 prompt
 * tokens computed, 14.934 s in prefill. */
static struct observe_report *seed_64k_server(void)
{
    struct observe_report *r = server_report();
    r->server.delta[SV_PROMPT_TOKENS] = 64513;
    r->server.delta[SV_PREFIX_HITS] = 0;
    r->server.hist[SVH_PREFILL].count = 1;
    r->server.hist[SVH_PREFILL].mean = 14.934;
    return r;
}

static void report_free(struct observe_report *r)
{
    observe_report_free(r);
    free(r);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert(cJSON_IsNumber(v), "'%s' is not a number", k);
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert(cJSON_IsString(v), "'%s' is not a string", k);
    return v->valuestring;
}

Test(prefill, integrated_scout_entry_has_the_seeds_shape_and_numbers)
{
    cJSON *seed = seed_prefill();
    const cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(seed, "prefill"), "65536");
    struct observe_report *obs = seed_64k_server();
    struct prefill_entry e;
    char err[256] = "";
    cr_assert_eq(prefill_scout_entry(65536, 15.015, 64513, obs, PREFILL_METRIC_CLIENT, &e, err, sizeof err), 0, "%s", err);
    struct prefill_entry one[] = {e};
    cJSON *all = entries_json(one, 1);
    const cJSON *got = cJSON_GetObjectItem(all, "65536");
    cr_assert(got, "keyed by the context in decimal");
    assert_same_shape(got, want, "prefill.65536");
    /* the seed's figures are rounded: tok/s to a token, seconds to a millisecond */
    cr_assert_str_eq(str(got, "method"), "integrated_scout");
    cr_assert_eq(num(got, "ttft_seconds"), num(want, "ttft_seconds"));
    cr_assert_eq(num(got, "prompt_tokens"), num(want, "prompt_tokens"));
    cr_assert_eq(num(got, "samples"), 1);
    cr_assert_leq(fabs(num(got, "tok_per_sec") - num(want, "tok_per_sec")), 0.5, "%.17g", num(got, "tok_per_sec"));
    cr_assert_eq(num(got, "tok_per_sec"), 64513 / 15.015, "prompt_tokens / TTFT");
    cr_assert_eq(num(got, "client_tok_per_sec"), num(got, "tok_per_sec"));
    cr_assert_eq(num(got, "prefill_seconds"), num(got, "client_ttft_seconds"), "the client's headline");
    const cJSON *v = cJSON_GetObjectItem(got, "server_validation"), *wv = cJSON_GetObjectItem(want, "server_validation");
    cr_assert_str_eq(str(v, "method"), str(wv, "method"));
    cr_assert_str_eq(str(v, "invalid_reason"), "");
    cr_assert_eq(num(v, "prefill_seconds"), num(wv, "prefill_seconds"));
    cr_assert_eq(num(v, "prompt_tokens"), num(wv, "prompt_tokens"));
    cr_assert_eq(num(v, "cached_tokens"), 0);
    cr_assert_eq(num(v, "samples"), num(wv, "samples"));
    cr_assert_leq(fabs(num(v, "tok_per_sec") - num(wv, "tok_per_sec")), 0.5, "%.17g", num(v, "tok_per_sec"));
    cr_assert_str_eq(str(v, "token_source"), "prompt_tokens_counter");
    cr_assert_eq(num(v, "request_prompt_tokens"), 64513);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(got, "hardware_summary")), 0);
    /* the server's headline when asked for and valid */
    struct prefill_entry s;
    cr_assert_eq(prefill_scout_entry(65536, 15.015, 64513, obs, PREFILL_METRIC_SERVER, &s, err, sizeof err), 0);
    cr_assert_eq(s.prefill_s, 14.934);
    cr_assert_eq(s.tok_per_sec, 64513 / 14.934);
    cr_assert_eq(s.client_tok_per_sec, 64513 / 15.015);
    prefill_entry_free(&s);
    prefill_entry_free(&e);
    cJSON_Delete(all);
    report_free(obs);
    cJSON_Delete(seed);
}

Test(prefill, scout_only_entry_matches_the_seeds_8k_entry)
{
    cJSON *seed = seed_prefill();
    const cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(seed, "prefill"), "8192");
    struct prefill_entry e;
    char err[256];
    cr_assert_eq(prefill_scout_entry(8192, 2.104, 8199, NULL, PREFILL_METRIC_CLIENT, &e, err, sizeof err), 0);
    e.method = PREFILL_SCOUT_ONLY;
    cJSON *got = entry_json(&e);
    assert_same_shape(got, want, "prefill.8192");
    cr_assert_str_eq(str(got, "method"), str(want, "method"));
    cr_assert_leq(fabs(num(got, "tok_per_sec") - num(want, "tok_per_sec")), 0.5);
    const cJSON *v = cJSON_GetObjectItem(got, "server_validation");
    cr_assert_str_eq(str(v, "method"), "", "not measured, as in the seed");
    cr_assert(strstr(str(v, "invalid_reason"), "not measured"), "and said why: %s", str(v, "invalid_reason"));
    cr_assert_eq(num(v, "tok_per_sec"), 0);
    cJSON_Delete(got);
    prefill_entry_free(&e);
    cJSON_Delete(seed);
}

Test(prefill, scout_without_a_timed_prefill_is_an_error)
{
    struct prefill_entry e;
    char err[256] = "";
    cr_assert_eq(prefill_scout_entry(4096, 0, 4100, NULL, PREFILL_METRIC_CLIENT, &e, err, sizeof err), -1);
    cr_assert(strstr(err, "4096"), "%s", err);
    cr_assert_not(e.sent);
    cr_assert_eq(prefill_scout_entry(4096, 1.5, 0, NULL, PREFILL_METRIC_CLIENT, &e, err, sizeof err), -1);
    prefill_entry_free(&e);
}

/* Each way a validation can be contaminated or missing gives its reason and
 * no figure. */
Test(prefill, validation_names_what_makes_it_invalid)
{
    struct prefill_validation v;
    struct observe_report *r = seed_64k_server();
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert_str_eq(v.invalid_reason, "");

    r->server.hist[SVH_PREFILL].count = 2;  /* someone else's request prefilled in the window */
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert(strstr(v.invalid_reason, "other traffic") && strstr(v.invalid_reason, "counted 2"), "%s", v.invalid_reason);
    cr_assert_eq(v.tok_per_sec, 0);
    cr_assert_str_eq(v.method, "prometheus:kv_computed", "what was tried stays named");
    r->server.hist[SVH_PREFILL].count = 1;

    r->server.delta[SV_PREFIX_HITS] = 4096;     /* not cold: a prefix was cached */
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert(strstr(v.invalid_reason, "not a cold prefill") && strstr(v.invalid_reason, "4096"), "%s", v.invalid_reason);
    r->server.delta[SV_PREFIX_HITS] = NAN;      /* no hit counter: the requests' cached_tokens say it */
    prefill_validate(r, 1, 64513, 2048, &v);
    cr_assert(strstr(v.invalid_reason, "not a cold prefill"), "%s", v.invalid_reason);
    prefill_validate(r, 1, 64513, 16, &v);
    cr_assert_str_eq(v.invalid_reason, "", "a template's block is within max(4, 1%%): %s", v.invalid_reason);
    cr_assert_eq(v.cached_tokens, 16);
    cr_assert_eq(v.prompt_tokens, 64513 - 16, "prompt tokens less the cached ones");
    r->server.delta[SV_PREFIX_HITS] = 0;

    r->server.delta[SV_PROMPT_TOKENS] = 2 * 64513;  /* the counter moved by more than the requests sent */
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert(strstr(v.invalid_reason, "prompt-token counter"), "%s", v.invalid_reason);
    r->server.delta[SV_PROMPT_TOKENS] = NAN;    /* no counter: the requests' own usage */
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert_str_eq(v.invalid_reason, "");
    cr_assert_str_eq(v.token_source, "request_usage");
    r->server.delta[SV_PROMPT_TOKENS] = 64513;

    r->server.other_traffic = true;
    r->server.token_excess = 900;
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert(strstr(v.invalid_reason, "900 output tokens more"), "%s", v.invalid_reason);
    r->server.other_traffic = false;

    r->server.hist[SVH_PREFILL].count = NAN;    /* SGLang: no prefill-time histogram, its TTFT one */
    r->server.hist[SVH_TTFT].count = 1;
    r->server.hist[SVH_TTFT].mean = 15.0;
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert_str_eq(v.method, "prometheus:ttft");
    cr_assert_eq(v.tok_per_sec, 64513 / 15.0);
    r->server.hist[SVH_TTFT].count = NAN;
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert(strstr(v.invalid_reason, "histogram"), "%s", v.invalid_reason);
    cr_assert_str_eq(v.method, "");

    r->server.available = false;
    snprintf(r->server.reason, sizeof r->server.reason, "a counter went backwards");
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert(strstr(v.invalid_reason, "unavailable: a counter went backwards"), "%s", v.invalid_reason);
    r->server_enabled = false;
    snprintf(r->server_note, sizeof r->server_note, "--server-metrics off");
    prefill_validate(r, 1, 64513, -1, &v);
    cr_assert_str_eq(v.invalid_reason, "not measured: server metrics off (--server-metrics off)");
    report_free(r);
}

Test(prefill, contexts_that_sent_nothing_are_left_out)
{
    struct prefill_entry e[2] = {{.context_tokens = 1024, .sent = true, .samples = 3},
                                 {.context_tokens = 131072, .sent = false}};
    snprintf(e[1].error, sizeof e[1].error, "prompt of 131072 tokens cannot fit");
    cJSON *j = entries_json(e, 2);
    cr_assert_eq(cJSON_GetArraySize(j), 1);
    cr_assert(cJSON_GetObjectItem(j, "1024"));
    cr_assert_str_eq(str(cJSON_GetObjectItem(j, "1024"), "method"), "standalone");
    cJSON_Delete(j);
}

Test(prefill, config_rejects_what_cannot_be_timed)
{
    struct run_config base;
    run_config_defaults(&base);
    struct prefill_config c;
    char err[256];
    const long ok[] = {8192, 65536}, zero[] = {8192, 0};
    cr_assert_eq(prefill_config_from_run(&c, &base, ok, 2, 3, err, sizeof err), 0);
    cr_assert(c.base.workload.output_len == base.workload.output_len && c.repetitions == 3 && c.warmup_requests == 1);
    cr_assert_eq(c.method, PREFILL_STANDALONE);
    cr_assert_eq(prefill_config_from_run(&c, &base, zero, 2, 3, err, sizeof err), -1);
    cr_assert(strstr(err, "context 0"), "%s", err);
    cr_assert_eq(prefill_config_from_run(&c, &base, ok, 2, 0, err, sizeof err), -1);
    cr_assert_eq(prefill_config_from_run(&c, &base, ok, 0, 3, err, sizeof err), -1);
}

Test(prefill, methodology_entry_has_the_seeds_keys)
{
    cJSON *seed = seed_prefill();
    const cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(seed, "methodology"), "prefill");
    cJSON *got = methodology_json(PREFILL_INTEGRATED_SCOUT);
    assert_same_shape(got, want, "methodology.prefill");
    cr_assert_str_eq(str(got, "mode"), str(want, "mode"));
    cr_assert_str_eq(str(got, "formula"), str(want, "formula"));
    cr_assert_str_eq(str(got, "notes"), str(want, "notes"));
    cJSON_Delete(got);
    got = methodology_json(PREFILL_STANDALONE);
    assert_same_shape(got, want, "methodology.prefill");
    cr_assert_str_eq(str(got, "mode"), "standalone_cold_prefill");
    cJSON_Delete(got);
    cJSON_Delete(seed);
}
