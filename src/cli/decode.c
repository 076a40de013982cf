/* decode.c — `anvil decode`: the flag table → a decode_config →
 * decode_execute → an exit code. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "core/dirlock.h"
#include "core/stop.h"
#include "decode/matrix.h"
#include "report/decode_table.h"
#include "run/outcome.h"

struct decode_cli {
    struct decode_config d;
    struct curl_slist *headers;     /* --header values; owned */
};

#define AT(f) offsetof(struct decode_cli, d.f)
#define RUN(f) offsetof(struct decode_cli, d.run.f)

static int set_header(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct decode_cli *r = cfg;
    return flag_header(cmd, flag, v, &r->headers);
}

static int set_list(const char *cmd, const char *flag, const char *v, long min, long *out, size_t *n)
{
    char err[300];
    int k = decode_parse_sizes(v, min, out, DECODE_MAX_LIST, err, sizeof err);
    if (k < 0) {
        fprintf(stderr, "anvil %s: --%s: %s\n", cmd, flag, err);
        return -1;
    }
    *n = (size_t)k;
    return 0;
}

static int set_conc(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct decode_cli *r = cfg;
    r->d.concurrency_arg = v;
    return set_list(cmd, flag, v, 1, r->d.conc, &r->d.n_conc);
}

static int set_ctx(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct decode_cli *r = cfg;
    r->d.contexts_arg = v;
    return set_list(cmd, flag, v, 0, r->d.ctx, &r->d.n_ctx);
}

static int set_prefill_ctx(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct decode_cli *r = cfg;
    r->d.prefill_contexts_arg = v;
    return set_list(cmd, flag, v, 1, r->d.prefill_ctx, &r->d.n_prefill_ctx);
}

static int set_temperature(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct decode_cli *r = cfg;
    r->d.run.workload.sampling.has_temperature = true;
    return flag_double(cmd, flag, v, 0, &r->d.run.workload.sampling.temperature);
}

static const char *const telemetry_names[] = {"auto", "on", "off", NULL};    /* enum obs_mode's order */
static const char *const metric_names[] = {"client", "server", NULL};       /* enum prefill_metric's order */

static const struct flag_spec flags[] = {
    {"base-url", NULL, FLAG_STRING, RUN(transport.base_url), "URL", NULL,
     "OpenAI base URL (default " RUN_DEFAULT_BASE_URL ")", .section = "Server"},
    {"endpoint", NULL, FLAG_STRING, RUN(compat.endpoint), "chat|completions|PATH", NULL,
     "API to call, or its path (/v1/chat/completions) (default chat)"},
    {"model", NULL, FLAG_STRING, RUN(transport.model), "NAME", NULL, "model to benchmark (default: the first served)"},
    {"api-key-env", NULL, FLAG_STRING, RUN(transport.api_key_env), "VAR", "OPENAI_API_KEY",
     "environment variable holding the API key (sent as a bearer token, never written)"},
    {"header", NULL, FLAG_CUSTOM, 0, "'Name: value'", NULL, "extra request header (repeatable)",
     .parse = set_header},
    {"continuous-usage", NULL, FLAG_ON, RUN(workload.continuous_usage), NULL, NULL,
     "ask any server for usage on every chunk (default: vLLM, SGLang and anvil-sim are asked)"},
    {"no-continuous-usage", NULL, FLAG_ON, RUN(workload.no_continuous_usage), NULL, NULL,
     "ask no server for usage on every chunk (tokens then come from the final usage or the tokenizer)"},
    {"concurrency", NULL, FLAG_CUSTOM, 0, "LIST", "1,2,4", "streams of each cell, e.g. 1,2,4",
     .parse = set_conc, .section = "The matrix"},
    {"contexts", NULL, FLAG_CUSTOM, 0, "LIST", "0,8k,64k",
     "context of each cell in tokens (prompt + --max-tokens; k = 1024; 0 = a minimal prompt)", .parse = set_ctx},
    {"duration", NULL, FLAG_DURATION, AT(duration_s), "DUR", "10",
     "each cell's measured window (seconds, or 90s, 5m, 1h)", .min = 0.01, .max = FLAG_YEAR_S},
    {"max-tokens", NULL, FLAG_LONG, AT(max_tokens), "N", "1024", "output tokens of every request (ignore_eos)",
     .min = 2, .max = 10000000},
    {"temperature", NULL, FLAG_CUSTOM, 0, "T", NULL, "sampling temperature (default: not sent)",
     .parse = set_temperature},
    {"ready-stable-s", NULL, FLAG_DOUBLE, AT(ready_stable_s), "S", "3",
     "the readiness condition must hold this long before a window opens, seconds", .section = "Readiness"},
    {"cell-warmup-timeout-s", NULL, FLAG_DOUBLE, AT(cell_warmup_timeout_s), "S", "0",
     "longest warm-up of a cell, seconds; 0 = by context: <=32k 60, 64k 120, >=128k 180"},
    {"decode-warmup-s", NULL, FLAG_DOUBLE, AT(decode_warmup_s), "S", "3",
     "a warm-up cell (lowest concurrency, largest context) this long before the matrix; 0 = none"},
    {"kv-budget", NULL, FLAG_LONG, AT(kv_budget), "TOKENS", "0",
     "the server's KV cache in tokens when it does not report it; 0 = from the server", .max = 1e12},
    {"accept-norm-ref-len", NULL, FLAG_DOUBLE, AT(accept_norm_ref_len), "L", "0",
     "acceptance length to normalize to: accept_norm_tps = steps/s x L; 0 = off"},
    {"standalone-prefill", NULL, FLAG_ON, AT(standalone_prefill), NULL, NULL,
     "measure prefill by repeated cold prefills (one at a time, unique prompts, max_tokens 1) before the "
     "cells, instead of each context's first decode request", .section = "Prefill and bursts"},
    {"prefill-contexts", NULL, FLAG_CUSTOM, 0, "LIST", NULL,
     "prompt tokens of each prefill context (k = 1024; default: the non-zero --contexts); without "
     "--standalone-prefill a context the matrix does not run gets one cold prefill (scout_only)",
     .parse = set_prefill_ctx},
    {"prefill-samples", NULL, FLAG_LONG, AT(prefill_samples), "N", "3",
     "cold prefills per context with --standalone-prefill", .min = 1, .max = 100000},
    {"prefill-metric", NULL, FLAG_CHOICE, AT(prefill_metric), "client|server", "client",
     "the prefill headline: the client's TTFT, or the server's prefill time when its validation holds",
     .choices = metric_names},
    {"run-burst", NULL, FLAG_ON, AT(run_burst), NULL, NULL,
     "after the cells, a finite burst per context x concurrency, each request to its end (E2E decode)"},
    {"request-count", NULL, FLAG_LONG, AT(request_count), "N", "0",
     "requests of every burst; 0 = C x --burst-requests-per-concurrency", .max = 1000000},
    {"burst-requests-per-concurrency", NULL, FLAG_LONG, AT(burst_requests_per_concurrency), "N", "5",
     "a burst at concurrency C sends C x N requests (when --request-count is 0)", .min = 1, .max = 100000},
    {"server-metrics", NULL, FLAG_STRING, RUN(observe.server_metrics), "auto|off|URL", "auto",
     "the server's Prometheus /metrics (auto: the base URL's root)", .section = "Server and hardware"},
    {"scrape-interval-ms", NULL, FLAG_DOUBLE, RUN(observe.scrape_interval_ms), "MS", "1000",
     "/metrics scrapes during a cell, ms", .min = 10},
    {"telemetry", NULL, FLAG_CHOICE, RUN(observe.telemetry), "auto|on|off", "auto",
     "GPU and host telemetry (auto: when a GPU is found)", .choices = telemetry_names},
    {"telemetry-interval-ms", NULL, FLAG_DOUBLE, RUN(observe.telemetry_interval_ms), "MS", "1000",
     "GPU and host readings during a cell, ms", .min = 10},
    {"gpu-metrics-url", NULL, FLAG_STRING, RUN(observe.gpu_metrics_url), "URL", NULL,
     "a Prometheus GPU exporter (DCGM names) instead of NVML"},
    {"timeout-s", NULL, FLAG_DOUBLE, RUN(transport.timeout_s), "S", "600", "whole-request timeout, seconds",
     .section = "Requests"},
    {"connect-timeout-s", NULL, FLAG_DOUBLE, RUN(transport.connect_timeout_s), "S", "10", "connect timeout, seconds"},
    {"idle-timeout-s", NULL, FLAG_DOUBLE, RUN(transport.idle_timeout_s), "S", "120",
     "fail a request silent this long (a long prefill is silent), seconds"},
    {"stall-timeout-s", NULL, FLAG_DOUBLE, RUN(transport.stall_timeout_s), "S", NULL,
     "end the cell when no byte has arrived on any of its requests for this long, seconds: the cell "
     "and the matrix are incomplete (\"server_stalled\"), exit 1 (default: the --idle-timeout-s value; "
     "0 = never)", .min = 0},
    {"out-dir", NULL, FLAG_STRING, AT(dir), "DIR", "results/decode",
     "the resumable directory: cells, event log, calibration cache, decode.json", .section = "Output"},
    {"out", NULL, FLAG_STRING, AT(out), "FILE", NULL, "the artifact (default DIR/decode.json)"},
    {0},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil decode [flags]\n"
            "The sustained-decode matrix (seed 004): for every concurrency x context cell, C streams kept\n"
            "running until the server reports C running and none queued (--ready-stable-s), then a\n"
            "--duration window; prefill from each context's first request (or --standalone-prefill); server\n"
            "counters and hardware telemetry per cell; --run-burst adds finite bursts. A cut run resumes at\n"
            "the next cell (or phase) when run again with the same --out-dir.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 every cell measured; 1 incomplete (the cells done are "
            "written; run again to resume) or nothing measured; 2 usage error, or a context cell that cannot fit "
            "the server's context (refused before any request).\n", "-h, --help");
}

/* The matrix written, as `anvil show` renders it, and where it is. */
static void print_matrix(const struct decode_config *c, const struct decode_matrix *m)
{
    char path[4200];
    decode_artifact_path(c, path, sizeof path);
    struct rdoc doc = {0};
    decode_table(&doc, path, m, NULL);
    fputc('\n', stdout);
    if (rdoc_print(&doc, RF_TABLE, stdout) != 0)
        fprintf(stderr, "anvil decode: out of memory or cannot write the table\n");
    rdoc_free(&doc);
    printf("artifact: %s\n", path);
}

int decode_main(int argc, char **argv)
{
    struct decode_cli r = {0};
    run_config_defaults(&r.d.run);
    r.d.run.name = "anvil decode";
    int rc = flags_defaults("decode", flags, &r);
    if (rc == 0)
        rc = flags_parse("decode", flags, &r, argc, argv, NULL, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        curl_slist_free_all(r.headers);
        return 0;
    }
    char err[1600];
    r.d.run.transport.headers = r.headers;
    r.d.run.out.argc = argc;
    r.d.run.out.argv = argv;
    long most = 0;          /* the largest cell's streams must fit the open-file limit */
    for (size_t i = 0; i < r.d.n_conc; i++)
        most = r.d.conc[i] > most ? r.d.conc[i] : most;
    if (rc == 0 && (run_config_resolve(&r.d.run, err, sizeof err) != 0 ||
                    run_check_fd_limit(most, err, sizeof err) != 0)) {
        fprintf(stderr, "anvil decode: %s\n", err);
        rc = -1;
    }
    if (rc != 0) {
        if (rc < 0)
            fprintf(stderr, "anvil decode: see anvil decode --help\n");
        curl_slist_free_all(r.headers);
        return 2;
    }
    /* one measurement per directory (core/dirlock.h) */
    int lock_fd = dirlock_take(r.d.dir, "anvil decode", err, sizeof err);
    if (lock_fd < 0) {
        fprintf(stderr, "anvil decode: %s\n", err);
        curl_slist_free_all(r.headers);
        return 2;
    }
    stop_install();     /* Ctrl-C, SIGTERM, SIGHUP: stop at any step, keep the cells measured */
    struct decode_matrix m;
    enum decode_status st = decode_execute(&r.d, &m, err, sizeof err);
    if (m.n_results > 0)
        print_matrix(&r.d, &m);
    decode_matrix_free(&m);
    if (st != DECODE_OK)
        fprintf(stderr, "anvil decode: %s\n", err);
    dirlock_release(lock_fd);
    curl_slist_free_all(r.headers);
    struct outcome out = {.usage = st == DECODE_REFUSED, .failed = st == DECODE_FAILED,
                          .incomplete = st == DECODE_INCOMPLETE};
    return outcome_exit_status(&out, NULL, 0);
}
