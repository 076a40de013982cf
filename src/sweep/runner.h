/* runner.h — runs a sweep plan's round jobs, one `anvil run` process after
 * another, each with its own artifact and log; skips jobs already done
 * (resume); forwards Ctrl-C, SIGTERM and SIGHUP to the running round and
 * stops. A round dies with the sweep however the sweep ends (core/child.h). */
#ifndef ANVIL_SWEEP_RUNNER_H
#define ANVIL_SWEEP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "sweep/plan.h"

/* Whether the round artifact at path exists, reads as a benchmark/v1
 * artifact (benchmark_read_file) and is complete (not `incomplete`). */
bool sweep_round_done(const char *path);

/* Runs every job of plan (see plan.h) whose artifact is not done, with
 * anvil_bin (`anvil run ARGS --out ARTIFACT`); stdout and stderr of each go
 * to DIR/logs/<target>-<case>-round-<r>.log. Prints a progress line with an
 * ETA per job on stderr. Sets *interrupted when a signal stopped the sweep.
 * Returns the number of jobs that failed to produce a complete artifact, or
 * -1 with a message in err when a job could not be started or a round
 * rejected its flags (exit status 2: the plan is wrong, nothing more is run). */
int sweep_execute(const struct sweep_plan *plan, const char *anvil_bin, const char *dir, bool *interrupted,
                  char *err, size_t errlen);

/* As sweep_execute, with every round holding lock_fd (the directory's
 * lock, core/dirlock.h; -1 = none) and named in its file while it runs, and
 * started through launcher, a command
 * line put before anvil_bin (split at spaces; its first word looked up in
 * PATH): "mpirun -np 4 --hostfile hosts" makes each round one run over 4
 * MPI ranks (docs/SCALEOUT.md), "srun -N 4" the same under Slurm. NULL or
 * "" = none (sweep_execute). */
int sweep_execute_launched(const struct sweep_plan *plan, const char *anvil_bin, const char *launcher,
                           const char *dir, int lock_fd, bool *interrupted, char *err, size_t errlen);

#endif
