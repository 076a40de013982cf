/* test_compare.c — `anvil compare`'s verdicts on constructed rounds:
 * clearly better, clearly worse and overlapping, with the bootstrap
 * interval (5+ rounds) and min–max (2 to 4 rounds); a difference beyond the
 * noise but under the minimum effect is the same; one summary line per
 * case; workloads that differ are refused with the reason unless forced. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>

#include "report/compare.h"

#define MAXR 8

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

struct side_fixture {
    struct benchmark b[MAXR];
    const struct benchmark *p[MAXR];
    struct cmp_case c;
    struct cmp_side s;
};

static void blank(struct benchmark *b)
{
    memset(b, 0, sizeof *b);
    b->context_tokens = 1024;
    b->max_tokens = 128;
    b->concurrency = 8;
    b->request_rate = NAN;
    b->load_mode = (char *)"closed-loop";
    b->endpoint = (char *)"chat";
    struct dist *d = (struct dist *)&b->metrics.dist;
    for (size_t i = 0; i < sizeof b->metrics.dist / sizeof *d; i++)
        d[i] = (struct dist){0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    b->metrics.output_throughput = b->metrics.throughput_tok_s = NAN;
    b->metrics.request_throughput = b->metrics.goodput_rps = NAN;
}

/* A side of n rounds whose TTFT p50 and output throughput are ttft[i], tps[i]. */
static void side(struct side_fixture *f, const char *label, size_t n, const double *ttft, const double *tps)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        blank(&f->b[i]);
        f->b[i].metrics.dist.ttft.p50 = ttft[i];
        f->b[i].metrics.output_throughput = tps[i];
        f->p[i] = &f->b[i];
    }
    f->c = (struct cmp_case){.id = (char *)"case-1", .rounds = f->p, .n = n};
    f->s = (struct cmp_side){(char *)label, f->b, n, &f->c, 1};
}

/* The verdict column of the row named metric. */
static const char *verdict(const struct rdoc *d, const char *metric)
{
    cr_assert_eq(d->n_tables, 1);
    const struct rtable *t = d->tables[0];
    for (size_t r = 0; r < t->ncells / t->ncols; r++)
        if (!strcmp(t->cells[r * t->ncols].text, metric))
            return t->cells[r * t->ncols + 5].text;
    cr_assert_fail("no row %s", metric);
    return NULL;
}

static const struct cmp_opts plain = {.min_effect = 0.01};
static const struct cmp_opts forced = {.force = true, .min_effect = 0.01};

static void compare(size_t n, const double *ta, const double *pa, const double *tb, const double *pb,
                    const char *want_ttft, const char *want_tps)
{
    static struct side_fixture a, b;
    side(&a, "A", n, ta, pa);
    side(&b, "B", n, tb, pb);
    struct rdoc d = {0};
    char err[512];
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "TTFT p50 (ms)"), want_ttft);
    cr_assert_str_eq(verdict(&d, "output throughput (tok/s)"), want_tps);
    rdoc_free(&d);
}

Test(compare, clearly_better_clearly_worse_and_overlapping)
{
    const double slow[] = {100, 104, 101, 103, 102}, fast[] = {50, 53, 51, 52, 50};
    const double low[] = {10, 11, 12, 10.5, 11.5}, high[] = {20, 21, 22, 20.5, 21.5};
    compare(5, slow, low, fast, high, "better", "better");
    compare(5, fast, high, slow, low, "worse", "worse");
    const double a[] = {100, 110, 120, 105, 115}, b[] = {104, 114, 124, 109, 119};
    compare(5, a, low, b, low, "same (within noise)", "same");
    /* two rounds: min–max */
    const double two_a[] = {100, 101}, two_b[] = {200, 201}, two_c[] = {100.5, 300};
    compare(2, two_a, low, two_b, low, "worse", "same");
    compare(2, two_a, low, two_c, low, "same (within noise)", "same");
    /* two rounds each whose medians differ by less than the printed precision: the same, not
     * worse (their min–max intervals, 1 apart at the 9th decimal, do not overlap) */
    const double tiny_a[] = {100, 100 + 1e-9}, tiny_b[] = {100 + 3e-9, 100 + 4e-9};
    compare(2, tiny_a, low, tiny_b, low, "same", "same");
}

/* The cell in column col of the row named metric. */
static const struct rcell *cell_of(const struct rdoc *d, const char *metric, size_t col)
{
    const struct rtable *t = d->tables[0];
    for (size_t r = 0; r < t->ncells / t->ncols; r++)
        if (!strcmp(t->cells[r * t->ncols].text, metric))
            return &t->cells[r * t->ncols + col];
    cr_assert_fail("no row %s", metric);
    return NULL;
}

/* One round per side: equal figures (or figures equal at the printed
 * precision) are "same", a difference beyond the min effect says there is
 * no noise estimate, and the delta of equal figures prints as 0, not -0.
 * Before, every metric was "better" or "worse", "worse" at a delta of
 * -0.000. */
Test(compare, one_round_per_side_says_same_or_no_noise_estimate)
{
    static struct side_fixture a, b;
    const double t1[] = {100}, p1[] = {7.928123}, t2[] = {100}, p2[] = {7.928119};
    side(&a, "A", 1, t1, p1);
    side(&b, "B", 1, t2, p2);
    struct rdoc d = {0};
    char err[512];
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "TTFT p50 (ms)"), "same");
    cr_assert_str_eq(verdict(&d, "output throughput (tok/s)"), "same");
    cr_assert_str_eq(cell_of(&d, "output throughput (tok/s)", 3)->text, "0.00");
    rdoc_free(&d);
    const double t3[] = {150}, p3[] = {9};
    side(&b, "B", 1, t3, p3);
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "TTFT p50 (ms)"), "worse (no noise estimate: 1 round each)");
    cr_assert_str_eq(verdict(&d, "output throughput (tok/s)"), "better (no noise estimate: 1 round each)");
    bool noted = false;
    for (size_t i = 0; i < d.n_notes; i++)
        noted |= strstr(d.notes[i], "1 round has none (the verdict says so)") != NULL;
    cr_assert(noted);
    rdoc_free(&d);
    /* three rounds against one: the verdict names the side without a noise estimate */
    const double t5[] = {150, 151, 152}, p5[] = {9, 9.1, 9.2};
    side(&b, "B", 3, t5, p5);
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "TTFT p50 (ms)"), "worse (no noise estimate for A: 1 round)");
    rdoc_free(&d);
    cr_assert_eq(cmp_compare(&b.s, &a.s, &plain, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "TTFT p50 (ms)"), "better (no noise estimate for B: 1 round)");
    rdoc_free(&d);
}

/* Bootstrap only from 5 rounds: with 3 it was the rounds' range under
 * another name (the test failed before: 3 rounds said "bootstrap"). */
Test(compare, noise_is_bootstrap_from_five_rounds_else_min_max)
{
    const double v[] = {10, 30, 20, 25, 15};
    struct cmp_noise z, again;
    cmp_noise_of(v, 5, 1, &z);
    cr_assert_str_eq(z.method, "bootstrap 95% CI of the median");
    cr_assert_eq(z.median, 20);
    cr_assert(z.lo >= 10 && z.hi <= 30 && z.lo < z.median && z.hi > z.median, "[%g, %g]", z.lo, z.hi);
    cmp_noise_of(v, 5, 1, &again);
    cr_assert(z.lo == again.lo && z.hi == again.hi, "reruns agree");
    for (size_t n = 2; n < CMP_BOOTSTRAP_MIN_ROUNDS; n++) {
        cmp_noise_of(v, n, 1, &z);
        cr_assert_str_eq(z.method, "min-max", "%zu rounds", n);
    }
    cmp_noise_of(v, 3, 1, &z);
    cr_assert(z.lo == 10 && z.hi == 30 && z.median == 20);
    cmp_noise_of(v, 2, 1, &z);
    cr_assert(z.lo == 10 && z.hi == 30 && z.median == 20);
    const double one[] = {NAN, 7};
    cmp_noise_of(one, 2, 1, &z);
    cr_assert_str_eq(z.method, "1 round");
    cr_assert(z.lo == 7 && z.hi == 7);
}

/* The bootstrap interval recomputed here from its definition: the medians
 * of 2000 resamples drawn by MT19937 (seed 1), their 2.5th and 97.5th
 * percentiles by linear interpolation between order statistics. */
Test(compare, bootstrap_interval_matches_its_definition)
{
    const double v[] = {12, 9, 15, 11, 10, 14, 13};
    const size_t k = 7, reps = 2000;
    double x[7], r[7], med[2000];
    memcpy(x, v, sizeof x);
    qsort(x, k, sizeof *x, cmp_double);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 1);
    for (size_t b = 0; b < reps; b++) {
        for (size_t i = 0; i < k; i++)
            r[i] = x[gsl_rng_uniform_int(g, k)];
        qsort(r, k, sizeof *r, cmp_double);
        med[b] = r[k / 2];
    }
    gsl_rng_free(g);
    qsort(med, reps, sizeof *med, cmp_double);
    double pos_lo = 0.025 * (reps - 1), pos_hi = 0.975 * (reps - 1);
    double lo = med[(size_t)pos_lo] + (pos_lo - floor(pos_lo)) * (med[(size_t)pos_lo + 1] - med[(size_t)pos_lo]);
    double hi = med[(size_t)pos_hi] + (pos_hi - floor(pos_hi)) * (med[(size_t)pos_hi + 1] - med[(size_t)pos_hi]);
    struct cmp_noise z;
    cmp_noise_of(v, k, 1, &z);
    cr_assert_float_eq(z.lo, lo, 1e-12);
    cr_assert_float_eq(z.hi, hi, 1e-12);
    cr_assert_eq(z.median, 12);
}

/* A noise interval of a single value or of [lo, hi] around median m. */
static struct cmp_noise iv(double m, double lo, double hi, size_t n)
{
    return (struct cmp_noise){.median = m, .lo = lo, .hi = hi, .method = "min-max", .n = n};
}

/* The rule: better or worse needs the intervals apart and |B - A| at least
 * the min effect of A. Before, 335.06 vs 335.07 ms was "worse" and a ratio
 * of 1.000 could be "better". */
Test(compare, a_verdict_needs_both_noise_and_min_effect)
{
    const char *t;
    struct cmp_noise a = iv(335.06, 335.06, 335.06, 1), b = iv(335.07, 335.07, 335.07, 1);
    cr_assert_eq(cmp_judge(&a, &b, false, 2, 0.01, &t), CMP_SAME);
    cr_assert_str_eq(t, "same (under min effect)");
    a = iv(335.06, 335.05, 335.06, 3), b = iv(335.07, 335.07, 335.08, 3);
    cr_assert_eq(cmp_judge(&a, &b, false, 2, 0.01, &t), CMP_SAME);
    cr_assert_str_eq(t, "same (under min effect)");
    /* a ratio that prints as 1.000 is never better with the default min effect */
    a = iv(1000, 999.9, 1000, 5), b = iv(1000.4, 1000.3, 1000.5, 5);
    cr_assert_eq(cmp_judge(&a, &b, true, 2, 0.01, &t), CMP_SAME);
    /* beyond the noise and the min effect */
    b = iv(1011, 1010, 1012, 5);
    cr_assert_eq(cmp_judge(&a, &b, true, 2, 0.01, &t), CMP_BETTER);
    cr_assert_str_eq(t, "better");
    cr_assert_eq(cmp_judge(&a, &b, false, 2, 0.01, &t), CMP_WORSE);
    /* beyond the min effect but within noise */
    b = iv(1011, 995, 1020, 5);
    cr_assert_eq(cmp_judge(&a, &b, true, 2, 0.01, &t), CMP_SAME);
    cr_assert_str_eq(t, "same (within noise)");
    /* beyond the noise, under a 2% min effect, over a 0.5% one */
    b = iv(1011, 1010, 1012, 5);
    cr_assert_eq(cmp_judge(&a, &b, true, 2, 0.02, &t), CMP_SAME);
    cr_assert_str_eq(t, "same (under min effect)");
    cr_assert_eq(cmp_judge(&a, &b, true, 2, 0.005, &t), CMP_BETTER);
    /* one round each: the min effect alone decides, and the verdict says so */
    a = iv(100, 100, 100, 1), b = iv(102, 102, 102, 1);
    cr_assert_eq(cmp_judge(&a, &b, false, 2, 0.01, &t), CMP_WORSE);
    cr_assert_str_eq(t, "worse (no noise estimate: 1 round each)");
    /* A of 0: any difference beyond the noise counts; NaN is n/a */
    a = iv(0, 0, 0, 3), b = iv(1, 1, 1, 3);
    cr_assert_eq(cmp_judge(&a, &b, true, 3, 0.01, &t), CMP_BETTER);
    b.median = NAN;
    cr_assert_eq(cmp_judge(&a, &b, true, 3, 0.01, &t), CMP_NA);
    cr_assert_str_eq(t, "n/a");
}

/* The note starting with prefix, else NULL. */
static const char *note_with(const struct rdoc *d, const char *prefix)
{
    for (size_t i = 0; i < d->n_notes; i++)
        if (!strncmp(d->notes[i], prefix, strlen(prefix)))
            return d->notes[i];
    return NULL;
}

/* One summary line per case: what is better or worse by how much (|B/A -
 * 1| recomputed here), and how many metrics are the same; the tally counts
 * every verdict. */
Test(compare, one_summary_line_per_case_and_the_tally)
{
    static struct side_fixture a, b;
    const double ta[] = {100, 101, 102, 101, 100}, pa[] = {1000, 1001, 1002, 1001, 1000};
    const double tb[] = {88, 89, 88, 89, 88.5}, pb[] = {970, 971, 970, 969, 971};
    side(&a, "A", 5, ta, pa);
    side(&b, "B", 5, tb, pb);
    struct rdoc d = {0};
    struct cmp_tally tally;
    char err[512], want[256];
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &d, &tally, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "TTFT p50 (ms)"), "better");
    cr_assert_str_eq(verdict(&d, "output throughput (tok/s)"), "worse");
    /* medians: TTFT 101 -> 88.5, throughput 1001 -> 970 */
    snprintf(want, sizeof want, "summary case-1: B is %.1f%% lower in output throughput, %.0f%% faster in TTFT p50; "
             "0 metrics the same", fabs(970.0 / 1001 - 1) * 100, fabs(88.5 / 101 - 1) * 100);
    cr_assert_str_eq(note_with(&d, "summary"), want);
    cr_assert_eq(tally.better, 1);
    cr_assert_eq(tally.worse, 1);
    cr_assert_eq(tally.same + tally.na, 0);
    rdoc_free(&d);
    cr_assert_eq(cmp_compare(&a.s, &a.s, &plain, &d, &tally, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(note_with(&d, "summary"), "summary case-1: B is the same as A in all 2 metrics");
    cr_assert(tally.same == 2 && tally.better == 0 && tally.worse == 0);
    rdoc_free(&d);
}

/* With a width, every note prints within it ("note: " included), split at
 * spaces; without, a sentence stays one note (JSON, CSV). */
Test(compare, notes_fit_the_width)
{
    static struct side_fixture a, b;
    const double t[] = {100, 101, 102}, p[] = {10, 11, 12};
    side(&a, "a/very/long/path/to/a/sweep/directory/that/goes/on/and/on/for/a/while", 3, t, p);
    side(&b, "b/another/very/long/path/to/a/sweep/directory/that/goes/on/and/on", 3, t, p);
    struct rdoc d = {0};
    char err[512];
    struct cmp_opts o = {.min_effect = 0.01, .width = 120};
    cr_assert_eq(cmp_compare(&a.s, &b.s, &o, &d, NULL, err, sizeof err), 0, "%s", err);
    size_t n_wrapped = d.n_notes;
    for (size_t i = 0; i < d.n_notes; i++)
        cr_assert_leq(strlen("note: ") + strlen(d.notes[i]), 120, "%s", d.notes[i]);
    rdoc_free(&d);
    o.width = 0;
    cr_assert_eq(cmp_compare(&a.s, &b.s, &o, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_lt(d.n_notes, n_wrapped);
    bool long_one = false;
    for (size_t i = 0; i < d.n_notes; i++)
        long_one |= strlen(d.notes[i]) > 200;
    cr_assert(long_one);
    rdoc_free(&d);
}

Test(compare, different_workloads_are_refused_unless_forced)
{
    static struct side_fixture a, b;
    const double t[] = {100, 101, 102}, p[] = {10, 11, 12};
    side(&a, "A", 3, t, p);
    side(&b, "B", 3, t, p);
    for (int i = 0; i < 3; i++) {
        b.b[i].concurrency = 16;
        b.b[i].max_tokens = 256;
        b.b[i].load_mode = (char *)"open-loop";
        b.b[i].request_rate = 4;
    }
    struct rdoc d = {0};
    char err[1024];
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &d, NULL, err, sizeof err), 1);
    cr_assert(strstr(err, "refusing") && strstr(err, "output lengths differ (max_tokens 128 vs 256)")
              && strstr(err, "load modes differ (closed-loop vs open-loop)")
              && strstr(err, "concurrency differs (8 vs 16)") && strstr(err, "request rates differ"), "%s", err);
    cr_assert_eq(d.n_tables, 0);
    cr_assert_eq(cmp_compare(&a.s, &b.s, &forced, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.n_tables, 1);
    cr_assert(strstr(d.notes[0], "compared despite different workloads"), "%s", d.notes[0]);
    rdoc_free(&d);
    /* rounds of one side that disagree */
    b.b[1].concurrency = 8;
    cr_assert_eq(cmp_compare(&a.s, &b.s, &forced, &d, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "B: the rounds of case case-1 were measured under different workloads"), "%s", err);
    rdoc_free(&d);
}

/* An open loop against a duration-mode closed loop, and synthetic prompts
 * against a dataset's: the reasons name the closed loop and the dataset
 * where a number is missing. Before, they said "8 vs nan req/s" and "nan vs
 * 1024 tokens". */
Test(compare, workload_reasons_print_no_nan)
{
    static struct side_fixture a, b;
    const double t[] = {100}, p[] = {10};
    side(&a, "r1.json", 1, t, p);
    side(&b, "d1.json", 1, t, p);
    a.b[0].load_mode = (char *)"open-loop";
    a.b[0].request_rate = 8;
    b.b[0].duration_mode.present = true;
    b.b[0].context_tokens = NAN;
    b.b[0].workload.present = true;
    b.b[0].workload.dataset = (char *)"sharegpt";
    struct rdoc d = {0};
    char err[1024];
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &d, NULL, err, sizeof err), 1);
    cr_assert(strstr(err, "request rates differ (8 req/s vs closed loop)"), "%s", err);
    cr_assert(strstr(err, "input lengths differ (1024 tokens vs dataset prompts)"), "%s", err);
    cr_assert(strstr(err, "load modes differ (open-loop vs duration)"), "%s", err);
    cr_assert_null(strstr(err, "nan"), "%s", err);
    char why[512];
    cr_assert(cmp_workload_differs(&b.b[0], &a.b[0], why, sizeof why));
    cr_assert(strstr(why, "request rates differ (closed loop vs 8 req/s)"), "%s", why);
    a.b[0].request_rate = INFINITY;
    cr_assert(cmp_workload_differs(&a.b[0], &b.b[0], why, sizeof why));
    cr_assert_null(strstr(why, "inf"), "%s", why);
    cr_assert(strstr(why, "request rates differ (unlimited vs closed loop)"), "%s", why);
    rdoc_free(&d);
}

Test(compare, cost_row_when_priced)
{
    static struct side_fixture a, b;
    const double t[] = {100, 101, 102}, pa[] = {1000, 1000, 1000}, pb[] = {2000, 2000, 2000};
    side(&a, "A", 3, t, pa);
    side(&b, "B", 3, t, pb);
    struct cost c = {3.6, 2};
    struct rdoc d = {0};
    char err[512];
    cr_assert_eq(cmp_compare(&a.s, &b.s, &(struct cmp_opts){.cost = &c, .min_effect = 0.01}, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "cost (USD per million output tokens)"), "better");
    const struct rtable *tb = d.tables[0];
    size_t r = 0;
    while (strcmp(tb->cells[r * tb->ncols].text, "cost (USD per million output tokens)"))
        r++;
    /* 3.6 USD/h × 2 GPUs / (1000 tok/s × 3600 s/h) × 10⁶ = 2 USD per million tokens */
    cr_assert_float_eq(tb->cells[r * tb->ncols + 1].num, 2.0, 1e-12);
    cr_assert_float_eq(tb->cells[r * tb->ncols + 2].num, 1.0, 1e-12);
    rdoc_free(&d);
}

/* A side of n matrix rows (one case) whose p50 TTFT are ttft[i]. */
struct row_fixture {
    struct matrix_row r[MAXR];
    const struct matrix_row *p[MAXR];
    struct cmp_case c;
    struct cmp_side s;
};

static void row_side(struct row_fixture *f, const char *label, size_t n, const double *ttft, long output_tokens)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        f->r[i] = (struct matrix_row){.engine = (char *)"vllm", .case_id = (char *)"short-128-64-c4",
                                      .repeat = (long)i + 1, .input_tokens = 128, .output_tokens = output_tokens,
                                      .concurrency = 4, .request_rate = NAN, .completed = 32};
        for (int m = 0; m < MATRIX_N_METRICS; m++)
            f->r[i].metric[m] = NAN;
        f->r[i].metric[MM_P50_TTFT_MS] = ttft[i];
        f->r[i].metric[MM_OUTPUT_THROUGHPUT] = 1000;
        f->p[i] = &f->r[i];
    }
    f->c = (struct cmp_case){.target = (char *)"vllm", .id = (char *)"short-128-64-c4", .rows = f->p, .n = n};
    f->s = (struct cmp_side){.label = (char *)label, .cases = &f->c, .n_cases = 1, .of_rows = true};
}

Test(compare, matrix_rows_are_rounds)
{
    static struct row_fixture a, b;
    const double slow[] = {100, 104, 101}, fast[] = {50, 53, 51};
    row_side(&a, "a/matrix.json", 3, slow, 64);
    row_side(&b, "b/matrix.json", 3, fast, 64);
    struct rdoc d = {0};
    char err[512];
    struct cost c = {2, 1};
    cr_assert_eq(cmp_compare(&a.s, &b.s, &(struct cmp_opts){.cost = &c, .min_effect = 0.01}, &d, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "TTFT p50 (ms)"), "better");
    cr_assert_str_eq(verdict(&d, "output throughput (tok/s)"), "same");
    cr_assert_str_eq(verdict(&d, "cost (USD per million output tokens)"), "same");
    const struct rtable *t = d.tables[0];
    for (size_t r = 0; r < t->ncells / t->ncols; r++)
        cr_assert_str_neq(t->cells[r * t->ncols].text, "goodput (req/s)", "a row has no goodput");
    rdoc_free(&d);
    /* other output lengths: refused with the reason, unless forced */
    row_side(&b, "b/matrix.json", 3, fast, 256);
    struct rdoc e = {0};
    cr_assert_eq(cmp_compare(&a.s, &b.s, &plain, &e, NULL, err, sizeof err), 1);
    cr_assert(strstr(err, "output lengths differ (64 vs 256 tokens)"), "%s", err);
    rdoc_free(&e);
    char why[256];
    b.r[0].has_request_rate = true;
    b.r[0].request_rate = 2;
    cr_assert(cmp_row_workload_differs(&a.r[0], &b.r[0], why, sizeof why));
    cr_assert(strstr(why, "load modes differ (closed loop vs open loop)"), "%s", why);
}

/* Duration-mode rounds are compared on their headline (the metric
 * registry's): the window's throughput, whichever request its tokens belong
 * to, as the matrix's rows have it. Failed before: rounds whose every request
 * outlasted the window read 0 tok/s on both sides, "same". */
Test(compare, duration_rounds_compare_their_windows_throughput)
{
    static struct side_fixture a, b;
    const double t[] = {100, 100, 100}, zero[] = {0, 0, 0};
    side(&a, "A", 3, t, zero);
    side(&b, "B", 3, t, zero);
    for (size_t i = 0; i < 3; i++) {
        a.b[i].duration_mode.present = b.b[i].duration_mode.present = true;
        a.b[i].duration_mode.aggregate_tps = 400 + (double)i;
        b.b[i].duration_mode.aggregate_tps = 800 + (double)i;
    }
    struct rdoc d = {0};
    char err[512];
    struct cmp_opts o = {.min_effect = 0.01};
    struct cmp_tally tally = {0};
    cr_assert_eq(cmp_compare(&a.s, &b.s, &o, &d, &tally, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(verdict(&d, "output throughput (tok/s)"), "better");
    cr_assert_eq(cell_of(&d, "output throughput (tok/s)", 1)->num, 401);
    cr_assert_eq(cell_of(&d, "output throughput (tok/s)", 2)->num, 801);
    rdoc_free(&d);
}
