/* observe.c — a run's server metrics and hardware telemetry: the session
 * around the load and its blocks in the artifact (observe/observe.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/observe.h"
#include "artifact/observe_shard.h"
#include "load/driver.h"
#include "run/stage.h"
#include "stats/tokens.h"

static void say(void *ud, const char *msg)
{
    run_say(ud, "%s", msg);
}

bool run_continuous_usage(const struct run_ctx *x)
{
    return x->c->workload.continuous_usage || (!x->c->workload.no_continuous_usage && server_accepts_continuous_usage(&x->srv));
}

void run_observe_start(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    struct observe_cfg oc = {
        .server_metrics = c->observe.server_metrics, .scrape_interval_ms = c->observe.scrape_interval_ms,
        .base_url = x->srv.base_url, .headers = x->headers, .telemetry = (enum obs_mode)c->observe.telemetry,
        .telemetry_interval_ms = c->observe.telemetry_interval_ms, .gpu_metrics_url = c->observe.gpu_metrics_url,
        .say = say, .say_ud = x,
    };
    int n = c->observe.n_samplers > 0 ? c->observe.n_samplers : 0;
    if (!(x->samplers = calloc((size_t)n + 2, sizeof *x->samplers)))
        return;
    for (int i = 0; i < n; i++)
        x->samplers[x->n_samplers++] = c->observe.samplers[i];
    if (c->observe.scrape_interval_ms <= 0 || c->observe.telemetry_interval_ms <= 0)
        return;     /* a library caller that left them unset: nothing to observe */
    if (!(x->obs = observe_new(&oc)))
        return;
    observe_prepare(x->obs);
    x->n_samplers += observe_samplers(x->obs, x->samplers + x->n_samplers, 2);
}

void run_observe_finish(struct run_ctx *x, const struct driver_result *dr)
{
    if (!x->obs)
        return;
    /* the driver's reports are of cfg's samplers, in x->samplers' order */
    observe_finish(x->obs, x->samplers, dr->sampler_reports, dr->n_sampler_reports);
}

/* The client's figures over the window, as both summaries need them. */
static struct observe_client client_facts(const struct run_ctx *x, const struct driver_result *dr)
{
    const struct run_config *c = x->c;
    const struct run_result *res = x->res;
    const struct run_summary *s = &res->summary;
    struct observe_client oc = {
        .window_start = dr->phase_ns[SAMPLER_WINDOW_START], .window_end = dr->phase_ns[SAMPLER_WINDOW_END],
        .duration_mode = c->load.duration_s > 0, .ttft_mean_ms = s->d[D_TTFT].mean,
        .concurrency = isinf(c->load.request_rate) ? c->load.concurrency : 0,
        .tokens_per_request = c->workload.dataset ? 0 : c->workload.input_len + c->workload.output_len,
    };
    /* the prompts the server processed in the window: their first output arrived in it; and
     * (not duration mode) every measured request sent: completed, failed and cut ones made tokens too */
    struct run_records rr;
    char err[600];
    bool opened = run_records_open(res, &rr, err, sizeof err) == 0;
    if (!opened || rr.it.rewind(&rr.it) != 0) {
        run_say(x, "warning: %s: the cross-checks with the server leave the client's tokens out",
                opened ? rr.it.err : err);
        run_records_close(&rr);
        return oc;
    }
    for (const struct req_record *r; (r = rr.it.next(&rr.it));) {
        long p = r->prompt_tokens >= 0 ? r->prompt_tokens : r->planned_prompt_tokens;
        if (r->t_first_output && r->t_first_output >= oc.window_start && r->t_first_output <= oc.window_end &&
            p > 0) {
            oc.prompt_tokens += (double)p;
            oc.prompt_requests++;
        }
        if (!oc.duration_mode && r->t_start)
            oc.output_tokens += (double)tokens_of(r, NULL);
    }
    run_records_close(&rr);
    if (oc.duration_mode)
        oc.output_tokens = s->window_tokens;
    return oc;
}

/* Whether other processes of this run (shards, MPI ranks) send to the same
 * server: its counters then hold their requests too. */
static bool sharing_shards(const struct run_ctx *x)
{
    return x->c->shard.count > 1;
}

int run_observe_summarize(struct run_ctx *x, const struct driver_result *dr)
{
    if (!x->obs || x->res->observe)
        return 0;
    struct observe_report *r = calloc(1, sizeof *r);
    struct observe_client oc = client_facts(x, dr);
    if (!r || observe_summarize(x->obs, &oc, r) != 0) {
        if (r)
            observe_report_free(r);
        free(r);
        return -1;
    }
    /* the covering span of a --num-prompts run may hold the end of the
     * warm-up: its tokens are not other traffic */
    struct srv_summary *sv = &r->server;
    if (r->server_enabled && sv->available && !oc.duration_mode && !isnan(sv->token_excess))
        sv->other_traffic = sv->token_excess > fmax(0.01 * oc.output_tokens, 16) + x->warmup_output_tokens;
    if (sharing_shards(x) && sv->other_traffic) {
        /* the tokens beyond this shard's are, as far as a shard can tell, its siblings' */
        sv->other_traffic = false;
        int others = x->c->shard.count - 1;
        run_say(x, "note: the server generated %.0f tokens more than this shard received: the other "
                "shard%s of this run share%s the server, so other traffic is not checked per shard",
                sv->token_excess, others == 1 ? "" : "s", others == 1 ? "s" : "");
    }
    x->res->observe = r;
    return 0;
}

int run_observe_attach(struct run_ctx *x, const struct driver_result *dr, cJSON *art)
{
    if (!x->obs)
        return 0;
    if (run_observe_summarize(x, dr) != 0)
        return -1;
    if (artifact_add_observe(art, x->res->observe) != 0)
        return -1;
    if (!sharing_shards(x))
        return 0;
    /* a shard cannot tell its siblings' tokens from another client's: unknown, and why */
    return artifact_observe_shared_server(art, x->c->shard.index, x->c->shard.count);
}

double run_server_prefix_hit_rate(const struct run_ctx *x, const char **source)
{
    const struct observe_report *r = x->res->observe;
    *source = NULL;
    if (!r || !r->server_enabled)
        return NAN;
    const struct srv_summary *sv = &r->server;
    double q = sv->run_delta[SV_PREFIX_QUERIES], h = sv->run_delta[SV_PREFIX_HITS];
    if (q > 0 && h >= 0) {
        *source = sv->engine == SRV_SGLANG ? "sglang:cached_tokens_total / sglang:prompt_tokens_total, pre-run to post-run"
                : sv->engine == SRV_VLLM ? "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total, pre-run to post-run"
                : "prefix cache hit / query counters, pre-run to post-run";
        return h / q;
    }
    const struct obs_gauge *g = &sv->gauge[SV_CACHE_HIT_RATE];
    if (g->samples > 0 && !isnan(g->time_weighted)) {
        *source = "sglang:cache_hit_rate gauge, time-weighted over the window";
        return g->time_weighted;
    }
    return NAN;
}

void run_observe_free(struct run_ctx *x)
{
    observe_free(x->obs);
    x->obs = NULL;
    free(x->samplers);
    x->samplers = NULL;
}

double run_check_token_count(const struct run_ctx *x)
{
    const struct observe_report *r = x->res->observe;
    if (x->c->load.duration_s <= 0 || !r || !r->server_enabled || !r->server.available || sharing_shards(x))
        return NAN;
    double srv = r->server.server_output_tokens, mine = x->res->summary.window_tokens;
    if (isnan(srv) || isnan(mine))
        return srv;
    if (fabs(mine - srv) > TOKEN_COUNT_TOLERANCE * fmax(srv, 1) && fabs(mine - srv) >= 2)
        run_say(x, "warning: output tokens in the window: anvil counted %.0f, the server's generation counter "
                "%.0f (%+.1f %%): %s", mine, srv, 100 * (mine - srv) / fmax(srv, 1),
                mine < srv ? "the server generated more than anvil received (other traffic, or tokens anvil "
                             "could not count)" : "anvil counted more than the server generated");
    return srv;
}
