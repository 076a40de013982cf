/* prefill.c — standalone cold prefills per context, the integrated scout's
 * entry, their server-side validation and seed 004's `prefill` JSON. */
#include "decode/prefill.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/record.h"

const char *prefill_method_name(enum prefill_method m)
{
    switch (m) {
    case PREFILL_SCOUT_ONLY: return "scout_only";
    case PREFILL_INTEGRATED_SCOUT: return "integrated_scout";
    default: return "standalone";
    }
}

int prefill_config_from_run(struct prefill_config *out, const struct run_config *base, const long *contexts,
                            size_t n, long repetitions, char *err, size_t errlen)
{
    *out = (struct prefill_config){.base = *base, .contexts = contexts, .n_contexts = n,
                                   .repetitions = repetitions, .warmup_requests = 1,
                                   .method = PREFILL_STANDALONE, .metric = PREFILL_METRIC_CLIENT};
    if (n == 0) {
        snprintf(err, errlen, "--prefill-contexts: no context given");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (contexts[i] < 1) {
            snprintf(err, errlen, "--prefill-contexts: context %ld has no prefill to time (each must be "
                     "at least 1 token)", contexts[i]);
            return -1;
        }
    if (repetitions < 1) {
        snprintf(err, errlen, "prefill repetitions: expected at least 1, got %ld", repetitions);
        return -1;
    }
    return 0;
}

/* ---- server-side validation ---- */

static void invalid(struct prefill_validation *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Marks v invalid with the reason; its numbers go back to 0. */
static void invalid(struct prefill_validation *v, const char *fmt, ...)
{
    char method[sizeof v->method];
    snprintf(method, sizeof method, "%s", v->method);
    *v = (struct prefill_validation){0};
    snprintf(v->method, sizeof v->method, "%s", method);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->invalid_reason, sizeof v->invalid_reason, fmt, ap);
    va_end(ap);
}

/* The histogram that times the prefill: the prefill-time one (first
 * scheduled → first token), else the server's TTFT; NULL when neither
 * counted a request. */
static const struct srv_hist_summary *prefill_hist(const struct srv_summary *sv, const char **method)
{
    if (sv->hist[SVH_PREFILL].count > 0) {
        *method = "prometheus:kv_computed";
        return &sv->hist[SVH_PREFILL];
    }
    if (sv->hist[SVH_TTFT].count > 0) {
        *method = "prometheus:ttft";
        return &sv->hist[SVH_TTFT];
    }
    return NULL;
}

void prefill_validate(const struct observe_report *obs, long n_samples, double request_prompt_tokens,
                      long client_cached_tokens, struct prefill_validation *out)
{
    *out = (struct prefill_validation){0};
    if (!obs) {
        invalid(out, "not measured: no server metrics around the requests");
        return;
    }
    if (!obs->server_enabled) {
        invalid(out, "not measured: server metrics off%s%s", obs->server_note[0] ? " (" : "", obs->server_note);
        if (obs->server_note[0])
            strncat(out->invalid_reason, ")", sizeof out->invalid_reason - strlen(out->invalid_reason) - 1);
        return;
    }
    const struct srv_summary *sv = &obs->server;
    if (!sv->available) {
        invalid(out, "server metrics unavailable: %s", sv->reason);
        return;
    }
    const char *method = NULL;
    const struct srv_hist_summary *h = prefill_hist(sv, &method);
    if (!h) {
        invalid(out, "the server's metrics have no prefill-time or TTFT histogram that counted the requests");
        return;
    }
    snprintf(out->method, sizeof out->method, "%s", method);
    double n = (double)n_samples;
    if (n_samples < 1 || fabs(h->count - n) > 0.5) {
        invalid(out, "other traffic: the server's histogram counted %.0f requests in the window, the run "
                "timed %ld", h->count, n_samples);
        return;
    }
    if (sv->other_traffic) {
        invalid(out, "other traffic: the server generated %.0f output tokens more than the run received",
                sv->token_excess);
        return;
    }
    /* prompt tokens: the server's counter when it has one (it must agree with the requests) */
    long tol = record_prompt_tolerance((long)llround(request_prompt_tokens));
    double prompt = request_prompt_tokens * n;
    const char *source = "request_usage";
    double counted = sv->delta[SV_PROMPT_TOKENS];
    if (!isnan(counted)) {
        if (fabs(counted - prompt) > (double)tol * n) {
            invalid(out, "other traffic: the server's prompt-token counter moved by %.0f, the requests "
                    "reported %.0f", counted, prompt);
            return;
        }
        prompt = counted;
        source = "prompt_tokens_counter";
    }
    /* cold: what the prefix cache held, from its hit counter, else the requests' usage */
    double cached = sv->delta[SV_PREFIX_HITS];
    if (isnan(cached))
        cached = client_cached_tokens > 0 ? (double)client_cached_tokens : 0;
    if (cached / n > (double)tol) {
        invalid(out, "not a cold prefill: %.0f of %.0f prompt tokens per request were found in the prefix "
                "cache", cached / n, prompt / n);
        return;
    }
    snprintf(out->token_source, sizeof out->token_source, "%s", source);
    out->samples = n_samples;
    out->prefill_seconds = h->mean;
    out->prompt_tokens = (long)llround((prompt - cached) / n);
    out->request_prompt_tokens = (long)llround(request_prompt_tokens);
    out->cached_tokens = (long)llround(cached / n);
    out->tok_per_sec = h->mean > 0 ? (prompt - cached) / n / h->mean : 0;
}

/* ---- entries ---- */

/* The headline of e from its client and server figures. */
static void headline(struct prefill_entry *e, enum prefill_metric metric)
{
    e->ttft_s = e->client_ttft_s;
    bool server = metric == PREFILL_METRIC_SERVER && !e->server.invalid_reason[0] && e->server.samples > 0;
    e->prefill_s = server ? e->server.prefill_seconds : e->client_ttft_s;
    e->tok_per_sec = server ? e->server.tok_per_sec : e->client_tok_per_sec;
}

int prefill_scout_entry(long context_tokens, double ttft_s, long prompt_tokens, const struct observe_report *obs,
                        enum prefill_metric metric, struct prefill_entry *out, char *err, size_t errlen)
{
    *out = (struct prefill_entry){.context_tokens = context_tokens, .method = PREFILL_INTEGRATED_SCOUT,
                                  .status = RUN_OK};
    if (!(ttft_s > 0) || prompt_tokens < 1) {
        snprintf(err, errlen, "integrated prefill at context %ld: TTFT %g s and %ld prompt tokens do not time a "
                 "prefill", context_tokens, ttft_s, prompt_tokens);
        snprintf(out->error, sizeof out->error, "%s", err);
        return -1;
    }
    out->sent = true;
    out->samples = 1;
    out->client_ttft_s = ttft_s;
    out->prompt_tokens = prompt_tokens;
    out->client_tok_per_sec = (double)prompt_tokens / ttft_s;
    if (obs)
        prefill_validate(obs, 1, (double)prompt_tokens, -1, &out->server);
    else
        invalid(&out->server, "not measured: no server metrics around the scout request");
    headline(out, metric);
    return 0;
}

/* Fills e's figures from a finished run's summary and server report. */
static void entry_of_run(struct prefill_entry *e, const struct run_result *r, enum prefill_metric metric)
{
    const struct run_summary *s = &r->summary;
    e->sent = r->summarized && s->sent > 0;
    /* the server stopped answering: what completed before stands for no
     * context's prefill, and the phase stops here with the reason */
    if (run_stalled_text(r, e->error, sizeof e->error)) {
        invalid(&e->server, "the server stalled");
        return;
    }
    if (!r->summarized || s->completed == 0) {
        if (r->error[0])
            snprintf(e->error, sizeof e->error, "%s", r->error);
        else
            run_failures_text(r, e->error, sizeof e->error);
        invalid(&e->server, "no request completed");
        return;
    }
    e->samples = s->completed;
    e->client_ttft_s = s->d[D_TTFO].mean / 1000;
    double prompt = s->prompt_token_reports ? (double)s->prompt_tokens / s->prompt_token_reports : NAN;
    e->prompt_tokens = isnan(prompt) ? 0 : (long)llround(prompt);
    e->client_tok_per_sec = e->client_ttft_s > 0 && !isnan(prompt) ? prompt / e->client_ttft_s : 0;
    if (isnan(prompt))
        invalid(&e->server, "the requests reported no prompt tokens");
    else
        prefill_validate(r->observe, s->completed, prompt, s->cached_reports ? s->cached_tokens : -1, &e->server);
    if (s->failed > 0)
        run_failures_text(r, e->error, sizeof e->error);
    headline(e, metric);
}

/* ---- running ---- */

/* The settings of one prefill run at context tokens: n requests (measured,
 * or warm-ups when warmup) into path. */
static void run_settings(const struct prefill_config *c, long tokens, long n, const char *path,
                         struct run_config *rc)
{
    *rc = c->base;
    rc->workload.input_len = tokens;
    rc->workload.output_len = 1;             /* the first token ends the prefill: nothing to decode */
    rc->workload.output_len_set = true;
    rc->load.num_prompts = n;
    rc->load.warmup = 0;
    rc->load.concurrency = 1;            /* one at a time: every prefill has the server to itself */
    rc->load.request_rate = INFINITY;
    rc->load.duration_s = rc->load.warmup_s = 0;
    rc->workload.dataset = NULL;
    rc->workload.multi_turn = false;
    rc->workload.agentic_file = NULL;
    rc->workload.agentic_sessions = 0;
    rc->workload.shared_prefix_len = 0;
    rc->workload.prefix_hit_rate = 0;
    rc->workload.input_range = rc->workload.output_range = 0;
    rc->workload.trace_speed = rc->workload.trace_start_s = rc->workload.trace_duration_s = 0;
    rc->out.path = path;
}

static const char *dir_of(const struct prefill_config *c)
{
    return c->out_dir ? c->out_dir : c->base.out.dir ? c->base.out.dir : "results";
}

/* The warm-up run: unmeasured prefills at the first context. */
static void warm_up(const struct prefill_config *c, struct prefill_result *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/prefill-warmup.json", dir_of(c));
    struct run_config rc;
    run_settings(c, c->contexts[0], c->warmup_requests, path, &rc);
    struct run_result r;
    out->warmup_run = true;
    out->warmup_status = run_execute(&rc, &r);
    snprintf(out->warmup_error, sizeof out->warmup_error, "%s", r.error);
    run_result_free(&r);
}

/* One context's cold prefills into e. */
static void measure(const struct prefill_config *c, long tokens, struct prefill_entry *e)
{
    *e = (struct prefill_entry){.context_tokens = tokens, .method = c->method};
    snprintf(e->artifact_path, sizeof e->artifact_path, "%s/prefill-%ld.json", dir_of(c), tokens);
    struct run_config rc;
    run_settings(c, tokens, c->repetitions, e->artifact_path, &rc);
    struct run_result r;
    e->status = run_execute(&rc, &r);
    entry_of_run(e, &r, c->metric);
    e->observe = r.observe;     /* the entry keeps the report */
    r.observe = NULL;
    run_result_free(&r);
}

int prefill_run(const struct prefill_config *c, struct prefill_result *out)
{
    *out = (struct prefill_result){.entries = calloc(c->n_contexts ? c->n_contexts : 1, sizeof *out->entries)};
    if (!out->entries)
        return -1;
    if (c->warmup_requests > 0 && c->n_contexts)
        warm_up(c, out);
    int rc = 0;
    for (; out->n < c->n_contexts; out->n++) {
        struct prefill_entry *e = &out->entries[out->n];
        measure(c, c->contexts[out->n], e);
        if (e->samples == 0)
            rc = -1;
    }
    return rc;
}

/* ---- the artifact's entries ---- */

/* A finite number, else 0 (seed 004 writes 0 where there is no figure). */
static double fig(double v)
{
    return isfinite(v) ? v : 0;
}

int prefill_entry_typed(const struct prefill_entry *e, struct decode_prefill *out)
{
    const struct prefill_validation *v = &e->server;
    *out = (struct decode_prefill){
        .present = true, .context_tokens = e->context_tokens, .ttft_seconds = fig(e->ttft_s),
        .prefill_seconds = fig(e->prefill_s), .tok_per_sec = fig(e->tok_per_sec),
        .client_ttft_seconds = fig(e->client_ttft_s), .client_tok_per_sec = fig(e->client_tok_per_sec),
        .prompt_tokens = e->prompt_tokens, .samples = e->samples, .method = decode_text(prefill_method_name(e->method)),
        .server_validation = {
            .method = decode_text(v->method), .tok_per_sec = v->tok_per_sec, .prefill_seconds = v->prefill_seconds,
            .prompt_tokens = v->prompt_tokens, .request_prompt_tokens = v->request_prompt_tokens,
            .cached_tokens = v->cached_tokens, .token_source = decode_text(v->token_source),
            .samples = v->samples, .invalid_reason = decode_text(v->invalid_reason),
        },
        .hardware_summary = e->hardware_summary, .concurrent_streams = ARTIFACT_NONE,
    };
    if (!out->method || !out->server_validation.method || !out->server_validation.token_source ||
        !out->server_validation.invalid_reason) {
        decode_prefill_free(out);
        return -1;
    }
    return 0;
}

int prefill_entries_typed(const struct prefill_entry *entries, size_t n, struct decode_prefill_map *out)
{
    *out = (struct decode_prefill_map){.v = calloc(n ? n : 1, sizeof *out->v)};
    if (!out->v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!entries[i].sent)
            continue;
        if (prefill_entry_typed(&entries[i], &out->v[out->n]) != 0) {
            for (size_t k = 0; k < out->n; k++)
                decode_prefill_free(&out->v[k]);
            free(out->v);
            *out = (struct decode_prefill_map){0};
            return -1;
        }
        out->n++;
    }
    return 0;
}

int prefill_methodology(enum prefill_method mode, struct decode_method *out)
{
    bool standalone = mode == PREFILL_STANDALONE;
    *out = (struct decode_method){
        .present_obj = true, .name = decode_text("Prefill"), .present = true,
        .mode = decode_text(standalone ? "standalone_cold_prefill" : "integrated_decode_scout"),
        .formula = decode_text("prompt_tokens / TTFT"),
        .notes = decode_text(standalone
            ? "Standalone mode repeats cold-prefill samples per listed context: one request at a time, max_tokens 1, "
              "every prompt unique from its first word so no prefix-cache hit; TTFT is the mean time to the first "
              "output token. Prometheus prefill counters, when available and uncontaminated, are stored as validation."
            : "Default mode records the required decode scout request for each non-zero decode context, so normal "
              "runs do not pay for a separate prefill phase. Standalone mode repeats cold-prefill samples. Prometheus "
              "prefill counters, when available and uncontaminated, are stored as validation."),
    };
    if (!out->name || !out->mode || !out->formula || !out->notes) {
        fields_free(&decode_method_table, out);
        return -1;
    }
    return 0;
}

/* ---- freeing ---- */

void prefill_entry_free(struct prefill_entry *e)
{
    if (e->observe) {
        observe_report_free(e->observe);
        free(e->observe);
    }
    e->observe = NULL;
}

void prefill_result_free(struct prefill_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        prefill_entry_free(&r->entries[i]);
    free(r->entries);
    *r = (struct prefill_result){0};
}
