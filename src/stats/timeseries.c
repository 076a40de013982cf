/* timeseries.c — the run over time, accumulated as requests end. */
#include "stats/timeseries.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/metrics.h"

/* An open row's values: TTFT of the completed requests ending in it, and
 * every inter-chunk gap of those requests. */
struct ts_open {
    double *ttft, *itl;
    size_t n_ttft, cap_ttft, n_itl, cap_itl;
};

/* Appends v to *arr (n used, cap allocated). Returns 0 or -1 (memory). */
static int push(double **arr, size_t *n, size_t *cap, double v)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        double *p = realloc(*arr, c * sizeof *p);
        if (!p)
            return -1;
        *arr = p;
        *cap = c;
    }
    (*arr)[(*n)++] = v;
    return 0;
}

/* The next merge for stage (its threshold, rounded up to a whole row of
 * the coarser width), or 0 when there is none. */
static int64_t merge_width(int64_t width, int stage)
{
    int64_t target = stage == 0 ? TS_MERGE1_WIDTH_NS : TS_MERGE2_WIDTH_NS;
    if (stage >= 2 || width >= target)
        return width;
    return width * ((target + width - 1) / width);
}

static int64_t merge_at(int64_t width, int stage)
{
    int64_t w = merge_width(width, stage);
    if (stage >= 2)
        return 0;
    int64_t after = stage == 0 ? TS_MERGE1_AFTER_NS : TS_MERGE2_AFTER_NS;
    return w * ((after + w - 1) / w);
}

int ts_init(struct ts_acc *a, double interval_s, enum pct_method method)
{
    memset(a, 0, sizeof *a);
    if (!(interval_s >= 0.001) || interval_s > 86400)
        return -1;
    pthread_mutex_init(&a->mu, NULL);
    a->method = method;
    a->requested_s = interval_s;
    a->width_ns = llround(interval_s * 1e9);
    a->next_at_ns = merge_at(a->width_ns, 0);
    return 0;
}

void ts_begin(struct ts_acc *a, int64_t origin_ns)
{
    pthread_mutex_lock(&a->mu);
    if (!a->origin && !a->n)
        a->origin = origin_ns;
    pthread_mutex_unlock(&a->mu);
}

static void open_free(struct ts_open *o)
{
    if (!o)
        return;
    free(o->ttft);
    free(o->itl);
    free(o);
}

/* The p-th percentile of n values (reordered here), NaN when n is 0: by
 * selection, not a sort, since a row closes on a measuring loop (a sort of
 * a second's 100,000 gaps held it for 10 ms, and late reads merged first
 * tokens). */
static double pct_of(double *v, size_t n, double p, enum pct_method m)
{
    if (!n)
        return NAN;
    return pct_select(v, n, p, m);
}

/* Computes row r's percentiles from its values and frees them. */
static void close_row(struct ts_acc *a, struct ts_row *r)
{
    struct ts_open *o = r->open;
    if (!o)
        return;
    r->p.ttft_p50_ms = pct_of(o->ttft, o->n_ttft, 50, a->method);
    r->p.ttft_p99_ms = pct_of(o->ttft, o->n_ttft, 99, a->method);
    r->p.itl_p50_ms = pct_of(o->itl, o->n_itl, 50, a->method);
    r->p.itl_p99_ms = pct_of(o->itl, o->n_itl, 99, a->method);
    r->p.ttft_samples = (long)o->n_ttft;
    r->p.itl_samples = (long)o->n_itl;
    open_free(o);
    r->open = NULL;
}

static struct ts_point empty_point(double t_s)
{
    return (struct ts_point){.t_s = t_s, .ttft_p50_ms = NAN, .ttft_p99_ms = NAN, .itl_p50_ms = NAN,
                             .itl_p99_ms = NAN};
}

/* Makes rows up to index k exist (new ones open). Returns 0 or -1. */
static int reach(struct ts_acc *a, size_t k)
{
    if (k < a->n)
        return 0;
    if (k >= a->cap) {
        size_t c = a->cap ? a->cap : 64;
        while (c <= k)
            c *= 2;
        struct ts_row *p = realloc(a->rows, c * sizeof *p);
        if (!p)
            return -1;
        a->rows = p;
        a->cap = c;
    }
    for (size_t i = a->n; i <= k; i++)
        a->rows[i] = (struct ts_row){.p = empty_point((double)i * (double)a->width_ns / 1e9)};
    a->n = k + 1;
    return 0;
}

/* The median (nearest rank) of the non-NaN values of v[0..n) (sorted in
 * place) and their largest, NaN when none. */
static void med_max(double *v, size_t n, double *med, double *max)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    *med = pct_of(v, k, 50, PCT_NEAREST);
    *max = k ? v[k - 1] : NAN;
}

/* One merged row from the k closed rows at src; sc is scratch for k values. */
static struct ts_point merged(const struct ts_row *src, size_t k, double t_s, double *sc)
{
    struct ts_point m = empty_point(t_s);
    for (size_t i = 0; i < k; i++) {
        const struct ts_point *p = &src[i].p;
        m.started += p->started;
        m.completed += p->completed;
        m.failed += p->failed;
        m.cut += p->cut;
        m.output_tokens += p->output_tokens;
        m.ttft_samples += p->ttft_samples;
        m.itl_samples += p->itl_samples;
    }
    double unused;
    for (int which = 0; which < 4; which++) {
        for (size_t i = 0; i < k; i++) {
            const struct ts_point *p = &src[i].p;
            double v[4] = {p->ttft_p50_ms, p->ttft_p99_ms, p->itl_p50_ms, p->itl_p99_ms};
            sc[i] = v[which];
        }
        double *med = which == 0 ? &m.ttft_p50_ms : which == 2 ? &m.itl_p50_ms : &unused;
        double *max = which == 1 ? &m.ttft_p99_ms : which == 3 ? &m.itl_p99_ms : &unused;
        med_max(sc, k, med, max);
    }
    return m;
}

/* Merges the rows to the next stage's width, every row closed first.
 * Returns 0 or -1 (memory). */
static int merge(struct ts_acc *a)
{
    int64_t w = merge_width(a->width_ns, a->stage);
    size_t f = (size_t)(w / a->width_ns);
    int64_t at = a->next_at_ns;
    a->stage++;
    a->next_at_ns = merge_at(w, a->stage);
    if (f < 2)
        return 0;       /* the rows are already that wide */
    double *sc = malloc(f * sizeof *sc);
    if (!sc)
        return -1;
    for (size_t i = a->first_open; i < a->n; i++)
        close_row(a, &a->rows[i]);
    size_t n = 0;
    for (size_t i = 0; i < a->n; i += f, n++) {
        size_t k = a->n - i < f ? a->n - i : f;
        a->rows[n].p = merged(&a->rows[i], k, (double)n * (double)w / 1e9, sc);
    }
    free(sc);
    a->n = a->first_open = n;
    a->exact_from_ns = at;
    a->width_ns = w;
    return 0;
}

/* Row index of CLOCK_MONOTONIC instant t (0 for instants before the origin). */
static size_t row_of(const struct ts_acc *a, int64_t t)
{
    return t > a->origin ? (size_t)((t - a->origin) / a->width_ns) : 0;
}

/* Adds r's TTFT and chunk gaps to open row o. Returns 0 or -1. */
static int add_values(struct ts_open *o, const struct req_record *r, double ttft_ms)
{
    if (!isnan(ttft_ms) && push(&o->ttft, &o->n_ttft, &o->cap_ttft, ttft_ms) != 0)
        return -1;
    for (size_t i = 1; i < r->n_chunks; i++)
        if (push(&o->itl, &o->n_itl, &o->cap_itl, (double)(r->chunks[i].t_ns - r->chunks[i - 1].t_ns) / 1e6) != 0)
            return -1;
    return 0;
}

/* Under the lock: counts r and, when its row is open, its values. */
static int add_locked(struct ts_acc *a, const struct req_record *r, long tokens, double ttft_ms)
{
    if (!a->origin)
        a->origin = r->t_start;
    while (a->next_at_ns && r->t_end - a->origin >= a->next_at_ns)
        if (merge(a) != 0)
            return -1;
    size_t ks = row_of(a, r->t_start), ke = row_of(a, r->t_end);
    if (reach(a, ke > ks ? ke : ks) != 0)
        return -1;
    a->rows[ks].p.started++;
    struct ts_point *e = &a->rows[ke].p;
    if (r->cut) {
        e->cut++;
        return 0;
    }
    if (r->fail != FAIL_NONE) {
        e->failed++;
        return 0;
    }
    e->completed++;
    e->output_tokens += tokens;
    /* rows two behind the newest end are closed: their values are final */
    for (; a->first_open + 2 <= ke; a->first_open++)
        close_row(a, &a->rows[a->first_open]);
    if (ke < a->first_open) {
        a->late++;
        return 0;
    }
    struct ts_row *row = &a->rows[ke];
    if (!row->open && !(row->open = calloc(1, sizeof *row->open)))
        return -1;
    return add_values(row->open, r, ttft_ms);
}

void ts_add(struct ts_acc *a, const struct req_record *r)
{
    if (r->warmup || !r->t_start)
        return;
    long tokens = 0;
    double ttft = NAN;
    if (r->fail == FAIL_NONE && !r->cut) {     /* the per-request work, off the lock */
        struct req_metrics m;
        metrics_derive(r, &m);
        tokens = m.output_tokens;
        ttft = m.ttft_ms;
    }
    pthread_mutex_lock(&a->mu);
    if (!a->failed && add_locked(a, r, tokens, ttft) != 0)
        a->failed = 1;
    pthread_mutex_unlock(&a->mu);
}

int ts_finish(struct ts_acc *a, struct ts_series *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&a->mu);
    for (size_t i = a->first_open; i < a->n; i++)
        close_row(a, &a->rows[i]);
    a->first_open = a->n;
    int rc = a->failed ? -1 : 0;
    struct ts_point *rows = !rc && a->n ? malloc(a->n * sizeof *rows) : NULL;
    if (a->n && !rows)
        rc = -1;
    if (!rc) {
        long in_flight = 0;
        for (size_t i = 0; i < a->n; i++) {
            rows[i] = a->rows[i].p;
            in_flight += rows[i].started - rows[i].completed - rows[i].failed - rows[i].cut;
            rows[i].in_flight = in_flight;
        }
        *out = (struct ts_series){
            .interval_s = (double)a->width_ns / 1e9, .interval_ns = a->width_ns, .requested_interval_s = a->requested_s,
            .exact_from_s = (double)a->exact_from_ns / 1e9, .origin_ns = a->origin, .late = a->late,
            .rows = rows, .n_rows = a->n,
        };
    }
    free(a->rows);
    a->rows = NULL;
    a->n = a->cap = a->first_open = 0;
    pthread_mutex_unlock(&a->mu);
    return rc;
}

void ts_free(struct ts_acc *a)
{
    if (!a->width_ns)
        return;     /* never initialized */
    for (size_t i = 0; i < a->n; i++)
        open_free(a->rows[i].open);
    free(a->rows);
    a->rows = NULL;
    a->n = a->cap = 0;
    pthread_mutex_destroy(&a->mu);
    a->width_ns = 0;
}

void ts_series_add_tokens(struct ts_series *s, int64_t t_end_ns, long delta)
{
    if (!s->n_rows || !s->interval_ns)
        return;
    size_t k = t_end_ns > s->origin_ns ? (size_t)((t_end_ns - s->origin_ns) / s->interval_ns) : 0;
    if (k < s->n_rows)
        s->rows[k].output_tokens += delta;
}

void ts_series_free(struct ts_series *s)
{
    free(s->rows);
    memset(s, 0, sizeof *s);
}
