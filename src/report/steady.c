/* steady.c — the steady state in words and figures (docs/METHODOLOGY.md, "Steady state"). */
#include "report/steady.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats/steady.h"

static const char *const labels[STEADY_FIGURES] = {
    "Median TTFT (ms)", "P99 TTFT (ms)", "Median TPOT (ms)", "P99 TPOT (ms)", "Median ITL (ms)",
    "P99 ITL (ms)", "Median E2EL (ms)", "P99 E2EL (ms)", "Output token throughput (tok/s)",
    "Request throughput (req/s)",
};

static void set(struct steady_view *v, const double whole[STEADY_FIGURES], const double steady[STEADY_FIGURES])
{
    for (int i = 0; i < STEADY_FIGURES; i++)
        v->fig[i] = (struct steady_figure){labels[i], whole[i], steady[i]};
}

void steady_view_of_summary(const struct run_summary *s, struct steady_view *v)
{
    const struct steady_state *st = &s->steady;
    *v = (struct steady_view){true, st->reached, st->reason, steady_basis_name(st->basis), st->target,
                              st->start_s, st->end_s, st->length_s, st->share, {{0}}};
    const double whole[] = {
        s->d[D_TTFT].p50, s->d[D_TTFT].p99, s->d[D_TPOT].p50, s->d[D_TPOT].p99, s->d[D_ITL_CHUNK].p50,
        s->d[D_ITL_CHUNK].p99, s->d[D_E2E].p50, s->d[D_E2E].p99, s->output_throughput, s->request_throughput,
    };
    const double steady[] = {
        st->ttft.p50, st->ttft.p99, st->tpot.p50, st->tpot.p99, st->itl.p50, st->itl.p99, st->e2e.p50,
        st->e2e.p99, st->output_throughput, st->request_throughput,
    };
    set(v, whole, steady);
}

void steady_view_of_bench(const struct benchmark *b, struct steady_view *v)
{
    const struct bench_steady *st = &b->steady_state;
    const struct bench_dists *d = &b->metrics.dist;
    *v = (struct steady_view){st->present, st->reached, st->reason, st->basis, st->target, st->start_s,
                              st->end_s, st->length_s, st->share, {{0}}};
    const double whole[] = {
        d->ttft.p50, d->ttft.p99, d->tpot.p50, d->tpot.p99, d->itl.p50, d->itl.p99, d->e2e.p50, d->e2e.p99,
        b->metrics.output_throughput, b->metrics.request_throughput,
    };
    const double steady[] = {
        st->ttft_p50_ms, st->ttft_p99_ms, st->tpot_p50_ms, st->tpot_p99_ms, st->itl_p50_ms, st->itl_p99_ms,
        st->e2e_p50_ms, st->e2e_p99_ms, st->output_throughput, st->request_throughput,
    };
    set(v, whole, steady);
}

const char *steady_line(const struct steady_view *v, char *out, size_t cap)
{
    if (!v->present)
        snprintf(out, cap, "not judged (the artifact predates steady_state)");
    else if (!v->reached)
        snprintf(out, cap, "not reached: %s", steady_reason_text(v->reason));
    else
        snprintf(out, cap, "reached: %.1f s from %.1f s to %.1f s after the first send (%.0f %% of the run), "
                 "%s within %.0f %% of %g%s", v->length_s, v->start_s, v->end_s, 100 * v->share,
                 v->basis && !strcmp(v->basis, "completion_rate") ? "completion rate" : "in flight",
                 100 * STEADY_BAND, v->target,
                 v->basis && !strcmp(v->basis, "completion_rate") ? " req/s" : "");
    return out;
}

bool steady_figure_differs(const struct steady_view *v, int i)
{
    return v->reached && steady_differs(v->fig[i].whole, v->fig[i].steady);
}
