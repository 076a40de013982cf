/* percentiles.c — chosen metrics at chosen percentiles (percentiles.h). */
#include "report/percentiles.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/metrics.h"

static const char *const known[] = {"ttft", "tpot", "itl", "e2el"};

int pct_parse_metrics(const char *s, struct pct_request *p, char *err, size_t errlen)
{
    p->n_metrics = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < 4 && strcmp(t, known[k]))
            k++;
        if (k == 4 || p->n_metrics == PCT_MAX_METRICS) {
            snprintf(err, errlen, "expected a comma-separated list of ttft, tpot, itl, e2el, got '%s'", t);
            return -1;
        }
        snprintf(p->metrics[p->n_metrics++], sizeof p->metrics[0], "%s", t);
    }
    if (!p->n_metrics) {
        snprintf(err, errlen, "expected at least one of ttft, tpot, itl, e2el");
        return -1;
    }
    return 0;
}

int pct_parse_values(const char *s, struct pct_request *p, char *err, size_t errlen)
{
    p->n_pcts = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(t, &end);
        if (*end || end == t || !(v > 0 && v <= 100) || p->n_pcts == PCT_MAX_VALUES) {
            snprintf(err, errlen, "expected up to %d percentiles in (0, 100], comma separated, got '%s'",
                     PCT_MAX_VALUES, t);
            return -1;
        }
        p->pcts[p->n_pcts++] = v;
    }
    if (!p->n_pcts) {
        snprintf(err, errlen, "expected at least one percentile");
        return -1;
    }
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Appends x to *v (of *k, room for *cap). Returns 0 or -1 (memory). */
static int push(double **v, size_t *k, size_t *cap, double x)
{
    if (*k == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        double *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    (*v)[(*k)++] = x;
    return 0;
}

/* The samples of metric name over the completed records of it (one pass);
 * *k of them. NULL when memory runs out or the records could not be read. */
static double *samples(const char *name, struct rec_iter *it, size_t *k)
{
    size_t cap = 0;
    double *v = NULL;
    int rc = it->rewind(it);
    *k = 0;
    for (const struct req_record *r; rc == 0 && (r = it->next(it));) {
        if (!r->t_start || r->warmup || r->cut || r->fail != FAIL_NONE)
            continue;
        struct req_metrics m;
        metrics_derive(r, &m);
        if (!strcmp(name, "itl")) {
            for (size_t c = 1; rc == 0 && c < r->n_chunks; c++)
                rc = push(&v, k, &cap, (double)(r->chunks[c].t_ns - r->chunks[c - 1].t_ns) / 1e6);
            continue;
        }
        double x = !strcmp(name, "ttft") ? m.ttft_ms : !strcmp(name, "tpot") ? m.tpot_ms : m.e2e_ms;
        if (!isnan(x))
            rc = push(&v, k, &cap, x);
    }
    if (rc == 0 && !it->err[0] && (v || (v = malloc(sizeof *v))))
        return v;
    free(v);
    return NULL;
}

void report_percentiles(FILE *out, const struct pct_request *p, struct rec_iter *it, enum pct_method m)
{
    for (int i = 0; i < p->n_metrics; i++) {
        size_t k;
        double *v = samples(p->metrics[i], it, &k);
        if (v)
            qsort(v, k, sizeof *v, cmp);
        char upper[8];
        size_t j = 0;
        for (; p->metrics[i][j]; j++)
            upper[j] = (char)toupper((unsigned char)p->metrics[i][j]);
        upper[j] = '\0';
        for (int q = 0; q < p->n_pcts; q++) {
            char label[48];
            snprintf(label, sizeof label, "P%g %s (ms):", p->pcts[q], upper);
            if (v && k)
                fprintf(out, "%-44s %15.2f\n", label, pct_sorted(v, k, p->pcts[q], m));
            else
                fprintf(out, "%-44s %15s\n", label, "n/a");
        }
        free(v);
    }
}

int pct_summarize(const char *metric, const struct pct_request *p, struct rec_iter *it, enum pct_method m,
                  struct pct_summary *out)
{
    size_t k;
    double *v = samples(metric, it, &k);
    *out = (struct pct_summary){.mean = NAN, .median = NAN, .std = NAN};
    for (int i = 0; i < PCT_MAX_VALUES; i++)
        out->at[i] = NAN;
    if (!v)
        return -1;
    qsort(v, k, sizeof *v, cmp);
    out->n = k;
    if (k) {
        double sum = 0, sq = 0;
        for (size_t i = 0; i < k; i++)
            sum += v[i];
        out->mean = sum / (double)k;
        for (size_t i = 0; i < k; i++)
            sq += (v[i] - out->mean) * (v[i] - out->mean);
        out->std = sqrt(sq / (double)k);
        out->median = pct_sorted(v, k, 50, m);
        for (int q = 0; q < p->n_pcts; q++)
            out->at[q] = pct_sorted(v, k, p->pcts[q], m);
    }
    free(v);
    return 0;
}
