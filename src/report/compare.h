/* compare.h — `anvil compare`: two sets of rounds (benchmark/v1 artifacts:
 * a file, or every such file under a directory such as a sweep's; or a
 * matrix, seed 003's shape or a sweep's matrix.json, whose rows are its
 * rounds), matched case by case; per metric the two medians, B - A, B / A
 * and a verdict — better or worse only when the difference exceeds both the
 * noise (the rounds' spread: a bootstrap 95% interval of the median with 5 or
 * more rounds, else their min–max) and a minimum effect (a share of A);
 * otherwise the same — and one summary line per case. Two cases measured
 * under different workloads are refused with the reason unless forced. */
#ifndef ANVIL_REPORT_COMPARE_H
#define ANVIL_REPORT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "artifact/benchmark.h"
#include "artifact/matrix.h"
#include "report/rtable.h"
#include "report/show.h"

/* The rounds of one side, grouped by target and case: benchmark artifacts,
 * or (a side of rows) matrix rows. */
struct cmp_case {
    char *target;               /* sweep.target (a row's engine); NULL when the rounds name none */
    char *id;                   /* sweep.case_id, else run-<context>-<max_tokens>-c<concurrency> */
    const struct benchmark **rounds;    /* borrowed from the side's `all`; NULL on a side of rows */
    const struct matrix_row **rows;     /* borrowed from the side's `matrix` or `own_rows`; NULL else */
    size_t n;
};

struct cmp_side {
    char *label;                /* the path given */
    struct benchmark *all;      /* every round read (owned) */
    size_t n_all;
    struct cmp_case *cases;     /* by target and case, in order of first appearance */
    size_t n_cases;
    bool of_rows;               /* the cases hold matrix rows */
    struct matrix matrix;       /* a matrix read (owned; empty for rounds) */
    struct matrix_row *own_rows;        /* rounds turned into rows (cmp_side_as_rows; owned) */
    size_t n_own_rows;
};

/* Reads one side: path is a benchmark/v1 file, a matrix file (a side of
 * rows: each row one round of its engine × case), or a directory searched
 * recursively for *.json files whose schema is benchmark/v1 (other files,
 * such as a sweep's matrix.json, are skipped). Returns 0, or -1 with err
 * set (unreadable, an invalid artifact, another kind of artifact, no round
 * found). Release with cmp_side_free. */
int cmp_side_read(const char *path, struct cmp_side *out, char *err, size_t errlen);
void cmp_side_free(struct cmp_side *s);

/* A side of rows from a side of rounds (matrix_row_of of each round, as a
 * sweep's matrix has them), to compare rounds with a matrix; *out owns its
 * rows and borrows nothing from s. Returns 0, or -1 with err set (a dataset
 * round, out of memory). Release with cmp_side_free. */
int cmp_side_as_rows(const struct cmp_side *s, struct cmp_side *out, char *err, size_t errlen);

/* What differs between the workloads of two matrix rows (input and output
 * tokens, concurrency, request rate) as one sentence into why; returns
 * whether anything does. */
bool cmp_row_workload_differs(const struct matrix_row *a, const struct matrix_row *b, char *why, size_t whylen);

/* An interval of a metric across rounds. */
struct cmp_noise {
    double median, lo, hi;
    const char *method;         /* "bootstrap 95% CI of the median", "min-max", "1 round", "no value" */
    size_t n;                   /* values it was taken from (NaN and ±inf dropped) */
};

/* Rounds a side needs for a bootstrap interval; with fewer the interval is
 * their min–max (a bootstrap of 3 values is their range with extra steps). */
#define CMP_BOOTSTRAP_MIN_ROUNDS 5

/* The noise of n values (NaN and ±inf dropped): with CMP_BOOTSTRAP_MIN_ROUNDS
 * or more, the percentile interval of the bootstrap — the 2.5th and 97.5th
 * percentiles (GSL's quantile, linear interpolation) of the medians of 2000
 * resamples with replacement, drawn by GSL's MT19937 seeded with seed, so
 * reruns agree; with 2 to 4, min–max; with 1, the value itself ("1 round").
 * median NaN when no value. */
void cmp_noise_of(const double *v, size_t n, unsigned long seed, struct cmp_noise *out);

/* Whether d prints as zero with prec decimals ("%.*f": 0.00, -0.00). */
bool cmp_rounds_to_zero(double d, int prec);

/* What a verdict says of B against A. */
enum cmp_word { CMP_NA, CMP_SAME, CMP_BETTER, CMP_WORSE };

/* The verdict of b against a; *text (if text) gets its printed form, a
 * constant string. CMP_NA ("n/a") when either median is NaN. CMP_SAME when
 * b - a rounds to zero at prec decimals (the precision the medians print
 * with: "same"); when the intervals overlap ("same (within noise)"); when
 * |b - a| < min_effect × |a| ("same (under min effect)"; min_effect is a
 * fraction: 0.01 = 1%). Else CMP_BETTER or CMP_WORSE by direction
 * (higher_better): "better", "worse", followed by " (no noise estimate: 1
 * round each)", " (no noise estimate for A: 1 round)" or "... for B ..."
 * when a side's interval is a single round. The text before " (" is the
 * verdict (no qualifier holds a comma), so scripts reading CSV or JSON split
 * there. */
enum cmp_word cmp_judge(const struct cmp_noise *a, const struct cmp_noise *b, bool higher_better, int prec,
                        double min_effect, const char **text);

/* What differs between the workloads of a and b (context tokens,
 * max_tokens, load mode, concurrency, request rate, endpoint, dataset,
 * ignore_eos) as one sentence into why; returns whether anything does. */
bool cmp_workload_differs(const struct benchmark *a, const struct benchmark *b, char *why, size_t whylen);

/* How to compare. */
struct cmp_opts {
    bool force;                 /* compare even when the workloads differ (the output says what differs) */
    const struct cost *cost;    /* adds the cost row when its price is finite; may be NULL */
    double min_effect;          /* the smallest |B - A| / |A| that is a difference (0.01 = 1%) */
    bool wide;                  /* add each side's interval and its method as columns (CSV, JSON) */
    size_t width;               /* split notes to fit this many columns ("note: " included); 0: never */
};

/* Verdicts counted over every metric of every pair compared. */
struct cmp_tally {
    size_t better, worse, same, na;
};

/* Compares a and b into doc: cases paired by target and case id (by case id
 * alone when neither side has more than one target; a single case on each
 * side pairs whatever its id), one table per pair — metric, A, B, B-A, B/A,
 * verdict (cmp_judge), and with o->wide each side's interval and method —
 * then notes: one summary line per pair ("B is 12% faster in TTFT p50, 3.5%
 * lower in output throughput; 9 metrics the same"; a percentage is |B/A - 1|,
 * one decimal under 10%), unpaired cases, how noise was judged. A side of rows
 * against a side of rounds compares the rounds as rows (cmp_side_as_rows);
 * sides of rows have no goodput, and their workloads are the rows' lengths,
 * concurrency and rate. tally (may be NULL) gets the verdicts' counts.
 * Returns 0, or 1 when a pair's workloads differ and not o->force (why in
 * err; doc then holds nothing to print), or -1 when a side's rounds of one
 * case disagree on their workload (err says so). */
int cmp_compare(const struct cmp_side *a, const struct cmp_side *b, const struct cmp_opts *o,
                struct rdoc *doc, struct cmp_tally *tally, char *err, size_t errlen);

#endif
