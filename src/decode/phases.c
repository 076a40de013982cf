/* phases.c — the prefill phase before the cells and the burst phase after
 * them, each entry cached in the run directory. */
#include "decode/phases.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"
#include "artifact/observe.h"
#include "core/file.h"
#include "decode/burst.h"
#include "decode/cell.h"
#include "decode/prefill.h"

size_t decode_prefill_contexts(const struct decode_config *c, long *out)
{
    if (c->n_prefill_ctx) {
        memcpy(out, c->prefill_ctx, c->n_prefill_ctx * sizeof *out);
        return c->n_prefill_ctx;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n_ctx; i++)
        if (c->ctx[i] > 0)
            out[n++] = c->ctx[i];
    return n;
}

bool decode_runs_context(const struct decode_config *c, long ctx)
{
    for (size_t i = 0; i < c->n_ctx; i++)
        if (c->ctx[i] == ctx)
            return true;
    return false;
}

void decode_prefill_plan_event(const struct decode_config *c, struct decode_events *ev)
{
    long ctx[DECODE_MAX_LIST];
    size_t n = decode_prefill_contexts(c, ctx);
    char in[600] = "", extra[600] = "";
    for (size_t i = 0; i < n; i++) {
        char label[32];
        decode_size_label(ctx[i], label, sizeof label);
        char *to = c->standalone_prefill || !decode_runs_context(c, ctx[i]) ? extra : in;
        snprintf(to + strlen(to), 600 - strlen(to), "%s'%s'", *to ? ", " : "", label);
    }
    if (c->standalone_prefill)
        decode_event(ev, "startup prefill tests: standalone cold prefills [%s], %ld samples each", extra,
                     c->prefill_samples);
    else
        decode_event(ev, "startup prefill tests: integrated from decode scout requests [%s]; scout-only extras [%s]",
                     in, extra);
}

/* Warns that a cache could not be kept or read: a resumed run measures it again. */
static void cache_warning(struct decode_events *ev, const char *path, const char *err)
{
    decode_event(ev, "warning: cannot keep %s (%s): a resumed run measures it again", path, err);
}

/* Whether the parent directory of path could be made; warns when not. */
static bool cache_dir(struct decode_events *ev, const char *path)
{
    if (file_mkdir_parents(path) == 0)
        return true;
    cache_warning(ev, path, strerror(errno));
    return false;
}

/* Puts e into m (moved; m owns it), replacing an entry at its context. */
static int map_put(struct decode_prefill_map *m, struct decode_prefill *e)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].context_tokens == e->context_tokens) {
            decode_prefill_free(&m->v[i]);
            m->v[i] = *e;
            return 0;
        }
    struct decode_prefill *v = realloc(m->v, (m->n + 1) * sizeof *v);
    if (!v) {
        decode_prefill_free(e);
        return -1;
    }
    m->v = v;
    m->v[m->n++] = *e;
    return 0;
}

/* ---- prefill ---- */

/* One prefill context: a prefill_run of its own (after warmup requests at
 * it), its entry typed (hardware_summary as the cells') into *out. Returns
 * 0, or -1 with why. */
static int measure_prefill(const struct decode_config *c, const struct run_config *base, long ctx, long warmup,
                           enum prefill_method method, struct decode_prefill *out, char *why, size_t cap)
{
    struct prefill_config pc;
    long one[1] = {ctx};
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/prefill", c->dir);
    long reps = method == PREFILL_STANDALONE ? c->prefill_samples : 1;
    if (prefill_config_from_run(&pc, base, one, 1, reps, why, cap) != 0)
        return -1;
    pc.method = method;
    pc.metric = c->prefill_metric;
    pc.warmup_requests = warmup;
    pc.out_dir = dir;
    struct prefill_result r;
    int rc = prefill_run(&pc, &r);
    if (r.n == 1 && rc == 0) {
        struct prefill_entry *e = &r.entries[0];
        decode_hw_of(e->observe, &e->hardware_summary);     /* else {} as the seed's: no GPU reading */
        if ((rc = prefill_entry_typed(e, out)) != 0)
            snprintf(why, cap, "out of memory");
    } else {
        rc = -1;
        snprintf(why, cap, "%s", !r.n ? "out of memory" : *r.entries[0].error ? r.entries[0].error
                                                                              : "no request completed");
    }
    prefill_result_free(&r);
    return rc;
}

int decode_prefill_phase(const struct decode_config *c, const struct run_config *base, const struct server_info *srv,
                         struct decode_events *ev, struct decode_prefill_map *prefill, char *why, size_t cap)
{
    long ctx[DECODE_MAX_LIST];
    size_t n = decode_prefill_contexts(c, ctx);
    enum prefill_method method = c->standalone_prefill ? PREFILL_STANDALONE : PREFILL_SCOUT_ONLY;
    const char *mname = prefill_method_name(method);
    bool warmed = false;
    for (size_t i = 0; i < n; i++) {
        if (method == PREFILL_SCOUT_ONLY && decode_runs_context(c, ctx[i]))
            continue;   /* the context's integrated scout */
        char label[32], path[4300];
        decode_size_label(ctx[i], label, sizeof label);
        char fit[400];
        if (server_check_fit(srv, ctx[i], 1, fit, sizeof fit) != 0) {
            decode_event(ev, "prefill %s skipped ctx=%s: %s", mname, label, fit);
            continue;
        }
        snprintf(path, sizeof path, "%s/prefill/%s-ctx%ld.json", c->dir, mname, ctx[i]);
        struct decode_prefill e;
        char err[1400];
        int got = decode_prefill_cache_read(path, &e, err, sizeof err);
        if (got < 0)
            decode_event(ev, "warning: %s: measured again", err);
        if (got == 0) {
            decode_event(ev, "prefill %s resumed ctx=%s (measured by an earlier run)", mname, label);
        } else {
            long warmup = warmed ? 0 : 1;   /* one unmeasured prefill before the first measured one */
            decode_event(ev, "prefill %s start ctx=%s%s", mname, label, warmup ? " (after 1 warm-up request)" : "");
            warmed = true;
            if (measure_prefill(c, base, ctx[i], warmup, method, &e, why, cap) != 0) {
                decode_event(ev, "prefill %s failed ctx=%s: %s", mname, label, why);
                return -1;
            }
            const char *inv = e.server_validation.invalid_reason;
            decode_event(ev, "prefill %s done ctx=%s %.0f tok/s (%ld samples; server validation: %s)", mname, label,
                         e.tok_per_sec, e.samples, inv && *inv ? inv : "valid");
            if (cache_dir(ev, path) && decode_prefill_cache_write(path, &e, err, sizeof err) != 0)
                cache_warning(ev, path, err);
        }
        if (map_put(prefill, &e) != 0) {
            snprintf(why, cap, "out of memory");
            return -1;
        }
    }
    return 0;
}

/* ---- bursts ---- */

/* One burst at context ctx and concurrency conc: burst_run, its cell typed
 * into *out. Returns 0, or -1 with why. */
static int measure_burst(const struct decode_config *c, const struct run_config *base, long ctx, long conc,
                         struct decode_cell *out, char *why, size_t cap)
{
    struct burst_config bc;
    long prompt[1] = {decode_prompt_len(ctx, c->max_tokens)}, cc[1] = {conc};
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/burst", c->dir);
    struct run_config rc = *base;
    rc.workload.output_len = c->max_tokens;
    rc.workload.output_len_set = true;
    rc.workload.ignore_eos = true;
    if (burst_config_from_run(&bc, &rc, cc, 1, prompt, 1, why, cap) != 0)
        return -1;
    bc.requests_per_concurrency = c->burst_requests_per_concurrency;
    bc.request_count = c->request_count;
    bc.out_dir = dir;
    struct burst_result r;
    burst_run(&bc, &r);
    int ok = -1;
    if (r.n == 1 && r.cells[0].sent && r.cells[0].completed_request_count > 0) {
        r.cells[0].context_tokens = ctx;    /* the burst's prompt is the cell's: label it by the context */
        if ((ok = burst_cell_typed(&r.cells[0], out)) != 0)
            snprintf(why, cap, "out of memory");
    } else {
        snprintf(why, cap, "%s", r.n && *r.cells[0].error ? r.cells[0].error : r.n ? "no request completed"
                                                                                      : "out of memory");
    }
    burst_result_free(&r);
    return ok;
}

int decode_burst_phase(const struct decode_config *c, const struct run_config *base, struct decode_events *ev,
                       struct decode_cell **results, size_t *n_results, char *why, size_t cap)
{
    for (size_t x = 0; x < c->n_ctx; x++) {
        for (size_t k = 0; k < c->n_conc; k++) {
            long ctx = c->ctx[x], conc = c->conc[k];
            char label[32], path[4300], err[1400];
            decode_size_label(ctx, label, sizeof label);
            snprintf(path, sizeof path, "%s/burst/c%ld-ctx%ld.json", c->dir, conc, ctx);
            struct decode_cell e;
            int got = decode_burst_cache_read(path, &e, err, sizeof err);
            if (got < 0)
                decode_event(ev, "warning: %s: measured again", err);
            if (got == 0) {
                decode_event(ev, "burst resumed C=%ld ctx=%s (measured by an earlier run)", conc, label);
            } else {
                long n = c->request_count > 0 ? c->request_count : conc * c->burst_requests_per_concurrency;
                decode_event(ev, "burst start C=%ld ctx=%s requests=%ld", conc, label, n);
                if (measure_burst(c, base, ctx, conc, &e, why, cap) != 0) {
                    decode_event(ev, "burst failed C=%ld ctx=%s: %s", conc, label, why);
                    return -1;
                }
                decode_event(ev, "burst done C=%ld ctx=%s %.1f tok/s (%ld of %ld completed)", conc, label,
                             e.aggregate_tps, e.completed_request_count, e.request_count);
                if (cache_dir(ev, path) && decode_burst_cache_write(path, &e, err, sizeof err) != 0)
                    cache_warning(ev, path, err);
            }
            struct decode_cell *v = realloc(*results, (*n_results + 1) * sizeof *v);
            if (!v) {
                decode_cell_free(&e);
                snprintf(why, cap, "out of memory");
                return -1;
            }
            *results = v;
            v[(*n_results)++] = e;
        }
    }
    return 0;
}
