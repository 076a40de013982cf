/* clock.h — how far a rank's CLOCK_MONOTONIC is from rank 0's, measured by
 * ping-pong: rank 0 notes its clock t1, sends a ping, the rank answers with
 * its clock t, rank 0 notes t2 on the reply. The rank's reading was taken
 * somewhere between t1 and t2, so offset = t − (t1 + t2)/2 is right within
 * ±(t2 − t1)/2; of many exchanges the one with the smallest round trip
 * bounds it tightest (Cristian's algorithm, as NTP's clock filter keeps the
 * sample of least delay). */
#ifndef ANVIL_MPI_CLOCK_H
#define ANVIL_MPI_CLOCK_H

#include <stdbool.h>

/* One measurement of a rank's clock against rank 0's. */
struct mpi_offset {
    bool measured;
    double offset_ns;       /* the rank's CLOCK_MONOTONIC minus rank 0's at the same instant */
    double uncertainty_ns;  /* half the smallest round trip: the offset is within ± this */
    int exchanges;          /* round trips that completed */
};

/* Exchanges per measurement: enough for one of them to find both ends idle. */
#define MPI_CLOCK_EXCHANGES 64

/* Rank 0: measures peer's offset over `exchanges` round trips, each waited
 * for up to timeout_s. Returns 0 (out->measured), or -1 when the peer did
 * not answer in time or MPI failed (what completed is kept in *out). */
int mpi_clock_measure(int peer, int exchanges, double timeout_s, struct mpi_offset *out);

/* Any other rank: answers rank 0's `exchanges` pings, each waited for up to
 * timeout_s. Returns 0, or -1 when a ping did not come in time. */
int mpi_clock_answer(int exchanges, double timeout_s);

/* Waits for *q to complete, spinning (spin, for the clock's exchanges) or
 * sleeping 1 ms between tests, for up to timeout_s. Returns 0 when it
 * completed, -1 on timeout or an MPI error (the request is then left
 * pending: a rank that died never completes it). */
int mpi_wait_for(void *request, double timeout_s, bool spin);

/* Message tags of anvil's MPI exchanges (mpi/clock.c, mpi/run.c). */
enum mpi_tag { TAG_PING = 1, TAG_PONG, TAG_SETUP, TAG_READY, TAG_START, TAG_HEAD, TAG_ARTIFACT, TAG_JOURNAL,
               TAG_VERDICT };

#endif
