/* run.c — `anvil run`: flags → discovery → calibration → load (closed loop,
 * open loop or duration) → summary, artifact, per-request log. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "artifact/benchmark.h"
#include "cli/cli.h"
#include "cli/flags.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/redact.h"
#include "load/driver.h"
#include "openai/discover.h"
#include "openai/request.h"
#include "report/table.h"
#include "stats/summary.h"
#include "workload/calibrate.h"
#include "workload/dataset.h"
#include "workload/prompt.h"
#include "workload/workload.h"

enum calib_mode { CALIB_AUTO, CALIB_TOKENIZE, CALIB_PROBE, CALIB_NONE };

struct run_opts {
    const char *base_url, *model, *out, *requests_out, *api_key_env;
    const char *engine_label, *gpu_label;
    enum endpoint endpoint;
    long concurrency, num_prompts, warmup, input_len, output_len;
    long seed;
    bool ignore_eos, continuous_usage;
    enum pct_method pct;
    enum calib_mode calib;
    double timeout_s, connect_timeout_s, idle_timeout_s, grace_s;
    double request_rate, burstiness;    /* requests/s (INFINITY = closed loop); gamma shape */
    bool concurrency_set;
    struct slo slo;
    struct sweep_place sweep;           /* set by anvil sweep; case_id NULL otherwise */
    double input_range, output_range;   /* uniform ± ratio of the lengths */
    long shared_prefix_len;             /* tokens */
    const char *dataset;                /* "jsonl:FILE" or "sharegpt:FILE" */
    bool multi_turn;
    double duration_s, warmup_s;        /* duration mode (0 = off) */
    bool num_prompts_set;
    struct curl_slist *headers;     /* owned; holds the API key: never printed */
    int argc;                       /* the command line, for the artifact's provenance */
    char **argv;
};

static void usage(FILE *out)
{
    fprintf(out,
"usage: anvil run [flags]\n"
"Benchmarks one OpenAI-compatible streaming endpoint: by default a closed loop\n"
"(exactly --concurrency requests in flight until --num-prompts measured requests\n"
"finished), an open loop with --request-rate, or a time window with --duration.\n\n"
"Target\n"
"  --base-url URL           OpenAI base URL, including /v1 (default http://127.0.0.1:8000/v1)\n"
"  --endpoint chat|completions  API to call (default chat)\n"
"  --model NAME             model to request (default: the first of GET {base}/models)\n"
"  --api-key-env VAR        environment variable holding the API key, sent as a bearer\n"
"                           token when set (default OPENAI_API_KEY); never written anywhere\n"
"  --header 'Name: value'   extra request header (repeatable)\n"
"Load\n"
"  --concurrency N          requests in flight: exactly N in the closed loop, at most N\n"
"                           with --request-rate (alias --max-concurrency; default 1\n"
"                           closed loop, no cap open loop)\n"
"  --request-rate R         open loop: R requests/s, or inf for the closed loop (default inf)\n"
"  --burstiness B           gamma shape of the arrival gaps: 1 = Poisson, larger is\n"
"                           smoother, inf = constant gaps (default 1)\n"
"  --num-prompts N          measured requests (default 100)\n"
"  --warmup N               unmeasured requests sent first (default 0)\n"
"  --duration S             duration mode: keep the load on and measure for S seconds;\n"
"                           output tokens are counted inside the window by their arrival\n"
"                           time (aggregate_tps); requests running at its end are kept as\n"
"                           incomplete. --num-prompts then caps the requests sent\n"
"  --warmup-s S             duration mode: seconds of load before the window opens (default 0)\n"
"Workload\n"
"  --input-len N            prompt length in tokens, as the server counts them\n"
"                           (alias --random-input-len; default 1024)\n"
"  --output-len N           max_tokens per request, in tokens (alias --random-output-len;\n"
"                           default 128)\n"
"  --ignore-eos / --no-ignore-eos  send ignore_eos so every reply has exactly\n"
"                           --output-len tokens (default on)\n"
"  --seed N                 seed of the prompt filler text, length draws and arrival\n"
"                           times (default 0)\n"
"  --input-len-range R      prompt lengths uniform in [N(1-R), N(1+R)] tokens (default 0)\n"
"  --random-range-ratio R   the same for prompt and output lengths (vLLM's flag)\n"
"  --shared-prefix-len N    every prompt starts with the same N tokens (prefix-cache\n"
"                           studies; default 0); the unique part follows it\n"
"  --dataset jsonl:FILE|sharegpt:FILE  prompts from a file instead of synthetic text:\n"
"                           JSON Lines of {\"prompt\": ...} or {\"messages\": [...]}, with an\n"
"                           optional \"max_tokens\" (else --output-len); or ShareGPT JSON\n"
"  --multi-turn             with --dataset: one request per user turn, sending the\n"
"                           conversation's recorded history before it, and only\n"
"                           after the previous turn's reply has ended\n"
"  --calibration auto|tokenize|probe|none  how prompt lengths are fitted to the server's\n"
"                           tokenizer: POST /tokenize, probe requests with max_tokens 1,\n"
"                           or none (send --input-len filler words as they are); auto\n"
"                           tries tokenize, then probe (default auto)\n"
"  --continuous-usage       ask for usage on every chunk (stream_options.\n"
"                           continuous_usage_stats; vLLM, SGLang) for per-token ITL\n"
"Limits\n"
"  --timeout-s S            whole-request timeout, seconds (default 600)\n"
"  --connect-timeout-s S    connection timeout, seconds (default 10)\n"
"  --idle-timeout-s S       abort a stream silent for this long, seconds (default 120)\n"
"  --grace-s S              after Ctrl-C/SIGTERM, how long in-flight requests may\n"
"                           finish before they are cancelled, seconds (default 5)\n"
"Output\n"
"  --out FILE               artifact, schema anvil-serving.benchmark/v1\n"
"                           (default results/<run_id>.json)\n"
"  --requests-out FILE      JSON Lines, one line per request, appended as each ends\n"
"  --percentile-method nearest|linear  (default nearest: nearest rank)\n"
"  --goodput ttft:MS tpot:MS e2el:MS  SLOs of a good request, in ms (any subset;\n"
"                           also comma separated); reports goodput_rps\n"
"  --engine-label TEXT      engine name for the artifact (default: detected)\n"
"  --gpu-label TEXT         hardware description for the artifact (default none)\n"
"  --case-id ID --round N --sweep-target LABEL  where this run sits in a sweep\n"
"                           (set by anvil sweep; written to the artifact's \"sweep\")\n"
"  -h, --help               this text\n");
}

enum {
    O_BASE_URL = 256, O_ENDPOINT, O_MODEL, O_CONCURRENCY, O_NUM_PROMPTS, O_WARMUP, O_INPUT_LEN,
    O_OUTPUT_LEN, O_IGNORE_EOS, O_NO_IGNORE_EOS, O_SEED, O_OUT, O_REQUESTS_OUT, O_API_KEY_ENV,
    O_HEADER, O_PCT, O_TIMEOUT, O_CONNECT_TIMEOUT, O_IDLE_TIMEOUT, O_GRACE, O_ENGINE_LABEL,
    O_GPU_LABEL, O_CALIBRATION, O_CONTINUOUS_USAGE, O_REQUEST_RATE, O_BURSTINESS, O_GOODPUT,
    O_SWEEP_TARGET, O_CASE_ID, O_ROUND, O_INPUT_RANGE, O_RANGE_RATIO, O_SHARED_PREFIX, O_DATASET,
    O_MULTI_TURN, O_DURATION, O_WARMUP_S,
};

static const struct option long_opts[] = {
    {"base-url", required_argument, 0, O_BASE_URL},
    {"endpoint", required_argument, 0, O_ENDPOINT},
    {"model", required_argument, 0, O_MODEL},
    {"concurrency", required_argument, 0, O_CONCURRENCY},
    {"max-concurrency", required_argument, 0, O_CONCURRENCY},
    {"num-prompts", required_argument, 0, O_NUM_PROMPTS},
    {"warmup", required_argument, 0, O_WARMUP},
    {"input-len", required_argument, 0, O_INPUT_LEN},
    {"random-input-len", required_argument, 0, O_INPUT_LEN},
    {"output-len", required_argument, 0, O_OUTPUT_LEN},
    {"random-output-len", required_argument, 0, O_OUTPUT_LEN},
    {"ignore-eos", no_argument, 0, O_IGNORE_EOS},
    {"no-ignore-eos", no_argument, 0, O_NO_IGNORE_EOS},
    {"seed", required_argument, 0, O_SEED},
    {"out", required_argument, 0, O_OUT},
    {"requests-out", required_argument, 0, O_REQUESTS_OUT},
    {"api-key-env", required_argument, 0, O_API_KEY_ENV},
    {"header", required_argument, 0, O_HEADER},
    {"percentile-method", required_argument, 0, O_PCT},
    {"timeout-s", required_argument, 0, O_TIMEOUT},
    {"connect-timeout-s", required_argument, 0, O_CONNECT_TIMEOUT},
    {"idle-timeout-s", required_argument, 0, O_IDLE_TIMEOUT},
    {"grace-s", required_argument, 0, O_GRACE},
    {"engine-label", required_argument, 0, O_ENGINE_LABEL},
    {"gpu-label", required_argument, 0, O_GPU_LABEL},
    {"calibration", required_argument, 0, O_CALIBRATION},
    {"continuous-usage", no_argument, 0, O_CONTINUOUS_USAGE},
    {"request-rate", required_argument, 0, O_REQUEST_RATE},
    {"burstiness", required_argument, 0, O_BURSTINESS},
    {"goodput", required_argument, 0, O_GOODPUT},
    {"sweep-target", required_argument, 0, O_SWEEP_TARGET},
    {"case-id", required_argument, 0, O_CASE_ID},
    {"round", required_argument, 0, O_ROUND},
    {"input-len-range", required_argument, 0, O_INPUT_RANGE},
    {"random-range-ratio", required_argument, 0, O_RANGE_RATIO},
    {"shared-prefix-len", required_argument, 0, O_SHARED_PREFIX},
    {"dataset", required_argument, 0, O_DATASET},
    {"multi-turn", no_argument, 0, O_MULTI_TURN},
    {"duration", required_argument, 0, O_DURATION},
    {"warmup-s", required_argument, 0, O_WARMUP_S},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static int bad(const char *flag, const char *val, const char *want)
{
    fprintf(stderr, "anvil run: --%s: expected %s, got '%s'\n", flag, want, val);
    return -1;
}

static int flag_ratio(const char *name, const char *v, double *out)
{
    if (flag_double("run", name, v, 0, out) != 0)
        return -1;
    return *out < 1 ? 0 : bad(name, v, "a ratio in [0, 1)");
}

static int parse_calibration(const char *s, enum calib_mode *out)
{
    static const char *const names[] = {"auto", "tokenize", "probe", "none"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            *out = (enum calib_mode)i;
            return 0;
        }
    return bad("calibration", s, "auto, tokenize, probe or none");
}

/* Handles one option. Returns 0, 1 for --help, or -1 on a usage error. */
static int parse_one(struct run_opts *o, int c, const char *v)
{
    const char *name = NULL;
    for (const struct option *p = long_opts; p->name; p++)
        if (p->val == c) { name = p->name; break; }
    switch (c) {
    case O_BASE_URL: o->base_url = v; return 0;
    case O_ENDPOINT: return endpoint_parse(v, &o->endpoint) ? bad(name, v, "chat or completions") : 0;
    case O_MODEL: o->model = v; return 0;
    case O_CONCURRENCY:
        o->concurrency_set = true;
        return flag_long("run", name, v, 1, 100000, &o->concurrency);
    case O_REQUEST_RATE: return flag_rate("run", name, v, &o->request_rate);
    case O_BURSTINESS: return flag_rate("run", name, v, &o->burstiness);
    case O_GOODPUT:
        return slo_parse(v, &o->slo) ? bad(name, v, "ttft:MS, tpot:MS or e2el:MS with MS > 0, each once") : 0;
    case O_NUM_PROMPTS:
        o->num_prompts_set = true;
        return flag_long("run", name, v, 1, 100000000, &o->num_prompts);
    case O_WARMUP: return flag_long("run", name, v, 0, 1000000, &o->warmup);
    case O_INPUT_LEN: return flag_long("run", name, v, 1, 100000000, &o->input_len);
    case O_OUTPUT_LEN: return flag_long("run", name, v, 1, 100000000, &o->output_len);
    case O_IGNORE_EOS: o->ignore_eos = true; return 0;
    case O_NO_IGNORE_EOS: o->ignore_eos = false; return 0;
    case O_SEED: return flag_long("run", name, v, 0, 0x7fffffffL, &o->seed);
    case O_OUT: o->out = v; return 0;
    case O_REQUESTS_OUT: o->requests_out = v; return 0;
    case O_API_KEY_ENV: o->api_key_env = v; return 0;
    case O_HEADER:
        if (!strchr(v, ':') || v[0] == ':')
            return bad(name, "(value withheld)", "'Name: value'");
        o->headers = curl_slist_append(o->headers, v);
        return 0;
    case O_PCT: return pct_method_parse(v, &o->pct) ? bad(name, v, "nearest or linear") : 0;
    case O_TIMEOUT: return flag_double("run", name, v, 0.001, &o->timeout_s);
    case O_CONNECT_TIMEOUT: return flag_double("run", name, v, 0.001, &o->connect_timeout_s);
    case O_IDLE_TIMEOUT: return flag_double("run", name, v, 0.001, &o->idle_timeout_s);
    case O_GRACE: return flag_double("run", name, v, 0, &o->grace_s);
    case O_ENGINE_LABEL: o->engine_label = v; return 0;
    case O_GPU_LABEL: o->gpu_label = v; return 0;
    case O_CALIBRATION: return parse_calibration(v, &o->calib);
    case O_CONTINUOUS_USAGE: o->continuous_usage = true; return 0;
    case O_SWEEP_TARGET: o->sweep.target = v; return 0;
    case O_CASE_ID: o->sweep.case_id = v; return 0;
    case O_ROUND: return flag_long("run", name, v, 1, 1000000, &o->sweep.round);
    case O_INPUT_RANGE: return flag_ratio(name, v, &o->input_range);
    case O_RANGE_RATIO:
        if (flag_ratio(name, v, &o->input_range))
            return -1;
        o->output_range = o->input_range;
        return 0;
    case O_SHARED_PREFIX: return flag_long("run", name, v, 0, 100000000, &o->shared_prefix_len);
    case O_DATASET: o->dataset = v; return 0;
    case O_MULTI_TURN: o->multi_turn = true; return 0;
    case O_DURATION: return flag_double("run", name, v, 0.001, &o->duration_s);
    case O_WARMUP_S: return flag_double("run", name, v, 0, &o->warmup_s);
    case 'h': return 1;
    default: return -1;
    }
}

/* Returns 0 to run, 1 when help was printed, -1 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct run_opts *o)
{
    *o = (struct run_opts){
        .base_url = "http://127.0.0.1:8000/v1", .api_key_env = "OPENAI_API_KEY",
        .endpoint = EP_CHAT, .concurrency = 1, .num_prompts = 100, .input_len = 1024,
        .output_len = 128, .ignore_eos = true, .pct = PCT_NEAREST, .calib = CALIB_AUTO,
        .timeout_s = 600, .connect_timeout_s = 10, .idle_timeout_s = 120, .grace_s = 5,
        .request_rate = INFINITY, .burstiness = 1, .slo = {NAN, NAN, NAN}, .argc = argc, .argv = argv,
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        if (c == '?' || c == ':') {
            fprintf(stderr, "anvil run: %s '%s' (see 'anvil run --help')\n",
                    c == '?' ? "unknown flag" : "missing value for", argv[optind - 1]);
            return -1;
        }
        int rc = parse_one(o, c, optarg);
        if (rc)
            return rc;
        /* vLLM's form: --goodput ttft:100 tpot:50 (several values after one flag) */
        while (c == O_GOODPUT && optind < argc && argv[optind][0] != '-' && strchr(argv[optind], ':'))
            if ((rc = parse_one(o, c, argv[optind++])))
                return rc;
    }
    if (!o->concurrency_set && !isinf(o->request_rate))
        o->concurrency = 0;     /* open loop without a cap */
    if (o->duration_s > 0 && !o->num_prompts_set)
        o->num_prompts = 200000;    /* duration mode: only a cap on what may be sent */
    if (o->shared_prefix_len > 0 && o->shared_prefix_len >= o->input_len) {
        fprintf(stderr, "anvil run: --shared-prefix-len (%ld) must be below --input-len (%ld): the "
                        "unique part follows the shared one\n", o->shared_prefix_len, o->input_len);
        return -1;
    }
    if (o->multi_turn && !o->dataset) {
        fprintf(stderr, "anvil run: --multi-turn needs --dataset (conversations come from a file)\n");
        return -1;
    }
    if (o->warmup_s > 0 && o->duration_s <= 0) {
        fprintf(stderr, "anvil run: --warmup-s goes with --duration (use --warmup N otherwise)\n");
        return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "anvil run: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    const char *key = getenv(o->api_key_env);
    if (key && *key) {
        struct buf h;
        buf_init(&h, 8192);
        buf_printf(&h, "Authorization: Bearer %s", key);
        o->headers = curl_slist_append(o->headers, h.data);
        buf_free(&h);
    }
    return 0;
}

/* Everything the body callback and the per-request log need. */
struct run_ctx {
    const struct run_opts *o;
    const struct server_info *srv;
    uint64_t salt;
    char run_id[64];
    FILE *requests_log;
    int log_errors;             /* --requests-out lines that could not be written */
    struct workload *wl;        /* owned */
    struct dataset ds;          /* owned; empty for synthetic prompts */
};

static char *make_body(void *ud, long seq, long *planned, long *max_tokens)
{
    struct run_ctx *c = ud;
    return workload_body(c->wl, seq, planned, max_tokens);
}

static long follows(void *ud, long seq)
{
    struct run_ctx *c = ud;
    return workload_follows(c->wl, seq);
}

static void log_record(void *ud, const struct req_record *r)
{
    struct run_ctx *c = ud;
    if (!c->requests_log)
        return;
    cJSON *line = r->fail == FAIL_NONE ? artifact_request_timing(r) : artifact_failure(r);
    cJSON_AddStringToObject(line, "run_id", c->run_id);
    cJSON_AddBoolToObject(line, "warmup", r->warmup);
    cJSON_AddStringToObject(line, "status", r->cut ? "incomplete" : r->fail == FAIL_NONE ? "completed" : "failed");
    char *s = cJSON_PrintUnformatted(line);
    /* flushed per line: measured results survive a crash or kill */
    if (!s || fprintf(c->requests_log, "%s\n", s) < 0 || fflush(c->requests_log) != 0)
        c->log_errors++;
    free(s);
    cJSON_Delete(line);
}

struct count_ctx {
    const struct run_ctx *run;
    const struct curl_slist *headers;
    bool tokenize;
};

static long count_tokens(void *ud, long words, char *err, size_t errlen)
{
    struct count_ctx *k = ud;
    struct buf p;
    buf_init(&p, 1u << 30);
    long n = -1;
    if (workload_prompt(k->run->wl, 0, words, &p) == 0)
        n = server_count_tokens(k->run->srv, k->headers, k->run->o->endpoint, k->tokenize, p.data,
                                (long)(fmin(k->run->o->timeout_s, 30) * 1000), err, errlen);
    else
        snprintf(err, errlen, "prompt of %ld words is too large", words);
    buf_free(&p);
    return n;
}

/* Replaces the API key, where a server echoed it into a message, before the
 * message is printed (sweeps keep stderr in log files). msg holds 512 bytes. */
static void scrub(char *msg, const struct run_opts *o)
{
    const char *key = getenv(o->api_key_env);
    if (key)
        redact(msg, 512, key);
}

/* Tokens per filler word, from the calibration steps: the slope between the
 * two most distant steps, else the one step's ratio. */
static double tokens_per_word(const struct calibration *cal)
{
    const struct calib_step *lo = &cal->steps[0], *hi = &cal->steps[0];
    for (int i = 1; i < cal->n_steps; i++) {
        if (cal->steps[i].words < lo->words) lo = &cal->steps[i];
        if (cal->steps[i].words > hi->words) hi = &cal->steps[i];
    }
    if (hi->words > lo->words && hi->tokens > lo->tokens)
        return (double)(hi->tokens - lo->tokens) / (double)(hi->words - lo->words);
    return cal->words > 0 ? (double)cal->tokens / (double)cal->words : 1;
}

/* Chooses the filler length and fits the workload. Returns the method used
 * ("tokenize", "probe", "none", "dataset"), or NULL with err set. */
static const char *run_calibration(struct run_ctx *c, struct calibration *cal, char *err, size_t errlen)
{
    const struct run_opts *o = c->o;
    if (c->ds.n)
        return "dataset";
    if (o->calib == CALIB_NONE)
        return workload_fit(c->wl, o->input_len, 1) == 0 ? "none" : NULL;
    struct count_ctx k = {c, o->headers, o->calib != CALIB_PROBE};
    int rc = calibrate(o->input_len, count_tokens, &k, cal, err, errlen);
    if (rc != 0 && o->calib == CALIB_AUTO) {
        scrub(err, o);
        fprintf(stderr, "anvil run: /tokenize unusable (%s); calibrating with probe requests\n", err);
        k.tokenize = false;
        rc = calibrate(o->input_len, count_tokens, &k, cal, err, errlen);
    }
    if (rc != 0)
        return NULL;
    if (!cal->converged)
        fprintf(stderr, "anvil run: warning: prompts will have %ld tokens, not %ld (closest reachable)\n",
                cal->tokens, o->input_len);
    if (workload_fit(c->wl, cal->words, tokens_per_word(cal)) != 0) {
        snprintf(err, errlen, "out of memory building prompts");
        return NULL;
    }
    return k.tokenize ? "tokenize" : "probe";
}

static void make_run_id(char *out, size_t n, uint64_t salt)
{
    char compact[17];
    clock_utc_compact(compact);
    snprintf(out, n, "anvil-%s-%04" PRIx64, compact, salt & 0xffff);
}

/* Moves the records of requests that were sent to the front, keeping their
 * order, and returns how many there are. The others were never initialized
 * (all zero, owning nothing): they are overwritten and the tail zeroed. */
static int sent_first(struct req_record *r, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (r[i].t_start)
            r[k++] = r[i];
    memset(&r[k], 0, (size_t)(n - k) * sizeof *r);
    return k;
}

static int write_outputs(const struct run_opts *o, struct driver_result *dr,
                         const struct bench_meta *meta_in, const char *path)
{
    struct run_summary s;
    struct summary_opts so = {
        .method = o->pct, .ignore_eos = o->ignore_eos, .loop_lag_ms = dr->loop_lag_ms,
        .lateness_is_client = o->concurrency == 0,
        .n_loop_lag = dr->n_loop_lag, .check_prompt_tokens = meta_in->calibration != NULL,
        .slo = o->slo, .window_start = dr->window_start, .window_end = dr->window_end,
    };
    /* duration mode: --num-prompts only capped the sends; the run is what was
     * sent (not always a prefix: held multi-turn turns go out of order) */
    int n = o->duration_s > 0 ? sent_first(dr->records, dr->n_records) : dr->n_records;
    if (summary_compute(dr->records, n, &so, &s) != 0) {
        fprintf(stderr, "anvil run: out of memory summarizing\n");
        return 1;
    }
    struct bench_meta meta = *meta_in;
    if (o->duration_s > 0)      /* the requests are those the window saw, not a plan */
        meta.num_prompts = s.sent;
    meta.duration_s = o->duration_s;
    /* every prompt starts unique, so hits mean the server reused something it should not have */
    meta.cache_contaminated = o->shared_prefix_len == 0 && !o->dataset && s.cached_reports &&
                              s.prompt_tokens > 0 && (double)s.cached_tokens > 0.05 * (double)s.prompt_tokens;
    meta.warmup_s = o->warmup_s;
    meta.window_s = dr->window_end > dr->window_start ? (double)(dr->window_end - dr->window_start) / 1e9 : 0;
    if (o->duration_s > 0 && !dr->stop_signal && meta.window_s < o->duration_s * 0.999) {
        meta.incomplete = true;
        meta.incomplete_reason = "the --num-prompts cap was reached before the window ended";
        fprintf(stderr, "anvil run: warning: the window lasted %.2f s of %g s: all %ld requests "
                "allowed by --num-prompts were sent\n", meta.window_s, o->duration_s, o->num_prompts);
    }
    char finished[21];
    clock_utc_iso8601(finished);
    meta.finished_at = finished;
    meta.prewarmed_connections = dr->prewarmed;
    meta.achieved_rate = dr->achieved_rate;
    meta.slo = o->slo;
    meta.client_cpu_user_s = dr->cpu_user_s;
    meta.stamps_kernel = dr->stamps_kernel;
    meta.stamps_clock = dr->stamps_clock;
    meta.client_cpu_sys_s = dr->cpu_sys_s;
    if (dr->stop_signal || s.sent < s.requests) {
        meta.incomplete = true;
        meta.incomplete_reason = dr->stop_signal ? "stopped by signal" : "not every request was sent";
    }
    cJSON *art = artifact_benchmark(&meta, dr->records, n, &s);
    char err[512];
    int rc = art && artifact_write_file(path, art, err, sizeof err) == 0 ? 0 : 1;
    cJSON_Delete(art);
    report_table(stdout, "Serving Benchmark Result", &s, dr->warmup_failed);
    if (meta.cache_contaminated)
        printf("warning: %.1f%% of prompt tokens were served from the prefix cache although every "
               "prompt starts with a unique prefix: prefill numbers are not from a cold cache\n",
               100.0 * (double)s.cached_tokens / (double)s.prompt_tokens);
    if (rc) {
        fprintf(stderr, "anvil run: %s\n", art ? err : "out of memory building the artifact");
        return 1;
    }
    printf("artifact: %s%s\n", path, meta.incomplete ? " (incomplete)" : "");
    return meta.incomplete || s.completed == 0 ? 1 : 0;
}

/* Raises the open-file limit to its hard maximum: every request in flight
 * holds a socket, and running out would look like a server refusing
 * connections. Warns when even that is too few. */
static void raise_fd_limit(long concurrency)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)concurrency + 64 > rl.rlim_cur)
        fprintf(stderr, "anvil run: warning: %ld requests in flight need more sockets than the "
                        "open-file limit (%llu) allows\n", concurrency, (unsigned long long)rl.rlim_cur);
}

/* Prepares the workload: dataset, prompts, calibration. Returns the
 * calibration method, or NULL (reported). */
static const char *prepare_workload(struct run_ctx *ctx, struct calibration *cal)
{
    const struct run_opts *o = ctx->o;
    char err[512];
    if (o->dataset && dataset_load(o->dataset, o->multi_turn, &ctx->ds, err, sizeof err) != 0) {
        fprintf(stderr, "anvil run: --dataset: %s\n", err);
        return NULL;
    }
    struct workload_cfg wc = {
        .ro = {.endpoint = o->endpoint, .model = ctx->srv->model, .stream = true,
               .ignore_eos = o->ignore_eos, .continuous_usage = o->continuous_usage},
        .salt = ctx->salt, .seed = (uint64_t)o->seed, .input_len = o->input_len, .output_len = o->output_len,
        .input_range = o->input_range, .output_range = o->output_range,
        .shared_prefix_len = o->shared_prefix_len, .ds = ctx->ds.n ? &ctx->ds : NULL,
    };
    if (!(ctx->wl = workload_new(&wc))) {
        fprintf(stderr, "anvil run: out of memory\n");
        return NULL;
    }
    const char *method = run_calibration(ctx, cal, err, sizeof err);
    if (!method) {
        scrub(err, o);
        fprintf(stderr, "anvil run: prompt calibration failed: %s\n", err);
    }
    return method;
}

static void announce(const struct run_opts *o, const struct server_info *srv)
{
    char load[128], cap[48] = "no cap";
    if (o->concurrency > 0)
        snprintf(cap, sizeof cap, "max concurrency %ld", o->concurrency);
    if (isinf(o->request_rate))
        snprintf(load, sizeof load, "concurrency %ld", o->concurrency);
    else
        snprintf(load, sizeof load, "%g req/s (burstiness %g, %s)", o->request_rate, o->burstiness, cap);
    char amount[96];
    if (o->duration_s > 0)
        snprintf(amount, sizeof amount, "for %g s after %g s of warm-up", o->duration_s, o->warmup_s);
    else
        snprintf(amount, sizeof amount, "%ld prompts", o->num_prompts);
    char shape[600];
    if (o->dataset)
        snprintf(shape, sizeof shape, "prompts from %s", o->dataset);
    else
        snprintf(shape, sizeof shape, "%ld→%ld tokens", o->input_len, o->output_len);
    fprintf(stderr, "anvil run: %s model %s (%s), %s at %s, %s\n",
            srv->display_url, srv->model, srv->engine, amount, load, shape);
}

/* Sends the load and writes what was measured. Returns the exit status. */
static int measure(const struct run_opts *o, struct run_ctx *ctx, const struct calibration *cal,
                   const char *method, const char *path)
{
    const struct server_info *srv = ctx->srv;
    char url[600], models_url[600], started[21];
    snprintf(url, sizeof url, "%s%s", srv->base_url, endpoint_path(o->endpoint));
    snprintf(models_url, sizeof models_url, "%s/models", srv->base_url);
    struct driver_cfg cfg = {
        .url = url, .headers = o->headers, .concurrency = (int)o->concurrency,
        .request_rate = o->request_rate, .burstiness = o->burstiness, .seed = (uint64_t)o->seed,
        .num_prompts = (int)o->num_prompts, .warmup = (int)o->warmup,
        .duration_s = o->duration_s, .warmup_s = o->warmup_s,
        .connect_timeout_ms = (long)(o->connect_timeout_s * 1000), .timeout_ms = (long)(o->timeout_s * 1000),
        .idle_timeout_s = o->idle_timeout_s, .grace_s = o->grace_s, .secret = getenv(o->api_key_env),
        .progress = isatty(STDERR_FILENO), .make_body = make_body, .on_record = log_record, .ud = ctx,
        .follows = o->multi_turn ? follows : NULL,
        .prewarm_url = models_url,
    };
    announce(o, srv);
    clock_utc_iso8601(started);
    struct driver_result dr;
    if (driver_run(&cfg, &dr) != 0) {
        fprintf(stderr, "anvil run: could not set up the event loop\n");
        return 1;
    }
    struct bench_meta meta = {
        .run_id = ctx->run_id, .started_at = started, .server = srv, .engine_label = o->engine_label,
        .gpu_label = o->gpu_label, .endpoint = endpoint_name(o->endpoint),
        .concurrency = (int)o->concurrency, .num_prompts = (int)o->num_prompts,
        .request_rate = o->request_rate, .burstiness = o->burstiness,
        .warmup = (int)o->warmup, .input_len = o->dataset ? -1 : o->input_len,
        .output_len = o->output_len,
        .ignore_eos = o->ignore_eos, .seed = (uint64_t)o->seed, .calibration_method = method,
        .calibration = cal->n_steps ? cal : NULL, .sweep = o->sweep,
        .dataset = ctx->ds.n ? ctx->ds.spec : NULL, .input_range = o->input_range,
        .output_range = o->output_range, .shared_prefix_len = o->shared_prefix_len,
        .argc = o->argc, .argv = o->argv,
    };
    int rc = write_outputs(o, &dr, &meta, path);
    driver_result_free(&dr);
    if (ctx->log_errors) {
        fprintf(stderr, "anvil run: %d lines could not be written to --requests-out %s\n",
                ctx->log_errors, o->requests_out);
        rc = 1;
    }
    return rc;
}

static int run(struct run_opts *o)
{
    char err[512], path[4096];
    struct server_info srv;
    struct run_ctx ctx = {.o = o, .srv = &srv, .salt = prompt_random_salt()};
    make_run_id(ctx.run_id, sizeof ctx.run_id, ctx.salt);
    snprintf(path, sizeof path, "%s", o->out ? o->out : "");
    if (!o->out)
        snprintf(path, sizeof path, "results/%s.json", ctx.run_id);
    /* fail before measuring anything, not after */
    if (artifact_check_path(path, err, sizeof err) != 0) {
        fprintf(stderr, "anvil run: --out: %s\n", err);
        return 1;
    }
    if (o->requests_out && !(ctx.requests_log = fopen(o->requests_out, "a"))) {
        fprintf(stderr, "anvil run: cannot open --requests-out %s: %s\n", o->requests_out, strerror(errno));
        return 1;
    }
    raise_fd_limit(o->concurrency);
    long setup_ms = (long)(fmin(o->timeout_s, 30) * 1000);
    int rc = 1;
    struct calibration cal = {0};
    const char *method;
    if (discover(o->base_url, o->headers, o->model, setup_ms, &srv, err, sizeof err) != 0) {
        scrub(err, o);
        fprintf(stderr, "anvil run: %s\n", err);
    }
    else if ((method = prepare_workload(&ctx, &cal)))
        rc = measure(o, &ctx, &cal, method, path);
    if (ctx.requests_log)
        fclose(ctx.requests_log);
    workload_free(ctx.wl);
    dataset_free(&ctx.ds);
    return rc;
}

int run_main(int argc, char **argv)
{
    struct run_opts o;
    int rc = parse_args(argc, argv, &o), status = 2;
    if (rc == 1) {
        usage(stdout);
        status = 0;
    } else if (rc == 0) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        status = run(&o);
        curl_global_cleanup();
    }
    curl_slist_free_all(o.headers);
    return status;
}
