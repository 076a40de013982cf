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
#include "core/redact.h"
#include "load/driver.h"
#include "run/stage.h"
#include "workload/prompt.h"

void run_config_defaults(struct run_config *c)
{
    *c = (struct run_config){
.api_key_env = "OPENAI_API_KEY",
        .endpoint = EP_CHAT, .concurrency = 1, .num_prompts = 100, .input_len = 1024,
        .output_len = 128, .ignore_eos = true, .pct = PCT_NEAREST, .calib = CALIB_AUTO,
        .timeout_s = 600, .connect_timeout_s = 10, .idle_timeout_s = 120, .grace_s = 5,
        .request_rate = INFINITY, .burstiness = 1, .slo = {NAN, NAN, NAN}, .name = "anvil run",
    };
}

/* Whether url's scheme is one anvil speaks. */
static bool http_scheme(const char *url)
{
    return !strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8);
}

/* Bytes of memory the machine has, or 0 when unknown. */
static double physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

int run_config_check(const struct run_config *c, char *err, size_t errlen)
{
    double mem = physical_memory(), need = (double)(c->num_prompts + c->warmup) * sizeof(struct req_record);
    if (c->base_url && !http_scheme(c->base_url))
        snprintf(err, errlen, "--base-url %.200s: only http:// and https:// servers are supported",
                 strchr(c->base_url, '@') ? "(credentials withheld)" : c->base_url);
    else if (mem > 0 && need > mem / 2)
        snprintf(err, errlen, "--num-prompts %ld: the per-request records alone need %.1f GiB, more than "
                 "half of this machine's %.1f GiB; use fewer prompts or --duration", c->num_prompts,
                 need / (1 << 30), mem / (1 << 30));
    else if (c->shared_prefix_len > 0 && c->shared_prefix_len >= c->input_len)
        snprintf(err, errlen, "--shared-prefix-len (%ld) must be below --input-len (%ld): the "
                 "unique part follows the shared one", c->shared_prefix_len, c->input_len);
    else if (c->multi_turn && !c->dataset)
        snprintf(err, errlen, "--multi-turn needs --dataset (conversations come from a file)");
    else if (c->warmup_s > 0 && c->duration_s <= 0)
        snprintf(err, errlen, "--warmup-s goes with --duration (use --warmup N otherwise)");
    else if (isinf(c->request_rate) && c->concurrency < 1)
        snprintf(err, errlen, "the closed loop needs --concurrency of at least 1");
    else
        return 0;
    return -1;
}

void run_say(const struct run_ctx *x, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (x->secret)
        redact(msg, sizeof msg, x->secret);
    fprintf(x->c->log ? x->c->log : stderr, "%s: %s\n", x->c->name ? x->c->name : "anvil", msg);
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
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)x->c->concurrency + 64 > rl.rlim_cur)
        run_say(x, "warning: %ld requests in flight need more sockets than the open-file limit "
                "(%llu) allows", x->c->concurrency, (unsigned long long)rl.rlim_cur);
}

static void announce(const struct run_ctx *x)
{
    const struct run_config *c = x->c;
    char load[128], cap[48] = "no cap";
    if (c->concurrency > 0)
        snprintf(cap, sizeof cap, "max concurrency %ld", c->concurrency);
    if (isinf(c->request_rate))
        snprintf(load, sizeof load, "concurrency %ld", c->concurrency);
    else
        snprintf(load, sizeof load, "%g req/s (burstiness %g, %s)", c->request_rate, c->burstiness, cap);
    char amount[96];
    if (c->duration_s > 0)
        snprintf(amount, sizeof amount, "for %g s after %g s of warm-up", c->duration_s, c->warmup_s);
    else
        snprintf(amount, sizeof amount, "%ld prompts", c->num_prompts);
    char shape[600];
    if (c->dataset)
        snprintf(shape, sizeof shape, "prompts from %s", c->dataset);
    else
        snprintf(shape, sizeof shape, "%ld→%ld tokens", c->input_len, c->output_len);
    run_say(x, "%s model %s (%s), %s at %s, %s", x->srv.display_url, x->srv.model, x->srv.engine,
            amount, load, shape);
    if (!isinf(c->request_rate) && 1 / c->request_rate > 60)
        run_say(x, "warning: at --request-rate %g the requests are on average %.0f s apart: the first "
                "one is expected about %.0f s from now", c->request_rate, 1 / c->request_rate,
                1 / c->request_rate);
}

/* Sends the load. Returns 0, or -1 when the loop could not be set up. */
static int drive(struct run_ctx *x, struct driver_result *dr)
{
    const struct run_config *c = x->c;
    char url[600], models_url[600];
    snprintf(url, sizeof url, "%s%s", x->srv.base_url, endpoint_path(c->endpoint));
    snprintf(models_url, sizeof models_url, "%s/models", x->srv.base_url);
    struct driver_cfg cfg = {
        .url = url, .headers = x->headers, .concurrency = (int)c->concurrency,
        .request_rate = c->request_rate, .burstiness = c->burstiness, .seed = (uint64_t)c->seed,
        .num_prompts = (int)c->num_prompts, .warmup = (int)c->warmup,
        .duration_s = c->duration_s, .warmup_s = c->warmup_s,
        .connect_timeout_ms = (long)(c->connect_timeout_s * 1000),
        .timeout_ms = (long)(c->timeout_s * 1000), .idle_timeout_s = c->idle_timeout_s,
        .grace_s = c->grace_s, .secret = x->secret, .progress = c->progress,
        .make_body = run_make_body, .on_record = run_log_record, .ud = x,
        .follows = c->multi_turn ? run_follows : NULL, .prewarm_url = models_url,
        .samplers = c->samplers, .n_samplers = c->n_samplers,
    };
    announce(x);
    clock_utc_iso8601(x->started_at);
    if (run_journal_header(x) != 0)
        return -1;
    if (driver_run(&cfg, dr) != 0) {
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

/* Request headers: the caller's, and the API key as a bearer token. */
static int build_headers(struct run_ctx *x)
{
    for (const struct curl_slist *h = x->c->headers; h; h = h->next)
        if (!(x->headers = curl_slist_append(x->headers, h->data)))
            return -1;
    if (x->secret && *x->secret) {
        struct buf h;
        buf_init(&h, 8192);
        buf_printf(&h, "Authorization: Bearer %s", x->secret);
        struct curl_slist *l = h.data ? curl_slist_append(x->headers, h.data) : NULL;
        buf_free(&h);
        if (!l)
            return -1;
        x->headers = l;
    }
    return 0;
}

/* Discovery, retried once a second for up to --ready-check-timeout-sec
 * while the server is not (yet) answering. Returns 0, or -1 with the last
 * reason in x->res->error. */
static int discover_ready(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    long setup_ms = (long)(fmin(c->timeout_s, 30) * 1000);
    int64_t deadline = clock_now_ns() + (int64_t)(c->ready_timeout_s * 1e9);
    for (bool said = false;; said = true) {
        if (discover(c->base_url ? c->base_url : RUN_DEFAULT_BASE_URL, x->headers, c->model, setup_ms,
                     &x->srv, x->res->error, sizeof x->res->error) == 0)
            return 0;
        if (clock_now_ns() + 1000000000 > deadline)
            return -1;
        if (!said)
            run_say(x, "waiting up to %g s for the server (%s)", c->ready_timeout_s, x->res->error);
        struct timespec one = {1, 0};
        nanosleep(&one, NULL);
    }
}

/* The steps before the load: every output path checked, headers, discovery,
 * workload. Returns 0, or -1 with the reason in x->res->error. */
static int set_up(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    struct run_result *res = x->res;
    char err[512];
    if (c->out)
        snprintf(res->artifact_path, sizeof res->artifact_path, "%s", c->out);
    else
        snprintf(res->artifact_path, sizeof res->artifact_path, "%s/%s.json",
                 c->out_dir ? c->out_dir : "results", res->run_id);
    /* fail before measuring anything, not after */
    if (artifact_check_path(res->artifact_path, err, sizeof err) != 0) {
        snprintf(res->error, sizeof res->error, "--out: %s", err);
        return -1;
    }
    if (c->requests_out && !(x->requests_log = fopen(c->requests_out, "a"))) {
        snprintf(res->error, sizeof res->error, "cannot open --requests-out %s: %s",
                 c->requests_out, strerror(errno));
        return -1;
    }
    if (build_headers(x) != 0) {
        snprintf(res->error, sizeof res->error, "out of memory");
        return -1;
    }
    raise_fd_limit(x);
    if (discover_ready(x) != 0) {
        if (x->secret)
            redact(res->error, sizeof res->error, x->secret);
        return -1;
    }
    if (run_prepare_workload(x) != 0)
        return -1;
    return run_journal_open(x);
}

enum run_status run_execute(const struct run_config *c, struct run_result *out)
{
    *out = (struct run_result){.status = RUN_FAILED};
    struct run_ctx x = {.c = c, .res = out, .salt = prompt_random_salt(),
                        .secret = c->api_key_env ? getenv(c->api_key_env) : NULL};
    make_run_id(out->run_id, sizeof out->run_id, x.salt);
    struct driver_result dr = {0};
    if (set_up(&x) == 0 && drive(&x, &dr) == 0) {
        if (run_write_outputs(&x, &dr) == 0)
            out->status = out->incomplete || out->summary.completed == 0 ? RUN_INCOMPLETE : RUN_OK;
        driver_result_free(&dr);
    }
    if (x.requests_log)
        fclose(x.requests_log);
    if (x.journal && fclose(x.journal) != 0)
        out->log_errors++;
    if (out->log_errors && out->status == RUN_OK)
        out->status = RUN_INCOMPLETE;
    curl_slist_free_all(x.headers);
    workload_free(x.wl);
    dataset_free(&x.ds);
    return out->status;
}

void run_result_free(struct run_result *r)
{
    for (int i = 0; r->records && i < r->n_records; i++)
        record_free(&r->records[i]);
    free(r->records);
    r->records = NULL;
}
