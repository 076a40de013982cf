/* ranks.h — the `ranks` block of a run spread over processes (`--shard`
 * shards, MPI ranks; docs/ARTIFACTS.md "ranks"): who sent what and how far
 * apart their clocks were. A shard writes it with its own entry; the merge
 * reads each shard's and writes the whole run's. One field table is the
 * writer, the checked reader and the free. */
#ifndef ANVIL_ARTIFACT_RANKS_H
#define ANVIL_ARTIFACT_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "artifact/fields.h"

/* One rank's (shard's) entry of per_rank. Strings are owned when read
 * (ranks_from_json); a block built to be written may borrow them and is
 * then not given to ranks_free. Instants are CLOCK_MONOTONIC ns (their
 * difference to the wall clock: unix_minus_monotonic_ns), written as
 * decimal strings so no digit is lost; 0 = none (null). */
struct rank_entry {
    long rank;
    char *host;
    long pid;
    char *run_id;
    char *journal;              /* its journal's file name, next to its artifact; NULL = none */
    long threads, requests, sent, completed, failed;
    double cpu_user_s, cpu_sys_s;
    double loop_lag_p50_ms, loop_lag_p99_ms, loop_lag_max_ms;
    long loop_lag_samples;
    long prewarmed_connections;
    long arrival_stamps_kernel_rx, arrival_stamps_client_clock;
    bool incomplete;
    char *incomplete_reason;
    int64_t measure_start_ns, window_start_ns, window_end_ns, unix_minus_monotonic_ns;
    double start_late_ms;       /* measured phase began this long after the agreed start */
    double clock_offset_ms, clock_offset_uncertainty_ms, clock_drift_ms;   /* NaN: not measured */
};

/* A rank whose records are not in the artifact, and why. */
struct rank_missing {
    long rank;
    char *reason;
};

/* The whole run's plan, as every shard got it. */
struct ranks_plan {
    long num_prompts, warmup, concurrency;
};

struct ranks_block {
    long count;
    char *alignment;            /* "wall-clock", "mpi-ping-pong" */
    char *alignment_note;       /* NULL: left out */
    double max_offset_uncertainty_ms;   /* NaN: null (not measured) */
    struct rank_missing *missing;
    size_t n_missing;
    struct ranks_plan plan;
    struct rank_entry *per_rank;
    size_t n_per_rank;
};

extern const struct field_table ranks_table;

/* b as the JSON object of the ranks block; the caller deletes. NULL when
 * memory runs out. */
cJSON *ranks_to_json(const struct ranks_block *b);

/* Adds b to the artifact object art as its "ranks" block (last, where the
 * benchmark writer keeps it). Returns 0, or -1 when memory runs out. */
int artifact_add_ranks(cJSON *art, const struct ranks_block *b);

/* Reads the ranks block o into *b (owned: ranks_free), checked row by row;
 * name names the document in messages. Returns 0, or -1 with
 * "NAME: ranks.PATH: what" in err. */
int ranks_from_json(const cJSON *o, const char *name, struct ranks_block *b, char *err, size_t errlen);

/* Frees what ranks_from_json allocated in b. */
void ranks_free(struct ranks_block *b);

#endif
