/* ceiling.h — the client's measured ceiling: how many SSE events per second
 * one measuring thread reads with every first-token stamp within 1 ms of
 * the server's write (`anvil ceiling`), kept in a file every run compares
 * its own peak with (docs/METHODOLOGY.md, "The client's ceiling").
 *
 * The measurement runs a local simulator (`anvil sim --trace`, a child
 * process) and anvil's own run stage against it at rising closed-loop
 * concurrency, one measuring thread, and compares each request's
 * first-token stamp with the simulator's trace of its first write, on the
 * one CLOCK_MONOTONIC. The ceiling is the highest peak events/s (the run's
 * fullest 1-second bin, load/driver.h) of a step at which every stamp was
 * within CEILING_TOLERANCE_MS; stepping stops at the first step that is not,
 * when the events/s stop rising, at the concurrency cap or the time budget. */
#ifndef ANVIL_RUN_CEILING_H
#define ANVIL_RUN_CEILING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "net/http.h"

/* The bound every first-token stamp of a step must keep, ms. */
#define CEILING_TOLERANCE_MS 1.0

/* A run whose peak events/s per thread is above this share of the ceiling
 * is warned about: its stamps may be late. */
#define CEILING_WARN_SHARE 0.70

/* The file's schema name. */
#define CEILING_SCHEMA "anvil.ceiling/v1"

/* One step of the measurement. */
struct ceiling_step {
    long concurrency;           /* closed-loop streams */
    long requests, failed;      /* measured requests; of them failed */
    double events_per_s;        /* peak: SSE events in the fullest 1-second bin of the measuring loop */
    double mean_events_per_s;   /* SSE events of measured requests / the run's duration */
    double err_p99_ms, err_max_ms;  /* |first-token stamp − server's first write|, nearest rank; NaN = none */
    long late;                  /* requests whose stamp was off by more than CEILING_TOLERANCE_MS (or
                                   had no stamp or no trace line) */
    double wall_s;              /* the step's wall time, simulator start to stop */
    bool pass;                  /* no failure and no late stamp */
};

/* A measured ceiling, as the file holds it. */
struct ceiling {
    double events_per_s;        /* per measuring thread; > 0 */
    char measured_at[32];       /* UTC ISO-8601 */
    char host[256];
    char version[128];          /* anvil's */
    long threads;               /* measuring threads of the measurement (1) */
    char transport[64];         /* the transport measured ("native" or "curl"); "" = not named (older files) */
};

/* The measurement's settings. Strings borrowed. */
struct ceiling_cfg {
    const char *sim_bin;        /* the program run as `SIM_BIN sim ...`; NULL = this one (/proc/self/exe) */
    double max_s;               /* time budget of the whole measurement, s: no step starts that
                                   would end after it (estimated from the last step's wall time) */
    long start_concurrency, max_concurrency;    /* the first step; no step above this (doubling) */
    double itl_ms, ttft_ms;     /* the simulator's fixed inter-token latency and time to first token */
    long output_len;            /* tokens per request: one SSE event each */
    long rounds;                /* requests per stream per step */
    enum http_transport transport;  /* the steps' --transport (auto: native, the simulator being plain http) */
    FILE *log;                  /* each step's line as it ends (ceiling_print_step); NULL = none */
};

/* The measurement's outcome. */
struct ceiling_result {
    struct ceiling_step *steps; /* owned; n_steps of them, in order */
    int n_steps;
    int best;                   /* the step that gives the ceiling, or -1 when none passed */
    struct ceiling ceiling;     /* filled when best >= 0 */
    char stopped[256];          /* why stepping stopped, in words */
    char error[512];            /* why nothing could be measured (ceiling_measure returned -1) */
};

/* Fills *c with `anvil ceiling`'s defaults: 60 s, concurrency 64 doubling
 * to 8192, ITL 10 ms, TTFT 20 ms, 100 tokens, 3 rounds. */
void ceiling_cfg_defaults(struct ceiling_cfg *c);

/* Runs the measurement (a few seconds per step; the simulator is started
 * and stopped for each). Fills *out (release with ceiling_result_free).
 * Returns 0 when at least one step ran, else -1 with out->error (the
 * simulator could not start, a temporary directory could not be made). */
int ceiling_measure(const struct ceiling_cfg *c, struct ceiling_result *out);

/* Frees what *r owns. */
void ceiling_result_free(struct ceiling_result *r);

/* Prints the step table's header, and one step as its row, to out. */
void ceiling_print_header(FILE *out);
void ceiling_print_step(FILE *out, const struct ceiling_step *s);

/* The default place of the ceiling file: $XDG_CACHE_HOME/anvil/ceiling.json
 * when XDG_CACHE_HOME is an absolute path, else
 * $HOME/.cache/anvil/ceiling.json, into out (cap bytes). Returns 0, or -1
 * when neither variable gives a place (or it does not fit). */
int ceiling_default_path(char *out, size_t cap);

/* Reads the ceiling file at path into *c. Returns 0 read, 1 there is no
 * file, or -1 with the reason in err (unreadable, not JSON, not this schema,
 * no positive events_per_s). */
int ceiling_read(const char *path, struct ceiling *c, char *err, size_t errlen);

/* Writes r's ceiling and its steps to path (creating the directory),
 * through a temporary file renamed into place. r->best must be ≥ 0.
 * Returns 0, or -1 with the reason in err. */
int ceiling_write(const char *path, const struct ceiling_result *r, const struct ceiling_cfg *c, char *err,
                  size_t errlen);

#endif
