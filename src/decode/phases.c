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

/* An entry cached by an earlier run: the JSON in path, or NULL. */
static cJSON *cached(const char *path)
{
    char *text = file_read_all(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

/* Moves every member of from (an object) into *into, creating it. */
static void merge_object(cJSON **into, cJSON *from)
{
    if (!*into)
        *into = cJSON_CreateObject();
    cJSON *e;
    while (from && (e = from->child)) {
        cJSON_DetachItemViaPointer(from, e);
        const char *key = e->string;
        cJSON *have = cJSON_GetObjectItemCaseSensitive(*into, key);
        if (have && cJSON_IsObject(have) && cJSON_IsObject(e)) {   /* a summary row: merge its columns */
            merge_object(&have, e);
            cJSON_Delete(e);
        } else {
            cJSON_DeleteItemFromObjectCaseSensitive(*into, key);
            cJSON_AddItemToObject(*into, key, e);
        }
    }
}

static void cache(struct decode_events *ev, const char *path, const cJSON *j)
{
    char err[600];
    if (file_mkdir_parents(path) != 0)
        snprintf(err, sizeof err, "%s", strerror(errno));
    else if (artifact_write_file(path, j, err, sizeof err) == 0)
        return;
    decode_event(ev, "warning: cannot keep %s (%s): a resumed run measures it again", path, err);
}

/* ---- prefill ---- */

/* One prefill context: a prefill_run of its own (after warmup requests at
 * it), its entry rendered (hardware_summary as the cells'). Returns the
 * prefill_to_json object of the entry, or NULL with why. */
static cJSON *measure_prefill(const struct decode_config *c, const struct run_config *base, long ctx, long warmup,
                              enum prefill_method method, char *why, size_t cap)
{
    struct prefill_config pc;
    long one[1] = {ctx};
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/prefill", c->dir);
    long reps = method == PREFILL_STANDALONE ? c->prefill_samples : 1;
    if (prefill_config_from_run(&pc, base, one, 1, reps, why, cap) != 0)
        return NULL;
    pc.method = method;
    pc.metric = c->prefill_metric;
    pc.warmup_requests = warmup;
    pc.out_dir = dir;
    struct prefill_result r;
    int rc = prefill_run(&pc, &r);
    cJSON *j = NULL;
    if (r.n == 1 && rc == 0) {
        struct prefill_entry *e = &r.entries[0];
        cJSON *hw = e->observe ? artifact_hardware_run_summary(e->observe) : NULL;
        if (cJSON_IsObject(hw))
            e->hardware_summary = hw;   /* else {} as the seed's: no GPU reading */
        else
            cJSON_Delete(hw);
        j = prefill_to_json(e, 1);
        if (!j)
            snprintf(why, cap, "out of memory");
    } else {
        snprintf(why, cap, "%s", !r.n ? "out of memory" : *r.entries[0].error ? r.entries[0].error
                                                                              : "no request completed");
    }
    prefill_result_free(&r);
    return j;
}

int decode_prefill_phase(const struct decode_config *c, const struct run_config *base, const struct server_info *srv,
                         struct decode_events *ev, cJSON **prefill, char *why, size_t cap)
{
    long ctx[DECODE_MAX_LIST];
    size_t n = decode_prefill_contexts(c, ctx);
    enum prefill_method method = c->standalone_prefill ? PREFILL_STANDALONE : PREFILL_SCOUT_ONLY;
    const char *mname = prefill_method_name(method);
    bool warmed = false;
    if (!*prefill)
        *prefill = cJSON_CreateObject();
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
        cJSON *j = cached(path);
        if (j) {
            decode_event(ev, "prefill %s resumed ctx=%s (measured by an earlier run)", mname, label);
        } else {
            long warmup = warmed ? 0 : 1;   /* one unmeasured prefill before the first measured one */
            decode_event(ev, "prefill %s start ctx=%s%s", mname, label, warmup ? " (after 1 warm-up request)" : "");
            j = measure_prefill(c, base, ctx[i], warmup, method, why, cap);
            warmed = true;
            if (!j) {
                decode_event(ev, "prefill %s failed ctx=%s: %s", mname, label, why);
                return -1;
            }
            const cJSON *e = j->child;     /* the one entry */
            const char *inv = cJSON_GetStringValue(
                cJSON_GetObjectItem(cJSON_GetObjectItem(e, "server_validation"), "invalid_reason"));
            decode_event(ev, "prefill %s done ctx=%s %.0f tok/s (%g samples; server validation: %s)", mname, label,
                         cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tok_per_sec")),
                         cJSON_GetNumberValue(cJSON_GetObjectItem(e, "samples")), inv && *inv ? inv : "valid");
            cache(ev, path, j);
        }
        merge_object(prefill, j);
        cJSON_Delete(j);
    }
    return 0;
}

/* ---- bursts ---- */

/* One burst at context ctx and concurrency conc: burst_run, then
 * burst_add_json of its cell into a document of its own
 * ({"burst_results": [...], "burst_summary_table": {...}}), or NULL with
 * why. */
static cJSON *measure_burst(const struct decode_config *c, const struct run_config *base, long ctx, long conc,
                            char *why, size_t cap)
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
        return NULL;
    bc.requests_per_concurrency = c->burst_requests_per_concurrency;
    bc.request_count = c->request_count;
    bc.out_dir = dir;
    struct burst_result r;
    burst_run(&bc, &r);
    cJSON *doc = NULL;
    if (r.n == 1 && r.cells[0].sent && r.cells[0].completed_request_count > 0) {
        r.cells[0].context_tokens = ctx;    /* the burst's prompt is the cell's: label it by the context */
        doc = cJSON_CreateObject();
        if (!doc || burst_add_json(doc, r.cells, 1) != 0) {
            cJSON_Delete(doc);
            doc = NULL;
            snprintf(why, cap, "out of memory");
        }
    } else {
        snprintf(why, cap, "%s", r.n && *r.cells[0].error ? r.cells[0].error : r.n ? "no request completed"
                                                                                      : "out of memory");
    }
    burst_result_free(&r);
    return doc;
}

int decode_burst_phase(const struct decode_config *c, const struct run_config *base, struct decode_events *ev,
                       cJSON **results, cJSON **table, char *why, size_t cap)
{
    if (!*results)
        *results = cJSON_CreateArray();
    if (!*table)
        *table = cJSON_CreateObject();
    for (size_t x = 0; x < c->n_ctx; x++) {
        for (size_t k = 0; k < c->n_conc; k++) {
            long ctx = c->ctx[x], conc = c->conc[k];
            char label[32], path[4300];
            decode_size_label(ctx, label, sizeof label);
            snprintf(path, sizeof path, "%s/burst/c%ld-ctx%ld.json", c->dir, conc, ctx);
            cJSON *doc = cached(path);
            if (doc) {
                decode_event(ev, "burst resumed C=%ld ctx=%s (measured by an earlier run)", conc, label);
            } else {
                long n = c->request_count > 0 ? c->request_count : conc * c->burst_requests_per_concurrency;
                decode_event(ev, "burst start C=%ld ctx=%s requests=%ld", conc, label, n);
                doc = measure_burst(c, base, ctx, conc, why, cap);
                if (!doc) {
                    decode_event(ev, "burst failed C=%ld ctx=%s: %s", conc, label, why);
                    return -1;
                }
                const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "burst_results"), 0);
                decode_event(ev, "burst done C=%ld ctx=%s %.1f tok/s (%g of %g completed)", conc, label,
                             cJSON_GetNumberValue(cJSON_GetObjectItem(e, "aggregate_tps")),
                             cJSON_GetNumberValue(cJSON_GetObjectItem(e, "completed_request_count")),
                             cJSON_GetNumberValue(cJSON_GetObjectItem(e, "request_count")));
                cache(ev, path, doc);
            }
            cJSON *arr = cJSON_GetObjectItem(doc, "burst_results"), *e;
            while (arr && (e = arr->child))
                cJSON_AddItemToArray(*results, cJSON_DetachItemViaPointer(arr, e));
            merge_object(table, cJSON_GetObjectItem(doc, "burst_summary_table"));
            cJSON_Delete(doc);
        }
    }
    return 0;
}
