/* merge.h — one artifact from the shards of a run spread over processes
 * (`anvil merge`, and rank 0 of an MPI run): the shards' raw records from
 * their journals, brought onto one timeline, summarized as a single
 * process's run would be (percentiles exact), with a `ranks` block saying
 * who sent what and how far apart their clocks were (docs/ARTIFACTS.md). */
#ifndef ANVIL_RUN_MERGE_H
#define ANVIL_RUN_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "stats/summary.h"

/* One shard (rank) as the merge gets it; strings borrowed. */
struct merge_part {
    const char *name;           /* for messages: its artifact's path, "rank 2" */
    const char *artifact;       /* its artifact (JSON text, with a ranks block of one entry), or NULL:
                                   the shard is missing */
    const char *journal;        /* its journal (JSON Lines text), or NULL: missing */
    const char *missing_reason; /* why it is missing (artifact NULL), e.g. "no reply by the deadline" */
    /* Measured clock offset (MPI ping-pong, mpi/clock.h): this part's
     * CLOCK_MONOTONIC minus rank 0's, ns, ± uncertainty_ns, and how much it
     * moved from before the run to after it. Without it (offset_measured
     * false) the wall clocks align the parts (the artifacts'
     * unix_minus_monotonic_ns), an alignment only as good as the hosts'
     * time sync, which nothing here measures. */
    bool offset_measured;
    double offset_ns, uncertainty_ns, drift_ns;
};

/* What run_merge did. */
struct merge_result {
    char error[1024];           /* why it failed */
    char artifact_path[4096];
    bool incomplete;            /* a part missing or incomplete (the artifact says which) */
    char incomplete_reason[512];
    bool summarized;
    struct run_summary summary; /* of the merged records */
    int records;                /* measured records merged */
};

/* Merges parts[0..count) — part i is shard (rank) i of count — into one
 * benchmark/v1 artifact written to out ("-" = stdout): the settings of the
 * lowest part present (rank 0 normally), the plan's totals from the ranks
 * blocks, every measured record of every journal at its request_index with
 * its times shifted onto that part's clock (latencies are differences on
 * one clock and do not change), the summary recomputed from them exactly,
 * CPU, connections and arrival stamps summed, the event-loop lag of the
 * rank whose p99 was worst, and the ranks block of every part with its
 * clock offset. Missing parts make it incomplete, each named. alignment is
 * written as ranks.alignment ("mpi-ping-pong", "wall-clock"). Returns 0
 * (also when incomplete), or -1 with res->error set: no part present, a part
 * that is not a shard of this run (another count, a rank outside it or twice),
 * a journal that does not read, cannot write. */
int run_merge(const struct merge_part *parts, int count, const char *alignment, const char *out,
              struct merge_result *res);

#endif
