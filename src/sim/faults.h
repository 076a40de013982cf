/* faults.h — injected failures for anvil's own reliability tests: which
 * requests fail, and how, decided by a hash of --seed and the request's
 * identity, so a rerun with the same seed and request ids fails the same
 * requests at the same token. */
#ifndef ANVIL_SIM_FAULTS_H
#define ANVIL_SIM_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

/* The fault flags. Rates are probabilities 0..1; 0 turns a fault off. */
struct sim_faults {
    double fail_rate;          /* --fail-rate: answer fail_status instead of serving */
    int fail_status;           /* --fail-status: 429, 500 or 503 (default 503) */
    double disconnect_rate;    /* --disconnect-rate: close the connection mid-stream */
    double stream_error_rate;  /* --stream-error-rate: an error event inside a 200 stream */
    int64_t stall_ns;          /* --stall-ms: every reply pauses once, half-way, this long */
    int64_t slow_headers_ns;   /* --slow-headers-ms: nothing is sent for this long after arrival */
    double metrics_fail_rate;  /* --metrics-fail-rate: share of GET /metrics answered 503 while
                                  generation requests are in flight (sim_faults_metrics_fail) */
};

/* Whether the n-th GET /metrics (0-based) taken while requests are in
 * flight fails under rate: the failures spread evenly, floor((n+1)·rate) >
 * floor(n·rate), so any run of k such scrapes fails k·rate of them ± 1 (a
 * llama.cpp server's /metrics times out while its batch runs; anvil's
 * coverage tests need the share exact, not drawn). */
bool sim_faults_metrics_fail(double rate, uint64_t n);

/* What happens to one request. Token counts are output tokens sent before
 * the fault; -1 means the fault does not happen. */
struct sim_fault_plan {
    int fail_status;           /* 0: served normally */
    int64_t disconnect_after;  /* close after this many tokens (0..C-1) */
    int64_t error_after;       /* send the error event after this many tokens (0..C-1) */
    int64_t stall_after;       /* pause after this many tokens (C/2, >= 1), or -1 */
    int64_t stall_ns;
    int64_t slow_headers_ns;
};

/* The identity a request's fault draws hash: its X-Request-Id when it has
 * one (stable across runs whatever the arrival order), else its arrival
 * index among generation requests. */
uint64_t sim_faults_key(uint64_t seed, const char *request_id, uint64_t arrival_index);

/* Decides the faults of a request with fault key key that will generate
 * output_tokens (>= 1) tokens. Each fault draws independently; a failed
 * request has no other fault; a disconnect wins over a stream error. */
struct sim_fault_plan sim_faults_plan(const struct sim_faults *f, uint64_t key,
                                      int64_t output_tokens);

/* Name of a fault for the trace's "fault" key and the faults counter:
 * "fail", "disconnect", "stream_error", "stall", "slow_headers". */
enum sim_fault_kind { SIM_FAULT_FAIL, SIM_FAULT_DISCONNECT, SIM_FAULT_STREAM_ERROR,
                      SIM_FAULT_STALL, SIM_FAULT_SLOW_HEADERS, SIM_FAULT_KINDS };
const char *sim_fault_name(enum sim_fault_kind k);

#endif
