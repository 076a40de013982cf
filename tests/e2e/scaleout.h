/* scaleout.h — what the shard/merge and MPI tests compare: merged artifacts
 * against a single process's, request by request. */
#ifndef ANVIL_TESTS_E2E_SCALEOUT_H
#define ANVIL_TESTS_E2E_SCALEOUT_H

#include <stdint.h>

#include <cjson/cJSON.h>

/* The request_timings entry of each request_index into by[0..n) (NULL =
 * none); fails the test on an index outside [0, n) or twice. */
void scaleout_by_index(const cJSON *art, const cJSON **by, int n);

/* Asserts that artifacts a and b hold the same run: requests, completed,
 * failed, concurrency, every request_index once in each, and per request
 * the same output and prompt tokens and a TTFT within ttft_tol_ms. */
void scaleout_assert_same_requests(const cJSON *a, const cJSON *b, double ttft_tol_ms);

/* Asserts that the scheduled send time of each request of art (its start,
 * start_monotonic_ns, less its send lateness), counted from request 0's,
 * is the schedule arrivals_schedule(rate, 1, seed, fixed span) gives, within
 * tol_ms. */
void scaleout_assert_schedule(const cJSON *art, int n, double rate, uint64_t seed, double tol_ms);

/* Runs `anvil run` for shard i/n of every shard at once (argv_tail: the run's
 * other flags, NULL-terminated; each shard's --out is DIR/s<i>.json) and
 * waits for them; asserts each exited 0. */
void scaleout_run_shards(const char *dir, int n, const char *const argv_tail[]);

/* scaleout_run_shards, each shard expected to exit want. */
void scaleout_run_shards_exit(const char *dir, int n, const char *const argv_tail[], int want);

#endif
