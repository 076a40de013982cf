/* test_timeline.c — a run's readings over time (observe/timeline.h) and
 * their `series` in the artifact (artifact_series, artifact_series_read):
 * bounded to OBS_TIMELINE_MAX points with the last kept, counters
 * cumulative so a rate over thinned points is exact, failed readings left
 * out, empty columns dropped, host CPU from jiffies between points, and a
 * reader that round-trips and names a bad key. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/observe.h"
#include "observe/timeline.h"

/* A scrape at t ms (sent t, done t + 2: midpoint t + 1) with generation
 * tokens 10·k and k running requests; every other value not reported. */
static struct srv_reading scrape(int64_t t_ms, double k, bool ok)
{
    struct srv_reading r = {.t_due = t_ms * 1000000, .t_sent = t_ms * 1000000, .t_done = (t_ms + 2) * 1000000,
                            .phase = OBS_PERIODIC, .ok = ok};
    for (int v = 0; v < SV_N; v++)
        r.v[v] = NAN;
    if (ok) {
        r.v[SV_GEN_TOKENS] = 10 * k;
        r.v[SV_RUNNING] = k;
    }
    return r;
}

static const struct obs_column *column(const struct obs_timeline *t, const char *name, int device)
{
    for (int c = 0; c < t->n_cols; c++)
        if (!strcmp(t->col[c].name, name) && t->col[c].device == device)
            return &t->col[c];
    return NULL;
}

Test(timeline, server_readings_kept_bounded_with_the_last_and_failures_left_out)
{
    struct srv_series s = {0};
    const int n = 2000;
    for (int i = 0; i < n; i++) {
        struct srv_reading r = scrape(100 * i, i, i != 7);    /* reading 7 failed */
        cr_assert_eq(srv_series_add(&s, &r), 0);
    }
    struct obs_timeline t;
    cr_assert_eq(srv_timeline_of(&s, &t), 0);
    cr_assert_eq(t.readings, (size_t)n - 1);
    cr_assert_leq(t.n, OBS_TIMELINE_MAX);
    cr_assert_gt(t.n, OBS_TIMELINE_MAX / 2, "thinned no more than needed: %zu", t.n);
    cr_assert_eq(t.stride, 4, "ceil((1999 − 1) / 511)");
    cr_assert_eq(t.t_ns[0], 1000000, "the first usable reading's midpoint");
    cr_assert_eq(t.t_ns[t.n - 1], (int64_t)(100 * (n - 1) + 1) * 1000000, "the last reading is kept");
    cr_assert_eq(t.n_cols, 2, "only the columns the server reported: %d", t.n_cols);
    const struct obs_column *gen = column(&t, "generation_tokens", -1), *run = column(&t, "running_requests", -1);
    cr_assert(gen && run);
    /* the counter stays cumulative: 10 tokens per 100 ms between any two points, thinned or not */
    for (size_t i = 1; i < t.n; i++) {
        double rate = (gen->v[i] - gen->v[i - 1]) / ((double)(t.t_ns[i] - t.t_ns[i - 1]) / 1e9);
        cr_assert_float_eq(rate, 100, 1e-9, "point %zu", i);
    }
    cr_assert_float_eq(run->v[t.n - 1], n - 1, 1e-12);
    obs_timeline_free(&t);
    srv_series_free(&s);
}

Test(timeline, few_readings_are_all_kept)
{
    struct srv_series s = {0};
    for (int i = 0; i < 3; i++) {
        struct srv_reading r = scrape(50 * i, i, true);
        srv_series_add(&s, &r);
    }
    struct obs_timeline t;
    cr_assert_eq(srv_timeline_of(&s, &t), 0);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.stride, 1);
    obs_timeline_free(&t);
    srv_series_free(&s);
    struct srv_series none = {0};
    cr_assert_eq(srv_timeline_of(&none, &t), 0);
    cr_assert_eq(t.n, 0);
    cr_assert_null(artifact_series(&t, false, NULL), "no point: no series");
    obs_timeline_free(&t);
}

/* Telemetry: 2 GPUs and the host; utilization from jiffies between points. */
static struct hw_reading *reading(int64_t t_ms, double busy, double total, double util0)
{
    struct hw_reading *r = hw_reading_new(2);
    cr_assert(r);
    r->t_sent = t_ms * 1000000;
    r->t_done = (t_ms + 4) * 1000000;
    r->ok = true;
    r->has_host = true;
    r->host = (struct host_sample){busy, total, 1024, 4096, NAN};
    r->gpu[0].util_pct = util0;
    r->gpu[0].power_w = 300;
    r->gpu[1].util_pct = 100 - util0;
    return r;
}

Test(timeline, telemetry_per_gpu_and_the_host)
{
    struct hw_series s = {.n_gpus = 2};
    cr_assert_eq(hw_series_add(&s, reading(0, 100, 1000, 10)), 0);
    cr_assert_eq(hw_series_add(&s, reading(100, 150, 1100, 20)), 0);
    cr_assert_eq(hw_series_add(&s, reading(200, 250, 1200, 30)), 0);
    struct obs_timeline t;
    cr_assert_eq(hw_timeline_of(&s, &t), 0);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.t_ns[1], 102000000);
    const struct obs_column *cpu = column(&t, "cpu_util_pct", -1), *u1 = column(&t, "util_pct", 1);
    cr_assert(cpu && u1 && column(&t, "power_w", 0) && column(&t, "mem_used_mb", -1));
    cr_assert_null(column(&t, "power_w", 1), "GPU 1 reported no power: no column");
    cr_assert_null(column(&t, "temp_c", 0));
    cr_assert(isnan(cpu->v[0]));
    cr_assert_float_eq(cpu->v[1], 50, 1e-12, "50 busy of 100 jiffies");
    cr_assert_float_eq(cpu->v[2], 100, 1e-12);
    cr_assert_float_eq(u1->v[2], 70, 1e-12);
    /* the artifact's form and back */
    int index[2] = {4, 5};
    cJSON *block = cJSON_CreateObject();
    cJSON *series = artifact_series(&t, true, index);
    cr_assert(series);
    cJSON_AddItemToObject(block, "series", series);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(series, "devices")), 2);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(series, "devices"), 1), "index")->valueint, 5);
    cr_assert(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(series, "host"), "cpu_util_pct"), 0)));
    struct obs_timeline back;
    char err[256];
    cr_assert_eq(artifact_series_read(block, true, "run.json", &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.n, t.n);
    cr_assert_eq(back.n_cols, t.n_cols);
    for (size_t i = 0; i < t.n; i++)
        cr_assert_eq(back.t_ns[i], t.t_ns[i]);
    const struct obs_column *b1 = column(&back, "util_pct", 5);
    cr_assert(b1, "devices are named by their index");
    cr_assert_float_eq(b1->v[2], 70, 1e-12);
    cr_assert(isnan(column(&back, "cpu_util_pct", -1)->v[0]));
    obs_timeline_free(&back);
    /* a time not after the one before it: refused, as a chart would draw it backwards */
    cJSON *tm = cJSON_GetObjectItem(series, "t_ms");
    double keep = cJSON_GetArrayItem(tm, 2)->valuedouble;
    cJSON_SetNumberValue(cJSON_GetArrayItem(tm, 2), cJSON_GetArrayItem(tm, 1)->valuedouble);
    cr_assert_eq(artifact_series_read(block, true, "run.json", &back, err, sizeof err), -1);
    cr_assert(strstr(err, "hardware.series.t_ms") && strstr(err, "not after"), "%s", err);
    cJSON_SetNumberValue(cJSON_GetArrayItem(tm, 2), keep);
    cr_assert_eq(artifact_series_read(block, true, "run.json", &back, err, sizeof err), 0, "%s", err);
    obs_timeline_free(&back);
    /* a column one value short, a null time: named with their path */
    cJSON *p = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(series, "devices"), 0), "power_w");
    cJSON_DeleteItemFromArray(p, 0);
    cr_assert_eq(artifact_series_read(block, true, "run.json", &back, err, sizeof err), -1);
    cr_assert(strstr(err, "run.json") && strstr(err, "hardware.series.devices[0].power_w"), "%s", err);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(series, "t_ms"), 1, cJSON_CreateNull());
    cr_assert_eq(artifact_series_read(block, true, "run.json", &back, err, sizeof err), -1);
    cr_assert(strstr(err, "hardware.series.t_ms"), "%s", err);
    /* absent: no point, no error */
    cJSON_DeleteItemFromObject(block, "series");
    cr_assert_eq(artifact_series_read(block, true, "run.json", &back, err, sizeof err), 0);
    cr_assert_eq(back.n, 0);
    cJSON_Delete(block);
    obs_timeline_free(&t);
    hw_series_free(&s);
}
