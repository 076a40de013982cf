/* sim.c — `anvil sim`: flags, process setup and the event loop. */
#include "sim/sim.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sim/server.h"

enum flag_kind { F_STR, F_PORT, F_POSINT, F_MS, F_U64 };

struct flag {
    const char *name;
    enum flag_kind kind;
    const char *metavar;
    const char *help;
};

static const struct flag flags[] = {
    {"--host", F_STR, "ADDR", "address to listen on (default 127.0.0.1)"},
    {"--port", F_PORT, "N", "TCP port, 0 picks a free one (default 8000)"},
    {"--model", F_STR, "NAME", "served model name (default anvil-sim)"},
    {"--max-model-len", F_POSINT, "TOKENS", "context window in tokens (default 32768)"},
    {"--ttft-ms", F_MS, "MS", "time to first token in milliseconds, fractions allowed (default 20)"},
    {"--itl-ms", F_MS, "MS", "inter-token latency in milliseconds, fractions allowed (default 5)"},
    {"--trace", F_STR, "FILE", "write one JSON line per request to FILE (default: none)"},
    {"--seed", F_U64, "N", "seed of the output text and early stops (default 0)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil sim [flags]\n\n"
                 "Serves an OpenAI-compatible engine simulator (vLLM-shaped) with fixed latency:\n"
                 "token i of a reply is due at arrival + ttft + i*itl. The first line on stdout is\n"
                 "'listening on http://HOST:PORT'. SIGINT/SIGTERM stop it cleanly.\n\nflags:\n");
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        char left[40];
        snprintf(left, sizeof left, "%s %s", flags[i].name, flags[i].metavar);
        fprintf(out, "  %-24s %s\n", left, flags[i].help);
    }
    fprintf(out, "  %-24s %s\n\nSee docs/SIM.md for endpoints, the token model and the trace format.\n",
            "-h, --help", "show this help and exit");
}

static int bad_value(const char *name, const char *want, const char *got)
{
    fprintf(stderr, "anvil sim: %s: expected %s, got '%s'\n", name, want, got);
    return -1;
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Stores value into the field of cfg that flag f sets. */
static int set_flag(const struct flag *f, const char *v, struct sim_config *cfg)
{
    int64_t n;
    if (!strcmp(f->name, "--host") || !strcmp(f->name, "--model") || !strcmp(f->name, "--trace")) {
        if (!*v)
            return bad_value(f->name, "a non-empty string", v);
        *(!strcmp(f->name, "--host") ? &cfg->host : !strcmp(f->name, "--model") ? &cfg->model
                                                                                : &cfg->trace_path) = v;
    } else if (!strcmp(f->name, "--port")) {
        if (parse_i64(v, 0, 65535, &n))
            return bad_value(f->name, "an integer 0..65535", v);
        cfg->port = (int)n;
    } else if (!strcmp(f->name, "--max-model-len")) {
        if (parse_i64(v, 1, INT64_C(1) << 40, &n))
            return bad_value(f->name, "a positive integer (tokens)", v);
        cfg->max_model_len = n;
    } else if (!strcmp(f->name, "--seed")) {
        char *end;
        errno = 0;
        unsigned long long u = strtoull(v, &end, 10);
        if (errno || end == v || *end || *v == '-')
            return bad_value(f->name, "an unsigned integer", v);
        cfg->seed = u;
    } else {
        char *end;
        errno = 0;
        double ms = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(ms) || ms < 0 || ms > 86400e3)
            return bad_value(f->name, "milliseconds >= 0 (e.g. 20 or 0.5)", v);
        *(!strcmp(f->name, "--ttft-ms") ? &cfg->ttft_ns : &cfg->itl_ns) = llround(ms * 1e6);
    }
    return 0;
}

static const struct flag *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len))
            return &flags[i];
    return NULL;
}

/* Returns 0 to run, 1 after --help, -1 on a usage error (already reported). */
static int parse_args(int argc, char **argv, struct sim_config *cfg)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 1;
        }
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        const struct flag *f = find_flag(a, nlen);
        if (!f) {
            fprintf(stderr, "anvil sim: unknown flag '%.*s' (try 'anvil sim --help')\n", (int)nlen, a);
            return -1;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) {
            fprintf(stderr, "anvil sim: %s needs a value (%s)\n", f->name, f->metavar);
            return -1;
        }
        if (set_flag(f, v, cfg) != 0)
            return -1;
    }
    return 0;
}

/* ≥ 1024 concurrent streams need ≥ 1024 descriptors: take what the hard
 * limit allows. Failure is not fatal; the run may just hold fewer streams. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    event_base_loopbreak(arg);
}

/* Precise timers (timerfd, not CLOCK_MONOTONIC_COARSE's ~4 ms ticks) and no
 * cached "now", so a timer armed late in a busy callback is not early. */
static struct event_base *new_base(void)
{
    struct event_config *ec = event_config_new();
    if (!ec)
        return NULL;
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER | EVENT_BASE_FLAG_NO_CACHE_TIME);
    struct event_base *base = event_base_new_with_config(ec);
    event_config_free(ec);
    return base;
}

static void print_listening(const struct sim_config *cfg, int port)
{
    bool v6 = strchr(cfg->host, ':') != NULL;
    printf("listening on http://%s%s%s:%d\n", v6 ? "[" : "", cfg->host, v6 ? "]" : "", port);
    fflush(stdout);
}

/* Runs the loop until a signal; returns the exit status. */
static int serve(const struct sim_config *cfg)
{
    struct event_base *base = new_base();
    if (!base) {
        fprintf(stderr, "anvil sim: cannot create the event loop\n");
        return 1;
    }
    char err[512];
    struct sim_server *s = sim_server_new(base, cfg, err, sizeof err);
    struct event *sigint = evsignal_new(base, SIGINT, on_signal, base);
    struct event *sigterm = evsignal_new(base, SIGTERM, on_signal, base);
    int rc = 1;
    if (!s)
        fprintf(stderr, "anvil sim: %s\n", err);
    else if (!sigint || !sigterm || evsignal_add(sigint, NULL) || evsignal_add(sigterm, NULL))
        fprintf(stderr, "anvil sim: cannot install signal handlers\n");
    else {
        print_listening(cfg, s->port);
        rc = event_base_dispatch(base) < 0 ? 1 : 0;
    }
    if (sim_server_free(s) != 0) {
        fprintf(stderr, "anvil sim: writing --trace '%s' failed\n", cfg->trace_path);
        rc = 1;
    }
    if (sigint)
        event_free(sigint);
    if (sigterm)
        event_free(sigterm);
    event_base_free(base);
    return rc;
}

int sim_main(int argc, char **argv)
{
    struct sim_config cfg = {
        .host = "127.0.0.1", .port = 8000, .model = "anvil-sim", .max_model_len = 32768,
        .ttft_ns = 20000000, .itl_ns = 5000000, .trace_path = NULL, .seed = 0,
    };
    int p = parse_args(argc, argv, &cfg);
    if (p != 0)
        return p > 0 ? 0 : 2;
    raise_nofile();
    signal(SIGPIPE, SIG_IGN);   /* a client gone mid-write is an error return, not a death */
    int rc = serve(&cfg);
    libevent_global_shutdown();  /* frees libevent's globals: LSan-clean exit */
    return rc;
}
