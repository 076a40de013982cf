/* live.h — a run's own figures as it goes, for `--metrics-listen`: counters
 * and fixed-bucket histograms that the measuring loops update with relaxed
 * atomics (a few adds per request, one per output chunk at its end), rendered as
 * Prometheus text (anvil_ prefix) by the endpoint's thread (live_server.h),
 * never by a measuring loop.
 *
 * What counts is what the artifact counts: measured requests only (a
 * record with warmup false — neither --warmup requests nor, in duration
 * mode, those sent before the window opened). A request counts as started
 * when it is handed to the transport, and as completed, failed or cut when
 * it ends, with the artifact's rules (stats/summary.h): completed = not
 * failed and not cut; output tokens are tokens_of() of each completed
 * request as it ends (a count the engine's tokenizer finishes after the
 * load, a stream without usage, can differ from the artifact's). */
#ifndef ANVIL_LOAD_LIVE_H
#define ANVIL_LOAD_LIVE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/buf.h"
#include "stats/record.h"

/* Upper bounds of the histograms' buckets, seconds (one set for all four:
 * 0.5 ms covers loop lag and fast ITL, 120 s a long TTFT), then +Inf. */
#define LIVE_BUCKETS 18
extern const double live_bucket_le[LIVE_BUCKETS];

/* A Prometheus histogram: per-bucket counts (not cumulative: rendering sums
 * them), the count and the sum in ns. */
struct live_hist {
    _Atomic uint64_t bucket[LIVE_BUCKETS + 1];  /* the last is +Inf's own */
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
};

struct live_metrics {
    _Atomic uint64_t started, completed, failed, cut;
    _Atomic uint64_t output_tokens;
    struct live_hist ttft;          /* completed requests: first answer − send (METHODOLOGY TTFT) */
    struct live_hist itl;           /* gaps between successive output chunks of measured requests */
    struct live_hist loop_lag;      /* every measuring loop's lag probe (driver.h) */
    struct live_hist send_lateness; /* open loop: actual send − scheduled send, measured requests */
};

/* Zeroes *m (all counts 0). */
void live_init(struct live_metrics *m);

/* One observation of ns (< 0 counts as 0) into h. Lock-free. */
void live_observe(struct live_hist *h, int64_t ns);

/* A measured request was handed to the transport. */
void live_request_started(struct live_metrics *m);

/* A measured request ended: completed, failed or cut by r's state; its
 * output tokens, TTFT and the gaps between its output chunks (ITL) when
 * completed, as the artifact counts them. */
void live_request_ended(struct live_metrics *m, const struct req_record *r);

/* Appends m as Prometheus text (exposition format 0.0.4) to out:
 * anvil_requests_started_total, anvil_requests_completed_total,
 * anvil_requests_failed_total, anvil_requests_cut_total,
 * anvil_output_tokens_total, anvil_requests_in_flight (started less those
 * ended; read so it is never negative), and the histograms
 * anvil_ttft_seconds, anvil_itl_seconds, anvil_loop_lag_seconds,
 * anvil_send_lateness_seconds. Returns 0, or -1 when out's cap or memory
 * runs out. */
int live_render(const struct live_metrics *m, struct buf *out);

#endif
