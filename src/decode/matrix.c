/* matrix.c — `anvil decode`: startup, the cells in order with resume, the
 * seed-004 artifact. */
#include "decode/matrix.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/decode_matrix.h"
#include "artifact/json.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/file.h"
#include "core/host.h"
#include "core/redact.h"
#include "core/version.h"
#include "decode/cell.h"
#include "decode/events.h"
#include "decode/burst.h"
#include "decode/phases.h"
#include "decode/prefill.h"
#include "load/progress.h"
#include "observe/fetch.h"
#include "observe/metrics_url.h"
#include "observe/scrape.h"
#include "openai/discover.h"

/* What startup found out. */
struct startup {
    struct server_info srv;
    char metrics_url[1100];     /* "" = no usable server metrics */
    char metrics_warning[1800];
    double kv_budget;           /* tokens; NaN unknown */
    struct curl_slist *headers; /* the run's and the API key's; owned */
    const struct curl_slist *metrics_headers;   /* headers when /metrics is on the base URL's origin
                                                   (never sent to another host), else NULL */
    struct decode_diag diag;    /* startup_diagnostics; owned */
};

/* A cell's place in the matrix and what it gave (or read back from
 * DIR/cells/<name>.json). */
struct cell_slot {
    long conc, ctx;
    bool done;                  /* measured (now or by an earlier run): cell and scout hold it */
    struct decode_cell cell;    /* owned */
    struct decode_prefill scout;/* the context's integrated prefill scout; present false = none; owned */
};

/* What the phases besides the cells gave (decode/phases.h); owned, empty = not run. */
struct phase_out {
    struct decode_prefill_map prefill;  /* standalone or scout_only entries */
    struct decode_cell *bursts;
    size_t n_bursts;
    bool burst_done;            /* every burst is there */
};

static FILE *log_of(const struct decode_config *c)
{
    return c->log ? c->log : stderr;
}

/* ---- the directory ---- */

static void cell_name(long conc, long ctx, char *out, size_t cap)
{
    snprintf(out, cap, "c%ld-ctx%ld", conc, ctx);
}

static void dir_path(const struct decode_config *c, const char *rel, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", c->dir, rel);
}

/* Writes DIR/plan.json (what makes two runs' cells comparable), or checks
 * that the one there is this plan (a resume). Returns 1 resuming, 0 new,
 * -1 with err. */
static int check_plan(const struct decode_config *c, const struct startup *s, char *err, size_t errlen)
{
    char path[4200];
    dir_path(c, "plan.json", path, sizeof path);
    struct decode_plan p = {
        .server = (char *)s->srv.display_url, .model = (char *)s->srv.model,
        .concurrency_levels = {(long *)c->conc, c->n_conc}, .context_lengths = {(long *)c->ctx, c->n_ctx},
        .duration_per_test = c->duration_s, .max_tokens = c->max_tokens,
    };
    return decode_plan_keep(path, c->dir, &p, err, errlen);
}

/* ---- startup ---- */

/* The run's headers and the API key, never two Authorization headers
 * (run_request_headers; its note goes to the event log). */
static int build_headers(const struct decode_config *c, struct startup *s, struct decode_events *ev)
{
    char note[300];
    if (run_request_headers(&c->run, &s->headers, note, sizeof note) != 0)
        return -1;
    if (note[0])
        decode_event(ev, "%s", note);
    return 0;
}

/* One /metrics scrape: whether the server reports running and queued
 * requests (the gate's criterion), and its KV pool. */
static void probe_metrics(const struct decode_config *c, struct startup *s, struct decode_events *ev)
{
    const char *sm = c->run.observe.server_metrics ? c->run.observe.server_metrics : "auto";
    s->kv_budget = c->kv_budget > 0 ? (double)c->kv_budget : NAN;
    if (!strcmp(sm, "off")) {
        snprintf(s->metrics_warning, sizeof s->metrics_warning, "--server-metrics off: the readiness gate counts "
                 "the client's decoding streams");
        return;
    }
    char url[1100];
    obs_server_metrics_url(sm, s->srv.base_url, url, sizeof url);
    s->metrics_headers = obs_metrics_headers(url, s->srv.base_url, s->headers);
    struct srv_scraper sc;
    srv_scraper_init(&sc, url, s->metrics_headers);
    struct srv_reading *r = srv_scrape(&sc, clock_now_ns(), OBS_PRE_RUN);
    char shown[1100];
    obs_url_public(url, shown, sizeof shown);
    if (r && r->ok && isfinite(r->v[SV_RUNNING]) && isfinite(r->v[SV_WAITING])) {
        snprintf(s->metrics_url, sizeof s->metrics_url, "%s", url);
        if (isnan(s->kv_budget))
            s->kv_budget = r->v[SV_KV_POOL_TOKENS];
        decode_event(ev, "startup server metrics %s (%s): running and queued requests reported", shown,
                     srv_engine_name(r->engine));
    } else {
        snprintf(s->metrics_warning, sizeof s->metrics_warning, "%s: %s; the readiness gate counts the client's "
                 "decoding streams", shown, r && !r->ok ? r->error : "no running/queued request gauges");
        decode_event(ev, "startup no server metrics: %s", s->metrics_warning);
    }
    if (r) {
        srv_reading_free(r);
        free(r);
    }
    if (isnan(s->kv_budget)) {      /* SGLang says it in its server info */
        struct srv_info info = {NAN, NAN};
        char root[1024], used[1100];
        obs_url_root(s->srv.base_url, root, sizeof root);
        if (srv_fetch_info(&sc.fetch, root, &info, used, sizeof used) == 0)
            s->kv_budget = info.max_total_num_tokens;
    }
    srv_scraper_free(&sc);
    if (c->kv_budget > 0)
        decode_event(ev, "startup KV cache budget from --kv-budget: %.0f tokens", s->kv_budget);
    else if (isfinite(s->kv_budget))
        decode_event(ev, "startup KV cache budget from the server: %.0f tokens", s->kv_budget);
    else
        decode_event(ev, "startup KV cache budget: not reported by the server (capacity judged by the queue)");
}

static const char *p2p_line(const struct decode_p2p *p2p)
{
    if (!p2p->params_available)
        return "unavailable: no NVIDIA driver parameters on this host";
    if (p2p->effective)
        return "enabled: runtime NVIDIA P2P override matches expected RegistryDwords";
    return "not effective: the runtime RegistryDwords lack the expected settings";
}

/* Discovery, the contexts' fit, the startup events and diagnostics.
 * Returns 0, -2 when a context cell cannot fit the server's context
 * (nothing sent), or -1; err says why. */
static int startup(const struct decode_config *c, struct startup *s, struct decode_events *ev,
                   struct decode_args *args, char *err, size_t errlen)
{
    if (build_headers(c, s, ev) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *base = c->run.transport.base_url ? c->run.transport.base_url : RUN_DEFAULT_BASE_URL;
    if (discover(base, s->headers, c->run.transport.model, 30000, &s->srv, err, errlen) != 0) {
        struct secrets sec = {0};
        run_secrets(&c->run, &sec);     /* the server's reply may echo a credential */
        secrets_scrub(&sec, err, errlen);
        secrets_free(&sec);
        return -1;
    }
    decode_event(ev, "startup server=%s model=%s", s->srv.display_url, s->srv.model);
    decode_event(ev, "startup decode concurrency=%s contexts=%s", c->concurrency_arg, c->contexts_arg);
    decode_event(ev, "startup engine %s %s models=['%s']", s->srv.engine,
                 *s->srv.engine_version ? s->srv.engine_version : "(version not reported)", s->srv.model);
    if (s->srv.context_len > 0)
        decode_event(ev, "startup model context length: %ld tokens (%s)", s->srv.context_len, s->srv.context_source);
    for (size_t i = 0; i < c->n_ctx; i++) {
        /* a cell that cannot fit is refused with the whole matrix, before any request: a matrix
         * with holes would read as measured */
        char fit[400];
        long prompt = decode_prompt_len(c->ctx[i], c->max_tokens);
        if (server_check_fit(&s->srv, prompt, c->max_tokens, fit, sizeof fit) != 0) {
            snprintf(err, errlen, "--contexts %ld (--max-tokens %ld): %s", c->ctx[i], c->max_tokens, fit);
            return -2;
        }
    }
    probe_metrics(c, s, ev);
    struct host_facts hf;
    host_facts_get(&hf);
    decode_event(ev, "startup host %s kernel %s cpu '%s' cores=%ld", hf.host, hf.kernel, hf.cpu_model, hf.cpu_cores);
    if (decode_startup_diagnostics(&c->diag, s->srv.display_url, args, &s->diag) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    decode_event(ev, "startup NVIDIA P2P override: %s", p2p_line(&s->diag.nvidia_p2p_override));
    decode_event(ev, "startup nvidia-smi query returncode=%.0f", s->diag.nvidia_smi_query.returncode);
    char label[32];
    decode_size_label(c->ctx[c->n_ctx - 1], label, sizeof label);
    for (size_t i = 0; i < c->n_ctx; i++)
        if (c->ctx[i] > c->ctx[c->n_ctx - 1])
            decode_size_label(c->ctx[i], label, sizeof label);
    decode_event(ev, "startup calibrating prompt text up_to=%s: once per context at its first run (the decode "
                 "warm-up takes the largest), cached in %s/calibration.json", label, c->dir);
    decode_prefill_plan_event(c, ev);
    decode_event(ev, "startup startup preparation done");
    if (c->run.observe.telemetry != OBS_MODE_OFF)
        decode_event(ev, "hardware monitor interval=%gs", c->run.observe.telemetry_interval_ms / 1000);
    return 0;
}

/* ---- cells ---- */

static long largest(const long *v, size_t n)
{
    long m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

static long smallest(const long *v, size_t n)
{
    long m = v[0];
    for (size_t i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

static struct decode_cell_cfg cell_cfg(const struct decode_config *c, const struct startup *s,
                                       struct run_config *rc, long conc, long ctx, double duration,
                                       const char *bench_out, char *cal_path, size_t cal_cap)
{
    *rc = c->run;
    rc->transport.base_url = s->srv.base_url;
    rc->transport.model = s->srv.model;
    snprintf(cal_path, cal_cap, "%s/calibration.json", c->dir);
    rc->workload.calibration_cache = cal_path;
    rc->observe.server_metrics = *s->metrics_url ? s->metrics_url : "off";
    return (struct decode_cell_cfg){
        .base = rc, .concurrency = conc, .context_tokens = ctx, .max_tokens = c->max_tokens,
        .duration_s = duration, .warmup_timeout_s = decode_warmup_timeout_s(ctx, c->cell_warmup_timeout_s),
        .ready_stable_s = c->ready_stable_s, .metrics_url = *s->metrics_url ? s->metrics_url : NULL,
        .metrics_headers = s->metrics_headers,
        .kv_budget_tokens = s->kv_budget, .accept_norm_ref_len = c->accept_norm_ref_len, .bench_out = bench_out,
        .prefill_metric = c->prefill_metric,
    };
}

/* The run settings of the prefill and burst phases: the cells' (server
 * resolved, calibration cache, /metrics), their artifacts in the phase's
 * folder. */
static void phase_base(const struct decode_config *c, const struct startup *s, struct run_config *rc, char *cal,
                       size_t cal_cap)
{
    cell_cfg(c, s, rc, 1, 0, c->duration_s, NULL, cal, cal_cap);
    rc->out.progress = false;
}

/* Runs the prefill phase (before the cells) or the burst phase (after).
 * Returns NULL done, else the reason (in why). */
static const char *run_phase(const struct decode_config *c, const struct startup *s, struct decode_events *ev,
                             struct phase_out *ph, bool burst, char *why, size_t cap)
{
    struct run_config rc;
    char cal[4200];
    phase_base(c, s, &rc, cal, sizeof cal);
    if (!burst)
        return decode_prefill_phase(c, &rc, &s->srv, ev, &ph->prefill, why, cap) == 0 ? NULL : why;
    ph->burst_done = decode_burst_phase(c, &rc, ev, &ph->bursts, &ph->n_bursts, why, cap) == 0;
    return ph->burst_done ? NULL : why;
}

/* Why a cell (or the warm-up) was not measured, into why (returned):
 * "server_stalled ..." as the benchmark artifact's incomplete_reason says
 * it, the server gone, a signal, or the run's error. */
static const char *not_measured_why(const struct decode_cell_result *r, char *why, size_t whycap)
{
    snprintf(why, whycap, "%s", r->server_stalled ? r->error : r->server_gone ? "the server went away"
                                : r->interrupted ? "interrupted by a signal"
                                : *r->error ? r->error : "the cell's window did not run");
    return why;
}

/* The decode warm-up: lowest concurrency at the largest context for
 * decode_warmup_s, nothing kept but its benchmark artifact. */
static int decode_warmup(const struct decode_config *c, const struct startup *s, struct decode_events *ev)
{
    if (c->decode_warmup_s <= 0)
        return 0;
    long conc = smallest(c->conc, c->n_conc), ctx = largest(c->ctx, c->n_ctx);
    char label[32], bench[4200], cal[4200], why[1200];
    decode_size_label(ctx, label, sizeof label);
    dir_path(c, "cells/warmup.bench.json", bench, sizeof bench);
    struct run_config rc;
    struct decode_cell_cfg cc = cell_cfg(c, s, &rc, conc, ctx, c->decode_warmup_s, bench, cal, sizeof cal);
    decode_event(ev, "decode warmup start C=%ld ctx=%s %gs", conc, label, c->decode_warmup_s);
    struct decode_cell_result r;
    decode_cell_run(&cc, &r);
    bool ok = r.measured;
    if (ok)
        decode_event(ev, "decode warmup done C=%ld ctx=%s", conc, label);
    else
        decode_event(ev, "decode warmup failed C=%ld ctx=%s: %s", conc, label, not_measured_why(&r, why, sizeof why));
    decode_cell_result_free(&r);
    return ok ? 0 : -1;
}

/* Logs how the cell's prompts were calibrated (measured, or taken from the
 * cache), as its run reported it, stamped at the cell's first send (the
 * calibration comes just before it; 0 = now). */
static void log_calibration(struct decode_events *ev, const struct decode_cell_result *r, const char *label)
{
    if (r->calibrated)
        decode_event_at(ev, r->t_first_send ? r->t_first_send : clock_now_ns(),
                        "calibrated ctx=%s: %ld filler words give %ld prompt tokens (%s)", label,
                        r->calibration_words, r->calibration_tokens,
                        !strcmp(r->calibration_source, "cache") ? "cached" : r->calibration_source);
}

/* Runs one cell and writes DIR/cells/<name>.json. Returns 0 measured, -1
 * not (why in why). */
static int run_cell(const struct decode_config *c, const struct startup *s, struct decode_events *ev,
                    struct cell_slot *slot, bool first_at_ctx, char *why, size_t whycap)
{
    /* the context's first cell times its integrated prefill when that is the matrix's prefill there */
    long pctx[DECODE_MAX_LIST];
    size_t np = decode_prefill_contexts(c, pctx);
    bool scout_cell = first_at_ctx && slot->ctx > 0 && !c->standalone_prefill;
    bool listed = false;
    for (size_t k = 0; k < np; k++)
        listed = listed || pctx[k] == slot->ctx;
    scout_cell = scout_cell && listed;
    char name[64], rel[128], path[4200], bench[4200], cal[4200], label[32];
    cell_name(slot->conc, slot->ctx, name, sizeof name);
    decode_size_label(slot->ctx, label, sizeof label);
    snprintf(rel, sizeof rel, "cells/%s.bench.json", name);
    dir_path(c, rel, bench, sizeof bench);
    struct run_config rc;
    struct decode_cell_cfg cc = cell_cfg(c, s, &rc, slot->conc, slot->ctx, c->duration_s, bench, cal, sizeof cal);
    decode_event(ev, "cell start C=%ld ctx=%s", slot->conc, label);
    if (scout_cell)
        decode_event(ev, "integrated prefill start ctx=%s", label);
    struct decode_cell_result r;
    decode_cell_run(&cc, &r);
    if (first_at_ctx)
        log_calibration(ev, &r, label);
    if (!r.measured) {
        not_measured_why(&r, why, whycap);
        decode_event(ev, "cell incomplete C=%ld ctx=%s: %s", slot->conc, label, why);
        decode_cell_result_free(&r);
        return -1;
    }
    if (scout_cell && r.scout)
        decode_event_at(ev, r.t_scout_first_token, "integrated prefill done ctx=%s %.0f tok/s", label,
                        r.scout_entry.client_tok_per_sec);
    decode_event_at(ev, r.t_ready, "%s C=%ld ctx=%s %s", r.cell.warmup_timed_out ? "warmup timeout" : "ready", slot->conc,
                    label, r.ready_line + (r.cell.warmup_timed_out ? strlen("warmup timeout ") : strlen("ready ")));
    const struct decode_cell *o = &r.cell;
    if (isfinite(o->server_steps_per_s))
        decode_event(ev, "cell done C=%ld ctx=%s %.1f tok/s | norm %.1f step/s len=%.2f%s", slot->conc, label,
                     o->aggregate_tps, o->server_steps_per_s, o->server_accept_len_effective,
                     o->capacity_limited ? " (capacity-limited)" : "");
    else
        decode_event(ev, "cell done C=%ld ctx=%s %.1f tok/s%s", slot->conc, label, o->aggregate_tps,
                     o->capacity_limited ? " (capacity-limited)" : "");
    slot->cell = r.cell;
    decode_cell_init(&r.cell);      /* moved to the slot */
    if (r.scout && prefill_entry_typed(&r.scout_entry, &slot->scout) != 0) {
        decode_cell_result_free(&r);
        snprintf(why, whycap, "out of memory");
        return -1;
    }
    if (r.scout)    /* sent with the cell's other streams when C > 1: said, not hidden */
        slot->scout.concurrent_streams = slot->conc - 1;
    decode_cell_result_free(&r);
    slot->done = true;
    snprintf(rel, sizeof rel, "cells/%s.json", name);
    dir_path(c, rel, path, sizeof path);
    char err[1400];
    if (decode_cell_file_write(path, &slot->cell, &slot->scout, err, sizeof err) != 0) {
        /* measured but not where a resumed run looks first: stop before measuring more on a full
         * disk; the fallback the message names is where resume_cell finds it */
        bool lost = strstr(err, "failed too") != NULL;
        snprintf(why, whycap, "cannot keep cell C=%ld ctx=%s: %.900s; %s", slot->conc, label, err,
                 lost ? "the cell is lost: free space and run the same command again to measure it again"
                      : "free space and run the same command again: the cell is taken from there, not measured "
                        "again");
        return -1;
    }
    return 0;
}

/* Reads DIR/cells/<name>.json of an earlier run (or its fallback), when it
 * is there, with the checked reader; one that does not read is measured
 * again (said in the event log). */
static void resume_cell(const struct decode_config *c, struct decode_events *ev, struct cell_slot *slot)
{
    char name[64], rel[128], path[4200], err[1400];
    cell_name(slot->conc, slot->ctx, name, sizeof name);
    snprintf(rel, sizeof rel, "cells/%s.json", name);
    dir_path(c, rel, path, sizeof path);
    int rc = decode_cell_file_read(path, &slot->cell, &slot->scout, err, sizeof err);
    if (rc < 0)
        decode_event(ev, "warning: %s: the cell is measured again", err);
    slot->done = rc == 0;
}

/* ---- the artifact ---- */

/* metadata.burst_e2e_status: seed 004's "not_run_use_--run-burst", "measured", or "incomplete". */
static const char *burst_status(const struct decode_config *c, const struct phase_out *ph)
{
    return !c->run_burst ? "not_run_use_--run-burst" : ph->burst_done ? "measured" : "incomplete";
}

/* A copy of the n values of v into *out. */
static int longs_of(const long *v, size_t n, struct decode_longs *out)
{
    if (!(out->v = malloc((n ? n : 1) * sizeof *v)))
        return -1;
    memcpy(out->v, v, n * sizeof *v);
    out->n = n;
    return 0;
}

/* Every string of the metadata, in one list, to check them all at once. */
static bool all_set(char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!v[i])
            return false;
    return true;
}

static int metadata(const struct decode_config *c, const struct startup *s, const struct phase_out *ph,
                    size_t done, size_t planned, const char *incomplete, struct decode_metadata *m)
{
    char ts[40];
    clock_utc_iso8601(ts);
    char origin[512];   /* seed 004's server is the host and port: the origin without its scheme */
    obs_url_origin(s->srv.display_url, origin, sizeof origin);
    const char *server = strstr(origin, "://") ? strstr(origin, "://") + 3 : origin;
    *m = (struct decode_metadata){
        .present = true, .version = decode_text(anvil_version()), .engine = decode_text(s->srv.engine),
        .model = decode_text(s->srv.model), .server = decode_text(server), .timestamp = decode_text(ts),
        .decode_mode = decode_text("duration"), .primary_decode_layer = decode_text("sustained_decode"),
        .duration_per_test = c->duration_s, .request_count = c->request_count, .warmup_request_count = 0,
        .run_burst = c->run_burst,
        .prefill_mode = decode_text(c->standalone_prefill ? "standalone_cold_prefill" : "integrated_decode_scout"),
        .standalone_prefill = c->standalone_prefill, .burst_e2e_status = decode_text(burst_status(c, ph)),
        .burst_request_count = c->request_count, .burst_warmup_request_count = 0,
        .burst_requests_per_concurrency = c->burst_requests_per_concurrency,
        .decode_warmup_seconds = c->decode_warmup_s, .decode_warmup_context = largest(c->ctx, c->n_ctx),
        .decode_warmup_concurrency = smallest(c->conc, c->n_conc),
        .cell_warmup_timeout_seconds = c->cell_warmup_timeout_s,
        .cell_warmup_timeout_policy = decode_text(DECODE_TIMEOUT_POLICY), .ready_stable_seconds = c->ready_stable_s,
        .show_capacity_limited_values = true, .max_tokens = c->max_tokens,
        .temperature = c->run.workload.sampling.has_temperature ? c->run.workload.sampling.temperature : NAN, .ignore_eos = true,
        .max_total_tokens = s->kv_budget, .dcp_size = 0, .metrics_available = *s->metrics_url != 0,
        .metrics_warning = decode_text(s->metrics_warning), .startup_diagnostics_available = s->diag.present,
        .nvidia_p2p_override_effective = s->diag.nvidia_p2p_override.effective,
        .p2pmark_status = decode_text("not_run"), .amd_fabric_status = decode_text("not_run"),
        .cells_planned = (long)planned, .cells_done = (long)done, .incomplete = incomplete != NULL,
        .incomplete_reason = decode_text(incomplete),
    };
    char *const str[] = {m->version, m->engine, m->model, m->server, m->timestamp, m->decode_mode,
                         m->primary_decode_layer, m->prefill_mode, m->burst_e2e_status,
                         m->cell_warmup_timeout_policy, m->metrics_warning, m->p2pmark_status,
                         m->amd_fabric_status};
    if (!all_set(str, sizeof str / sizeof *str) || (incomplete && !m->incomplete_reason) ||
        longs_of(c->conc, c->n_conc, &m->concurrency_levels) != 0 ||
        longs_of(c->ctx, c->n_ctx, &m->context_lengths) != 0)
        return -1;
    return 0;
}

/* Seed 004's hardware_run_summary over every cell's window: samples and
 * seconds summed, averages weighted by samples, maxima and totals the
 * largest; not present when no cell had a GPU reading. */
static void run_hardware(const struct cell_slot *cells, size_t n, struct decode_hw *o)
{
#define HW(m) offsetof(struct decode_hw, m)
    static const size_t avg[] = {HW(cpu_util_avg_pct), HW(gpu_util_avg_pct), HW(mem_util_avg_pct), HW(temp_avg_c),
                                 HW(power_total_avg_w), HW(vram_used_avg_mb), HW(vram_used_avg_pct),
                                 HW(pcie_rx_avg_mb_s), HW(pcie_tx_avg_mb_s)};
    static const size_t max[] = {HW(gpu_count), HW(cpu_temp_max_c), HW(gpu_util_max_pct), HW(mem_util_max_pct),
                                 HW(temp_max_c), HW(power_total_max_w), HW(power_limit_total_w),
                                 HW(vram_used_max_mb), HW(vram_total_mb), HW(vram_used_max_pct),
                                 HW(pcie_rx_max_mb_s), HW(pcie_tx_max_mb_s)};
#define AT(h, off) (*(double *)((char *)(h) + (off)))
#define CAT(h, off) (*(const double *)((const char *)(h) + (off)))
    enum { NA = sizeof avg / sizeof *avg, NM = sizeof max / sizeof *max };
    double samples = 0, secs = 0, sum[NA] = {0}, w[NA] = {0}, mx[NM];
    for (size_t k = 0; k < NM; k++)
        mx[k] = NAN;
    for (size_t i = 0; i < n; i++) {
        const struct decode_hw *h = &cells[i].cell.hardware_summary;
        if (!cells[i].done || !h->present)
            continue;
        double sm = isfinite(h->samples) ? h->samples : 0;
        samples += sm;
        secs += isfinite(h->duration_seconds) ? h->duration_seconds : 0;
        for (size_t k = 0; k < NA; k++)
            if (isfinite(CAT(h, avg[k]))) {
                sum[k] += CAT(h, avg[k]) * sm;
                w[k] += sm;
            }
        for (size_t k = 0; k < NM; k++)
            if (isfinite(CAT(h, max[k])) && !(CAT(h, max[k]) <= mx[k]))
                mx[k] = CAT(h, max[k]);
    }
    *o = (struct decode_hw){.present = samples > 0, .samples = samples, .duration_seconds = secs};
    for (size_t k = 0; k < NM; k++)
        AT(o, max[k]) = mx[k];
    for (size_t k = 0; k < NA; k++)
        AT(o, avg[k]) = w[k] > 0 ? sum[k] / w[k] : NAN;
#undef AT
#undef CAT
#undef HW
}

/* The prefill section: THE place where it is put together. The default
 * prefill is the integrated scout — each prefill context's first decode
 * request, alone on the server when the lowest concurrency is 1 (that cell
 * runs first at every context), its TTFT, validated from the gate's
 * scrapes around it (cell.c) — plus, for a prefill context the matrix does
 * not run, the phase's scout_only prefill; with --standalone-prefill the
 * phase's standalone entries alone. Entries in the order of the prefill
 * contexts. */
static int prefill_section(const struct decode_config *c, const struct cell_slot *cells, size_t n,
                           const struct phase_out *ph, struct decode_prefill_map *out)
{
    long ctx[DECODE_MAX_LIST];
    size_t np = decode_prefill_contexts(c, ctx);
    if (!(out->v = calloc(np ? np : 1, sizeof *out->v)))
        return -1;
    for (size_t k = 0; k < np; k++) {
        const struct decode_prefill *e = NULL;
        for (size_t i = 0; i < ph->prefill.n; i++)
            if (ph->prefill.v[i].context_tokens == ctx[k])
                e = &ph->prefill.v[i];
        for (size_t i = 0; !e && !c->standalone_prefill && i < n; i++)
            if (cells[i].ctx == ctx[k] && cells[i].done) {
                e = cells[i].scout.present ? &cells[i].scout : NULL;    /* the context's first cell (run order) */
                break;
            }
        if (!e)
            continue;
        if (decode_prefill_copy(&out->v[out->n], e) != 0)
            return -1;
        out->v[out->n++].context_tokens = ctx[k];
    }
    return 0;
}

static int method_entry(struct decode_method *m, const char *name, const char *formula, const char *notes)
{
    *m = (struct decode_method){.present_obj = true, .name = decode_text(name), .present = true,
                                .formula = decode_text(formula), .notes = decode_text(notes)};
    return m->name && m->formula && m->notes ? 0 : -1;
}

static int methodology(const struct decode_config *c, const struct phase_out *ph, struct decode_methodology *m)
{
    m->present = true;
    int rc = prefill_methodology(c->standalone_prefill ? PREFILL_STANDALONE : PREFILL_INTEGRATED_SCOUT, &m->prefill);
    rc |= method_entry(&m->sustained_decode, "Sustained Decode",
        "output tokens arriving inside the window (OpenAI continuous usage counts; client chunks when the "
        "server sends none) / (last counted arrival - window start); the server's generation throughput "
        "when no token arrived (prometheus_fallback)",
        "Duration-based steady-state cell after a readiness gate: C streams kept running (each replaced as "
        "it ends); the window opens when the server reports C running and 0 queued for --ready-stable-s "
        "(without server metrics: C streams decoding), or at the cell's warm-up timeout (warmup_timed_out). "
        "Prometheus metrics are stored as validation and scheduler state.");
    rc |= burst_methodology(ph->n_bursts > 0, &m->burst_e2e_decode);
    rc |= method_entry(&m->acceptance_normalization, "Acceptance-normalized decode (MTP / speculative)",
        "engine_steps = spec_drafts + max(0, output_tokens - (accepted_tokens + spec_drafts)); "
        "accept_len_effective = output_tokens / engine_steps; steps_per_s = aggregate_tps / accept_len_effective",
        "With speculative decoding tok/s = steps_per_s * accept_len, so raw tok/s mixes engine speed with "
        "data-dependent acceptance. steps_per_s (target-model forward passes per second) is the "
        "acceptance-independent speed used to compare runs; server_spec_pos_accept holds per-draft-position "
        "acceptance probabilities. output_tokens is the server's over the window (the client's when the "
        "server reports none); counters are window deltas, rounded to whole numbers before anything is "
        "derived from them.");
    return rc ? -1 : 0;
}

/* The matrix of the cells done (moved out of their slots) and the phases'
 * entries (the bursts moved) into *m. Returns 0, or -1 out of memory. */
static int build_matrix(const struct decode_config *c, const struct startup *s, const struct decode_events *ev,
                        struct cell_slot *cells, size_t n, struct phase_out *ph, const char *incomplete,
                        struct decode_matrix *m)
{
    size_t done = 0;
    for (size_t i = 0; i < n; i++)
        done += cells[i].done;
    memset(m, 0, sizeof *m);
    int rc = metadata(c, s, ph, done, n, incomplete, &m->metadata);
    rc |= decode_struct_copy(&decode_diag_table, &m->startup_diagnostics, &s->diag);
    rc |= decode_struct_copy(&decode_p2p_table, &m->nvidia_p2p_override, &s->diag.nvidia_p2p_override);
    rc |= decode_struct_copy(&decode_not_run_table, &m->p2pmark, &s->diag.p2pmark);
    rc |= decode_struct_copy(&decode_not_run_table, &m->amd_fabric, &s->diag.amd_fabric);
    run_hardware(cells, n, &m->hardware_run_summary);
    rc |= decode_events_copy(ev, &m->event_log, &m->n_event_log);
    rc |= prefill_section(c, cells, n, ph, &m->prefill);
    rc |= methodology(c, ph, &m->methodology);     /* before the bursts move: it says whether they ran */
    if (!(m->results = calloc(done ? done : 1, sizeof *m->results)))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (cells[i].done) {
            m->results[m->n_results++] = cells[i].cell;
            decode_cell_init(&cells[i].cell);
            cells[i].done = false;
        }
    m->burst_results = ph->bursts;
    m->n_burst_results = ph->n_bursts;
    ph->bursts = NULL;
    ph->n_bursts = 0;
    rc |= decode_matrix_summarize(m);
    return rc ? -1 : 0;
}

/* The command line's settings for startup_diagnostics.args. */
static int args_of(const struct decode_config *c, struct decode_args *a)
{
    char list[600] = "";    /* as typed, else the default's labels (the non-zero contexts) */
    long ctx[DECODE_MAX_LIST];
    size_t np = decode_prefill_contexts(c, ctx);
    for (size_t i = 0; !c->prefill_contexts_arg && i < np; i++) {
        char label[32];
        decode_size_label(ctx[i], label, sizeof label);
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", label);
    }
    *a = (struct decode_args){
        .present = true, .concurrency = decode_text(c->concurrency_arg), .contexts = decode_text(c->contexts_arg),
        .max_tokens = c->max_tokens, .duration = c->duration_s, .request_count = c->request_count,
        .run_burst = c->run_burst, .standalone_prefill = c->standalone_prefill,
        .prefill_contexts = decode_text(c->prefill_contexts_arg ? c->prefill_contexts_arg : list),
        .prefill_metric = decode_text(c->prefill_metric == PREFILL_METRIC_SERVER ? "server" : "client"),
        .prefill_samples = c->prefill_samples, .burst_requests_per_concurrency = c->burst_requests_per_concurrency,
        .dcp_size = 0, .kv_budget = c->kv_budget, .ready_stable_s = c->ready_stable_s,
        .cell_warmup_timeout_s = c->cell_warmup_timeout_s,
    };
    return a->concurrency && a->contexts && a->prefill_contexts && a->prefill_metric ? 0 : -1;
}

static void free_startup(struct startup *s)
{
    curl_slist_free_all(s->headers);
    decode_diag_free(&s->diag);
}

/* "cell k of n (C=2 ctx=64k), 1m10s so far, ETA 2m20s" on the terminal:
 * the ETA from the cells measured so far (resumed cells not counted). */
static void cell_progress(struct decode_events *ev, const struct cell_slot *sl, size_t k, size_t n, double elapsed_s)
{
    char label[32], so_far[24], eta[24] = "?";
    decode_size_label(sl->ctx, label, sizeof label);
    progress_duration(so_far, sizeof so_far, elapsed_s);
    if (k > 1)
        progress_duration(eta, sizeof eta, elapsed_s / (double)(k - 1) * (double)(n - k + 1));
    decode_note(ev, "cell %zu of %zu (C=%ld ctx=%s), %s so far, ETA %s", k, n, sl->conc, label, so_far, eta);
}

/* Runs the cells not done yet, in order; stops at the first that could not
 * be measured. Returns NULL all done, else the reason (in why). */
static const char *run_cells(const struct decode_config *c, const struct startup *s, struct decode_events *ev,
                             struct cell_slot *cells, size_t n, char *why, size_t whycap)
{
    bool scouted[DECODE_MAX_LIST] = {false};
    size_t todo = 0, measured = 0;
    for (size_t i = 0; i < n; i++)
        todo += !cells[i].done;
    int64_t t0 = clock_now_ns();
    for (size_t i = 0; i < n; i++) {
        struct cell_slot *sl = &cells[i];
        size_t xi = 0;
        while (c->ctx[xi] != sl->ctx)
            xi++;
        bool first = !scouted[xi];     /* the context's first cell: its calibration and prefill scout */
        scouted[xi] = true;
        if (sl->done) {
            char label[32];
            decode_size_label(sl->ctx, label, sizeof label);
            decode_event(ev, "cell resumed C=%ld ctx=%s (measured by an earlier run)", sl->conc, label);
            continue;
        }
        cell_progress(ev, sl, ++measured, todo, ns_to_ms(clock_now_ns() - t0) / 1000);
        if (run_cell(c, s, ev, sl, first, why, whycap) != 0)
            return why;
    }
    return NULL;
}

void decode_artifact_path(const struct decode_config *c, char *out, size_t cap)
{
    if (c->out)
        snprintf(out, cap, "%s", c->out);
    else
        dir_path(c, "decode.json", out, cap);
}

/* Builds the matrix of what was measured and writes it (credentials
 * scrubbed). Returns 0, or -1 with err. */
static int write_matrix(const struct decode_config *c, const struct startup *s, const struct decode_events *ev,
                        struct cell_slot *cells, size_t n, struct phase_out *ph, const char *incomplete,
                        struct decode_matrix *m, char *err, size_t errlen)
{
    struct secrets sec = {0};
    int rc = build_matrix(c, s, ev, cells, n, ph, incomplete, m);
    if (rc == 0 && run_secrets(&c->run, &sec) != 0)
        rc = -1;
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");     /* nothing rather than a credential */
    } else {
        char out[4200];
        decode_artifact_path(c, out, sizeof out);
        rc = decode_matrix_write(out, m, &sec, err, errlen);
    }
    secrets_free(&sec);
    return rc;
}

static void free_cells(struct cell_slot *cells, size_t n)
{
    for (size_t i = 0; cells && i < n; i++) {
        decode_cell_free(&cells[i].cell);
        decode_prefill_free(&cells[i].scout);
    }
    free(cells);
}

static void free_phases(struct phase_out *ph)
{
    for (size_t i = 0; i < ph->prefill.n; i++)
        decode_prefill_free(&ph->prefill.v[i]);
    free(ph->prefill.v);
    for (size_t i = 0; i < ph->n_bursts; i++)
        decode_cell_free(&ph->bursts[i]);
    free(ph->bursts);
}

enum decode_status decode_execute(const struct decode_config *c, struct decode_matrix *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    char path[4200], cells_dir[4200];
    dir_path(c, "cells/x", cells_dir, sizeof cells_dir);
    if (file_mkdir_parents(cells_dir) != 0) {
        snprintf(err, errlen, "cannot create %s/cells: %s", c->dir, strerror(errno));
        return DECODE_FAILED;
    }
    struct decode_events ev;
    dir_path(c, "events.log", path, sizeof path);
    if (decode_events_open(&ev, path, log_of(c), err, errlen) != 0)
        return DECODE_FAILED;
    decode_event(&ev, "benchmark start dir=%s", c->dir);
    struct startup s = {.kv_budget = NAN};
    struct decode_args args;
    int st = args_of(c, &args) == 0 ? startup(c, &s, &ev, &args, err, errlen) : -1;
    if (st == -1 && !args.present)
        snprintf(err, errlen, "out of memory");
    fields_free(&decode_args_table, &args);     /* what startup did not take */
    int resuming = st == 0 ? check_plan(c, &s, err, errlen) : -1;
    if (resuming < 0) {
        decode_event(&ev, "startup failed: %s", err);
        free_startup(&s);
        decode_events_close(&ev);
        return st == -2 ? DECODE_REFUSED : DECODE_FAILED;
    }
    struct decode_cell_ref order[DECODE_MAX_LIST * DECODE_MAX_LIST];
    size_t n = decode_cell_order(c->conc, c->n_conc, c->ctx, c->n_ctx, order);
    struct cell_slot *cells = calloc(n, sizeof *cells);
    size_t resumed = 0;
    for (size_t i = 0; cells && i < n; i++) {
        cells[i].conc = c->conc[order[i].conc_i];
        cells[i].ctx = c->ctx[order[i].ctx_i];
        if (resuming)
            resume_cell(c, &ev, &cells[i]);
        resumed += cells[i].done;
    }
    if (resuming)
        decode_event(&ev, "resume: %zu of %zu cells measured by an earlier run", resumed, n);
    char why[1200];
    struct phase_out ph = {0};
    const char *incomplete = !cells ? "out of memory" : NULL;
    if (!incomplete)
        incomplete = run_phase(c, &s, &ev, &ph, false, why, sizeof why);
    if (!incomplete && resumed < n && decode_warmup(c, &s, &ev) != 0)
        incomplete = "the decode warm-up did not run";
    if (!incomplete)
        incomplete = run_cells(c, &s, &ev, cells, n, why, sizeof why);
    if (!incomplete && c->run_burst)
        incomplete = run_phase(c, &s, &ev, &ph, true, why, sizeof why);
    size_t done = 0;
    for (size_t i = 0; i < n && cells; i++)
        done += cells[i].done;
    if (incomplete)
        decode_event(&ev, "matrix incomplete: %zu of %zu cells measured (%s); run the same command again to resume",
                     done, n, incomplete);
    else
        decode_event(&ev, "matrix done: %zu cells", n);
    enum decode_status status = incomplete ? DECODE_INCOMPLETE : DECODE_OK;
    if (done == 0) {
        snprintf(err, errlen, "no cell was measured: %s", incomplete ? incomplete : "?");
        status = DECODE_FAILED;
    } else if (write_matrix(c, &s, &ev, cells, n, &ph, incomplete, m, err, errlen) != 0) {
        decode_matrix_free(m);
        status = DECODE_FAILED;
    } else if (incomplete) {
        snprintf(err, errlen, "%zu of %zu cells measured (%s); run the same command again to resume", done, n,
                 incomplete);
    }
    free_cells(cells, n);
    free_phases(&ph);
    free_startup(&s);
    decode_events_close(&ev);
    return status;
}
