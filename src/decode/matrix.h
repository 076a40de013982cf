/* matrix.h — `anvil decode`: the sustained-decode matrix of seed 004
 * (docs/DECODE.md). Startup (discovery, KV budget, host facts, startup
 * diagnostics), an optional decode warm-up, then every cell of concurrency
 * × context in order (grid.h), each one run behind the readiness gate
 * (cell.h), each written to DIR/cells/ as it ends, so a cut run resumes at
 * the next cell; finally the artifact (DIR/decode.json), returned typed
 * for the caller to render. */
#ifndef ANVIL_DECODE_MATRIX_H
#define ANVIL_DECODE_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "artifact/decode_matrix.h"
#include "decode/diag.h"
#include "decode/grid.h"
#include "decode/prefill.h"
#include "run/run.h"

struct decode_config {
    struct run_config run;              /* the run flags: server, model, headers, key, telemetry;
                                           the cells' template (strings borrowed) */
    const char *concurrency_arg;        /* as typed, e.g. "1,2,4" */
    const char *contexts_arg;           /* as typed, e.g. "0,8k,64k" */
    long conc[DECODE_MAX_LIST];
    size_t n_conc;
    long ctx[DECODE_MAX_LIST];          /* tokens: prompt + max_tokens; 0 = a minimal prompt */
    size_t n_ctx;
    double duration_s;                  /* each cell's window */
    long max_tokens;
    double ready_stable_s;              /* --ready-stable-s */
    double cell_warmup_timeout_s;       /* --cell-warmup-timeout-s; 0 = the policy (grid.h) */
    double decode_warmup_s;             /* a C=lowest warm-up at the largest context first; 0 = none */
    double accept_norm_ref_len;         /* --accept-norm-ref-len; 0 = off */
    long kv_budget;                     /* --kv-budget tokens; 0 = from the server */
    /* prefill (decode/prefill.h): the integrated scout of each non-zero context by default */
    bool standalone_prefill;            /* --standalone-prefill: repeated cold prefills instead */
    const char *prefill_contexts_arg;   /* as typed; NULL = the non-zero decode contexts */
    long prefill_ctx[DECODE_MAX_LIST];  /* prompt tokens of each prefill context, each >= 1 */
    size_t n_prefill_ctx;               /* 0 = the non-zero decode contexts */
    long prefill_samples;               /* --prefill-samples: cold prefills per standalone context */
    enum prefill_metric prefill_metric; /* --prefill-metric: the headline's side */
    /* bursts (decode/burst.h) */
    bool run_burst;                     /* --run-burst: a finite burst per context x concurrency */
    long request_count;                 /* --request-count: requests of every burst; 0 = C x the next */
    long burst_requests_per_concurrency;    /* --burst-requests-per-concurrency (seed: 5) */
    const char *dir;                    /* the resumable directory */
    const char *out;                    /* the artifact; NULL = DIR/decode.json */
    struct decode_diag_paths diag;      /* where host facts are read (tests point them elsewhere) */
    FILE *log;                          /* messages and the event log's echo; NULL = stderr */
};

/* How the matrix ended. */
enum decode_status {
    DECODE_OK,          /* every cell measured, artifact written */
    DECODE_INCOMPLETE,  /* artifact written with the cells done; the rest resume from DIR */
    DECODE_FAILED,      /* nothing could be measured or written; see err */
    DECODE_REFUSED,     /* a context cell cannot fit the server's context: refused before any
                           request (a usage error, exit 2); see err */
};

/* Runs the matrix c describes and writes its artifact
 * (decode_artifact_path). Prints nothing but the event log's echo (to
 * c->log): the caller renders *m (report/decode_table.h). Fills *m with
 * the matrix written (DECODE_OK, DECODE_INCOMPLETE; empty otherwise;
 * decode_matrix_free releases it). Returns the status; err holds the
 * reason when it is not DECODE_OK. */
enum decode_status decode_execute(const struct decode_config *c, struct decode_matrix *m, char *err, size_t errlen);

/* Where the artifact goes: c->out, else DIR/decode.json (cap bytes). */
void decode_artifact_path(const struct decode_config *c, char *out, size_t cap);

#endif
