/* cell.c — one cell of the decode matrix: the run, then its figures. */
#include "decode/cell.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/gate.h"
#include "decode/sample.h"

/* Duration mode sends at most this many requests per cell (the driver's
 * record buffer): far more than C streams of max_tokens replace in a window. */
#define DECODE_MAX_SENDS 20000

long decode_prompt_len(long context_tokens, long max_tokens)
{
    long p = context_tokens - max_tokens;
    return p > 0 ? p : 0;
}

void decode_engine_steps(double out_tokens, double drafts, double accepted, double aggregate_tps,
                         double *steps, double *accept_len, double *steps_per_s)
{
    *steps = drafts + fmax(0, out_tokens - (accepted + drafts));
    *accept_len = *steps > 0 ? out_tokens / *steps : NAN;
    *steps_per_s = *accept_len > 0 ? aggregate_tps / *accept_len : NAN;
}

static struct run_config cell_run_config(const struct decode_cell_cfg *c, struct decode_gate *g,
                                         struct sampler **samplers, int n_samplers)
{
    struct run_config rc = *c->base;
    rc.load.concurrency = c->concurrency;
    rc.load.request_rate = INFINITY;
    rc.load.threads = 1;
    rc.workload.input_len = decode_prompt_len(c->context_tokens, c->max_tokens);
    rc.workload.output_len = c->max_tokens;
    rc.workload.output_len_set = true;
    rc.workload.ignore_eos = true;
    rc.load.num_prompts = DECODE_MAX_SENDS;
    rc.load.warmup = 0;
    rc.load.duration_s = c->duration_s;
    rc.load.warmup_s = c->warmup_timeout_s;
    rc.load.window_ready = decode_gate_ready;
    rc.load.gate_ud = g;
    rc.observe.samplers = samplers;
    rc.observe.n_samplers = n_samplers;
    rc.out.path = c->bench_out;
    rc.keep_records = true;     /* the cell's window figures walk them */
    rc.out.progress = false;
    return rc;
}

/* The client's figures of the window (tokens, stats, samples) into *o,
 * which then owns the malloc'd request samples. */
static int client_figures(const struct run_result *res, int64_t ws, int64_t we, struct decode_cell *o,
                          struct decode_window *w)
{
    decode_window_count(res->records, res->n_records, ws, we, w);
    struct decode_request_sample *s = calloc((size_t)(res->n_records ? res->n_records : 1), sizeof *s);
    if (!s)
        return -1;
    size_t n = 0;
    for (int i = 0; i < res->n_records; i++) {
        const struct req_record *r = &res->records[i];
        /* a request without two chunks yet (queued, in prefill at the window's end) has no
         * decode figure: it counts in request_count only */
        if (decode_in_window(r, ws, we) && (r->fail == FAIL_NONE || r->cut) && r->n_chunks >= 2)
            decode_sample_of(r, &s[n++]);
    }
    o->request_samples = s;
    o->n_request_samples = n;
    struct decode_sample_stats st;
    if (decode_sample_stats_of(s, n, &st) != 0)
        return -1;
    decode_sample_stats_put(&st, o);
    return 0;
}

/* Streams in flight on average over [ws, we), from the records. */
static double client_concurrency(const struct run_result *res, int64_t ws, int64_t we)
{
    double busy = 0;
    for (int i = 0; i < res->n_records; i++) {
        const struct req_record *r = &res->records[i];
        if (!decode_in_window(r, ws, we))
            continue;
        int64_t a = r->t_start > ws ? r->t_start : ws;
        int64_t b = r->t_end && r->t_end < we ? r->t_end : we;
        busy += (double)(b - a);
    }
    return we > ws ? busy / (double)(we - ws) : NAN;
}

/* A counter's window delta as the artifact writes it: rounded once, here,
 * so that every figure derived from it uses the number written;
 * ARTIFACT_NONE when the server does not report it. */
static long counter(const struct srv_summary *s, double v)
{
    return s && isfinite(v) ? llround(v) : ARTIFACT_NONE;
}

static double counted(long v)
{
    return v == ARTIFACT_NONE ? NAN : (double)v;
}

void decode_server_figures(const struct observe_report *obs, double accept_norm_ref_len, struct decode_cell *o)
{
    const struct srv_summary *s = obs && obs->server_enabled && obs->server.available ? &obs->server : NULL;
    o->server_output_tokens = counter(s, s ? s->server_output_tokens : NAN);
    o->server_gen_throughput = s ? s->server_gen_throughput : NAN;
    o->server_utilization = s ? s->gauge[SV_UTILIZATION].mean : NAN;
    o->server_spec_accept_rate = s ? s->spec_accept_rate : NAN;
    o->server_spec_accept_length = s ? s->spec_accept_length : NAN;
    o->server_spec_drafts = counter(s, s ? s->delta[SV_SPEC_DRAFTS] : NAN);
    o->server_spec_draft_tokens = counter(s, s ? s->delta[SV_SPEC_DRAFT_TOKENS] : NAN);
    o->server_spec_accepted_tokens = counter(s, s ? s->delta[SV_SPEC_ACCEPTED] : NAN);
    o->server_spec_pos_accept.n = s ? s->n_pos_accept : 0;
    for (int i = 0; i < o->server_spec_pos_accept.n; i++)
        o->server_spec_pos_accept.v[i] = s->pos_accept[i];
    double out = o->server_output_tokens != ARTIFACT_NONE ? (double)o->server_output_tokens
                                                          : (double)o->client_output_tokens;
    if (o->server_spec_drafts != ARTIFACT_NONE) {
        decode_engine_steps(out, counted(o->server_spec_drafts), counted(o->server_spec_accepted_tokens),
                            o->aggregate_tps, &o->server_engine_steps, &o->server_accept_len_effective,
                            &o->server_steps_per_s);
    } else {    /* no vLLM draft counters: observe's steps (SGLang's acceptance length, or one token a step) */
        o->server_engine_steps = s ? s->engine_steps : NAN;
        o->server_accept_len_effective = s ? s->accept_len_effective : NAN;
        o->server_steps_per_s = o->server_accept_len_effective > 0 ? o->aggregate_tps / o->server_accept_len_effective
                                                                   : NAN;
    }
    o->accept_norm_ref_len = accept_norm_ref_len;
    o->accept_norm_tps = accept_norm_ref_len > 0 ? o->server_steps_per_s * accept_norm_ref_len : 0;
    o->avg_running_reqs = s ? s->avg_running_reqs : NAN;
    o->max_running_reqs = s ? s->max_running_reqs : NAN;
    o->avg_queue_reqs = s ? s->avg_queue_reqs : NAN;
    o->max_queue_reqs = s ? s->max_queue_reqs : NAN;
    o->queue_fraction = s ? s->queue_fraction : NAN;
}

/* underfilled and capacity_limited, with the reason: capacity-limited is
 * the KV pool's word, for a pool too small for C streams of the cell's
 * length; a server that queued requests for another cause (its sequence
 * limit) leaves the cell underfilled, said in capacity_reason too. */
static void capacity(const struct decode_cell_cfg *c, const struct observe_report *obs, struct decode_cell *o,
                     double client_conc, char *why, size_t cap)
{
    double eff = isfinite(o->avg_running_reqs) ? o->avg_running_reqs : client_conc;
    o->effective_concurrency = isfinite(eff) ? lround(eff) : 0;
    o->underfilled = o->effective_concurrency < c->concurrency;
    double pool = c->kv_budget_tokens;
    if (!isfinite(pool) && obs && obs->server_enabled)
        pool = obs->server.kv_pool_tokens;
    long per_stream = decode_prompt_len(c->context_tokens, c->max_tokens) + c->max_tokens;
    double need = (double)c->concurrency * (double)per_stream;
    *why = 0;
    if (isfinite(pool) && pool < need)
        snprintf(why, cap, "KV budget %.0f tokens < %ld streams x %ld tokens", pool, c->concurrency, per_stream);
    else if (o->underfilled && o->queue_fraction > 0.5)
        snprintf(why, cap, "the server kept requests queued (%.0f%% of the window) while running %.1f of %ld",
                 o->queue_fraction * 100, o->avg_running_reqs, c->concurrency);
    o->capacity_limited = isfinite(pool) && pool < need;
}

/* Why the gate never opened: the newest observation and the longest the
 * condition held against what --ready-stable-s asks (short requests that
 * end and are replaced break it at every replacement). */
static void timeout_reason(const struct decode_gate *g, char *out, size_t cap)
{
    snprintf(out, cap, "%s; the condition held %.2f s at most, %.1f s asked (--ready-stable-s)", g->last,
             g->longest_s, g->stable_s);
}

/* The gate's observations, seconds since t0, into o->ready_trace. */
static int trace_of(const struct decode_gate *g, int64_t t0, struct decode_cell *o)
{
    if (g->n_trace == 0)
        return 0;
    if (!(o->ready_trace = calloc((size_t)g->n_trace, sizeof *o->ready_trace)))
        return -1;
    for (int i = 0; i < g->n_trace; i++) {
        const struct decode_gate_obs *x = &g->trace[i];
        o->ready_trace[o->n_ready_trace++] = (struct decode_gate_point){
            .t_s = (double)(x->t - t0) / 1e9, .running_reqs = x->running, .queue_reqs = x->queued,
            .active_streams = x->active, .decoding_streams = x->decoding, .met = x->met,
        };
    }
    return 0;
}

/* The first request sent: its send instant and the scout's figures. */
static int64_t first_send(const struct decode_cell_cfg *c, const struct run_result *res, const struct decode_gate *g,
                          struct decode_cell_result *out)
{
    const struct req_record *first = NULL;
    for (int i = 0; i < res->n_records; i++) {
        const struct req_record *r = &res->records[i];
        if (r->t_start && (!first || r->t_start < first->t_start))
            first = r;
    }
    if (!first)
        return 0;
    if (first->t_first_content && (first->fail == FAIL_NONE || first->cut) && c->context_tokens > 0) {
        double ttft = (double)(first->t_first_content - first->t_start) / 1e9;
        long prompt = first->prompt_tokens >= 0 ? first->prompt_tokens : first->planned_prompt_tokens;
        int64_t end = !first->cut ? first->t_end : 0;
        struct observe_report *obs = calloc(1, sizeof *obs);
        bool have = obs && decode_gate_scout_report(g, first->t_start, first->t_first_content, end, obs) == 0;
        char err[300];
        out->scout = prefill_scout_entry(c->context_tokens, ttft, prompt, have ? obs : NULL, c->prefill_metric,
                                         &out->scout_entry, err, sizeof err) == 0;
        out->t_scout_first_token = first->t_first_content;
        free(obs);
    }
    return first->t_start;
}

static int64_t last_end(const struct run_result *res)
{
    int64_t t = 0;
    for (int i = 0; i < res->n_records; i++)
        if (res->records[i].t_end > t)
            t = res->records[i].t_end;
    return t;
}

/* How the window's tokens were counted, as aggregate_source says it: every
 * chunk's own count (continuous usage), else the weakest source any of its
 * streams needed (stats/tokens.h). */
static const char *window_source(const struct token_window *w)
{
    if (w->chunks_with_count == w->chunks)
        return "openai_continuous_usage";
    static const char *const names[] = {
        [TOKENS_USAGE] = "openai_usage", [TOKENS_TOKENIZE] = "server_tokenize", [TOKENS_CHUNKS] = "client_chunks",
    };
    return names[window_token_source(w)];
}

/* The cell's figures from the finished run into out->cell. Returns 0, or -1
 * out of memory. */
static int figures(const struct decode_cell_cfg *c, const struct decode_gate *g, const struct run_result *res,
                   struct decode_cell_result *out)
{
    int64_t ws = res->window_start, we = res->window_end;
    struct decode_cell *o = &out->cell;
    decode_cell_init(o);
    o->concurrency = c->concurrency;
    o->context_tokens = c->context_tokens;
    o->benchmark_mode = decode_text("duration");
    o->request_count_target = 0;
    struct decode_window w;
    if (!o->benchmark_mode || client_figures(res, ws, we, o, &w) != 0)
        return -1;
    int64_t t0 = first_send(c, res, g, out);
    out->t_first_send = t0;
    o->measurement_wall_seconds = (double)(we - ws) / 1e9;
    long tokens = llround(w.tokens.tokens);     /* rounded once: every figure below derives from it */
    o->client_output_tokens = tokens;
    o->total_tokens = tokens;
    o->request_count = w.requests;
    o->completed_request_count = w.completed;
    o->num_completed = w.completed_inside;
    o->num_errors = w.errors;
    o->warmup_request_count = 0;
    o->wall_time = t0 ? (double)(last_end(res) - t0) / 1e9 : NAN;
    o->warmup_duration = t0 ? (double)(ws - t0) / 1e9 : NAN;
    const struct observe_report *obs = res->observe;
    decode_server_figures(obs, c->accept_norm_ref_len, o);   /* needs aggregate_tps: steps again below */
    const char *source;
    if (tokens > 0) {
        source = window_source(&w.tokens);
        o->measurement_seconds = (double)(w.tokens.last_arrival - ws) / 1e9;
        o->aggregate_tps = o->measurement_seconds > 0 ? (double)tokens / o->measurement_seconds : NAN;
    } else if (isfinite(o->server_gen_throughput)) {
        source = "prometheus_fallback";
        o->measurement_seconds = o->measurement_wall_seconds;
        o->aggregate_tps = o->server_gen_throughput;
    } else {
        source = "client_chunks";
        o->measurement_seconds = o->measurement_wall_seconds;
        o->aggregate_tps = 0;
    }
    o->per_request_avg_tps = o->aggregate_tps / (double)c->concurrency;
    decode_server_figures(obs, c->accept_norm_ref_len, o);
    char cap_why[200], timeout[320] = "";
    capacity(c, obs, o, client_concurrency(res, ws, we), cap_why, sizeof cap_why);
    o->warmup_timed_out = !g->opened;
    if (o->warmup_timed_out)
        timeout_reason(g, timeout, sizeof timeout);
    o->aggregate_source = decode_text(source);
    o->capacity_reason = decode_text(cap_why);
    o->ready_reason = decode_text(g->opened ? g->ready_reason : "warmup_timeout");
    o->timeout_reason = decode_text(timeout);
    decode_hw_of(obs, &o->hardware_summary);
    o->window_start_monotonic_ns = (double)ws;
    o->window_end_monotonic_ns = (double)we;
    if (!o->aggregate_source || !o->capacity_reason || !o->ready_reason || !o->timeout_reason ||
        trace_of(g, t0, o) != 0)
        return -1;
    out->t_ready = ws;
    if (g->opened)
        snprintf(out->ready_line, sizeof out->ready_line, "ready %s", g->ready_reason);
    else
        snprintf(out->ready_line, sizeof out->ready_line, "warmup timeout %s", timeout);
    return 0;
}

enum run_status decode_cell_run(const struct decode_cell_cfg *c, struct decode_cell_result *out)
{
    *out = (struct decode_cell_result){.status = RUN_FAILED};
    decode_cell_init(&out->cell);
    struct decode_gate *g = malloc(sizeof *g);
    if (!g) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return RUN_FAILED;
    }
    decode_gate_init(g, c->concurrency, c->ready_stable_s, c->metrics_url, c->metrics_headers);
    struct sampler *samplers[1];
    int n = 0;
    if (decode_gate_sampler(g))
        samplers[n++] = decode_gate_sampler(g);
    struct run_config rc = cell_run_config(c, g, samplers, n);
    struct run_result res;
    out->status = run_execute(&rc, &res);
    snprintf(out->error, sizeof out->error, "%s", res.error);
    out->server_gone = res.server_gone.gone;
    out->calibrated = res.calibrated;
    out->calibration_source = res.calibration_source;
    out->calibration_words = res.calibration_words;
    out->calibration_tokens = res.calibration_tokens;
    out->server_stalled = run_stalled_text(&res, out->error, sizeof out->error);
    out->interrupted = res.incomplete_reason && strstr(res.incomplete_reason, "signal");
    /* a cell counts when its window ran to the end with the server there and
     * measured something: a server killed between the run's readiness check
     * and its first reply refuses every request without being "gone" (the
     * driver's streak counts only after a reply), and such a run is
     * RUN_INCOMPLETE with nothing measured */
    out->measured = out->status == RUN_OK && !out->server_gone && !out->server_stalled && !out->interrupted &&
                    res.window_end > 0;
    if (out->status == RUN_INCOMPLETE && !out->error[0])
        run_failures_text(&res, out->error, sizeof out->error);
    if (out->measured && figures(c, g, &res, out) != 0) {
        snprintf(out->error, sizeof out->error, "out of memory");
        out->measured = false;
        out->status = RUN_FAILED;
    }
    run_result_free(&res);
    decode_gate_free(g);
    free(g);
    return out->status;
}

void decode_cell_result_free(struct decode_cell_result *r)
{
    decode_cell_free(&r->cell);
    prefill_entry_free(&r->scout_entry);
}
