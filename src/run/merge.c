/* merge.c — the shards of one run merged into one artifact (merge.h). */
#include "run/merge.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/benchmark.h"
#include "artifact/journal.h"
#include "artifact/ranks.h"
#include "artifact/timeseries.h"
#include "run/stage.h"

/* One part, read. */
struct part_doc {
    bool present;
    cJSON *art;                 /* its artifact, parsed, until read into b; owned */
    struct ranks_block ranks;   /* its ranks block, read; owned */
    const struct rank_entry *entry;     /* its ranks.per_rank[0], in ranks */
    struct benchmark b;         /* art read (the reference's settings); owned */
    struct journal_doc j;       /* its journal; owned */
    int64_t shift_ns;           /* added to its times: onto the reference's clock */
};

static int fail(struct merge_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct merge_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error, sizeof res->error, fmt, ap);
    va_end(ap);
    return -1;
}

/* A whole number of a ranks entry, none (an older artifact without it) as 0. */
static long whole0(long v)
{
    return v == ARTIFACT_NONE ? 0 : v;
}

/* Reads part i: its artifact, its ranks entry (a shard i of count), its journal. */
static int read_part(const struct merge_part *p, int i, int count, struct part_doc *d, struct merge_result *res)
{
    char err[900];
    if (!(d->art = cJSON_Parse(p->artifact)))
        return fail(res, "%.600s: not JSON", p->name);
    int read = benchmark_from_json(d->art, p->name, &d->b, err, sizeof err);
    cJSON_Delete(d->art);   /* read: what follows uses d->b (a big run's tree is the most memory) */
    d->art = NULL;
    if (read != 0)
        return fail(res, "%s", err);
    if (d->b.ranks && ranks_from_json(d->b.ranks, p->name, &d->ranks, err, sizeof err) != 0)
        return fail(res, "%s", err);
    if (!d->b.ranks || d->ranks.n_per_rank != 1)
        return fail(res, "%.600s: not a shard's artifact (no ranks block of one entry: was it run with --shard?)",
                    p->name);
    d->entry = &d->ranks.per_rank[0];
    if (d->ranks.count != count || d->entry->rank != i)
        return fail(res, "%.600s: shard %ld of %ld, not %d of %d", p->name, d->entry->rank, d->ranks.count, i,
                    count);
    if (!p->journal)
        return fail(res, "%.600s: no journal (%s): the merge needs the raw records", p->name,
                    "none named in its ranks entry");
    char *text = strdup(p->journal), *nl = text ? strchr(text, '\n') : NULL;
    int dropped = 0, rc = -1;
    if (!text)
        snprintf(err, sizeof err, "out of memory");
    else if (!nl)
        snprintf(err, sizeof err, "%.600s: the journal has no complete header line", p->name);
    else {
        *nl = '\0';
        rc = run_journal_read_header(p->name, text, &d->j, err, sizeof err) == 0 &&
             run_journal_read_records(p->name, nl + 1, &d->j, &dropped, err, sizeof err) == 0 ? 0 : -1;
        /* a shard's lost request would be missing from the whole run without a word */
        if (rc == 0 && dropped) {
            char first[sizeof err];
            snprintf(first, sizeof first, "%s", err);
            snprintf(err, sizeof err, "%.300s: %d damaged journal line%s (first: %.400s): a merge would lose "
                     "those requests; anvil recover rebuilds this shard's own artifact without them", p->name,
                     dropped, dropped == 1 ? "" : "s", first);
            rc = -1;
        }
    }
    free(text);
    d->present = rc == 0;
    return rc == 0 ? 0 : fail(res, "%s", err);
}

static void shift_record(struct req_record *r, int64_t s)
{
    int64_t *t[] = {&r->t_scheduled, &r->t_start, &r->t_headers, &r->t_first_byte, &r->t_first_event,
                    &r->t_first_output, &r->t_first_content, &r->t_end};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (*t[i])
            *t[i] += s;
    for (size_t i = 0; i < r->n_chunks; i++)
        r->chunks[i].t_ns += s;
}

/* Every measured record of every part, shifted, in one array: at its
 * request_index (of total) when the run had a fixed count, else in turn.
 * Records move out of the parts. Returns 0 or -1 (res->error: memory, a
 * request in two parts). */
static int gather(struct part_doc *d, int count, long total, bool duration, struct req_record **out, int *n,
                  struct merge_result *res)
{
    long cap = total;
    for (int i = 0; duration && i < count; i++)
        cap += d[i].j.n;
    struct req_record *recs = calloc((size_t)(cap ? cap : 1), sizeof *recs);
    if (!recs)
        return fail(res, "out of memory for %ld records", cap);
    long k = duration ? 0 : total;
    for (int i = 0; i < count; i++) {
        for (int x = 0; d[i].present && x < d[i].j.n; x++) {
            struct req_record *r = &d[i].j.recs[x];
            if (!r->t_start || (r->warmup && !duration))
                continue;   /* never sent, or a warm-up: not part of the measured run */
            shift_record(r, d[i].shift_ns);
            long at = duration ? k++ : r->index;
            if (!duration && (at < 0 || at >= total || recs[at].t_start)) {
                *out = recs;
                *n = (int)(duration ? k : total);
                return fail(res, "rank %d: request_index %d is %s", i, r->index,
                            at < 0 || at >= total ? "outside the plan" : "in two shards");
            }
            recs[at] = *r;
            memset(r, 0, sizeof *r);    /* moved */
        }
    }
    *out = recs;
    *n = (int)(duration ? k : total);
    return 0;
}

/* The merged ranks block: every present part's entry with its clock offset,
 * the missing ones named. NULL when memory runs out. */
static cJSON *ranks_block(const struct merge_part *p, const struct part_doc *d, int count, int ref,
                          const char *alignment)
{
    struct rank_missing *missing = calloc((size_t)count, sizeof *missing);
    struct rank_entry *per = calloc((size_t)count, sizeof *per);
    /* strings borrowed from the parts' blocks: r is written, never freed by ranks_free */
    struct ranks_block r = {
        .count = count, .alignment = (char *)alignment, .max_offset_uncertainty_ms = NAN,
        .alignment_note = strcmp(alignment, "wall-clock") ? NULL
                          : "the hosts' wall clocks as their time sync keeps them (not measured; NTP is "
                            "typically 0.1 to 10 ms): less precise than mpi-ping-pong",
        .missing = missing, .plan = d[ref].ranks.plan, .per_rank = per,
    };
    cJSON *j = NULL;
    for (int i = 0; missing && per && i < count; i++) {
        if (!d[i].present) {
            missing[r.n_missing++] = (struct rank_missing){
                .rank = i, .reason = (char *)(p[i].missing_reason ? p[i].missing_reason : "no artifact")};
            continue;
        }
        struct rank_entry e = *d[i].entry;
        double unc = p[i].offset_measured ? p[i].uncertainty_ns / 1e6 : NAN;
        e.clock_offset_ms = p[i].offset_measured ? p[i].offset_ns / 1e6 : -(double)d[i].shift_ns / 1e6;
        e.clock_offset_uncertainty_ms = unc;
        e.clock_drift_ms = p[i].offset_measured && !isnan(p[i].drift_ns) ? p[i].drift_ns / 1e6 : NAN;
        if (!isnan(unc) && !(unc <= r.max_offset_uncertainty_ms))
            r.max_offset_uncertainty_ms = unc;
        per[r.n_per_rank++] = e;
    }
    if (missing && per)
        j = ranks_to_json(&r);
    free(missing);
    free(per);
    return j;
}

/* Why the merged run is incomplete, into res (empty when it is not). */
static void why_incomplete(const struct merge_part *p, const struct part_doc *d, int count,
                           const struct run_summary *s, struct merge_result *res)
{
    char *w = res->incomplete_reason;
    size_t cap = sizeof res->incomplete_reason, len = 0;
    w[0] = '\0';
    for (int i = 0; i < count && len < cap; i++) {
        const char *why = !d[i].present ? (p[i].missing_reason ? p[i].missing_reason : "no artifact")
                          : d[i].b.incomplete ? (d[i].b.incomplete_reason ? d[i].b.incomplete_reason : "incomplete")
                          : NULL;
        if (why)
            len += (size_t)snprintf(w + len, cap - len, "%srank %d of %d %s: %s", len ? "; " : "", i, count,
                                    d[i].present ? "incomplete" : "missing", why);
    }
    if (!w[0] && s->sent < s->requests)
        snprintf(w, cap, "not every request was sent");
    res->incomplete = w[0] != '\0';
}

/* The fullest second of any part's measuring loops, when every present
 * part recorded one, and the ceiling they compared it with, when every part
 * compared it with the same (one machine's file); else none. */
static void fold_peaks(const struct part_doc *d, int count, struct bench_meta *m)
{
    bool all = true, same = true;
    int first = -1;
    for (int i = 0; i < count; i++) {
        if (!d[i].present)
            continue;
        const struct bench_client *c = &d[i].b.client;
        if (c->peak_events_per_s_per_thread == ARTIFACT_NONE) {
            all = false;
            continue;
        }
        if (first < 0)
            first = i;
        const struct bench_client *f = &d[first].b.client;
        same = same && !isnan(c->ceiling_events_per_s) && c->ceiling_events_per_s == f->ceiling_events_per_s;
        if (c->peak_events_per_s_per_thread > m->peak_events_per_s)
            m->peak_events_per_s = c->peak_events_per_s_per_thread;
    }
    m->peak_known = all && first >= 0;
    if (m->peak_known && same) {
        m->ceiling_events_per_s = d[first].b.client.ceiling_events_per_s;
        m->ceiling_measured_at = d[first].b.client.ceiling_measured_at;
    }
}

/* Sums and extremes over the present parts' ranks entries, into meta and s. */
static void fold_ranks(const struct part_doc *d, int count, struct bench_meta *m, struct run_summary *s)
{
    double worst = -1;
    size_t samples = 0;
    for (int i = 0; i < count; i++) {
        if (!d[i].present)
            continue;
        const struct rank_entry *e = d[i].entry;
        m->client_cpu_user_s += e->cpu_user_s;
        m->client_cpu_sys_s += e->cpu_sys_s;
        m->prewarmed_connections += (int)whole0(e->prewarmed_connections);
        m->stamps_kernel += whole0(e->arrival_stamps_kernel_rx);
        m->stamps_clock += whole0(e->arrival_stamps_client_clock);
        samples += (size_t)whole0(e->loop_lag_samples);
        double p99 = e->loop_lag_p99_ms;
        if (!isnan(p99) && p99 > worst) {   /* the worst rank's lag stands for the run */
            worst = p99;
            s->loop_lag.p50 = e->loop_lag_p50_ms;
            s->loop_lag.p99 = p99;
            s->loop_lag.max = e->loop_lag_max_ms;
        }
        if (d[i].b.finished_at && (!m->finished_at || strcmp(d[i].b.finished_at, m->finished_at) > 0))
            m->finished_at = d[i].b.finished_at;
        if (d[i].b.server_gone.present && !m->server_gone) {
            m->server_gone = true;
            m->gone_first_failure_s = d[i].b.server_gone.first_failure_s;
            m->gone_connect_failures = d[i].b.server_gone.connect_failures;
            m->gone_truncated = d[i].b.server_gone.truncated;
        }
        const struct bench_server_stalled *st = &d[i].b.server_stalled;
        if (st->present && !m->server_stalled) {    /* the first part that saw it stands for the run */
            m->server_stalled = true;
            m->stall_timeout_s = st->stall_timeout_s;
            m->stall_detected_s = st->detected_s;
            m->stall_silent_s = st->silent_s;
            m->stall_in_flight = st->in_flight;
        }
        m->cache_contaminated |= d[i].b.cache_contaminated;
    }
    s->loop_lag.samples = samples;
    fold_peaks(d, count, m);
}

static double achieved_rate(const struct req_record *r, int n)
{
    int64_t first = 0, last = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!r[i].t_start)
            continue;
        k++;
        if (!first || r[i].t_start < first)
            first = r[i].t_start;
        if (r[i].t_start > last)
            last = r[i].t_start;
    }
    return k > 1 && last > first ? (k - 1) / ((double)(last - first) / 1e9) : NAN;
}

/* The merged artifact of the parts read. Returns 0 or -1 (res->error). */
static int build(const struct merge_part *p, struct part_doc *d, int count, int ref, const char *alignment,
                 const char *out, struct merge_result *res)
{
    const struct benchmark *rb = &d[ref].b;
    bool duration = rb->duration_mode.present;
    long total = d[ref].ranks.plan.num_prompts;
    struct req_record *recs = NULL;
    int n = 0, rc = -1;
    cJSON *j = NULL;
    struct benchmark b = {0};
    struct summary_opts so = {
        .method = d[ref].j.opts.method, .ignore_eos = d[ref].j.opts.ignore_eos,
        .lateness_is_client = d[ref].j.opts.lateness_is_client,
        .check_prompt_tokens = d[ref].j.opts.check_prompt_tokens, .slo = d[ref].j.opts.slo,
        .steady = steady_opts_of(d[ref].ranks.plan.concurrency, rb->request_rate),
    };
    for (int i = 0; duration && i < count; i++) {  /* the window: from the first rank's opening to the last's close */
        if (!d[i].present || !d[i].entry->window_start_ns || !d[i].entry->window_end_ns)
            continue;
        int64_t ws = d[i].entry->window_start_ns, we = d[i].entry->window_end_ns;
        if (!so.window_start || ws + d[i].shift_ns < so.window_start)
            so.window_start = ws + d[i].shift_ns;
        if (we + d[i].shift_ns > so.window_end)
            so.window_end = we + d[i].shift_ns;
    }
    if (gather(d, count, total, duration, &recs, &n, res) != 0)
        goto done;
    if (rb->ramp.present && isfinite(rb->ramp.end_ns))  /* the whole run's ramp, as every part records it */
        so.steady.not_before_s = steady_not_before_s(recs, n, (int64_t)rb->ramp.end_ns + d[ref].shift_ns);
    struct server_info srv;
    struct calibration calib;
    struct bench_meta meta = run_settings_meta(rb, &d[ref].j.opts, &calib, &srv);
    meta.finished_at = NULL;
    fold_ranks(d, count, &meta, &res->summary);
    so.stamps_kernel = meta.stamps_kernel;
    so.stamps_clock = meta.stamps_clock;
    struct dist lag = res->summary.loop_lag;
    if (summary_compute(recs, n, &so, &res->summary) != 0) {
        fail(res, "out of memory summarizing");
        goto done;
    }
    res->summary.loop_lag = lag;
    res->summary.loop_lagged = lag.samples >= 100 && lag.p99 > 1;
    res->summarized = true;
    res->records = n;
    meta.num_prompts = duration ? res->summary.sent : (int)total;
    meta.warmup = (int)d[ref].ranks.plan.warmup;
    meta.concurrency = (int)d[ref].ranks.plan.concurrency;
    meta.achieved_rate = achieved_rate(recs, n);
    meta.window_s = so.window_end > so.window_start ? (double)(so.window_end - so.window_start) / 1e9 : 0;
    why_incomplete(p, d, count, &res->summary, res);
    meta.incomplete = res->incomplete;
    meta.incomplete_reason = res->incomplete ? res->incomplete_reason : NULL;
    if (benchmark_from_run(&meta, recs, n, &res->summary, &b) != 0) {
        fail(res, "out of memory building the artifact");
        goto done;
    }
    /* the command line and host of rank 0's run, and what it observed of the server */
    struct provenance prov = b.provenance;
    b.provenance = d[ref].b.provenance;
    d[ref].b.provenance = prov;
    b.server_metrics = d[ref].b.server_metrics;
    b.hardware = d[ref].b.hardware;
    b.hardware_run_summary = d[ref].b.hardware_run_summary;
    d[ref].b.server_metrics = d[ref].b.hardware = d[ref].b.hardware_run_summary = NULL;
    /* the whole run's time series, from every rank's records on the reference clock, at the ranks' interval */
    if (d[ref].b.timeseries.present &&
        bench_timeseries_of_records(recs, n, d[ref].b.timeseries.requested_interval_s, so.method, b.server_metrics,
                                    b.hardware, &b.timeseries) != 0) {
        fail(res, "out of memory building the time series");
        goto done;
    }
    b.ranks = ranks_block(p, d, count, ref, alignment);
    if (!b.ranks || !(j = benchmark_to_json(&b))) {
        fail(res, "out of memory building the artifact");
        goto done;
    }
    snprintf(res->artifact_path, sizeof res->artifact_path, "%s", out);
    rc = artifact_write_file(out, j, res->error, sizeof res->error);
done:
    cJSON_Delete(j);
    benchmark_free(&b);
    for (int i = 0; recs && i < n; i++)
        record_free(&recs[i]);
    free(recs);
    return rc;
}

int run_merge(const struct merge_part *parts, int count, const char *alignment, const char *out,
              struct merge_result *res)
{
    *res = (struct merge_result){0};
    if (count < 1)
        return fail(res, "no shards to merge");
    struct part_doc *d = calloc((size_t)count, sizeof *d);
    if (!d)
        return fail(res, "out of memory");
    int rc = 0, ref = -1;
    for (int i = 0; i < count && rc == 0; i++)
        if (parts[i].artifact && (rc = read_part(&parts[i], i, count, &d[i], res)) == 0 && ref < 0)
            ref = i;
    if (rc == 0 && ref < 0)
        rc = fail(res, "none of the %d shards is present", count);
    for (int i = 0; rc == 0 && i < count; i++) {
        if (!d[i].present)
            continue;
        /* onto the reference's clock: measured offsets from rank 0, else the wall clocks */
        d[i].shift_ns = parts[i].offset_measured
                            ? -(int64_t)llround(parts[i].offset_ns - (parts[ref].offset_measured ? parts[ref].offset_ns : 0))
                            : d[i].entry->unix_minus_monotonic_ns - d[ref].entry->unix_minus_monotonic_ns;
    }
    if (rc == 0)
        rc = build(parts, d, count, ref, alignment, out, res);
    for (int i = 0; i < count; i++) {
        run_journal_doc_free(&d[i].j);
        ranks_free(&d[i].ranks);
        benchmark_free(&d[i].b);
        cJSON_Delete(d[i].art);
    }
    free(d);
    return rc;
}
