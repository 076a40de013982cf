/* timeseries.c — the artifact's timeseries: rows, and gauges joined by interval. */
#include "artifact/timeseries.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/observe.h"
#include "observe/timeline.h"

/* The server's gauges, in the order of struct bench_ts_server's numbers. */
static const char *const server_gauges[] = {"running_requests", "waiting_requests", "kv_cache_usage"};

/* The GPU columns and how the GPUs of one point combine. */
enum combine { MEAN, SUM, MAX };
static const struct {
    const char *name;
    enum combine how;
} gpu_cols[] = {{"util_pct", MEAN}, {"power_w", SUM}, {"temp_c", MAX}, {"mem_used_mb", SUM}};

/* Point i's value of column `name` over the GPUs (device ≥ 0) combined by
 * how; NaN when no GPU has it there. */
static double gpu_value(const struct obs_timeline *t, size_t i, const char *name, enum combine how)
{
    double acc = NAN;
    int n = 0;
    for (int c = 0; c < t->n_cols; c++) {
        const struct obs_column *col = &t->col[c];
        double v = col->v[i];
        if (col->device < 0 || strcmp(col->name, name) || isnan(v))
            continue;
        acc = isnan(acc) ? v : how == MAX ? fmax(acc, v) : acc + v;
        n++;
    }
    return how == MEAN && n ? acc / n : acc;
}

/* Point i's value of the server's column `name`, NaN when absent. */
static double server_value(const struct obs_timeline *t, size_t i, const char *name)
{
    for (int c = 0; c < t->n_cols; c++)
        if (t->col[c].device < 0 && !strcmp(t->col[c].name, name))
            return t->col[c].v[i];
    return NAN;
}

/* The mean of the k values of each column over the points [lo, hi) of t
 * (NaNs skipped; NaN when none). */
static void row_means(const struct obs_timeline *t, size_t lo, size_t hi, bool gpu, double *out, int k)
{
    for (int j = 0; j < k; j++) {
        double sum = 0;
        int n = 0;
        for (size_t i = lo; i < hi; i++) {
            double v = gpu ? gpu_value(t, i, gpu_cols[j].name, gpu_cols[j].how) : server_value(t, i, server_gauges[j]);
            if (!isnan(v)) {
                sum += v;
                n++;
            }
        }
        out[j] = n ? sum / n : NAN;
    }
}

/* Joins the points of block's series to the rows: a row gets the means of
 * the points in it. */
static void join(struct bench_timeseries *ts, const cJSON *block, bool gpu)
{
    struct obs_timeline t;
    char err[256];
    if (!block || artifact_series_read(block, gpu, NULL, &t, err, sizeof err) != 0)
        return;
    size_t i = 0;
    double w_ns = ts->interval_s * 1e9;
    for (size_t r = 0; r < ts->n_rows; r++) {
        double lo = ts->t0_monotonic_ns + ts->rows[r].t_s * 1e9, hi = lo + w_ns;
        while (i < t.n && (double)t.t_ns[i] < lo)
            i++;
        size_t first = i;
        while (i < t.n && (double)t.t_ns[i] < hi)
            i++;
        if (i == first)
            continue;
        if (gpu) {
            double v[4];
            row_means(&t, first, i, true, v, 4);
            ts->rows[r].gpu = (struct bench_ts_gpu){true, v[0], v[1], v[2], v[3]};
        } else {
            double v[3];
            row_means(&t, first, i, false, v, 3);
            ts->rows[r].server = (struct bench_ts_server){true, v[0], v[1], v[2]};
        }
    }
    obs_timeline_free(&t);
}

int bench_timeseries_build(const struct ts_series *s, const cJSON *server_metrics, const cJSON *hardware,
                           struct bench_timeseries *out)
{
    memset(out, 0, sizeof *out);
    if (s->n_rows && !(out->rows = calloc(s->n_rows, sizeof *out->rows)))
        return -1;
    out->present = true;
    out->interval_s = s->interval_s;
    out->requested_interval_s = s->requested_interval_s;
    out->exact_from_s = s->exact_from_s;
    out->t0_monotonic_ns = (double)s->origin_ns;
    out->late_requests = s->late;
    out->n_rows = s->n_rows;
    for (size_t i = 0; i < s->n_rows; i++) {
        const struct ts_point *p = &s->rows[i];
        out->rows[i] = (struct bench_ts_row){
            .t_s = p->t_s, .started = p->started, .completed = p->completed, .failed = p->failed, .cut = p->cut,
            .output_tokens = p->output_tokens, .in_flight = p->in_flight, .ttft_p50_ms = p->ttft_p50_ms,
            .ttft_p99_ms = p->ttft_p99_ms, .itl_p50_ms = p->itl_p50_ms, .itl_p99_ms = p->itl_p99_ms,
            .ttft_samples = p->ttft_samples, .itl_samples = p->itl_samples,
        };
    }
    join(out, server_metrics, false);
    join(out, hardware, true);
    return 0;
}

/* Records by their end, for qsort. */
static int by_end(const void *a, const void *b)
{
    int64_t x = (*(const struct req_record *const *)a)->t_end, y = (*(const struct req_record *const *)b)->t_end;
    return (x > y) - (x < y);
}

int bench_timeseries_of_records(const struct req_record *recs, int n, double interval_s, enum pct_method method,
                                const cJSON *server_metrics, const cJSON *hardware, struct bench_timeseries *out)
{
    memset(out, 0, sizeof *out);
    struct ts_acc a;
    if (ts_init(&a, interval_s, method) != 0)
        return -1;
    const struct req_record **by = malloc((size_t)(n > 0 ? n : 1) * sizeof *by);
    int k = 0;
    int64_t origin = 0;
    for (int i = 0; by && i < n; i++)
        if (!recs[i].warmup && recs[i].t_start) {
            by[k++] = &recs[i];
            origin = !origin || recs[i].t_start < origin ? recs[i].t_start : origin;
        }
    if (by) {
        qsort(by, (size_t)k, sizeof *by, by_end);
        if (origin)
            ts_begin(&a, origin);
        for (int i = 0; i < k; i++)
            ts_add(&a, by[i]);
    }
    struct ts_series s;
    int rc = by && ts_finish(&a, &s) == 0 ? 0 : -1;
    if (rc == 0) {
        rc = bench_timeseries_build(&s, server_metrics, hardware, out);
        ts_series_free(&s);
    }
    free(by);
    ts_free(&a);
    return rc;
}

void bench_timeseries_free(struct bench_timeseries *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}

int bench_timeseries_of_iter(struct rec_iter *it, double interval_s, enum pct_method method,
                             const cJSON *server_metrics, const cJSON *hardware, struct bench_timeseries *out)
{
    if (it->recs)       /* an array in request order: sorted by end */
        return bench_timeseries_of_records(it->recs, (int)it->n, interval_s, method, server_metrics, hardware, out);
    memset(out, 0, sizeof *out);
    struct ts_acc a;
    if (ts_init(&a, interval_s, method) != 0)
        return -1;
    int64_t origin = 0;
    int rc = it->rewind(it);
    for (const struct req_record *r; rc == 0 && (r = it->next(it));)
        if (!r->warmup && r->t_start && (!origin || r->t_start < origin))
            origin = r->t_start;
    if (origin)
        ts_begin(&a, origin);
    if (rc == 0 && !it->err[0])
        rc = it->rewind(it);
    for (const struct req_record *r; rc == 0 && (r = it->next(it));)
        ts_add(&a, r);
    struct ts_series s;
    rc = rc == 0 && !it->err[0] && ts_finish(&a, &s) == 0 ? 0 : -1;
    if (rc == 0) {
        rc = bench_timeseries_build(&s, server_metrics, hardware, out);
        ts_series_free(&s);
    }
    ts_free(&a);
    return rc;
}
