/* timeseries.h — the artifact's `timeseries` from a run's accumulated
 * series (stats/timeseries.h), joined with the server's and the GPUs'
 * gauges of the artifact's own server_metrics and hardware series. */
#ifndef ANVIL_ARTIFACT_TIMESERIES_H
#define ANVIL_ARTIFACT_TIMESERIES_H

#include <cjson/cJSON.h>

#include "artifact/benchmark.h"
#include "stats/timeseries.h"

/* Fills *out (present) from s, its rows copied, and per row the gauges of
 * the series points whose midpoints fall in [t_s, t_s + interval_s) (the
 * mean over those points; see struct bench_ts_server and bench_ts_gpu):
 * server_metrics and hardware are the artifact's blocks (NULL or without a
 * series: no gauges). A series that cannot be read gives no gauges.
 * Returns 0, or -1 when memory runs out (*out then empty). Free with
 * bench_timeseries_free. */
int bench_timeseries_build(const struct ts_series *s, const cJSON *server_metrics, const cJSON *hardware,
                           struct bench_timeseries *out);

/* The same from a run's n records after the fact, for artifacts rebuilt
 * from records (`anvil merge`, `anvil recover`): the records are added in
 * the order they ended, from the origin of the first measured send, with
 * rows of interval_s and percentiles by method. Returns 0, or -1 when
 * memory runs out or interval_s is out of range (*out then empty). */
int bench_timeseries_of_records(const struct req_record *recs, int n, double interval_s, enum pct_method method,
                                const cJSON *server_metrics, const cJSON *hardware, struct bench_timeseries *out);

/* bench_timeseries_of_records over records read one at a time (two passes:
 * the origin, then each record in the order read, which for a journal is
 * about the order they ended: the accumulator takes lines up to two
 * intervals late). Returns 0, or -1 when memory runs out or the records
 * could not be read (it->err). */
int bench_timeseries_of_iter(struct rec_iter *it, double interval_s, enum pct_method method,
                             const cJSON *server_metrics, const cJSON *hardware, struct bench_timeseries *out);

/* Frees the rows of t and empties it. */
void bench_timeseries_free(struct bench_timeseries *t);

#endif
