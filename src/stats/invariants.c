/* invariants.c — per-request consistency checks. */
#include "stats/invariants.h"

#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "stats/metrics.h"
#include "stats/pass.h"

const char *invariant_name(enum invariant i)
{
    static const char *const names[] = {
        [INV_ORDER] = "order", [INV_CHUNKS_IN_E2E] = "chunks_in_e2e", [INV_IGNORE_EOS] = "ignore_eos",
        [INV_USAGE] = "usage_reported", [INV_LATE_END] = "late_end", [INV_ONE_READ] = "one_read",
        [INV_USAGE_CHUNKS] = "usage_below_chunks", [INV_UNKNOWN_LINES] = "unknown_lines",
    };
    return names[i];
}

/* Counts the violation; the examples are those of the lowest request_index,
 * in that order, whatever order the records come in (an array's by index, a
 * journal's by end), so both give the same. */
static void violate(struct invariants *inv, const struct req_record *r, enum invariant what,
                    const char *fmt, double a, double b)
{
    inv->violations[what]++;
    int at = inv->n_examples;       /* after every example of an index at or below r's */
    while (at > 0 && inv->examples[at - 1].request_index > r->index)
        at--;
    if (at == INV_EXAMPLES)
        return;
    int keep = inv->n_examples < INV_EXAMPLES ? inv->n_examples : INV_EXAMPLES - 1;
    memmove(&inv->examples[at + 1], &inv->examples[at], (size_t)(keep - at) * sizeof inv->examples[0]);
    inv->examples[at].request_index = r->index;
    inv->examples[at].what = what;
    snprintf(inv->examples[at].detail, sizeof inv->examples[0].detail, fmt, a, b);
    if (inv->n_examples < INV_EXAMPLES)
        inv->n_examples++;
}

static void check_one(const struct req_record *r, bool ignore_eos, struct invariants *inv)
{
    struct req_metrics m;
    metrics_derive(r, &m);
    double hdr = m.headers_ms, out = m.time_to_first_output_ms, con = m.ttft_ms, e2e = m.e2e_ms;
    if (!(hdr <= out) || (con == con && !(out <= con && con <= e2e)) || !(out <= e2e))
        violate(inv, r, INV_ORDER, "headers %.3f ms, first output %.3f ms", hdr, out);
    if (r->n_chunks) {
        double first = ns_to_ms(r->chunks[0].t_ns - r->t_start);
        double last = ns_to_ms(r->chunks[r->n_chunks - 1].t_ns - r->t_start);
        if (first != out || last > e2e)
            violate(inv, r, INV_CHUNKS_IN_E2E, "last output chunk at %.3f ms, end at %.3f ms", last, e2e);
        double tail = e2e - last, gen = m.generation_ms;
        if (tail > 5 && tail > 0.1 * gen)
            violate(inv, r, INV_LATE_END, "end %.3f ms after the last output (generation %.3f ms)", tail, gen);
        /* a client late while its outputs queued reads them at once too, and says so (first_output_merged) */
        if (r->n_chunks >= 4 && last - first <= 0.1 && !r->first_output_merged)
            violate(inv, r, INV_ONE_READ, "%.0f output chunks arrived within %.3f ms", (double)r->n_chunks,
                    last - first);
    }
    if (r->completion_tokens >= 0 && (double)r->n_chunks > (double)r->completion_tokens + 1)
        violate(inv, r, INV_USAGE_CHUNKS, "usage says %.0f tokens beside %.0f output chunks",
                (double)r->completion_tokens, (double)r->n_chunks);
    if (r->unknown_lines > 0)
        violate(inv, r, INV_UNKNOWN_LINES, "%.0f lines of no SSE field (%.0f events parsed)",
                (double)r->unknown_lines, (double)r->events);
    if (ignore_eos && m.output_tokens != r->max_tokens)
        violate(inv, r, INV_IGNORE_EOS, "%.0f output tokens for max_tokens %.0f", (double)m.output_tokens,
                (double)r->max_tokens);
    if (r->prompt_tokens < 0 || r->completion_tokens < 0)
        violate(inv, r, INV_USAGE, "prompt_tokens %.0f, completion_tokens %.0f", (double)r->prompt_tokens,
                (double)r->completion_tokens);
}

void invariants_add(const struct req_record *r, bool ignore_eos, struct invariants *out)
{
    if (!r->t_start || r->warmup || r->cut || r->fail != FAIL_NONE)
        return;
    out->checked++;
    check_one(r, ignore_eos, out);
}

/* One pass. */
int invariants_check_iter(struct rec_iter *it, bool ignore_eos, struct invariants *out)
{
    memset(out, 0, sizeof *out);
    if (pass_begin(it) != 0)
        return -1;
    for (const struct req_record *r; (r = it->next(it));)
        invariants_add(r, ignore_eos, out);
    return pass_end(it);
}

void invariants_check(const struct req_record *recs, int n, bool ignore_eos, struct invariants *out)
{
    struct rec_iter it;
    rec_iter_array(&it, recs, n);
    invariants_check_iter(&it, ignore_eos, out);      /* an array has no error */
}

int invariants_total(const struct invariants *inv)
{
    int n = 0;
    for (int i = 0; i < INV_COUNT; i++)
        n += inv->violations[i];
    return n;
}
