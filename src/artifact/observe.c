/* observe.c — server_metrics, hardware and hardware_run_summary blocks
 * (see observe.h; docs/ARTIFACTS.md). */
#include "artifact/observe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v && *v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_bool_or_null(cJSON *o, const char *k, int v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddBoolToObject(o, k, v);
}

static void add_pair(cJSON *o, const char *k, double a, double b)
{
    cJSON *arr = cJSON_AddArrayToObject(o, k);
    cJSON_AddItemToArray(arr, isfinite(a) ? cJSON_CreateNumber(a) : cJSON_CreateNull());
    cJSON_AddItemToArray(arr, isfinite(b) ? cJSON_CreateNumber(b) : cJSON_CreateNull());
}

static cJSON *gauge_json(const struct obs_gauge *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "samples", g->samples);
    cJSON_AddNumberToObject(o, "missed", g->missed);
    artifact_add_number(o, "coverage", g->coverage);
    cJSON_AddBoolToObject(o, "available", !isnan(g->time_weighted));
    artifact_add_number(o, "mean", g->mean);
    artifact_add_number(o, "time_weighted_mean", g->time_weighted);
    artifact_add_number(o, "max", g->max);
    artifact_add_number(o, "min", g->min);
    return o;
}

static cJSON *hist_json(const struct srv_hist_summary *h)
{
    cJSON *o = cJSON_CreateObject();
    artifact_add_number(o, "count", h->count);
    artifact_add_number(o, "mean_ms", h->mean * 1e3);
    artifact_add_number(o, "p50_ms", h->p50 * 1e3);
    artifact_add_number(o, "p90_ms", h->p90 * 1e3);
    artifact_add_number(o, "p99_ms", h->p99 * 1e3);
    add_pair(o, "p99_bucket_ms", h->p99_lo * 1e3, h->p99_hi * 1e3);
    cJSON_AddStringToObject(o, "percentiles", "estimated from histogram buckets (linear within a bucket)");
    return o;
}

static void server_window(cJSON *root, const struct srv_summary *s)
{
    cJSON *w = cJSON_AddObjectToObject(root, "window");
    artifact_add_number(w, "seconds", s->window_s);
    cJSON_AddStringToObject(w, "rule", s->rule == OBS_COVER ? "covering" : "interpolated");
    add_pair(w, "start_readings_ms", s->start_lo_ms, s->start_hi_ms);
    add_pair(w, "end_readings_ms", s->end_lo_ms, s->end_hi_ms);
    artifact_add_number(w, "start_weight", s->start_w);
    artifact_add_number(w, "end_weight", s->end_w);
}

static void server_counters(cJSON *root, const struct srv_summary *s)
{
    cJSON *c = cJSON_AddObjectToObject(root, "counters");
    for (int v = SV_GAUGE_END_; v < SV_N; v++)
        artifact_add_number(c, srv_value_name(v), s->delta[v]);
    cJSON *pos = cJSON_AddArrayToObject(c, "spec_accepted_per_position");
    for (int i = 0; i < s->n_pos; i++)
        cJSON_AddItemToArray(pos, isfinite(s->pos_delta[i]) ? cJSON_CreateNumber(s->pos_delta[i]) : cJSON_CreateNull());
    cJSON *raw = cJSON_AddObjectToObject(root, "raw_counters");
    for (size_t i = 0; i < s->n_raw; i++)
        artifact_add_number(raw, s->raw[i].key, s->raw[i].delta);
    cJSON *g = cJSON_AddObjectToObject(root, "gauges");
    for (int v = 0; v < SV_GAUGE_END_; v++)     /* the pool's size and block are constants: in derived */
        if (s->gauge[v].samples > 0 && v != SV_KV_POOL_TOKENS && v != SV_KV_BLOCK_SIZE)
            cJSON_AddItemToObject(g, srv_value_name(v), gauge_json(&s->gauge[v]));
    cJSON *h = cJSON_AddObjectToObject(root, "histograms");
    for (int i = 0; i < SVH_N; i++)
        if (!isnan(s->hist[i].count))
            cJSON_AddItemToObject(h, srv_hist_name(i), hist_json(&s->hist[i]));
}

/* Seed 004's server_* names, and anvil's additions beside them. */
static void server_derived(cJSON *root, const struct srv_summary *s)
{
    cJSON *d = cJSON_AddObjectToObject(root, "derived");
    artifact_add_number(d, "server_output_tokens", s->server_output_tokens);
    artifact_add_number(d, "server_gen_throughput", s->server_gen_throughput);
    artifact_add_number(d, "server_spec_accept_rate", s->spec_accept_rate);
    artifact_add_number(d, "server_spec_accept_length", s->spec_accept_length);
    add_str_or_null(d, "server_spec_source", s->spec_source);
    artifact_add_number(d, "server_spec_drafts", s->delta[SV_SPEC_DRAFTS]);
    artifact_add_number(d, "server_spec_draft_tokens", s->delta[SV_SPEC_DRAFT_TOKENS]);
    artifact_add_number(d, "server_spec_accepted_tokens", s->delta[SV_SPEC_ACCEPTED]);
    cJSON *pos = cJSON_AddArrayToObject(d, "server_spec_pos_accept");
    for (int i = 0; i < s->n_pos_accept; i++)
        cJSON_AddItemToArray(pos, isfinite(s->pos_accept[i]) ? cJSON_CreateNumber(s->pos_accept[i]) : cJSON_CreateNull());
    artifact_add_number(d, "server_engine_steps", s->engine_steps);
    artifact_add_number(d, "server_steps_per_s", s->steps_per_s);
    artifact_add_number(d, "server_accept_len_effective", s->accept_len_effective);
    artifact_add_number(d, "gauge_coverage", s->gauge_coverage);
    add_str_or_null(d, "gauge_reason", s->gauge_reason);
    artifact_add_number(d, "avg_running_reqs", s->avg_running_reqs);
    artifact_add_number(d, "max_running_reqs", s->max_running_reqs);
    artifact_add_number(d, "avg_queue_reqs", s->avg_queue_reqs);
    artifact_add_number(d, "max_queue_reqs", s->max_queue_reqs);
    artifact_add_number(d, "queue_fraction", s->queue_fraction);
    add_bool_or_null(d, "underfilled", s->underfilled);
    add_bool_or_null(d, "capacity_limited", s->capacity_limited);
    artifact_add_number(d, "batch_steps", s->batch_steps);
    artifact_add_number(d, "batch_steps_per_s", s->batch_steps_per_s);
    artifact_add_number(d, "tokens_per_batch_step", s->tokens_per_batch_step);
    artifact_add_number(d, "prefix_cache_hit_rate", s->prefix_cache_hit_rate);
    add_str_or_null(d, "prefix_cache_hit_rate_source", s->prefix_source);
    artifact_add_number(d, "kv_pool_tokens", s->kv_pool_tokens);
    artifact_add_number(d, "kv_block_size", s->kv_block_size);
    artifact_add_number(d, "preemptions", s->delta[SV_PREEMPTIONS]);
}

static void server_checks(cJSON *root, const struct srv_summary *s)
{
    cJSON *c = cJSON_AddObjectToObject(root, "cross_checks");
    artifact_add_number(c, "client_output_tokens", s->client_output_tokens);
    artifact_add_number(c, "server_output_tokens", s->server_output_tokens);
    artifact_add_number(c, "excess_tokens", s->token_excess);
    if (isnan(s->token_excess))
        cJSON_AddNullToObject(c, "other_traffic");
    else
        cJSON_AddBoolToObject(c, "other_traffic", s->other_traffic);
    cJSON *t = cJSON_AddObjectToObject(c, "ttft_split_ms");
    artifact_add_number(t, "client_ttft_mean", s->ttft_client_ms);
    artifact_add_number(t, "server_ttft_mean", s->ttft_server_ms);
    artifact_add_number(t, "server_queue_mean", s->queue_ms);
    artifact_add_number(t, "server_prefill_mean", s->prefill_ms);
    artifact_add_number(t, "transfer_mean", s->transfer_ms);
}

/* The head both observe blocks share: enabled, available, why not (the
 * switch's note when off, the summary's reason when unavailable), source. */
static cJSON *block_head(bool enabled, bool available, const char *off_note, const char *reason, const char *source)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddBoolToObject(o, "enabled", enabled);
    cJSON_AddBoolToObject(o, "available", enabled && available);
    add_str_or_null(o, "reason", !enabled ? off_note : available ? NULL : reason);
    add_str_or_null(o, "source", source);
    return o;
}

cJSON *artifact_server_metrics(const struct observe_report *r)
{
    const struct srv_summary *s = &r->server;
    cJSON *o = block_head(r->server_enabled, s->available, r->server_note, s->reason, r->server_url);
    if (!o)
        return NULL;
    if (!r->server_enabled)
        return o;
    cJSON_AddStringToObject(o, "engine", srv_engine_name(s->engine));
    add_str_or_null(o, "server_info", r->server_info_url);
    artifact_add_number(o, "scrape_interval_ms", r->scrape_interval_ms);
    cJSON *sc = cJSON_AddObjectToObject(o, "scrapes");
    cJSON_AddNumberToObject(sc, "ok", s->scrapes_ok);
    cJSON_AddNumberToObject(sc, "failed", s->scrapes_failed);
    add_str_or_null(sc, "last_error", s->last_error);
    cJSON_AddNumberToObject(sc, "max_bytes", s->max_bytes);
    cJSON_AddNumberToObject(sc, "max_ms", s->max_scrape_ms);
    cJSON_AddNumberToObject(sc, "max_late_ms", s->max_late_ms);
    if (!s->available)
        return o;
    server_window(o, s);
    server_counters(o, s);
    server_derived(o, s);
    server_checks(o, s);
    return o;
}

static void add_gauge_pair(cJSON *o, const char *avg, const char *max, const struct obs_gauge *g)
{
    artifact_add_number(o, avg, g->mean);
    artifact_add_number(o, max, g->max);
}

static cJSON *device_json(const struct hw_device_summary *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", d->info.index);
    add_str_or_null(o, "name", d->info.name);
    add_str_or_null(o, "uuid", d->info.uuid);
    cJSON_AddNumberToObject(o, "samples", d->samples);
    add_gauge_pair(o, "gpu_util_avg_pct", "gpu_util_max_pct", &d->util_pct);
    add_gauge_pair(o, "mem_util_avg_pct", "mem_util_max_pct", &d->mem_util_pct);
    add_gauge_pair(o, "vram_used_avg_mb", "vram_used_max_mb", &d->mem_used_mib);
    artifact_add_number(o, "vram_total_mb", d->mem_total_mib);
    add_gauge_pair(o, "power_avg_w", "power_max_w", &d->power_w);
    artifact_add_number(o, "power_limit_w", d->power_limit_w);
    add_gauge_pair(o, "temp_avg_c", "temp_max_c", &d->temp_c);
    artifact_add_number(o, "sm_clock_median_mhz", d->sm_mhz.median);
    artifact_add_number(o, "sm_clock_min_mhz", d->sm_mhz.min);
    artifact_add_number(o, "sm_clock_max_mhz", d->sm_mhz.max);
    artifact_add_number(o, "mem_clock_median_mhz", d->mem_mhz.median);
    add_gauge_pair(o, "pcie_rx_avg_mb_s", "pcie_rx_max_mb_s", &d->pcie_rx_mib_s);
    add_gauge_pair(o, "pcie_tx_avg_mb_s", "pcie_tx_max_mb_s", &d->pcie_tx_mib_s);
    artifact_add_number(o, "thermal_share", d->thermal_share);
    artifact_add_number(o, "power_cap_share", d->power_cap_share);
    artifact_add_number(o, "slowdown_share", d->slowdown_share);
    artifact_add_number(o, "energy_j", d->energy_j);
    add_str_or_null(o, "energy_source", d->energy_source);
    return o;
}

cJSON *artifact_hardware(const struct observe_report *r)
{
    const struct hw_summary *h = &r->hardware;
    cJSON *o = block_head(r->hardware_enabled, h->available, r->hardware_note, h->reason, r->gpu_source);
    if (!o)
        return NULL;
    add_str_or_null(o, "source_detail", r->gpu_source_detail);
    add_str_or_null(o, "note", r->hardware_enabled ? r->hardware_note : NULL);
    if (!r->hardware_enabled)
        return o;
    artifact_add_number(o, "interval_ms", r->telemetry_interval_ms);
    cJSON *rd = cJSON_AddObjectToObject(o, "readings");
    cJSON_AddNumberToObject(rd, "ok", h->readings_ok);
    cJSON_AddNumberToObject(rd, "failed", h->readings_failed);
    add_str_or_null(rd, "last_error", h->last_error);
    cJSON_AddNumberToObject(rd, "max_ms", h->max_read_ms);
    cJSON_AddNumberToObject(rd, "max_late_ms", h->max_late_ms);
    artifact_add_number(o, "window_s", h->window_s);
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    for (int d = 0; d < h->n_gpus; d++)
        cJSON_AddItemToArray(devs, device_json(&h->dev[d]));
    if (h->host) {
        cJSON *host = cJSON_AddObjectToObject(o, "host");
        cJSON_AddNumberToObject(host, "samples", h->host_mem_used_mib.samples);
        add_gauge_pair(host, "cpu_util_avg_pct", "cpu_util_max_pct", &h->cpu_util_pct);
        add_gauge_pair(host, "mem_used_avg_mb", "mem_used_max_mb", &h->host_mem_used_mib);
        artifact_add_number(host, "mem_total_mb", h->host_mem_total_mib);
        add_gauge_pair(host, "cpu_temp_avg_c", "cpu_temp_max_c", &h->cpu_temp_c);
    } else {
        cJSON_AddNullToObject(o, "host");
    }
    cJSON *g = cJSON_AddObjectToObject(o, "gpu");
    artifact_add_number(g, "median_sm_mhz", h->median_sm_mhz);
    artifact_add_number(g, "max_temp_c", h->max_temp_c);
    artifact_add_number(g, "thermal_share", h->thermal_share);
    cJSON *e = cJSON_AddObjectToObject(o, "energy");
    artifact_add_number(e, "joules", h->energy_j);
    add_str_or_null(e, "source", h->energy_source);
    artifact_add_number(e, "window_s", h->window_s);
    artifact_add_number(e, "output_tokens", h->output_tokens);
    artifact_add_number(e, "output_tokens_per_joule", h->output_tokens_per_joule);
    artifact_add_number(e, "joules_per_output_token", h->joules_per_output_token);
    return o;
}

cJSON *artifact_hardware_run_summary(const struct observe_report *r)
{
    const struct hw_summary *h = &r->hardware;
    if (!r->hardware_enabled || !h->available || h->n_gpus == 0)
        return cJSON_CreateNull();
    const struct hw_run_summary *s = &h->run;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "samples", s->samples);
    artifact_add_number(o, "duration_seconds", s->duration_seconds);
    cJSON_AddNumberToObject(o, "gpu_count", s->gpu_count);
    const struct { const char *k; double v; } f[] = {
        {"cpu_util_avg_pct", s->cpu_util_avg_pct}, {"cpu_temp_max_c", s->cpu_temp_max_c},
        {"gpu_util_avg_pct", s->gpu_util_avg_pct}, {"gpu_util_max_pct", s->gpu_util_max_pct},
        {"mem_util_avg_pct", s->mem_util_avg_pct}, {"mem_util_max_pct", s->mem_util_max_pct},
        {"temp_avg_c", s->temp_avg_c}, {"temp_max_c", s->temp_max_c},
        {"power_total_avg_w", s->power_total_avg_w}, {"power_total_max_w", s->power_total_max_w},
        {"power_limit_total_w", s->power_limit_total_w}, {"vram_used_avg_mb", s->vram_used_avg_mb},
        {"vram_used_max_mb", s->vram_used_max_mb}, {"vram_total_mb", s->vram_total_mb},
        {"vram_used_avg_pct", s->vram_used_avg_pct}, {"vram_used_max_pct", s->vram_used_max_pct},
        {"pcie_rx_avg_mb_s", s->pcie_rx_avg_mb_s}, {"pcie_rx_max_mb_s", s->pcie_rx_max_mb_s},
        {"pcie_tx_avg_mb_s", s->pcie_tx_avg_mb_s}, {"pcie_tx_max_mb_s", s->pcie_tx_max_mb_s},
    };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        artifact_add_number(o, f[i].k, f[i].v);
    return o;
}

/* ---- readings over time ---- */

static cJSON *numbers_json(const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
    return a;
}

cJSON *artifact_series(const struct obs_timeline *t, bool hardware, const int *gpu_index)
{
    if (t->n == 0)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    double *ms = malloc(t->n * sizeof *ms);
    if (!o || !ms) {
        cJSON_Delete(o);
        free(ms);
        return NULL;
    }
    cJSON_AddNumberToObject(o, "points", (double)t->n);
    cJSON_AddNumberToObject(o, "readings", (double)t->readings);
    cJSON_AddNumberToObject(o, "stride", (double)t->stride);
    cJSON_AddNumberToObject(o, "max_points", OBS_TIMELINE_MAX);
    cJSON_AddNumberToObject(o, "t0_monotonic_ns", (double)t->t_ns[0]);
    for (size_t i = 0; i < t->n; i++)
        ms[i] = round((double)(t->t_ns[i] - t->t_ns[0]) / 1e3) / 1e3;
    cJSON_AddItemToObject(o, "t_ms", numbers_json(ms, t->n));
    free(ms);
    cJSON *host = NULL, *devs = NULL;
    int last_dev = -1;
    cJSON *dev = NULL;
    for (int c = 0; c < t->n_cols; c++) {
        const struct obs_column *col = &t->col[c];
        cJSON *into = o;
        if (hardware && col->device < 0) {
            if (!host)
                host = cJSON_AddObjectToObject(o, "host");
            into = host;
        } else if (hardware) {
            if (!devs)
                devs = cJSON_AddArrayToObject(o, "devices");
            if (col->device != last_dev) {
                dev = cJSON_CreateObject();
                cJSON_AddItemToArray(devs, dev);
                cJSON_AddNumberToObject(dev, "index", gpu_index ? gpu_index[col->device] : col->device);
                last_dev = col->device;
            }
            into = dev;
        }
        cJSON_AddItemToObject(into, col->name, numbers_json(col->v, t->n));
    }
    return o;
}

static const char *const series_meta[] = {"points", "readings", "stride", "max_points", "t0_monotonic_ns",
                                          "t_ms", "host", "devices", NULL};

static bool is_meta(const char *k)
{
    for (int i = 0; series_meta[i]; i++)
        if (!strcmp(series_meta[i], k))
            return true;
    return false;
}

/* Every array member of o (but the series' own keys) as a column of
 * device dev; other members are ignored. */
static void read_columns(struct jread *r, const cJSON *o, int dev, struct obs_timeline *t)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        if (r->failed || is_meta(it->string) || !cJSON_IsArray(it))
            continue;       /* keys a reader does not know are ignored */
        struct obs_column *col = obs_timeline_add(t, it->string, dev);
        if (!col)
            jread_fail(r, it->string, "more than %d columns, or out of memory", OBS_TIMELINE_COLS);
        else
            jread_numbers(r, o, it->string, 0, col->v, t->n);
    }
}

static void read_device(struct jread *r, const cJSON *item, int i, void *ctx)
{
    (void)i;
    long index;
    if (jread_whole(r, item, "index", 0, 0, &index) == 0)
        read_columns(r, item, (int)index, ctx);
}

int artifact_series_read(const cJSON *block, bool hardware, const char *name, struct obs_timeline *out,
                         char *err, size_t errlen)
{
    *out = (struct obs_timeline){0};
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(block, "series");
    if (!s || cJSON_IsNull(s))
        return 0;
    struct jread r;
    jread_init(&r, name, err, errlen);
    jread_enter(&r, hardware ? "hardware" : "server_metrics");
    jread_enter(&r, "series");
    double t0;
    const cJSON *ms = jread_array(&r, s, "t_ms", 0);
    jread_number(&r, s, "t0_monotonic_ns", 0, &t0);
    size_t n = ms ? (size_t)cJSON_GetArraySize(ms) : 0;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!r.failed && (!v || !(out->t_ns = malloc((n ? n : 1) * sizeof *out->t_ns))))
        jread_fail(&r, NULL, "out of memory");
    if (!r.failed && isnan(t0))
        jread_fail(&r, "t0_monotonic_ns", "expected a number");
    if (jread_numbers(&r, s, "t_ms", 0, v, n) == 0) {
        for (size_t i = 0; i < n && !r.failed; i++)
            if (isnan(v[i]))
                jread_fail(&r, "t_ms", "expected a number at [%zu], got null", i);
            else if (i > 0 && !(v[i] > v[i - 1]))
                jread_fail(&r, "t_ms", "[%zu] is %g, not after [%zu]'s %g (samples are in time order)", i, v[i],
                           i - 1, v[i - 1]);
            else
                out->t_ns[i] = (int64_t)llround(t0 + v[i] * 1e6);
    }
    free(v);
    out->n = n;
    double readings = NAN, stride = NAN;
    jread_number(&r, s, "readings", JR_OPTIONAL, &readings);
    jread_number(&r, s, "stride", JR_OPTIONAL, &stride);
    out->readings = readings >= 0 ? (size_t)readings : n;
    out->stride = stride >= 1 ? (size_t)stride : 1;
    if (!hardware) {
        read_columns(&r, s, -1, out);
    } else {
        const cJSON *host = jread_object(&r, s, "host", JR_OPTIONAL | JR_NULLABLE);
        size_t mark = jread_enter(&r, "host");
        if (host)
            read_columns(&r, host, -1, out);
        jread_leave(&r, mark);
        jread_each(&r, "devices", jread_array(&r, s, "devices", JR_OPTIONAL | JR_NULLABLE), read_device, out);
    }
    if (r.failed) {
        obs_timeline_free(out);
        return -1;
    }
    return 0;
}

static double number_in(const cJSON *o, const char *mid, const char *key)
{
    if (mid)
        o = cJSON_GetObjectItemCaseSensitive(o, mid);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

void observe_figures_of(const struct benchmark *b, struct observe_figures *out)
{
    out->kv_pool_tokens = number_in(b->server_metrics, "derived", "kv_pool_tokens");
    out->median_sm_mhz = number_in(b->hardware, "gpu", "median_sm_mhz");
    out->max_temp_c = number_in(b->hardware, "gpu", "max_temp_c");
    out->thermal_share = number_in(b->hardware, "gpu", "thermal_share");
    out->gpu = !isnan(out->median_sm_mhz) || !isnan(out->max_temp_c) || !isnan(out->thermal_share);
    out->gpu_samples = number_in(b->hardware_run_summary, NULL, "samples") *
                       number_in(b->hardware_run_summary, NULL, "gpu_count");
}

int artifact_add_observe(cJSON *art, const struct observe_report *r)
{
    cJSON *s = artifact_server_metrics(r), *h = artifact_hardware(r), *run = artifact_hardware_run_summary(r);
    if (!s || !h || !run) {
        cJSON_Delete(s);
        cJSON_Delete(h);
        cJSON_Delete(run);
        return -1;
    }
    int index[GPU_MAX];
    for (int d = 0; d < GPU_MAX; d++)
        index[d] = d < r->hardware.n_gpus ? r->hardware.dev[d].info.index : d;
    cJSON *ss = artifact_series(&r->server_series, false, NULL);
    cJSON *hs = artifact_series(&r->hardware_series, true, index);
    if (ss)
        cJSON_AddItemToObject(s, "series", ss);
    if (hs)
        cJSON_AddItemToObject(h, "series", hs);
    cJSON_AddItemToObject(art, "server_metrics", s);
    cJSON_AddItemToObject(art, "hardware", h);
    cJSON_AddItemToObject(art, "hardware_run_summary", run);
    cJSON *m = cJSON_GetObjectItemCaseSensitive(art, "metrics");
    if (cJSON_IsObject(m)) {
        bool on = r->hardware_enabled && r->hardware.available;
        artifact_add_number(m, "energy_j", on ? r->hardware.energy_j : NAN);
        artifact_add_number(m, "output_tokens_per_joule", on ? r->hardware.output_tokens_per_joule : NAN);
        artifact_add_number(m, "joules_per_output_token", on ? r->hardware.joules_per_output_token : NAN);
    }
    return 0;
}
