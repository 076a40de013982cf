/* sweep_table.c — the results table at the end of a sweep. */
#include "report/sweep_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/any.h"
#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "artifact/matrix.h"
#include "core/file.h"
#include "report/compare.h"
#include "report/show.h"

/* One load point: a target's case and its rounds. */
struct point {
    const char *target, *case_id;
    const struct benchmark **rounds;
    size_t n;
};

static double median_of(const struct point *p, double (*get)(const struct benchmark *))
{
    double *v = malloc((p->n ? p->n : 1) * sizeof *v);
    if (!v)
        return NAN;
    for (size_t i = 0; i < p->n; i++)
        v[i] = get(p->rounds[i]);
    struct cmp_noise z;
    cmp_noise_of(v, p->n, 1, &z);
    free(v);
    return z.median;
}

static double g_tps(const struct benchmark *b) { return matrix_round_output_tps(b); }
static double g_ttft50(const struct benchmark *b) { return b->metrics.dist.ttft.p50; }
static double g_ttft99(const struct benchmark *b) { return b->metrics.dist.ttft.p99; }
static double g_tpot50(const struct benchmark *b) { return b->metrics.dist.tpot.p50; }
static double g_tpot99(const struct benchmark *b) { return b->metrics.dist.tpot.p99; }
static double g_goodput(const struct benchmark *b) { return b->metrics.goodput_rps; }

static const char *target_of(const struct benchmark *b)
{
    return b->sweep.present && b->sweep.target ? b->sweep.target : b->engine;
}

static const char *case_of(const struct benchmark *b)
{
    return b->sweep.present && b->sweep.case_id ? b->sweep.case_id : "";
}

/* Groups rounds into points (target × case, in order of first appearance);
 * the points' round lists are slices of *slots (the caller frees both). */
static struct point *points_of(const struct benchmark *b, size_t n, size_t *np, const struct benchmark ***slots)
{
    struct point *p = calloc(n ? n : 1, sizeof *p);
    const struct benchmark **r = calloc(n ? n : 1, sizeof *r);
    if (!p || !r) {
        free(p);
        free(r);
        return NULL;
    }
    /* rounds of point k occupy a slice of r: count first, then fill */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && (strcmp(p[j].target, target_of(&b[i])) || strcmp(p[j].case_id, case_of(&b[i]))))
            j++;
        if (j == k)
            p[k++] = (struct point){target_of(&b[i]), case_of(&b[i]), NULL, 0};
        p[j].n++;
    }
    size_t at = 0;
    for (size_t j = 0; j < k; j++) {
        p[j].rounds = r + at;
        at += p[j].n;
        p[j].n = 0;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++)
            if (!strcmp(p[j].target, target_of(&b[i])) && !strcmp(p[j].case_id, case_of(&b[i]))) {
                p[j].rounds[p[j].n++] = &b[i];
                break;
            }
    *np = k;
    *slots = r;
    return p;
}

/* Reads every round under dir/rounds. */
static int read_rounds(const char *dir, struct benchmark **out, size_t *n, char *err, size_t errlen)
{
    char path[4096], **files;
    size_t k;
    snprintf(path, sizeof path, "%s/rounds", dir);
    *out = NULL;
    *n = 0;
    if (artifact_find_json(path, &files, &k, err, errlen) != 0)
        return -1;
    struct benchmark *b = calloc(k ? k : 1, sizeof *b);
    int rc = b ? 0 : -1;
    if (!b)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; rc == 0 && i < k; i++) {
        char why[1024];
        if (benchmark_read_file(files[i], &b[*n], NULL, why, sizeof why) == 0)
            (*n)++;         /* a missing or broken round is the matrix's reason already */
    }
    artifact_strings_free(files, k);
    *out = b;
    return rc;
}

int report_sweep_results(FILE *out, const char *dir, const char *slo, enum rformat f, char *err, size_t errlen)
{
    struct benchmark *b;
    size_t n, np = 0;
    if (read_rounds(dir, &b, &n, err, errlen) != 0)
        return -1;
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/matrix.json", dir);
    size_t len;
    char *text = file_read_all(mpath, &len);
    struct matrix m = {0};
    int rc = text ? matrix_read(text, len, mpath, &m, err, errlen) : -1;
    if (!text)
        snprintf(err, errlen, "%s: cannot read", mpath);
    free(text);
    const struct benchmark **slots = NULL;
    struct point *p = rc == 0 ? points_of(b, n, &np, &slots) : NULL;
    if (rc == 0 && !p) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    size_t missed = 0, with_slo = 0;
    long failed = 0, failed_rounds = 0;
    if (rc == 0) {
        struct rdoc doc = {0};
        struct rtable *t = rdoc_table(&doc, "Results per load point (medians across rounds)", 13, "target",
                                      "case", "load", "rounds", "completed", "failed", "out tok/s",
                                      "TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms", "TPOT p99 ms", "goodput req/s",
                                      "SLO attainment");
        for (size_t i = 0; i < np; i++) {
            long done = 0, bad = 0, good = 0;
            bool has_good = true;
            for (size_t r = 0; r < p[i].n; r++) {
                done += p[i].rounds[r]->completed;
                bad += p[i].rounds[r]->failed;
                failed_rounds += p[i].rounds[r]->failed > 0;
                has_good &= p[i].rounds[r]->good_requests >= 0;
                good += p[i].rounds[r]->good_requests;
            }
            failed += bad;
            const struct benchmark *r0 = p[i].rounds[0];
            double attain = has_good && done + bad > 0 ? (double)good / (double)(done + bad) : NAN;
            rtable_text(t, p[i].target);
            rtable_text(t, p[i].case_id);
            if (isnan(r0->request_rate))
                rtable_textf(t, "c%ld", r0->concurrency);
            else
                rtable_textf(t, "%g req/s", r0->request_rate);
            rtable_whole(t, (long)p[i].n, false);
            rtable_whole(t, done, false);
            rtable_whole(t, bad, false);
            rtable_num(t, median_of(&p[i], g_tps), 1);
            rtable_num(t, median_of(&p[i], g_ttft50), 1);
            rtable_num(t, median_of(&p[i], g_ttft99), 1);
            rtable_num(t, median_of(&p[i], g_tpot50), 2);
            rtable_num(t, median_of(&p[i], g_tpot99), 2);
            rtable_num(t, median_of(&p[i], g_goodput), 3);
            if (isnan(attain))
                rtable_text(t, NULL);
            else
                rtable_textf(t, "%.1f%%", 100 * attain);
            with_slo += !isnan(attain);
            missed += !isnan(attain) && attain < 1;
        }
        rc = rdoc_print(&doc, f, out);
        if (rc)
            snprintf(err, errlen, "out of memory or cannot write the table");
        rdoc_free(&doc);
    }
    if (rc == 0) {
        const char *status = m.status ? m.status : "n/a";
        size_t limited = 0;
        for (size_t i = 0; i < m.n_rows; i++)
            limited += m.rows[i].capacity_limited;
        if (!strcmp(status, "PASS") && limited)
            fprintf(out, "requests: PASS (no request failed; %zu duration-mode round%s capacity-limited: every "
                    "request still running when the window closed, throughput counted inside the window)\n",
                    limited, limited == 1 ? "" : "s");
        else if (!strcmp(status, "PASS"))
            fprintf(out, "requests: PASS (every request of every round completed)\n");
        else
            fprintf(out, "requests: %s (%ld failed requests in %ld rounds%s%s)\n", status, failed, failed_rounds,
                    m.n_status_reasons ? "; " : "", m.n_status_reasons ? m.status_reasons[0] : "");
        if (!slo)
            fprintf(out, "SLO: not set (--slo ttft:MS,tpot:MS to judge goodput)\n");
        else if (missed)
            fprintf(out, "SLO (%s): MISSED at %zu of %zu load points (attainment below 100%%: good requests / "
                    "completed + failed)\n", slo, missed, with_slo);
        else
            fprintf(out, "SLO (%s): MET at every load point (every request within every bound)\n", slo);
    }
    matrix_free(&m);
    free(p);
    free(slots);
    for (size_t i = 0; i < n; i++)
        benchmark_free(&b[i]);
    free(b);
    return rc;
}
