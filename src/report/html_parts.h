/* html_parts.h — the pieces of `anvil report`'s HTML (report/html.c
 * writes the document): each kind of artifact becomes the JSON that its
 * section of the page's script (src/report/js/) draws. Private to report/. */
#ifndef ANVIL_REPORT_HTML_PARTS_H
#define ANVIL_REPORT_HTML_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/any.h"
#include "report/show.h"

/* A number, or null when NaN or infinite (JSON has neither). */
cJSON *html_num(double v);

/* Adds html_num(v) to object o under key k. */
void html_add_num(cJSON *o, const char *k, double v);

/* The last component of path p (a pointer into p). */
const char *html_base_name(const char *p);

/* Whether a[i] is one of a decode matrix's own runs among a[0..n): a
 * benchmark under the cells/, burst/ or prefill/ folder of a decode
 * matrix's directory (anvil decode's layout). The decode section stands
 * for them, as a sweep's matrix for its rounds: neither the runs section
 * nor the comparison takes them. */
bool html_decode_part(const struct artifact_any *a, size_t n, size_t i);

/* A JSON array of the n strings v[0..n). */
cJSON *html_strings(const char *const *v, size_t n);

/* A run (benchmark artifact) for run.js: label, cards, per-request arrays
 * in order of sending, ITL percentiles, server and GPU timelines on the
 * run's clock. cost may be NULL. Returns a new object, or NULL with err
 * set (a series is malformed, out of memory). */
cJSON *html_run(const struct artifact_any *a, const struct cost *cost, char *err, size_t errlen);

/* Adds b's run over time to r (html_run_time.c): "steady" {present,
 * reached, reason, line (the steady state in one line), start_s, end_s,
 * length_s}, "ramp" {strategy, end_s} when b has one, and, when b has a
 * timeseries, "ts" {interval_s, requested_interval_s, exact_from_s, rows
 * (columns: t_s, len_s (the row's own length, the last one cut at the
 * run's end), started, completed, failed, cut, in_flight, output_tps
 * (output_tokens / len_s), ttft_p50, ttft_p99, itl_p50, itl_p99 (ms),
 * running, waiting (the server's gauges); null = none), drift (report/drift.h's
 * verdicts: judged, quarter_s, metrics [{label, unit, first, last, noise,
 * drifted}])}. Seconds are after the run's first measured send. */
void html_run_time(cJSON *r, const struct benchmark *b);

/* A load curve for curve.js: per target its load points in order of load
 * and their medians across repeats, and its answer (`answers`, one per
 * target, first on the page): {target, kind, source, x, tps, ttft_p99,
 * tpot_p99, goodput, cost, repeats, why}. With an SLO (kind "slo") x is
 * the largest load meeting it: the last point before the first whose p99
 * TTFT or p99 TPOT, median across repeats, exceeds its bound (null when
 * the lowest load does); without one (kind "knee") the lowest load whose
 * output throughput reaches 95% of the curve's highest. why names the
 * point and the SLO that ended it. Another source of a best load (a search)
 * can hand curve.js objects of the same shape. cost may be NULL. Returns a
 * new object, or NULL with err set (out of memory). */
cJSON *html_curve(const struct artifact_any *a, const struct cost *cost, char *err, size_t errlen);

/* The load curve of the complete sweep rounds among a[0..n) (a sweep run
 * without SLOs writes none), grouped as the sweep's own (sweep/report.c:
 * per target, case shape when several, load kind when mixed; a point per
 * load over its rounds), with no SLO: each answer is the knee. *out: the
 * curve as html_curve's, or NULL when no input is such a round. Returns
 * 0, or -1 with err set (out of memory). */
int html_curve_of_rounds(const struct artifact_any *a, size_t n, const struct cost *cost, cJSON **out, char *err,
                         size_t errlen);

/* A matrix for matrix.js: head and one row per engine and case. */
cJSON *html_matrix(const struct artifact_any *a, const struct cost *cost);

/* A decode matrix for decode.js: context × concurrency rows of each
 * cell's figures and flags. */
cJSON *html_decode(const struct artifact_any *a, const struct cost *cost);

/* Graph data for graph.js: its charts, series and points. */
cJSON *html_graph(const struct artifact_any *a);

/* An SLO search (search.json) for search.js and curve.js: name, search
 * ("concurrency" or "request_rate"), load_label, slo, slo_attainment (the
 * target A); per target (`results`, "" for an unlabelled one) stopped,
 * best (its load, null when no probe passed) and the probes in the order
 * they ran {x, rounds, good, n, attainment, interval, verdict,
 * decided_by}; and `answers`, one per target in html_curve's answer shape
 * with kind "search", plus attainment, interval and slo_attainment (tps
 * and cost null: the search keeps neither). Returns a new object. */
cJSON *html_search(const struct artifact_any *a);

/* The smallest difference the page's comparison calls better or worse, a
 * share of A: `anvil compare`'s --min-effect default (1 %). */
#define HTML_COMPARE_MIN_EFFECT 0.01

/* The comparison for compare.js: when the inputs hold two or more runs or
 * matrices to compare (a sweep's rounds are left to its matrix when the
 * page holds one), the first is the baseline (A) and each other one (B) is
 * compared with it by cmp_compare (report/compare.h; --min-effect 1 %, not
 * forced): per pair its tables as printed, its summary lines, its notes and
 * its tally, or "refused" with the reason (different workloads, unreadable).
 * cost may be NULL. Returns a new object, or NULL when fewer than two
 * inputs compare. */
cJSON *html_compare(const struct artifact_any *a, size_t n, const struct cost *cost);

#endif
