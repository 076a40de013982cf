/* stage.h — what the steps of one run share (private to src/run/). */
#ifndef ANVIL_RUN_STAGE_H
#define ANVIL_RUN_STAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "openai/discover.h"
#include "run/run.h"
#include "workload/calibrate.h"
#include "workload/dataset.h"
#include "workload/workload.h"

/* The state of one run_execute call: built step by step, freed at its end. */
struct run_ctx {
    const struct run_config *c;
    struct run_result *res;
    struct curl_slist *headers;     /* c->headers plus the API key; owned, never printed */
    const char *secret;             /* the API key ($api_key_env), or NULL */
    struct server_info srv;
    uint64_t salt;                  /* per run: prompts of different runs never share a prefix */
    FILE *requests_log;             /* --requests-out, or NULL */
    FILE *journal;                  /* <run_id>.requests.jsonl next to the artifact, or NULL */
    int64_t journal_t0;             /* CLOCK_MONOTONIC base of the journal's times */
    struct workload *wl;            /* owned */
    struct dataset ds;              /* owned; empty for synthetic prompts */
    struct calibration cal;
    const char *calibration_method; /* "tokenize", "probe", "none" or "dataset" */
    const char *calibration_source; /* "measured" or "cache"; NULL when not calibrated */
    char calibration_key[2048];     /* the --calibration-cache entry's key; "" without one */
    long shared_prefix_tokens;      /* tokens two measured prompts share at their start; -1 = unknown */
    char shared_prefix_method[200]; /* how that was measured, or why it was not */
    char started_at[21];
};

/* Prints "NAME: message" to the run's log, with the API key scrubbed. */
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

/* Summarizes the driver's records into x->res, builds and writes the
 * artifact (x->res->artifact_path). dr's records move into x->res. Returns 0,
 * or -1 when memory ran out or the artifact could not be written (reason in
 * x->res->error; the summary is kept). */
struct driver_result;
int run_write_outputs(struct run_ctx *x, struct driver_result *dr);

/* Driver callbacks: the body of request seq, the turn it follows, and the
 * per-request log line (ud is the run_ctx). */
char *run_make_body(void *ud, long seq, long *planned, long *max_tokens);
long run_follows(void *ud, long seq);
void run_log_record(void *ud, const struct req_record *r);

/* Opens the journal next to the artifact (docs/ARTIFACTS.md, "The
 * journal"), res->journal_path, unless the artifact goes to stdout or a
 * device. Returns 0, or -1 with the reason in x->res->error. */
int run_journal_open(struct run_ctx *x);

/* Writes the journal's header line (the settings known when the load
 * starts). Returns 0, or -1 with the reason in x->res->error. */
int run_journal_header(struct run_ctx *x);

#endif
