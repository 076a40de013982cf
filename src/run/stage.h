/* stage.h — what the steps of one run share (private to src/run/). */
#ifndef ANVIL_RUN_STAGE_H
#define ANVIL_RUN_STAGE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "artifact/benchmark.h"
#include "artifact/journal.h"
#include "core/redact.h"
#include "load/live.h"
#include "load/plan.h"
#include "openai/discover.h"
#include "run/run.h"
#include "stats/timeseries.h"
#include "workload/calibrate.h"
#include "workload/dataset.h"
#include "workload/trace.h"
#include "workload/agentic.h"
#include "workload/workload.h"

struct driver_result;   /* load/driver.h */

/* A stream without usage whose text the engine's tokenizer counts after
 * the load (run/count.c): the text is kept (owned) until then, and tokens
 * is the count (-1 until counted). */
struct text_count {
    int index;                  /* its request_index */
    long tokens;
    struct buf text;
    bool stop;                  /* it ended by EOS ("stop"): one token more than its text */
};

/* At most this many streams without usage are counted one by one after
 * the load; later ones keep their chunk count, and the run says so. */
#define COUNT_MAX_STREAMS 4096

/* Sorts c by index (for jiter_opts.counts). */
void text_counts_sort(struct text_count *c, size_t n);

/* What a journal is read back with. */
struct jiter_opts {
    const struct buf *spill;        /* lines a failed write kept in memory, read after the file's; or NULL */
    const struct text_count *counts;/* tokens counted after the load, sorted by index (text_counts_sort) */
    size_t n_counts;
    bool skip_warmup;               /* warm-up lines are not the run's records (not in duration mode,
                                       whose window's warm-ups are) */
    long n_index;                   /* request_index below this is yielded once (a line also in the
                                       spill; the first kept); 0 = every line */
    bool dedupe_warmups;            /* warm-up lines too (duration mode: the window's warm-ups are
                                       numbered as measured requests); else only measured ones */
};

/* A journal read back (journal_iter.c). */
struct jiter {
    FILE *f;
    int64_t t0, data_at;
    char *line;
    size_t cap;
    const struct buf *spill;
    size_t spill_at;
    bool in_spill;
    const struct text_count *counts;
    size_t n_counts;
    bool skip_warmup, dedupe_warmups;
    long n_index;
    unsigned char *seen;
    long lineno;                    /* of the line last read from the file (the header is 1) */
    struct req_record rec;          /* the record last read */
    bool have;
    int64_t pos;                    /* where the record last yielded is (for jiter_at) */
    long damaged;                   /* lines that were not a record, this pass */
    char first_damaged[600];        /* why the first was not: "FILE:LINE: ..." */
    char path[4200];
};

/* Opens the journal at path for reading through *it (stats/record.h): its
 * header read for t0, then one record per line. Returns 0, or -1 with the
 * reason in err (j then holds nothing). Close with jiter_close. */
int jiter_open(struct jiter *j, struct rec_iter *it, const char *path, const struct jiter_opts *o,
               char *err, size_t errlen);

/* The record at pos (a jiter.pos of an earlier pass), valid until the next
 * read; NULL when it cannot be read. */
const struct req_record *jiter_at(struct jiter *j, int64_t pos);

/* Closes the file and frees what j holds. */
void jiter_close(struct jiter *j);

/* The state of one run_execute call: built step by step, freed at its end. */
struct run_ctx {
    const struct run_config *c;     /* the config as run: &eff, for the whole run */
    struct run_result *res;
    struct curl_slist *headers;     /* c->transport.headers plus the API key; owned, never printed */
    struct secrets secrets;         /* every credential (run_secrets): scrubbed from all written or printed; owned */
    struct server_info srv;
    struct live_metrics live;       /* --metrics-listen: what the endpoint serves */
    uint64_t salt;                  /* per run: prompts of different runs never share a prefix */
    FILE *requests_log;             /* --requests-out, or NULL */
    FILE *journal;                  /* <run_id>.requests.jsonl next to the artifact, or NULL */
    int64_t journal_t0;             /* CLOCK_MONOTONIC base of the journal's times */
    struct workload *wl;            /* owned */
    struct dataset ds;              /* owned; empty for synthetic prompts */
    cJSON *tools, *tool_choice;     /* owned: --tools and --tool-choice, or NULL */
    struct trace trace;             /* owned; empty unless a trace is replayed */
    int64_t *trace_due;             /* owned: the replayed requests' send offsets (ns), or NULL */
    struct run_config eff;          /* the caller's config, completed before set_up with what the
                                       plan derives: --prefix-hit-rate's shared prefix, a trace's
                                       request count, agentic turns as the dataset */
    struct bench_prefix_cache prefix_meta;  /* --flush-cache, --prefix-hit-rate: what the artifact says */
    struct agentic agentic;         /* owned: agentic sessions (its dataset is ds), or empty */
    int image_w, image_h;           /* --image-size */
    enum image_format image_format; /* --image-format */
    struct buf *calib_images;       /* owned: images of the calibration probes (a space of their own) */
    const char **calib_urls;        /* their data: URLs (into calib_images) */
    struct bench_images images_meta;/* for the artifact */
    double image_tokens;            /* tokens one image adds to a prompt, as the server counted; NaN = not measured */
    struct bench_trace trace_meta;  /* trace replay: what the artifact says of it (strings borrowed) */
    struct calibration cal;
    const char *calibration_method; /* "tokenize", "probe", "none" or "dataset" */
    const char *calibration_source; /* "measured" or "cache"; NULL when not calibrated */
    char calibration_key[2048];     /* the --calibration-cache entry's key; "" without one */
    long shared_prefix_tokens;      /* tokens two measured prompts share at their start; -1 = unknown */
    char shared_prefix_method[200]; /* how that was measured, or why it was not */
    char started_at[21];
    int threads;                    /* measuring loops the run uses (plan_threads), for the artifact */
    struct run_log *log;            /* the per-request lines while the load runs (records_log.c); owned */
    struct observe *obs;            /* server metrics and telemetry; owned; NULL = none */
    struct sampler **samplers;      /* c->observe.samplers then obs's, for the driver; owned array */
    int n_samplers;
    double warmup_output_tokens;    /* tokens of warm-up requests (cross-check allowance) */
    struct plan_shard shard;        /* c->shard.count > 0: this process's part of the plan; owned */
    int64_t measure_at;             /* CLOCK_MONOTONIC agreed start of the measured phase; 0 = none */
    int64_t unix_minus_mono;        /* CLOCK_REALTIME − CLOCK_MONOTONIC (ns) when the load began */
    struct ts_acc ts;               /* the artifact's timeseries, fed as requests end; owned */
    bool ts_on;                     /* ts was set up */
    /* Records dropped as they end (driver_cfg.drop_records): what the run
     * needs of them after the load is read back from the journal, with
     * x->res->kept. */
    bool drop;
    enum http_transport transport;  /* the one the load went over (drive) */
};

/* The artifact's rows read back from the journal in index order (rows.c). */
struct run_rows {
    struct jiter *j;                /* borrowed */
    const struct secrets *secrets;  /* scrubbed from every row; borrowed; NULL = none */
    int64_t *pos;                   /* where request_index i's line is (jiter.pos); INT64_MIN: no row */
    unsigned char *failed;          /* it failed: a row of failures, not request_timings */
    long n;                         /* rows' indexes: 0 .. n-1 */
    long at_timing, at_failure;     /* the callbacks' next index */
};

/* One pass over it (j's iterator) to find where the rows of meta's bound
 * are (benchmark_row_of), request_index below n_index. Returns 0, or -1
 * (it->err says why). Free with run_rows_free. */
int run_rows_index(struct run_rows *w, struct jiter *j, struct rec_iter *it, const struct bench_meta *meta,
                   long n_index);

/* artifact_write_streamed's callbacks (ud is the run_rows): the next row
 * of request_timings, of failures, in request_index order; NULL at the end
 * or on an error (*error set to 1). The row is the caller's. */
cJSON *run_rows_timing(void *ud, int *error);
cJSON *run_rows_failure(void *ud, int *error);

void run_rows_free(struct run_rows *w);

/* What a run that dropped its records keeps to read them back (run.h). */
struct run_kept {
    pthread_mutex_t mu;             /* texts, first_fail: the loops add them */
    struct text_count *texts;       /* streams to count after the load; owned */
    size_t n_texts;
    long texts_left;                /* more than COUNT_MAX_STREAMS: not kept, not counted */
    struct buf spill;               /* journal lines a failed write did not place; owned */
    int first_fail_index;           /* the failed measured request of lowest index (-1 none) */
    enum fail_kind first_fail;
    char first_fail_msg[256];
    struct jiter_opts read;         /* how the journal is read back */
    long lost;                      /* requests sent that the journal read back lacks (a line that
                                       could not be built, kept or spilled, or read back): not in the
                                       artifact, which says so */
};

/* Prints "NAME: message" to the run's log, with every credential scrubbed. */
void run_say(const struct run_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads the dataset, builds the workload and fits prompt lengths to the
 * server's tokenizer (calibration with its tokenize → probe fallback).
 * Returns 0, or -1 with the reason in x->res->error. */
int run_prepare_workload(struct run_ctx *x);

/* Measures x->shared_prefix_tokens after the workload is fitted: the
 * common start of two measured prompts' token ids from POST {root}/tokenize,
 * else (when may_probe) the cached_tokens the server reports for the second
 * of two calibration prompts sent one after the other (whole cache blocks
 * only: a lower bound), else -1. Sets x->shared_prefix_method to how, or
 * why not. Never fails the run. */
void run_measure_shared_prefix(struct run_ctx *x, bool may_probe);

/* Before the workload is fitted (no shared prefix yet): the tokens two
 * measured prompts share at their start — what the chat template puts
 * before the user's text — from the engine's tokenize ids, or -1 when it
 * gives none. */
long run_template_lead(const struct run_ctx *x);

/* Summarizes the driver's records into x->res, builds and writes the
 * artifact (x->res->artifact_path). dr's records move into x->res. Returns 0,
 * or -1 when memory ran out or the artifact could not be written (reason in
 * x->res->error; the summary is kept). */
int run_write_outputs(struct run_ctx *x, struct driver_result *dr);

/* What the server and the hardware say (run/observe.c): starts the session
 * and its first readings after set-up (x->samplers gets c's samplers and
 * its own), takes the last readings after the load, and adds the
 * summaries to the artifact art (and x->res->observe). None of them fails
 * the run; attach returns -1 only when memory runs out. */
void run_observe_start(struct run_ctx *x);
void run_observe_finish(struct run_ctx *x, const struct driver_result *dr);
int run_observe_attach(struct run_ctx *x, const struct driver_result *dr, cJSON *art);

/* The observe report over the window into x->res->observe (run_observe_attach
 * does it when it was not done). Returns 0 (also when nothing is observed),
 * or -1 when memory runs out. */
int run_observe_summarize(struct run_ctx *x, const struct driver_result *dr);

/* The prefix-cache hit rate the server's counters give for the load's
 * requests (srv_summary.run_delta: Δ hits / Δ queries from the pre-run to
 * the post-run reading; vLLM prefix_cache_hits/queries_total, SGLang
 * cached_tokens_total / prompt_tokens_total), else SGLang's cache_hit_rate
 * gauge (time-weighted over the window); *source names which (static).
 * NaN (*source NULL) when the server reports neither or was not scraped. */
double run_server_prefix_hit_rate(const struct run_ctx *x, const char **source);
void run_observe_free(struct run_ctx *x);

/* How far anvil's count of the window's output tokens may stray from the
 * server's generation counter before the two are printed side by side. */
#define TOKEN_COUNT_TOLERANCE 0.02

/* Duration mode: the server's generation tokens over the window (Δ of its
 * counter; NaN when not scraped, or when shards share the server), after
 * saying on the run's log when anvil's count of the window's tokens differs
 * from it by more than TOKEN_COUNT_TOLERANCE. Needs the observe summary
 * (run_observe_summarize). */
double run_check_token_count(const struct run_ctx *x);

/* Whether the run asks for usage on every chunk: --continuous-usage, not
 * --no-continuous-usage, else where the engine accepts it. */
bool run_continuous_usage(const struct run_ctx *x);

/* Counts, with the engine's tokenizer, the output text of every record of
 * dr that reported no usage (req_record.text_tokens), then frees every
 * record's kept text. At most 4096 streams are counted, each call bounded
 * by 10 s; after three failures in a row, or when the server had stalled or
 * gone away, the server is not asked; a reply with tool calls keeps its
 * chunk count. Says on the run's log how many were counted and how many
 * were not. */
void run_count_text_tokens(struct run_ctx *x, struct driver_result *dr);

/* Driver callbacks: the body of request seq and the turn it follows (ud is
 * the run_ctx). */
char *run_make_body(void *ud, long seq, long *planned, long *max_tokens);
long run_follows(void *ud, long seq);

/* driver_cfg.waits_for and think_ns of agentic sessions: workload_waits and
 * workload_think_ns of x->wl (ud is the run_ctx). */
int run_waits(void *ud, long seq, long *out, int cap);
int64_t run_think_ns(void *ud, long seq);

/* How often the flusher writes the buffered journal and --requests-out
 * lines: what a kill -9 can lose is the requests that ended in the last
 * interval (docs/ARTIFACTS.md, "The journal"). */
#define RUN_LOG_FLUSH_NS 100000000L

/* Starts the per-request log for `loops` measuring loops (records_log.c):
 * a buffer per loop and, when the run has a journal or --requests-out, a
 * flusher thread writing them every RUN_LOG_FLUSH_NS. Sets x->log. Returns
 * 0, or -1 (out of memory, or no thread: errno) with x->log NULL. */
int run_log_start(struct run_ctx *x, int loops);

/* The driver's on_record (ud is the run_ctx): request r ended on measuring
 * loop `loop`. Builds its journal and --requests-out lines on the caller's
 * thread and appends them to that loop's buffer; counts warm-up tokens.
 * Safe from every loop at once (one call per loop at a time). */
void run_log_record(void *ud, int loop, const struct req_record *r);

/* Stops the flusher, writes every line still buffered, adds the lines not
 * kept or written to x->res->log_errors and the warm-up tokens to
 * x->warmup_output_tokens, frees the log (x->log = NULL). Call after
 * driver_run, before the artifact is written. NULL-safe (x->log NULL). */
void run_log_finish(struct run_ctx *x);

/* Opens the journal next to the artifact (docs/ARTIFACTS.md, "The
 * journal"), res->journal_path, unless the artifact goes to stdout or a
 * device. Returns 0, or -1 with the reason in x->res->error. */
int run_journal_open(struct run_ctx *x);

/* Writes the journal's header line (the settings known when the load
 * starts). Returns 0, or -1 with the reason in x->res->error. */
int run_journal_header(struct run_ctx *x);

/* A shard (c->shard.count > 0, run/shard.c): x->shard from the plan the
 * whole run would have, and cfg's load made that shard's (its warm-ups,
 * measured requests, concurrency and, open loop, its send times from the
 * whole schedule). Returns 0, or -1 with the reason in x->res->error. */
int run_shard_cfg(struct run_ctx *x, struct driver_cfg *cfg);

/* The agreed start of the measured phase, x->measure_at: c->shard.start_at_unix
 * turned into CLOCK_MONOTONIC, then c->shard.ready's (an MPI rank's). Also takes
 * x->unix_minus_mono. Returns 0, or -1 with the reason in x->res->error. */
int run_agree_start(struct run_ctx *x);

/* A shard's records after the load: each measured record's index becomes
 * the whole plan's request_index. Nothing without a shard. */
void run_shard_records(struct run_ctx *x, struct driver_result *dr);

/* Adds the shard's `ranks` block (docs/ARTIFACTS.md), from the load's
 * result and summary, to the artifact art. Returns 0, or -1 (memory). */
int run_shard_add_ranks(const struct run_ctx *x, const struct driver_result *dr, cJSON *art);

/* seq of the driver (a shard's own numbering) → the whole plan's seq
 * (itself without a shard). */
long run_global_seq(const struct run_ctx *x, long seq);

/* The request_index of the whole plan for a record of the driver's: a
 * warm-up's (closed-loop runs) is its warm-up number, a measured one's its
 * measured number (r->index itself without a shard). */
int run_record_index(const struct run_ctx *x, const struct req_record *r);

/* A journal, read (run/recover.c; docs/ARTIFACTS.md, "The journal"). */
struct journal_doc {
    cJSON *header;                  /* owned; artifact points into it */
    struct benchmark settings;      /* the header's settings artifact; owned */
    struct journal_opts opts;
    int64_t t0;                     /* CLOCK_MONOTONIC base of the lines' times */
    const char *artifact;
    struct req_record *recs;        /* n records, owned: measured ones at their request_index when
                                       it is below settings.requests (those never seen all zero),
                                       the rest after them in the order they ended */
    int n;
};

/* Reads a journal's header line (line 1, NUL-terminated) into d; path names
 * the file in messages. Returns 0 or -1 with err set. */
int run_journal_read_header(const char *path, const char *line, struct journal_doc *d, char *err,
                            size_t errlen);

/* Reads every request line after the header (text is modified). A damaged
 * line — cut by a kill or a full disk, not JSON, or not a record — is
 * skipped and counted in *dropped, and err gets why the first was. Returns
 * 0, or -1 with err set when memory runs out or the count is implausible. */
int run_journal_read_records(const char *path, char *text, struct journal_doc *d, int *dropped, char *err,
                             size_t errlen);

/* Frees what d owns. */
void run_journal_doc_free(struct journal_doc *d);

/* A run's settings as it had them, from its settings artifact b (a journal's
 * or an artifact's) and summary options o: strings borrowed from b, the
 * server in *srv, the calibration search (when b has one) in *cal; marked incomplete ("recovered from the journal"), which a
 * caller that knows better overrides. */
struct bench_meta run_settings_meta(const struct benchmark *b, const struct journal_opts *o, struct calibration *cal,
                                    struct server_info *srv);

#endif
