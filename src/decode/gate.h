/* gate.h — the readiness gate of a decode cell (docs/DECODE.md): the window
 * opens only when the server reports C requests running and none queued,
 * with C streams in flight, continuously for stable_s; without server
 * metrics, when the C streams in flight are all in their decode phase
 * (first token received) for stable_s. The server's counts come from a
 * blocking sampler scraping /metrics every DECODE_GATE_SCRAPE_NS; the
 * driver polls decode_gate_ready on the measuring loop (load/driver.h,
 * driver_cfg.window_ready), the loop that also collects the scrapes, so the
 * state needs no lock. */
#ifndef ANVIL_DECODE_GATE_H
#define ANVIL_DECODE_GATE_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "load/driver.h"
#include "load/sampler.h"
#include "observe/observe.h"
#include "observe/scrape.h"

/* Scrapes of the gate's sampler: every 200 ms. */
#define DECODE_GATE_SCRAPE_NS 200000000

/* One change of what the gate saw, for the cell's ready_trace. */
struct decode_gate_obs {
    int64_t t;                  /* CLOCK_MONOTONIC ns */
    double running, queued;     /* the server's counts (NaN without metrics) */
    int active, decoding;       /* streams in flight, of them decoding */
    bool met;                   /* the condition held at t */
};

#define DECODE_GATE_TRACE 256   /* observations kept (the first ones) */

/* What one scrape said about prefills, for the scout's server-side
 * validation (decode_gate_scout_report). */
struct decode_gate_prefill {
    int64_t t_sent, t_done;     /* the scrape's GET went out / its last byte came (CLOCK_MONOTONIC) */
    double count, sum;          /* prefills observed, their seconds (vLLM's
                                   request_prefill_time_seconds; NaN when absent) */
    double prompt_tokens, prefix_hits;  /* the prompt-token and prefix-cache-hit counters (NaN absent) */
};

#define DECODE_GATE_READINGS 4096   /* scrapes kept (the first ones: 13 min at 200 ms) */

struct decode_gate {
    long want;                  /* C */
    double stable_s;
    bool server;                /* judged on the server's counts */
    double running, queued;     /* the newest scrape's (NaN until one) */
    int64_t met_since;          /* the condition has held since then; 0 = not met */
    double longest_s;           /* the longest it held without a break (s), for a timeout's reason */
    bool opened;                /* the gate opened the window */
    int64_t t_open;
    char ready_reason[300];     /* at opening: "running_reqs=C/C, queue_reqs=0, ..." */
    char last[200];             /* the newest observation, for a timeout's reason */
    struct decode_gate_obs trace[DECODE_GATE_TRACE];
    int n_trace;
    struct decode_gate_prefill prefill[DECODE_GATE_READINGS];
    int n_prefill;
    struct srv_scraper scraper;
    struct sampler sampler;     /* the scrape sampler (when server) */
};

/* Sets g up for C = want streams, stable for stable_s, judged on the
 * server's /metrics at metrics_url (headers not owned; NULL URL = no server
 * metrics: the client's decode-phase count). */
void decode_gate_init(struct decode_gate *g, long want, double stable_s, const char *metrics_url,
                      const struct curl_slist *headers);

/* The sampler to give the run when the gate uses server metrics, else NULL.
 * It lives in g. */
struct sampler *decode_gate_sampler(struct decode_gate *g);

/* driver_cfg.window_ready: whether the window may open now (ud: the gate).
 * Records the observation and, on opening, the ready reason. */
bool decode_gate_ready(void *ud, const struct driver_gate *dg);

/* The server's view of one request — the cell's scout, sent at t_start,
 * its first token at t_first, ended at t_end (CLOCK_MONOTONIC; 0 = cut by
 * the window) — as the observe report prefill_validate (decode/prefill.h)
 * judges, from the gate's scrapes around it:
 * - the prompt-token and prefix-hit counters' change between the last
 *   scrape that ended before t_start and the first that began after
 *   t_first (the server counts a prompt when it arrives or is prefilled;
 *   the cell's replacement of the scout, sent at t_end, stays out); NaN —
 *   prefill_validate then takes the requests' usage — when no scrape ended
 *   before t_start (the cell's first scrape goes out with its first
 *   request; a scrape before the run would count its calibration probes);
 * - the prefill-time histogram's change (count, mean) between the last
 *   scrape that ended before t_first and the first that began after t_end
 *   (the server observes a request's prefill time when it ends).
 * Other counters are NaN and other_traffic false: another request shows in
 * the prompt-token counter or in the histogram's count. Fills *out
 * (nothing owned: observe_report_free is not needed) with
 * server.available false and the reason when the scout was cut or a
 * scrape around its life is missing. Returns 0, or -1 (out untouched) when the
 * gate has no server metrics. */
int decode_gate_scout_report(const struct decode_gate *g, int64_t t_start, int64_t t_first, int64_t t_end,
                             struct observe_report *out);

/* Frees what g holds. */
void decode_gate_free(struct decode_gate *g);

#endif
