/* run_flags.c — `anvil run`'s flag tables, one per feature: every flag's
 * name, value, unit, default and help, in the order --help prints them. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "cli/run_cli.h"
#include "core/yamljson.h"
#include "workload/agentic.h"

#define AT(field) offsetof(struct run_cli, c.field)

static int set_sampling(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct sampling *s = &((struct run_cli *)cfg)->c.workload.sampling;
    if (!strcmp(flag, "top-k")) {
        s->has_top_k = true;
        return flag_long(cmd, flag, v, 0, 1000000000L, &s->top_k);
    }
    bool temp = !strcmp(flag, "temperature");
    *(temp ? &s->has_temperature : &s->has_top_p) = true;
    return flag_double(cmd, flag, v, 0, temp ? &s->temperature : &s->top_p);
}

static int set_extra_body(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct run_cli *r = cfg;
    char why[200] = "";
    cJSON *j = json_parse_capped(v, strlen(v), DOC_MAX_NODES, NULL, why, sizeof why);
    if (!cJSON_IsObject(j)) {
        fprintf(stderr, "anvil %s: --%s: expected a JSON object, got '%s'%s%s\n", cmd, flag, v,
                why[0] ? ": " : "", why);
        cJSON_Delete(j);
        return -1;
    }
    cJSON_Delete(r->extra_body);
    r->c.workload.extra_body = r->extra_body = j;
    return 0;
}

static int set_goodput(void *cfg, const char *cmd, const char *flag, const char *v)
{
    if (slo_parse(v, &((struct run_cli *)cfg)->c.out.slo) == 0)
        return 0;
    fprintf(stderr, "anvil %s: --%s: expected ttft:MS, tpot:MS or e2el:MS with MS > 0, each once, "
            "got '%s'\n", cmd, flag, v);
    return -1;
}

/* --ramp-up-strategy linear|exponential (vLLM's names). */
static int set_ramp_strategy(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct load_ramp *r = &((struct run_cli *)cfg)->c.load.ramp;
    if (!strcmp(v, "linear") || !strcmp(v, "exponential")) {
        r->strategy = !strcmp(v, "linear") ? RAMP_LINEAR : RAMP_EXPONENTIAL;
        return 0;
    }
    fprintf(stderr, "anvil %s: --%s: expected linear or exponential, got '%s'\n", cmd, flag, v);
    return -1;
}

/* --shard I/N: this process sends shard I (0-based) of N. */
static int set_shard(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct run_config *c = &((struct run_cli *)cfg)->c;
    int i, n, end = 0;
    if (sscanf(v, "%d/%d%n", &i, &n, &end) != 2 || v[end] || n < 1 || n > 100000 || i < 0 || i >= n) {
        fprintf(stderr, "anvil %s: --%s: expected I/N with 0 <= I < N <= 100000 (shard I of N), got '%s'\n",
                cmd, flag, v);
        return -1;
    }
    c->shard.index = i;
    c->shard.count = n;
    return 0;
}

static int set_header(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct run_cli *r = cfg;
    return flag_header(cmd, flag, v, &r->headers);
}

/* --header-env NAME=VAR: the header's value is read from the environment,
 * so a plan or a script can name it without holding it. */
static int set_header_env(void *cfg, const char *cmd, const char *flag, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1] || strchr(v, ':')) {
        fprintf(stderr, "anvil %s: --%s: expected NAME=VAR (a header name and an environment "
                "variable), got '%s'\n", cmd, flag, v);
        return -1;
    }
    const char *value = getenv(eq + 1);
    if (!value) {
        fprintf(stderr, "anvil %s: --%s %s: the environment variable %s is not set (it holds the "
                "value of header %.*s)\n", cmd, flag, v, eq + 1, (int)(eq - v), v);
        return -1;
    }
    char line[8192];
    snprintf(line, sizeof line, "%.*s: %s", (int)(eq - v), v, value);
    return set_header(cfg, cmd, "header", line);
}

static int set_pct(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct run_cli *r = cfg;
    char err[200];
    bool metrics = !strcmp(flag, "percentile-metrics");
    if ((metrics ? pct_parse_metrics(v, &r->pct, err, sizeof err) : pct_parse_values(v, &r->pct, err, sizeof err)) != 0) {
        fprintf(stderr, "anvil %s: --%s: %s\n", cmd, flag, err);
        return -1;
    }
    r->pct_given = true;
    return 0;
}

static int set_ratio(const char *cmd, const char *flag, const char *v, double *out)
{
    if (flag_double(cmd, flag, v, 0, out) != 0)
        return -1;
    if (*out < 1)
        return 0;
    fprintf(stderr, "anvil %s: --%s: expected a ratio in [0, 1), got '%s'\n", cmd, flag, v);
    return -1;
}

static int set_input_range(void *cfg, const char *cmd, const char *flag, const char *v)
{
    return set_ratio(cmd, flag, v, &((struct run_cli *)cfg)->c.workload.input_range);
}

static int set_range_ratio(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct run_config *c = &((struct run_cli *)cfg)->c;
    if (set_ratio(cmd, flag, v, &c->workload.input_range) != 0)
        return -1;
    c->workload.output_range = c->workload.input_range;
    return 0;
}

/* --turns A..B and --think-time A..B: checked here, so a bad range is a
 * usage error before anything is sent; the run parses the text again. */
static int set_agentic_range(void *cfg, const char *cmd, const char *flag, const char *v)
{
    struct run_config *c = &((struct run_cli *)cfg)->c;
    long turns_lo, turns_hi;
    double think_lo, think_hi;
    if (!strcmp(flag, "turns")) {
        if (agentic_parse_range(v, &turns_lo, &turns_hi) == 0) {
            c->workload.agentic_turns = v;
            return 0;
        }
        fprintf(stderr, "anvil %s: --%s: expected A..B with 1 <= A <= B <= 10000, got '%s'\n", cmd, flag, v);
        return -1;
    }
    if (agentic_parse_think(v, &think_lo, &think_hi) == 0) {
        c->workload.think_time = v;
        return 0;
    }
    fprintf(stderr, "anvil %s: --%s: expected A..B seconds with 0 <= A <= B <= 86400, got '%s'\n", cmd, flag, v);
    return -1;
}

/* The reasons vllm bench serve's flags change nothing here, or are refused. */
#define TOKENS_BY_SERVER "anvil counts tokens with the server's own tokenizer (/tokenize, or probes)"
#define IN_THE_ARTIFACT "every request is always in the artifact and the journal; --engine-label and " \
    "--gpu-label describe the run"

/* A FLAG_NOTE row given: its one note, where the run's notes go. */
static int note_vllm(void *cfg, const char *cmd, const char *flag, const char *v)
{
    (void)v;
    const struct run_config *c = &((struct run_cli *)cfg)->c;
    flag_note(c->log ? c->log : stderr, cmd, flags_find(run_flag_table(), flag), flag);
    return 0;
}

static const char *const pct_names[] = {"nearest", "linear", NULL};
static const char *const calib_names[] = {"auto", "tokenize", "probe", "none", NULL};
static const char *const result_format_names[] = {"anvil", "vllm", NULL};    /* RESULT_* order */
static const char *const telemetry_names[] = {"auto", "on", "off", NULL};    /* enum obs_mode's order */

/* One table per feature (run/run.h's sub-structs of run_config, and the run_cli
 * fields that feed them), in the order --help prints them: run_flag_table
 * joins them. */

/* The server and how requests reach it. */
static const struct flag_spec transport_flags[] = {
    {"base-url", NULL, FLAG_STRING, AT(transport.base_url), "URL", NULL,
     "OpenAI base URL; a bare http://HOST:PORT gets /v1 (default " RUN_DEFAULT_BASE_URL ")",
     .section = "Target"},
    {"host", NULL, FLAG_STRING, AT(compat.host), "HOST", NULL,
     "with --port, instead of --base-url: http://HOST:PORT/v1 (default 127.0.0.1)"},
    {"port", NULL, FLAG_LONG, AT(compat.port), "N", NULL, "the server's port (default 8000)",
     .min = 1, .max = 65535},
    {"endpoint", NULL, FLAG_STRING, AT(compat.endpoint), "chat|completions|PATH", NULL,
     "API to call, or its path as vLLM takes it (/v1/chat/completions) (default chat)"},
    {"backend", NULL, FLAG_STRING, AT(compat.backend), "NAME", NULL,
     "vLLM's name for the API: openai-chat or vllm-chat (chat); vllm, openai, sglang, tgi, ... "
     "(completions)"},
    {"model", NULL, FLAG_STRING, AT(transport.model), "NAME", NULL,
     "model to request (default: the first of GET {base}/models)"},
    {"served-model-name", NULL, FLAG_STRING, offsetof(struct run_cli, served_model_name), "NAME", NULL,
     "vLLM's name of --model: the model to request; with --model too, this one is requested (vLLM "
     "reads its tokenizer from --model)"},
    {"api-key-env", NULL, FLAG_STRING, AT(transport.api_key_env), "VAR", "OPENAI_API_KEY",
     "environment variable holding the API key, sent as a bearer token when set; never written anywhere"},
    {"header", NULL, FLAG_CUSTOM, 0, "'Name: value'", NULL, "extra request header (repeatable)",
     .parse = set_header},
    {"header-env", NULL, FLAG_CUSTOM, 0, "NAME=VAR", NULL,
     "extra request header NAME whose value is read from environment variable VAR (repeatable); "
     "what anvil sweep saves in its plan instead of a header's value", .parse = set_header_env},
    {"traceparent", NULL, FLAG_ON, AT(transport.traceparent), NULL, NULL,
     "send a W3C traceparent header with each request (vLLM and SGLang export OpenTelemetry spans "
     "under it) and record its trace id as the request's trace_id, to find a request in the "
     "server's traces"},
};

/* The shape of the load. */
static const struct flag_spec load_flags[] = {
    {"concurrency", "max-concurrency", FLAG_LONG, AT(load.concurrency), "N", "1",
     "requests in flight: exactly N in the closed loop, at most N with --request-rate (there "
     "no cap unless given); without it and --request-rate, every prompt at once (vllm bench serve's "
     "default; 1 in duration mode)", .section = "Load", .min = 1, .max = 100000},
    {"request-rate", NULL, FLAG_RATE, AT(load.request_rate), "R", "inf",
     "open loop: R requests/s; inf = the closed loop"},
    {"burstiness", NULL, FLAG_RATE, AT(load.burstiness), "B", "1",
     "gamma shape of the arrival gaps: 1 = Poisson, larger is smoother, inf = constant gaps"},
    {"ramp-up-strategy", NULL, FLAG_CUSTOM, 0, "linear|exponential", NULL,
     "open loop whose rate ramps, instead of --request-rate (vLLM's): request i of the N measured is "
     "sent at rate R0 + (R1 - R0) i/(N-1) (linear) or R0 (R1/R0)^(i/(N-1)) (exponential), gaps drawn "
     "as --burstiness says", .parse = set_ramp_strategy},
    {"ramp-up-start-rps", NULL, FLAG_DOUBLE, AT(load.ramp.start_rps), "R0", NULL,
     "the ramp's rate at the first measured request, req/s (exponential: above 0)", .min = 0},
    {"ramp-up-end-rps", NULL, FLAG_DOUBLE, AT(load.ramp.end_rps), "R1", NULL,
     "the ramp's rate at the last measured request, req/s (at least R0)", .min = 0},
    {"ramp-up-s", NULL, FLAG_DOUBLE, AT(load.ramp.ramp_up_s), "S", NULL,
     "closed loop: stream k of the C of --concurrency starts k S/(C-1) seconds after the warm-ups "
     "(the first at once, the last at S) instead of all at once", .min = 0.001, .max = FLAG_YEAR_S},
    {"num-prompts", NULL, FLAG_LONG, AT(load.num_prompts), "N", "100",
     "measured requests (with --duration: the most that may be sent, default 200000); at most "
     "10,000,000: each costs about 0.2 KB of memory while the run lasts, its record is in the journal",
     .min = 1, .max = 10000000},
    {"warmup", "num-warmups", FLAG_LONG, AT(load.warmup), "N", "0", "unmeasured requests sent first",
     .min = 0, .max = 1000000},
    {"ready-check-timeout-sec", NULL, FLAG_DOUBLE, AT(load.ready_timeout_s), "S", "0",
     "wait up to S seconds for the server to answer GET {base}/models before starting", .min = 0},
    {"duration", NULL, FLAG_DURATION, AT(load.duration_s), "DUR", NULL,
     "duration mode: keep the load on and measure for DUR (seconds, or 45s, 90m, 2h, 1h30m); output tokens are counted inside "
     "the window by their arrival time (aggregate_tps); requests running at its end are kept as "
     "incomplete; at most a year", .min = 0.001, .max = FLAG_YEAR_S},
    {"warmup-s", NULL, FLAG_DURATION, AT(load.warmup_s), "DUR", "0",
     "duration mode: load before the window opens (seconds, or 30s, 5m, ...)", .min = 0, .max = FLAG_YEAR_S},
    {"threads", NULL, FLAG_LONG, AT(load.threads), "N", NULL,
     "measuring loops, one thread each, the load split over them (default: the online cores, at "
     "most one per 64 streams; never more than --concurrency)", .min = 1, .max = 1024},
};

/* One run spread over processes (its rows print under "Load"). */
static const struct flag_spec shard_flags[] = {
    {"shard", NULL, FLAG_CUSTOM, 0, "I/N", NULL,
     "send shard I (0-based) of N of the plan: closed loop its share of --concurrency, open loop "
     "every Nth arrival of the whole schedule; its artifact is merged with `anvil merge` (default: "
     "the whole run; under mpirun the rank and size say it)", .parse = set_shard},
    {"rank-timeout", NULL, FLAG_DOUBLE, AT(shard.rank_timeout_s), "S", "60",
     "under mpirun: how long rank 0 waits for another rank's records after its own load ended before "
     "it names that rank missing (the artifact is then incomplete)", .min = 0.1},
    {"start-at", NULL, FLAG_DOUBLE, AT(shard.start_at_unix), "UNIX_TIME", NULL,
     "begin the measured phase at this wall-clock instant, seconds since the epoch (the shards of "
     "one run agree on it; warm-ups run before it)", .min = 1},
};

/* What is sent. */
static const struct flag_spec workload_flags[] = {
    {"input-len", "random-input-len", FLAG_LONG, AT(workload.input_len), "N", "1024",
     "prompt length in tokens, as the server counts them; 0 = a minimal prompt (the request's unique "
     "head and the chat template, no filler)", .section = "Workload",
     .min = 0, .max = 100000000},
    {"output-len", "random-output-len", FLAG_LONG, AT(workload.output_len), "N", "128",
     "max_tokens per request, in tokens", .min = 1, .max = 100000000},
    {"custom-output-len", NULL, FLAG_LONG, AT(workload.output_len), "N", NULL,
     "vLLM's name of --output-len for its custom (JSON Lines) dataset: max_tokens of a line "
     "without its own", .min = 1, .max = 100000000},
    {"sharegpt-output-len", NULL, FLAG_LONG, AT(workload.output_len), "N", NULL,
     "vLLM's flag: every ShareGPT request gets max_tokens N (without it or --output-len, each "
     "gets its recorded reply's length, counted by the server's tokenizer)", .min = 1, .max = 100000000},
    {"ignore-eos", NULL, FLAG_ON, AT(workload.ignore_eos), NULL, NULL,
     "send ignore_eos so every reply has exactly --output-len tokens (default on)"},
    {"no-ignore-eos", NULL, FLAG_OFF, AT(workload.ignore_eos), NULL, NULL, "let replies end at EOS"},
    {"seed", NULL, FLAG_LONG, AT(workload.seed), "N", "0",
     "seed of the prompt filler text, length draws and arrival times", .min = 0, .max = 0x7fffffffL},
    {"input-len-range", NULL, FLAG_CUSTOM, 0, "R", "0",
     "prompt lengths uniform in [N(1-R), N(1+R)] tokens", .parse = set_input_range},
    {"random-range-ratio", NULL, FLAG_CUSTOM, 0, "R", NULL,
     "the same for prompt and output lengths (vLLM's flag)", .parse = set_range_ratio},
    {"shared-prefix-len", "random-prefix-len", FLAG_LONG, AT(workload.shared_prefix_len), "N", "0",
     "every prompt starts with the same N tokens (prefix-cache studies); the unique part follows it",
     .min = 0, .max = 100000000},
    {"dataset", NULL, FLAG_STRING, AT(workload.dataset), "jsonl:FILE|sharegpt:FILE|mooncake:FILE|azure:FILE", NULL,
     "prompts from a file: JSON Lines of {\"prompt\": ...} or {\"messages\": [...]} with an optional "
     "\"max_tokens\" (else --output-len), or ShareGPT JSON; or a trace replayed at its recorded "
     "times: Mooncake JSON Lines (timestamp ms, input_length, output_length, hash_ids of 512-token "
     "blocks: equal ids share prompt text) or the Azure LLM inference CSV; every request of the "
     "window is sent (--num-prompts caps them), with no cap on requests in flight unless "
     "--max-concurrency is given"},
    {"trace-speed", NULL, FLAG_DOUBLE, AT(workload.trace_speed), "X", NULL,
     "trace replay: X times as fast as recorded (gaps divided by X; default 1)", .min = 1e-6},
    {"trace-start", NULL, FLAG_DOUBLE, AT(workload.trace_start_s), "S", NULL,
     "trace replay: skip the requests of the trace's first S seconds (default 0)", .min = 0},
    {"trace-duration", NULL, FLAG_DOUBLE, AT(workload.trace_duration_s), "S", NULL,
     "trace replay: only the requests recorded in the S seconds from --trace-start", .min = 1e-6},
    {"prefix-hit-rate", NULL, FLAG_DOUBLE, AT(workload.prefix_hit_rate), "P", NULL,
     "a prefix-cache hit rate of P (0 < P < 1): the server's cache is emptied after calibration "
     "(vLLM POST /reset_prefix_cache, SGLang /flush_cache; else a warning), --prefix-groups "
     "unmeasured requests put one prefix of P x --input-len tokens each in it, then every measured "
     "prompt starts with one of them; the achieved rate is checked against P (within 5%)",
     .min = 1e-6},
    {"prefix-groups", NULL, FLAG_LONG, AT(workload.prefix_groups), "G", "1",
     "with --prefix-hit-rate: prefixes the requests take in turn (each group shares its own)",
     .min = 1, .max = 1000000},
    {"flush-cache", NULL, FLAG_ON, AT(workload.flush_cache), NULL, NULL,
     "empty the server's prefix cache after calibration, before any request is sent (a cold start)"},
    {"dataset-name", NULL, FLAG_STRING, AT(compat.dataset_name), "random|sharegpt|custom", NULL,
     "vLLM's way to say --dataset: with --dataset-path (custom = JSON Lines)"},
    {"dataset-path", NULL, FLAG_STRING, AT(compat.dataset_path), "FILE", NULL, "the dataset file"},
    {"multi-turn", NULL, FLAG_ON, AT(workload.multi_turn), NULL, NULL,
     "with --dataset: one request per user turn, sending the conversation's recorded history "
     "before it, only after the previous turn's reply has ended"},
    {"agentic", NULL, FLAG_STRING, AT(workload.agentic_file), "FILE", NULL,
     "agent sessions (JSON, or YAML in a .yaml/.yml file): {\"sessions\": [{\"system_len\": N, \"turns\": [{\"user_len\": N, "
     "\"tool_calls\": N, \"tool_result_len\": N, \"output_len\": N, \"think_time_s\": S, "
     "\"sub_agents\": K, \"sub_agent_len\": N, \"sub_agent_output_len\": N, \"sub_agent_result_len\": N}]}]} "
     "(lengths in words); each turn resends the session's whole history, its assistant tool calls "
     "and their results, think_time_s after the turn before it (and that turn's sub-agents, sent in "
     "parallel) ended; every request is sent once (--num-prompts caps them)"},
    {"agentic-sessions", NULL, FLAG_LONG, AT(workload.agentic_sessions), "N", NULL,
     "generated agent sessions (seeded by --seed): a user task, then a tool call and its result per "
     "turn", .min = 1, .max = 1000000},
    {"turns", NULL, FLAG_CUSTOM, 0, "A..B", NULL,
     "with --agentic-sessions: turns per session, uniform in [A, B] (default 3..6)",
     .parse = set_agentic_range},
    {"tool-result-len", NULL, FLAG_LONG, AT(workload.tool_result_len), "N", "200",
     "with --agentic-sessions: words of each tool result", .min = 1, .max = 10000000},
    {"user-len", NULL, FLAG_LONG, AT(workload.agentic_user_len), "N", "100",
     "with --agentic-sessions: words of a session's first user message", .min = 1, .max = 10000000},
    {"system-len", NULL, FLAG_LONG, AT(workload.agentic_system_len), "N", "0",
     "with --agentic-sessions: words of a session's system prompt", .min = 0, .max = 10000000},
    {"think-time", NULL, FLAG_CUSTOM, 0, "A..B", NULL,
     "with --agentic-sessions: seconds between a turn's reply and the next turn, uniform in [A, B], "
     "seeded (default none)", .parse = set_agentic_range},
    {"sub-agents", NULL, FLAG_LONG, AT(workload.sub_agents), "K", "0",
     "with --agentic-sessions: sub-agents each turn but the last spawns, sent in parallel (each the "
     "history plus a task of --user-len words); the next turn waits for them and carries their "
     "results (--tool-result-len words each)", .min = 0, .max = 64},
    {"calibration", NULL, FLAG_CHOICE, AT(workload.calib), "auto|tokenize|probe|none", "auto",
     "how prompt lengths are fitted to the server's tokenizer: POST /tokenize, probe requests with "
     "max_tokens 1, or none (--input-len filler words as they are); auto tries tokenize, then probe",
     .choices = calib_names},
    {"calibration-cache", NULL, FLAG_STRING, AT(workload.calibration_cache), "FILE", NULL,
     "reuse the calibration stored in FILE for this server, model, endpoint, engine and length, "
     "else calibrate and store it there (anvil sweep gives every round DIR/calibration.json)"},
    {"continuous-usage", NULL, FLAG_ON, AT(workload.continuous_usage), NULL, NULL,
     "ask for usage on every chunk (stream_options.continuous_usage_stats), so every chunk's tokens "
     "are counted and dated by the server; the default for vLLM, SGLang and anvil-sim, this asks "
     "any server"},
    {"no-continuous-usage", NULL, FLAG_ON, AT(workload.no_continuous_usage), NULL, NULL,
     "do not ask for usage on every chunk: tokens then come from the final usage, else the "
     "server's tokenizer over the text received, else the chunk count"},
    {"temperature", NULL, FLAG_CUSTOM, 0, "T", NULL, "sampling temperature sent with every request "
     "(default: not sent, the server's own)", .parse = set_sampling},
    {"top-p", NULL, FLAG_CUSTOM, 0, "P", NULL, "nucleus sampling top_p (default: not sent)",
     .parse = set_sampling},
    {"top-k", NULL, FLAG_CUSTOM, 0, "K", NULL, "top_k sampling (default: not sent)",
     .parse = set_sampling},
    {"extra-body", NULL, FLAG_CUSTOM, 0, "JSON", NULL,
     "a JSON object whose keys are added to every request body", .parse = set_extra_body},
    {"images-per-request", NULL, FLAG_LONG, AT(workload.images_per_request), "N", NULL,
     "chat: N synthetic PNG or JPEG images (seeded, unique per request and run) after each prompt's text, "
     "base64 in image_url parts; calibration probes with them, so --input-len counts their tokens",
     .min = 1, .max = 64},
    {"image-size", NULL, FLAG_STRING, AT(workload.image_size), "WxH", NULL,
     "size of the --images-per-request images, pixels (default 512x512)"},
    {"image-format", NULL, FLAG_STRING, AT(workload.image_format), "png|jpeg", NULL,
     "encoding of the --images-per-request images (default png; jpeg: baseline, quality 90)"},
    {"tools", NULL, FLAG_STRING, AT(workload.tools_file), "FILE", NULL,
     "tool definitions sent with every chat request: a JSON array of {\"type\": \"function\", "
     "\"function\": {...}} (or an object with it in \"tools\"); calibration then probes with them"},
    {"tool-choice", NULL, FLAG_STRING, AT(workload.tool_choice), "auto|none|required|NAME|JSON", NULL,
     "\"tool_choice\" sent with --tools: as given, or NAME of a function for that function"},
    {"tokenizer", NULL, FLAG_STRING, AT(compat.tokenizer), "NAME", NULL,
     "accepted for vLLM's command lines; anvil counts tokens with the server's own tokenizer"},
};

/* The transport's limits: how long a request, a connection or a silence may last. */
static const char *const transport_names[] = {"auto", "native", "curl", NULL};

static const struct flag_spec limit_flags[] = {
    {"transport", NULL, FLAG_CHOICE, AT(transport.kind), "auto|native|curl", "auto",
     "how requests go out: native is anvil's own HTTP/1.1 client (plain http://), curl is libcurl "
     "(https://, proxies); auto is native for a plain http:// URL without credentials when no proxy "
     "variable is set, else curl. The artifact records it (client.transport)", .section = "Limits",
     .choices = transport_names},
    {"timeout-s", NULL, FLAG_DOUBLE, AT(transport.timeout_s), "S", "600", "whole-request timeout, seconds",
     .min = 0.001},
    {"connect-timeout-s", NULL, FLAG_DOUBLE, AT(transport.connect_timeout_s), "S", "10",
     "connection timeout, seconds", .min = 0.001},
    {"idle-timeout-s", NULL, FLAG_DOUBLE, AT(transport.idle_timeout_s), "S", "120",
     "abort a stream silent for this long, seconds", .min = 0.001},
    {"stall-timeout-s", NULL, FLAG_DOUBLE, AT(transport.stall_timeout_s), "S", NULL,
     "end the run when requests are in flight and no byte has arrived on any of them for this long, "
     "seconds: nothing more is sent, those in flight fail, the artifact is incomplete "
     "(\"server_stalled\") and the exit status 1 (default: the --idle-timeout-s value; 0 = never)",
     .min = 0},
    {"grace-s", NULL, FLAG_DOUBLE, AT(transport.grace_s), "S", "5",
     "after Ctrl-C/SIGTERM/SIGHUP, how long in-flight requests may finish before they are cancelled, "
     "seconds", .min = 0},
};

/* Where the results go and how they are summarized. */
static const struct flag_spec output_flags[] = {
    {"out", NULL, FLAG_STRING, AT(out.path), "FILE", NULL,
     "artifact, schema anvil-serving.benchmark/v1 (default results/<run_id>.json)",
     .section = "Output"},
    {"result-dir", NULL, FLAG_STRING, AT(compat.result_dir), "DIR", NULL,
     "directory of the artifact (default results)"},
    {"result-filename", NULL, FLAG_STRING, AT(compat.result_filename), "NAME", NULL,
     "file name of the artifact (default <run_id>.json)"},
    {"save-result", NULL, FLAG_ON, AT(compat.save_result), NULL, NULL,
     "accepted for vLLM's command lines: the artifact is always written"},
    {"disable-tqdm", NULL, FLAG_ON, offsetof(struct run_cli, no_progress), NULL, NULL,
     "no progress line"},
    {"requests-out", NULL, FLAG_STRING, AT(out.requests_out), "FILE", NULL,
     "JSON Lines, one line per request, appended as each ends"},
    {"max-failure-rate", NULL, FLAG_DOUBLE, offsetof(struct run_cli, max_failure_rate), "R", "0.05",
     "the run fails (exit 1) when more than this share of its measured requests failed", .min = 0, .max = 1},
    {"result-format", NULL, FLAG_CHOICE, offsetof(struct run_cli, result_format), "anvil|vllm", "anvil",
     "vllm: also write vLLM's result JSON (mean_ttft_ms, p99_itl_ms, ...) beside the artifact, as "
     "the artifact's path with .vllm.json for .json", .choices = result_format_names},
    {"max-request-rows", NULL, FLAG_LONG, AT(out.max_request_rows), "N", "100000",
     "the artifact lists requests of request_index below N in request_timings and failures, and counts "
     "the others (request_rows_left_out); summaries cover every request, the journal has every row",
     .min = 1, .max = 10000000},
    {"ceiling-file", NULL, FLAG_STRING, AT(out.ceiling_file), "FILE", NULL,
     "the client's measured ceiling (anvil ceiling) the run's peak SSE events/s per measuring thread is "
     "compared with, warned about above 70 %; '' = none (default $XDG_CACHE_HOME/anvil/ceiling.json, "
     "else ~/.cache/anvil/ceiling.json)"},
    {"timeseries-interval-s", NULL, FLAG_DOUBLE, AT(out.timeseries_interval_s), "S", "1",
     "the artifact's time series: one row per S seconds since the first measured send (requests, tokens, "
     "TTFT and ITL p50/p99, gauges); merged to 10 s rows past 10 min and 60 s past 10 h", .min = 0.001,
     .max = 86400},
    {"percentile-method", NULL, FLAG_CHOICE, AT(out.pct), "nearest|linear", "nearest",
     "nearest rank, or linear interpolation", .choices = pct_names},
    {"percentile-metrics", NULL, FLAG_CUSTOM, 0, "LIST", "ttft,tpot,itl",
     "metrics printed at --metric-percentiles after the summary: any of ttft, tpot, itl, e2el "
     "(computed from the requests; the artifact always has them all)", .parse = set_pct},
    {"metric-percentiles", NULL, FLAG_CUSTOM, 0, "LIST", "99",
     "percentiles in (0, 100] for --percentile-metrics, e.g. 50,90,99.9", .parse = set_pct},
    {"goodput", NULL, FLAG_CUSTOM, 0, "ttft:MS tpot:MS e2el:MS", NULL,
     "SLOs of a good request in ms (any subset, also comma separated); reports goodput_rps",
     .parse = set_goodput, .many = true},
};

/* What the server and the hardware say. */
static const struct flag_spec observe_flags[] = {
    {"server-metrics", NULL, FLAG_STRING, AT(observe.server_metrics), "auto|off|URL", "auto",
     "the server's Prometheus metrics, scraped before and after the load, at the window's boundaries "
     "and every --scrape-interval-ms: auto = the base URL's root /metrics (off without a word when it "
     "has none), off, or the URL of a /metrics", .section = "Server and hardware"},
    {"scrape-interval-ms", NULL, FLAG_DOUBLE, AT(observe.scrape_interval_ms), "MS", "1000",
     "milliseconds between /metrics scrapes", .min = 1},
    {"metrics-listen", NULL, FLAG_STRING, AT(observe.metrics_listen), "HOST:PORT", NULL,
     "serve anvil's own Prometheus metrics (anvil_*: requests, tokens, TTFT, ITL, loop lag) at "
     "http://HOST:PORT/metrics while the run goes on, for a dashboard (docs/grafana-anvil.json); "
     "not --server-metrics, which scrapes the server"},
    {"telemetry", NULL, FLAG_CHOICE, AT(observe.telemetry), "auto|on|off", "auto",
     "GPU telemetry (NVML, else nvidia-smi) and the host's CPU, memory and CPU temperature: auto = on "
     "when a GPU is found, on = the host even without one", .choices = telemetry_names},
    {"telemetry-interval-ms", NULL, FLAG_DOUBLE, AT(observe.telemetry_interval_ms), "MS", "1000",
     "milliseconds between telemetry readings", .min = 1},
    {"gpu-metrics-url", NULL, FLAG_STRING, AT(observe.gpu_metrics_url), "URL", NULL,
     "read the GPUs from a Prometheus exporter's /metrics (NVIDIA DCGM exporter names) instead of NVML"},
};

/* What the artifact says of the run: labels, cost, its place in a sweep (its rows
 * print under "Server and hardware"). */
static const struct flag_spec label_flags[] = {
    {"engine-label", NULL, FLAG_STRING, AT(out.engine_label), "TEXT", NULL,
     "engine name for the artifact (default: detected)"},
    {"gpu-label", NULL, FLAG_STRING, AT(out.gpu_label), "TEXT", NULL,
     "hardware description for the artifact"},
    {"gpu-hour-cost", NULL, FLAG_DOUBLE, offsetof(struct run_cli, cost.gpu_hour_usd), "USD", NULL,
     "price of one GPU-hour: the summary adds cost per million output tokens", .min = 0},
    {"gpus", NULL, FLAG_LONG, offsetof(struct run_cli, cost.gpus), "N", "1",
     "GPUs the server runs on, for --gpu-hour-cost", .min = 1, .max = 1000000},
    {"case-id", NULL, FLAG_STRING, AT(out.sweep.case_id), "ID", NULL,
     "where this run sits in a sweep (set by anvil sweep; written to the artifact's \"sweep\")"},
    {"round", NULL, FLAG_LONG, AT(out.sweep.round), "N", NULL, "the sweep round, from 1",
     .min = 1, .max = 1000000},
    {"sweep-target", NULL, FLAG_STRING, AT(out.sweep.target), "LABEL", NULL, "the sweep target's label"},
};

/* vllm bench serve's flags that change nothing here (README.md's table): accepted, so its
 * command lines run as they are, each with one note saying why. */
static const struct flag_spec vllm_noted_flags[] = {
    {"tokenizer-mode", NULL, FLAG_NOTE, 0, "MODE", NULL, TOKENS_BY_SERVER,
     .section = "vllm bench serve's flags that change nothing here (each noted on stderr)",
     .parse = note_vllm},
    {"trust-remote-code", NULL, FLAG_NOTE, 0, NULL, NULL, TOKENS_BY_SERVER, .parse = note_vllm},
    {"save-detailed", NULL, FLAG_NOTE, 0, NULL, NULL, IN_THE_ARTIFACT, .parse = note_vllm},
    {"append-result", NULL, FLAG_NOTE, 0, NULL, NULL,
     "every run writes its own artifact (--out); " IN_THE_ARTIFACT, .parse = note_vllm},
    {"metadata", NULL, FLAG_NOTE, 0, "KEY=VALUE...", NULL, IN_THE_ARTIFACT, .parse = note_vllm,
     .many = true},
    {"label", NULL, FLAG_NOTE, 0, "LABEL", NULL, IN_THE_ARTIFACT, .parse = note_vllm},
    {"request-id-prefix", NULL, FLAG_NOTE, 0, "PREFIX", NULL,
     "requests carry X-Request-Id: anvil-req-N (warm-ups anvil-warmup-N)", .parse = note_vllm},
    {"disable-shuffle", NULL, FLAG_NOTE, 0, NULL, NULL,
     "a dataset loading option of vLLM's Python datasets; anvil reads prompts in file order, never "
     "shuffled", .parse = note_vllm},
    {"no-oversample", NULL, FLAG_NOTE, 0, NULL, NULL,
     "a dataset loading option of vLLM's Python datasets; anvil sends --num-prompts requests and goes "
     "round a file with fewer again, each pass's prompts made unique (give --num-prompts as the "
     "file's count to send each once)", .parse = note_vllm},
    {"skip-chat-template", NULL, FLAG_NOTE, 0, NULL, NULL,
     "a dataset loading option of vLLM's Python datasets; anvil sends prompts as they are (on chat the "
     "server applies its template)", .parse = note_vllm},
    {"no-stream", NULL, FLAG_NOTE, 0, NULL, NULL,
     "vLLM's option to load a Hugging Face dataset without streaming it; anvil reads local files whole "
     "(replies are always streamed)", .parse = note_vllm},
};

/* And those whose meaning anvil cannot honour: refused, with why. */
static const struct flag_spec vllm_refused_flags[] = {
    {"logprobs", NULL, FLAG_REFUSED, 0, "N", NULL,
     "not applicable: anvil measures streaming text generation without log-probabilities",
     .section = "vllm bench serve's flags anvil refuses (a usage error saying why)"},
    {"use-beam-search", NULL, FLAG_REFUSED, 0, NULL, NULL,
     "not applicable: anvil measures streaming text generation, token by token (no beam search)"},
    {"lora-modules", NULL, FLAG_REFUSED, 0, "NAME...", NULL,
     "not applicable: anvil requests one model per run (a LoRA adapter's served name goes in --model), "
     "not a random adapter per request"},
    {"profile", NULL, FLAG_REFUSED, 0, NULL, NULL, "not applicable: anvil does not control the server's profiler"},
    {"enable-multimodal-chat", NULL, FLAG_REFUSED, 0, NULL, NULL,
     "not applicable: a transformation of vLLM's Python datasets; anvil sends images with "
     "--images-per-request or a JSON Lines dataset's \"images\""},
    {"hf-*", NULL, FLAG_REFUSED, 0, "V", NULL,
     "not applicable: Hugging Face datasets are loaded by vLLM's Python code; anvil reads local files "
     "(--dataset jsonl:FILE|sharegpt:FILE)"},
    {"sonnet-*", NULL, FLAG_REFUSED, 0, "V", NULL,
     "not applicable: the sonnet dataset is vLLM's Python loader; anvil reads local files "
     "(--dataset jsonl:FILE|sharegpt:FILE) or makes prompts of --input-len tokens"},
    {"random-mm-*", NULL, FLAG_REFUSED, 0, "V", NULL,
     "not applicable: vLLM's random multimodal dataset; anvil sends generated images with "
     "--images-per-request and --image-size"},
    {"insecure", NULL, FLAG_REFUSED, 0, NULL, NULL,
     "not applicable: anvil does not turn off TLS certificate checks; use a certificate this machine "
     "trusts, or http:// on a network you trust"},
    {"min-p", NULL, FLAG_REFUSED, 0, "P", NULL,
     "not a flag of anvil's: send it with every request as --extra-body '{\"min_p\": P}'"},
};

#define ROWS(t) {t, sizeof t / sizeof *t}
static const struct {
    const struct flag_spec *rows;
    size_t n;
} tables[] = {
    ROWS(transport_flags), ROWS(load_flags), ROWS(shard_flags), ROWS(workload_flags), ROWS(limit_flags),
    ROWS(output_flags), ROWS(observe_flags), ROWS(label_flags), ROWS(vllm_noted_flags), ROWS(vllm_refused_flags),
};

/* Every table's rows, then the {0} that ends them (flags_parse's form). */
#define ALL_ROWS (sizeof transport_flags + sizeof load_flags + sizeof shard_flags + sizeof workload_flags + \
                  sizeof limit_flags + sizeof output_flags + sizeof observe_flags + sizeof label_flags + \
                  sizeof vllm_noted_flags + sizeof vllm_refused_flags) / sizeof(struct flag_spec)
static struct flag_spec joined[ALL_ROWS + 1];

const struct flag_spec *run_flag_table(void)
{
    if (!joined[0].name)    /* joined on the first call (the command line is read on one thread) */
        for (size_t i = 0, k = 0; i < sizeof tables / sizeof *tables; i++)
            for (size_t j = 0; j < tables[i].n; j++)
                joined[k++] = tables[i].rows[j];
    return joined;
}
