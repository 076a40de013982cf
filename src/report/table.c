/* table.c — terminal summary. */
#include "report/table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/steady.h"

static void rule(FILE *out, char c)
{
    for (int i = 0; i < 60; i++)
        fputc(c, out);
    fputc('\n', out);
}

static void header(FILE *out, const char *name)
{
    int pad = (int)(60 - 2 - (int)strlen(name)) / 2;
    fprintf(out, "%.*s %s %.*s\n", pad, "------------------------------", name,
            60 - 2 - pad - (int)strlen(name), "------------------------------");
}

static void row_num(FILE *out, const char *k, double v, int prec)
{
    if (isnan(v))
        fprintf(out, "%-44s %15s\n", k, "n/a");
    else
        fprintf(out, "%-44s %15.*f\n", k, prec, v);
}

static void latency(FILE *out, const char *title, const char *abbr, const struct dist *d)
{
    char k[64];
    header(out, title);
    snprintf(k, sizeof k, "Mean %s (ms):", abbr);
    row_num(out, k, d->mean, 2);
    snprintf(k, sizeof k, "Median %s (ms):", abbr);
    row_num(out, k, d->p50, 2);
    snprintf(k, sizeof k, "P99 %s (ms):", abbr);
    row_num(out, k, d->p99, 2);
}

/* Whether the run reached a steady state, and its figures beside the whole
 * run's where they differ beyond noise (report/steady.h). */
static void steady_section(FILE *out, const struct run_summary *s)
{
    struct steady_view v;
    char line[320];
    steady_view_of_summary(s, &v);
    header(out, "Steady state");
    fprintf(out, "%s\n", steady_line(&v, line, sizeof line));
    int shown = 0;
    for (int i = 0; i < STEADY_FIGURES; i++) {
        if (!steady_figure_differs(&v, i))
            continue;
        if (!shown++)
            fprintf(out, "%-34s %12s %12s\n", "", "whole run", "steady");
        snprintf(line, sizeof line, "%s:", v.fig[i].label);
        fprintf(out, "%-34s %12.2f %12.2f\n", line, v.fig[i].whole, v.fig[i].steady);
    }
    if (v.reached && !shown)
        fprintf(out, "Steady-state figures within 5 %% of the whole run's\n");
}

/* The first recorded example of invariant i, or a blank one. */
static const struct inv_example *first_example(const struct invariants *inv, enum invariant i)
{
    static const struct inv_example none = {-1, INV_ORDER, "not among the first examples"};
    for (int k = 0; k < inv->n_examples; k++)
        if (inv->examples[k].what == i)
            return &inv->examples[k];
    return &none;
}

void report_table(FILE *out, const char *title, const struct run_summary *s, int failed_warmups)
{
    int pad = (60 - 2 - (int)strlen(title)) / 2;
    fprintf(out, "%.*s %s %.*s\n", pad, "==============================", title,
            60 - 2 - pad - (int)strlen(title), "==============================");
    fprintf(out, "%-44s %15d\n", "Successful requests:", s->completed);
    fprintf(out, "%-44s %15d\n", "Failed requests:", s->failed);
    for (int k = 1; k <= FAIL_OTHER; k++)
        if (s->failed_by[k]) {
            char label[64];
            snprintf(label, sizeof label, "  of which %s:", fail_kind_name((enum fail_kind)k));
            fprintf(out, "%-44s %15d\n", label, s->failed_by[k]);
        }
    if (s->sent < s->requests)
        fprintf(out, "%-44s %15d\n", "Requests not sent (run cut short):", s->requests - s->sent);
    row_num(out, "Benchmark duration (s):", s->duration_ms / 1000.0, 2);
    fprintf(out, "%-44s %15ld\n", "Total input tokens:", s->prompt_tokens);
    fprintf(out, "%-44s %15ld\n", "Total generated tokens:", s->output_tokens);
    row_num(out, "Request throughput (req/s):", s->request_throughput, 2);
    row_num(out, "Output token throughput (tok/s):", s->output_throughput, 2);
    row_num(out, "Total token throughput (tok/s):", s->total_token_throughput, 2);
    row_num(out, "Peak output token throughput (tok/s, 1 s):", s->peak_output_tps_1s, 2);
    if (!isnan(s->aggregate_tps)) {
        row_num(out, "Output tok/s inside the window (aggregate):", s->aggregate_tps, 2);
        fprintf(out, "%-44s %15d\n", "Requests cut at the window's end:", s->cut);
    }
    if (!isnan(s->goodput_rps))
        row_num(out, "Request goodput (req/s):", s->goodput_rps, 2);
    latency(out, "Time to First Token", "TTFT", &s->d[D_TTFT]);
    latency(out, "Time per Output Token (excl. 1st token)", "TPOT", &s->d[D_TPOT]);
    latency(out, "Inter-token Latency (per chunk)", "ITL", &s->d[D_ITL_CHUNK]);
    latency(out, "End-to-end Latency", "E2EL", &s->d[D_E2E]);
    header(out, "TTFT decomposition (median ms)");
    row_num(out, "Response headers:", s->d[D_HEADERS].p50, 2);
    row_num(out, "First byte:", s->d[D_FIRST_BYTE].p50, 2);
    row_num(out, "First SSE event:", s->d[D_FIRST_EVENT].p50, 2);
    row_num(out, "First output (any):", s->d[D_TTFO].p50, 2);
    row_num(out, "First content = TTFT:", s->d[D_TTFT].p50, 2);
    steady_section(out, s);
    rule(out, '=');
    if (s->by_source[TOKENS_CHUNKS])
        fprintf(out, "warning: %d requests reported no usage and the server has no tokenize endpoint anvil "
                     "knows: their output tokens are chunk counts, a lower bound (a chunk can carry several "
                     "tokens, and a token none)\n", s->by_source[TOKENS_CHUNKS]);
    if (s->by_source[TOKENS_TOKENIZE])
        fprintf(out, "note: %d requests reported no usage; their output tokens were counted by the server's "
                     "tokenizer over the text received\n", s->by_source[TOKENS_TOKENIZE]);
    if (s->usage_over_max)
        fprintf(out, "warning: %d requests report more output tokens than max_tokens: usage is not "
                     "trustworthy, and neither are throughput and TPOT\n", s->usage_over_max);
    for (int i = 0; i < INV_COUNT; i++)
        if (s->inv.violations[i])
            fprintf(out, "warning: invariant %s failed for %d of %d requests (first: request %d, %s)\n",
                    invariant_name((enum invariant)i), s->inv.violations[i], s->inv.checked,
                    first_example(&s->inv, (enum invariant)i)->request_index,
                    first_example(&s->inv, (enum invariant)i)->detail);
    if (s->sends_late)
        fprintf(out, "warning: the client sent requests late against the schedule (send lateness p99 "
                     "%.2f ms): the offered load was lower than asked; give anvil a core of its own "
                     "(taskset) or lower the rate\n", s->d[D_SEND_LATENESS].p99);
    if (s->clock_stamps_lagged)
        fprintf(out, "warning: arrivals dated by the client's clock while its event loop lagged "
                     "(loop lag p99 %.2f ms): latencies may read up to that much high; give anvil a "
                     "core of its own (taskset) or fewer streams\n", s->loop_lag.p99);
    if (s->first_output_merged)
        fprintf(out, "warning: %d requests' first outputs were read merged with later output (one kernel "
                     "buffer or one read) or late without a kernel stamp: the client was late while they "
                     "queued, their TTFT is an upper bound (first_output_merged); give anvil a core of its "
                     "own (taskset) or fewer streams\n",
                s->first_output_merged);
    if (s->loop_lagged && !s->client_bound)
        fprintf(out, "note: event-loop lag p99 %.2f ms; arrivals were kernel-stamped, so latencies "
                     "are unaffected\n", s->loop_lag.p99);
    if (s->prompt_mismatch)
        fprintf(out, "warning: %d requests reported prompt_tokens other than the planned count\n",
                s->prompt_mismatch);
    if (failed_warmups)
        fprintf(out, "warning: %d warm-up requests failed\n", failed_warmups);
}

void report_cost(FILE *out, const struct cost *c, double output_tps)
{
    if (!c || !isfinite(c->gpu_hour_usd))
        return;
    header(out, "Cost");
    row_num(out, "GPU-hour price (USD):", c->gpu_hour_usd, 2);
    fprintf(out, "%-44s %15ld\n", "GPUs:", c->gpus);
    row_num(out, "Cost per million output tokens (USD):", cost_per_mtok(c, output_tps), 4);
    rule(out, '=');
}
