/* config.c — a run's settings: their defaults, and the checks of each
 * feature's settings and of how the features combine. */
#include "run/run.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "load/live_server.h"
#include "net/url.h"
#include "observe/metrics_url.h"
#include "workload/image.h"
#include "workload/trace.h"

void run_config_defaults(struct run_config *c)
{
    *c = (struct run_config){
        .transport = {.api_key_env = "OPENAI_API_KEY", .endpoint = EP_CHAT, .timeout_s = 600,
                      .connect_timeout_s = 10, .idle_timeout_s = 120, .grace_s = 5, .stall_timeout_s = -1},
        .load = {.concurrency = 1, .num_prompts = 100, .request_rate = INFINITY, .burstiness = 1,
                 .ramp = {.start_rps = NAN, .end_rps = NAN}},
        .workload = {.input_len = 1024, .output_len = 128, .ignore_eos = true, .calib = CALIB_AUTO,
                     .prefix_groups = 1, .tool_result_len = 200, .agentic_user_len = 100},
        .observe = {.server_metrics = "auto", .scrape_interval_ms = 1000, .telemetry = OBS_MODE_AUTO,
                    .telemetry_interval_ms = 1000},
        .out = {.pct = PCT_NEAREST, .slo = {NAN, NAN, NAN}, .timeseries_interval_s = RUN_TIMESERIES_DEFAULT_S,
                .max_request_rows = RUN_MAX_REQUEST_ROWS},
        .shard = {.rank_timeout_s = 60},
        .name = "anvil run",
    };
}

double run_stall_timeout_s(const struct run_config *c)
{
    return c->transport.stall_timeout_s < 0 ? c->transport.idle_timeout_s : c->transport.stall_timeout_s;
}

/* Writes the message into err and returns -1: a check's way to fail. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Said both by the workload's check (a dataset or agentic sessions) and by
 * the combined one (an endpoint other than chat). */
#define IMAGES_NEED_SYNTHETIC_CHAT \
    "--images-per-request goes with synthetic chat prompts (not completions, --dataset or agentic sessions)"

/* Input files and values the run will need, checked before anything is
 * sent (a usage error, exit 2): the dataset's kind and file, the tools and
 * agentic files, the image size. What is inside a file is read later. */
static int check_inputs(const struct run_workload *w, char *err, size_t errlen)
{
    const char *ds = w->dataset, *colon = ds ? strchr(ds, ':') : NULL;
    static const char *const kinds[] = {"jsonl:", "sharegpt:", "mooncake:", "azure:"};
    bool known = false;
    for (size_t i = 0; ds && i < sizeof kinds / sizeof *kinds; i++)
        known = known || !strncmp(ds, kinds[i], strlen(kinds[i]));
    const char *files[][2] = {{"--dataset", colon ? colon + 1 : NULL}, {"--tools", w->tools_file},
                              {"--agentic", w->agentic_file}};
    int width, height;
    if (ds && !known)
        return fail(err, errlen, "--dataset %.200s: expected jsonl:FILE, sharegpt:FILE, mooncake:FILE or azure:FILE",
                    ds);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (files[i][1] && access(files[i][1], R_OK) != 0)
            return fail(err, errlen, "%s: cannot read %.300s: %s", files[i][0], files[i][1], strerror(errno));
    if (w->image_size && image_parse_size(w->image_size, &width, &height) != 0)
        return fail(err, errlen, "--image-size %.40s: expected WxH, each side 1..%d pixels", w->image_size,
                    IMAGE_MAX_SIDE);
    return 0;
}

/* The agentic settings among themselves. */
static int check_agentic(const struct run_workload *w, char *err, size_t errlen)
{
    if ((w->agentic_file || w->agentic_sessions > 0) && (w->dataset || w->multi_turn))
        return fail(err, errlen, "--agentic and --agentic-sessions make their own turns: without --dataset "
                    "or --multi-turn");
    if ((w->think_time || w->sub_agents > 0) && w->agentic_sessions <= 0)
        return fail(err, errlen, "--think-time and --sub-agents go with --agentic-sessions (an --agentic file "
                    "gives them per turn: think_time_s, sub_agents)");
    if (w->agentic_file && w->agentic_sessions > 0)
        return fail(err, errlen, "--agentic FILE and --agentic-sessions N both say what the sessions are: give one");
    return 0;
}

/* --images-per-request and its companions. */
static int check_images(const struct run_workload *w, char *err, size_t errlen)
{
    if (w->images_per_request > 0 && (w->dataset || w->agentic_file || w->agentic_sessions > 0))
        return fail(err, errlen, IMAGES_NEED_SYNTHETIC_CHAT);
    if (w->image_format && w->images_per_request <= 0)
        return fail(err, errlen, "--image-format goes with --images-per-request");
    if (w->images_per_request > 0 && w->calib == CALIB_TOKENIZE)
        return fail(err, errlen, "--calibration tokenize cannot count image tokens: use probe or auto (which "
                    "probes with the images)");
    return 0;
}

/* --prefix-hit-rate and --prefix-groups. */
static int check_prefix(const struct run_workload *w, char *err, size_t errlen)
{
    if (w->prefix_hit_rate >= 1)
        return fail(err, errlen, "--prefix-hit-rate is a share below 1 (a server computes at least one token "
                    "of every prompt), got %g", w->prefix_hit_rate);
    if (w->prefix_hit_rate > 0 && (w->dataset || w->shared_prefix_len > 0 || w->agentic_file ||
                                   w->agentic_sessions > 0))
        return fail(err, errlen, "--prefix-hit-rate builds its own shared prefixes: it takes synthetic prompts, "
                    "without --dataset, agentic sessions or --shared-prefix-len");
    if (w->prefix_hit_rate > 0 && w->input_len == 0)
        return fail(err, errlen, "--prefix-hit-rate shares part of each prompt: it needs --input-len of at least 1 "
                    "(0 is the minimal prompt, with nothing to share)");
    if (w->prefix_groups > 1 && w->prefix_hit_rate <= 0)
        return fail(err, errlen, "--prefix-groups goes with --prefix-hit-rate");
    return 0;
}

int run_workload_check(const struct run_workload *w, char *err, size_t errlen)
{
    if (check_inputs(w, err, errlen) != 0)
        return -1;
    if (w->continuous_usage && w->no_continuous_usage)
        return fail(err, errlen, "--continuous-usage and --no-continuous-usage: give one of them");
    if (w->shared_prefix_len > 0 && w->shared_prefix_len >= w->input_len)
        return fail(err, errlen, "--shared-prefix-len (%ld) must be below --input-len (%ld): the "
                    "unique part follows the shared one", w->shared_prefix_len, w->input_len);
    if (w->multi_turn && !w->dataset)
        return fail(err, errlen, "--multi-turn needs --dataset (conversations come from a file)");
    if (w->tool_choice && !w->tools_file)
        return fail(err, errlen, "--tool-choice needs --tools");
    if (w->tools_file && w->calib == CALIB_TOKENIZE)
        return fail(err, errlen, "--calibration tokenize cannot count what the chat template adds for "
                    "--tools: use probe or auto (which probes with the tools)");
    if (check_agentic(w, err, errlen) != 0 || check_images(w, err, errlen) != 0 ||
        check_prefix(w, err, errlen) != 0)
        return -1;
    if (!trace_spec_is_trace(w->dataset) && (w->trace_speed > 0 || w->trace_start_s > 0 || w->trace_duration_s > 0))
        return fail(err, errlen, "--trace-speed, --trace-start and --trace-duration go with --dataset "
                    "mooncake:FILE or azure:FILE");
    return 0;
}

/* url without its user:password@, for a message (net/url.h). */
static const char *public_url(const char *url, char *out, size_t cap)
{
    url_public(url, out, cap);
    return out;
}

int run_observe_check(const struct run_observe *o, char *err, size_t errlen)
{
    char shown[600];
    if (o->server_metrics && strcmp(o->server_metrics, "auto") && strcmp(o->server_metrics, "off") &&
        !obs_metrics_url_ok(o->server_metrics))
        return fail(err, errlen, "--server-metrics %s: expected auto, off, or an http://, https:// or file:// URL",
                    public_url(o->server_metrics, shown, sizeof shown));
    if (o->gpu_metrics_url && !obs_metrics_url_ok(o->gpu_metrics_url))
        return fail(err, errlen, "--gpu-metrics-url %s: expected an http://, https:// or file:// URL",
                    public_url(o->gpu_metrics_url, shown, sizeof shown));
    char host[256], why[200];
    int port;
    if (o->metrics_listen && live_listen_parse(o->metrics_listen, host, sizeof host, &port, why, sizeof why) != 0)
        return fail(err, errlen, "--metrics-listen: %s", why);
    return 0;
}

int run_transport_check(const struct run_transport *t, char *err, size_t errlen)
{
    if (t->base_url && strncasecmp(t->base_url, "http://", 7) && strncasecmp(t->base_url, "https://", 8))
        return fail(err, errlen, "--base-url %.200s: only http:// and https:// servers are supported",
                    strchr(t->base_url, '@') ? "(credentials withheld)" : t->base_url);
    enum http_transport got;
    if (t->base_url && http_transport_resolve(t->kind, t->base_url, &got, err, errlen) != 0)
        return -1;
    return 0;
}

/* Bytes of memory the machine has, or 0 when unknown. */
static double physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* The ramps (load/plan.h): a rate ramp as vLLM takes it, or the closed
 * loop's streams started over --ramp-up-s. */
static int check_ramp(const struct run_load *l, char *err, size_t errlen)
{
    const struct load_ramp *r = &l->ramp;
    bool rates = !isnan(r->start_rps) || !isnan(r->end_rps);
    if (r->strategy == RAMP_NONE && rates)
        return fail(err, errlen, "--ramp-up-start-rps and --ramp-up-end-rps go with --ramp-up-strategy");
    if (r->strategy != RAMP_NONE && (isnan(r->start_rps) || isnan(r->end_rps)))
        return fail(err, errlen, "--ramp-up-strategy needs both --ramp-up-start-rps and --ramp-up-end-rps");
    if (r->strategy != RAMP_NONE && !isinf(l->request_rate))
        return fail(err, errlen, "--ramp-up-strategy sets the rate from --ramp-up-start-rps to --ramp-up-end-rps: "
                    "without --request-rate (as vLLM)");
    if (r->strategy != RAMP_NONE && r->start_rps > r->end_rps)
        return fail(err, errlen, "--ramp-up-start-rps (%g) must not be above --ramp-up-end-rps (%g)", r->start_rps,
                    r->end_rps);
    if (r->strategy != RAMP_NONE && !(r->end_rps > 0))
        return fail(err, errlen, "--ramp-up-end-rps must be above 0");
    if (r->strategy == RAMP_EXPONENTIAL && !(r->start_rps > 0))
        return fail(err, errlen, "an exponential ramp needs --ramp-up-start-rps above 0");
    if (r->strategy != RAMP_NONE && l->duration_s > 0)
        return fail(err, errlen, "--ramp-up-strategy ramps over the --num-prompts measured requests (by request, as "
                    "vLLM): not with --duration, whose count is not known before");
    if (r->ramp_up_s > 0 && (r->strategy != RAMP_NONE || !isinf(l->request_rate)))
        return fail(err, errlen, "--ramp-up-s starts the closed loop's streams in steps: not with --request-rate or "
                    "--ramp-up-strategy (an open loop)");
    if (r->ramp_up_s > 0 && l->concurrency < 2)
        return fail(err, errlen, "--ramp-up-s starts --concurrency streams in steps: it needs at least 2 (got %ld)",
                    l->concurrency);
    return 0;
}

int run_load_check(const struct run_load *l, char *err, size_t errlen)
{
    if (check_ramp(l, err, errlen) != 0)
        return -1;
    double mem = physical_memory(), need = (double)(l->num_prompts + l->warmup) * sizeof(struct req_record);
    if (mem > 0 && need > mem / 2)
        return fail(err, errlen, "--num-prompts %ld: the per-request records alone need %.1f GiB, more than "
                    "half of this machine's %.1f GiB; use fewer prompts or --duration", l->num_prompts,
                    need / (1 << 30), mem / (1 << 30));
    if (l->window_ready && (l->duration_s <= 0 || l->warmup_s <= 0 || l->threads != 1))
        return fail(err, errlen, "a readiness gate needs duration mode with a warm-up and one thread");
    if (l->warmup_s > 0 && l->duration_s <= 0)
        return fail(err, errlen, "--warmup-s goes with --duration (use --warmup N otherwise)");
    return 0;
}

/* The settings of one feature that another feature's settings rule out. */
static int check_across(const struct run_config *c, char *err, size_t errlen)
{
    const struct run_workload *w = &c->workload;
    const struct run_load *l = &c->load;
    bool trace = trace_spec_is_trace(w->dataset);
    if (w->tools_file && c->transport.endpoint != EP_CHAT)
        return fail(err, errlen, "--tools goes with the chat endpoint (completions take no tools)");
    if (w->images_per_request > 0 && c->transport.endpoint != EP_CHAT)
        return fail(err, errlen, IMAGES_NEED_SYNTHETIC_CHAT);
    if (trace && (w->multi_turn || l->duration_s > 0 || !isinf(l->request_rate) || l->ramp.strategy != RAMP_NONE ||
                  l->ramp.ramp_up_s > 0))
        return fail(err, errlen, "a trace (--dataset %.20s...) is sent at its recorded times: --multi-turn, "
                    "--duration, --request-rate and the --ramp-up flags do not apply (--trace-speed scales its clock)",
                    w->dataset);
    bool closed = isinf(l->request_rate) && l->ramp.strategy == RAMP_NONE && !trace;
    if (closed && l->concurrency < 1)
        return fail(err, errlen, "the closed loop needs --concurrency of at least 1");
    if (c->shard.count > 1 && l->concurrency < c->shard.count && (l->concurrency > 0 || closed))
        return fail(err, errlen, "%d shards (ranks) each take a share of --concurrency %ld: it must be at least %d",
                    c->shard.count, l->concurrency, c->shard.count);
    if (c->shard.count > 1 && (w->agentic_file || w->agentic_sessions > 0))
        return fail(err, errlen, "agentic sessions are not split over shards or ranks (a turn waits for its "
                    "sub-agents, which the shard split does not keep together): run them in one process");
    return 0;
}

int run_config_check(const struct run_config *c, char *err, size_t errlen)
{
    if (run_workload_check(&c->workload, err, errlen) != 0 || run_observe_check(&c->observe, err, errlen) != 0 ||
        run_transport_check(&c->transport, err, errlen) != 0)
        return -1;
    /* a shard's share of the streams is known only to its launcher */
    if (!c->shard.count && run_check_fd_limit(c->load.concurrency, err, errlen) != 0)
        return -1;
    if (run_load_check(&c->load, err, errlen) != 0)
        return -1;
    if (!(c->out.timeseries_interval_s >= 0.001) || c->out.timeseries_interval_s > 86400)
        return fail(err, errlen, "--timeseries-interval-s must be from 0.001 to 86400 seconds, got %g",
                    c->out.timeseries_interval_s);
    return check_across(c, err, errlen);
}
