/* html.h — `anvil report`: one self-contained HTML file for any mix of
 * artifacts (runs, load curves, matrices, decode matrices, graph data):
 * summary cards, latency CDFs with their tails, per-request timelines with
 * send lateness, throughput over time, load curves with SLO lines and the
 * goodput knee, heat tables, grouped bars, server metrics and GPU
 * telemetry over time beside the client's numbers; several runs overlaid. The
 * charts are drawn by uPlot, embedded with the report's own script and
 * style (report/assets.h), so the file needs no network when opened (its
 * Content-Security-Policy forbids any). */
#ifndef ANVIL_REPORT_HTML_H
#define ANVIL_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "artifact/any.h"
#include "report/show.h"

/* Whether this build embeds the chart bundle (uPlot was in node_modules
 * when it was built). */
bool report_html_available(void);

/* Writes the report of the n artifacts a[0..n) to out. cost may be NULL
 * (no cost cards). A run's server metrics and telemetry over time
 * (artifact_series_read) are drawn on its client's time axis (s since its
 * first send). Returns 0, or -1 with err set: the build has no chart bundle
 * (report_html_available false), a run's series is malformed (the file and
 * key named), out of memory, or writing failed. */
int report_html(FILE *out, const struct artifact_any *a, size_t n, const struct cost *cost, char *err,
                size_t errlen);

#endif
