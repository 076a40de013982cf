/* outputs.c — what a run leaves: the per-request log as requests end, the
 * summary, and the artifact. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/journal.h"
#include "artifact/timeseries.h"
#include "core/clock.h"
#include "load/driver.h"
#include "load/plan.h"
#include "run/ceiling.h"
#include "run/stage.h"
#include "stats/dist.h"
#include "stats/tokens.h"

char *run_make_body(void *ud, long seq, long *planned, long *max_tokens)
{
    struct run_ctx *x = ud;
    return workload_body(x->wl, run_global_seq(x, seq), planned, max_tokens);
}

long run_follows(void *ud, long seq)
{
    struct run_ctx *x = ud;
    long f = workload_follows(x->wl, run_global_seq(x, seq));
    /* a turn is in the shard of the one it follows (plan_shard) */
    return f < 0 || !x->shard.local ? f : x->shard.local[f];
}

int run_waits(void *ud, long seq, long *out, int cap)
{
    struct run_ctx *x = ud;
    return workload_waits(x->wl, seq, out, cap);
}

int64_t run_think_ns(void *ud, long seq)
{
    struct run_ctx *x = ud;
    return workload_think_ns(x->wl, seq);
}

/* Appends one line to f, flushed (measured results survive a crash or
 * kill), with every credential of x scrubbed from it. Returns 0 or -1. */
static int append_line(const struct run_ctx *x, FILE *f, cJSON *line)
{
    char *s = line && secrets_scrub_json(&x->secrets, line) == 0 ? cJSON_PrintUnformatted(line) : NULL;
    int rc = s && fprintf(f, "%s\n", s) >= 0 && fflush(f) == 0 ? 0 : -1;
    free(s);
    return rc;
}

int run_journal_open(struct run_ctx *x)
{
    struct run_result *res = x->res;
    const char *a = res->artifact_path;
    struct stat st;
    /* stdout or a device: no place "next to" it */
    if (!strcmp(a, "-") || (lstat(a, &st) == 0 && !S_ISREG(st.st_mode)))
        return 0;
    const char *slash = strrchr(a, '/');
    int dir_len = slash ? (int)(slash - a) + 1 : 0;
    snprintf(res->journal_path, sizeof res->journal_path, "%.*s%s.requests.jsonl", dir_len, a, res->run_id);
    if (!(x->journal = fopen(res->journal_path, "wx"))) {
        snprintf(res->error, sizeof res->error, "cannot create the journal %.900s: %s", res->journal_path,
                 strerror(errno));
        res->journal_path[0] = '\0';
        return -1;
    }
    return 0;
}

/* The settings of summary_compute (the measured parts are added by the caller). */
static struct summary_opts settings_opts(const struct run_ctx *x)
{
    const struct run_config *c = x->c;
    struct summary_opts so = {
        .method = c->out.pct, .ignore_eos = c->workload.ignore_eos, .lateness_is_client = c->load.concurrency == 0,
        /* in every mode: --calibration none plans --input-len tokens too */
        .check_prompt_tokens = x->ds.n == 0, .slo = c->out.slo,
        /* a shard holds its own share of the concurrency and of the schedule */
        .steady = steady_opts_of(x->shard.seqs ? x->shard.concurrency : c->load.concurrency,
                                 c->load.request_rate / (c->shard.count > 0 ? c->shard.count : 1)),
    };
    return so;
}

/* Moves the records of requests that were sent to the front, keeping their
 * order, and returns how many there are. The others were never initialized
 * (all zero, owning nothing): they are overwritten and the tail zeroed. */
static int sent_first(struct req_record *r, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (r[i].t_start)
            r[k++] = r[i];
    memset(&r[k], 0, (size_t)(n - k) * sizeof *r);
    return k;
}

/* The artifact's ramp: what was asked for and when it is over, after the
 * measured phase's start t_measure (0 = not known yet: end_ns null). */
static struct bench_ramp ramp_of(const struct run_config *c, int64_t t_measure)
{
    const struct load_ramp *r = &c->load.ramp;
    if (r->strategy == RAMP_NONE && !(r->ramp_up_s > 0))
        return (struct bench_ramp){0};
    bool rate = r->strategy != RAMP_NONE;
    double end = plan_ramp_end_s(r, c->load.burstiness, (uint64_t)c->workload.seed, (int)c->load.num_prompts);
    return (struct bench_ramp){
        .present = true, .strategy = !rate ? "streams" : r->strategy == RAMP_LINEAR ? "linear" : "exponential",
        .start_rps = rate ? r->start_rps : NAN, .end_rps = rate ? r->end_rps : NAN,
        .ramp_up_s = rate ? NAN : r->ramp_up_s, .end_s = end,
        .end_ns = t_measure > 0 && !isnan(end) ? (double)t_measure + round(end * 1e9) : NAN,
    };
}

/* The settings half of the artifact: what was asked for. */
static struct bench_meta settings_meta(const struct run_ctx *x)
{
    const struct run_config *c = x->c;
    return (struct bench_meta){
        .ramp = ramp_of(c, 0),
        .run_id = x->res->run_id, .started_at = x->started_at, .server = &x->srv,
        .engine_label = c->out.engine_label, .gpu_label = c->out.gpu_label,
        /* a shard's artifact tells its own share; its ranks block the whole run's */
        .endpoint = endpoint_name(c->transport.endpoint),
        .concurrency = x->shard.seqs ? x->shard.concurrency : (int)c->load.concurrency,
        .num_prompts = x->shard.seqs ? x->shard.num_prompts : (int)c->load.num_prompts,
        .request_rate = c->load.request_rate, .burstiness = c->load.burstiness,
        .warmup = x->shard.seqs ? x->shard.warmup : (int)c->load.warmup,
        .input_len = c->workload.dataset ? -1 : c->workload.input_len, .output_len = c->workload.output_len,
        .ignore_eos = c->workload.ignore_eos, .seed = (uint64_t)c->workload.seed,
        .calibration_method = x->calibration_method,
        .calibration = x->cal.n_steps ? &x->cal : NULL, .sweep = c->out.sweep,
        .calibration_source = x->calibration_source,
        .calibration_cache = x->calibration_key[0] ? c->workload.calibration_cache : NULL,
        .calibration_cache_key = x->calibration_key[0] ? x->calibration_key : NULL,
        .shared_prefix_tokens = x->shared_prefix_tokens,
        .shared_prefix_method = x->shared_prefix_method[0] ? x->shared_prefix_method : NULL,
        .dataset = x->ds.n ? x->ds.spec : x->trace.n ? x->trace.spec : NULL, .input_range = c->workload.input_range,
        .trace = x->trace.n ? &x->trace_meta : NULL,
        .prefix_cache = x->prefix_meta.present ? &x->prefix_meta : NULL,
        .images = x->images_meta.present ? &x->images_meta : NULL,
        .agentic = x->agentic.n ? &x->ds : NULL, .agentic_source = x->agentic.source,
        .output_range = c->workload.output_range, .shared_prefix_len = c->workload.shared_prefix_len,
        .duration_s = c->load.duration_s, .warmup_s = c->load.warmup_s, .slo = c->out.slo,
        .argc = c->out.argc, .argv = c->out.argv, .threads = x->threads, .server_tokens_in_window = NAN,
        .journal_lines_lost = x->journal ? x->res->journal_lines_lost : -1,
        .max_request_rows = c->out.max_request_rows,
    };
}

/* The client's last measured ceiling (run/ceiling.h) into *ce, as
 * run_config.out.ceiling_file says: 0 read, else none (no file, no place for
 * one, or "" — or a file that cannot be read, which the run says). */
static int last_ceiling(const struct run_ctx *x, struct ceiling *ce)
{
    const char *f = x->c->out.ceiling_file;
    char path[4096], err[600];
    if (f && !f[0])
        return -1;
    if (!f && ceiling_default_path(path, sizeof path) != 0)
        return -1;
    if (f)
        snprintf(path, sizeof path, "%s", f);
    int rc = ceiling_read(path, ce, err, sizeof err);
    if (rc < 0)
        run_say(x, "note: the client's ceiling is not known: %s (anvil ceiling measures it again)", err);
    return rc;
}

/* The run's peak events/s per thread against the client's last measured
 * ceiling, into meta (ce: its strings, which meta borrows); a warning when
 * the share is above CEILING_WARN_SHARE. */
static void ceiling_share(const struct run_ctx *x, const struct driver_result *dr, struct bench_meta *meta,
                          struct ceiling *ce)
{
    meta->peak_known = true;
    meta->peak_events_per_s = dr->peak_events_per_s;
    if (last_ceiling(x, ce) != 0)
        return;
    meta->ceiling_events_per_s = ce->events_per_s;
    meta->ceiling_measured_at = ce->measured_at;
    double share = (double)dr->peak_events_per_s / ce->events_per_s;
    if (share > CEILING_WARN_SHARE)
        run_say(x, "warning: the client ran at %.0f%% of its measured ceiling: %ld SSE events/s on one measuring "
                "thread against %.0f (anvil ceiling, %s): its timestamps may be late; use more --threads or "
                "fewer streams", 100 * share, dr->peak_events_per_s, ce->events_per_s, ce->measured_at);
}

/* Each measuring loop's requests and lag probe (p99, max by the nearest
 * rank, as the run's loop_lag_ms), into t (dr->threads entries). Returns 0
 * or -1 (memory). */
static int per_thread_of(const struct driver_result *dr, struct bench_thread *t)
{
    for (int i = 0; i < dr->threads; i++) {
        const struct driver_loop_stat *p = &dr->per_loop[i];
        double *lag = malloc((p->n_lag ? p->n_lag : 1) * sizeof *lag);
        if (!lag)
            return -1;
        if (p->n_lag)
            memcpy(lag, dr->loop_lag_ms + p->lag_first, p->n_lag * sizeof *lag);
        struct dist d;
        dist_compute(lag, p->n_lag, PCT_NEAREST, &d);
        free(lag);
        t[i] = (struct bench_thread){.requests = p->requests,
                                     .loop_lag_ms = {d.p99, d.max, (long)d.samples}};
    }
    return 0;
}

/* Whether the run was cut short, and why (static text). */
static const char *incomplete_reason(const struct run_ctx *x, const struct driver_result *dr,
                                     double window_s)
{
    const struct run_config *c = x->c;
    if (dr->server_stalled.stalled)
        return "server_stalled";
    if (dr->server_gone.gone)
        return "server_gone";
    if (x->drop && x->res->kept->lost)
        return "requests lost: their journal lines could not be kept (memory ran out) or read back";
    if (dr->client_limit)
        return "client_limit";      /* this machine's, not the server's (load/driver.h) */
    /* a signal after the last request was sent, whose in-flight requests all
     * ended within the grace period, cut nothing: the round is complete */
    if (dr->stop_signal && (c->load.duration_s > 0 || x->res->summary.sent < x->res->summary.requests
                            || x->res->summary.failed_by[FAIL_CANCELLED]))
        return "stopped by signal";
    if (x->res->summary.sent < x->res->summary.requests)
        return "not every request was sent";
    if (c->load.duration_s > 0 && window_s < c->load.duration_s * 0.999) {
        run_say(x, "warning: the window lasted %.2f s of %g s: all %ld requests allowed by "
                "--num-prompts were sent", window_s, c->load.duration_s, c->load.num_prompts);
        return "the --num-prompts cap was reached before the window ended";
    }
    return NULL;
}

/* The time series into art, after the observed blocks whose gauges it
 * joins. Output tokens counted after the load (the engine's tokenizer over
 * a stream without usage: run/count.c) move to the rows where their
 * requests ended, replacing the chunk counts the rows had. Returns 0 (also
 * with no series), or -1 when memory runs out. */
static int add_timeseries(struct run_ctx *x, struct rec_iter *it, cJSON *art)
{
    if (!x->ts_on)
        return 0;
    struct ts_series s;
    if (ts_finish(&x->ts, &s) != 0)
        return -1;
    /* only counted streams moved: no pass over the records when none was */
    bool counted = x->drop ? x->res->kept->n_texts > 0 : true;
    if (counted && it->rewind(it) != 0) {
        ts_series_free(&s);
        return -1;
    }
    for (const struct req_record *r; counted && (r = it->next(it));) {
        if (r->warmup || !r->t_start || r->cut || r->fail != FAIL_NONE || r->text_tokens < 0)
            continue;
        struct req_record then = *r;    /* as it was when it ended (a shallow copy, never freed) */
        then.text_tokens = -1;
        ts_series_add_tokens(&s, r->t_end, tokens_of(r, NULL) - tokens_of(&then, NULL));
    }
    if (it->err[0]) {
        ts_series_free(&s);
        return -1;
    }
    struct bench_timeseries b;
    int rc = -1;
    if (bench_timeseries_build(&s, cJSON_GetObjectItemCaseSensitive(art, "server_metrics"),
                               cJSON_GetObjectItemCaseSensitive(art, "hardware"), &b) == 0) {
        cJSON *j = benchmark_timeseries_json(&b);
        if (j) {
            cJSON_AddItemToObject(art, "timeseries", j);
            rc = 0;
        }
        bench_timeseries_free(&b);
    }
    ts_series_free(&s);
    return rc;
}

/* The run's records, from the driver (moved to x->res) or, dropped as they
 * ended, read back from the journal. Returns 0, or -1 with the reason in
 * x->res->error. */
static int records_of(struct run_ctx *x, struct driver_result *dr, struct run_records *rr)
{
    struct run_result *res = x->res;
    if (!x->drop) {
        /* duration mode: --num-prompts only capped the sends; the run is what was
         * sent (not always a prefix: held multi-turn turns go out of order) */
        res->n_records = x->c->load.duration_s > 0 ? sent_first(dr->records, dr->n_records) : dr->n_records;
        res->records = dr->records;
        dr->records = NULL;
    }
    char err[600];
    if (run_records_open(res, rr, err, sizeof err) != 0) {
        snprintf(res->error, sizeof res->error, "%s", err);
        return -1;
    }
    return 0;
}

/* The summary of the run's records into x->res->summary. Returns 0, or -1
 * with the reason in x->res->error. */
static int summarize(struct run_ctx *x, struct driver_result *dr, struct rec_iter *it)
{
    struct run_result *res = x->res;
    struct summary_opts so = settings_opts(x);
    so.loop_lag_ms = dr->loop_lag_ms;
    so.n_loop_lag = dr->n_loop_lag;
    so.window_start = dr->window_start;
    so.window_end = dr->window_end;
    so.stamps_kernel = dr->stamps_kernel;
    so.stamps_clock = dr->stamps_clock;
    /* a ramp is not a steady state: no step before its end counts */
    struct bench_ramp ramp = ramp_of(x->c, dr->t_measure);
    if (ramp.present && isfinite(ramp.end_ns) &&
        steady_not_before_s_iter(it, (int64_t)ramp.end_ns, &so.steady.not_before_s) != 0) {
        snprintf(res->error, sizeof res->error, "reading the records back: %s", it->err);
        return -1;
    }
    if (summary_compute_iter(it, &so, &res->summary) != 0) {
        snprintf(res->error, sizeof res->error, "summarizing: %s", it->err[0] ? it->err : "out of memory");
        return -1;
    }
    /* the journal has the requests sent; the plan's others were not (duration mode: the run is
     * what was sent, as sent_first makes it) */
    if (x->drop && x->c->load.duration_s <= 0)
        res->summary.requests = (int)x->c->load.num_prompts;
    return 0;
}

/* Writes art to the artifact's path: whole, or with the rows read back from
 * the journal one at a time. Returns 0, or -1 with the reason in
 * x->res->error. */
static int write_artifact(struct run_ctx *x, struct run_records *rr, const struct bench_meta *meta, cJSON *art)
{
    struct run_result *res = x->res;
    if (!rr->j)
        return artifact_write_file(res->artifact_path, art, res->error, sizeof res->error);
    struct run_rows w;
    int rc = run_rows_index(&w, rr->j, &rr->it, meta, x->c->load.num_prompts);
    w.secrets = &x->secrets;
    if (rc != 0) {
        snprintf(res->error, sizeof res->error, "reading the rows back: %s", rr->it.err);
    } else {
        struct artifact_rows rows[] = {{"request_timings", run_rows_timing, &w},
                                       {"failures", run_rows_failure, &w}};
        rc = artifact_write_streamed(res->artifact_path, art, rows, 2, res->error, sizeof res->error);
    }
    run_rows_free(&w);
    return rc;
}

/* A run that dropped its records and could not read them back: the journal
 * still has every one, and `anvil recover` reads it again. */
static void recover_hint(struct run_ctx *x)
{
    struct run_result *res = x->res;
    size_t n = strlen(res->error);
    if (x->drop && n < sizeof res->error && access(res->journal_path, R_OK) == 0)
        snprintf(res->error + n, sizeof res->error - n, "; the journal %.300s has every request: `anvil recover %.300s` "
                 "rebuilds the artifact from it", res->journal_path, res->journal_path);
}

int run_write_outputs(struct run_ctx *x, struct driver_result *dr)
{
    const struct run_config *c = x->c;
    struct run_result *res = x->res;
    struct run_summary *s = &res->summary;
    struct run_records rr;
    res->warmup_failed = dr->warmup_failed;
    res->server_gone = dr->server_gone;
    res->server_stalled = dr->server_stalled;
    if (records_of(x, dr, &rr) != 0 || summarize(x, dr, &rr.it) != 0) {
        run_records_close(&rr);
        recover_hint(x);
        return -1;
    }
    /* every request sent is in the journal, unless its line could not be kept or read back */
    long read = (long)s->sent + s->warmup_requests;
    if (rr.j && dr->sent > read) {
        x->res->kept->lost = dr->sent - read;
        run_say(x, "warning: %ld request%s lost: %s", x->res->kept->lost, x->res->kept->lost == 1 ? "" : "s",
                rr.j->damaged ? rr.j->first_damaged : "their journal lines could not be kept (memory ran out)");
    }
    res->summarized = true;
    struct bench_meta meta = settings_meta(x);
    if (c->load.duration_s > 0)      /* the requests are those the window saw, not a plan */
        meta.num_prompts = s->sent;
    /* every prompt starts unique, so hits mean the server reused something it should not have */
    meta.cache_contaminated = c->workload.shared_prefix_len == 0 && !c->workload.dataset && s->cached_reports &&
                              s->prompt_tokens > 0 && (double)s->cached_tokens > 0.05 * (double)s->prompt_tokens;
    meta.window_s = dr->window_end > dr->window_start ? (double)(dr->window_end - dr->window_start) / 1e9 : 0;
    meta.window_start_ns = dr->window_start;
    meta.ramp = ramp_of(c, dr->t_measure);
    meta.window_end_ns = dr->window_end;
    meta.incomplete_reason = incomplete_reason(x, dr, meta.window_s);
    meta.incomplete = meta.incomplete_reason != NULL;
    if ((meta.server_gone = dr->server_gone.gone)) {
        meta.gone_first_failure_s = (double)(dr->server_gone.first_failure_ns - dr->phase_ns[SAMPLER_BEFORE_WARMUP]) / 1e9;
        meta.gone_connect_failures = dr->server_gone.connect_failures;
        meta.gone_truncated = dr->server_gone.truncated;
    }
    if ((meta.server_stalled = dr->server_stalled.stalled)) {
        meta.stall_timeout_s = run_stall_timeout_s(c);
        meta.stall_detected_s = (double)(dr->server_stalled.detected_ns - dr->phase_ns[SAMPLER_BEFORE_WARMUP]) / 1e9;
        meta.stall_silent_s = (double)dr->server_stalled.silent_ns / 1e9;
        meta.stall_in_flight = dr->server_stalled.in_flight;
    }
    char finished[21];
    clock_utc_iso8601(finished);
    meta.finished_at = finished;
    meta.prewarmed_connections = dr->prewarmed;
    meta.achieved_rate = dr->achieved_rate;
    meta.client_cpu_user_s = dr->cpu_user_s;
    meta.client_cpu_sys_s = dr->cpu_sys_s;
    meta.stamps_kernel = dr->stamps_kernel;
    meta.stamps_clock = dr->stamps_clock;
    meta.threads = dr->threads;
    meta.transport = http_transport_name(x->transport);
    struct bench_thread *per_thread = dr->per_loop && dr->threads > 0
                                      ? calloc((size_t)dr->threads, sizeof *per_thread) : NULL;
    if (per_thread && per_thread_of(dr, per_thread) != 0) {
        free(per_thread);
        per_thread = NULL;
    }
    meta.per_thread = per_thread;
    struct ceiling ce;
    ceiling_share(x, dr, &meta, &ce);
    res->incomplete = meta.incomplete;
    res->incomplete_reason = meta.incomplete_reason;
    res->cache_contaminated = meta.cache_contaminated;
    /* the server's own prefix hit rate goes beside the one from cached_tokens */
    if (run_observe_summarize(x, dr) != 0) {
        snprintf(res->error, sizeof res->error, "out of memory summarizing the server's metrics");
        free(per_thread);
        run_records_close(&rr);
        return -1;
    }
    meta.server_tokens_in_window = run_check_token_count(x);
    const char *source;
    double srv_rate = run_server_prefix_hit_rate(x, &source);
    x->trace_meta.server_prefix_hit_rate = x->prefix_meta.server_hit_rate = srv_rate;
    x->trace_meta.server_prefix_hit_rate_source = x->prefix_meta.server_hit_rate_source = (char *)source;
    meta.rows_streamed = rr.j != NULL;
    struct benchmark b;
    cJSON *art = NULL;
    if (benchmark_from_iter(&meta, &rr.it, s, &b) == 0) {
        art = benchmark_to_json(&b);
        benchmark_free(&b);
    }
    free(per_thread);
    if (art && run_observe_attach(x, dr, art) != 0) {
        cJSON_Delete(art);
        art = NULL;
    }
    if (art && add_timeseries(x, &rr.it, art) != 0) {
        cJSON_Delete(art);
        art = NULL;
    }
    /* after the observed blocks, where benchmark_to_json writes it back */
    if (art && c->shard.count > 0 && run_shard_add_ranks(x, dr, art) != 0) {
        cJSON_Delete(art);
        art = NULL;
    }
    /* whatever a server sent back (an error body, a model card) may echo a credential */
    if (art && secrets_scrub_json(&x->secrets, art) != 0) {
        cJSON_Delete(art);
        art = NULL;
    }
    int rc = art && write_artifact(x, &rr, &meta, art) == 0 ? 0 : -1;
    if (!art)
        snprintf(res->error, sizeof res->error, "out of memory building the artifact%s%.600s",
                 rr.it.err[0] ? ": " : "", rr.it.err);
    if (rc != 0)
        recover_hint(x);
    cJSON_Delete(art);
    run_records_close(&rr);
    return rc;
}

int run_journal_header(struct run_ctx *x)
{
    if (!x->journal)
        return 0;
    struct summary_opts so = settings_opts(x);
    struct run_summary empty;
    struct bench_meta meta = settings_meta(x);
    meta.incomplete = true;     /* what a recovered artifact says unless told otherwise */
    meta.incomplete_reason = "recovered from the journal";
    cJSON *settings = summary_compute(NULL, 0, &so, &empty) == 0 ? artifact_benchmark(&meta, NULL, 0, &empty) : NULL;
    struct journal_opts jo = {.method = so.method, .ignore_eos = so.ignore_eos,
                              .lateness_is_client = so.lateness_is_client,
                              .check_prompt_tokens = so.check_prompt_tokens, .slo = so.slo};
    x->journal_t0 = clock_now_ns();
    cJSON *h = settings ? journal_header(x->res->run_id, x->res->artifact_path, x->journal_t0, &jo, settings) : NULL;
    int rc = append_line(x, x->journal, h);
    if (rc != 0)
        snprintf(x->res->error, sizeof x->res->error, "cannot write the journal %.900s: %s",
                 x->res->journal_path, h ? strerror(errno) : "out of memory");
    cJSON_Delete(h);
    cJSON_Delete(settings);
    return rc;
}
