/* run.c — one benchmark run: discovery → workload → load → outputs. */
#include "run/run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/escape.h"
#include "core/redact.h"
#include "core/stop.h"
#include "load/driver.h"
#include "load/live_server.h"
#include "load/plan.h"
#include "observe/metrics_url.h"
#include "openai/cache.h"
#include "run/stage.h"
#include "workload/image.h"
#include "workload/prompt.h"

/* Descriptors a run needs besides one socket per request in flight: the
 * event loops, curl's, the journal, logs, samplers (raise_fd_limit). */
#define FD_RESERVE 64

/* The most descriptors this process may open once raise_fd_limit raised
 * its limit: the hard limit (RLIM_INFINITY as the largest value). */
static rlim_t fd_limit_max(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_max : RLIM_INFINITY;
}

int run_check_fd_limit(long concurrency, char *err, size_t errlen)
{
    rlim_t fds = fd_limit_max();
    if (fds == RLIM_INFINITY || (rlim_t)concurrency + FD_RESERVE <= fds)
        return 0;
    snprintf(err, errlen, "--concurrency %ld needs %ld open files (a socket per request in flight), and "
             "this machine lets anvil open %llu (the hard open-file limit): raise it (ulimit -Hn %ld, as "
             "root or in /etc/security/limits.conf) or run fewer streams at once", concurrency,
             concurrency + FD_RESERVE, (unsigned long long)fds, concurrency + FD_RESERVE);
    return -1;
}

void run_say(const struct run_ctx *x, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    secrets_scrub(&x->secrets, msg, sizeof msg);
    char shown[sizeof msg];     /* a message may quote the server (a model name, a reply) */
    text_escape(shown, sizeof shown, msg, strlen(msg));
    fprintf(x->c->log ? x->c->log : stderr, "%s: %s\n", x->c->name ? x->c->name : "anvil", shown);
}

/* Raises the open-file limit to its hard maximum: every request in flight
 * holds a socket, and running out would look like a server refusing
 * connections. Warns when even that is too few. */
static void raise_fd_limit(const struct run_ctx *x)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)x->c->load.concurrency + FD_RESERVE > rl.rlim_cur)
        run_say(x, "warning: %ld requests in flight need more sockets than the open-file limit "
                "(%llu) allows", x->c->load.concurrency, (unsigned long long)rl.rlim_cur);
}

/* The start line. A shard's counts are its own share (cfg, after
 * run_shard_cfg) beside the whole run's: "4 of 8 prompts (shard 0/2)". */
static void announce(const struct run_ctx *x, const struct driver_cfg *cfg)
{
    const struct run_config *c = x->c;
    bool shard = c->shard.count > 0;
    char load[160], cap[64] = "no cap", conc[48], part[32] = "";
    if (shard && cfg->concurrency != c->load.concurrency)
        snprintf(conc, sizeof conc, "%d of %ld", cfg->concurrency, c->load.concurrency);
    else
        snprintf(conc, sizeof conc, "%ld", c->load.concurrency);
    if (shard)
        snprintf(part, sizeof part, " (shard %d/%d)", c->shard.index, c->shard.count);
    if (c->load.concurrency > 0)
        snprintf(cap, sizeof cap, "max concurrency %s", conc);
    if (x->trace.n)
        snprintf(load, sizeof load, "recorded times (%s)", cap);
    else if (c->load.ramp.strategy != RAMP_NONE)
        snprintf(load, sizeof load, "a %s ramp from %g to %g req/s (burstiness %g, %s)",
                 c->load.ramp.strategy == RAMP_LINEAR ? "linear" : "exponential", c->load.ramp.start_rps,
                 c->load.ramp.end_rps, c->load.burstiness, cap);
    else if (isinf(c->load.request_rate) && c->load.ramp.ramp_up_s > 0)
        snprintf(load, sizeof load, "concurrency %s, its streams started over %g s", conc, c->load.ramp.ramp_up_s);
    else if (isinf(c->load.request_rate))
        snprintf(load, sizeof load, "concurrency %s", conc);
    else
        snprintf(load, sizeof load, "%g req/s (burstiness %g, %s)", c->load.request_rate, c->load.burstiness, cap);
    char amount[128];
    if (c->load.duration_s > 0 && c->load.window_ready)
        snprintf(amount, sizeof amount, "for %g s once ready (warm-up of up to %g s)%s", c->load.duration_s, c->load.warmup_s,
                 part);
    else if (c->load.duration_s > 0)
        snprintf(amount, sizeof amount, "for %g s after %g s of warm-up%s", c->load.duration_s, c->load.warmup_s, part);
    else if (shard)
        snprintf(amount, sizeof amount, "%d of %ld prompts%s", cfg->num_prompts, c->load.num_prompts, part);
    else
        snprintf(amount, sizeof amount, "%ld prompts", c->load.num_prompts);
    char shape[600];
    if (x->trace.n)
        snprintf(shape, sizeof shape, "%ld requests of %s replayed over %.1f s", c->load.num_prompts, c->workload.dataset,
                 x->trace.span_s);
    else if (c->workload.dataset)
        snprintf(shape, sizeof shape, "prompts from %s", c->workload.dataset);
    else
        snprintf(shape, sizeof shape, "%ld→%ld tokens", c->workload.input_len, c->workload.output_len);
    run_say(x, "%s model %s (%s), %s at %s, %s, %d measuring thread%s", x->srv.display_url, x->srv.model,
            x->srv.engine, amount, load, shape, cfg->threads, cfg->threads == 1 ? "" : "s");
    if (!isinf(c->load.request_rate) && 1 / c->load.request_rate > 60)
        run_say(x, "warning: at --request-rate %g the requests are on average %.0f s apart: the first "
                "one is expected about %.0f s from now", c->load.request_rate, 1 / c->load.request_rate,
                1 / c->load.request_rate);
}

/* Whether a stop request (Ctrl-C, SIGTERM, SIGHUP) came during the
 * preparation step named by during: then the run's error says so, in place
 * of the reason the interrupted step gave. Returns -1 (the run ends before
 * its load; nothing was measured), or 0 when no stop came. */
static int stopped(struct run_ctx *x, const char *during)
{
    int sig = stop_requested();
    if (!sig)
        return x->res->error[0] ? -1 : 0;
    snprintf(x->res->error, sizeof x->res->error, "stopped by %s while %s: nothing was measured",
             stop_signal_name(sig), during);
    return -1;
}

/* The driver's first measured send: the time series' origin. */
static void first_send(void *ud, int64_t t_start_ns)
{
    struct run_ctx *x = ud;
    if (x->ts_on)
        ts_begin(&x->ts, t_start_ns);
}

/* Whether the run's records can be dropped as they end and read back from
 * its journal: there is one, and nothing after the load needs them whole
 * (a shard's are renumbered and sent to rank 0; agentic sessions are walked
 * by dataset order; in duration mode, the count warm-ups and the window's
 * own could not be told apart in the journal; the caller asked to keep
 * them: run_config.keep_records). */
static bool may_drop(const struct run_ctx *x)
{
    const struct run_config *c = x->c;
    return x->journal && !c->keep_records && c->shard.count == 0 && !x->agentic.n &&
           !(c->load.duration_s > 0 && c->load.warmup > 0);
}

/* Sets up x->drop and what a run that drops its records keeps
 * (run_result.kept). Returns 0, or -1 (memory). */
static int keep_start(struct run_ctx *x)
{
    if (!(x->drop = may_drop(x)))
        return 0;
    struct run_kept *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(x->res->error, sizeof x->res->error, "out of memory");
        return -1;
    }
    pthread_mutex_init(&k->mu, NULL);
    buf_init(&k->spill, SIZE_MAX / 2);
    k->first_fail_index = -1;
    bool duration = x->c->load.duration_s > 0;
    k->read = (struct jiter_opts){.skip_warmup = !duration, .dedupe_warmups = duration,
                                  .n_index = x->c->load.num_prompts};
    x->res->kept = k;
    return 0;
}

/* Sends the load. Returns 0, or -1 when the loop could not be set up. */
static int drive(struct run_ctx *x, struct driver_result *dr)
{
    const struct run_config *c = x->c;
    char url[600], models_url[600];
    snprintf(url, sizeof url, "%s%s", x->srv.base_url, endpoint_path(c->transport.endpoint));
    snprintf(models_url, sizeof models_url, "%s/models", x->srv.base_url);
    char err[300];
    if (http_transport_resolve(c->transport.kind, url, &x->transport, err, sizeof err) != 0) {
        snprintf(x->res->error, sizeof x->res->error, "%s", err);
        return -1;
    }
    struct driver_cfg cfg = {
        .url = url, .headers = x->headers, .transport = x->transport, .concurrency = (int)c->load.concurrency,
        .request_rate = c->load.request_rate, .burstiness = c->load.burstiness, .seed = (uint64_t)c->workload.seed,
        .ramp = c->load.ramp, .num_prompts = (int)c->load.num_prompts, .warmup = (int)c->load.warmup,
        .duration_s = c->load.duration_s, .warmup_s = c->load.warmup_s,
        .connect_timeout_ms = (long)(c->transport.connect_timeout_s * 1000),
        .timeout_ms = (long)(c->transport.timeout_s * 1000), .idle_timeout_s = c->transport.idle_timeout_s,
        .stall_timeout_s = run_stall_timeout_s(c),
        .keep_text = x->srv.engine_id != ENGINE_UNKNOWN,
        .grace_s = c->transport.grace_s, .secrets = &x->secrets, .progress = c->out.progress,
        .make_body = run_make_body, .on_record = run_log_record, .on_first_send = first_send, .ud = x,
        .follows = c->workload.multi_turn && !x->agentic.n ? run_follows : NULL, .prewarm_url = models_url,
        .waits_for = x->agentic.n ? run_waits : NULL, .think_ns = x->agentic.n ? run_think_ns : NULL,
        .samplers = x->samplers ? x->samplers : c->observe.samplers,
        .n_samplers = x->samplers ? x->n_samplers : c->observe.n_samplers, .send_ns = x->trace_due,
        .prebuild_bodies = c->workload.dataset != NULL || c->workload.multi_turn || x->trace_due != NULL ||
                           c->workload.images_per_request > 0,
        .window_ready = c->load.window_ready, .gate_ud = c->load.gate_ud,
        .threads = plan_threads((int)c->load.threads, sysconf(_SC_NPROCESSORS_ONLN), (int)c->load.concurrency,
                                c->load.warmup + c->load.num_prompts),
        .live = c->observe.metrics_listen ? &x->live : NULL, .traceparent = c->transport.traceparent,
    };
    if (c->shard.count > 0 && run_shard_cfg(x, &cfg) != 0)
        return -1;
    if (keep_start(x) != 0)
        return -1;
    cfg.drop_records = x->drop;
    if (stop_requested())   /* from here on the driver's loop takes the signals */
        return stopped(x, "starting the load");
    announce(x, &cfg);
    x->threads = cfg.threads;
    clock_utc_iso8601(x->started_at);
    if (run_journal_header(x) != 0)
        return -1;
    if (run_agree_start(x) != 0)
        return -1;
    cfg.measure_at_ns = x->measure_at;
    if (run_log_start(x, cfg.threads) != 0) {
        snprintf(x->res->error, sizeof x->res->error, "cannot start the request log: %s", strerror(errno));
        return -1;
    }
    int rc = driver_run(&cfg, dr);
    run_log_finish(x);      /* every ended request's lines written before the artifact */
    if (rc != 0) {
        snprintf(x->res->error, sizeof x->res->error, "could not set up the event loop");
        return -1;
    }
    return 0;
}

static void make_run_id(char *out, size_t n, uint64_t salt)
{
    char compact[17];
    clock_utc_compact(compact);
    snprintf(out, n, "anvil-%s-%04" PRIx64, compact, salt & 0xffff);
}

int run_request_headers(const struct run_config *c, struct curl_slist **out, char *note, size_t notecap)
{
    const char *key = c->transport.api_key_env ? getenv(c->transport.api_key_env) : NULL;
    bool explicit_auth = false;
    note[0] = '\0';
    for (const struct curl_slist *h = c->transport.headers; h; h = h->next) {
        explicit_auth |= !strncasecmp(h->data, "authorization:", 14);
        if (!(*out = curl_slist_append(*out, h->data)))
            return -1;
    }
    if (key && *key && explicit_auth) {
        snprintf(note, notecap, "note: the Authorization header given with --header/--header-env is sent; "
                 "the --api-key-env %s key is not (one Authorization header)", c->transport.api_key_env);
    } else if (key && *key) {
        struct buf h;
        buf_init(&h, 8192);
        buf_printf(&h, "Authorization: Bearer %s", key);
        struct curl_slist *l = h.data ? curl_slist_append(*out, h.data) : NULL;
        buf_free(&h);
        if (!l)
            return -1;
        *out = l;
    }
    return 0;
}

int run_secrets(const struct run_config *c, struct secrets *out)
{
    const char *key = c->transport.api_key_env ? getenv(c->transport.api_key_env) : NULL;
    int rc = key ? secrets_add(out, key) : 0;
    for (const struct curl_slist *h = c->transport.headers; h && rc == 0; h = h->next)
        rc = secrets_add_header(out, h->data);
    const char *urls[] = {c->transport.base_url, c->observe.server_metrics, c->observe.gpu_metrics_url};
    for (size_t i = 0; i < sizeof urls / sizeof *urls && rc == 0; i++)
        rc = urls[i] ? secrets_add_url(out, urls[i]) : 0;
    return rc;
}

/* Request headers (run_request_headers), its note said once. */
static int build_headers(struct run_ctx *x)
{
    char note[300];
    if (run_request_headers(x->c, &x->headers, note, sizeof note) != 0)
        return -1;
    if (note[0])
        run_say(x, "%s", note);
    return 0;
}

/* Discovery, retried once a second while the server is not (yet)
 * answering, the last time at --ready-check-timeout-sec after the first.
 * Returns 0, or -1 with the last reason in x->res->error. */
static int discover_ready(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    long setup_ms = (long)(fmin(c->transport.timeout_s, 30) * 1000);
    int64_t deadline = clock_now_ns() + (int64_t)(c->load.ready_timeout_s * 1e9);
    for (bool said = false;; said = true) {
        if (discover(c->transport.base_url ? c->transport.base_url : RUN_DEFAULT_BASE_URL, x->headers, c->transport.model, setup_ms,
                     &x->srv, x->res->error, sizeof x->res->error) == 0)
            return 0;
        int64_t left = deadline - clock_now_ns();
        if (left <= 0)
            return -1;
        if (stop_requested())
            return -1;
        if (!said)
            run_say(x, "waiting up to %g s for the server (%s)", c->load.ready_timeout_s, x->res->error);
        /* once a second, the last try at the deadline itself; a stop request wakes it */
        if (stop_sleep_ns(left < 1000000000 ? left : 1000000000))
            return -1;
    }
}

/* The steps before the load: every output path checked, headers, discovery,
 * workload. Returns 0, or -1 with the reason in x->res->error. */
static int set_up(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    struct run_result *res = x->res;
    char err[512];
    if (c->out.path)
        snprintf(res->artifact_path, sizeof res->artifact_path, "%s", c->out.path);
    else
        snprintf(res->artifact_path, sizeof res->artifact_path, "%s/%s.json",
                 c->out.dir ? c->out.dir : "results", res->run_id);
    /* fail before measuring anything, not after */
    if (artifact_check_path(res->artifact_path, err, sizeof err) != 0) {
        snprintf(res->error, sizeof res->error, "--out: %s", err);
        return -1;
    }
    if (c->out.requests_out && !(x->requests_log = fopen(c->out.requests_out, "a"))) {
        snprintf(res->error, sizeof res->error, "cannot open --requests-out %s: %s",
                 c->out.requests_out, strerror(errno));
        return -1;
    }
    if (build_headers(x) != 0) {
        snprintf(res->error, sizeof res->error, "out of memory");
        return -1;
    }
    raise_fd_limit(x);
    if (discover_ready(x) != 0)
        return stopped(x, "waiting for the server and discovering its model");
    if (run_prepare_workload(x) != 0 || stop_requested())
        return stopped(x, "preparing the prompts");
    return c->prepare_only ? 0 : run_journal_open(x);
}

/* A trace replay: loads the window and makes the run the trace's requests,
 * sent at their offsets (the config as run sends that many). Returns 0, or -1
 * with the reason in x->res->error. */
static int load_trace(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    struct trace_window w = {c->workload.trace_start_s, c->workload.trace_duration_s, c->workload.trace_speed};
    char err[900];
    if (trace_load(c->workload.dataset, &w, &x->trace, err, sizeof err) != 0) {
        snprintf(x->res->error, sizeof x->res->error, "--dataset: %s", err);
        return -1;
    }
    size_t n = c->load.num_prompts > 0 && (size_t)c->load.num_prompts < x->trace.n ? (size_t)c->load.num_prompts : x->trace.n;
    if (n > 100000000 || !(x->trace_due = malloc(n * sizeof *x->trace_due))) {
        snprintf(x->res->error, sizeof x->res->error, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        x->trace_due[i] = x->trace.reqs[i].t_ns;
    x->trace.n = n;     /* the rest of the window is not replayed */
    x->trace_meta = (struct bench_trace){
        .format = x->trace.format, .lines = x->trace.lines, .requests = (long)n,
        .block_tokens = TRACE_BLOCK_TOKENS, .speed = c->workload.trace_speed > 0 ? c->workload.trace_speed : 1,
        .start_s = c->workload.trace_start_s, .duration_s = c->workload.trace_duration_s > 0 ? c->workload.trace_duration_s : NAN,
        .span_s = (double)x->trace.reqs[n - 1].t_ns / 1e9,
        .theoretical_prefix_hit_rate = trace_theoretical_hit_rate(&x->trace),
        .server_prefix_hit_rate = NAN,
    };
    x->eff.load.num_prompts = (long)n;
    return 0;
}

/* Agentic sessions: their turns become the run's dataset, each turn held
 * until the one before it has ended; every turn is sent once unless
 * --num-prompts says otherwise (the config as run says so). Returns 0, or
 * -1 with the reason in x->res->error. */
static int plan_agentic(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    char err[900];
    int rc;
    if (c->workload.agentic_file) {
        rc = agentic_load(c->workload.agentic_file, &x->agentic, err, sizeof err);
    } else {
        struct agentic_gen g = {.sessions = c->workload.agentic_sessions, .user_len = c->workload.agentic_user_len,
                                .tool_result_len = c->workload.tool_result_len, .system_len = c->workload.agentic_system_len,
                                .sub_agents = c->workload.sub_agents, .seed = (uint64_t)c->workload.seed};
        rc = agentic_parse_range(c->workload.agentic_turns ? c->workload.agentic_turns : "3..6", &g.turns_min, &g.turns_max);
        if (rc != 0)
            snprintf(err, sizeof err, "--turns: expected A..B with 1 <= A <= B <= 10000, got '%s'", c->workload.agentic_turns);
        else if ((rc = agentic_parse_think(c->workload.think_time ? c->workload.think_time : "0", &g.think_min_s, &g.think_max_s)))
            snprintf(err, sizeof err, "--think-time: expected A..B seconds with 0 <= A <= B <= 86400, got '%s'",
                     c->workload.think_time);
        else
            rc = agentic_generate(&g, &x->agentic, err, sizeof err);
    }
    if (rc == 0 && agentic_to_dataset(&x->agentic, (uint64_t)c->workload.seed ^ x->salt, &x->ds) != 0)
        snprintf(err, sizeof err, "out of memory");
    if (rc != 0 || !x->ds.n) {
        snprintf(x->res->error, sizeof x->res->error, "%s%s", c->workload.agentic_file ? "--agentic: " : "", err);
        return -1;
    }
    x->eff.load.num_prompts = c->load.num_prompts > 0 ? c->load.num_prompts : (long)x->ds.n;
    x->eff.workload.multi_turn = true;
    x->eff.workload.dataset = x->ds.spec;
    return 0;
}

/* --prefix-hit-rate P: every measured prompt starts with one of G prefixes
 * of P·input_len tokens (chat template included), which G requests put in
 * the cache after it was emptied (prime_groups; the config as run has
 * the prefix as its shared prefix). */
static void plan_prefix(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    long groups = c->workload.prefix_groups > 1 ? c->workload.prefix_groups : 1;
    x->eff.workload.shared_prefix_len = (long)llround(c->workload.prefix_hit_rate * (double)c->workload.input_len);
    x->prefix_meta = (struct bench_prefix_cache){
        .target_hit_rate = c->workload.prefix_hit_rate, .groups = groups,
        .prefix_tokens = x->eff.workload.shared_prefix_len, .tolerance = RUN_PREFIX_HIT_TOLERANCE,
        .server_hit_rate = NAN, .server_met = -1,
    };
}

/* --prefix-hit-rate: one request per group puts its prefix in the emptied
 * cache — non-streamed, max_tokens 1, the measured requests' body options
 * (tools change the template's start), each prompt the group's prefix and
 * a head of its own (request indexes past the run's, one per group: seq ≡
 * g mod G). Sent before the server's pre-run reading, so its counters over
 * the load count the measured requests alone. A failed one is warned of. */
static void prime_groups(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    long groups = x->prefix_meta.groups, base = groups * ((c->load.warmup + c->load.num_prompts) / groups + 1);
    char url[600], err[600];
    snprintf(url, sizeof url, "%s%s", x->srv.base_url, endpoint_path(c->transport.endpoint));
    struct request_opts o = {.endpoint = c->transport.endpoint, .model = x->srv.model, .max_tokens = 1,
                             .sampling = c->workload.sampling, .extra_body = c->workload.extra_body, .tools = x->tools,
                             .tool_choice = x->tool_choice};
    for (long g = 0; g < groups; g++) {
        struct buf p;
        buf_init(&p, 1u << 30);
        char *body = workload_prompt(x->wl, base + g, PROMPT_HEAD_WORDS, &p) == 0 ? request_body(&o, p.data) : NULL;
        buf_free(&p);
        long status = 0;
        cJSON *reply = body ? server_fetch_json(url, x->headers, body, (long)(c->transport.timeout_s * 1000), &status, err,
                                                sizeof err) : NULL;
        free(body);
        if (reply && status == 200)
            x->prefix_meta.primed_requests++;
        else
            run_say(x, "warning: priming prefix group %ld failed (%s)", g, reply ? "HTTP error" : err);
        cJSON_Delete(reply);
    }
}

/* --flush-cache, --prefix-hit-rate: empties the server's prefix cache after
 * calibration, before any request the run sends. A server that cannot is
 * warned about; the run goes on. */
static void flush_cache(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    if (!c->workload.flush_cache && c->workload.prefix_hit_rate <= 0)
        return;
    if (c->workload.prefix_hit_rate <= 0)
        x->prefix_meta = (struct bench_prefix_cache){.target_hit_rate = NAN, .tolerance = RUN_PREFIX_HIT_TOLERANCE,
                                                     .server_hit_rate = NAN, .server_met = -1};
    char err[600];
    const char *path;
    enum cache_flush f = server_flush_prefix_cache(&x->srv, x->headers, (long)(fmin(c->transport.timeout_s, 30) * 1000),
                                                   &path, err, sizeof err);
    x->prefix_meta.present = true;
    /* borrowed for the artifact, which copies them (the struct's strings are owned when read) */
    x->prefix_meta.flush = (char *)cache_flush_name(f);
    x->prefix_meta.flush_endpoint = (char *)path;
    if (f == CACHE_FLUSHED)
        run_say(x, "prefix cache emptied (POST %s)", path);
    else
        run_say(x, "warning: %s", err);
}

/* The achieved prefix hit rate against --prefix-hit-rate, as the artifact
 * records it (workload.prefix_cache.met, server_met): from cached_tokens,
 * then from the server's counters; a warning when one is not met. */
static void check_hit_rate(const struct run_ctx *x)
{
    const struct run_summary *s = &x->res->summary;
    double p = x->c->workload.prefix_hit_rate, srv = x->prefix_meta.server_hit_rate;
    if (!s->cached_reports || !s->prompt_tokens) {
        run_say(x, "warning: --prefix-hit-rate %g not validated: the server reported no cached_tokens", p);
    } else {
        double got = (double)s->cached_tokens / (double)s->prompt_tokens;
        if (fabs(got - p) > RUN_PREFIX_HIT_TOLERANCE * p)
            run_say(x, "warning: prefix hit rate %.3f, not the %g asked for (within %g%%)", got, p,
                    RUN_PREFIX_HIT_TOLERANCE * 100);
        else
            run_say(x, "prefix hit rate %.3f (asked for %g)", got, p);
    }
    if (isnan(srv))
        run_say(x, "note: no prefix hit rate from the server's counters (%s)",
                x->c->observe.server_metrics && !strcmp(x->c->observe.server_metrics, "off") ? "--server-metrics off"
                                                                              : "none reported");
    else if (fabs(srv - p) > RUN_PREFIX_HIT_TOLERANCE * p)
        run_say(x, "warning: the server's counters give a prefix hit rate of %.3f, not the %g asked for "
                "(%s)", srv, p, x->prefix_meta.server_hit_rate_source);
    else
        run_say(x, "prefix hit rate %.3f by the server's counters (%s)", srv, x->prefix_meta.server_hit_rate_source);
}

/* Whether the run measured something: a request completed or, in duration
 * mode, output tokens arrived inside the window (every request may outlast
 * it: the window's throughput is then the figure, and the run is
 * capacity-limited, not failed; said once). */
/* Whose doing a prompt-length miss was: anvil's own prompts when they were
 * off target (calibration that did not converge, --prefix-hit-rate's
 * composed prompts), else the server's counting of the text it was sent. */
static void blame_prompt_mismatch(const struct run_ctx *x)
{
    const struct calibration *cal = &x->cal;
    if (!x->res->summarized || !x->res->summary.prompt_mismatch)
        return;
    if (x->calibration_method && !strcmp(x->calibration_method, "none"))
        run_say(x, "the prompt-length misses are expected: with --calibration none, prompts of --input-len "
                "words were sent unfitted to the server's tokenizer");
    else if (cal->n_steps && !cal->converged)
        run_say(x, "the prompt-length misses are anvil's: calibration stopped at %ld tokens for a target of "
                "%ld (±%ld), so its prompts were off target before the server saw them", cal->tokens,
                cal->target_tokens, cal->tolerance_tokens);
    else if (x->c->workload.prefix_hit_rate > 0)
        run_say(x, "the prompt-length misses are anvil's: --prefix-hit-rate prompts join a shared prefix and "
                "a unique part, and their lengths can miss the plan by a few tokens");
    else
        run_say(x, "anvil's prompts were on target (calibrated to %ld tokens), yet the server counted "
                "others: truncated or re-templated prompts?", cal->n_steps ? cal->tokens : x->c->workload.input_len);
}

static bool measured(const struct run_ctx *x)
{
    const struct run_summary *s = &x->res->summary;
    if (s->completed > 0)
        return true;
    if (x->c->load.duration_s <= 0 || !(s->window_tokens > 0))
        return false;
    run_say(x, "no request completed inside the %g s window (every stream outlasted it): the window's %.0f "
            "output tokens are the measurement (%.1f tok/s), not a failure", x->c->load.duration_s,
            s->window_tokens, s->aggregate_tps);
    return true;
}

/* The config as run, x->eff (a copy of the caller's), completed once before
 * anything is set up or sent: --prefix-hit-rate's shared prefix, a trace's
 * request count, agentic sessions' turns as a multi-turn dataset. Returns
 * 0, or -1 with the reason in x->res->error. */
static int plan(struct run_ctx *x)
{
    const struct run_workload *w = &x->c->workload;
    if (w->prefix_hit_rate > 0)
        plan_prefix(x);
    if (trace_spec_is_trace(w->dataset) && load_trace(x) != 0)
        return -1;
    if ((w->agentic_file || w->agentic_sessions > 0) && plan_agentic(x) != 0)
        return -1;
    return 0;
}

enum run_status run_execute(const struct run_config *c, struct run_result *out)
{
    *out = (struct run_result){.status = RUN_FAILED, .peak_events_per_s = -1};
    struct run_ctx x = {.eff = *c, .res = out, .salt = prompt_random_salt(), .image_tokens = NAN};
    x.c = &x.eff;   /* for the whole run; plan() completes x.eff before set_up */
    make_run_id(out->run_id, sizeof out->run_id, x.salt);
    if (run_secrets(c, &x.secrets) != 0) {
        snprintf(out->error, sizeof out->error, "out of memory");
        secrets_free(&x.secrets);
        return out->status;
    }
    /* the endpoint first: a port in use is a usage error before any request */
    struct live_server *live = NULL;
    char why[512];
    live_init(&x.live);
    if (c->observe.metrics_listen && !c->prepare_only &&
        !(live = live_server_start(c->observe.metrics_listen, &x.live, why, sizeof why))) {
        snprintf(out->error, sizeof out->error, "--metrics-listen: %s", why);
        out->refused = true;
        secrets_free(&x.secrets);
        return out->status;
    }
    struct driver_result dr = {0};
    x.ts_on = ts_init(&x.ts, c->out.timeseries_interval_s, c->out.pct) == 0;
    bool ready = plan(&x) == 0 && set_up(&x) == 0;
    out->calibrated = x.cal.n_steps > 0 && x.calibration_source;
    out->calibration_source = x.calibration_source;
    out->calibration_words = x.cal.words;
    out->calibration_tokens = x.cal.tokens;
    if (ready && x.c->prepare_only) {
        out->status = RUN_OK;
        ready = false;
    }
    if (ready) {
        flush_cache(&x);
        if (x.c->workload.prefix_hit_rate > 0)
            prime_groups(&x);
        run_observe_start(&x);
    }
    if (ready && drive(&x, &dr) == 0) {
        run_count_text_tokens(&x, &dr);
        run_shard_records(&x, &dr);
        run_observe_finish(&x, &dr);
        out->window_start = dr.phase_ns[SAMPLER_WINDOW_START];
        out->window_end = dr.phase_ns[SAMPLER_WINDOW_END];
        out->peak_events_per_s = dr.peak_events_per_s;
        int written = run_write_outputs(&x, &dr);
        if (x.c->workload.prefix_hit_rate > 0 && out->summarized)
            check_hit_rate(&x);
        blame_prompt_mismatch(&x);
        if (written == 0)
            out->status = out->incomplete || !measured(&x) ? RUN_INCOMPLETE : RUN_OK;
        driver_result_free(&dr);
    }
    if (x.requests_log)
        fclose(x.requests_log);
    if (x.journal && fclose(x.journal) != 0)
        out->log_errors++;
    if (out->log_errors && out->status == RUN_OK)
        out->status = RUN_INCOMPLETE;
    live_server_stop(live);     /* after the artifact: a last scrape sees the final counts */
    run_observe_free(&x);
    if (x.ts_on)
        ts_free(&x.ts);
    curl_slist_free_all(x.headers);
    workload_free(x.wl);
    dataset_free(&x.ds);
    cJSON_Delete(x.tools);
    trace_free(&x.trace);
    agentic_free(&x.agentic);
    for (long i = 0; x.calib_images && i < x.c->workload.images_per_request; i++)
        buf_free(&x.calib_images[i]);
    free(x.calib_images);
    free(x.calib_urls);
    free(x.trace_due);
    cJSON_Delete(x.tool_choice);
    plan_shard_free(&x.shard);
    secrets_scrub(&x.secrets, out->error, sizeof out->error);  /* a server's reply may be quoted in it */
    secrets_free(&x.secrets);
    return out->status;
}

static void kept_free(struct run_kept *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n_texts; i++)
        buf_free(&k->texts[i].text);
    free(k->texts);
    buf_free(&k->spill);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

int run_records_open(const struct run_result *r, struct run_records *rr, char *err, size_t errlen)
{
    *rr = (struct run_records){0};
    if (!r->kept) {
        rec_iter_array(&rr->it, r->records, r->n_records);
        return 0;
    }
    struct run_kept *k = r->kept;
    k->read.spill = &k->spill;
    k->read.counts = k->texts;
    k->read.n_counts = k->n_texts;
    if (!(rr->j = malloc(sizeof *rr->j))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (jiter_open(rr->j, &rr->it, r->journal_path, &k->read, err, errlen) != 0) {
        free(rr->j);
        rr->j = NULL;
        return -1;
    }
    return 0;
}

void run_records_close(struct run_records *rr)
{
    if (rr->j)
        jiter_close(rr->j);
    free(rr->j);
    rr->j = NULL;
}

void run_result_free(struct run_result *r)
{
    kept_free(r->kept);
    r->kept = NULL;
    for (int i = 0; r->records && i < r->n_records; i++)
        record_free(&r->records[i]);
    free(r->records);
    r->records = NULL;
    if (r->observe)
        observe_report_free(r->observe);
    free(r->observe);
    r->observe = NULL;
}

bool run_stalled_text(const struct run_result *r, char *out, size_t cap)
{
    if (!r->server_stalled.stalled)
        return false;
    snprintf(out, cap, "server_stalled: no byte on any in-flight request for %g s (--stall-timeout-s)",
             r->server_stalled.timeout_s);
    return true;
}

void run_failures_text(const struct run_result *r, char *out, size_t cap)
{
    const struct req_record *first = NULL;
    for (int i = 0; i < r->n_records && !first; i++)
        if (r->records[i].t_start && r->records[i].fail != FAIL_NONE)
            first = &r->records[i];
    const struct run_kept *k = r->kept;
    bool known = first || (k && k->first_fail_index >= 0);
    if (!known || r->summary.failed == 0)
        snprintf(out, cap, "no request completed");
    else
        snprintf(out, cap, "%d of %d requests failed (first: %s: %.300s)", r->summary.failed, r->summary.sent,
                 fail_kind_name(first ? first->fail : k->first_fail), first ? first->fail_msg : k->first_fail_msg);
}
