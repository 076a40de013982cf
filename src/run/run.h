/* run.h — one benchmark run as a library stage: a config in, a result out.
 *
 * run_execute does what `anvil run` does between parsing flags and choosing
 * an exit code: discovery, the workload and its calibration, the load
 * (closed loop, open loop or duration window), the summary, the artifact
 * file and the per-request log. Commands that need a run (run, and later
 * decode or a report's re-run) fill a run_config and call it; none of them
 * repeats the pipeline. */
#ifndef ANVIL_RUN_RUN_H
#define ANVIL_RUN_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "artifact/benchmark.h"
#include "load/driver.h"
#include "observe/observe.h"
#include "openai/request.h"
#include "stats/dist.h"
#include "stats/summary.h"

/* --prefix-hit-rate is met when the achieved rate is within this share of
 * the target (0.05: a target of 0.5 is met by 0.475 to 0.525). */
#define RUN_PREFIX_HIT_TOLERANCE 0.05

/* Where the server is when nothing says otherwise: vLLM's default port. */
#define RUN_DEFAULT_BASE_URL "http://127.0.0.1:8000/v1"

enum calib_mode { CALIB_AUTO, CALIB_TOKENIZE, CALIB_PROBE, CALIB_NONE };

/* `vllm bench serve`'s flags where anvil names the concept differently:
 * run_config_resolve maps them onto the run_config's own fields. Borrowed
 * strings; NULL / 0 = not given. */
struct run_compat {
    const char *host;               /* --host, with port: http://HOST:PORT/v1 */
    long port;
    const char *endpoint;           /* "chat", "completions" or a path: "/v1/chat/completions" */
    const char *backend;            /* vllm, openai, openai-chat, sglang, tgi, ... */
    const char *dataset_name;       /* random, sharegpt or custom (JSON Lines) */
    const char *dataset_path;
    const char *result_dir, *result_filename;   /* the artifact's place */
    const char *tokenizer;          /* accepted; anvil counts with the server's tokenizer */
    bool save_result;               /* accepted; anvil always writes its artifact */
    char base_url_buf[1024], out_buf[4096], dataset_buf[4200];  /* what resolve composes */
};

/* The server and how requests reach it ("Target" and "Limits" in `anvil run
 * --help`). Strings borrowed. */
struct run_transport {
    const char *base_url;               /* the OpenAI base, e.g. http://h:8000/v1; NULL = default */
    const char *model, *api_key_env;
    enum endpoint endpoint;
    const struct curl_slist *headers;   /* extra request headers; the API key is added from
                                           $api_key_env by run_execute and never written */
    double timeout_s, connect_timeout_s, idle_timeout_s, grace_s;
    enum http_transport kind;           /* --transport: auto (the default), native or curl (net/http.h) */
    bool traceparent;                   /* send a W3C traceparent header per request, its trace id
                                           in the request's record (load/driver.h) */
    double stall_timeout_s;             /* end the run when no byte arrived on any in-flight request
                                           for this long, s (driver_cfg.stall_timeout_s); 0 = never;
                                           < 0 = idle_timeout_s (run_stall_timeout_s) */
};

/* The transport's settings alone: --base-url is http:// or https://. Returns
 * 0, or -1 with a one-line message in err naming the setting. */
int run_transport_check(const struct run_transport *t, char *err, size_t errlen);

/* The shape of the load: how many requests, how many at once, when. */
struct run_load {
    long concurrency;                   /* in flight: exactly (closed loop) or at most; 0 = no cap */
    long threads;                       /* measuring loops, one thread each; 0 = the driver's default */
    long num_prompts, warmup;           /* measured and unmeasured requests; trace replay: at most
                                           this many of the window's (0 = all of them) */
    double request_rate, burstiness;    /* requests/s (INFINITY = closed loop); gamma shape */
    double duration_s, warmup_s;        /* duration mode (0 = off) */
    struct load_ramp ramp;              /* --ramp-up-*: a rate ramp or streams started over ramp_up_s;
                                           start_rps, end_rps NaN = not given */
    /* Duration mode: a readiness gate (load/driver.h, driver_cfg.window_ready):
     * the window opens when it says so, warmup_s at the latest; needs
     * threads 1. NULL = the window opens at warmup_s. */
    bool (*window_ready)(void *gate_ud, const struct driver_gate *g);
    void *gate_ud;
    double ready_timeout_s;             /* wait up to this long for GET {base}/models to answer
                                           before starting; 0 = fail at once */
};

/* The load's settings among themselves: the per-request records fit in half
 * of this machine's memory, a readiness gate has duration mode with a
 * warm-up and one thread, --warmup-s goes with --duration. Returns 0, or -1
 * with a one-line message in err naming the settings. */
int run_load_check(const struct run_load *l, char *err, size_t errlen);

/* What is sent: the prompts, their lengths and what goes with them. Strings
 * and lists borrowed. */
struct run_workload {
    long input_len, output_len;         /* tokens */
    bool output_len_set;                /* given: ShareGPT replies get output_len, not their
                                           recorded lengths */
    long seed;
    bool ignore_eos;
    bool continuous_usage, no_continuous_usage;   /* neither: asked where the engine accepts it */
    enum calib_mode calib;
    const char *calibration_cache;      /* JSON file of calibrations reused across runs; NULL = none */
    double input_range, output_range;   /* uniform ± ratio of the lengths */
    long shared_prefix_len;             /* tokens */
    const char *dataset;                /* "jsonl:FILE" or "sharegpt:FILE"; a trace to replay at its
                                           recorded times: "mooncake:FILE" or "azure:FILE"
                                           (workload/trace.h); NULL = synthetic */
    double trace_speed;                 /* trace replay: gaps divided by this (0 = 1) */
    double trace_start_s, trace_duration_s; /* trace replay: the window (duration 0 = to the end) */
    bool multi_turn;
    const char *agentic_file;           /* --agentic: sessions of turns (workload/agentic.h); NULL = none */
    long agentic_sessions;              /* --agentic-sessions N: generated sessions; 0 = none */
    const char *agentic_turns;          /* --turns A..B (default "3..6") */
    long tool_result_len;               /* --tool-result-len: words of each tool result (default 200) */
    long agentic_user_len;              /* --user-len: words of a session's first user message (default 100) */
    long agentic_system_len;            /* --system-len: words of a session's system prompt (default 0) */
    const char *think_time;             /* --think-time A..B: seconds before each turn after the first,
                                           uniform, seeded; NULL = none */
    long sub_agents;                    /* --sub-agents K: sub-agents each turn but the last spawns (0) */
    double prefix_hit_rate;             /* --prefix-hit-rate P in (0, 1): that share of every measured
                                           prompt is a prefix the cache holds; 0 = off */
    long prefix_groups;                 /* --prefix-groups G: prefixes the requests take in turn (default 1) */
    bool flush_cache;                   /* empty the server's prefix cache before the measured requests
                                           (also done by --prefix-hit-rate) */
    struct sampling sampling;           /* temperature, top_p, top_k sent when set */
    const cJSON *extra_body;            /* keys added to every request body (object), or NULL */
    long images_per_request;            /* --images-per-request N (chat, synthetic prompts); 0 = none */
    const char *image_size;             /* --image-size WxH (default 512x512) */
    const char *image_format;           /* --image-format png|jpeg (default png) */
    const char *tools_file;             /* --tools: JSON tool definitions sent with every chat
                                           request (workload/tools.h); NULL = none */
    const char *tool_choice;            /* --tool-choice: auto|none|required|NAME|JSON; NULL = not sent */
};

/* The workload's settings among themselves: the dataset's kind, the files
 * it names readable (a usage error before anything is sent), the image size,
 * and the settings that need or exclude one another (multi-turn, tools,
 * agentic sessions, images, prefix hit rate, trace window). Returns 0, or -1
 * with a one-line message in err naming the settings. */
int run_workload_check(const struct run_workload *w, char *err, size_t errlen);

/* What the server and the hardware say (observe/observe.h,
 * docs/METHODOLOGY.md), and what else watches the load. */
struct run_observe {
    const char *server_metrics;         /* "auto" (the base URL's root /metrics), "off", or a URL;
                                           NULL = off */
    double scrape_interval_ms;          /* periodic /metrics scrapes between the phase boundaries */
    int telemetry;                      /* enum obs_mode: auto (on with a GPU), on, off */
    double telemetry_interval_ms;       /* periodic GPU and host readings */
    const char *gpu_metrics_url;        /* a Prometheus GPU exporter (DCGM names); NULL = none */
    struct sampler *const *samplers;    /* run on the measuring loop (load/sampler.h); may be NULL */
    int n_samplers;
    const char *metrics_listen;         /* --metrics-listen HOST:PORT: anvil's own live Prometheus
                                           endpoint during the run (load/live_server.h); NULL = none */
};

/* The observe settings alone: --server-metrics is auto, off or a URL, the
 * URLs are http://, https:// or file://, --metrics-listen is HOST:PORT. Returns 0, or -1 with a one-line
 * message in err naming the setting. */
int run_observe_check(const struct run_observe *o, char *err, size_t errlen);

/* The default interval of the artifact's timeseries rows, s. */
#define RUN_TIMESERIES_DEFAULT_S 1.0
/* --max-request-rows's default: the artifact's rows of a 100,000-request run, ~100 MB. */
#define RUN_MAX_REQUEST_ROWS 100000

/* Where the results go and what the artifact says of the run. */
struct run_outputs {
    const char *path;                   /* artifact path; NULL = <dir>/<run_id>.json */
    const char *dir;                    /* NULL = results */
    const char *requests_out;           /* JSON Lines appended per request; NULL = none */
    const char *engine_label, *gpu_label;
    enum pct_method pct;
    struct slo slo;
    struct sweep_place sweep;           /* where the run sits in a sweep; case_id NULL = none */
    int argc;                           /* the command line as given, for the artifact's */
    char *const *argv;                  /* provenance (secrets redacted there); may be 0/NULL */
    bool progress;                      /* draw a progress line on stderr */
    long max_request_rows;              /* request_timings and failures list requests of
                                           request_index below this; <= 0 = every one (default
                                           RUN_MAX_REQUEST_ROWS) */
    double timeseries_interval_s;       /* the artifact's timeseries rows, s (> 0; default
                                           RUN_TIMESERIES_DEFAULT_S; stats/timeseries.h merges them
                                           in long runs) */
    const char *ceiling_file;           /* the client's measured ceiling (run/ceiling.h) the run's peak
                                           events/s per thread is compared with: NULL = its default
                                           place (ceiling_default_path), "" = none */
};

/* One run spread over processes (docs/ARTIFACTS.md, "ranks"): this process
 * sends shard index of count of the plan (load/plan.h, plan_shard) and its
 * artifact gets a `ranks` block of one entry for `anvil merge`; count 0 =
 * the whole run. */
struct run_shard {
    int index, count;
    double start_at_unix;               /* --start-at: the measured phase begins at this wall-clock
                                           instant (s since the epoch); 0 = none */
    /* Called once the set-up is done, just before the load (an MPI rank
     * waits there for the others): returns 0 and may set *measure_at_ns,
     * the agreed CLOCK_MONOTONIC start of the measured phase, or -1 to stop
     * the run with the reason in err. NULL = none. */
    int (*ready)(void *ud, int64_t *measure_at_ns, char *err, size_t errlen);
    void *ready_ud;
    double rank_timeout_s;              /* MPI: how long rank 0 waits for the others' records after its
                                           own load ended, and the others for rank 0 (s; default 60) */
};

/* Everything a run is, by the feature that owns each setting. Strings and
 * lists are borrowed: they must outlive run_execute. Units are in the names
 * or comments. run_config_defaults gives the values `anvil run` documents. */
struct run_config {
    struct run_transport transport;
    struct run_load load;
    struct run_workload workload;
    struct run_observe observe;
    struct run_outputs out;
    struct run_shard shard;
    struct run_compat compat;           /* vLLM's way of saying the same things (compat.c) */
    bool prepare_only;                  /* discovery and calibration only (filling calibration_cache):
                                           no load, no journal, no artifact; status RUN_OK */
    bool keep_records;                  /* keep every record in run_result.records (a caller that
                                           walks them by index); else, with a journal, they are
                                           dropped as they end and read back from it */
    const char *name;                   /* prefix of messages, e.g. "anvil run" */
    FILE *log;                          /* messages (warnings, errors); NULL = stderr */
};

/* Fills *c with `anvil run`'s documented defaults (the flag table in
 * cli/run.c shows the same values: it sets them through this function). */
void run_config_defaults(struct run_config *c);

/* The stall timeout the run uses, s: c->transport.stall_timeout_s, or when
 * that is < 0 (the default) c->transport.idle_timeout_s — a server silent as
 * long as one request may be is stalled; 0 = never. */
double run_stall_timeout_s(const struct run_config *c);

/* Maps c->compat onto c's own fields (transport.base_url and endpoint,
 * workload.dataset, out.path and dir):
 * --host/--port, a base URL without a path (gets /v1), an endpoint given as a
 * path, --backend, --dataset-name/--dataset-path, --result-dir and
 * --result-filename. Returns 0, or -1 with a message in err naming the
 * flags in conflict or the value not understood. Notes (e.g. on
 * --tokenizer) are printed to c->log. */
int run_config_resolve(struct run_config *c, char *err, size_t errlen);

/* Whether this process can hold concurrency streams: one socket each, plus
 * 64 descriptors for the rest of the run, within the hard open-file limit
 * (the soft one is raised to it when the run starts). Returns 0, or -1 with
 * the numbers and the fix (ulimit, fewer streams) in err. */
int run_check_fd_limit(long concurrency, char *err, size_t errlen);

/* Checks the settings (each value alone is checked where it is parsed):
 * each feature's own (run_workload_check, run_observe_check,
 * run_transport_check, run_load_check), then how the features combine
 * (the open-file limit for the streams, tools and images on the chat
 * endpoint, a trace's load, the closed loop's concurrency, shards). The
 * first failing check gives the message. Returns 0, or -1 with a one-line
 * message in err naming the settings in conflict. */
int run_config_check(const struct run_config *c, char *err, size_t errlen);

/* How a run ended, from best to worst; the command maps it to an exit code. */
enum run_status {
    RUN_OK,             /* complete, at least one request completed (duration mode: or output
                           tokens arrived inside the window), artifact written */
    RUN_INCOMPLETE,     /* artifact written, but cut short or nothing measured */
    RUN_FAILED,         /* nothing measured (server absent, calibration failed) or the
                           artifact could not be written; see error */
};

struct run_result {
    enum run_status status;
    char error[1024];           /* why, when status is RUN_FAILED (secrets scrubbed) */
    bool refused;               /* RUN_FAILED before any request because the planned case cannot
                                   fit the server's context (a usage error: exit 2) */
    char run_id[64];
    char artifact_path[4096];
    char journal_path[4200];    /* <run_id>.requests.jsonl next to the artifact; "" = none */
    struct req_record *records; /* the measured requests, by request_index; owned; NULL when they
                                   were dropped as they ended (kept): read them with run_records_open */
    int n_records;              /* sent first in duration mode; see summary.sent */
    struct run_kept *kept;      /* records dropped: what reading them back from the journal needs;
                                   owned; NULL otherwise */
    bool summarized;            /* summary holds the records' numbers */
    struct run_summary summary;
    int warmup_failed;          /* warm-up requests that failed */
    bool incomplete;
    const char *incomplete_reason;   /* static text; NULL when complete */
    bool cache_contaminated;    /* see docs/ARTIFACTS.md */
    int log_errors;             /* --requests-out lines that could not be written */
    long journal_lines_lost;    /* journal lines whose write failed (a full disk): the journal is cut
                                   short, the artifact still has every request */
    struct server_gone server_gone; /* the server stopped answering mid-run (load/driver.h) */
    struct server_stalled server_stalled;   /* the server stalled: no byte for the stall timeout */
    struct observe_report *observe; /* what the server and hardware said; owned; NULL when the run
                                       did not get that far */
    int64_t window_start, window_end;   /* the measurement window as the samplers got it
                                           (CLOCK_MONOTONIC ns); 0 when the load never ran */
    /* the prompt calibration the run used (the artifact's calibration block): calibrated false
       when it searched none (dataset prompts, --calibration none, stopped before it) */
    bool calibrated;
    const char *calibration_source;     /* "measured" or "cache" (static) */
    long calibration_words;             /* the chosen filler length, words */
    long calibration_tokens;            /* what the server counted for it, tokens */
    long peak_events_per_s;             /* SSE events of the fullest 1-second bin of any measuring loop
                                           (driver_result.peak_events_per_s); -1 = the load never ran */
};

/* Runs the benchmark c describes and writes its artifact (and per-request
 * log). Fills *out, which the caller releases with run_result_free. Returns
 * out->status. Messages go to c->log as they happen. */
enum run_status run_execute(const struct run_config *c, struct run_result *out);

/* A run's measured records read one at a time (stats/record.h): its
 * records, or its journal read back when they were dropped as they ended
 * (run_result.kept). */
struct run_records {
    struct rec_iter it;
    struct jiter *j;            /* owned; NULL over records */
};

/* Opens rr over r's records. Returns 0, or -1 with the reason in err (rr
 * then holds nothing). Close with run_records_close. */
int run_records_open(const struct run_result *r, struct run_records *rr, char *err, size_t errlen);

/* Frees what rr holds. */
void run_records_close(struct run_records *rr);

/* Frees what *r owns. */
void run_result_free(struct run_result *r);

struct secrets;

/* The request headers c asks for, appended to *out (a curl list the caller
 * frees): c->transport.headers (--header, --header-env), then the
 * $api_key_env key as "Authorization: Bearer KEY" unless a header line is an
 * Authorization header: then the key is not sent (never two Authorization
 * headers) and note (notecap bytes; "" otherwise) says so, naming the
 * variable, never a value. Returns 0, or -1 when memory runs out. */
int run_request_headers(const struct run_config *c, struct curl_slist **out, char *note, size_t notecap);

/* Adds every credential c was given to *out (core/redact.h): the
 * $api_key_env key, every header value (with its Bearer/Basic forms), the
 * user:password of --base-url, --server-metrics and --gpu-metrics-url
 * (with its Basic encoding). Returns 0, or -1 when memory runs out. */
int run_secrets(const struct run_config *c, struct secrets *out);

/* Why a finished run has requests that did not complete, into out (cap
 * bytes): "N of M requests failed (first: CATEGORY: MESSAGE)", or "no request
 * completed" when none failed. */
void run_failures_text(const struct run_result *r, char *out, size_t cap);

/* When the run ended because the server stalled: writes "server_stalled:
 * no byte on any in-flight request for S s (--stall-timeout-s)" into out
 * (cap bytes) and returns true — the reason the commands built on runs
 * (decode's cells, prefills and bursts) give for stopping. Else false. */
bool run_stalled_text(const struct run_result *r, char *out, size_t cap);

/* What run_recover did. */
struct run_recovery {
    char error[1024];           /* why, when it failed */
    char artifact_path[4096];   /* where the artifact went */
    int dropped;                /* damaged lines skipped (a line cut by a kill or a full disk) */
    char first_dropped[600];    /* why the first of them was skipped: "FILE:LINE: ..." */
    bool summarized;            /* summary holds the recovered requests' numbers */
    struct run_summary summary;
};

/* Rebuilds a run's artifact from its journal (docs/ARTIFACTS.md, "The
 * journal"): the settings from the header line, every request that had
 * ended from its line, the summary recomputed from them exactly as the run
 * would have. The artifact is marked incomplete ("recovered from the
 * journal"); requests that had not ended count as not sent. It goes to out,
 * else to the path the run would have written; an existing file there is
 * refused unless force. Returns 0, or -1 with res->error set (cannot read,
 * a line is not a journal line, the artifact exists, cannot write). */
int run_recover(const char *journal, const char *out, bool force, struct run_recovery *res);

#endif
