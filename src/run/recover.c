/* recover.c — a run's artifact rebuilt from its journal (run.h,
 * run_recover; docs/ARTIFACTS.md, "The journal"). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact/benchmark.h"
#include "artifact/journal.h"
#include "artifact/timeseries.h"
#include "core/file.h"
#include "run/run.h"
#include "run/stage.h"

void run_journal_doc_free(struct journal_doc *d)
{
    for (int i = 0; d->recs && i < d->n; i++)
        record_free(&d->recs[i]);
    free(d->recs);
    benchmark_free(&d->settings);
    cJSON_Delete(d->header);
}

int run_journal_read_header(const char *path, const char *line, struct journal_doc *d, char *err, size_t errlen)
{
    const cJSON *settings;
    const char *run_id;
    char name[4200];
    snprintf(name, sizeof name, "%s:1", path);
    if (!(d->header = cJSON_Parse(line))) {
        snprintf(err, errlen, "%.600s: not JSON (is this a journal?)", name);
        return -1;
    }
    if (journal_header_read(d->header, name, &d->t0, &d->opts, &settings, &run_id, &d->artifact, err, errlen) != 0)
        return -1;
    char inner[600];
    if (benchmark_from_json(settings, NULL, &d->settings, inner, sizeof inner) != 0) {
        snprintf(err, errlen, "%.400s: settings: %s", name, inner);
        return -1;
    }
    return 0;
}

/* Places record r: a measured request at its index among the planned ones
 * (so requests never seen count as not sent), anything else after them. */
static int place(struct journal_doc *d, int planned, int *extra, struct req_record *r)
{
    bool at_index = d->settings.duration_mode.present ? false : !r->warmup && r->index < planned;
    int slot = at_index ? r->index : planned + (*extra)++;
    if (at_index && d->recs[slot].t_start) {
        record_free(r);     /* the same request twice: keep the first */
        return 0;
    }
    d->recs[slot] = *r;
    return 0;
}

int run_journal_read_records(const char *path, char *text, struct journal_doc *d, int *dropped, char *err,
                        size_t errlen)
{
    size_t lines = 0;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    long planned = d->settings.duration_mode.present ? 0 : d->settings.requests;
    if (planned < 0 || planned > 100000000 || lines > 100000000) {
        snprintf(err, errlen, "%s: implausible request count", path);
        return -1;
    }
    d->n = (int)planned + (int)lines + 1;
    if (!(d->recs = calloc((size_t)d->n, sizeof *d->recs))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int extra = 0, lineno = 1;
    char *save = NULL, why[600] = "";
    /* a damaged line (cut by a kill or a full disk, or corrupted) is skipped and
     * counted: the others are still every request they record */
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        cJSON *j = cJSON_Parse(line);
        char name[4200];
        snprintf(name, sizeof name, "%s:%d", path, lineno);
        struct req_record r;
        int rc = j ? journal_record_read(j, name, d->t0, &r, why, sizeof why) : -1;
        if (!j)
            snprintf(why, sizeof why, "%.500s: not JSON", name);
        cJSON_Delete(j);
        if (rc != 0) {
            if (!*dropped)
                snprintf(err, errlen, "%s", why);   /* the first, for the caller to name */
            (*dropped)++;
            continue;
        }
        place(d, (int)planned, &extra, &r);
    }
    d->n = (int)planned + extra;
    return 0;
}

struct bench_meta run_settings_meta(const struct benchmark *b, const struct journal_opts *o, struct calibration *calib,
                                 struct server_info *srv)
{
    *srv = (struct server_info){.max_model_len = -1,
                                .context_len = isnan(b->max_context_tokens) ? -1 : (long)b->max_context_tokens,
                                .max_input_len = isnan(b->max_input_tokens) ? -1 : (long)b->max_input_tokens};
    snprintf(srv->context_source, sizeof srv->context_source, "%s", b->max_context_source ? b->max_context_source : "");
    snprintf(srv->display_url, sizeof srv->display_url, "%s", b->base_url ? b->base_url : "");
    snprintf(srv->base_url, sizeof srv->base_url, "%s", srv->display_url);
    snprintf(srv->model, sizeof srv->model, "%s", b->model ? b->model : "");
    snprintf(srv->engine, sizeof srv->engine, "%s", b->engine_detected ? b->engine_detected : b->engine);
    snprintf(srv->engine_version, sizeof srv->engine_version, "%s", b->engine_version ? b->engine_version : "");
    const struct bench_calibration *cal = &b->calibration;
    const struct bench_duration_mode *dm = &b->duration_mode;
    return (struct bench_meta){
        .run_id = b->run_id, .started_at = b->started_at, .server = srv,
        .engine_label = strcmp(b->engine, srv->engine) ? b->engine : NULL, .gpu_label = b->gpu,
        .endpoint = b->endpoint, .concurrency = (int)b->concurrency, .num_prompts = (int)b->requests,
        .warmup = (int)b->warmup_requests,
        .request_rate = isnan(b->request_rate) ? INFINITY : b->request_rate,
        .burstiness = isnan(b->burstiness) ? 1 : b->burstiness, .slo = o->slo,
        .ramp = b->ramp,        /* end_ns null in the journal's header (the run had not begun) */
        .input_len = isnan(b->context_tokens) ? -1 : (long)b->context_tokens, .output_len = b->max_tokens,
        .ignore_eos = b->ignore_eos, .seed = (uint64_t)b->context_seed,
        .calibration_method = cal->method, .calibration = bench_calibration_search(cal, calib),
        .calibration_source = cal->source, .calibration_cache = cal->cache_file,
        .calibration_cache_key = cal->cache_key, .shared_prefix_method = cal->shared_prefix_method,
        .shared_prefix_tokens = isnan(b->shared_prefix_tokens) ? -1 : (long)b->shared_prefix_tokens,
        .incomplete = true, .incomplete_reason = "recovered from the journal: the run did not finish",
        .sweep = {b->sweep.target, b->sweep.case_id, b->sweep.round},
        .dataset = b->workload.dataset, .input_range = b->workload.input_len_range,
        .output_range = b->workload.output_len_range, .shared_prefix_len = b->workload.shared_prefix_len,
        .duration_s = dm->present ? dm->duration_s : 0, .warmup_s = dm->present ? dm->warmup_s : 0,
        .threads = (int)b->client.threads, .journal_lines_lost = -1,
        .max_request_rows = b->max_request_rows != ARTIFACT_NONE ? b->max_request_rows : RUN_MAX_REQUEST_ROWS,
    };
}

/* The duration mode's window as far as the journal saw it: the first
 * measured start to the last end (one pass). Returns 0 or -1. */
static int window_of(struct rec_iter *it, struct summary_opts *so)
{
    if (it->rewind(it) != 0)
        return -1;
    for (const struct req_record *r; (r = it->next(it));) {
        if (r->warmup || !r->t_start)
            continue;
        if (!so->window_start || r->t_start < so->window_start)
            so->window_start = r->t_start;
        if (r->t_end > so->window_end)
            so->window_end = r->t_end;
    }
    return it->err[0] ? -1 : 0;
}

/* Builds the artifact of d's records (read through it, a few passes;
 * damaged lines skipped and said) into *meta and a new tree, its rows left
 * to the writer. NULL when memory runs out or the journal could not be
 * read again (it->err). */
static cJSON *rebuild(struct journal_doc *d, struct rec_iter *it, struct jiter *j, struct run_summary *s,
                      struct bench_meta *meta, struct server_info *srv, struct calibration *calib, char *reason,
                      size_t reason_len)
{
    struct summary_opts so = {
        .method = d->opts.method, .ignore_eos = d->opts.ignore_eos,
        .lateness_is_client = d->opts.lateness_is_client,
        .check_prompt_tokens = d->opts.check_prompt_tokens, .slo = d->opts.slo,
    };
    *meta = run_settings_meta(&d->settings, &d->opts, calib, srv);
    so.steady = steady_opts_of(meta->concurrency, meta->request_rate);
    /* the journal's header was written before the run began: the ramp's end
       is known after the measured phase's start, which in duration mode the
       warm-up precedes */
    if (d->settings.ramp.present && isfinite(d->settings.ramp.end_s))
        so.steady.not_before_s = fmax(0, d->settings.ramp.end_s - (d->settings.duration_mode.present
                                                                  ? d->settings.duration_mode.warmup_s : 0));
    if (meta->duration_s > 0) {
        if (window_of(it, &so) != 0)
            return NULL;
        meta->window_s = (double)(so.window_end - so.window_start) / 1e9;
    }
    if (summary_compute_iter(it, &so, s) != 0)
        return NULL;
    if (j->damaged) {
        snprintf(reason, reason_len, "recovered from the journal: the run did not finish; %ld damaged "
                 "line%s skipped", j->damaged, j->damaged == 1 ? "" : "s");
        meta->incomplete_reason = reason;
    }
    long planned = meta->duration_s > 0 ? 0 : meta->num_prompts;
    if (s->requests < planned)      /* those never seen were not sent */
        s->requests = (int)planned;
    if (meta->duration_s > 0)
        meta->num_prompts = s->sent;
    meta->rows_streamed = true;
    struct benchmark b;
    if (benchmark_from_iter(meta, it, s, &b) != 0)
        return NULL;
    /* the time series from the journal's records: at the default interval, which the journal does not
     * record, and without gauges (the server's and GPUs' readings are not journaled) */
    if (bench_timeseries_of_iter(it, RUN_TIMESERIES_DEFAULT_S, so.method, NULL, NULL, &b.timeseries) != 0) {
        benchmark_free(&b);
        return NULL;
    }
    /* the command line and host of the run, not of the recovery */
    struct provenance p = b.provenance;
    b.provenance = d->settings.provenance;
    d->settings.provenance = p;
    cJSON *out = benchmark_to_json(&b);
    benchmark_free(&b);
    return out;
}

/* Reads the header line of the journal at path into d. Returns 0, or -1
 * with the reason in err. */
static int read_header(const char *path, struct journal_doc *d, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    ssize_t n = getline(&line, &cap, f);
    int rc = -1;
    if (n <= 0 || line[n - 1] != '\n')
        snprintf(err, errlen, "%s: no complete header line (the run wrote no settings)", path);
    else
        rc = run_journal_read_header(path, line, d, err, errlen);
    free(line);
    fclose(f);
    return rc;
}

/* Writes the rebuilt artifact j, its rows read back through jr. */
static int write_recovered(struct jiter *jr, struct rec_iter *it, const struct bench_meta *meta, long n_index,
                           const cJSON *j, struct run_recovery *res)
{
    struct run_rows w;
    int rc = run_rows_index(&w, jr, it, meta, n_index);
    if (rc != 0) {
        snprintf(res->error, sizeof res->error, "reading the rows back: %.900s", it->err);
    } else {
        struct artifact_rows rows[] = {{"request_timings", run_rows_timing, &w}, {"failures", run_rows_failure, &w}};
        rc = artifact_write_streamed(res->artifact_path, j, rows, 2, res->error, sizeof res->error);
    }
    run_rows_free(&w);
    return rc;
}

int run_recover(const char *journal, const char *out, bool force, struct run_recovery *res)
{
    *res = (struct run_recovery){0};
    struct journal_doc d = {0};
    if (read_header(journal, &d, res->error, sizeof res->error) != 0) {
        run_journal_doc_free(&d);
        return -1;
    }
    bool duration = d.settings.duration_mode.present;
    /* measured requests are placed by request_index: one seen twice is kept once; the
     * warm-ups of --num-warmups are not the run's requests, as the run left them out (duration
     * mode's, sent before the window, are) */
    long n_index = duration ? 0 : d.settings.requests;
    struct jiter_opts o = {.n_index = n_index > 0 && n_index <= 100000000 ? n_index : 0, .skip_warmup = !duration};
    struct jiter jr;
    struct rec_iter it;
    if (jiter_open(&jr, &it, journal, &o, res->error, sizeof res->error) != 0) {
        run_journal_doc_free(&d);
        return -1;
    }
    snprintf(res->artifact_path, sizeof res->artifact_path, "%s", out ? out : d.artifact);
    struct stat st;
    int rc = -1;
    struct bench_meta meta;
    struct server_info srv;
    struct calibration calib;
    char reason[160];
    cJSON *j = NULL;
    if (!force && strcmp(res->artifact_path, "-") && stat(res->artifact_path, &st) == 0 && S_ISREG(st.st_mode))
        snprintf(res->error, sizeof res->error, "%.600s exists (the run finished, or was recovered "
                 "before): --force replaces it, --out writes elsewhere", res->artifact_path);
    else if (!(j = rebuild(&d, &it, &jr, &res->summary, &meta, &srv, &calib, reason, sizeof reason)))
        snprintf(res->error, sizeof res->error, "%s", it.err[0] ? it.err : "out of memory rebuilding the artifact");
    else if (write_recovered(&jr, &it, &meta, duration ? LONG_MAX : n_index, j, res) == 0)
        rc = 0;
    res->summarized = j != NULL;
    res->dropped = (int)jr.damaged;
    snprintf(res->first_dropped, sizeof res->first_dropped, "%s", jr.first_damaged);
    cJSON_Delete(j);
    jiter_close(&jr);
    run_journal_doc_free(&d);
    return rc;
}
