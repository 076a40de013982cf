/* run.h — one run spread over the ranks of an MPI job (`mpirun -np N anvil
 * run ...`; docs/SCALEOUT.md). Rank 0 measures every rank's clock against
 * its own (mpi/clock.h), discovers and calibrates, and hands the others the
 * calibration and where the artifacts go; every rank then runs its shard
 * of the plan (run_config.shard_*) on its own measuring loops and writes its
 * shard artifact and journal (so nothing it measured depends on the rest
 * of the job); all begin the measured phase at one instant rank 0 names in
 * each rank's clock; the records go to rank 0, which measures the clocks
 * again (drift) and merges them (run/merge.h) into one artifact. A rank that
 * does not deliver within run_config.rank_timeout_s is named missing and
 * the artifact is incomplete. */
#ifndef ANVIL_MPI_RUN_H
#define ANVIL_MPI_RUN_H

#include <stdbool.h>

#include "run/merge.h"
#include "run/run.h"

/* How the job went, for this rank. */
struct mpi_outcome {
    int rank, size;
    enum run_status own;        /* this rank's shard */
    char own_artifact[4096];    /* its shard artifact's path ("" = none) */
    char error[1024];           /* why something failed (this rank's view) */
    bool usage;                 /* refused before any request: the split's settings, or a planned
                                   case that cannot fit the server's context (exit 2) */
    bool merged;                /* rank 0: the merged artifact was written (m) */
    struct merge_result m;
    bool all_present;           /* every rank delivered: MPI_Finalize is safe */
};

/* Whether this process was started by an MPI launcher (mpirun, srun):
 * Open MPI's or PMI's environment. */
bool mpi_launched(void);

/* Runs c as this rank's part of one run (MPI_Init first; c's shard, out,
 * calibration_cache, ready hook and name are set per rank). c->out is the
 * merged artifact's path (NULL: <out.dir>/anvil-mpi-<time>-<pid>.json);
 * rank K's shard artifact and journal go next to it, into the hidden
 * folder .<stem>.ranks/ (rank<K>.json). Fills *o;
 * returns 0 when this rank did its part (rank 0: the merged artifact is
 * written, complete or not), else -1 with o->error. Call mpi_end after. */
int mpi_run(const struct run_config *c, struct mpi_outcome *o);

/* Ends MPI for this process: MPI_Finalize when every rank is there (with a
 * rank gone it would wait for it forever, so then the process just exits). */
void mpi_end(const struct mpi_outcome *o);

#endif
