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
#include "decode/table.h"
#include "observe/fetch.h"
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
    cJSON *diag;                /* startup_diagnostics; owned */
};

/* A cell's place in the matrix and what it gave (or read back). */
struct cell_slot {
    long conc, ctx;
    cJSON *file;                /* DIR/cells/<name>.json: {"result": ..., "scout": ...}; owned */
};

/* What the phases besides the cells gave (decode/phases.h); owned, NULL = not run. */
struct phase_out {
    cJSON *prefill;             /* standalone or scout_only entries, keyed by context */
    cJSON *burst_results, *burst_table;
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

/* The plan a directory's cells belong to: what makes two runs' cells
 * comparable. */
static cJSON *plan_json(const struct decode_config *c, const struct startup *s)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "server", s->srv.display_url);
    cJSON_AddStringToObject(p, "model", s->srv.model);
    cJSON_AddItemToObject(p, "concurrency_levels", cJSON_CreateArray());
    cJSON_AddItemToObject(p, "context_lengths", cJSON_CreateArray());
    for (size_t i = 0; i < c->n_conc; i++)
        cJSON_AddItemToArray(cJSON_GetObjectItem(p, "concurrency_levels"), cJSON_CreateNumber((double)c->conc[i]));
    for (size_t i = 0; i < c->n_ctx; i++)
        cJSON_AddItemToArray(cJSON_GetObjectItem(p, "context_lengths"), cJSON_CreateNumber((double)c->ctx[i]));
    cJSON_AddNumberToObject(p, "duration_per_test", c->duration_s);
    cJSON_AddNumberToObject(p, "max_tokens", (double)c->max_tokens);
    return p;
}

/* Writes DIR/plan.json, or checks that the one there is this plan (a
 * resume). Returns 1 resuming, 0 new, -1 with err. */
static int check_plan(const struct decode_config *c, const struct startup *s, char *err, size_t errlen)
{
    char path[4200];
    dir_path(c, "plan.json", path, sizeof path);
    cJSON *want = plan_json(c, s);
    char *old = file_read_all(path, NULL);
    int rc = 0;
    if (old) {
        cJSON *have = cJSON_Parse(old);
        if (!have || !cJSON_Compare(have, want, 1)) {
            char *w = cJSON_PrintUnformatted(want);
            snprintf(err, errlen, "%s holds a decode matrix of another plan (%s); this one is %s: use another "
                     "--out-dir", c->dir, old, w ? w : "?");
            free(w);
            rc = -1;
        } else {
            rc = 1;
        }
        cJSON_Delete(have);
        free(old);
    } else if (artifact_write_file(path, want, err, errlen) != 0) {
        rc = -1;
    }
    cJSON_Delete(want);
    return rc;
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
    if (!strcmp(sm, "auto")) {
        char root[1024];
        obs_url_root(s->srv.base_url, root, sizeof root);
        snprintf(url, sizeof url, "%s/metrics", root);
    } else {
        snprintf(url, sizeof url, "%s", sm);
    }
    char origin[1100], base_origin[1100];
    obs_url_origin(url, origin, sizeof origin);
    obs_url_origin(s->srv.base_url, base_origin, sizeof base_origin);
    s->metrics_headers = *origin && !strcmp(origin, base_origin) ? s->headers : NULL;
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

static const char *p2p_line(const cJSON *p2p)
{
    if (!cJSON_IsTrue(cJSON_GetObjectItem(p2p, "params_available")))
        return "unavailable: no NVIDIA driver parameters on this host";
    if (cJSON_IsTrue(cJSON_GetObjectItem(p2p, "effective")))
        return "enabled: runtime NVIDIA P2P override matches expected RegistryDwords";
    return "not effective: the runtime RegistryDwords lack the expected settings";
}

/* Discovery, the contexts' fit, the startup events and diagnostics.
 * Returns 0, -2 when a context cell cannot fit the server's context
 * (nothing sent), or -1; err says why. */
static int startup(const struct decode_config *c, struct startup *s, struct decode_events *ev, const cJSON *args,
                   char *err, size_t errlen)
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
    s->diag = decode_startup_diagnostics(&c->diag, s->srv.display_url, args);
    decode_event(ev, "startup NVIDIA P2P override: %s", p2p_line(cJSON_GetObjectItem(s->diag, "nvidia_p2p_override")));
    const cJSON *q = cJSON_GetObjectItem(s->diag, "nvidia_smi_query");
    decode_event(ev, "startup nvidia-smi query returncode=%d",
                 (int)cJSON_GetNumberValue(cJSON_GetObjectItem(q, "returncode")));
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
    ph->burst_done = decode_burst_phase(c, &rc, ev, &ph->burst_results, &ph->burst_table, why, cap) == 0;
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

/* Logs how the cell's prompts were calibrated, from its benchmark artifact
 * (measured, or taken from the cache), stamped at the cell's first send t
 * (calibration comes just before it; 0 = now). */
static void log_calibration(struct decode_events *ev, const char *bench, const char *label, int64_t t)
{
    char *text = file_read_all(bench, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *cal = cJSON_GetObjectItem(j, "calibration");
    const char *src = cJSON_GetStringValue(cJSON_GetObjectItem(cal, "source"));
    const cJSON *words = cJSON_GetObjectItem(cal, "filler_words"), *tok = cJSON_GetObjectItem(cal, "measured_tokens");
    if (src && cJSON_IsNumber(words) && cJSON_IsNumber(tok))
        decode_event_at(ev, t ? t : clock_now_ns(), "calibrated ctx=%s: %.0f filler words give %.0f prompt tokens (%s)",
                        label, words->valuedouble, tok->valuedouble, !strcmp(src, "cache") ? "cached" : src);
    cJSON_Delete(j);
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
        log_calibration(ev, bench, label, r.t_first_send);
    if (!r.measured) {
        not_measured_why(&r, why, whycap);
        decode_event(ev, "cell incomplete C=%ld ctx=%s: %s", slot->conc, label, why);
        decode_cell_result_free(&r);
        return -1;
    }
    if (scout_cell && r.scout)
        decode_event_at(ev, r.t_scout_first_token, "integrated prefill done ctx=%s %.0f tok/s", label,
                        r.scout_entry.client_tok_per_sec);
    decode_event_at(ev, r.t_ready, "%s C=%ld ctx=%s %s", r.warmup_timed_out ? "warmup timeout" : "ready", slot->conc,
                    label, r.ready_line + (r.warmup_timed_out ? strlen("warmup timeout ") : strlen("ready ")));
    if (isfinite(r.steps_per_s))
        decode_event(ev, "cell done C=%ld ctx=%s %.1f tok/s | norm %.1f step/s len=%.2f%s", slot->conc, label,
                     r.aggregate_tps, r.steps_per_s, r.accept_len, r.capacity_limited ? " (capacity-limited)" : "");
    else
        decode_event(ev, "cell done C=%ld ctx=%s %.1f tok/s%s", slot->conc, label, r.aggregate_tps,
                     r.capacity_limited ? " (capacity-limited)" : "");
    slot->file = cJSON_CreateObject();
    cJSON_AddItemToObject(slot->file, "result", r.json);
    r.json = NULL;
    cJSON *scout = r.scout ? prefill_entry_json(&r.scout_entry) : cJSON_CreateNull();
    if (r.scout && scout)   /* sent with the cell's other streams when C > 1: said, not hidden */
        cJSON_AddNumberToObject(scout, "concurrent_streams", (double)(slot->conc - 1));
    cJSON_AddItemToObject(slot->file, "scout", scout);
    decode_cell_result_free(&r);
    snprintf(rel, sizeof rel, "cells/%s.json", name);
    dir_path(c, rel, path, sizeof path);
    char err[1400];
    if (artifact_write_file(path, slot->file, err, sizeof err) != 0) {
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

/* Reads DIR/cells/<name>.json of an earlier run, when it is there. */
static void resume_cell(const struct decode_config *c, struct cell_slot *slot)
{
    char name[64], rel[128], path[4200];
    cell_name(slot->conc, slot->ctx, name, sizeof name);
    snprintf(rel, sizeof rel, "cells/%s.json", name);
    dir_path(c, rel, path, sizeof path);
    char *text = file_read_all(path, NULL), fb[4400] = "";
    if (!text) {    /* a cell written to its fallback when the directory could not take it */
        artifact_fallback_path(path, fb, sizeof fb);
        text = file_read_all(fb, NULL);
    }
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    char err[1400];
    /* moved into place, or kept where it is (it is read from there again next time) */
    if (j && fb[0] && artifact_place_text(path, text, err, sizeof err) == 0)
        unlink(fb);
    free(text);
    if (j && cJSON_IsObject(cJSON_GetObjectItem(j, "result")))
        slot->file = j;
    else
        cJSON_Delete(j);
}

/* ---- the artifact ---- */

static cJSON *numbers(const long *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

/* metadata.burst_e2e_status: seed 004's "not_run_use_--run-burst", "measured", or "incomplete". */
static const char *burst_status(const struct decode_config *c, const struct phase_out *ph)
{
    return !c->run_burst ? "not_run_use_--run-burst" : ph->burst_done ? "measured" : "incomplete";
}

static cJSON *metadata(const struct decode_config *c, const struct startup *s, const struct phase_out *ph,
                       size_t done, size_t planned, const char *incomplete)
{
    cJSON *m = cJSON_CreateObject();
    char ts[40];
    clock_utc_iso8601(ts);
    cJSON_AddStringToObject(m, "version", anvil_version());
    cJSON_AddStringToObject(m, "engine", s->srv.engine);
    cJSON_AddStringToObject(m, "model", s->srv.model);
    const char *host = strstr(s->srv.display_url, "://");
    char server[512];
    snprintf(server, sizeof server, "%s", host ? host + 3 : s->srv.display_url);
    server[strcspn(server, "/")] = 0;
    cJSON_AddStringToObject(m, "server", server);
    cJSON_AddStringToObject(m, "timestamp", ts);
    cJSON_AddStringToObject(m, "decode_mode", "duration");
    cJSON_AddStringToObject(m, "primary_decode_layer", "sustained_decode");
    cJSON_AddNumberToObject(m, "duration_per_test", c->duration_s);
    cJSON_AddNumberToObject(m, "request_count", (double)c->request_count);
    cJSON_AddNumberToObject(m, "warmup_request_count", 0);
    cJSON_AddBoolToObject(m, "run_burst", c->run_burst);
    cJSON_AddStringToObject(m, "prefill_mode", c->standalone_prefill ? "standalone_cold_prefill"
                                                                     : "integrated_decode_scout");
    cJSON_AddBoolToObject(m, "standalone_prefill", c->standalone_prefill);
    cJSON_AddBoolToObject(m, "prefill_only", false);
    cJSON_AddBoolToObject(m, "skip_prefill", false);
    cJSON_AddStringToObject(m, "burst_e2e_status", burst_status(c, ph));
    cJSON_AddNumberToObject(m, "burst_request_count", (double)c->request_count);
    cJSON_AddNumberToObject(m, "burst_warmup_request_count", 0);
    cJSON_AddNumberToObject(m, "burst_requests_per_concurrency", (double)c->burst_requests_per_concurrency);
    cJSON_AddNumberToObject(m, "decode_warmup_seconds", c->decode_warmup_s);
    cJSON_AddNumberToObject(m, "decode_warmup_context", (double)largest(c->ctx, c->n_ctx));
    cJSON_AddNumberToObject(m, "decode_warmup_concurrency", (double)smallest(c->conc, c->n_conc));
    cJSON_AddNumberToObject(m, "cell_warmup_timeout_seconds", c->cell_warmup_timeout_s);
    cJSON_AddStringToObject(m, "cell_warmup_timeout_policy", DECODE_TIMEOUT_POLICY);
    cJSON_AddNumberToObject(m, "ready_stable_seconds", c->ready_stable_s);
    cJSON_AddBoolToObject(m, "show_capacity_limited_values", true);
    cJSON_AddNumberToObject(m, "max_tokens", (double)c->max_tokens);
    if (c->run.workload.sampling.has_temperature)
        cJSON_AddNumberToObject(m, "temperature", c->run.workload.sampling.temperature);
    else
        cJSON_AddNullToObject(m, "temperature");
    cJSON_AddBoolToObject(m, "ignore_eos", true);
    artifact_add_number(m, "max_total_tokens", s->kv_budget);
    cJSON_AddNumberToObject(m, "dcp_size", 0);
    cJSON_AddBoolToObject(m, "metrics_available", *s->metrics_url != 0);
    cJSON_AddStringToObject(m, "metrics_warning", s->metrics_warning);
    cJSON_AddItemToObject(m, "concurrency_levels", numbers(c->conc, c->n_conc));
    cJSON_AddItemToObject(m, "context_lengths", numbers(c->ctx, c->n_ctx));
    cJSON_AddBoolToObject(m, "startup_diagnostics_available", s->diag != NULL);
    const cJSON *p2p = cJSON_GetObjectItem(s->diag, "nvidia_p2p_override");
    cJSON_AddBoolToObject(m, "nvidia_p2p_override_effective", cJSON_IsTrue(cJSON_GetObjectItem(p2p, "effective")));
    cJSON_AddStringToObject(m, "p2pmark_status", "not_run");
    cJSON_AddStringToObject(m, "amd_fabric_status", "not_run");
    cJSON_AddNumberToObject(m, "cells_planned", (double)planned);
    cJSON_AddNumberToObject(m, "cells_done", (double)done);
    cJSON_AddBoolToObject(m, "incomplete", incomplete != NULL);
    if (incomplete)
        cJSON_AddStringToObject(m, "incomplete_reason", incomplete);
    else
        cJSON_AddNullToObject(m, "incomplete_reason");
    return m;
}

/* Seed 004's hardware_run_summary over every cell's window: samples and
 * seconds summed, averages weighted by samples, maxima and totals the
 * largest; null when no cell had a GPU reading. */
static cJSON *run_hardware(const struct cell_slot *cells, size_t n)
{
    static const char *const avg[] = {"cpu_util_avg_pct", "gpu_util_avg_pct", "mem_util_avg_pct", "temp_avg_c",
                                      "power_total_avg_w", "vram_used_avg_mb", "vram_used_avg_pct",
                                      "pcie_rx_avg_mb_s", "pcie_tx_avg_mb_s"};
    static const char *const max[] = {"gpu_count", "cpu_temp_max_c", "gpu_util_max_pct", "mem_util_max_pct",
                                      "temp_max_c", "power_total_max_w", "power_limit_total_w", "vram_used_max_mb",
                                      "vram_total_mb", "vram_used_max_pct", "pcie_rx_max_mb_s", "pcie_tx_max_mb_s"};
    double samples = 0, secs = 0, sum[9] = {0}, w[9] = {0}, mx[12];
    for (int k = 0; k < 12; k++)
        mx[k] = NAN;
    for (size_t i = 0; i < n; i++) {
        const cJSON *h = cJSON_GetObjectItem(cJSON_GetObjectItem(cells[i].file, "result"), "hardware_summary");
        if (!cJSON_IsObject(h))
            continue;
        double sm = cJSON_GetNumberValue(cJSON_GetObjectItem(h, "samples"));
        samples += sm;
        secs += cJSON_GetNumberValue(cJSON_GetObjectItem(h, "duration_seconds"));
        for (int k = 0; k < 9; k++) {
            const cJSON *v = cJSON_GetObjectItem(h, avg[k]);
            if (cJSON_IsNumber(v)) {
                sum[k] += v->valuedouble * sm;
                w[k] += sm;
            }
        }
        for (int k = 0; k < 12; k++) {
            const cJSON *v = cJSON_GetObjectItem(h, max[k]);
            if (cJSON_IsNumber(v) && !(v->valuedouble <= mx[k]))
                mx[k] = v->valuedouble;
        }
    }
    if (samples <= 0)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "samples", samples);
    cJSON_AddNumberToObject(o, "duration_seconds", secs);
    for (int k = 0; k < 12; k++)
        artifact_add_number(o, max[k], mx[k]);
    for (int k = 0; k < 9; k++)
        artifact_add_number(o, avg[k], w[k] > 0 ? sum[k] / w[k] : NAN);
    return o;
}

/* The prefill and burst sections: THE place where they are built. The
 * default prefill is the integrated scout — each prefill context's first
 * decode request, alone on the server when the lowest concurrency is 1
 * (that cell runs first at every context), its TTFT, validated from the
 * gate's scrapes around it (cell.c) — plus, for a prefill context the
 * matrix does not run, the phase's scout_only prefill; with
 * --standalone-prefill the phase's standalone entries alone. The bursts
 * are the phase's (--run-burst): [] and {} when it did not run. Entries in
 * the order of the prefill contexts. */
static void add_prefill_and_burst(cJSON *doc, const struct decode_config *c, const struct cell_slot *cells, size_t n,
                                  const struct phase_out *ph)
{
    cJSON *pre = cJSON_AddObjectToObject(doc, "prefill");
    long ctx[DECODE_MAX_LIST];
    size_t np = decode_prefill_contexts(c, ctx);
    for (size_t k = 0; k < np; k++) {
        char key[32];
        snprintf(key, sizeof key, "%ld", ctx[k]);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(ph->prefill, key);
        for (size_t i = 0; !e && !c->standalone_prefill && i < n; i++)
            if (cells[i].ctx == ctx[k] && cells[i].file) {
                e = cJSON_GetObjectItem(cells[i].file, "scout");    /* the context's first cell (run order) */
                break;
            }
        if (cJSON_IsObject(e))
            cJSON_AddItemToObject(pre, key, cJSON_Duplicate(e, true));
    }
    cJSON_AddItemToObject(doc, "burst_results", ph->burst_results ? cJSON_Duplicate(ph->burst_results, true)
                                                                  : cJSON_CreateArray());
    cJSON_AddItemToObject(doc, "burst_summary_table", ph->burst_table ? cJSON_Duplicate(ph->burst_table, true)
                                                                      : cJSON_CreateObject());
}

static cJSON *method_entry(const char *name, bool present, const char *formula, const char *notes)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddBoolToObject(o, "present", present);
    cJSON_AddStringToObject(o, "formula", formula);
    cJSON_AddStringToObject(o, "notes", notes);
    return o;
}

static cJSON *methodology(const struct decode_config *c, const struct phase_out *ph)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddItemToObject(m, "prefill", prefill_methodology_json(c->standalone_prefill ? PREFILL_STANDALONE
                                                                                      : PREFILL_INTEGRATED_SCOUT));
    cJSON_AddItemToObject(m, "sustained_decode", method_entry(
        "Sustained Decode", true,
        "output tokens arriving inside the window (OpenAI continuous usage counts; client chunks when the "
        "server sends none) / (last counted arrival - window start); the server's generation throughput "
        "when no token arrived (prometheus_fallback)",
        "Duration-based steady-state cell after a readiness gate: C streams kept running (each replaced as "
        "it ends); the window opens when the server reports C running and 0 queued for --ready-stable-s "
        "(without server metrics: C streams decoding), or at the cell's warm-up timeout (warmup_timed_out). "
        "Prometheus metrics are stored as validation and scheduler state."));
    cJSON_AddItemToObject(m, "burst_e2e_decode", burst_methodology_json(cJSON_GetArraySize(ph->burst_results) > 0));
    cJSON_AddItemToObject(m, "acceptance_normalization", method_entry(
        "Acceptance-normalized decode (MTP / speculative)", true,
        "engine_steps = spec_drafts + max(0, output_tokens - (accepted_tokens + spec_drafts)); "
        "accept_len_effective = output_tokens / engine_steps; steps_per_s = aggregate_tps / accept_len_effective",
        "With speculative decoding tok/s = steps_per_s * accept_len, so raw tok/s mixes engine speed with "
        "data-dependent acceptance. steps_per_s (target-model forward passes per second) is the "
        "acceptance-independent speed used to compare runs; server_spec_pos_accept holds per-draft-position "
        "acceptance probabilities. output_tokens is the server's over the window (the client's when the "
        "server reports none); counters are window deltas."));
    return m;
}

static cJSON *summary_table(const struct cell_slot *cells, size_t n)
{
    cJSON *t = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++) {
        if (!cells[i].file)
            continue;
        char ck[32], cc[32];
        snprintf(ck, sizeof ck, "%ld", cells[i].ctx);
        snprintf(cc, sizeof cc, "%ld", cells[i].conc);
        cJSON *row = cJSON_GetObjectItem(t, ck);
        if (!row)
            row = cJSON_AddObjectToObject(t, ck);
        const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cells[i].file, "result"), "aggregate_tps");
        cJSON_AddItemToObject(row, cc, cJSON_IsNumber(v) ? cJSON_CreateNumber(v->valuedouble) : cJSON_CreateNull());
    }
    return t;
}

static cJSON *build_doc(const struct decode_config *c, const struct startup *s, const struct decode_events *ev,
                        const struct cell_slot *cells, size_t n, const struct phase_out *ph, const char *incomplete)
{
    size_t done = 0;
    for (size_t i = 0; i < n; i++)
        done += cells[i].file != NULL;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "metadata", metadata(c, s, ph, done, n, incomplete));
    cJSON_AddItemToObject(doc, "startup_diagnostics", cJSON_Duplicate(s->diag, 1));
    const char *keys[] = {"nvidia_p2p_override", "p2pmark", "amd_fabric"};
    for (size_t k = 0; k < 3; k++)
        cJSON_AddItemToObject(doc, keys[k], cJSON_Duplicate(cJSON_GetObjectItem(s->diag, keys[k]), 1));
    cJSON_AddItemToObject(doc, "hardware_run_summary", run_hardware(cells, n));
    cJSON_AddItemToObject(doc, "event_log", decode_events_json(ev));
    add_prefill_and_burst(doc, c, cells, n, ph);
    cJSON *res = cJSON_AddArrayToObject(doc, "results");
    for (size_t i = 0; i < n; i++)
        if (cells[i].file)
            cJSON_AddItemToArray(res, cJSON_Duplicate(cJSON_GetObjectItem(cells[i].file, "result"), 1));
    cJSON_AddItemToObject(doc, "summary_table", summary_table(cells, n));
    /* seed order: burst sections after the summary table */
    cJSON *br = cJSON_DetachItemFromObject(doc, "burst_results");
    cJSON *bt = cJSON_DetachItemFromObject(doc, "burst_summary_table");
    cJSON_AddItemToObject(doc, "burst_results", br);
    cJSON_AddItemToObject(doc, "burst_summary_table", bt);
    cJSON_AddItemToObject(doc, "methodology", methodology(c, ph));
    return doc;
}

/* The command line's settings for startup_diagnostics.args. */
static cJSON *args_json(const struct decode_config *c)
{
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "concurrency", c->concurrency_arg);
    cJSON_AddStringToObject(a, "contexts", c->contexts_arg);
    cJSON_AddNumberToObject(a, "max_tokens", (double)c->max_tokens);
    cJSON_AddNumberToObject(a, "duration", c->duration_s);
    cJSON_AddNumberToObject(a, "request_count", (double)c->request_count);
    cJSON_AddBoolToObject(a, "run_burst", c->run_burst);
    cJSON_AddBoolToObject(a, "standalone_prefill", c->standalone_prefill);
    cJSON_AddBoolToObject(a, "prefill_only", false);
    cJSON_AddBoolToObject(a, "skip_prefill", false);
    char list[600] = "";    /* as typed, else the default's labels (the non-zero contexts) */
    long ctx[DECODE_MAX_LIST];
    size_t np = decode_prefill_contexts(c, ctx);
    for (size_t i = 0; !c->prefill_contexts_arg && i < np; i++) {
        char label[32];
        decode_size_label(ctx[i], label, sizeof label);
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", label);
    }
    cJSON_AddStringToObject(a, "prefill_contexts", c->prefill_contexts_arg ? c->prefill_contexts_arg : list);
    cJSON_AddStringToObject(a, "prefill_metric", c->prefill_metric == PREFILL_METRIC_SERVER ? "server" : "client");
    cJSON_AddNumberToObject(a, "prefill_samples", (double)c->prefill_samples);
    cJSON_AddNumberToObject(a, "burst_requests_per_concurrency", (double)c->burst_requests_per_concurrency);
    cJSON_AddNumberToObject(a, "dcp_size", 0);
    cJSON_AddNumberToObject(a, "kv_budget", (double)c->kv_budget);
    cJSON_AddNumberToObject(a, "ready_stable_s", c->ready_stable_s);
    cJSON_AddNumberToObject(a, "cell_warmup_timeout_s", c->cell_warmup_timeout_s);
    return a;
}

static void free_startup(struct startup *s)
{
    curl_slist_free_all(s->headers);
    cJSON_Delete(s->diag);
}

/* Runs the cells not done yet, in order; stops at the first that could not
 * be measured. Returns NULL all done, else the reason (in why). */
static const char *run_cells(const struct decode_config *c, const struct startup *s, struct decode_events *ev,
                             struct cell_slot *cells, size_t n, char *why, size_t whycap)
{
    bool scouted[DECODE_MAX_LIST] = {false};
    for (size_t i = 0; i < n; i++) {
        struct cell_slot *sl = &cells[i];
        size_t xi = 0;
        while (c->ctx[xi] != sl->ctx)
            xi++;
        bool first = !scouted[xi];     /* the context's first cell: its calibration and prefill scout */
        scouted[xi] = true;
        if (sl->file) {
            char label[32];
            decode_size_label(sl->ctx, label, sizeof label);
            decode_event(ev, "cell resumed C=%ld ctx=%s (measured by an earlier run)", sl->conc, label);
            continue;
        }
        if (run_cell(c, s, ev, sl, first, why, whycap) != 0)
            return why;
    }
    return NULL;
}

enum decode_status decode_execute(const struct decode_config *c, char *err, size_t errlen)
{
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
    cJSON *args = args_json(c);
    int st = startup(c, &s, &ev, args, err, errlen);
    cJSON_Delete(args);
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
        cells[i] = (struct cell_slot){c->conc[order[i].conc_i], c->ctx[order[i].ctx_i], NULL};
        if (resuming)
            resume_cell(c, &cells[i]);
        resumed += cells[i].file != NULL;
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
        done += cells[i].file != NULL;
    if (incomplete)
        decode_event(&ev, "matrix incomplete: %zu of %zu cells measured (%s); run the same command again to resume",
                     done, n, incomplete);
    else
        decode_event(&ev, "matrix done: %zu cells", n);
    enum decode_status status = incomplete ? DECODE_INCOMPLETE : DECODE_OK;
    if (done == 0) {
        snprintf(err, errlen, "no cell was measured: %s", incomplete ? incomplete : "?");
        status = DECODE_FAILED;
    } else {
        cJSON *doc = build_doc(c, &s, &ev, cells, n, &ph, incomplete);
        struct secrets sec = {0};
        if (run_secrets(&c->run, &sec) != 0 || secrets_scrub_json(&sec, doc) != 0) {
            cJSON_Delete(doc);
            doc = NULL;     /* nothing rather than a credential */
        }
        secrets_free(&sec);
        char out[4200];
        if (c->out)
            snprintf(out, sizeof out, "%s", c->out);
        else
            dir_path(c, "decode.json", out, sizeof out);
        if (decode_matrix_write(out, doc, err, errlen) != 0) {
            status = DECODE_FAILED;
        } else {
            decode_print_table(stdout, doc);
            printf("artifact: %s\n", out);
            if (incomplete)
                snprintf(err, errlen, "%zu of %zu cells measured (%s); run the same command again to resume", done,
                         n, incomplete);
        }
        cJSON_Delete(doc);
    }
    for (size_t i = 0; cells && i < n; i++)
        cJSON_Delete(cells[i].file);
    free(cells);
    cJSON_Delete(ph.prefill);
    cJSON_Delete(ph.burst_results);
    cJSON_Delete(ph.burst_table);
    free_startup(&s);
    decode_events_close(&ev);
    return status;
}
