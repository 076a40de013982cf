/* watch.h — how far a round in flight has got, read from its journal
 * (`<run_id>.requests.jsonl` beside the round's artifact, whose header
 * names the artifact): the measured requests that ended so far, for the
 * sweep's progress line inside a round. Reading only: the round's files
 * are never touched. */
#ifndef ANVIL_SWEEP_WATCH_H
#define ANVIL_SWEEP_WATCH_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "sweep/plan.h"

struct round_watch {
    const struct sweep_job *job;
    time_t since;               /* the round's start: an older journal is an earlier round's */
    char path[4400];            /* the journal once found; "" before */
    off_t offset;               /* read up to here */
    long ended;                 /* measured requests ended so far */
    long planned;               /* --num-prompts of the round (0 = not given: duration, trace) */
    double duration_s;          /* --duration of the round (0 = none) */
};

/* Starts watching job's round, started now. */
void round_watch_start(struct round_watch *w, const struct sweep_job *job);

/* Reads what the round's journal gained since the last call. Returns the
 * measured requests ended so far, or -1 while no journal of the round is
 * there yet. */
long round_watch_poll(struct round_watch *w);

/* The progress line of the round (no newline) into out (cap bytes):
 * "120/400 requests ended, 12 s" (or "of 60 s" in duration mode). */
void round_watch_line(const struct round_watch *w, double elapsed_s, char *out, size_t cap);

#endif
