/* registry.c — the metric registry's rows (docs/METHODOLOGY.md, "The metric
 * registry"), lookup by name, and artifact key → name. */
#include "stats/registry.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define METH "docs/METHODOLOGY.md"
#define DEC "docs/DECODE.md"
#define ALL METRIC_ALL_MODES
#define REQ METRIC_REQUESTS
#define DUR METRIC_DURATION
#define BURST METRIC_BURST
#define HI METRIC_HIGHER
#define LO METRIC_LOWER
#define NONE METRIC_NEITHER

/* Definitions are the sources' words: tests/unit/test_registry.c finds each
 * in its source. */
static const struct metric_def rows[] = {
    /* ---- per request (METHODOLOGY.md, "Per request") ---- */
    {"ttft", {0}, "ms", "TTFT",
     "start → first delta whose `content` (chat) or `text` (completions) is non-empty, or that carries "
     "a tool call (`delta.tool_calls[]` with a non-empty `id`, `function.name` or `function.arguments`; "
     "the legacy `delta.function_call`): a tool call is the reply's answer. A role-only or empty chunk "
     "does not count.", METH, "seed 001", "ttft", ALL, LO, 0, "TTFT {stat} ms"},
    {"time_to_first_output", {0}, "ms", "Time to first output",
     "start → first non-empty reasoning (`reasoning`, else `reasoning_content`: one field per delta, "
     "never the sum), content or tool-call delta", METH, "seed 001", "time_to_first_output", ALL, LO, 0},
    {"time_to_headers", {0}, "ms", "Response headers",
     "the TTFT decomposition: response headers complete", METH, "anvil", NULL, ALL, LO, 0},
    {"time_to_first_byte", {0}, "ms", "First byte", "first body bytes", METH, "anvil", NULL, ALL, LO, 0},
    {"time_to_first_event", {0}, "ms", "First SSE event", "first SSE event of any kind", METH, "anvil", NULL,
     ALL, LO, 0},
    {"e2e", {"e2el", "latency", "request_latency", NULL}, "ms", "E2E",
     "start → `data: [DONE]` (or connection close after a chunk with `finish_reason`)", METH,
     "seed 001 (seed 004: latency, request_latency; vLLM: e2el)", "e2e", ALL, LO, 0},
    {"generation", {0}, "ms", "Generation", "`e2e_ms − time_to_first_output_ms`", METH, "seed 001",
     "generation", ALL, NONE, 0},
    {"visible_generation", {0}, "ms", "Visible generation", "`e2e_ms − ttft_ms`", METH, "anvil",
     "visible_generation", ALL, NONE, 0},
    {"tpot", {0}, "ms/token", "TPOT (excl. 1st token)",
     "`generation_ms / (output_tokens − 1)`; null when `output_tokens ≤ 1`", METH, "seed 001", "tpot", ALL,
     LO, 0, "TPOT {stat} ms"},
    /* the same formula under seed 001's second name, which seed 000 defines apart */
    {"mean_inter_token_latency", {0}, "ms/token", "Mean ITL (= TPOT)",
     "`generation_ms / (output_tokens − 1)`; null when `output_tokens ≤ 1`", METH, "seed 001", "mean_itl", ALL,
     LO, 0},
    {"decode_tok_s", {0}, "tokens/s", "Decode tok/s", "`(output_tokens − 1) / generation_s`", METH,
     "seed 001", "decode", ALL, HI, 0},
    {"effective_prefill_tok_s", {0}, "tokens/s", "Effective prefill tok/s",
     "`prompt_tokens / time_to_first_output_s` (includes queueing)", METH, "seed 001", "effective_prefill",
     ALL, HI, 0},
    {"time_to_second_output", {"time_to_second_token", NULL}, "ms", "Time to second output",
     "first output chunk → the next output chunk", METH, "anvil (seed 004: time_to_second_token)",
     "time_to_second_output", ALL, LO, 0},
    {"itl", {0}, "ms", "ITL (per chunk)", "gaps between consecutive output-carrying chunks (per chunk)", METH,
     "vLLM bench serve", "itl", ALL, LO, 0},
    {"itl_per_token", {0}, "ms/token", "ITL per token",
     "each gap divided by the tokens its chunk carried: from continuous usage (asked by default of vLLM, "
     "SGLang and anvil-sim) when sent, else the reply's tokens after the first spread evenly over its later "
     "chunks", METH, "anvil", "itl_per_token", ALL, LO, 0},
    {"itl_percentile_rel_error", {0}, "ratio", "ITL percentile error bound",
     "0 when the ITL percentiles are exact; past 262,144 gaps, the bound on their relative error "
     "(0.001: a log-linear histogram)", METH, "anvil", NULL, ALL, NONE, 0},
    {"itl_per_token_percentile_rel_error", {0}, "ratio", "ITL per token percentile error bound",
     "the same bound for the ITL per token percentiles", METH, "anvil", NULL, ALL, NONE, 0},
    {"tokens_per_chunk", {0}, "tokens/chunk", "Tokens per chunk",
     "output tokens / output chunks, per request (> 1 under speculative decoding)", METH, "anvil", NULL, ALL,
     NONE, 0},
    {"output_tokens", {"output_seq_len", "output_tokens_per_request", NULL}, "tokens", "Output tokens",
     "counted from the best source the stream offers", METH, "seed 001 (seed 004: output_seq_len)", NULL, ALL,
     NONE, 0},
    {"prompt_tokens", {"prompt_token", "input_seq_len", "input_tokens", NULL}, "tokens", "Prompt tokens",
     "the request's `usage.prompt_tokens`; a run's bare `prompt_tokens` is their sum over completed requests "
     "and `prompt_token_samples` how many reported it", METH, "seed 001 (seed 004: input_seq_len)", NULL, ALL,
     NONE, 0},
    {"cached_tokens", {0}, "tokens", "Cached prompt tokens",
     "the request's `usage.prompt_tokens_details.cached_tokens`: prompt tokens the server took from its "
     "prefix cache", METH, "anvil", NULL, ALL, NONE, 0},
    {"tool_call_chunks", {0}, "chunks", "Tool-call chunks",
     "chunks carrying tool-call deltas (each is an output chunk: argument fragments count like content)",
     METH, "anvil", NULL, ALL, NONE, 0},
    {"tool_calls", {0}, "calls", "Tool calls", "tool calls the reply opened (a delta with an `id` or a "
     "function name)", METH, "anvil", NULL, ALL, NONE, 0},
    {"content_chunks", {0}, "chunks", "Content chunks",
     "output chunks whose delta carries content (or text); a run's is their sum over completed requests",
     METH, "seed 001", NULL, ALL, NONE, 0},
    {"content_chunks_s", {0}, "chunks/s", "Content chunks/s",
     "seed 001's field, written null: the seed gives it no value to reproduce", METH, "seed 001", NULL, ALL,
     NONE, 0},
    {"reasoning_chunks", {0}, "chunks", "Reasoning chunks",
     "output chunks whose delta carries reasoning (`reasoning`, else `reasoning_content`); a run's is their sum "
     "over completed requests", METH, "seed 001", NULL, ALL, NONE, 0},
    {"output_chunks", {0}, "chunks", "Output chunks",
     "chunks carrying output of any kind: content, reasoning or tool-call deltas", METH, "anvil", NULL, ALL,
     NONE, 0},
    {"generation_tps_per_user", {0}, "tokens/s", "Generation tok/s per user",
     "`output_tokens / generation_s`: every output token over the generation time (an `anvil run` figure "
     "that earlier versions wrote as `output_tps_per_user`, the name seed 004 gives another formula)", METH, "anvil", NULL, ALL,
     HI, 0},
    {"e2e_output_tps_per_user", {0}, "tokens/s", "E2E tok/s per user", "n / latency; 0 when cut", DEC,
     "seed 004's methodology", NULL, ALL, HI, 0},
    {"send_lateness", {0}, "ms", "Send lateness", "scheduled → actual send", METH, "anvil", NULL, ALL, LO, 0},
    {"scheduled_ttft", {0}, "ms", "Scheduled TTFT",
     "TTFT measured from the request's scheduled time instead of its send: client-side queueing included",
     METH, "anvil", NULL, ALL, LO, 0},
    {"scheduled_e2e", {0}, "ms", "Scheduled E2E",
     "E2E measured from the request's scheduled time instead of its send: client-side queueing included",
     METH, "anvil", NULL, ALL, LO, 0},

    /* ---- per run (METHODOLOGY.md, "Per run") ---- */
    {"wall_clock", {"duration", NULL}, "ms", "Duration",
     "first measured request start → last measured request end", METH, "seed 001 (seed 003: duration, s)",
     "wall_clock", ALL, NONE, 0},
    {"output_throughput", {"throughput_tok_s", NULL}, "tokens/s", "Output throughput",
     "Σ output tokens of completed requests / duration", METH, "seed 001 (vLLM: output_throughput)",
     "aggregate", ALL, HI, REQ, "out tok/s"},
    {"total_token_throughput", {0}, "tokens/s", "Total tok/s", "Σ (prompt + output tokens) / duration", METH,
     "vLLM bench serve", "total_token_throughput", ALL, HI, 0},
    {"request_throughput", {0}, "requests/s", "Requests/s", "completed requests / duration", METH,
     "vLLM bench serve", "request_throughput", ALL, HI, 0},
    {"goodput_rps", {"goodput", NULL}, "requests/s", "Goodput req/s", "`goodput_rps` = good requests / duration",
     METH, "vLLM bench serve", NULL, ALL, HI, 0, "goodput req/s"},
    {"peak_output_tps_1s", {0}, "tokens/s", "Peak output tok/s (1 s)",
     "most output tokens arriving within any 1 s window", METH, "anvil", NULL, ALL, HI, 0},
    {"completed", {0}, "requests", "Completed", "requests that ended with their stream complete", METH,
     "seed 001", NULL, ALL, HI, 0},
    {"failed", {0}, "requests", "Failed",
     "requests that failed (Failures, above), excluded from every latency distribution", METH, "seed 001",
     NULL, ALL, LO, 0},
    {"total_output_tokens", {0}, "tokens", "Output tokens (sum)",
     "Σ output tokens of completed requests (a run's `metrics.output_tokens`)", METH, "seed 003", NULL, ALL,
     NONE, 0},
    {"output_token_sources", {0}, "requests", "Output token sources",
     "completed requests by `output_token_source` (`usage`, `tokenize`, `chunks`)", METH, "anvil", NULL, ALL,
     NONE, 0},
    {"prefix_cache_hit", {0}, "fraction", "Prefix cache hits",
     "Σ `cached_tokens` / Σ `prompt_tokens` over completed requests; null when none reported cached "
     "tokens", METH,
     "seed 001", NULL, ALL, NONE, 0},
    {"cost_per_mtok", {0}, "USD/Mtok", "Cost per million output tokens",
     "USD per GPU-hour × GPUs / (output tokens/s × 3600) × 10⁶, the output tokens/s being the mode's headline",
     METH, "anvil", NULL, ALL, LO, 0, "USD / M out tok"},
    {"energy_j", {0}, "J", "GPU energy", "the energy of every GPU over the window", METH, "anvil", NULL, ALL,
     LO, 0},
    {"output_tokens_per_joule", {0}, "tokens/J", "Output tokens per joule",
     "the client's output tokens in the window / the energy of every GPU", METH, "anvil", NULL, ALL, HI, 0},
    {"joules_per_output_token", {0}, "J/token", "Joules per output token",
     "the energy of every GPU / the client's output tokens in the window", METH, "anvil", NULL, ALL, LO, 0},

    /* ---- duration windows (METHODOLOGY.md, "Load shapes"; DECODE.md, "Window") ---- */
    {"aggregate_tps", {0}, "tokens/s", "Window output throughput",
     "output tokens dated inside the window / its measured length: `anvil run --duration`'s window; a decode "
     "cell's window start → last counted arrival (seed 004); a burst's first start → last end", METH,
     "seed 004's methodology", NULL, DUR | BURST, HI, DUR | BURST},
    {"tokens_in_window", {"client_output_tokens", "total_tokens", NULL}, "tokens", "Tokens in window",
     "output tokens dated inside the window, over every request", METH,
     "anvil (seed 004: client_output_tokens, total_tokens)", NULL, DUR | BURST, NONE, 0},
    {"server_tokens_in_window", {"server_output_tokens", NULL}, "tokens", "Server tokens in window",
     "the server's generation counter over the same window (interpolated at its boundaries)", METH,
     "seed 004's methodology", NULL, DUR, NONE, 0},
    {"requests_started_in_window", {0}, "requests", "Requests in window", "measured requests sent, warm-ups left out",
     METH, "anvil", NULL, DUR, NONE, 0},
    {"incomplete_requests", {0}, "requests", "Cut requests",
     "requests still running when the window closed: cut, never failed or dropped", METH, "anvil", NULL, DUR,
     NONE, 0},
    {"warmup_requests", {0}, "requests", "Warm-up requests",
     "requests sent before the window opened; their latencies are not reported", METH, "anvil", NULL, DUR,
     NONE, 0},

    /* ---- decode cells and bursts (DECODE.md; seed 004's names) ---- */
    {"request_count", {0}, "requests", "Requests overlapping the window",
     "`request_count` = requests overlapping the window (sent before it closed, not ended before it opened)", DEC,
     "seed 004's methodology", NULL, DUR | BURST, NONE, 0},
    {"completed_request_count", {0}, "requests", "Completed (overlapping)",
     "`completed_request_count` those of them that completed", DEC, "seed 004's methodology", NULL, DUR | BURST,
     HI, 0},
    {"num_completed", {0}, "requests", "Completed inside the window", "`num_completed` those completed inside it",
     DEC, "seed 004's methodology", NULL, DUR | BURST, HI, 0},
    {"num_errors", {0}, "requests", "Failed (decode)", "`num_errors` those failed", DEC, "seed 004's methodology",
     NULL, DUR | BURST, LO, 0},
    {"inter_token_latency", {0}, "s/token", "ITL (decode)", "(latency − ttft) / (n − 1); cut: (last token − ttft) "
     "/ (n − 1)", DEC, "seed 004's methodology", NULL, DUR | BURST, LO, 0},
    {"chunk_inter_token_latency", {0}, "s", "Chunk ITL (decode)", "(last chunk − first chunk) / (chunks − 1)",
     DEC, "seed 004's methodology", NULL, DUR | BURST, LO, 0},
    {"output_tps_per_user", {0}, "tokens/s", "Output tok/s per user",
     "(n − 1) / (latency − ttft) (cut: to its last token) = 1 / inter_token_latency_avg", DEC,
     "seed 004's methodology", NULL, DUR | BURST, HI, 0},
    {"per_request_avg_tps", {0}, "tokens/s", "Tok/s per request", "`per_request_avg_tps` = aggregate / C.", DEC,
     "seed 004's methodology", NULL, DUR | BURST, HI, 0},
    {"measurement", {0}, "s", "Measured time", "`measurement_seconds` window start → the last counted arrival",
     DEC, "seed 004's methodology", NULL, DUR | BURST, NONE, 0},
    {"measurement_wall", {0}, "s", "Window", "`measurement_wall_seconds` is the window", DEC,
     "seed 004's methodology", NULL, DUR | BURST, NONE, 0},
    {"wall_time", {0}, "s", "Cell wall time", "a decode cell's first send → its last request's end",
     METH, "seed 004's methodology", NULL, DUR | BURST, NONE, 0},
    {"warmup_duration", {0}, "s", "Warm-up", "`warmup_duration` is first send → window start", DEC,
     "seed 004's methodology", NULL, DUR, NONE, 0},
    {"server_gen_throughput", {0}, "tokens/s", "Server tok/s",
     "the server's generation tokens over the window / the window", METH, "seed 004's methodology", NULL, DUR,
     HI, 0},
    {"server_utilization", {0}, "fraction", "Server utilization", "(SGLang's gauge; null for vLLM)", DEC,
     "seed 004's methodology", NULL, DUR, NONE, 0},
    {"server_spec_accept_rate", {0}, "fraction", "Spec accept rate", "Δaccepted / Δdraft tokens", METH,
     "seed 004's methodology", NULL, DUR, HI, 0},
    {"server_spec_accept_length", {0}, "tokens", "Spec accept length", "1 + Δaccepted / Δdrafts", METH,
     "seed 004's methodology", NULL, DUR, HI, 0},
    {"server_spec_drafts", {0}, "drafts", "Spec drafts", "the server's speculative drafts over the window", METH,
     "seed 004's methodology", NULL, DUR, NONE, 0},
    {"server_spec_draft_tokens", {0}, "tokens", "Spec draft tokens",
     "the server's speculative draft tokens over the window", METH, "seed 004's methodology", NULL, DUR, NONE, 0},
    {"server_spec_accepted_tokens", {0}, "tokens", "Spec accepted tokens",
     "the server's accepted draft tokens over the window", METH, "seed 004's methodology", NULL, DUR, NONE, 0},
    {"server_spec_pos_accept", {0}, "fraction", "Spec accept by position",
     "`server_spec_pos_accept[i]` = Δaccepted at draft position i / Δdrafts", METH, "seed 004's methodology",
     NULL, DUR, HI, 0},
    {"server_engine_steps", {0}, "steps", "Engine steps",
     "`server_engine_steps` = drafts + max(0, out − (accepted + drafts)) with out = the server's output tokens",
     DEC, "seed 004's methodology", NULL, DUR, NONE, 0},
    {"server_accept_len_effective", {0}, "tokens/step", "Effective accept length",
     "`server_accept_len_effective` = out / steps", DEC, "seed 004's methodology", NULL, DUR, HI, 0},
    {"server_steps_per_s", {0}, "steps/s", "Engine steps/s",
     "`server_steps_per_s` = `aggregate_tps` / `server_accept_len_effective`", DEC, "seed 004's methodology",
     NULL, DUR, HI, 0},
    {"accept_norm_tps", {0}, "tokens/s", "Accept-normalized tok/s", "`accept_norm_tps` = steps/s × L; 0 = off",
     DEC, "seed 004's methodology", NULL, DUR, HI, 0},
    {"running_reqs", {0}, "requests", "Running requests",
     "the server's running-requests gauge over the window (`avg_`: time-weighted mean; `max_`: maximum)", METH,
     "seed 004's methodology", NULL, DUR, NONE, 0},
    {"queue_reqs", {0}, "requests", "Queued requests",
     "the server's waiting-requests gauge over the window (`avg_`: time-weighted mean; `max_`: maximum)", METH,
     "seed 004's methodology", NULL, DUR, LO, 0},
    {"effective_concurrency", {0}, "requests", "Effective concurrency",
     "`effective_concurrency` = the server's mean running requests, rounded", DEC, "seed 004's methodology",
     NULL, DUR, NONE, 0},
    {"queue_fraction", {0}, "fraction", "Queue fraction", "`queue_fraction` (share of readings with a request "
     "waiting)", METH, "seed 004's methodology", NULL, DUR, LO, 0},
};

#define N_ROWS (sizeof rows / sizeof *rows)

size_t metric_count(void)
{
    return N_ROWS;
}

const char *metric_column(const char *name, const char *stat, char *out, size_t cap)
{
    const struct metric_def *m = metric_find(name);
    const char *sp = stat && *stat ? " " : "", *st = stat ? stat : "";
    if (!m)
        snprintf(out, cap, "%s", "");
    else if (!m->column)
        snprintf(out, cap, "%s%s%s (%s)", m->label, sp, st, m->unit);
    else {
        const char *at = strstr(m->column, "{stat}");
        if (!at)
            snprintf(out, cap, "%s", m->column);
        else if (*st)
            snprintf(out, cap, "%.*s%s%s", (int)(at - m->column), m->column, st, at + 6);
        else    /* no statistic: the heading without its slot and the space before it */
            snprintf(out, cap, "%.*s%s", (int)(at - m->column > 0 ? at - m->column - 1 : 0), m->column, at + 6);
    }
    return out;
}

const struct metric_def *metric_at(size_t i)
{
    return i < N_ROWS ? &rows[i] : NULL;
}

const struct metric_def *metric_find(const char *name)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        if (!strcmp(rows[i].name, name))
            return &rows[i];
        for (int a = 0; a < METRIC_MAX_ALIASES && rows[i].aliases[a]; a++)
            if (!strcmp(rows[i].aliases[a], name))
                return &rows[i];
    }
    return NULL;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && !strncmp(s + n - k, suffix, k);
}

/* Length of "_pNN" (digits) at the end of s[0..n), else 0. */
static size_t pct_suffix(const char *s, size_t n)
{
    size_t d = 0;
    while (d < n && isdigit((unsigned char)s[n - 1 - d]))
        d++;
    return d > 0 && n > d + 2 && s[n - d - 1] == 'p' && s[n - d - 2] == '_' ? d + 2 : 0;
}

/* Length of "pNN_" at the start of s, else 0. */
static size_t pct_prefix(const char *s)
{
    if (s[0] != 'p' || !isdigit((unsigned char)s[1]))
        return 0;
    size_t d = 1;
    while (isdigit((unsigned char)s[d]))
        d++;
    return s[d] == '_' ? d + 1 : 0;
}

/* Strips one affix off s[*from..*from+*n): units first, then statistics
 * after the name, then before it. Returns false when none is left. */
static bool strip_one(const char *s, size_t *from, size_t *n)
{
    static const char *const units[] = {"_ms", "_seconds", "_s"};
    static const char *const stats[] = {"_mean", "_min", "_max", "_avg", "_median", "_std", "_samples",
                                        "_quantiles"};
    static const char *const before[] = {"mean_", "median_", "avg_", "max_"};
    const char *p = s + *from;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (ends_with(p, *n, units[i])) {
            *n -= strlen(units[i]);
            return true;
        }
    size_t k = pct_suffix(p, *n);
    for (size_t i = 0; !k && i < sizeof stats / sizeof *stats; i++)
        if (ends_with(p, *n, stats[i]))
            k = strlen(stats[i]);
    if (k) {
        *n -= k;
        return true;
    }
    k = pct_prefix(p);
    for (size_t i = 0; !k && i < sizeof before / sizeof *before; i++)
        if (!strncmp(p, before[i], strlen(before[i])))
            k = strlen(before[i]);
    if (k && k < *n) {
        *from += k;
        *n -= k;
        return true;
    }
    return false;
}

const struct metric_def *metric_of_key(const char *key)
{
    if (!strncmp(key, "metrics.", 8))
        key += 8;
    char buf[128];
    size_t from = 0, n = strlen(key);
    if (n >= sizeof buf)
        return NULL;
    for (;;) {
        snprintf(buf, sizeof buf, "%.*s", (int)n, key + from);
        const struct metric_def *d = metric_find(buf);
        if (d)
            return d;
        if (!strip_one(key, &from, &n))
            return NULL;
    }
}

const struct metric_def *metric_headline(enum metric_mode mode)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (rows[i].headline & (unsigned)mode)
            return &rows[i];
    return NULL;
}

const char *metric_better_name(enum metric_better b)
{
    return b == METRIC_HIGHER ? "higher" : b == METRIC_LOWER ? "lower" : "neither";
}

const char *metric_mode_name(enum metric_mode mode)
{
    switch (mode) {
    case METRIC_REQUESTS: return "requests";
    case METRIC_DURATION: return "duration";
    case METRIC_BURST: return "burst";
    }
    return NULL;
}
