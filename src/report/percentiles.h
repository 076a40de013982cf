/* percentiles.h — `vllm bench serve`'s --percentile-metrics and
 * --metric-percentiles: the chosen metrics at the chosen percentiles,
 * computed from the records (any percentile, e.g. 99.9). */
#ifndef ANVIL_REPORT_PERCENTILES_H
#define ANVIL_REPORT_PERCENTILES_H

#include <stddef.h>
#include <stdio.h>

#include "stats/dist.h"
#include "stats/record.h"

#define PCT_MAX_METRICS 8
#define PCT_MAX_VALUES 16

/* What to print: metric names of vLLM (ttft, tpot, itl, e2el) and
 * percentiles in (0, 100]. */
struct pct_request {
    char metrics[PCT_MAX_METRICS][8];
    int n_metrics;
    double pcts[PCT_MAX_VALUES];
    int n_pcts;
};

/* Parses --percentile-metrics ("ttft,tpot,itl", a subset of ttft, tpot,
 * itl, e2el) into p. Returns 0, or -1 with why in err. */
int pct_parse_metrics(const char *s, struct pct_request *p, char *err, size_t errlen);

/* Parses --metric-percentiles ("50,90,99.9", each in (0, 100]) into p.
 * Returns 0, or -1 with why in err. */
int pct_parse_values(const char *s, struct pct_request *p, char *err, size_t errlen);

/* Prints "P<p> <METRIC> (ms):" lines, one per metric and percentile, over
 * the completed measured requests it reads (one pass per metric; ITL over
 * every gap between output chunks), percentiles by method m; "n/a" when no
 * sample. */
void report_percentiles(FILE *out, const struct pct_request *p, struct rec_iter *it, enum pct_method m);

/* One metric's figures as `vllm bench serve` writes them to its result
 * file: mean, median, population standard deviation (numpy's np.std) and
 * the value at each percentile of the request p, all in ms, over the
 * samples report_percentiles uses. n = 0 (all NaN) when there is none. */
struct pct_summary {
    size_t n;
    double mean, median, std;
    double at[PCT_MAX_VALUES];      /* at p->pcts[i] */
};

/* Fills *out for metric (ttft, tpot, itl or e2el) over the records it
 * reads (one pass), percentiles (and the median) by method m. Returns 0, or
 * -1 when memory runs out or the records could not be read. */
int pct_summarize(const char *metric, const struct pct_request *p, struct rec_iter *it, enum pct_method m,
                  struct pct_summary *out);

#endif
