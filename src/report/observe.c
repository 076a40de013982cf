/* observe.c — the server and hardware section of the terminal summary. */
#include "report/observe.h"

#include <math.h>
#include <string.h>

static void header(FILE *out, const char *name)
{
    int pad = (int)(60 - 2 - (int)strlen(name)) / 2;
    fprintf(out, "%.*s %s %.*s\n", pad, "------------------------------", name,
            60 - 2 - pad - (int)strlen(name), "------------------------------");
}

/* "a / b" with each part n/a when undefined, right-aligned like the table's rows. */
static void row2(FILE *out, const char *k, double a, double b, int prec)
{
    char va[32] = "n/a", vb[32] = "n/a", both[72];
    if (!isnan(a))
        snprintf(va, sizeof va, "%.*f", prec, a);
    if (!isnan(b))
        snprintf(vb, sizeof vb, "%.*f", prec, b);
    snprintf(both, sizeof both, "%s / %s", va, vb);
    fprintf(out, "%-44s %15s\n", k, both);
}

static void row(FILE *out, const char *k, double v, int prec)
{
    if (isnan(v))
        fprintf(out, "%-44s %15s\n", k, "n/a");
    else
        fprintf(out, "%-44s %15.*f\n", k, prec, v);
}

static void server(FILE *out, const struct observe_report *r)
{
    const struct srv_summary *s = &r->server;
    char title[80];
    snprintf(title, sizeof title, "Server metrics (%s)", srv_engine_name(s->engine));
    header(out, title);
    if (s->scrapes_failed > 0) {
        char both[64];
        snprintf(both, sizeof both, "%d / %d", s->scrapes_ok, s->scrapes_failed);
        fprintf(out, "%-44s %15s\n", "Scrapes (ok / failed):", both);
    }
    if (!s->available) {
        fprintf(out, "unavailable: %s\n", s->reason);
        return;
    }
    row2(out, "Output tokens (server / client):", s->server_output_tokens, s->client_output_tokens, 0);
    if (isnan(s->server_output_tokens) && s->rule == OBS_INTERPOLATE && srv_gen_counted_at_end(s->engine))
        fprintf(out, "note: %s counts a reply's output tokens when it completes, so its counter gives no "
                     "count of a window that cut streams\n", srv_engine_name(s->engine));
    if (!isnan(s->spec_accept_length))
        row2(out, "Spec. decoding acceptance (rate / length):", s->spec_accept_rate, s->spec_accept_length, 3);
    row(out, "Engine steps per second:", s->steps_per_s, 2);
    /* the engine's own iterations, under its own name: batch steps, not seed 004's engine steps */
    const char *iter = srv_iterations_name(s->engine);
    if (iter && !isnan(s->batch_steps_per_s)) {
        char k[80];
        snprintf(k, sizeof k, "Engine iterations per second (%s):", iter);
        row(out, k, s->batch_steps_per_s, 2);
    }
    if (!isnan(s->prefix_cache_hit_rate))
        row(out, "Prefix-cache hit rate (%):", 100 * s->prefix_cache_hit_rate, 2);
    row2(out, "Running requests (mean / max):", s->avg_running_reqs, s->max_running_reqs, 2);
    row2(out, "Waiting requests (mean / max):", s->avg_queue_reqs, s->max_queue_reqs, 2);
    if (!isnan(s->queue_ms))
        row2(out, "Server queue / prefill (mean ms):", s->queue_ms, s->prefill_ms, 2);
    else if (!isnan(s->prefill_ms))
        row(out, "Server prefill (mean ms):", s->prefill_ms, 2);
    if (!isnan(s->transfer_ms))
        row(out, "TTFT beyond the server's share (mean ms):", s->transfer_ms, 2);
    if (!isnan(s->delta[SV_PREEMPTIONS]) && s->delta[SV_PREEMPTIONS] > 0)
        row(out, "Preemptions:", s->delta[SV_PREEMPTIONS], 0);
    if (s->gauge_reason[0])
        fprintf(out, "note: %s\n", s->gauge_reason);
    else if (s->scrapes_failed > 0 && !isnan(s->gauge_coverage))
        fprintf(out, "note: the gauges are over the scrapes that answered, %.0f%% of the window\n",
                100 * s->gauge_coverage);
    if (s->other_traffic)
        fprintf(out, "warning: the server generated %.0f tokens more than this run received: other traffic "
                     "shared it, and its figures are not this run's alone\n", s->token_excess);
}

static void hardware(FILE *out, const struct observe_report *r)
{
    const struct hw_summary *h = &r->hardware;
    char title[80];
    snprintf(title, sizeof title, "Hardware (%s, %d GPU%s)", r->gpu_source ? r->gpu_source : "host",
             h->n_gpus, h->n_gpus == 1 ? "" : "s");
    header(out, title);
    if (!h->available) {
        fprintf(out, "unavailable: %s\n", h->reason);
        return;
    }
    if (h->n_gpus > 0) {
        row2(out, "GPU utilization (avg / max %):", h->run.gpu_util_avg_pct, h->run.gpu_util_max_pct, 1);
        row2(out, "GPU power, all GPUs (avg / max W):", h->run.power_total_avg_w, h->run.power_total_max_w, 1);
        row2(out, "GPU temperature (avg / max °C):", h->run.temp_avg_c, h->run.temp_max_c, 1);
        row(out, "SM clock (median MHz):", h->median_sm_mhz, 0);
        if (!isnan(h->thermal_share))
            row(out, "Samples thermally throttled (%):", 100 * h->thermal_share, 1);
        char k[80];
        snprintf(k, sizeof k, "Energy in the window (J, %s):",
                 h->energy_source ? h->energy_source : "none");
        row(out, k, h->energy_j, 1);
        row(out, "Output tokens per joule:", h->output_tokens_per_joule, 3);
    }
    if (h->host)
        row2(out, "Host CPU (avg / max %):", h->cpu_util_pct.mean, h->cpu_util_pct.max, 1);
}

void report_observe(FILE *out, const struct observe_report *r)
{
    if (r->server_enabled)
        server(out, r);
    if (r->hardware_enabled)
        hardware(out, r);
    if (r->server_enabled || r->hardware_enabled) {
        for (int i = 0; i < 60; i++)
            fputc('=', out);
        fputc('\n', out);
    }
}
