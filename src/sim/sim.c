/* sim.c — `anvil sim`: flags, process setup and the event loop. */
#include "sim/sim.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/stop.h"
#include "sim/flavor.h"
#include "sim/profile.h"
#include "sim/server.h"
#include "sim/tokens.h"

enum flag_kind { F_STR, F_PORT, F_POSINT, F_MS, F_U64, F_PROB, F_STATUS, F_FLAVOR, F_TOKENS,
                 F_TOKENIZER, F_BOOL };

struct flag {
    const char *name;
    enum flag_kind kind;
    const char *metavar;      /* NULL: the flag takes no value (F_BOOL) */
    const char *help;
    bool fixed_ok;    /* allowed in fixed-latency mode */
};

/* Flags of the server itself; the engine model's flags come from the
 * parameter table in profile.c (one --flag per profile key). */
static const struct flag flags[] = {
    {"--host", F_STR, "ADDR", "address to listen on (default 127.0.0.1)", true},
    {"--port", F_PORT, "N", "TCP port, 0 picks a free one (default 8000)", true},
    {"--model", F_STR, "NAME", "served model name (default anvil-sim)", true},
    {"--max-model-len", F_POSINT, "TOKENS", "context window in tokens (default 32768)", true},
    {"--ttft-ms", F_MS, "MS", "fixed-latency mode: time to first token in milliseconds, "
     "fractions allowed (default 20)", true},
    {"--itl-ms", F_MS, "MS", "fixed-latency mode: inter-token latency in milliseconds, "
     "fractions allowed (default 5)", true},
    {"--trace", F_STR, "FILE", "write one JSON line per request to FILE (default: none)", true},
    {"--script", F_STR, "FILE", "answer every POST with the scripted reply in FILE (JSON Lines, "
     "docs/SCRIPT.md); GET endpoints still answer normally (default: none)", true},
    {"--seed", F_U64, "N", "seed of output text, early stops, acceptance and fault draws (default 0)", true},
    {"--flavor", F_FLAVOR, "NAME", "impersonate vllm, sglang or llamacpp (default: anvil-sim, "
     "vLLM-shaped)", true},
    {"--reasoning-tokens", F_TOKENS, "N", "chat: the first N output tokens stream as reasoning "
     "(default 0)", true},
    {"--tokenizer", F_TOKENIZER, "NAME", "how prompts split into tokens: words (whitespace-"
     "separated runs) or pieces (letter runs of <= 6, digit runs of <= 3, single other bytes, "
     "as BPE pre-tokenizers split) (default words)", true},
    {"--tokens-without-chunk", F_PROB, "P", "share 0..<1 of output tokens that send no chunk of "
     "their own; their text joins the next chunk, as llama.cpp holds partial UTF-8 (default 0)", true},
    {"--context-shift", F_BOOL, NULL, "truncate a prompt over the context as llama.cpp does "
     "(erasing blocks; usage reports what is kept) instead of answering 400", true},
    {"--profile", F_STR, "FILE", "engine parameters from a JSON profile; flags override it", false},
    {"--fail-rate", F_PROB, "P", "fault: answer --fail-status instead of serving, probability "
     "(default 0)", true},
    {"--fail-status", F_STATUS, "CODE", "fault: 429, 500 or 503; 429/503 carry Retry-After "
     "(default 503)", true},
    {"--disconnect-rate", F_PROB, "P", "fault: close the connection mid-stream, probability "
     "(default 0)", true},
    {"--stream-error-rate", F_PROB, "P", "fault: an error event inside a 200 stream, probability "
     "(default 0)", true},
    {"--stall-ms", F_MS, "MS", "fault: every reply pauses this long half-way (default 0)", true},
    {"--slow-headers-ms", F_MS, "MS", "fault: send nothing for this long after arrival "
     "(default 0)", true},
    {"--metrics-fail-rate", F_PROB, "P", "fault: this share of GET /metrics taken while requests are in "
     "flight is answered 503, evenly spread (default 0)", true},
};

#define N_FLAGS (sizeof flags / sizeof *flags)

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil sim [flags]\n\n"
                 "Serves an OpenAI-compatible engine simulator. By default it models an engine\n"
                 "(continuous batching, chunked prefill, paged KV cache, preemption, prefix caching,\n"
                 "speculative decoding); one step takes, in ms,\n"
                 "  decode_base_ms + decode_ms_per_seq*seqs + attn_ms_per_ktok*context_tokens/1000\n"
                 "  + [prefill] (prefill_base_ms + 1000*prefill_tokens/prefill_tok_s)\n"
                 "  + draft_ms_per_token*draft_tokens.\n"
                 "With --ttft-ms and/or --itl-ms it runs in fixed-latency mode instead: token i of a\n"
                 "reply is due at arrival + ttft + i*itl. The first line on stdout is\n"
                 "'listening on http://HOST:PORT'. SIGINT/SIGTERM/SIGHUP stop it cleanly.\n\nflags:\n");
    for (size_t i = 0; i < N_FLAGS; i++) {
        char left[40];
        snprintf(left, sizeof left, "%s %s", flags[i].name, flags[i].metavar ? flags[i].metavar : "");
        fprintf(out, "  %-26s %s\n", left, flags[i].help);
    }
    fprintf(out, "\nengine model (also keys of a --profile JSON file, with '_' for '-'):\n");
    for (size_t i = 0; i < sim_param_count(); i++) {
        char left[48], name[40];
        snprintf(name, sizeof name, "%s", sim_param_key(i));
        for (char *c = name; *c; c++)
            *c = *c == '_' ? '-' : *c;
        const char *mv = sim_param_metavar(i);
        snprintf(left, sizeof left, "--%s%s%s", name, mv ? " " : "", mv ? mv : "");
        fprintf(out, "  %-26s %s\n", left, sim_param_help(i));
    }
    fprintf(out, "  %-26s %s\n\nSee docs/SIM.md for endpoints, the token model, the engine model "
            "and the trace format.\n", "-h, --help", "show this help and exit");
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

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int set_string(const struct flag *f, const char *v, struct sim_config *cfg,
                      const char **profile)
{
    if (!*v)
        return bad_value(f->name, "a non-empty string", v);
    if (!strcmp(f->name, "--host"))
        cfg->host = v;
    else if (!strcmp(f->name, "--model"))
        cfg->model = v;
    else if (!strcmp(f->name, "--trace"))
        cfg->trace_path = v;
    else if (!strcmp(f->name, "--script"))
        cfg->script_path = v;
    else
        *profile = v;
    return 0;
}

static int set_ms(const struct flag *f, const char *v, struct sim_config *cfg)
{
    double ms;
    if (parse_double(v, 0, 86400e3, &ms))
        return bad_value(f->name, "milliseconds >= 0 (e.g. 20 or 0.5)", v);
    int64_t ns = llround(ms * 1e6);
    if (!strcmp(f->name, "--ttft-ms") || !strcmp(f->name, "--itl-ms")) {
        *(!strcmp(f->name, "--ttft-ms") ? &cfg->ttft_ns : &cfg->itl_ns) = ns;
        cfg->fixed_latency = true;
    } else {
        *(!strcmp(f->name, "--stall-ms") ? &cfg->faults.stall_ns : &cfg->faults.slow_headers_ns) = ns;
    }
    return 0;
}

static int set_prob(const struct flag *f, const char *v, struct sim_config *cfg)
{
    double p;
    if (!strcmp(f->name, "--tokens-without-chunk")) {
        /* 1 would hold every token but the last: no stream at all */
        if (parse_double(v, 0, 1, &p) || p >= 1)
            return bad_value(f->name, "a share 0 <= P < 1", v);
        cfg->tokens_without_chunk = p;
        return 0;
    }
    if (parse_double(v, 0, 1, &p))
        return bad_value(f->name, "a probability 0..1", v);
    *(!strcmp(f->name, "--fail-rate") ? &cfg->faults.fail_rate
      : !strcmp(f->name, "--disconnect-rate") ? &cfg->faults.disconnect_rate
      : !strcmp(f->name, "--metrics-fail-rate") ? &cfg->faults.metrics_fail_rate
                                               : &cfg->faults.stream_error_rate) = p;
    return 0;
}

/* Stores value into the field of cfg that flag f sets. */
static int set_flag(const struct flag *f, const char *v, struct sim_config *cfg, const char **profile)
{
    int64_t n;
    switch (f->kind) {
    case F_STR: return set_string(f, v, cfg, profile);
    case F_MS: return set_ms(f, v, cfg);
    case F_PROB: return set_prob(f, v, cfg);
    case F_PORT:
        if (parse_i64(v, 0, 65535, &n))
            return bad_value(f->name, "an integer 0..65535", v);
        cfg->port = (int)n;
        return 0;
    case F_POSINT:
        if (parse_i64(v, 1, INT64_C(1) << 40, &n))
            return bad_value(f->name, "a positive integer (tokens)", v);
        cfg->max_model_len = n;
        return 0;
    case F_TOKENS:
        if (parse_i64(v, 0, INT64_C(1) << 40, &n))
            return bad_value(f->name, "an integer >= 0 (tokens)", v);
        cfg->reasoning_tokens = n;
        return 0;
    case F_STATUS:
        if (parse_i64(v, 429, 503, &n) || (n != 429 && n != 500 && n != 503))
            return bad_value(f->name, "429, 500 or 503", v);
        cfg->faults.fail_status = (int)n;
        return 0;
    case F_TOKENIZER: {
        enum sim_tokenizer t;
        if (sim_tokenizer_parse(v, &t) != 0)
            return bad_value(f->name, "words or pieces", v);
        cfg->tokenizer = (int)t;
        return 0;
    }
    case F_BOOL:
        if (v)
            return bad_value(f->name, "no value", v);
        cfg->context_shift = true;
        return 0;
    case F_FLAVOR: {
        enum sim_flavor fl;
        if (sim_flavor_parse(v, &fl) != 0)
            return bad_value(f->name, "vllm, sglang or llamacpp", v);
        cfg->flavor = (int)fl;
        return 0;
    }
    case F_U64: {
        char *end;
        errno = 0;
        unsigned long long u = strtoull(v, &end, 10);
        if (errno || end == v || *end || *v == '-')
            return bad_value(f->name, "an unsigned integer", v);
        cfg->seed = u;
        return 0;
    }
    }
    return -1;
}

static const struct flag *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (strlen(flags[i].name) == len && !strncmp(flags[i].name, name, len))
            return &flags[i];
    return NULL;
}

/* The engine parameter a flag names ("--max-num-seqs" → "max_num_seqs"), or -1. */
static long find_param(const char *name, size_t len)
{
    if (len < 3 || strncmp(name, "--", 2) != 0)
        return -1;
    for (size_t i = 0; i < sim_param_count(); i++) {
        const char *k = sim_param_key(i);
        if (strlen(k) != len - 2)
            continue;
        size_t j = 0;
        while (j < len - 2 && (name[2 + j] == k[j] || (name[2 + j] == '-' && k[j] == '_')))
            j++;
        if (j == len - 2)
            return (long)i;
    }
    return -1;
}

/* One parsed command-line flag, applied in a second pass (the profile
 * first, so flags override it whatever their order). */
struct arg {
    const struct flag *f;   /* a server flag, or NULL for an engine parameter */
    long param;             /* engine parameter index */
    const char *name;
    int name_len;
    const char *value;      /* NULL for a boolean parameter */
};

/* Splits argv into flags and values. Returns the count, or -1 on a usage
 * error (reported), or -2 after --help. */
static int scan_args(int argc, char **argv, struct arg *out)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return -2;
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        struct arg g = {.f = find_flag(a, nlen), .param = find_param(a, nlen), .name = a,
                        .name_len = (int)nlen};
        if (!g.f && g.param < 0) {
            fprintf(stderr, "anvil sim: unknown flag '%.*s' (try 'anvil sim --help')\n", (int)nlen, a);
            return -1;
        }
        bool boolean = g.f ? !g.f->metavar : !sim_param_metavar((size_t)g.param);
        g.value = eq ? eq + 1 : boolean ? NULL : (i + 1 < argc ? argv[++i] : NULL);
        if (!g.value && !boolean) {
            fprintf(stderr, "anvil sim: %.*s needs a value (%s)\n", (int)nlen, a,
                    g.f ? g.f->metavar : sim_param_metavar((size_t)g.param));
            return -1;
        }
        out[n++] = g;
    }
    return n;
}

static int apply_param(const struct arg *g, struct sim_config *cfg)
{
    char err[256];
    if (sim_param_set_text(&cfg->engine, (size_t)g->param, g->value, err, sizeof err) != 0) {
        fprintf(stderr, "anvil sim: %.*s: %s\n", g->name_len, g->name, err);
        return -1;
    }
    return 0;
}

/* Engine flags make no sense with a fixed schedule: say so rather than
 * silently ignore them. */
static int check_mode(const struct arg *args, int n, const struct sim_config *cfg)
{
    for (int i = 0; i < n && cfg->fixed_latency; i++)
        if (!args[i].f || !args[i].f->fixed_ok) {
            fprintf(stderr, "anvil sim: %.*s needs the engine model; it cannot be combined with "
                    "--ttft-ms/--itl-ms (fixed-latency mode)\n", args[i].name_len, args[i].name);
            return -1;
        }
    char err[512];
    if (!cfg->fixed_latency && sim_engine_params_check(&cfg->engine, cfg->max_model_len, err, sizeof err)) {
        fprintf(stderr, "anvil sim: %s\n", err);
        return -1;
    }
    return 0;
}

/* Returns 0 to run, 1 after --help, -1 on a usage error (already reported). */
static int parse_args(int argc, char **argv, struct sim_config *cfg)
{
    struct arg *args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return -1;
    const char *profile = NULL;
    int n = scan_args(argc, argv, args), rc = n < 0 ? n : 0;
    for (int i = 0; rc == 0 && i < n; i++)   /* server flags first: they name the profile */
        if (args[i].f && set_flag(args[i].f, args[i].value, cfg, &profile) != 0)
            rc = -1;
    char err[640];
    if (rc == 0 && profile && sim_profile_load(profile, &cfg->engine, err, sizeof err) != 0) {
        fprintf(stderr, "anvil sim: %s\n", err);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < n; i++)
        if (!args[i].f && apply_param(&args[i], cfg) != 0)
            rc = -1;
    if (rc == 0)
        rc = check_mode(args, n, cfg);
    free(args);
    if (rc == -2) {
        usage(stdout);
        return 1;
    }
    return rc;
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
    /* Each batch of steps queues megabytes of chunks and frees them as they
     * are written; by default glibc hands the heap's top back to the kernel
     * and faults it in again every batch (measured: 10× the brk calls and
     * 30% fewer events per CPU-second at 1,024 streams, bench/RESULTS.md).
     * A fixed threshold also ends glibc's dynamic mmap threshold: fine here. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    struct event_config *ec = event_config_new();
    if (!ec)
        return NULL;
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER | EVENT_BASE_FLAG_NO_CACHE_TIME);
    struct event_base *base = event_base_new_with_config(ec);
    event_config_free(ec);
    /* priority 0 peeks at arriving requests before evhttp reads them (arrival.h) */
    if (base && event_base_priority_init(base, 2) != 0) {
        event_base_free(base);
        return NULL;
    }
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
    /* a closed terminal stops it too, unless under nohup */
    bool hup = !stop_sighup_ignored();
    struct event *sighup = hup ? evsignal_new(base, SIGHUP, on_signal, base) : NULL;
    int rc = 1;
    if (!s)
        fprintf(stderr, "anvil sim: %s\n", err);
    else if (!sigint || !sigterm || (hup && !sighup) || evsignal_add(sigint, NULL) || evsignal_add(sigterm, NULL) ||
             (hup && evsignal_add(sighup, NULL)))
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
    if (sighup)
        event_free(sighup);
    event_base_free(base);
    return rc;
}

int sim_main(int argc, char **argv)
{
    struct sim_config cfg = {
        .host = "127.0.0.1", .port = 8000, .model = "anvil-sim", .max_model_len = 32768,
        .ttft_ns = 20000000, .itl_ns = 5000000, .trace_path = NULL, .seed = 0,
        .flavor = SIM_FLAVOR_ANVIL, .faults = {.fail_status = 503},
    };
    sim_engine_params_default(&cfg.engine);
    int p = parse_args(argc, argv, &cfg);
    if (p != 0)
        return p > 0 ? 0 : 2;
    raise_nofile();
    signal(SIGPIPE, SIG_IGN);   /* a client gone mid-write is an error return, not a death */
    int rc = serve(&cfg);
    libevent_global_shutdown();  /* frees libevent's globals: LSan-clean exit */
    return rc;
}
