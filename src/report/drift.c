/* drift.c — the first and last quarter of a time series compared. */
#include "report/drift.h"

#include <math.h>
#include <stdlib.h>

/* A metric of a row: its value, NaN when the row has none. */
struct drift_metric {
    const char *label, *unit;
    double (*of)(const struct bench_ts_row *r, double interval_s);
    bool bound;     /* a merged row holds an upper bound, not the value (p99: the largest of its rows') */
};

static double ttft_p50(const struct bench_ts_row *r, double w) { (void)w; return r->ttft_p50_ms; }
static double ttft_p99(const struct bench_ts_row *r, double w) { (void)w; return r->ttft_p99_ms; }
static double itl_p50(const struct bench_ts_row *r, double w) { (void)w; return r->itl_p50_ms; }
static double itl_p99(const struct bench_ts_row *r, double w) { (void)w; return r->itl_p99_ms; }
static double out_tps(const struct bench_ts_row *r, double w) { return (double)r->output_tokens / w; }
static double done_rps(const struct bench_ts_row *r, double w) { return (double)r->completed / w; }
static double failed_rps(const struct bench_ts_row *r, double w) { return (double)r->failed / w; }
static double in_flight(const struct bench_ts_row *r, double w) { (void)w; return (double)r->in_flight; }
static double running(const struct bench_ts_row *r, double w) { (void)w; return r->server.present ? r->server.running_requests : NAN; }
static double waiting(const struct bench_ts_row *r, double w) { (void)w; return r->server.present ? r->server.waiting_requests : NAN; }
static double kv(const struct bench_ts_row *r, double w) { (void)w; return r->server.present ? r->server.kv_cache_usage : NAN; }
static double gpu_util(const struct bench_ts_row *r, double w) { (void)w; return r->gpu.present ? r->gpu.util_pct : NAN; }
static double gpu_power(const struct bench_ts_row *r, double w) { (void)w; return r->gpu.present ? r->gpu.power_w : NAN; }
static double gpu_temp(const struct bench_ts_row *r, double w) { (void)w; return r->gpu.present ? r->gpu.temp_c : NAN; }
static double gpu_mem(const struct bench_ts_row *r, double w) { (void)w; return r->gpu.present ? r->gpu.mem_used_mb : NAN; }

static const struct drift_metric metrics[] = {
    {"TTFT p50", "ms", ttft_p50}, {"TTFT p99", "ms", ttft_p99, true}, {"ITL p50", "ms", itl_p50},
    {"ITL p99", "ms", itl_p99, true}, {"output tokens/s", "tok/s", out_tps}, {"completed requests/s", "req/s", done_rps},
    {"failed requests/s", "req/s", failed_rps}, {"requests in flight", "requests", in_flight},
    {"server running requests", "requests", running}, {"server waiting requests", "requests", waiting},
    {"server KV cache usage", "ratio", kv}, {"GPU utilization", "%", gpu_util}, {"GPU power", "W", gpu_power},
    {"GPU temperature", "C", gpu_temp}, {"GPU memory used", "MiB", gpu_mem},
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank p of n sorted values. */
static double rank(const double *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n / 100.0 - 1e-9);
    return v[(k < 1 ? 1 : k > n ? n : k) - 1];
}

/* Metric m's non-NaN values of rows [lo, lo + n) into v, sorted; returns
 * how many. */
static size_t quarter(const struct bench_timeseries *t, const struct drift_metric *m, size_t lo, size_t n,
                      double *v)
{
    size_t k = 0;
    for (size_t i = lo; i < lo + n; i++) {
        double x = m->of(&t->rows[i], t->interval_s);
        if (!isnan(x))
            v[k++] = x;
    }
    qsort(v, k, sizeof *v, cmp_double);
    return k;
}

int drift_compare(const struct bench_timeseries *t, double from_s, struct drift *out, int cap, double *quarter_s)
{
    if (!t->present || !(t->interval_s > 0))
        return -1;
    size_t lo = 0;      /* the first full row from from_s on */
    while (lo < t->n_rows && t->rows[lo].t_s < from_s - 1e-9)
        lo++;
    if (t->n_rows < lo + DRIFT_MIN_ROWS + 1)
        return -1;
    size_t full = t->n_rows - 1 - lo, q = full / 4;
    double *a = malloc(q * sizeof *a), *b = malloc(q * sizeof *b);
    int n = 0;
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    for (size_t i = 0; i < sizeof metrics / sizeof *metrics && n < cap; i++) {
        /* an upper bound against a value would be drift that is not there */
        if (metrics[i].bound && t->rows[lo].t_s < t->exact_from_s - 1e-9)
            continue;
        size_t na = quarter(t, &metrics[i], lo, q, a), nb = quarter(t, &metrics[i], lo + full - q, q, b);
        if (na < 2 || nb < 2)
            continue;
        struct drift *d = &out[n++];
        *d = (struct drift){.label = metrics[i].label, .unit = metrics[i].unit, .first = rank(a, na, 50),
                            .last = rank(b, nb, 50)};
        d->noise = fmax(0.1 * fmax(fabs(d->first), fabs(d->last)),
                        fmax(rank(a, na, 75) - rank(a, na, 25), rank(b, nb, 75) - rank(b, nb, 25)));
        d->drifted = fabs(d->last - d->first) > d->noise;
    }
    free(a);
    free(b);
    if (quarter_s)
        *quarter_s = (double)q * t->interval_s;
    return n;
}

int drift_of_run(const struct benchmark *b, struct drift *out, int cap, double *quarter_s)
{
    /* a ramp's rows rise by design: judged from its end */
    double from = b->steady_state.present ? b->steady_state.not_before_s : 0;
    return drift_compare(&b->timeseries, from, out, cap, quarter_s);
}
