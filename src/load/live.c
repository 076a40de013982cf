/* live.c — the run's live counters and histograms, and their text. */
#include "load/live.h"

#include <string.h>

#include "stats/tokens.h"

const double live_bucket_le[LIVE_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120,
};

#define RELAXED memory_order_relaxed

void live_init(struct live_metrics *m)
{
    memset(m, 0, sizeof *m);
}

void live_observe(struct live_hist *h, int64_t ns)
{
    if (ns < 0)
        ns = 0;
    double s = (double)ns / 1e9;
    int b = 0;
    while (b < LIVE_BUCKETS && s > live_bucket_le[b])
        b++;
    atomic_fetch_add_explicit(&h->bucket[b], 1, RELAXED);
    atomic_fetch_add_explicit(&h->sum_ns, (uint64_t)ns, RELAXED);
    atomic_fetch_add_explicit(&h->count, 1, RELAXED);
}

void live_request_started(struct live_metrics *m)
{
    atomic_fetch_add_explicit(&m->started, 1, RELAXED);
}

void live_request_ended(struct live_metrics *m, const struct req_record *r)
{
    if (r->cut) {
        atomic_fetch_add_explicit(&m->cut, 1, RELAXED);
        return;
    }
    if (r->fail != FAIL_NONE) {
        atomic_fetch_add_explicit(&m->failed, 1, RELAXED);
        return;
    }
    atomic_fetch_add_explicit(&m->output_tokens, (uint64_t)tokens_of(r, NULL), RELAXED);
    if (r->t_first_content && r->t_start)
        live_observe(&m->ttft, r->t_first_content - r->t_start);
    /* the artifact's ITL is the completed requests' gaps: observed at the end */
    for (size_t i = 1; i < r->n_chunks; i++)
        live_observe(&m->itl, r->chunks[i].t_ns - r->chunks[i - 1].t_ns);
    /* last: a scrape that sees it completed sees its tokens and TTFT too */
    atomic_fetch_add_explicit(&m->completed, 1, memory_order_release);
}

static int counter(struct buf *o, const char *name, const char *help, uint64_t v)
{
    return buf_printf(o, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
                      (unsigned long long)v);
}

/* _count is written as the +Inf bucket's cumulative count of the same
 * pass, so the two agree as Prometheus requires while observations go on;
 * the sum, read after, may hold an observation the buckets missed. */
static int histogram(struct buf *o, const char *name, const char *help, const struct live_hist *h)
{
    int rc = buf_printf(o, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (int b = 0; b <= LIVE_BUCKETS && rc == 0; b++) {
        cum += atomic_load_explicit(&h->bucket[b], RELAXED);
        if (b < LIVE_BUCKETS)
            rc = buf_printf(o, "%s_bucket{le=\"%g\"} %llu\n", name, live_bucket_le[b], (unsigned long long)cum);
        else
            rc = buf_printf(o, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)cum);
    }
    double sum = (double)atomic_load_explicit(&h->sum_ns, RELAXED) / 1e9;
    return rc ? rc : buf_printf(o, "%s_sum %.9g\n%s_count %llu\n", name, sum, name, (unsigned long long)cum);
}

int live_render(const struct live_metrics *m, struct buf *o)
{
    /* ends before starts, so in flight (started − ended) is never negative */
    uint64_t completed = atomic_load_explicit(&m->completed, memory_order_acquire);
    uint64_t failed = atomic_load_explicit(&m->failed, RELAXED), cut = atomic_load_explicit(&m->cut, RELAXED);
    uint64_t tokens = atomic_load_explicit(&m->output_tokens, RELAXED);
    atomic_thread_fence(memory_order_acquire);
    uint64_t started = atomic_load_explicit(&m->started, RELAXED);
    uint64_t ended = completed + failed + cut;
    int rc = counter(o, "anvil_requests_started_total", "Measured requests handed to the transport.", started);
    rc = rc ? rc : counter(o, "anvil_requests_completed_total", "Measured requests that completed.", completed);
    rc = rc ? rc : counter(o, "anvil_requests_failed_total", "Measured requests that failed.", failed);
    rc = rc ? rc : counter(o, "anvil_requests_cut_total",
                           "Duration mode: measured requests still running when the window closed.", cut);
    rc = rc ? rc : counter(o, "anvil_output_tokens_total", "Output tokens of the completed measured requests.",
                           tokens);
    rc = rc ? rc : buf_printf(o, "# HELP anvil_requests_in_flight Measured requests sent and not ended.\n"
                              "# TYPE anvil_requests_in_flight gauge\nanvil_requests_in_flight %llu\n",
                              (unsigned long long)(started > ended ? started - ended : 0));
    rc = rc ? rc : histogram(o, "anvil_ttft_seconds", "Time to first token of completed measured requests.",
                             &m->ttft);
    rc = rc ? rc : histogram(o, "anvil_itl_seconds", "Gaps between successive output chunks.", &m->itl);
    rc = rc ? rc : histogram(o, "anvil_loop_lag_seconds",
                             "Lateness of the measuring loops' 10 ms probe timer.", &m->loop_lag);
    rc = rc ? rc : histogram(o, "anvil_send_lateness_seconds",
                             "Open loop: how late measured requests were sent after their scheduled time.",
                             &m->send_lateness);
    return rc;
}
