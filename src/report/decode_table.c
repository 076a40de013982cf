/* decode_table.c — a decode matrix → summary tables. */
#include "report/decode_table.h"

#include <math.h>
#include <stdio.h>

static bool cost_on(const struct cost *c)
{
    return c && isfinite(c->gpu_hour_usd);
}

/* A field's row: its name as a label, then its value. */
static void kv_text(struct rtable *t, const char *k, const char *v)
{
    rtable_label(t, k);
    rtable_text(t, v);
}

static void facts(struct rdoc *doc, const char *path, const struct decode_metadata *m)
{
    char title[512];
    snprintf(title, sizeof title, "%s (decode matrix, %s mode)", path, m->decode_mode);
    struct rtable *t = rdoc_table(doc, title, 2, "field", "value");
    kv_text(t, "Engine", m->engine);
    kv_text(t, "Model", m->model);
    kv_text(t, "Server", m->server);
    /* metadata.timestamp is when the file was written, after the last cell (seed 004: the
     * event log starts at 01:04:47, the timestamp says 01:14:26); the file has no start date */
    kv_text(t, "Written", m->timestamp);
    rtable_label(t, "Window per cell (s)");
    rtable_num(t, m->duration_per_test, 1);
    rtable_label(t, "Output tokens per request (max_tokens)");
    rtable_whole(t, m->max_tokens, true);
}

static void cell_row(struct rtable *t, const struct decode_cell *e, const struct cost *cost)
{
    rtable_whole(t, e->context_tokens, false);
    rtable_whole(t, e->concurrency, false);
    rtable_num(t, e->aggregate_tps, 2);
    rtable_num(t, e->per_request_avg_tps, 2);
    rtable_num(t, e->ttft.p50 * 1000, 1);
    rtable_num(t, e->ttft.p99 * 1000, 1);
    rtable_num(t, e->inter_token_latency.p50 * 1000, 2);
    rtable_num(t, e->inter_token_latency.p99 * 1000, 2);
    rtable_whole(t, e->completed_request_count, true);
    rtable_whole(t, e->num_errors, true);
    char limits[64];
    snprintf(limits, sizeof limits, "%s%s%s%s%s", e->capacity_limited ? "capacity-limited" : "",
             e->capacity_limited && e->underfilled ? ", " : "", e->underfilled ? "underfilled" : "",
             (e->capacity_limited || e->underfilled) && e->warmup_timed_out ? ", " : "",
             e->warmup_timed_out ? "warm-up timed out" : "");
    rtable_text(t, limits[0] ? limits : "-");
    if (cost_on(cost))
        rtable_num(t, cost_per_mtok(cost, e->aggregate_tps), 4);
}

void decode_table(struct rdoc *doc, const char *path, const struct decode_matrix *m, const struct cost *cost)
{
    facts(doc, path, &m->metadata);
    bool c = cost_on(cost);
    struct rtable *t = rdoc_table(doc, "Sustained decode per cell", c ? 12 : 11, "context", "concurrency",
                                  "aggregate tok/s", "per-request tok/s", "TTFT p50 ms", "TTFT p99 ms",
                                  "ITL p50 ms", "ITL p99 ms", "completed", "errors", "limits", "USD/Mtok");
    for (size_t i = 0; i < m->n_results; i++)
        cell_row(t, &m->results[i], cost);
    if (m->prefill.n) {
        t = rdoc_table(doc, "Prefill", 5, "context", "prompt tokens", "TTFT ms", "tok/s", "method");
        for (size_t i = 0; i < m->prefill.n; i++) {
            const struct decode_prefill *p = &m->prefill.v[i];
            rtable_whole(t, p->context_tokens, false);
            rtable_whole(t, p->prompt_tokens, true);
            rtable_num(t, p->ttft_seconds * 1000, 1);
            rtable_num(t, p->tok_per_sec, 0);
            rtable_text(t, p->method);
        }
    }
    rdoc_note(doc, "capacity-limited: the server's KV pool cannot hold the asked concurrency at that "
              "context; underfilled: the server ran fewer requests than asked; warm-up timed out: the "
              "readiness gate never opened and the cell was measured anyway (timeout_reason says why)");
}
