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
#include "report/results.h"

/* One load point: a target's case and its rounds. */
struct point {
    const char *target, *case_id;
    const struct benchmark **rounds;
    size_t n;
};

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

int report_sweep_results(FILE *out, const char *dir, const char *slo, const struct cost *cost, enum rformat f,
                         char *err, size_t errlen)
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
    struct results_row *rows = rc == 0 ? calloc(np ? np : 1, sizeof *rows) : NULL;
    if (rc == 0 && !rows) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        for (size_t i = 0; i < np; i++)
            results_row_of(p[i].rounds, p[i].n, &rows[i]);
        struct results_opts o = {.slo = slo, .cost = cost, .format = f, .status = m.status ? m.status : "n/a",
                                 .reason = m.n_status_reasons ? m.status_reasons[0] : NULL};
        rc = report_results(out, rows, np, &o, err, errlen);
    }
    free(rows);
    matrix_free(&m);
    free(p);
    free(slots);
    for (size_t i = 0; i < n; i++)
        benchmark_free(&b[i]);
    free(b);
    return rc;
}
