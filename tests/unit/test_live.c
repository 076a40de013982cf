/* test_live.c — the live metrics' text (--metrics-listen): what anvil's own
 * Prometheus parser reads from it, observations in the buckets Prometheus
 * means (le: at or under), counts as the artifact's summary sorts records,
 * HOST:PORT parsing, and the Grafana dashboard naming only metrics served. */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "load/live.h"
#include "load/live_server.h"
#include "observe/prom.h"

#include "testutil.h"

static void parse(const struct live_metrics *m, struct prom_snapshot *s)
{
    struct buf b;
    buf_init(&b, 1 << 20);
    cr_assert_eq(live_render(m, &b), 0);
    char err[200];
    cr_assert_eq(prom_parse(b.data, b.len, s, err, sizeof err), 0, "%s", err);
    buf_free(&b);
}

/* The value of name with label le = le (NULL: no label). */
static double value(const struct prom_snapshot *s, const char *name, const char *le)
{
    for (size_t i = 0; i < s->n_samples; i++) {
        const char *l = prom_label(&s->samples[i], "le");
        if (!strcmp(s->samples[i].name, name) && (le ? l && !strcmp(l, le) : !l))
            return s->samples[i].value;
    }
    cr_assert_fail("no %s{le=%s}", name, le ? le : "-");
    return NAN;
}

static void record(struct req_record *r, enum fail_kind fail, bool cut, long tokens, int64_t ttft_ns)
{
    record_init(r, 0, false, -1, -1);
    r->t_start = 1000;
    r->t_first_content = ttft_ns ? 1000 + ttft_ns : 0;
    r->completion_tokens = tokens;
    r->fail = fail;
    r->cut = cut;
}

Test(live, counts_follow_the_summarys_rules_and_buckets_are_at_or_under)
{
    struct live_metrics m;
    live_init(&m);
    struct req_record r;
    for (int i = 0; i < 7; i++)
        live_request_started(&m);
    record(&r, FAIL_NONE, false, 7, 500000);        /* 0.5 ms: in le=0.0005 exactly */
    live_request_ended(&m, &r);
    record(&r, FAIL_NONE, false, 3, 200000000000);  /* 200 s: only in +Inf */
    live_request_ended(&m, &r);
    record(&r, FAIL_HTTP, false, 9, 0);             /* failed: no tokens, no TTFT */
    live_request_ended(&m, &r);
    record(&r, FAIL_NONE, true, 4, 0);              /* cut: neither */
    live_request_ended(&m, &r);
    /* chunks at 0, 2, 5 ms: gaps of 2 and 3 ms, counted when it completes */
    record(&r, FAIL_NONE, false, 3, 0);
    cr_assert_eq(record_add_chunk(&r, 0, 1, 1, true), 0);
    cr_assert_eq(record_add_chunk(&r, 2000000, 1, 1, true), 0);
    cr_assert_eq(record_add_chunk(&r, 5000000, 1, 1, true), 0);
    live_request_ended(&m, &r);
    r.fail = FAIL_TRUNCATED;    /* a failed stream's gaps: not the artifact's ITL (they were counted) */
    live_request_ended(&m, &r);
    record_free(&r);
    live_observe(&m.loop_lag, -5);                  /* negative: counted as 0 */
    struct prom_snapshot s = {0};
    parse(&m, &s);
    cr_assert_eq(value(&s, "anvil_requests_started_total", NULL), 7);
    cr_assert_eq(value(&s, "anvil_requests_completed_total", NULL), 3);
    cr_assert_eq(value(&s, "anvil_requests_failed_total", NULL), 2);
    cr_assert_eq(value(&s, "anvil_requests_cut_total", NULL), 1);
    cr_assert_eq(value(&s, "anvil_output_tokens_total", NULL), 13);
    cr_assert_eq(value(&s, "anvil_requests_in_flight", NULL), 1);
    cr_assert_eq(value(&s, "anvil_ttft_seconds_bucket", "0.0005"), 1);
    cr_assert_eq(value(&s, "anvil_ttft_seconds_bucket", "120"), 1);
    cr_assert_eq(value(&s, "anvil_ttft_seconds_bucket", "+Inf"), 2);
    cr_assert_eq(value(&s, "anvil_ttft_seconds_count", NULL), 2);
    cr_assert_float_eq(value(&s, "anvil_ttft_seconds_sum", NULL), 200.0005, 1e-9);
    cr_assert_eq(value(&s, "anvil_itl_seconds_bucket", "0.001"), 0);
    cr_assert_eq(value(&s, "anvil_itl_seconds_bucket", "0.0025"), 1);
    cr_assert_eq(value(&s, "anvil_itl_seconds_bucket", "0.005"), 2);
    cr_assert_float_eq(value(&s, "anvil_itl_seconds_sum", NULL), 0.005, 1e-12);
    cr_assert_eq(value(&s, "anvil_loop_lag_seconds_bucket", "0.0005"), 1);
    cr_assert_eq(value(&s, "anvil_send_lateness_seconds_count", NULL), 0);
    for (size_t i = 0; i < s.n_families; i++)
        cr_assert(s.families[i].type != PROM_UNTYPED && s.families[i].help, "%s: no TYPE or HELP",
                  s.families[i].name);
    prom_snapshot_free(&s);
}

Test(live, listen_addresses_parse_and_bad_ones_say_why)
{
    char host[64], err[200];
    int port;
    cr_assert_eq(live_listen_parse("127.0.0.1:9400", host, sizeof host, &port, err, sizeof err), 0);
    cr_assert_str_eq(host, "127.0.0.1");
    cr_assert_eq(port, 9400);
    cr_assert_eq(live_listen_parse(":9401", host, sizeof host, &port, err, sizeof err), 0);
    cr_assert_str_eq(host, "");
    cr_assert_eq(live_listen_parse("[::1]:9402", host, sizeof host, &port, err, sizeof err), 0);
    cr_assert_str_eq(host, "::1");
    cr_assert_eq(port, 9402);
    const char *bad[] = {"9400", "host:", "host:0", "host:65536", "host:94x", "::1:9400", "h:-1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        cr_assert_eq(live_listen_parse(bad[i], host, sizeof host, &port, err, sizeof err), -1, "'%s'", bad[i]);
        cr_assert(err[0], "no reason for '%s'", bad[i]);
    }
}

/* Every anvil_ series the dashboard queries is one the endpoint serves. */
Test(live, the_grafana_dashboard_names_only_served_metrics)
{
    char *dash = tu_read_file("docs/grafana-anvil.json", NULL);
    cr_assert(dash);
    struct live_metrics m;
    live_init(&m);
    struct prom_snapshot s = {0};
    parse(&m, &s);
    regex_t re;
    cr_assert_eq(regcomp(&re, "anvil_[a-z_]+", REG_EXTENDED), 0);
    int found = 0;
    regmatch_t mt;
    for (const char *p = dash; regexec(&re, p, 1, &mt, 0) == 0; p += mt.rm_eo) {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(mt.rm_eo - mt.rm_so), p + mt.rm_so);
        bool served = false;
        for (size_t i = 0; i < s.n_samples && !served; i++)
            served = !strcmp(s.samples[i].name, name);
        cr_assert(served, "the dashboard queries %s, which --metrics-listen does not serve", name);
        found++;
    }
    cr_assert_geq(found, 9);
    regfree(&re);
    prom_snapshot_free(&s);
    free(dash);
}
