/* observe.c — the run's server-metrics and telemetry samplers (see
 * observe.h). Each sampler's thread-side state (the curl handle, NVML, the
 * struct sampler itself) is a separate allocation, so that a thread the
 * run stopped waiting for can keep using it after everything else is gone;
 * the series the loop appends to are the session's. */
#include "observe/observe.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "observe/fetch.h"
#include "observe/gpuprom.h"
#include "observe/metrics_url.h"
#include "observe/scrape.h"
#include "observe/smi.h"
#ifdef ANVIL_WITH_NVML
#include "observe/nvml.h"
#endif

enum gpu_kind { GPU_NONE, GPU_NVML, GPU_SMI, GPU_PROM };

struct observe;

/* The server scraper's thread-side state. */
struct srv_side {
    struct sampler sampler;
    struct srv_scraper scraper;
    struct observe *o;          /* collect only (the loop's thread) */
};

/* The telemetry reader's thread-side state. */
struct hw_side {
    struct sampler sampler;
    struct observe *o;          /* collect only */
    enum gpu_kind kind;
#ifdef ANVIL_WITH_NVML
    struct nvml *nvml;
#endif
    char smi[256];
    bool smi_throttle;
    struct obs_fetch fetch;
    struct buf body;
    char url[1024];
    struct host_paths host;
    int n_gpus;
};

struct observe {
    struct observe_cfg cfg;
    char base_url[1024], server_metrics[1024], gpu_url[1024], nvml_lib[512], smi[256];
    /* server */
    bool srv_on, srv_abandoned, sglang;
    char srv_url[1024], srv_note[600], info_url[1100];
    struct srv_info info;
    struct srv_side *srv;
    struct srv_series srv_series;
    /* hardware */
    bool hw_on, hw_abandoned;
    const char *gpu_source;
    char gpu_detail[1100], hw_note[600];
    struct hw_side *hw;
    struct hw_series hw_series;
};

static void say(const struct observe *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct observe *o, const char *fmt, ...)
{
    if (!o->cfg.say)
        return;
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->cfg.say(o->cfg.say_ud, msg);
}

static int obs_phase_of(enum sampler_phase p)
{
    switch (p) {
    case SAMPLER_BEFORE_WARMUP: return OBS_BEFORE_WARMUP;
    case SAMPLER_WINDOW_START: return OBS_WINDOW_START;
    case SAMPLER_WINDOW_END: return OBS_WINDOW_END;
    case SAMPLER_AFTER_LAST: return OBS_AFTER_LAST;
    default: return OBS_PERIODIC;
    }
}

static const char *copy(char *dst, size_t cap, const char *src)
{
    if (!src)
        return NULL;
    snprintf(dst, cap, "%s", src);
    return dst;
}

struct observe *observe_new(const struct observe_cfg *cfg)
{
    struct observe *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->cfg = *cfg;
    o->cfg.base_url = copy(o->base_url, sizeof o->base_url, cfg->base_url);
    o->cfg.server_metrics = copy(o->server_metrics, sizeof o->server_metrics, cfg->server_metrics);
    o->cfg.gpu_metrics_url = copy(o->gpu_url, sizeof o->gpu_url, cfg->gpu_metrics_url);
    o->cfg.nvml_library = copy(o->nvml_lib, sizeof o->nvml_lib, cfg->nvml_library);
    o->cfg.smi_program = copy(o->smi, sizeof o->smi, cfg->smi_program ? cfg->smi_program : "nvidia-smi");
    if (!o->cfg.host.proc)
        o->cfg.host = HOST_PATHS_DEFAULT;
    return o;
}

/* ---- server metrics --------------------------------------------------------------- */

static void *srv_sample(void *ud, const struct sampler_tick *t)
{
    struct srv_side *s = ud;
    if (t->hurry)   /* the server stopped answering: a scrape would wait its timeout */
        return NULL;
    return srv_scrape(&s->scraper, t->t_due, obs_phase_of(t->phase));
}

static void srv_collect(void *ud, const struct sampler_tick *t, void *result)
{
    (void)t;
    struct srv_side *s = ud;
    srv_series_add(&s->o->srv_series, result);   /* moves the reading, or frees it */
    free(result);
}

static void srv_discard(void *ud, void *result)
{
    (void)ud;
    srv_reading_free(result);
    free(result);
}

/* Takes a reading on the caller's thread and keeps it. */
static const struct srv_reading *srv_now(struct observe *o, int phase)
{
    struct srv_reading *r = srv_scrape(&o->srv->scraper, clock_now_ns(), phase);
    if (!r)
        return NULL;
    bool ok = r->ok;
    srv_series_add(&o->srv_series, r);
    free(r);
    return ok ? &o->srv_series.r[o->srv_series.n - 1] : NULL;
}

static void server_prepare(struct observe *o)
{
    const char *mode = o->cfg.server_metrics;
    if (!obs_server_metrics_url(mode, o->cfg.base_url, o->srv_url, sizeof o->srv_url)) {
        snprintf(o->srv_note, sizeof o->srv_note, "--server-metrics off");
        return;
    }
    bool automatic = !strcmp(mode, "auto");
    char root[1024];
    obs_url_root(o->cfg.base_url ? o->cfg.base_url : "", root, sizeof root);
    if (!(o->srv = calloc(1, sizeof *o->srv))) {
        snprintf(o->srv_note, sizeof o->srv_note, "out of memory");
        return;
    }
    srv_scraper_init(&o->srv->scraper, o->srv_url, obs_metrics_headers(o->srv_url, o->cfg.base_url, o->cfg.headers));
    o->srv->o = o;
    const struct srv_reading *first = srv_now(o, OBS_PRE_RUN);
    if (!first) {
        const char *why = o->srv_series.n ? o->srv_series.r[o->srv_series.n - 1].error : "out of memory";
        if (automatic) {    /* a server without Prometheus metrics: off, without a word */
            snprintf(o->srv_note, sizeof o->srv_note, "auto: %.580s", why);
            srv_series_free(&o->srv_series);
            srv_scraper_free(&o->srv->scraper);
            free(o->srv);
            o->srv = NULL;
            return;
        }
        say(o, "warning: --server-metrics %s: %s (scraping goes on; the artifact says what was read)",
            o->srv->scraper.shown, why);
    }
    o->srv_on = true;
    o->sglang = first && first->engine == SRV_SGLANG;
    o->info = (struct srv_info){NAN, NAN};
    if (o->sglang)
        srv_fetch_info(&o->srv->scraper.fetch, root, &o->info, o->info_url, sizeof o->info_url);
    o->srv->sampler = (struct sampler){
        .name = "server_metrics", .period_ns = (int64_t)(o->cfg.scrape_interval_ms * 1e6), .may_block = true,
        .sample = srv_sample, .collect = srv_collect, .discard = srv_discard, .ud = o->srv};
}

/* ---- hardware telemetry -------------------------------------------------------------- */

/* Reads every GPU and the host: blocking (NVML calls, a subprocess or a GET). */
static struct hw_reading *hw_take(struct hw_side *h, int64_t t_due, int phase)
{
    struct hw_reading *r = hw_reading_new(h->n_gpus);
    if (!r)
        return NULL;
    r->t_due = t_due;
    r->phase = phase;
    r->t_sent = clock_now_ns();
    struct gpu_sample tmp[GPU_MAX];
    struct gpu_info info[GPU_MAX];
    int n = 0;
    char err[400] = "";
    switch (h->kind) {
#ifdef ANVIL_WITH_NVML
    case GPU_NVML:
        n = nvml_read(h->nvml, tmp);
        break;
#endif
    case GPU_SMI:
        n = smi_read(h->smi, &h->smi_throttle, tmp, info, GPU_MAX, err, sizeof err);
        break;
    case GPU_PROM: {
        int64_t a, b;
        struct prom_snapshot snap;
        if (obs_fetch_get(&h->fetch, h->url, &h->body, &a, &b, err, sizeof err) == 0) {
            if (prom_parse(h->body.data, h->body.len, &snap, err, sizeof err) == 0) {
                n = gpuprom_extract(&snap, tmp, info, GPU_MAX);
                if (n == 0)
                    snprintf(err, sizeof err, "the exporter names no GPU (DCGM_FI_* series)");
                prom_snapshot_free(&snap);
            }
        }
        break;
    }
    default:
        break;
    }
    for (int i = 0; i < n && i < h->n_gpus; i++)
        r->gpu[i] = tmp[i];
    r->ok = h->kind == GPU_NONE || n > 0;
    if (!r->ok)
        snprintf(r->error, sizeof r->error, "%.199s", err[0] ? err : "no GPU answered");
    r->t_done = clock_now_ns();     /* the GPUs' instant: the energy counter is read in it */
    r->has_host = host_read(&h->host, &r->host) == 0;
    return r;
}

static void *hw_sample(void *ud, const struct sampler_tick *t)
{
    return hw_take(ud, t->t_due, obs_phase_of(t->phase));
}

static void hw_collect(void *ud, const struct sampler_tick *t, void *result)
{
    (void)t;
    struct hw_side *h = ud;
    hw_series_add(&h->o->hw_series, result);     /* owns it, or frees it */
}

/* Finds the GPUs: the exporter when given, else NVML, else nvidia-smi.
 * Fills the series' device list. Returns whether any was found; *why gets
 * each failure. */
static bool find_gpus(struct observe *o, struct hw_side *h, char *why, size_t cap)
{
    struct gpu_sample tmp[GPU_MAX];
    struct gpu_info info[GPU_MAX];
    char err[400] = "";
    if (o->cfg.gpu_metrics_url) {
        h->kind = GPU_PROM;
        snprintf(h->url, sizeof h->url, "%s", o->cfg.gpu_metrics_url);
        h->fetch = (struct obs_fetch){.timeout_ms = SRV_SCRAPE_TIMEOUT_MS, .max_bytes = SRV_SCRAPE_MAX_BYTES};
        buf_init(&h->body, SRV_SCRAPE_MAX_BYTES + 1);
        int64_t a, b;
        struct prom_snapshot snap;
        int n = 0;
        if (obs_fetch_get(&h->fetch, h->url, &h->body, &a, &b, err, sizeof err) == 0 &&
            prom_parse(h->body.data, h->body.len, &snap, err, sizeof err) == 0) {
            n = gpuprom_extract(&snap, tmp, o->hw_series.info, GPU_MAX);
            prom_snapshot_free(&snap);
            if (n == 0)
                snprintf(err, sizeof err, "it names no GPU (DCGM_FI_* series)");
        }
        h->n_gpus = o->hw_series.n_gpus = n;
        o->gpu_source = "prometheus";
        obs_url_public(h->url, o->gpu_detail, sizeof o->gpu_detail);
        if (n == 0)
            snprintf(why, cap, "--gpu-metrics-url %.300s: %.250s", o->gpu_detail, err);
        return true;    /* asked for: kept even when it does not answer yet */
    }
    char nvml_why[400] = "built without NVML (NVML=0)";
#ifdef ANVIL_WITH_NVML
    if ((h->nvml = nvml_open(o->cfg.nvml_library, nvml_why, sizeof nvml_why))) {
        h->kind = GPU_NVML;
        h->n_gpus = o->hw_series.n_gpus = nvml_count(h->nvml);
        for (int i = 0; i < h->n_gpus; i++)
            o->hw_series.info[i] = *nvml_info(h->nvml, i);
        o->gpu_source = "nvml";
        const char *lib = o->cfg.nvml_library ? o->cfg.nvml_library : getenv("ANVIL_NVML_LIBRARY");
        snprintf(o->gpu_detail, sizeof o->gpu_detail, "%s", lib && *lib ? lib : NVML_DEFAULT_LIBRARY);
        return true;
    }
#endif
    snprintf(h->smi, sizeof h->smi, "%s", o->cfg.smi_program);
    h->smi_throttle = true;
    int n = smi_read(h->smi, &h->smi_throttle, tmp, info, GPU_MAX, err, sizeof err);
    if (n > 0) {
        h->kind = GPU_SMI;
        h->n_gpus = o->hw_series.n_gpus = n;
        memcpy(o->hw_series.info, info, (size_t)n * sizeof *info);
        o->gpu_source = "nvidia-smi";
        snprintf(o->gpu_detail, sizeof o->gpu_detail, "%s", h->smi);
        return true;
    }
    snprintf(why, cap, "no GPU found (NVML: %.250s; nvidia-smi: %.250s)", nvml_why, err);
    return false;
}

static void hw_now(struct observe *o, int phase)
{
    struct hw_reading *r = hw_take(o->hw, clock_now_ns(), phase);
    if (r)
        hw_series_add(&o->hw_series, r);
}

static void hardware_prepare(struct observe *o)
{
    if (o->cfg.telemetry == OBS_MODE_OFF) {
        snprintf(o->hw_note, sizeof o->hw_note, "--telemetry off");
        return;
    }
    struct hw_side *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(o->hw_note, sizeof o->hw_note, "out of memory");
        return;
    }
    h->o = o;
    h->host = o->cfg.host;
    char why[600] = "";
    bool gpus = find_gpus(o, h, why, sizeof why);
    snprintf(o->hw_note, sizeof o->hw_note, "%s", why);
    if (!gpus && o->cfg.telemetry == OBS_MODE_AUTO) {
        free(h);    /* auto without a GPU: telemetry off */
        return;
    }
    if (!gpus)
        say(o, "note: --telemetry on: %s; sampling the host only", why);
    else if (why[0])
        say(o, "warning: %s (readings go on; the artifact says what was read)", why);
    o->hw = h;
    o->hw_on = true;
    h->sampler = (struct sampler){
        .name = "telemetry", .period_ns = (int64_t)(o->cfg.telemetry_interval_ms * 1e6), .may_block = true,
        .sample = hw_sample, .collect = hw_collect, .ud = h};
    hw_now(o, OBS_PRE_RUN);
}

void observe_prepare(struct observe *o)
{
    server_prepare(o);
    hardware_prepare(o);
}

int observe_samplers(struct observe *o, struct sampler **out, int cap)
{
    int n = 0;
    if (o->srv_on && n < cap)
        out[n++] = &o->srv->sampler;
    if (o->hw_on && n < cap)
        out[n++] = &o->hw->sampler;
    return n;
}

/* Whether sampler s was left running by the end of the run. */
static bool timed_out(const struct sampler *s, struct sampler *const *samplers, const struct sampler_report *reports,
                      int n)
{
    for (int i = 0; i < n; i++)
        if (samplers[i] == s)
            return reports[i].state == SAMPLER_STOP_TIMED_OUT;
    return false;
}

void observe_finish(struct observe *o, struct sampler *const *samplers, const struct sampler_report *reports, int n)
{
    if (o->srv_on && !(o->srv_abandoned = timed_out(&o->srv->sampler, samplers, reports, n))) {
        srv_now(o, OBS_POST_RUN);
        if (o->sglang) {
            struct srv_info end;
            char url[1100], root[1024];
            obs_url_root(o->cfg.base_url ? o->cfg.base_url : "", root, sizeof root);
            /* the lifetime acceptance length after the run; the pool does not change */
            if (srv_fetch_info(&o->srv->scraper.fetch, root, &end, url, sizeof url) == 0 &&
                !isnan(end.avg_spec_accept_length))
                o->info.avg_spec_accept_length = end.avg_spec_accept_length;
        }
    }
    if (o->hw_on && !(o->hw_abandoned = timed_out(&o->hw->sampler, samplers, reports, n)))
        hw_now(o, OBS_POST_RUN);
}

int observe_summarize(const struct observe *o, const struct observe_client *c, struct observe_report *out)
{
    *out = (struct observe_report){.server_enabled = o->srv_on, .hardware_enabled = o->hw_on,
                                   .scrape_interval_ms = o->cfg.scrape_interval_ms,
                                   .telemetry_interval_ms = o->cfg.telemetry_interval_ms,
                                   .gpu_source = o->gpu_source};
    obs_url_public(o->srv_url, out->server_url, sizeof out->server_url);
    snprintf(out->server_note, sizeof out->server_note, "%s", o->srv_note);
    snprintf(out->server_info_url, sizeof out->server_info_url, "%s", o->info_url);
    snprintf(out->gpu_source_detail, sizeof out->gpu_source_detail, "%s", o->gpu_detail);
    snprintf(out->hardware_note, sizeof out->hardware_note, "%s", o->hw_note);
    if (o->srv_on) {
        struct srv_client sc = {
            .window_start = c->window_start, .window_end = c->window_end,
            .rule = c->duration_mode ? OBS_INTERPOLATE : OBS_COVER, .output_tokens = c->output_tokens,
            .ttft_mean_ms = c->ttft_mean_ms, .concurrency = c->concurrency,
            .tokens_per_request = c->tokens_per_request, .prompt_tokens = c->prompt_tokens,
            .prompt_requests = c->prompt_requests};
        if (srv_summarize(&o->srv_series, &sc, o->sglang ? &o->info : NULL, &out->server) != 0 ||
            srv_timeline_of(&o->srv_series, &out->server_series) != 0)
            return -1;
    }
    if (o->hw_on) {
        struct hw_client hc = {c->window_start, c->window_end, c->output_tokens};
        if (hw_summarize(&o->hw_series, &hc, &out->hardware) != 0 ||
            hw_timeline_of(&o->hw_series, &out->hardware_series) != 0)
            return -1;
    }
    return 0;
}

void observe_report_free(struct observe_report *r)
{
    srv_summary_free(&r->server);
    obs_timeline_free(&r->server_series);
    obs_timeline_free(&r->hardware_series);
}

void observe_free(struct observe *o)
{
    if (!o)
        return;
    srv_series_free(&o->srv_series);
    hw_series_free(&o->hw_series);
    if (o->srv && !o->srv_abandoned) {
        srv_scraper_free(&o->srv->scraper);
        free(o->srv);
    }
    if (o->hw && !o->hw_abandoned) {
#ifdef ANVIL_WITH_NVML
        nvml_close(o->hw->nvml);
#endif
        obs_fetch_free(&o->hw->fetch);
        buf_free(&o->hw->body);
        free(o->hw);
    }
    free(o);
}
