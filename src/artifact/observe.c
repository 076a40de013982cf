/* observe.c — server_metrics, hardware and hardware_run_summary blocks
 * (see observe.h; docs/ARTIFACTS.md). */
#include "artifact/observe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/benchmark.h"
#include "artifact/fields.h"
#include "artifact/json.h"

/* ---- the blocks as structs, one row per key ----
 * Each block is first filled as a struct shaped like its JSON (strings
 * borrowed from the report, "" as NULL), then written by its table.
 * Counts are doubles: written as the numbers they are, whatever their
 * value. */

static char *text(const char *v)
{
    return v && *v ? (char *)v : NULL;
}

static cJSON *numbers_json(const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
    return a;
}

struct gauge_v {
    double samples, missed;
    double coverage;
    bool available;
    double mean, time_weighted_mean, max, min;
};
static const struct field gauge_rows[] = {
    F_NUM(struct gauge_v, samples, 0, "readings"),
    F_NUM(struct gauge_v, missed, 0, "readings"),
    F_NUM(struct gauge_v, coverage, 0, "fraction"),
    F_BOOL(struct gauge_v, available, 0),
    F_NUM(struct gauge_v, mean, 0, NULL),
    F_NUM(struct gauge_v, time_weighted_mean, 0, NULL),
    F_NUM(struct gauge_v, max, 0, NULL),
    F_NUM(struct gauge_v, min, 0, NULL),
};
const struct field_table observe_gauge_table = FIELD_TABLE_ALWAYS("server_metrics.gauges.*", struct gauge_v, gauge_rows);

struct hist_v {
    double count, mean_ms, p50_ms, p90_ms, p99_ms;
    double p99_bucket_ms[2];
    char *percentiles;
};
static const struct field hist_rows[] = {
    F_NUM(struct hist_v, count, 0, "observations"),
    F_NUM(struct hist_v, mean_ms, 0, "ms"),
    F_NUM(struct hist_v, p50_ms, 0, "ms"),
    F_NUM(struct hist_v, p90_ms, 0, "ms"),
    F_NUM(struct hist_v, p99_ms, 0, "ms"),
    F_CUSTOM_U(struct hist_v, p99_bucket_ms, 0, "ms", &field_pair_codec),
    F_STR(struct hist_v, percentiles, 0),
};
const struct field_table observe_hist_table = FIELD_TABLE_ALWAYS("server_metrics.histograms.*", struct hist_v, hist_rows);

struct window_v {
    double seconds;
    char *rule;
    double start_readings_ms[2], end_readings_ms[2];
    double start_weight, end_weight;
};
static const struct field window_rows[] = {
    F_NUM(struct window_v, seconds, 0, "s"),
    F_STR(struct window_v, rule, 0),
    F_CUSTOM_U(struct window_v, start_readings_ms, 0, "ms", &field_pair_codec),
    F_CUSTOM_U(struct window_v, end_readings_ms, 0, "ms", &field_pair_codec),
    F_NUM(struct window_v, start_weight, 0, NULL),
    F_NUM(struct window_v, end_weight, 0, NULL),
};
static const struct field_table window_t = FIELD_TABLE_ALWAYS("window", struct window_v, window_rows);

struct derived_v {
    double server_output_tokens, server_gen_throughput, server_spec_accept_rate, server_spec_accept_length;
    char *server_spec_source;
    double server_spec_drafts, server_spec_draft_tokens, server_spec_accepted_tokens;
    cJSON *server_spec_pos_accept;
    double server_engine_steps, server_steps_per_s, server_accept_len_effective, gauge_coverage;
    char *gauge_reason;
    double avg_running_reqs, max_running_reqs, avg_queue_reqs, max_queue_reqs, queue_fraction;
    int underfilled, capacity_limited;
    double batch_steps, batch_steps_per_s, tokens_per_batch_step, prefix_cache_hit_rate;
    char *prefix_cache_hit_rate_source;
    double kv_pool_tokens, kv_block_size, preemptions;
};
static const struct field derived_rows[] = {
    F_NUM(struct derived_v, server_output_tokens, 0, "tokens"),
    F_NUM(struct derived_v, server_gen_throughput, 0, "tok/s"),
    F_NUM(struct derived_v, server_spec_accept_rate, 0, "fraction"),
    F_NUM(struct derived_v, server_spec_accept_length, 0, "tokens"),
    F_STR(struct derived_v, server_spec_source, JR_NULLABLE),
    F_NUM(struct derived_v, server_spec_drafts, 0, "drafts"),
    F_NUM(struct derived_v, server_spec_draft_tokens, 0, "tokens"),
    F_NUM(struct derived_v, server_spec_accepted_tokens, 0, "tokens"),
    F_CUSTOM_U(struct derived_v, server_spec_pos_accept, 0, "fraction", &field_json_codec),
    F_NUM(struct derived_v, server_engine_steps, 0, "steps"),
    F_NUM(struct derived_v, server_steps_per_s, 0, "steps/s"),
    F_NUM(struct derived_v, server_accept_len_effective, 0, "tokens"),
    F_NUM(struct derived_v, gauge_coverage, 0, "fraction"),
    F_STR(struct derived_v, gauge_reason, JR_NULLABLE),
    F_NUM(struct derived_v, avg_running_reqs, 0, "requests"),
    F_NUM(struct derived_v, max_running_reqs, 0, "requests"),
    F_NUM(struct derived_v, avg_queue_reqs, 0, "requests"),
    F_NUM(struct derived_v, max_queue_reqs, 0, "requests"),
    F_NUM(struct derived_v, queue_fraction, 0, "fraction"),
    F_CUSTOM(struct derived_v, underfilled, 0, &field_tribool_codec),
    F_CUSTOM(struct derived_v, capacity_limited, 0, &field_tribool_codec),
    F_NUM(struct derived_v, batch_steps, 0, "steps"),
    F_NUM(struct derived_v, batch_steps_per_s, 0, "steps/s"),
    F_NUM(struct derived_v, tokens_per_batch_step, 0, "tokens"),
    F_NUM(struct derived_v, prefix_cache_hit_rate, 0, "fraction"),
    F_STR(struct derived_v, prefix_cache_hit_rate_source, JR_NULLABLE),
    F_NUM(struct derived_v, kv_pool_tokens, 0, "tokens"),
    F_NUM(struct derived_v, kv_block_size, 0, "tokens"),
    F_NUM(struct derived_v, preemptions, 0, "requests"),
};
static const struct field_table derived_t = FIELD_TABLE_ALWAYS("derived", struct derived_v, derived_rows);

struct ttft_split_v {
    double client_ttft_mean, server_ttft_mean, server_queue_mean, server_prefill_mean, transfer_mean;
};
static const struct field ttft_split_rows[] = {
    F_NUM(struct ttft_split_v, client_ttft_mean, 0, "ms"),
    F_NUM(struct ttft_split_v, server_ttft_mean, 0, "ms"),
    F_NUM(struct ttft_split_v, server_queue_mean, 0, "ms"),
    F_NUM(struct ttft_split_v, server_prefill_mean, 0, "ms"),
    F_NUM(struct ttft_split_v, transfer_mean, 0, "ms"),
};
static const struct field_table ttft_split_t = FIELD_TABLE_ALWAYS("ttft_split_ms", struct ttft_split_v,
                                                                 ttft_split_rows);

struct checks_v {
    double client_output_tokens, server_output_tokens, excess_tokens;
    int other_traffic;
    struct ttft_split_v ttft_split_ms;
};
static const struct field checks_rows[] = {
    F_NUM(struct checks_v, client_output_tokens, 0, "tokens"),
    F_NUM(struct checks_v, server_output_tokens, 0, "tokens"),
    F_NUM(struct checks_v, excess_tokens, 0, "tokens"),
    F_CUSTOM(struct checks_v, other_traffic, 0, &field_tribool_codec),
    F_OBJ(struct checks_v, ttft_split_ms, 0, &ttft_split_t),
};
static const struct field_table checks_t = FIELD_TABLE_ALWAYS("cross_checks", struct checks_v, checks_rows);

/* The window's figures: there when the summary is available. counters,
 * raw_counters, gauges and histograms are maps whose names are data. */
struct sm_avail_v {
    bool present;
    struct window_v window;
    cJSON *counters, *raw_counters, *gauges, *histograms;
    struct derived_v derived;
    struct checks_v cross_checks;
};
static const struct field sm_avail_rows[] = {
    F_OBJ(struct sm_avail_v, window, 0, &window_t),
    F_CUSTOM(struct sm_avail_v, counters, 0, &field_json_codec),
    F_CUSTOM(struct sm_avail_v, raw_counters, 0, &field_json_codec),
    F_CUSTOM(struct sm_avail_v, gauges, 0, &field_json_codec),
    F_CUSTOM(struct sm_avail_v, histograms, 0, &field_json_codec),
    F_OBJ(struct sm_avail_v, derived, 0, &derived_t),
    F_OBJ(struct sm_avail_v, cross_checks, 0, &checks_t),
};
static const struct field_table sm_avail_t = FIELD_TABLE("server_metrics (available)", struct sm_avail_v,
                                                         sm_avail_rows, present);

struct scrapes_v {
    double ok, failed;
    char *last_error;
    double max_bytes, max_ms, max_late_ms;
};
static const struct field scrapes_rows[] = {
    F_NUM(struct scrapes_v, ok, 0, "scrapes"),
    F_NUM(struct scrapes_v, failed, 0, "scrapes"),
    F_STR(struct scrapes_v, last_error, JR_NULLABLE),
    F_NUM(struct scrapes_v, max_bytes, 0, "bytes"),
    F_NUM(struct scrapes_v, max_ms, 0, "ms"),
    F_NUM(struct scrapes_v, max_late_ms, 0, "ms"),
};
static const struct field_table scrapes_t = FIELD_TABLE_ALWAYS("scrapes", struct scrapes_v, scrapes_rows);

/* What follows the head when scraping was on. */
struct sm_on_v {
    bool present;
    char *engine, *server_info;
    double scrape_interval_ms;
    struct scrapes_v scrapes;
    struct sm_avail_v avail;
};
static const struct field sm_on_rows[] = {
    F_STR(struct sm_on_v, engine, 0),
    F_STR(struct sm_on_v, server_info, JR_NULLABLE),
    F_NUM(struct sm_on_v, scrape_interval_ms, 0, "ms"),
    F_OBJ(struct sm_on_v, scrapes, 0, &scrapes_t),
    F_OBJ_W(struct sm_on_v, avail, JR_OPTIONAL, FW_INLINE, &sm_avail_t),
};
static const struct field_table sm_on_t = FIELD_TABLE("server_metrics (enabled)", struct sm_on_v, sm_on_rows, present);

struct server_metrics_v {
    bool enabled, available;
    char *reason, *source;
    struct sm_on_v on;
};
static const struct field server_metrics_rows[] = {
    F_BOOL(struct server_metrics_v, enabled, 0),
    F_BOOL(struct server_metrics_v, available, 0),
    F_STR(struct server_metrics_v, reason, JR_NULLABLE),
    F_STR(struct server_metrics_v, source, JR_NULLABLE),
    F_OBJ_W(struct server_metrics_v, on, JR_OPTIONAL, FW_INLINE, &sm_on_t),
};
const struct field_table observe_server_metrics_table = FIELD_TABLE_ALWAYS("server_metrics", struct server_metrics_v,
                                                                           server_metrics_rows);

struct device_v {
    double index;
    char *name, *uuid;
    double samples;
    double gpu_util_avg_pct, gpu_util_max_pct, mem_util_avg_pct, mem_util_max_pct;
    double vram_used_avg_mb, vram_used_max_mb, vram_total_mb;
    double power_avg_w, power_max_w, power_limit_w, temp_avg_c, temp_max_c;
    double sm_clock_median_mhz, sm_clock_min_mhz, sm_clock_max_mhz, mem_clock_median_mhz;
    double pcie_rx_avg_mb_s, pcie_rx_max_mb_s, pcie_tx_avg_mb_s, pcie_tx_max_mb_s;
    double thermal_share, power_cap_share, slowdown_share, energy_j;
    char *energy_source;
};
static const struct field device_rows[] = {
    F_NUM(struct device_v, index, 0, NULL),
    F_STR(struct device_v, name, JR_NULLABLE),
    F_STR(struct device_v, uuid, JR_NULLABLE),
    F_NUM(struct device_v, samples, 0, "readings"),
    F_NUM(struct device_v, gpu_util_avg_pct, 0, "%"),
    F_NUM(struct device_v, gpu_util_max_pct, 0, "%"),
    F_NUM(struct device_v, mem_util_avg_pct, 0, "%"),
    F_NUM(struct device_v, mem_util_max_pct, 0, "%"),
    F_NUM(struct device_v, vram_used_avg_mb, 0, "MiB"),
    F_NUM(struct device_v, vram_used_max_mb, 0, "MiB"),
    F_NUM(struct device_v, vram_total_mb, 0, "MiB"),
    F_NUM(struct device_v, power_avg_w, 0, "W"),
    F_NUM(struct device_v, power_max_w, 0, "W"),
    F_NUM(struct device_v, power_limit_w, 0, "W"),
    F_NUM(struct device_v, temp_avg_c, 0, "°C"),
    F_NUM(struct device_v, temp_max_c, 0, "°C"),
    F_NUM(struct device_v, sm_clock_median_mhz, 0, "MHz"),
    F_NUM(struct device_v, sm_clock_min_mhz, 0, "MHz"),
    F_NUM(struct device_v, sm_clock_max_mhz, 0, "MHz"),
    F_NUM(struct device_v, mem_clock_median_mhz, 0, "MHz"),
    F_NUM(struct device_v, pcie_rx_avg_mb_s, 0, "MiB/s"),
    F_NUM(struct device_v, pcie_rx_max_mb_s, 0, "MiB/s"),
    F_NUM(struct device_v, pcie_tx_avg_mb_s, 0, "MiB/s"),
    F_NUM(struct device_v, pcie_tx_max_mb_s, 0, "MiB/s"),
    F_NUM(struct device_v, thermal_share, 0, "fraction"),
    F_NUM(struct device_v, power_cap_share, 0, "fraction"),
    F_NUM(struct device_v, slowdown_share, 0, "fraction"),
    F_NUM(struct device_v, energy_j, 0, "J"),
    F_STR(struct device_v, energy_source, JR_NULLABLE),
};
static const struct field_table device_t = FIELD_TABLE_ALWAYS("hardware.devices[]", struct device_v, device_rows);

struct readings_v {
    double ok, failed;
    char *last_error;
    double max_ms, max_late_ms;
};
static const struct field readings_rows[] = {
    F_NUM(struct readings_v, ok, 0, "readings"),
    F_NUM(struct readings_v, failed, 0, "readings"),
    F_STR(struct readings_v, last_error, JR_NULLABLE),
    F_NUM(struct readings_v, max_ms, 0, "ms"),
    F_NUM(struct readings_v, max_late_ms, 0, "ms"),
};
static const struct field_table readings_t = FIELD_TABLE_ALWAYS("readings", struct readings_v, readings_rows);

struct host_v {
    bool present;
    double samples;
    double cpu_util_avg_pct, cpu_util_max_pct, mem_used_avg_mb, mem_used_max_mb, mem_total_mb;
    double cpu_temp_avg_c, cpu_temp_max_c;
};
static const struct field host_rows[] = {
    F_NUM(struct host_v, samples, 0, "readings"),
    F_NUM(struct host_v, cpu_util_avg_pct, 0, "%"),
    F_NUM(struct host_v, cpu_util_max_pct, 0, "%"),
    F_NUM(struct host_v, mem_used_avg_mb, 0, "MiB"),
    F_NUM(struct host_v, mem_used_max_mb, 0, "MiB"),
    F_NUM(struct host_v, mem_total_mb, 0, "MiB"),
    F_NUM(struct host_v, cpu_temp_avg_c, 0, "°C"),
    F_NUM(struct host_v, cpu_temp_max_c, 0, "°C"),
};
static const struct field_table host_t = FIELD_TABLE("host", struct host_v, host_rows, present);

struct gpu_v {
    double median_sm_mhz, max_temp_c, thermal_share;
};
static const struct field gpu_rows[] = {
    F_NUM(struct gpu_v, median_sm_mhz, 0, "MHz"),
    F_NUM(struct gpu_v, max_temp_c, 0, "°C"),
    F_NUM(struct gpu_v, thermal_share, 0, "fraction"),
};
static const struct field_table gpu_t = FIELD_TABLE_ALWAYS("gpu", struct gpu_v, gpu_rows);

struct energy_v {
    double joules;
    char *source;
    double window_s, output_tokens, output_tokens_per_joule, joules_per_output_token;
};
static const struct field energy_rows[] = {
    F_NUM(struct energy_v, joules, 0, "J"),
    F_STR(struct energy_v, source, JR_NULLABLE),
    F_NUM(struct energy_v, window_s, 0, "s"),
    F_NUM(struct energy_v, output_tokens, 0, "tokens"),
    F_NUM(struct energy_v, output_tokens_per_joule, 0, "tokens/J"),
    F_NUM(struct energy_v, joules_per_output_token, 0, "J/token"),
};
static const struct field_table energy_t = FIELD_TABLE_ALWAYS("energy", struct energy_v, energy_rows);

/* What follows the head when telemetry was read. */
struct hw_on_v {
    bool present;
    double interval_ms;
    struct readings_v readings;
    double window_s;
    struct device_v *devices;
    size_t n_devices;
    struct host_v host;
    struct gpu_v gpu;
    struct energy_v energy;
};
static const struct field hw_on_rows[] = {
    F_NUM(struct hw_on_v, interval_ms, 0, "ms"),
    F_OBJ(struct hw_on_v, readings, 0, &readings_t),
    F_NUM(struct hw_on_v, window_s, 0, "s"),
    F_ARR(struct hw_on_v, devices, n_devices, 0, &device_t),
    F_OBJ_W(struct hw_on_v, host, JR_NULLABLE, FW_NULL, &host_t),
    F_OBJ(struct hw_on_v, gpu, 0, &gpu_t),
    F_OBJ(struct hw_on_v, energy, 0, &energy_t),
};
static const struct field_table hw_on_t = FIELD_TABLE("hardware (enabled)", struct hw_on_v, hw_on_rows, present);

struct hardware_v {
    bool enabled, available;
    char *reason, *source, *source_detail, *note;
    struct hw_on_v on;
};
static const struct field hardware_rows[] = {
    F_BOOL(struct hardware_v, enabled, 0),
    F_BOOL(struct hardware_v, available, 0),
    F_STR(struct hardware_v, reason, JR_NULLABLE),
    F_STR(struct hardware_v, source, JR_NULLABLE),
    F_STR(struct hardware_v, source_detail, JR_NULLABLE),
    F_STR(struct hardware_v, note, JR_NULLABLE),
    F_OBJ_W(struct hardware_v, on, JR_OPTIONAL, FW_INLINE, &hw_on_t),
};
const struct field_table observe_hardware_table = FIELD_TABLE_ALWAYS("hardware", struct hardware_v, hardware_rows);

/* Seed 004's hardware_run_summary: struct hw_run_summary's names and units. */
struct run_summary_v {
    double samples;
    double duration_seconds;
    double gpu_count;
    double cpu_util_avg_pct, cpu_temp_max_c;
    double gpu_util_avg_pct, gpu_util_max_pct, mem_util_avg_pct, mem_util_max_pct;
    double temp_avg_c, temp_max_c;
    double power_total_avg_w, power_total_max_w, power_limit_total_w;
    double vram_used_avg_mb, vram_used_max_mb, vram_total_mb, vram_used_avg_pct, vram_used_max_pct;
    double pcie_rx_avg_mb_s, pcie_rx_max_mb_s, pcie_tx_avg_mb_s, pcie_tx_max_mb_s;
};
#define RS(m, unit) F_NUM(struct run_summary_v, m, 0, unit)
static const struct field run_summary_rows[] = {
    F_NUM(struct run_summary_v, samples, 0, "readings"),
    RS(duration_seconds, "s"),
    F_NUM(struct run_summary_v, gpu_count, 0, "GPUs"),
    RS(cpu_util_avg_pct, "%"), RS(cpu_temp_max_c, "°C"),
    RS(gpu_util_avg_pct, "%"), RS(gpu_util_max_pct, "%"), RS(mem_util_avg_pct, "%"), RS(mem_util_max_pct, "%"),
    RS(temp_avg_c, "°C"), RS(temp_max_c, "°C"),
    RS(power_total_avg_w, "W"), RS(power_total_max_w, "W"), RS(power_limit_total_w, "W"),
    RS(vram_used_avg_mb, "MiB"), RS(vram_used_max_mb, "MiB"), RS(vram_total_mb, "MiB"),
    RS(vram_used_avg_pct, "%"), RS(vram_used_max_pct, "%"),
    RS(pcie_rx_avg_mb_s, "MiB/s"), RS(pcie_rx_max_mb_s, "MiB/s"), RS(pcie_tx_avg_mb_s, "MiB/s"),
    RS(pcie_tx_max_mb_s, "MiB/s"),
};
#undef RS
const struct field_table observe_run_summary_table = FIELD_TABLE_ALWAYS("hardware_run_summary", struct run_summary_v,
                                                                        run_summary_rows);

/* ---- filling the structs from the report ---- */

static struct gauge_v gauge_of(const struct obs_gauge *g)
{
    return (struct gauge_v){g->samples, g->missed, g->coverage, !isnan(g->time_weighted), g->mean,
                            g->time_weighted, g->max, g->min};
}

static struct hist_v hist_of(const struct srv_hist_summary *h)
{
    return (struct hist_v){h->count, h->mean * 1e3, h->p50 * 1e3, h->p90 * 1e3, h->p99 * 1e3,
                           {h->p99_lo * 1e3, h->p99_hi * 1e3},
                           "estimated from histogram buckets (linear within a bucket)"};
}

/* The maps under server_metrics: counters (with the per-position
 * accepted drafts), raw_counters, gauges and histograms. */
static void server_maps(struct sm_avail_v *v, const struct srv_summary *s)
{
    v->counters = cJSON_CreateObject();
    for (int i = SV_GAUGE_END_; i < SV_N; i++)
        artifact_add_number(v->counters, srv_value_name(i), s->delta[i]);
    cJSON_AddItemToObject(v->counters, "spec_accepted_per_position", numbers_json(s->pos_delta, (size_t)s->n_pos));
    v->raw_counters = cJSON_CreateObject();
    for (size_t i = 0; i < s->n_raw; i++)
        artifact_add_number(v->raw_counters, s->raw[i].key, s->raw[i].delta);
    v->gauges = cJSON_CreateObject();
    for (int i = 0; i < SV_GAUGE_END_; i++) {    /* the pool's size and block are constants: in derived */
        struct gauge_v g = gauge_of(&s->gauge[i]);
        if (s->gauge[i].samples > 0 && i != SV_KV_POOL_TOKENS && i != SV_KV_BLOCK_SIZE)
            cJSON_AddItemToObject(v->gauges, srv_value_name(i), fields_to_json(&observe_gauge_table, &g));
    }
    v->histograms = cJSON_CreateObject();
    for (int i = 0; i < SVH_N; i++) {
        struct hist_v h = hist_of(&s->hist[i]);
        if (!isnan(s->hist[i].count))
            cJSON_AddItemToObject(v->histograms, srv_hist_name(i), fields_to_json(&observe_hist_table, &h));
    }
}

/* Seed 004's server_* names, and anvil's additions beside them. */
static void server_avail(struct sm_avail_v *v, const struct srv_summary *s)
{
    v->present = true;
    v->window = (struct window_v){s->window_s, s->rule == OBS_COVER ? "covering" : "interpolated",
                                  {s->start_lo_ms, s->start_hi_ms}, {s->end_lo_ms, s->end_hi_ms},
                                  s->start_w, s->end_w};
    server_maps(v, s);
    v->derived = (struct derived_v){
        s->server_output_tokens, s->server_gen_throughput, s->spec_accept_rate, s->spec_accept_length,
        text(s->spec_source), s->delta[SV_SPEC_DRAFTS], s->delta[SV_SPEC_DRAFT_TOKENS], s->delta[SV_SPEC_ACCEPTED],
        numbers_json(s->pos_accept, (size_t)s->n_pos_accept), s->engine_steps, s->steps_per_s,
        s->accept_len_effective, s->gauge_coverage, text(s->gauge_reason), s->avg_running_reqs,
        s->max_running_reqs, s->avg_queue_reqs, s->max_queue_reqs, s->queue_fraction, s->underfilled,
        s->capacity_limited, s->batch_steps, s->batch_steps_per_s, s->tokens_per_batch_step,
        s->prefix_cache_hit_rate, text(s->prefix_source), s->kv_pool_tokens, s->kv_block_size,
        s->delta[SV_PREEMPTIONS]};
    v->cross_checks = (struct checks_v){
        s->client_output_tokens, s->server_output_tokens, s->token_excess,
        isnan(s->token_excess) ? -1 : s->other_traffic,
        {s->ttft_client_ms, s->ttft_server_ms, s->queue_ms, s->prefill_ms, s->transfer_ms}};
}

/* Frees the maps a filled struct made (its strings are borrowed). */
static void server_avail_free(struct sm_avail_v *v)
{
    cJSON_Delete(v->counters);
    cJSON_Delete(v->raw_counters);
    cJSON_Delete(v->gauges);
    cJSON_Delete(v->histograms);
    cJSON_Delete(v->derived.server_spec_pos_accept);
}

cJSON *artifact_server_metrics(const struct observe_report *r)
{
    const struct srv_summary *s = &r->server;
    bool on = r->server_enabled;
    struct server_metrics_v v = {
        on, on && s->available, text(!on ? r->server_note : s->available ? NULL : s->reason), text(r->server_url),
        {.present = on, .engine = (char *)srv_engine_name(s->engine), .server_info = text(r->server_info_url),
         .scrape_interval_ms = r->scrape_interval_ms,
         .scrapes = {s->scrapes_ok, s->scrapes_failed, text(s->last_error), s->max_bytes, s->max_scrape_ms,
                     s->max_late_ms}}};
    if (on && s->available)
        server_avail(&v.on.avail, s);
    cJSON *o = fields_to_json(&observe_server_metrics_table, &v);
    server_avail_free(&v.on.avail);
    return o;
}

static struct device_v device_of(const struct hw_device_summary *d)
{
    return (struct device_v){
        d->info.index, text(d->info.name), text(d->info.uuid), d->samples,
        d->util_pct.mean, d->util_pct.max, d->mem_util_pct.mean, d->mem_util_pct.max,
        d->mem_used_mib.mean, d->mem_used_mib.max, d->mem_total_mib,
        d->power_w.mean, d->power_w.max, d->power_limit_w, d->temp_c.mean, d->temp_c.max,
        d->sm_mhz.median, d->sm_mhz.min, d->sm_mhz.max, d->mem_mhz.median,
        d->pcie_rx_mib_s.mean, d->pcie_rx_mib_s.max, d->pcie_tx_mib_s.mean, d->pcie_tx_mib_s.max,
        d->thermal_share, d->power_cap_share, d->slowdown_share, d->energy_j, text(d->energy_source)};
}

cJSON *artifact_hardware(const struct observe_report *r)
{
    const struct hw_summary *h = &r->hardware;
    bool on = r->hardware_enabled;
    struct device_v dev[GPU_MAX];
    for (int d = 0; d < h->n_gpus && d < GPU_MAX; d++)
        dev[d] = device_of(&h->dev[d]);
    struct hardware_v v = {
        on, on && h->available, text(!on ? r->hardware_note : h->available ? NULL : h->reason),
        text(r->gpu_source), text(r->gpu_source_detail), text(on ? r->hardware_note : NULL),
        {.present = on, .interval_ms = r->telemetry_interval_ms,
         .readings = {h->readings_ok, h->readings_failed, text(h->last_error), h->max_read_ms, h->max_late_ms},
         .window_s = h->window_s, .devices = dev, .n_devices = on ? (size_t)h->n_gpus : 0,
         .host = {h->host, h->host_mem_used_mib.samples, h->cpu_util_pct.mean, h->cpu_util_pct.max,
                  h->host_mem_used_mib.mean, h->host_mem_used_mib.max, h->host_mem_total_mib,
                  h->cpu_temp_c.mean, h->cpu_temp_c.max},
         .gpu = {h->median_sm_mhz, h->max_temp_c, h->thermal_share},
         .energy = {h->energy_j, text(h->energy_source), h->window_s, h->output_tokens,
                    h->output_tokens_per_joule, h->joules_per_output_token}}};
    return fields_to_json(&observe_hardware_table, &v);
}

cJSON *artifact_hardware_run_summary(const struct observe_report *r)
{
    const struct hw_summary *h = &r->hardware;
    if (!r->hardware_enabled || !h->available || h->n_gpus == 0)
        return cJSON_CreateNull();
    const struct hw_run_summary *s = &h->run;
    struct run_summary_v v = {
        s->samples, s->duration_seconds, s->gpu_count, s->cpu_util_avg_pct, s->cpu_temp_max_c,
        s->gpu_util_avg_pct, s->gpu_util_max_pct, s->mem_util_avg_pct, s->mem_util_max_pct,
        s->temp_avg_c, s->temp_max_c, s->power_total_avg_w, s->power_total_max_w, s->power_limit_total_w,
        s->vram_used_avg_mb, s->vram_used_max_mb, s->vram_total_mb, s->vram_used_avg_pct, s->vram_used_max_pct,
        s->pcie_rx_avg_mb_s, s->pcie_rx_max_mb_s, s->pcie_tx_avg_mb_s, s->pcie_tx_max_mb_s};
    return fields_to_json(&observe_run_summary_table, &v);
}

/* ---- readings over time ---- */

/* The series' own keys; its columns follow them. */
struct series_v {
    double points, readings, stride, max_points, t0_monotonic_ns;
    cJSON *t_ms;
};
static const struct field series_rows[] = {
    F_NUM(struct series_v, points, JR_OPTIONAL, "points"),
    F_NUM(struct series_v, readings, JR_OPTIONAL, "readings"),
    F_NUM(struct series_v, stride, JR_OPTIONAL, "readings"),
    F_NUM(struct series_v, max_points, JR_OPTIONAL, "points"),
    F_NUM(struct series_v, t0_monotonic_ns, 0, "ns"),
    F_CUSTOM_U(struct series_v, t_ms, 0, "ms", &field_json_codec),
};
const struct field_table observe_series_table = FIELD_TABLE_ALWAYS("series", struct series_v, series_rows);

cJSON *artifact_series(const struct obs_timeline *t, bool hardware, const int *gpu_index)
{
    if (t->n == 0)
        return NULL;
    double *ms = malloc(t->n * sizeof *ms);
    if (!ms)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        ms[i] = round((double)(t->t_ns[i] - t->t_ns[0]) / 1e3) / 1e3;
    struct series_v v = {(double)t->n, (double)t->readings, (double)t->stride, OBS_TIMELINE_MAX,
                         (double)t->t_ns[0], numbers_json(ms, t->n)};
    free(ms);
    cJSON *o = v.t_ms ? fields_to_json(&observe_series_table, &v) : NULL;
    cJSON_Delete(v.t_ms);
    if (!o)
        return NULL;
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

static bool is_meta(const char *k)
{
    for (size_t i = 0; i < observe_series_table.n; i++)
        if (!strcmp(observe_series_table.f[i].key, k))
            return true;
    return !strcmp(k, "host") || !strcmp(k, "devices");
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
    struct series_v head;
    fields_read(&r, s, &observe_series_table, &head);
    size_t n = head.t_ms ? (size_t)cJSON_GetArraySize(head.t_ms) : 0;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!r.failed && (!v || !(out->t_ns = malloc((n ? n : 1) * sizeof *out->t_ns))))
        jread_fail(&r, NULL, "out of memory");
    if (!r.failed && isnan(head.t0_monotonic_ns))
        jread_fail(&r, "t0_monotonic_ns", "expected a number");
    if (!r.failed && jread_numbers(&r, s, series_rows[5].key, 0, v, n) == 0) {
        for (size_t i = 0; i < n && !r.failed; i++)
            if (isnan(v[i]))
                jread_fail(&r, "t_ms", "expected a number at [%zu], got null", i);
            else if (i > 0 && !(v[i] > v[i - 1]))
                jread_fail(&r, "t_ms", "[%zu] is %g, not after [%zu]'s %g (samples are in time order)", i, v[i],
                           i - 1, v[i - 1]);
            else
                out->t_ns[i] = (int64_t)llround(head.t0_monotonic_ns + v[i] * 1e6);
    }
    free(v);
    fields_free(&observe_series_table, &head);
    out->n = n;
    out->readings = head.readings >= 0 ? (size_t)head.readings : n;
    out->stride = head.stride >= 1 ? (size_t)head.stride : 1;
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

/* The energy figures added to the artifact's metrics (null without GPU
 * readings in the window). */
struct energy_metrics_v {
    double energy_j, output_tokens_per_joule, joules_per_output_token;
};
static const struct field energy_metrics_rows[] = {
    F_NUM(struct energy_metrics_v, energy_j, 0, "J"),
    F_NUM(struct energy_metrics_v, output_tokens_per_joule, 0, "tokens/J"),
    F_NUM(struct energy_metrics_v, joules_per_output_token, 0, "J/token"),
};
const struct field_table observe_energy_metrics_table = FIELD_TABLE_ALWAYS("metrics (energy)", struct energy_metrics_v,
                                                                           energy_metrics_rows);

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
    bool on = r->hardware_enabled && r->hardware.available;
    struct energy_metrics_v e = {NAN, NAN, NAN};
    if (on)
        e = (struct energy_metrics_v){r->hardware.energy_j, r->hardware.output_tokens_per_joule,
                                      r->hardware.joules_per_output_token};
    if (cJSON_IsObject(m))
        fields_write(m, &observe_energy_metrics_table, &e);
    return 0;
}
