/* clock.c — ping-pong offsets between rank 0's clock and another rank's (clock.h). */
#include "mpi/clock.h"

#include <math.h>
#include <stdint.h>
#include <time.h>

#include <mpi.h>

#include "core/clock.h"

int mpi_wait_for(void *request, double timeout_s, bool spin)
{
    MPI_Request *q = request;
    int64_t deadline = clock_now_ns() + (int64_t)(timeout_s * 1e9);
    for (;;) {
        int done = 0;
        if (MPI_Test(q, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (done)
            return 0;
        if (clock_now_ns() > deadline)
            return -1;
        if (!spin) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
}

int mpi_clock_measure(int peer, int exchanges, double timeout_s, struct mpi_offset *out)
{
    *out = (struct mpi_offset){0};
    double best_rtt = INFINITY;
    for (int i = 0; i < exchanges; i++) {
        int64_t t_peer = 0;
        char ping = 0;
        MPI_Request rq, sq;
        if (MPI_Irecv(&t_peer, 1, MPI_INT64_T, peer, TAG_PONG, MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
            return -1;
        int64_t t1 = clock_now_ns();
        if (MPI_Isend(&ping, 1, MPI_CHAR, peer, TAG_PING, MPI_COMM_WORLD, &sq) != MPI_SUCCESS ||
            mpi_wait_for(&rq, timeout_s, true) != 0)
            return -1;
        int64_t t2 = clock_now_ns();
        if (mpi_wait_for(&sq, timeout_s, true) != 0)
            return -1;
        double rtt = (double)(t2 - t1);
        out->exchanges++;
        if (rtt < best_rtt) {
            best_rtt = rtt;
            out->offset_ns = (double)t_peer - ((double)t1 + (double)t2) / 2;
            out->uncertainty_ns = rtt / 2;
            out->measured = true;
        }
    }
    return 0;
}

int mpi_clock_answer(int exchanges, double timeout_s)
{
    for (int i = 0; i < exchanges; i++) {
        char ping;
        MPI_Request rq, sq;
        if (MPI_Irecv(&ping, 1, MPI_CHAR, 0, TAG_PING, MPI_COMM_WORLD, &rq) != MPI_SUCCESS ||
            mpi_wait_for(&rq, timeout_s, true) != 0)
            return -1;
        int64_t t = clock_now_ns();
        if (MPI_Isend(&t, 1, MPI_INT64_T, 0, TAG_PONG, MPI_COMM_WORLD, &sq) != MPI_SUCCESS ||
            mpi_wait_for(&sq, timeout_s, true) != 0)
            return -1;
    }
    return 0;
}
