/* show.h — `anvil show`: any artifact as the summary tables its command
 * prints (a run's summary, a matrix's aggregates, a load curve's points, a
 * decode matrix's cells, graph data's charts), built as a struct rdoc so it
 * prints as a terminal table, Markdown, CSV or JSON. */
#ifndef ANVIL_REPORT_SHOW_H
#define ANVIL_REPORT_SHOW_H

#include "artifact/any.h"
#include "artifact/benchmark.h"
#include "report/rtable.h"
#include "stats/registry.h"

/* Cost settings: NaN gpu_hour_usd = no cost column. */
struct cost {
    double gpu_hour_usd;        /* USD per GPU-hour */
    long gpus;                  /* GPUs the server ran on (≥ 1) */
};

/* USD per million output tokens at output_tps tokens/s on c's GPUs:
 * gpu_hour_usd × gpus / (output_tps × 3600) × 10⁶. NaN when cost is unset or
 * output_tps is not > 0. */
double cost_per_mtok(const struct cost *c, double output_tps);

/* A benchmark artifact's output throughput in tokens/s: metrics.
 * output_throughput, else seed 001's throughput_tok_s. */
double bench_output_tps(const struct benchmark *b);

/* A benchmark artifact's headline throughput in tokens/s: the figure the
 * metric registry names the headline of its mode (stats/registry.h,
 * metric_headline) — a duration-mode run's window throughput
 * (duration_mode.aggregate_tps: every output token the window counted,
 * whichever request it belongs to), else bench_output_tps (completed
 * requests / duration). *def (when not NULL) gets the figure's registry row. A
 * duration-mode run without a window figure falls back to bench_output_tps. */
double bench_headline_tps(const struct benchmark *b, const struct metric_def **def);

/* The output tokens/s a benchmark's cost is charged on: a duration-mode
 * run's window throughput (duration_mode.aggregate_tps: every output token
 * the window counted, whichever request it belongs to; docs/MATRIX.md),
 * else bench_output_tps — as the sweep's results table charges a round
 * (matrix_round_output_tps). */
double bench_cost_tps(const struct benchmark *b);

/* The run's workload in one line, as the report's run section opens with
 * it: the load (closed loop at concurrency C, open loop at R req/s with its
 * burstiness, a duration window of S s, trace replay, agentic sessions),
 * the lengths (planned input → max_tokens output tokens, or "recorded
 * lengths" for a dataset's or a trace's prompts), the endpoint, base URL and
 * model. Written into buf (cut to cap bytes); returns buf. */
char *bench_workload_line(const struct benchmark *b, char *buf, size_t cap);

/* Adds a's summary tables (and notes) to doc; the first table's title names
 * the file and its kind. cost may be NULL. Out of memory is recorded in doc
 * (rdoc_print then fails). */
void show_artifact(struct rdoc *doc, const struct artifact_any *a, const struct cost *cost);

#endif
