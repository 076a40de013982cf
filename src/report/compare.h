/* compare.h — `anvil compare`: two sets of rounds (benchmark/v1 artifacts:
 * a file, or every such file under a directory such as a sweep's; or a
 * matrix, seed 003's shape or a sweep's matrix.json, whose rows are its
 * rounds), matched case by case; per metric the two medians, delta, ratio and a verdict —
 * better, worse, within noise or same — where noise is the rounds' spread: the
 * min–max of the rounds with fewer than 3, else a bootstrap 95% interval of
 * the median. Two cases measured under different workloads are refused
 * with the reason unless forced. */
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
    const char *method;         /* "min-max", "bootstrap 95% CI of the median", "1 round" */
    size_t n;                   /* values it was taken from (NaN and ±inf dropped) */
};

/* The noise of n values (NaN and ±inf dropped): with 3 or more, the 2.5th and
 * 97.5th percentiles of the medians of 2000 resamples (GSL's MT19937 seeded
 * with seed, so reruns agree); with 1 or 2, min–max. median NaN when no
 * value. */
void cmp_noise_of(const double *v, size_t n, unsigned long seed, struct cmp_noise *out);

/* Whether d prints as zero with prec decimals ("%.*f": 0.00, -0.00). */
bool cmp_rounds_to_zero(double d, int prec);

/* The verdict of b against a, a constant string: "n/a" when either median
 * is NaN; "same" when b - a rounds to zero at prec decimals (the precision
 * the medians and delta print with, so the verdict agrees with the delta
 * column); else "within noise" when the intervals overlap, else "better" or
 * "worse" by direction (higher_better). When a side has a single value, the
 * word is followed by the qualifier " (no noise estimate: 1 round each)",
 * " (no noise estimate for A: 1 round)" or " (... for B: 1 round)": the
 * column's first word(s) before " (" are the verdict, so scripts reading
 * CSV or JSON split there (no qualifier holds a comma). */
const char *cmp_verdict(const struct cmp_noise *a, const struct cmp_noise *b, bool higher_better, int prec);

/* What differs between the workloads of a and b (context tokens,
 * max_tokens, load mode, concurrency, request rate, endpoint, dataset,
 * ignore_eos) as one sentence into why; returns whether anything does. */
bool cmp_workload_differs(const struct benchmark *a, const struct benchmark *b, char *why, size_t whylen);

/* Compares a and b into doc: cases paired by target and case id (by case id
 * alone when neither side has more than one target; a single case on each
 * side pairs whatever its id), one table per pair, notes on unpaired cases and
 * the noise method. A side of rows against a side of rounds compares the
 * rounds as rows (cmp_side_as_rows); sides of rows have no goodput, and
 * their workloads are the rows' lengths, concurrency and rate. Returns 0, or 1 when a pair's workloads differ and not
 * force (why in err; doc then holds nothing to print), or -1 when a side's
 * rounds of one case disagree on their workload (err says so). */
int cmp_compare(const struct cmp_side *a, const struct cmp_side *b, bool force, const struct cost *cost,
                struct rdoc *doc, char *err, size_t errlen);

#endif
