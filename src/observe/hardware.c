/* hardware.c — GPU and host telemetry over the window (see hardware.h). */
#include "observe/hardware.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "observe/host.h"

struct gpu_sample gpu_sample_none(void)
{
    return (struct gpu_sample){NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, false, 0};
}

struct hw_reading *hw_reading_new(int n_gpus)
{
    if (n_gpus < 0 || n_gpus > GPU_MAX)
        return NULL;
    struct hw_reading *r = calloc(1, sizeof *r + (size_t)n_gpus * sizeof r->gpu[0]);
    if (!r)
        return NULL;
    r->n_gpus = n_gpus;
    r->host = (struct host_sample){NAN, NAN, NAN, NAN, NAN};
    for (int i = 0; i < n_gpus; i++)
        r->gpu[i] = gpu_sample_none();
    return r;
}

int hw_series_add(struct hw_series *s, struct hw_reading *r)
{
    if (VEC_RESERVE(s->r, s->cap, s->n + 1, 64) != 0) {
        free(r);
        return -1;
    }
    s->r[s->n++] = r;
    return 0;
}

void hw_series_free(struct hw_series *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->r[i]);
    free(s->r);
    *s = (struct hw_series){0};
}

static int64_t mid(const struct hw_reading *r)
{
    return r->t_sent + (r->t_done - r->t_sent) / 2;
}

static double field(const struct gpu_sample *g, size_t off)
{
    double v;
    memcpy(&v, (const char *)g + off, sizeof v);
    return v;
}

/* Scratch arrays sized for every (reading, device) pair. */
struct work {
    const struct hw_series *s;
    const struct hw_client *c;
    int64_t *m;
    double *v;
};

/* Device d's field at offset off over the window. */
static int device_gauge(struct work *w, int d, size_t off, struct obs_gauge *out)
{
    size_t k = 0;
    for (size_t i = 0; i < w->s->n; i++) {
        const struct hw_reading *r = w->s->r[i];
        w->m[k] = mid(r);
        w->v[k++] = r->ok && d < r->n_gpus ? field(&r->gpu[d], off) : NAN;
    }
    return obs_gauge_summary(w->m, w->v, k, w->c->window_start, w->c->window_end, out);
}

/* The device's counter at both boundaries (interpolated), in J; NaN when
 * either boundary lacks a reading on both sides or it went backwards. */
static double energy_from_counter(const struct work *w, int d)
{
    const struct hw_series *s = w->s;
    struct obs_time *t = calloc(s->n ? s->n : 1, sizeof *t);
    if (!t)
        return NAN;
    for (size_t i = 0; i < s->n; i++) {
        const struct hw_reading *r = s->r[i];
        t[i] = (struct obs_time){r->t_sent, r->t_done, r->ok && d < r->n_gpus && !isnan(r->gpu[d].energy_mj)};
    }
    struct obs_pick a = obs_pick_boundary(t, s->n, w->c->window_start, true, OBS_INTERPOLATE);
    struct obs_pick b = obs_pick_boundary(t, s->n, w->c->window_end, false, OBS_INTERPOLATE);
    free(t);
    if (a.lo < 0 || a.hi < 0 || b.lo < 0 || b.hi < 0)
        return NAN;
    double es = obs_pick_value(&a, s->r[a.lo]->gpu[d].energy_mj, s->r[a.hi]->gpu[d].energy_mj);
    double ee = obs_pick_value(&b, s->r[b.lo]->gpu[d].energy_mj, s->r[b.hi]->gpu[d].energy_mj);
    return ee >= es ? (ee - es) / 1000 : NAN;
}

struct point {
    int64_t t;
    double p;
};

static int cmp_point(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* Power at t from the sorted points: linear between them, held past the ends. */
static double power_at(const struct point *p, size_t n, int64_t t)
{
    if (t <= p[0].t)
        return p[0].p;
    if (t >= p[n - 1].t)
        return p[n - 1].p;
    size_t lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        size_t m = (lo + hi) / 2;
        *(p[m].t <= t ? &lo : &hi) = m;
    }
    double f = (double)(t - p[lo].t) / (double)(p[hi].t - p[lo].t);
    return p[lo].p + f * (p[hi].p - p[lo].p);
}

/* ∫ power over the window, J (exact for the piecewise-linear power). */
static double energy_from_power(const struct work *w, int d)
{
    const struct hw_series *s = w->s;
    struct point *p = malloc((s->n ? s->n : 1) * sizeof *p);
    if (!p)
        return NAN;
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct hw_reading *r = s->r[i];
        if (r->ok && d < r->n_gpus && !isnan(r->gpu[d].power_w))
            p[n++] = (struct point){mid(r), r->gpu[d].power_w};
    }
    double e = NAN;
    if (n > 0) {
        qsort(p, n, sizeof *p, cmp_point);
        int64_t a = w->c->window_start, end = w->c->window_end;
        e = 0;
        double pa = power_at(p, n, a);
        for (size_t i = 0; i <= n; i++) {
            int64_t b = i < n ? p[i].t : end;
            if (b <= a)
                continue;
            if (b > end)
                b = end;
            double pb = power_at(p, n, b);
            e += (pa + pb) / 2 * (double)(b - a) / 1e9;
            a = b;
            pa = pb;
            if (a == end)
                break;
        }
    }
    free(p);
    return e;
}

static void throttle_shares(const struct work *w, int d, struct hw_device_summary *o)
{
    int n = 0, thermal = 0, power = 0, slow = 0;
    for (size_t i = 0; i < w->s->n; i++) {
        const struct hw_reading *r = w->s->r[i];
        int64_t m = mid(r);
        if (!r->ok || d >= r->n_gpus || !r->gpu[d].has_throttle || m < w->c->window_start || m > w->c->window_end)
            continue;
        uint64_t t = r->gpu[d].throttle;
        n++;
        thermal += (t & GPU_THROTTLE_THERMAL) != 0;
        power += (t & GPU_THROTTLE_POWER) != 0;
        slow += (t & GPU_THROTTLE_SLOWING) != 0;
    }
    o->thermal_share = n ? (double)thermal / n : NAN;
    o->power_cap_share = n ? (double)power / n : NAN;
    o->slowdown_share = n ? (double)slow / n : NAN;
}

/* The newest reading's value of a device's constant (total memory, limit). */
static double newest(const struct hw_series *s, int d, size_t off)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->r[i]->ok && d < s->r[i]->n_gpus && !isnan(field(&s->r[i]->gpu[d], off)))
            return field(&s->r[i]->gpu[d], off);
    return NAN;
}

static int device(struct work *w, int d, struct hw_device_summary *o)
{
    static const struct { size_t off; size_t dst; } g[] = {
        {offsetof(struct gpu_sample, util_pct), offsetof(struct hw_device_summary, util_pct)},
        {offsetof(struct gpu_sample, mem_util_pct), offsetof(struct hw_device_summary, mem_util_pct)},
        {offsetof(struct gpu_sample, mem_used_mib), offsetof(struct hw_device_summary, mem_used_mib)},
        {offsetof(struct gpu_sample, power_w), offsetof(struct hw_device_summary, power_w)},
        {offsetof(struct gpu_sample, temp_c), offsetof(struct hw_device_summary, temp_c)},
        {offsetof(struct gpu_sample, sm_mhz), offsetof(struct hw_device_summary, sm_mhz)},
        {offsetof(struct gpu_sample, mem_mhz), offsetof(struct hw_device_summary, mem_mhz)},
        {offsetof(struct gpu_sample, pcie_rx_mib_s), offsetof(struct hw_device_summary, pcie_rx_mib_s)},
        {offsetof(struct gpu_sample, pcie_tx_mib_s), offsetof(struct hw_device_summary, pcie_tx_mib_s)},
    };
    o->info = w->s->info[d];
    for (size_t i = 0; i < sizeof g / sizeof *g; i++)
        if (device_gauge(w, d, g[i].off, (struct obs_gauge *)((char *)o + g[i].dst)) != 0)
            return -1;
    o->samples = o->util_pct.samples > o->power_w.samples ? o->util_pct.samples : o->power_w.samples;
    o->mem_total_mib = newest(w->s, d, offsetof(struct gpu_sample, mem_total_mib));
    o->power_limit_w = newest(w->s, d, offsetof(struct gpu_sample, power_limit_w));
    throttle_shares(w, d, o);
    o->energy_j = energy_from_counter(w, d);
    o->energy_source = isnan(o->energy_j) ? NULL : "energy_counter";
    if (isnan(o->energy_j)) {
        o->energy_j = energy_from_power(w, d);
        o->energy_source = isnan(o->energy_j) ? NULL : "integrated_power";
    }
    return 0;
}

/* A per-reading aggregate over devices (Σ, mean or max of a field). */
enum agg { AGG_SUM, AGG_MEAN, AGG_MAX };

static int run_gauge(struct work *w, size_t off, enum agg agg, struct obs_gauge *out)
{
    size_t k = 0;
    for (size_t i = 0; i < w->s->n; i++) {
        const struct hw_reading *r = w->s->r[i];
        double acc = NAN;
        int n = 0;
        for (int d = 0; r->ok && d < r->n_gpus; d++) {
            double v = field(&r->gpu[d], off);
            if (isnan(v))
                continue;
            acc = n++ == 0 ? v : agg == AGG_MAX ? fmax(acc, v) : acc + v;
        }
        w->m[k] = mid(r);
        w->v[k++] = agg == AGG_MEAN && n ? acc / n : acc;
    }
    return obs_gauge_summary(w->m, w->v, k, w->c->window_start, w->c->window_end, out);
}

/* Seed 004's names: averages over (reading, device), maxima over both,
 * totals summed over devices per reading. */
static int run_summary(struct work *w, struct hw_summary *o)
{
    struct hw_run_summary *r = &o->run;
    struct obs_gauge mean, max;
    const struct { size_t off; double *avg, *mx; } pairs[] = {
        {offsetof(struct gpu_sample, util_pct), &r->gpu_util_avg_pct, &r->gpu_util_max_pct},
        {offsetof(struct gpu_sample, mem_util_pct), &r->mem_util_avg_pct, &r->mem_util_max_pct},
        {offsetof(struct gpu_sample, temp_c), &r->temp_avg_c, &r->temp_max_c},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        if (run_gauge(w, pairs[i].off, AGG_MEAN, &mean) != 0 || run_gauge(w, pairs[i].off, AGG_MAX, &max) != 0)
            return -1;
        *pairs[i].avg = mean.mean;
        *pairs[i].mx = max.max;
    }
    const struct { size_t off; double *avg, *mx; } totals[] = {
        {offsetof(struct gpu_sample, power_w), &r->power_total_avg_w, &r->power_total_max_w},
        {offsetof(struct gpu_sample, mem_used_mib), &r->vram_used_avg_mb, &r->vram_used_max_mb},
        {offsetof(struct gpu_sample, pcie_rx_mib_s), &r->pcie_rx_avg_mb_s, &r->pcie_rx_max_mb_s},
        {offsetof(struct gpu_sample, pcie_tx_mib_s), &r->pcie_tx_avg_mb_s, &r->pcie_tx_max_mb_s},
    };
    for (size_t i = 0; i < sizeof totals / sizeof *totals; i++) {
        if (run_gauge(w, totals[i].off, AGG_SUM, &mean) != 0)
            return -1;
        *totals[i].avg = mean.mean;
        *totals[i].mx = mean.max;
    }
    r->samples = 0;
    for (size_t i = 0; i < w->s->n; i++) {
        int64_t m = mid(w->s->r[i]);
        r->samples += w->s->r[i]->ok && m >= w->c->window_start && m <= w->c->window_end;
    }
    r->duration_seconds = o->window_s;
    r->gpu_count = o->n_gpus;
    r->power_limit_total_w = r->vram_total_mb = 0;
    for (int d = 0; d < o->n_gpus; d++) {
        r->power_limit_total_w += o->dev[d].power_limit_w;
        r->vram_total_mb += o->dev[d].mem_total_mib;
    }
    r->vram_used_avg_pct = r->vram_total_mb > 0 ? 100 * r->vram_used_avg_mb / r->vram_total_mb : NAN;
    r->vram_used_max_pct = r->vram_total_mb > 0 ? 100 * r->vram_used_max_mb / r->vram_total_mb : NAN;
    r->cpu_util_avg_pct = o->cpu_util_pct.mean;
    r->cpu_temp_max_c = o->cpu_temp_c.max;
    return 0;
}

/* Seed 002's gpu block: the median SM clock and the share of thermally
 * throttled samples over every device's samples, the hottest temperature. */
static int seed002(struct work *w, struct hw_summary *o)
{
    size_t k = 0;
    int n = 0, thermal = 0;
    for (size_t i = 0; i < w->s->n; i++) {
        const struct hw_reading *r = w->s->r[i];
        for (int d = 0; r->ok && d < r->n_gpus; d++) {
            w->m[k] = mid(r);
            w->v[k++] = r->gpu[d].sm_mhz;
            if (r->gpu[d].has_throttle && w->m[k - 1] >= w->c->window_start && w->m[k - 1] <= w->c->window_end) {
                n++;
                thermal += (r->gpu[d].throttle & GPU_THROTTLE_THERMAL) != 0;
            }
        }
    }
    struct obs_gauge g;
    if (obs_gauge_summary(w->m, w->v, k, w->c->window_start, w->c->window_end, &g) != 0)
        return -1;
    o->median_sm_mhz = g.median;
    o->max_temp_c = o->run.temp_max_c;
    o->thermal_share = n ? (double)thermal / n : NAN;
    return 0;
}

static int host(struct work *w, struct hw_summary *o)
{
    const struct hw_series *s = w->s;
    size_t *order = malloc((s->n ? s->n : 1) * sizeof *order), k = 0;
    if (!order)
        return -1;
    for (size_t i = 0; i < s->n; i++)       /* insertion sort by midpoint: readings arrive nearly sorted */
        if (s->r[i]->has_host) {
            size_t j = k++;
            while (j > 0 && mid(s->r[order[j - 1]]) > mid(s->r[i])) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = i;
        }
    o->host = k > 0;
    struct obs_gauge *dst[] = {&o->cpu_util_pct, &o->host_mem_used_mib, &o->cpu_temp_c};
    int rc = 0;
    for (int f = 0; f < 3 && rc == 0; f++) {
        for (size_t j = 0; j < k; j++) {
            const struct hw_reading *r = s->r[order[j]];
            w->m[j] = mid(r);
            w->v[j] = f == 0 ? (j ? host_cpu_util(&s->r[order[j - 1]]->host, &r->host) : NAN)
                    : f == 1 ? r->host.mem_used_mib : r->host.cpu_temp_c;
        }
        rc = obs_gauge_summary(w->m, w->v, k, w->c->window_start, w->c->window_end, dst[f]);
    }
    o->host_mem_total_mib = k ? s->r[order[k - 1]]->host.mem_total_mib : NAN;
    free(order);
    return rc;
}

static void energy_total(struct hw_summary *o, double tokens)
{
    o->energy_j = 0;
    int counter = 0, integrated = 0;
    for (int d = 0; d < o->n_gpus; d++) {
        if (!o->dev[d].energy_source) {
            o->energy_j = NAN;
            o->energy_source = NULL;
            break;
        }
        o->energy_j += o->dev[d].energy_j;
        counter += !strcmp(o->dev[d].energy_source, "energy_counter");
        integrated += !strcmp(o->dev[d].energy_source, "integrated_power");
    }
    if (!isnan(o->energy_j) && o->n_gpus > 0)
        o->energy_source = !integrated ? "energy_counter" : !counter ? "integrated_power" : "mixed";
    else
        o->energy_j = NAN;
    o->output_tokens = tokens;
    o->output_tokens_per_joule = o->energy_j > 0 ? tokens / o->energy_j : NAN;
    o->joules_per_output_token = tokens > 0 ? o->energy_j / tokens : NAN;
}

int hw_summarize(const struct hw_series *s, const struct hw_client *c, struct hw_summary *o)
{
    *o = (struct hw_summary){.n_gpus = s->n_gpus, .window_s = (double)(c->window_end - c->window_start) / 1e9,
                             .median_sm_mhz = NAN, .max_temp_c = NAN, .thermal_share = NAN, .energy_j = NAN,
                             .output_tokens = NAN, .output_tokens_per_joule = NAN, .joules_per_output_token = NAN};
    for (size_t i = 0; i < s->n; i++) {
        const struct hw_reading *r = s->r[i];
        if (!r->ok) {
            o->readings_failed++;
            snprintf(o->last_error, sizeof o->last_error, "%s", r->error);
            continue;
        }
        o->readings_ok++;
        o->max_read_ms = fmax(o->max_read_ms, (double)(r->t_done - r->t_sent) / 1e6);
        if (r->t_due)
            o->max_late_ms = fmax(o->max_late_ms, (double)(r->t_sent - r->t_due) / 1e6);
    }
    size_t cap = (s->n ? s->n : 1) * (size_t)(s->n_gpus > 0 ? s->n_gpus : 1);
    struct work w = {s, c, malloc(cap * sizeof *w.m), malloc(cap * sizeof *w.v)};
    int rc = w.m && w.v ? 0 : -1;
    for (int d = 0; rc == 0 && d < s->n_gpus; d++)
        rc = device(&w, d, &o->dev[d]);
    if (rc == 0)
        rc = host(&w, o);
    if (rc == 0)
        rc = run_summary(&w, o);
    if (rc == 0)
        rc = seed002(&w, o);
    free(w.m);
    free(w.v);
    if (rc != 0)
        return -1;
    energy_total(o, c->output_tokens);
    o->available = o->n_gpus == 0 ? o->host : o->run.samples > 0 || !isnan(o->energy_j);
    if (!o->available)
        snprintf(o->reason, sizeof o->reason, "no telemetry reading inside the window%s%s",
                 o->last_error[0] ? "; last error: " : "", o->last_error);
    return 0;
}
