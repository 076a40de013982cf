/* test_summary_iter.c — the run summary over a rec_iter: the same summary
 * as over the array, errors of the iterator reported, and a run whose
 * chunks outgrow the exact columns checked against figures recomputed here
 * from the records' own chunk times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core/rand.h"
#include "stats/hist.h"
#include "stats/peak.h"
#include "stats/summary.h"

#define MS(x) ((int64_t)((x) * 1000000.0))
#define T0_NS MS(5000)

static double uniform(uint64_t *st)
{
    return (double)(splitmix64_next(st) >> 11) / 9007199254740992.0;
}

/* A closed loop: `streams` streams of `per` back-to-back requests, stream
 * s starting at a random offset under 1 s. Each request: TTFT 50 to 150
 * ms, then `chunks` chunks at a per-stream pace (0.8 to 1.6 ms) with
 * jitter, each carrying its own count of 1 to 3 tokens; the end 1 ms after
 * the last, or 1 s after the start when that is later. With `mixed`, some requests fail, one is cut, one is a
 * warm-up, and some report no usage. */
static struct req_record *loop_run(int streams, int per, int chunks, bool mixed, int *n)
{
    uint64_t st = 2024;
    *n = streams * per;
    struct req_record *recs = calloc((size_t)*n, sizeof *recs);
    for (int s = 0, k = 0; s < streams; s++) {
        int64_t at = T0_NS + (int64_t)(uniform(&st) * 1e9);
        double pace = 0.8 + 0.8 * uniform(&st);
        for (int i = 0; i < per; i++, k++) {
            struct req_record *r = &recs[k];
            record_init(r, k, false, 100, 3L * chunks);
            r->t_scheduled = r->t_start = at;
            r->t_headers = r->t_first_byte = r->t_first_event = r->t_start + MS(1);
            double t = 50 + 100 * uniform(&st);
            long tokens = 0;
            for (int c = 0; c < chunks; c++, t += pace * (0.5 + uniform(&st))) {
                int32_t tk = 1 + (int32_t)(splitmix64_next(&st) % 3);
                cr_assert_eq(record_add_chunk(r, r->t_start + MS(t), tk, 4 * (size_t)tk, true), 0);
                tokens += tk;
            }
            r->t_first_output = r->t_first_content = r->chunks[0].t_ns;
            r->t_end = r->chunks[r->n_chunks - 1].t_ns + MS(1);
            r->t_end = r->t_end > r->t_start + MS(1000) ? r->t_end : r->t_start + MS(1000);
            at = r->t_end;
            r->content_chunks = chunks;
            r->completion_tokens = tokens;
            r->prompt_tokens = 100;
            r->done_seen = true;
            if (mixed && k % 37 == 5)
                record_fail(r, FAIL_TRUNCATED, "cut short");
            if (mixed && k % 23 == 7)
                r->completion_tokens = -1;      /* no usage: counted from the chunks' own counts */
        }
    }
    if (mixed) {
        recs[1].warmup = true;
        recs[2].cut = true;
    }
    return recs;
}

static void free_run(struct req_record *r, int n)
{
    for (int i = 0; i < n; i++)
        record_free(&r[i]);
    free(r);
}

/* A source as the journal will be: each record a fresh copy, valid until
 * the next call; it can fail at a given read of a given pass, fail to
 * rewind, or give one record more on a later pass. */
struct copy_src {
    const struct req_record *recs;
    size_t n, at;
    int pass;                   /* passes begun (rewinds) */
    int fail_pass;              /* the pass whose read fails (0: none) */
    size_t fail_at;             /* ... at this record */
    int fail_rewind;            /* the rewind that fails (0: none) */
    int grow_pass;              /* from this pass on, recs[0] comes twice (0: never) */
    struct req_record cur;
};

static const struct req_record *copy_next(struct rec_iter *it)
{
    struct copy_src *s = it->ud;
    free(s->cur.chunks);
    memset(&s->cur, 0xa5, sizeof s->cur);       /* the last record is gone */
    s->cur.chunks = NULL;
    if (s->fail_pass == s->pass && s->at == s->fail_at) {
        snprintf(it->err, sizeof it->err, "journal line %zu: not JSON", s->at + 1);
        return NULL;
    }
    bool extra = s->grow_pass && s->pass >= s->grow_pass && s->at == s->n;
    if (s->at >= s->n + extra)
        return NULL;
    const struct req_record *r = &s->recs[s->at++ % s->n];
    s->cur = *r;
    s->cur.text = (struct buf){0};
    s->cur.chunks = malloc((r->n_chunks ? r->n_chunks : 1) * sizeof *r->chunks);
    cr_assert_not_null(s->cur.chunks);
    if (r->n_chunks)
        memcpy(s->cur.chunks, r->chunks, r->n_chunks * sizeof *r->chunks);
    return &s->cur;
}

static int copy_rewind(struct rec_iter *it)
{
    struct copy_src *s = it->ud;
    s->at = 0;
    if (++s->pass == s->fail_rewind) {
        snprintf(it->err, sizeof it->err, "journal: cannot seek");
        return -1;
    }
    return 0;
}

static void copy_iter(struct rec_iter *it, struct copy_src *s, const struct req_record *recs, int n)
{
    *s = (struct copy_src){.recs = recs, .n = (size_t)n};
    *it = (struct rec_iter){.next = copy_next, .rewind = copy_rewind, .ud = s};
}

static void copy_done(struct copy_src *s)
{
    free(s->cur.chunks);
    s->cur.chunks = NULL;
}

static bool same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static void assert_same_dist(const struct dist *a, const struct dist *b, const char *what)
{
    cr_assert_eq(a->samples, b->samples, "%s", what);
    cr_assert(same(a->mean, b->mean) && same(a->min, b->min) && same(a->max, b->max), "%s", what);
    for (int i = 0; i < DIST_NPCT; i++)
        cr_assert(same(dist_pct_of(a, i), dist_pct_of(b, i)), "%s %s", what, dist_pct_names[i]);
    cr_assert(same(a->rel_error, b->rel_error), "%s", what);
}

static void assert_same_summary(const struct run_summary *a, const struct run_summary *b)
{
    cr_assert_eq(a->requests, b->requests);
    cr_assert(a->sent == b->sent && a->completed == b->completed && a->failed == b->failed);
    cr_assert(a->cut == b->cut && a->warmup_requests == b->warmup_requests);
    cr_assert(same(a->peak_output_tps_1s, b->peak_output_tps_1s));
    cr_assert(same(a->aggregate_tps, b->aggregate_tps) && same(a->window_tokens, b->window_tokens));
    cr_assert(!memcmp(&a->window, &b->window, sizeof a->window));
    cr_assert(same(a->duration_ms, b->duration_ms));
    cr_assert(a->output_tokens == b->output_tokens && a->prompt_tokens == b->prompt_tokens);
    cr_assert_eq(a->prompt_token_reports, b->prompt_token_reports);
    cr_assert(same(a->output_throughput, b->output_throughput));
    cr_assert(same(a->total_token_throughput, b->total_token_throughput));
    cr_assert(same(a->request_throughput, b->request_throughput));
    cr_assert(a->good == b->good && same(a->goodput_rps, b->goodput_rps));
    cr_assert(a->content_chunks == b->content_chunks && a->reasoning_chunks == b->reasoning_chunks);
    cr_assert(a->tool_call_chunks == b->tool_call_chunks && a->tool_calls == b->tool_calls);
    cr_assert_eq(a->events, b->events);
    cr_assert(!memcmp(a->by_source, b->by_source, sizeof a->by_source));
    cr_assert(a->cached_tokens == b->cached_tokens && a->cached_reports == b->cached_reports);
    cr_assert_eq(a->usage_over_max, b->usage_over_max);
    cr_assert(!memcmp(a->failed_by, b->failed_by, sizeof a->failed_by));
    cr_assert_eq(a->prompt_mismatch, b->prompt_mismatch);
    cr_assert_eq(a->method, b->method);
    for (int id = 0; id < D_COUNT; id++)
        assert_same_dist(&a->d[id], &b->d[id], "d[]");
    cr_assert_eq(a->inv.checked, b->inv.checked);
    cr_assert(!memcmp(a->inv.violations, b->inv.violations, sizeof a->inv.violations));
    cr_assert_eq(a->inv.n_examples, b->inv.n_examples);
    for (int i = 0; i < a->inv.n_examples; i++)
        cr_assert(a->inv.examples[i].request_index == b->inv.examples[i].request_index &&
                  a->inv.examples[i].what == b->inv.examples[i].what &&
                  !strcmp(a->inv.examples[i].detail, b->inv.examples[i].detail));
    assert_same_dist(&a->loop_lag, &b->loop_lag, "loop_lag");
    cr_assert(a->loop_lagged == b->loop_lagged && a->sends_late == b->sends_late);
    cr_assert(a->clock_stamps_lagged == b->clock_stamps_lagged && a->client_bound == b->client_bound);
    cr_assert_eq(a->first_output_merged, b->first_output_merged);
    const struct steady_state *x = &a->steady, *y = &b->steady;
    cr_assert(x->reached == b->steady.reached && x->reason == y->reason && x->basis == y->basis);
    cr_assert(same(x->target, y->target) && same(x->band, y->band) && same(x->not_before_s, y->not_before_s));
    cr_assert(same(x->run_s, y->run_s) && same(x->start_s, y->start_s) && same(x->end_s, y->end_s));
    cr_assert(same(x->length_s, y->length_s) && same(x->share, y->share) && same(x->level, y->level));
    cr_assert_eq(x->requests, y->requests);
    assert_same_dist(&x->ttft, &y->ttft, "steady ttft");
    assert_same_dist(&x->tpot, &y->tpot, "steady tpot");
    assert_same_dist(&x->itl, &y->itl, "steady itl");
    assert_same_dist(&x->e2e, &y->e2e, "steady e2e");
    cr_assert(same(x->output_throughput, y->output_throughput));
    cr_assert(same(x->request_throughput, y->request_throughput));
}

static struct summary_opts opts_of(int streams, const double *lag, size_t n_lag)
{
    struct summary_opts o = {.method = PCT_NEAREST, .ignore_eos = true, .check_prompt_tokens = true,
                             .slo = {NAN, NAN, NAN}, .loop_lag_ms = lag, .n_loop_lag = n_lag,
                             .window_start = T0_NS + MS(3000), .window_end = T0_NS + MS(9000),
                             .steady = steady_opts_of(streams, INFINITY)};
    cr_assert_eq(slo_parse("ttft:120,e2el:1100", &o.slo), 0);
    return o;
}

/* (c) Field for field: the array (the wrapper) and a source of copies. */
Test(summary, iterator_gives_the_arrays_summary)
{
    int n;
    struct req_record *recs = loop_run(12, 24, 40, true, &n);
    double lag[150];
    for (int i = 0; i < 150; i++)
        lag[i] = 0.01 * (i % 17);
    for (int m = PCT_NEAREST; m <= PCT_LINEAR; m++) {
        struct summary_opts o = opts_of(12, lag, 150);
        o.method = (enum pct_method)m;
        struct run_summary a, b;
        cr_assert_eq(summary_compute(recs, n, &o, &a), 0);
        struct copy_src src;
        struct rec_iter it;
        copy_iter(&it, &src, recs, n);
        cr_assert_eq(summary_compute_iter(&it, &o, &b), 0, "%s", it.err);
        cr_assert_leq(src.pass, 5, "at most five passes, made %d", src.pass);
        copy_done(&src);
        cr_assert(a.steady.reached, "%s", a.steady.reason);
        cr_assert_gt(a.failed, 0);
        cr_assert_eq(a.cut, 1);
        cr_assert_eq(a.warmup_requests, 1);
        cr_assert_gt(a.window.chunks, 0);
        cr_assert_eq(a.d[D_ITL_CHUNK].rel_error, 0, "a small run is exact");
        assert_same_summary(&a, &b);
    }
    free_run(recs, n);
}

/* An error of the source at any pass, or a rewind that fails, makes every
 * function over the iterator fail, saying why; so do records that change
 * between passes. */
Test(summary, iterator_errors_fail_the_summary)
{
    int n;
    struct req_record *recs = loop_run(12, 24, 10, true, &n);
    struct summary_opts o = opts_of(12, NULL, 0);
    struct run_summary s;
    struct copy_src src;
    struct rec_iter it;
    for (int pass = 1; pass <= 5; pass++) {
        copy_iter(&it, &src, recs, n);
        src.fail_pass = pass;
        src.fail_at = (size_t)n / 2;
        cr_assert_eq(summary_compute_iter(&it, &o, &s), -1, "a read failing in pass %d", pass);
        cr_assert_str_eq(it.err, "journal line 145: not JSON");
        copy_done(&src);
        copy_iter(&it, &src, recs, n);
        src.fail_rewind = pass;
        cr_assert_eq(summary_compute_iter(&it, &o, &s), -1, "rewind %d failing", pass);
        cr_assert_str_eq(it.err, "journal: cannot seek");
        copy_done(&src);
    }
    copy_iter(&it, &src, recs, n);
    src.grow_pass = 2;
    cr_assert_eq(summary_compute_iter(&it, &o, &s), -1);
    cr_assert_str_eq(it.err, "the records changed between two passes");
    copy_done(&src);

    struct steady_state st;
    struct token_window tw;
    struct invariants inv;
    double nb;
    copy_iter(&it, &src, recs, n);
    src.fail_pass = 1;
    cr_assert_eq(steady_detect_iter(&it, &o.steady, PCT_NEAREST, &st), -1);
    src.fail_pass = src.pass + 1;
    cr_assert_eq(tokens_in_window_iter(&it, o.window_start, o.window_end, &tw), -1);
    src.fail_pass = src.pass + 1;
    cr_assert_eq(invariants_check_iter(&it, true, &inv), -1);
    src.fail_pass = src.pass + 1;
    cr_assert_eq(steady_not_before_s_iter(&it, T0_NS + MS(2000), &nb), -1);
    src.fail_pass = 0;
    cr_assert_eq(steady_not_before_s_iter(&it, T0_NS + MS(20000), &nb), 0);
    cr_assert_float_eq(nb, steady_not_before_s(recs, n, T0_NS + MS(20000)), 0);
    cr_assert_eq(tokens_in_window_iter(&it, o.window_start, o.window_end, &tw), 0);
    struct token_window want;
    tokens_in_window(recs, n, o.window_start, o.window_end, &want);
    cr_assert(!memcmp(&tw, &want, sizeof tw));
    copy_done(&src);
    free_run(recs, n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct event {
    int64_t t;
    double tokens;
};

static int cmp_event(const void *a, const void *b)
{
    int64_t x = ((const struct event *)a)->t, y = ((const struct event *)b)->t;
    return (x > y) - (x < y);
}

/* Within the proof's 2^-11 of the sort's value (stats/hist.h). */
static void assert_within(double got, double want, const char *what)
{
    cr_assert(fabs(got - want) <= ldexp(fabs(want), -11) * (1 + 1e-12), "%s: %.17g against %.17g", what,
              got, want);
}

static void assert_dist_of(const struct dist *d, double *vals, size_t n, enum pct_method m, const char *what)
{
    qsort(vals, n, sizeof *vals, cmp_double);
    cr_assert_eq(d->samples, n, "%s", what);
    cr_assert_eq(d->rel_error, HIST_REL_ERROR, "%s: past the bound", what);
    cr_assert_eq(d->min, vals[0], "%s", what);
    cr_assert_eq(d->max, vals[n - 1], "%s", what);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += vals[i];
    cr_assert_float_eq(d->mean, sum / (double)n, 1e-9 * sum / (double)n, "%s", what);
    for (int i = 0; i < DIST_NPCT; i++)
        assert_within(dist_pct_of(d, i), pct_sorted(vals, n, dist_pcts[i], m), what);
}

/* 30 streams × 24 requests × 500 chunks: 359,280 gaps, past VCOL_EXACT_MAX. (d)
 * ITL per chunk and per token, whole run and steady window, within the
 * bound of a sort of every gap recomputed from the chunk times; (e) the
 * peak within one 1 ms bin's tokens of the exact sliding window. */
Test(summary, past_the_exact_bound_itl_and_peak_within_their_bounds, .timeout = 240)
{
    int n;
    struct req_record *recs = loop_run(30, 24, 500, false, &n);
    size_t gaps = 0, events = 0;
    for (int i = 0; i < n; i++) {
        gaps += recs[i].n_chunks - 1;
        events += recs[i].n_chunks;
    }
    cr_assert_gt(gaps, VCOL_EXACT_MAX);
    double *chunk = malloc(gaps * sizeof *chunk), *token = malloc(gaps * sizeof *token);
    for (int m = PCT_NEAREST; m <= PCT_LINEAR; m++) {
        struct summary_opts o = opts_of(30, NULL, 0);
        o.method = (enum pct_method)m;
        struct run_summary s;
        cr_assert_eq(summary_compute(recs, n, &o, &s), 0);
        size_t k = 0, ks = 0;
        int64_t a = recs[0].t_start, b;
        for (int i = 0; i < n; i++)
            a = recs[i].t_start < a ? recs[i].t_start : a;
        cr_assert(s.steady.reached, "%s", s.steady.reason);
        b = a + MS(s.steady.end_s * 1000);
        a += MS(s.steady.start_s * 1000);
        double *steady = malloc(gaps * sizeof *steady);
        for (int i = 0; i < n; i++) {
            const struct req_record *r = &recs[i];
            bool inside = r->t_start >= a && r->t_end <= b;
            for (size_t c = 1; c < r->n_chunks; c++, k++) {
                chunk[k] = (double)(r->chunks[c].t_ns - r->chunks[c - 1].t_ns) / 1e6;
                token[k] = chunk[k] / r->chunks[c].tokens;
                if (inside)
                    steady[ks++] = chunk[k];
            }
        }
        assert_dist_of(&s.d[D_ITL_CHUNK], chunk, k, o.method, "itl per chunk");
        assert_dist_of(&s.d[D_ITL_TOKEN], token, k, o.method, "itl per token");
        cr_assert_gt(ks, VCOL_EXACT_MAX, "the steady window holds %zu gaps", ks);
        assert_dist_of(&s.steady.itl, steady, ks, o.method, "steady itl");
        cr_assert_eq(s.d[D_TTFT].rel_error, 0, "per-request columns stay exact");
        free(steady);

        /* (e) the exact peak: every event sorted, the window (t − 1 s, t]; and the most tokens in a 1 ms bin */
        struct event *ev = malloc(events * sizeof *ev);
        size_t e = 0;
        int64_t first = INT64_MAX;
        for (int i = 0; i < n; i++)
            for (size_t c = 0; c < recs[i].n_chunks; c++, e++) {
                ev[e].t = recs[i].chunks[c].t_ns;
                ev[e].tokens = recs[i].chunks[c].tokens;
                first = ev[e].t < first ? ev[e].t : first;
            }
        qsort(ev, e, sizeof *ev, cmp_event);
        double in = 0, exact = 0, bin = 0, most_bin = 0;
        for (size_t lo = 0, hi = 0; hi < e; hi++) {
            in += ev[hi].tokens;
            while (ev[lo].t <= ev[hi].t - MS(1000))
                in -= ev[lo++].tokens;
            exact = in > exact ? in : exact;
            bool same_bin = hi > 0 && (ev[hi].t - first) / MS(1) == (ev[hi - 1].t - first) / MS(1);
            bin = same_bin ? bin + ev[hi].tokens : ev[hi].tokens;
            most_bin = bin > most_bin ? bin : most_bin;
        }
        free(ev);
        double got = s.peak_output_tps_1s;
        cr_assert(got <= exact + 1e-6 && exact <= got + most_bin + 1e-6,
                  "peak %.3f against the exact %.3f (one bin holds at most %.0f tokens)", got, exact, most_bin);
        cr_assert_lt(most_bin, 0.01 * exact, "the bound says something");
    }
    free(chunk);
    free(token);
    free_run(recs, n);
}

/* The peak's two ways agree on one run: the bins within one bin's tokens
 * of the events, never above. */
Test(summary, peak_bins_never_exceed_the_events)
{
    int n;
    struct req_record *recs = loop_run(8, 12, 60, false, &n);
    struct peak_census pc = {0};
    for (int i = 0; i < n; i++)
        peak_census_add(&pc, &recs[i]);
    cr_assert_leq(pc.events, VCOL_EXACT_MAX);
    struct peak exact, binned;
    cr_assert_eq(peak_init(&exact, &pc), 0);
    cr_assert_null(exact.bins);
    struct peak_census many = pc;
    many.events = VCOL_EXACT_MAX + 1;           /* the same records, counted into bins */
    cr_assert_eq(peak_init(&binned, &many), 0);
    cr_assert_not_null(binned.bins);
    cr_assert_eq(binned.bin_ns, MS(1));
    for (int i = 0; i < n; i++) {
        cr_assert_eq(peak_add(&exact, &recs[i]), 0);
        cr_assert_eq(peak_add(&binned, &recs[i]), 0);
    }
    double e = peak_tps(&exact), b = peak_tps(&binned), most = 0;
    for (size_t i = 0; i < binned.n_bins; i++)
        most = binned.bins[i] > most ? binned.bins[i] : most;
    cr_assert(b <= e + 1e-9 && e <= b + most + 1e-9, "binned %.3f, exact %.3f, bin %.0f", b, e, most);
    peak_free(&exact);
    peak_free(&binned);
    free_run(recs, n);
}

/* The invariants' examples are those of the lowest request_index whatever
 * order the records come in (a journal gives them as they ended), so an
 * artifact written from the journal names the same ones as one written
 * from the array. */
Test(summary, invariant_examples_do_not_depend_on_the_records_order)
{
    int n;
    struct req_record *recs = loop_run(12, 24, 40, true, &n);
    struct req_record *rev = malloc((size_t)n * sizeof *rev);
    cr_assert_not_null(rev);
    for (int i = 0; i < n; i++)
        rev[i] = recs[n - 1 - i];       /* shallow copies, not freed */
    struct invariants a, b;
    invariants_check(recs, n, true, &a);
    invariants_check(rev, n, true, &b);
    cr_assert_eq(a.n_examples, INV_EXAMPLES, "enough violations to choose among");
    cr_assert_gt(invariants_total(&a), INV_EXAMPLES);
    cr_assert_eq(b.n_examples, a.n_examples);
    for (int i = 0; i < a.n_examples; i++) {
        cr_assert(i == 0 || a.examples[i - 1].request_index <= a.examples[i].request_index);
        cr_assert(a.examples[i].request_index == b.examples[i].request_index &&
                  a.examples[i].what == b.examples[i].what && !strcmp(a.examples[i].detail, b.examples[i].detail),
                  "example %d: request %d against %d", i, a.examples[i].request_index, b.examples[i].request_index);
    }
    free(rev);
    free_run(recs, n);
}
