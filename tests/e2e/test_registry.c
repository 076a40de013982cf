/* test_registry.c — every metric key of every artifact kind has a row in
 * the metric registry (stats/registry.h): runs (plain and duration mode), a
 * sweep's matrix and load curve, a decode matrix with bursts, all made by
 * anvil against `anvil sim`, and seeds 000–004. Which blocks hold metrics
 * is docs/METHODOLOGY.md's "The metric registry"; the walk below is that
 * list. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/benchmark.h"
#include "harness.h"
#include "stats/registry.h"

/* Keys of a block that are settings or identity, not metrics. */
static const char *const run_skip[] = {"request_index", "planned_context_tokens", "max_tokens",
                                       "start_monotonic_ns", NULL};
static const char *const window_skip[] = {"duration_s", "warmup_s", "window_s", "window_start_ns",
                                          "window_end_ns", "token_source", NULL};
static const char *const row_skip[] = {"repeat", "input_tokens", "output_tokens", "concurrency",
                                       "request_rate", NULL};
static const char *const point_skip[] = {"x", "gpu", NULL};
static const char *const cell_skip[] = {"concurrency", "context_tokens", "request_count_target",
                                        "warmup_request_count", "window_start_monotonic_ns",
                                        "window_end_monotonic_ns", "ready_trace", "request_samples",
                                        "hardware_summary", "accept_norm_ref_len", NULL};

struct walk {
    const char *file;
    int checked, missing;
};

static bool listed(const char *k, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (!strcmp(k, *skip))
            return true;
    return false;
}

static void check_key(struct walk *w, const char *where, const char *key)
{
    w->checked++;
    if (!metric_of_key(key)) {
        w->missing++;
        cr_expect_fail("%s: %s.%s: no metric of the registry (anvil metrics) defines it", w->file, where, key);
    }
}

/* Every key of o that holds a metric's value: a number, null or a list
 * (of numbers), not a string, a flag or an object; all keys when every. */
static void walk_block(struct walk *w, const char *where, const cJSON *o, const char *const *skip, bool every)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, o) {
        if (listed(v->string, skip))
            continue;
        if (every || cJSON_IsNumber(v) || cJSON_IsNull(v) || cJSON_IsArray(v))
            check_key(w, where, v->string);
    }
}

static void walk_run(struct walk *w, const cJSON *a)
{
    walk_block(w, "metrics", cJSON_GetObjectItem(a, "metrics"), NULL, true);
    const cJSON *dm = cJSON_GetObjectItem(a, "duration_mode");
    if (cJSON_IsObject(dm))
        walk_block(w, "duration_mode", dm, window_skip, false);
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        walk_block(w, "request_timings[]", t, run_skip, false);
}

static void walk_matrix(struct walk *w, const cJSON *m)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(m, "rows"))
        walk_block(w, "rows[]", r, row_skip, false);
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(m, "aggregates"))
        walk_block(w, "aggregates[].metrics", cJSON_GetObjectItem(r, "metrics"), NULL, true);
}

static void walk_curve(struct walk *w, const cJSON *c)
{
    const cJSON *target, *p;
    cJSON_ArrayForEach(target, cJSON_GetObjectItem(c, "load"))
        cJSON_ArrayForEach(p, cJSON_GetObjectItem(target, "points"))
            walk_block(w, "load.*.points[]", p, point_skip, true);
}

static void walk_cells(struct walk *w, const char *where, const cJSON *cells)
{
    const cJSON *c, *s;
    cJSON_ArrayForEach(c, cells) {
        walk_block(w, where, c, cell_skip, false);
        cJSON_ArrayForEach(s, cJSON_GetObjectItem(c, "request_samples"))
            walk_block(w, "request_samples[]", s, NULL, false);
    }
}

static void walk_decode(struct walk *w, const cJSON *d)
{
    walk_cells(w, "results[]", cJSON_GetObjectItem(d, "results"));
    walk_cells(w, "burst_results[]", cJSON_GetObjectItem(d, "burst_results"));
}

static void walk_graph(struct walk *w, const cJSON *g)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "charts"))
        check_key(w, "charts[].metric", cJSON_GetStringValue(cJSON_GetObjectItem(c, "metric")));
}

/* Walks the artifact at path by its kind; returns the keys checked. */
static int walk_file(const char *path, void (*walker)(struct walk *, const cJSON *))
{
    cJSON *a = harness_load_json(path);
    struct walk w = {.file = path};
    walker(&w, a);
    cJSON_Delete(a);
    cr_expect_eq(w.missing, 0, "%s: %d of %d metric keys have no registry row", path, w.missing, w.checked);
    return w.checked;
}

static void run_ok(const char *const argv[], const char *what)
{
    static char out[65536], err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0, "%s", what);
    cr_assert_eq(status, 0, "%s: %s%s", what, out, err);
}

Test(registry_e2e, the_seeds_metric_keys_all_have_rows)
{
    cr_expect_geq(walk_file("tests/data/seed-000.json", walk_graph), 9);
    cr_expect_geq(walk_file("tests/data/seed-001.json", walk_run), 100);
    cr_expect_geq(walk_file("tests/data/seed-002.json", walk_curve), 10);
    cr_expect_geq(walk_file("tests/data/seed-003.json", walk_matrix), 100);
    cr_expect_geq(walk_file("tests/data/seed-004.json", walk_decode), 100);
}

Test(registry_e2e, every_artifact_kind_anvil_writes_has_rows_for_its_metric_keys, .timeout = 240)
{
    /* vLLM's names and speculative decoding: the decode cells' server figures are all there */
    const char *sim_args[] = {"--flavor", "vllm", "--num-speculative-tokens", "3", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/anvil-registry-XXXXXX");
    cr_assert(mkdtemp(dir));
    char run[128], dur[128], sweep[128], dec[128], path[256];
    snprintf(run, sizeof run, "%s/run.json", dir);
    snprintf(dur, sizeof dur, "%s/duration.json", dir);
    snprintf(sweep, sizeof sweep, "%s/sweep", dir);
    snprintf(dec, sizeof dec, "%s/decode", dir);
    const char *plain[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "4",
                           "--concurrency", "2", "--input-len", "16", "--output-len", "8", "--goodput",
                           "ttft:100", "--out", run, NULL};
    run_ok(plain, "anvil run");
    const char *window[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--duration", "0.5",
                            "--concurrency", "2", "--input-len", "16", "--output-len", "100", "--out", dur, NULL};
    run_ok(window, "anvil run --duration");
    const char *sw[] = {harness_anvil_bin(), "sweep", "--base-url", sim.base_url, "--concurrency", "1,2",
                        "--input-len", "16", "--output-len", "8", "--rounds", "1", "--num-prompts", "4",
                        "--slo", "ttft:50,tpot:10", "--out-dir", sweep, NULL};
    run_ok(sw, "anvil sweep");
    const char *de[] = {harness_anvil_bin(), "decode", "--base-url", sim.base_url, "--concurrency", "1,2",
                        "--contexts", "0,64", "--duration", "0.5", "--max-tokens", "64", "--ready-stable-s", "0.1",
                        "--cell-warmup-timeout-s", "3", "--decode-warmup-s", "0.1", "--run-burst",
                        "--burst-requests-per-concurrency", "1", "--out-dir", dec, NULL};
    run_ok(de, "anvil decode");
    cr_assert_eq(sim_stop(&sim), 0);

    cr_expect_geq(walk_file(run, walk_run), 200);
    cr_expect_geq(walk_file(dur, walk_run), 200);
    snprintf(path, sizeof path, "%s/matrix.json", sweep);
    cr_expect_geq(walk_file(path, walk_matrix), 40);
    snprintf(path, sizeof path, "%s/load-curve.json", sweep);
    cr_expect_geq(walk_file(path, walk_curve), 10);
    snprintf(path, sizeof path, "%s/decode.json", dec);
    cr_expect_geq(walk_file(path, walk_decode), 200);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* `anvil metrics --format json` prints every row, with the fields a
 * reader needs; the table names every row too. */
Test(registry_e2e, anvil_metrics_prints_the_registry)
{
    static char out[1 << 18];
    int status;
    const char *json[] = {harness_anvil_bin(), "metrics", "--format", "json", NULL};
    cr_assert_eq(run_cmd(json, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0, "%s", out);
    cJSON *doc = cJSON_Parse(out);
    cr_assert(doc, "not JSON: %.200s", out);
    const cJSON *rows = cJSON_GetObjectItem(doc, "metrics");
    cr_assert_eq((size_t)cJSON_GetArraySize(rows), metric_count());
    size_t i = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        const struct metric_def *d = metric_at(i++);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "name")), d->name);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "unit")), d->unit);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "definition")), d->definition);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "better")), metric_better_name(d->better));
        cr_expect(cJSON_IsArray(cJSON_GetObjectItem(r, "modes")) && cJSON_IsArray(cJSON_GetObjectItem(r, "headline")));
    }
    cJSON_Delete(doc);
    const char *table[] = {harness_anvil_bin(), "metrics", NULL};
    cr_assert_eq(run_cmd(table, out, sizeof out, &status), 0);
    cr_assert_eq(status, 0);
    for (i = 0; i < metric_count(); i++)
        cr_expect(strstr(out, metric_at(i)->name), "%s", metric_at(i)->name);
    const char *bad[] = {harness_anvil_bin(), "metrics", "--format", "xml", NULL};
    char err[512];
    cr_assert_eq(run_cmd_err(bad, out, sizeof out, err, sizeof err, &status), 0);
    cr_expect_eq(status, 2);
    cr_expect(strstr(err, "anvil metrics:") && strstr(err, "xml"), "%s", err);
}

/* One formula, one name: a run's per-request output tokens / generation
 * time is generation_tps_per_user (seed 004's output_tps_per_user is
 * (n − 1) / (latency − ttft)); each request's value is recomputed from its
 * own output tokens and generation time, and an artifact that still has the
 * old key reads into the new figure. Failed before: the run wrote n /
 * generation as output_tps_per_user. */
Test(registry_e2e, a_runs_n_over_generation_is_generation_tps_per_user_and_the_old_key_still_reads, .timeout = 60)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char path[64];
    cr_assert_eq(harness_tmpfile(path, sizeof path), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "4",
                          "--concurrency", "2", "--input-len", "16", "--output-len", "8", "--out", path, NULL};
    run_ok(argv, "anvil run");
    sim_stop(&sim);
    cJSON *a = harness_load_json(path);
    const cJSON *m = cJSON_GetObjectItem(a, "metrics");
    cr_assert(!cJSON_GetObjectItem(m, "output_tps_per_user_mean"), "the seed-004 name is not the run's figure");
    cr_assert_eq(harness_num(m, "generation_tps_per_user_samples"), 4);
    double sum = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        cr_assert(!cJSON_GetObjectItem(t, "output_tps_per_user"));
        double want = harness_num(t, "output_tokens") / (harness_num(t, "generation_ms") / 1000.0);
        double got = harness_num(t, "generation_tps_per_user");
        cr_expect(fabs(got - want) <= 1e-9 * want, "%.12g vs %.12g", got, want);
        sum += got;
    }
    cr_expect(fabs(harness_num(m, "generation_tps_per_user_mean") - sum / 4) <= 1e-9 * sum);

    /* the same artifact with the old key reads into generation_tps_per_user */
    cJSON *old = cJSON_Duplicate(a, true);
    const cJSON *src;
    cJSON *om = cJSON_GetObjectItem(old, "metrics");
    cJSON_ArrayForEach(src, m) {
        if (strncmp(src->string, "generation_tps_per_user", 23))
            continue;
        char k[96];
        snprintf(k, sizeof k, "output_tps_per_user%s", src->string + 23);
        cJSON_DeleteItemFromObject(om, src->string);
        cJSON_AddItemToObject(om, k, cJSON_Duplicate(src, true));
    }
    cJSON *ot;
    cJSON_ArrayForEach(ot, cJSON_GetObjectItem(old, "request_timings")) {
        cJSON *v = cJSON_DetachItemFromObject(ot, "generation_tps_per_user");
        cJSON_AddItemToObject(ot, "output_tps_per_user", v);
    }
    struct benchmark now, before;
    char err[512];
    cr_assert_eq(benchmark_from_json(a, "new.json", &now, err, sizeof err), 0, "%s", err);
    cr_assert_eq(benchmark_from_json(old, "old.json", &before, err, sizeof err), 0, "%s", err);
    cr_expect_eq(before.metrics.dist.generation_tps_per_user.samples, 4);
    cr_expect_eq(before.metrics.dist.generation_tps_per_user.mean, now.metrics.dist.generation_tps_per_user.mean);
    cr_expect_eq(before.metrics.dist.generation_tps_per_user.p99, now.metrics.dist.generation_tps_per_user.p99);
    for (size_t i = 0; i < now.n_request_timings; i++)
        cr_expect_eq(before.request_timings[i].generation_tps_per_user, now.request_timings[i].generation_tps_per_user);
    benchmark_free(&now);
    benchmark_free(&before);
    cJSON_Delete(old);
    cJSON_Delete(a);
    unlink(path);
}

/* The report's data (the JSON the page draws from) of the artifact at path:
 * `anvil report path -o html`, then the anvil-data script's text parsed. */
static cJSON *report_data(const char *path)
{
    char html[64];
    cr_assert_eq(harness_tmpfile(html, sizeof html), 0);
    const char *argv[] = {harness_anvil_bin(), "report", path, "-o", html, NULL};
    run_ok(argv, "anvil report");
    char *text = harness_read_file(html, NULL);
    cr_assert(text);
    const char *open = "<script type=\"application/json\" id=\"anvil-data\">";
    char *from = strstr(text, open);
    cr_assert(from, "no report data in %s", html);
    from += strlen(open);
    char *end = strstr(from, "</script>");
    cr_assert(end);
    *end = '\0';
    cJSON *d = cJSON_Parse(from);
    cr_assert(d, "report data is not JSON");
    free(text);
    unlink(html);
    return d;
}

/* The value of the run card whose key starts with key, or NULL. */
static const char *card_value(const cJSON *data, const char *key)
{
    const cJSON *kv;
    cJSON_ArrayForEach(kv, cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(data, "runs"), 0), "cards")) {
        if (!strncmp(cJSON_GetStringValue(cJSON_GetArrayItem(kv, 0)), key, strlen(key)))
            return cJSON_GetStringValue(cJSON_GetArrayItem(kv, 1));
    }
    return NULL;
}

/* The report's throughput card shows the mode's headline (metric_headline):
 * a duration-mode run whose every request outlasted the window shows the
 * window's tokens / its length, a run of N prompts its completed requests'
 * tokens / duration, each recomputed from the artifact's raw figures.
 * Failed before: the duration run's card read 0.0 tok/s (the completed
 * requests' figure). */
Test(registry_e2e, the_report_card_shows_the_modes_headline_throughput, .timeout = 90)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "2", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dur[64], plain[64];
    cr_assert_eq(harness_tmpfile(dur, sizeof dur), 0);
    cr_assert_eq(harness_tmpfile(plain, sizeof plain), 0);
    const char *window[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--duration", "0.5",
                            "--concurrency", "2", "--input-len", "16", "--output-len", "2000", "--out", dur, NULL};
    run_ok(window, "anvil run --duration");
    const char *n[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "4",
                       "--concurrency", "2", "--input-len", "16", "--output-len", "8", "--out", plain, NULL};
    run_ok(n, "anvil run");
    sim_stop(&sim);

    cJSON *a = harness_load_json(dur);
    cr_assert_eq(harness_num(a, "completed"), 0, "every request outlasts the window");
    const cJSON *dm = cJSON_GetObjectItem(a, "duration_mode");
    double want = harness_num(dm, "tokens_in_window") / harness_num(dm, "window_s");
    cr_assert_gt(want, 100);
    cJSON *d = report_data(dur);
    const char *v = card_value(d, "Window output throughput, tokens/s");
    cr_assert(v, "no window throughput card");
    cr_expect_float_eq(strtod(v, NULL), want, 0.05 + 1e-9, "card %s, window %.3f tok/s", v, want);
    cr_expect_null(card_value(d, "Output throughput"), "the completed requests' figure is not the card");
    /* the charts' captions are the registry's definitions */
    const cJSON *defs = cJSON_GetObjectItem(d, "definitions");
    const char *const caps[][2] = {{"ttft", "ttft"}, {"throughput", "output_throughput"}, {"lateness", "send_lateness"}};
    for (size_t i = 0; i < 3; i++) {
        const struct metric_def *m = metric_find(caps[i][1]);
        char want_cap[640];
        snprintf(want_cap, sizeof want_cap, "%s (%s): %s", m->name, m->unit, m->definition);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(defs, caps[i][0])), want_cap);
    }
    cJSON_Delete(d);
    cJSON_Delete(a);

    a = harness_load_json(plain);
    double tokens = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings"))
        tokens += harness_num(t, "output_tokens");
    want = tokens / (harness_num(a, "wall_clock_ms") / 1000.0);
    d = report_data(plain);
    v = card_value(d, "Output throughput, tokens/s");
    cr_assert(v, "no output throughput card");
    cr_expect_float_eq(strtod(v, NULL), want, 0.05 + 1e-9, "card %s, recomputed %.3f tok/s", v, want);
    cJSON_Delete(d);
    cJSON_Delete(a);
    unlink(dur);
    unlink(plain);
}
