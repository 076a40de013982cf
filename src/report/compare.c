/* compare.c — two sets of rounds, metric by metric, with noise. */
#include "report/compare.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "artifact/any.h"
#include "artifact/json.h"
#include "artifact/matrix.h"
#include "core/file.h"
#include "stats/registry.h"

#define BOOTSTRAP_RESAMPLES 2000
#define BOOTSTRAP_SEED 1

/* ---- reading a side ---- */

static int add_round(struct cmp_side *s, const char *path, char *err, size_t errlen)
{
    struct benchmark *v = realloc(s->all, (s->n_all + 1) * sizeof *v);
    if (!v) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    s->all = v;
    if (benchmark_read_file(path, &s->all[s->n_all], NULL, err, errlen) != 0)
        return -1;
    s->n_all++;
    return 0;
}

/* Whether the file's schema is benchmark/v1 (a quick look: other artifacts
 * in a sweep directory are skipped, not errors). */
static bool is_benchmark_file(const char *path)
{
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text)
        return false;
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "schema");
    bool yes = cJSON_IsString(s) && !strcmp(s->valuestring, BENCHMARK_SCHEMA);
    cJSON_Delete(j);
    return yes;
}

/* Every benchmark file under dir, in name order (so rounds keep their order). */
static int walk(struct cmp_side *s, const char *dir, char *err, size_t errlen)
{
    char **paths;
    size_t n;
    if (artifact_find_json(dir, &paths, &n, err, errlen) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (is_benchmark_file(paths[i]))
            rc = add_round(s, paths[i], err, errlen);
    artifact_strings_free(paths, n);
    return rc;
}

static char *case_id_of(const struct benchmark *b)
{
    char id[160];
    return strdup(matrix_case_id(b, id, sizeof id));
}

static bool same_target(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static const char *target_of(const struct benchmark *b)
{
    return b->sweep.present && b->sweep.target && b->sweep.target[0] ? b->sweep.target : NULL;
}

static int group(struct cmp_side *s, char *err, size_t errlen)
{
    s->cases = calloc(s->n_all, sizeof *s->cases);
    if (!s->cases)
        goto oom;
    for (size_t i = 0; i < s->n_all; i++) {
        char *id = case_id_of(&s->all[i]);
        const char *target = target_of(&s->all[i]);
        if (!id)
            goto oom;
        size_t c = 0;
        while (c < s->n_cases && (strcmp(s->cases[c].id, id) || !same_target(s->cases[c].target, target)))
            c++;
        if (c == s->n_cases) {
            s->cases[c].id = id;
            s->n_cases++;
            if (target && !(s->cases[c].target = strdup(target)))
                goto oom;
        } else {
            free(id);
        }
        const struct benchmark **v = realloc(s->cases[c].rounds, (s->cases[c].n + 1) * sizeof *v);
        if (!v)
            goto oom;
        s->cases[c].rounds = v;
        v[s->cases[c].n++] = &s->all[i];
    }
    return 0;
oom:
    snprintf(err, errlen, "%s: out of memory", s->label);
    return -1;
}

/* Groups rows[0..n) into cases by engine and case id, in order of first
 * appearance (rows borrowed). */
static int group_rows(struct cmp_side *s, const struct matrix_row *rows, size_t n, char *err, size_t errlen)
{
    s->of_rows = true;
    s->cases = calloc(n ? n : 1, sizeof *s->cases);
    if (!s->cases)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        while (c < s->n_cases && (strcmp(s->cases[c].id, rows[i].case_id) ||
                                  strcmp(s->cases[c].target, rows[i].engine)))
            c++;
        if (c == s->n_cases) {
            s->n_cases++;
            if (!(s->cases[c].id = strdup(rows[i].case_id)) || !(s->cases[c].target = strdup(rows[i].engine)))
                goto oom;
        }
        const struct matrix_row **v = realloc(s->cases[c].rows, (s->cases[c].n + 1) * sizeof *v);
        if (!v)
            goto oom;
        s->cases[c].rows = v;
        v[s->cases[c].n++] = &rows[i];
    }
    return 0;
oom:
    snprintf(err, errlen, "%s: out of memory", s->label);
    return -1;
}

/* A file: a matrix (its rows are the side's rounds) or a round. */
static int read_file(struct cmp_side *s, const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    cJSON *j = cJSON_ParseWithLength(text, len);
    enum artifact_kind k = j ? artifact_kind_of(j) : AK_BENCHMARK;   /* not JSON: the reader says so */
    cJSON_Delete(j);
    int rc;
    if (k == AK_MATRIX)
        rc = matrix_read(text, len, path, &s->matrix, err, errlen) == 0 ?
             group_rows(s, s->matrix.rows, s->matrix.n_rows, err, errlen) : -1;
    else if (k == AK_BENCHMARK || k == AK_UNKNOWN)
        rc = add_round(s, path, err, errlen);
    else {
        snprintf(err, errlen, "%s: a %s cannot be compared (compare takes benchmark/v1 rounds, directories "
                 "of them, or matrices)", path, artifact_kind_name(k));
        rc = -1;
    }
    free(text);
    return rc;
}

int cmp_side_read(const char *path, struct cmp_side *out, char *err, size_t errlen)
{
    *out = (struct cmp_side){0};
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    if (!(out->label = strdup(path))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = S_ISDIR(st.st_mode) ? walk(out, path, err, errlen) : read_file(out, path, err, errlen);
    if (rc == 0 && !out->of_rows && out->n_all == 0) {
        snprintf(err, errlen, "%s: no benchmark/v1 artifact (round) under it", path);
        rc = -1;
    }
    if (rc == 0 && !out->of_rows)
        rc = group(out, err, errlen);
    if (rc != 0)
        cmp_side_free(out);
    return rc;
}

void cmp_side_free(struct cmp_side *s)
{
    for (size_t i = 0; i < s->n_all; i++)
        benchmark_free(&s->all[i]);
    free(s->all);
    for (size_t i = 0; i < s->n_cases; i++) {
        free(s->cases[i].id);
        free(s->cases[i].target);
        free(s->cases[i].rounds);
        free(s->cases[i].rows);
    }
    free(s->cases);
    free(s->label);
    matrix_free(&s->matrix);
    for (size_t i = 0; i < s->n_own_rows; i++)
        matrix_row_free(&s->own_rows[i]);
    free(s->own_rows);
    *s = (struct cmp_side){0};
}

int cmp_side_as_rows(const struct cmp_side *s, struct cmp_side *out, char *err, size_t errlen)
{
    *out = (struct cmp_side){0};
    if (!(out->label = strdup(s->label)) || !(out->own_rows = calloc(s->n_all ? s->n_all : 1, sizeof *out->own_rows))) {
        snprintf(err, errlen, "%s: out of memory", s->label);
        cmp_side_free(out);
        return -1;
    }
    char why[512];
    for (size_t i = 0; i < s->n_all; i++, out->n_own_rows++) {
        struct matrix_row *r = &out->own_rows[i];
        if (matrix_row_of(&s->all[i], NULL, r, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s: round %zu: %s", s->label, i + 1, why);
            cmp_side_free(out);
            return -1;
        }
    }
    if (group_rows(out, out->own_rows, out->n_own_rows, err, errlen) != 0) {
        cmp_side_free(out);
        return -1;
    }
    return 0;
}

/* ---- noise and verdicts ---- */

void cmp_noise_of(const double *v, size_t n, unsigned long seed, struct cmp_noise *out)
{
    *out = (struct cmp_noise){.median = NAN, .lo = NAN, .hi = NAN, .method = "no value", .n = 0};
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            x[k++] = v[i];
    if (k == 0) {
        free(x);
        return;
    }
    gsl_sort(x, 1, k);
    out->n = k;
    out->median = gsl_stats_median_from_sorted_data(x, 1, k);
    out->lo = x[0];
    out->hi = x[k - 1];
    out->method = k == 1 ? "1 round" : "min-max";
    if (k >= CMP_BOOTSTRAP_MIN_ROUNDS) {
        double *med = malloc(BOOTSTRAP_RESAMPLES * sizeof *med), *r = malloc(k * sizeof *r);
        gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
        if (med && r && g) {
            gsl_rng_set(g, seed);
            for (int b = 0; b < BOOTSTRAP_RESAMPLES; b++) {
                for (size_t i = 0; i < k; i++)
                    r[i] = x[gsl_rng_uniform_int(g, k)];
                gsl_sort(r, 1, k);
                med[b] = gsl_stats_median_from_sorted_data(r, 1, k);
            }
            gsl_sort(med, 1, BOOTSTRAP_RESAMPLES);
            out->lo = gsl_stats_quantile_from_sorted_data(med, 1, BOOTSTRAP_RESAMPLES, 0.025);
            out->hi = gsl_stats_quantile_from_sorted_data(med, 1, BOOTSTRAP_RESAMPLES, 0.975);
            out->method = "bootstrap 95% CI of the median";
        }
        if (g)
            gsl_rng_free(g);
        free(med);
        free(r);
    }
    free(x);
}

bool cmp_rounds_to_zero(double d, int prec)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", prec, d);
    return strtod(buf, NULL) == 0;
}

/* The qualifier of better and worse when a side's interval is one round. */
static const char *const one_round[][4] = {
    {"better", "better (no noise estimate for A: 1 round)", "better (no noise estimate for B: 1 round)",
     "better (no noise estimate: 1 round each)"},
    {"worse", "worse (no noise estimate for A: 1 round)", "worse (no noise estimate for B: 1 round)",
     "worse (no noise estimate: 1 round each)"},
};

/* Whether |b - a| reaches min_effect × |a| (a of 0: any b - a does). */
static bool beyond_min_effect(double a, double b, double min_effect)
{
    return a == 0 || fabs(b - a) >= min_effect * fabs(a);
}

enum cmp_word cmp_judge(const struct cmp_noise *a, const struct cmp_noise *b, bool higher_better, int prec,
                        double min_effect, const char **text)
{
    const char *t;
    enum cmp_word w = CMP_SAME;
    if (isnan(a->median) || isnan(b->median)) {
        w = CMP_NA;
        t = "n/a";
    } else if (cmp_rounds_to_zero(b->median - a->median, prec)) {
        t = "same";
    } else if (b->lo <= a->hi && a->lo <= b->hi) {
        t = "same (within noise)";
    } else if (!beyond_min_effect(a->median, b->median, min_effect)) {
        t = "same (under min effect)";
    } else {
        w = (b->median > a->median) == higher_better ? CMP_BETTER : CMP_WORSE;
        t = one_round[w == CMP_WORSE][(a->n == 1) + 2 * (b->n == 1)];
    }
    if (text)
        *text = t;
    return w;
}

/* ---- workloads ---- */

static bool same_num(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static const char *load_mode_of(const struct benchmark *b)
{
    if (b->duration_mode.present)
        return "duration";
    if (b->load_mode)
        return b->load_mode;
    return b->measurement_protocol ? b->measurement_protocol : "unknown";
}

/* A request rate as a reason prints it: "8 req/s"; NaN (null: no rate) is
 * "closed loop", or "trace replay" for a replayed trace (its times are the
 * trace's); +inf (every request at once) is "unlimited". */
static const char *rate_text(double rate, const char *load_mode, char *buf, size_t cap)
{
    if (isnan(rate))
        return load_mode && !strcmp(load_mode, "trace-replay") ? "trace replay" : "closed loop";
    if (isinf(rate))
        return "unlimited";
    snprintf(buf, cap, "%g req/s", rate);
    return buf;
}

/* Planned input tokens per request; NaN (null) are a dataset's prompts. */
static const char *tokens_text(double tokens, char *buf, size_t cap)
{
    if (!isfinite(tokens))
        return "dataset prompts";
    snprintf(buf, cap, "%.0f tokens", tokens);
    return buf;
}

/* The reasons two workloads differ, "; "-separated into why (cut to fit
 * its cap bytes); n counts what was meant to be written. */
struct reasons {
    char *why;
    size_t cap, n;
};

static void add_reason(struct reasons *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_reason(struct reasons *r, const char *fmt, ...)
{
    if (r->n)
        r->n += (size_t)snprintf(r->n < r->cap ? r->why + r->n : NULL, r->n < r->cap ? r->cap - r->n : 0, "; ");
    va_list ap;
    va_start(ap, fmt);
    r->n += (size_t)vsnprintf(r->n < r->cap ? r->why + r->n : NULL, r->n < r->cap ? r->cap - r->n : 0, fmt, ap);
    va_end(ap);
}

bool cmp_workload_differs(const struct benchmark *a, const struct benchmark *b, char *why, size_t whylen)
{
    char x[64], y[64];
    struct reasons r = {why, whylen, 0};
    why[0] = '\0';
    if (!same_num(a->context_tokens, b->context_tokens))
        add_reason(&r, "input lengths differ (%s vs %s)", tokens_text(a->context_tokens, x, sizeof x),
                   tokens_text(b->context_tokens, y, sizeof y));
    if (a->max_tokens != b->max_tokens)
        add_reason(&r, "output lengths differ (max_tokens %ld vs %ld)", a->max_tokens, b->max_tokens);
    if (strcmp(load_mode_of(a), load_mode_of(b)))
        add_reason(&r, "load modes differ (%s vs %s)", load_mode_of(a), load_mode_of(b));
    if (a->concurrency != b->concurrency)
        add_reason(&r, "concurrency differs (%ld vs %ld)", a->concurrency, b->concurrency);
    if (!same_num(a->request_rate, b->request_rate))
        add_reason(&r, "request rates differ (%s vs %s)",
                   rate_text(a->request_rate, a->load_mode, x, sizeof x),
                   rate_text(b->request_rate, b->load_mode, y, sizeof y));
    if (!same_str(a->endpoint, b->endpoint))
        add_reason(&r, "endpoints differ (%s vs %s)", a->endpoint ? a->endpoint : "unknown",
                   b->endpoint ? b->endpoint : "unknown");
    const char *da = a->workload.present ? a->workload.dataset : NULL;
    const char *db = b->workload.present ? b->workload.dataset : NULL;
    if (!same_str(da, db))
        add_reason(&r, "prompts differ (%s vs %s)", da ? da : "synthetic", db ? db : "synthetic");
    if (a->ignore_eos != b->ignore_eos)
        add_reason(&r, "ignore_eos differs (%s vs %s)", a->ignore_eos ? "on" : "off",
                   b->ignore_eos ? "on" : "off");
    return r.n > 0;
}

bool cmp_row_workload_differs(const struct matrix_row *a, const struct matrix_row *b, char *why, size_t whylen)
{
    char x[64], y[64];
    struct reasons r = {why, whylen, 0};
    why[0] = '\0';
    if (a->input_tokens != b->input_tokens)
        add_reason(&r, "input lengths differ (%ld vs %ld tokens)", a->input_tokens, b->input_tokens);
    if (a->output_tokens != b->output_tokens)
        add_reason(&r, "output lengths differ (%ld vs %ld tokens)", a->output_tokens, b->output_tokens);
    double ra = a->has_request_rate ? a->request_rate : NAN, rb = b->has_request_rate ? b->request_rate : NAN;
    if (isnan(ra) != isnan(rb))
        add_reason(&r, "load modes differ (%s vs %s)", isnan(ra) ? "closed loop" : "open loop",
                   isnan(rb) ? "closed loop" : "open loop");
    else if (!same_num(ra, rb))
        add_reason(&r, "request rates differ (%s vs %s)", rate_text(ra, NULL, x, sizeof x),
                   rate_text(rb, NULL, y, sizeof y));
    if (a->concurrency != b->concurrency)
        add_reason(&r, "concurrency differs (%ld vs %ld)", a->concurrency, b->concurrency);
    return r.n > 0;
}

/* What differs between the workloads of the first rounds of cases a and b. */
static bool case_workload_differs(const struct cmp_case *a, const struct cmp_case *b, char *why, size_t whylen)
{
    if (a->rows)
        return cmp_row_workload_differs(a->rows[0], b->rows[0], why, whylen);
    return cmp_workload_differs(a->rounds[0], b->rounds[0], why, whylen);
}

/* ---- the comparison ---- */

/* "target/case", or the case alone. */
static const char *case_name(const struct cmp_case *c, char *buf, size_t cap)
{
    if (!c->target)
        return c->id;
    snprintf(buf, cap, "%s/%s", c->target, c->id);
    return buf;
}

struct cmp_metric {
    const char *name;
    const char *metric;         /* its registry name (stats/registry.h): which way is better */
    int prec;
    double (*get)(const struct benchmark *b, const struct cost *c);
    int mm;                     /* the matrix row's metric (enum matrix_metric); -1 = rows lack it */
};

/* the mode's headline: a duration-mode round's window, as the matrix's rows have it */
static double m_out_tps(const struct benchmark *b, const struct cost *c) { (void)c; return bench_headline_tps(b, NULL); }
static double m_req_tps(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.request_throughput; }
static double m_goodput(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.goodput_rps; }
static double m_ttft50(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.ttft.p50; }
static double m_ttft99(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.ttft.p99; }
static double m_tpot50(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.tpot.p50; }
static double m_tpot99(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.tpot.p99; }
static double m_itl50(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.itl.p50; }
static double m_itl99(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.itl.p99; }
static double m_e2e50(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.e2e.p50; }
static double m_e2e99(const struct benchmark *b, const struct cost *c) { (void)c; return b->metrics.dist.e2e.p99; }
static double m_cost(const struct benchmark *b, const struct cost *c) { return cost_per_mtok(c, bench_cost_tps(b)); }

static const struct cmp_metric metrics[] = {
    {"output throughput (tok/s)", "output_throughput", 2, m_out_tps, MM_OUTPUT_THROUGHPUT},
    {"request throughput (req/s)", "request_throughput", 3, m_req_tps, MM_REQUEST_THROUGHPUT},
    {"goodput (req/s)", "goodput_rps", 3, m_goodput, -1},
    {"TTFT p50 (ms)", "ttft", 2, m_ttft50, MM_P50_TTFT_MS},
    {"TTFT p99 (ms)", "ttft", 2, m_ttft99, MM_P99_TTFT_MS},
    {"TPOT p50 (ms)", "tpot", 3, m_tpot50, MM_P50_TPOT_MS},
    {"TPOT p99 (ms)", "tpot", 3, m_tpot99, MM_P99_TPOT_MS},
    {"ITL p50 (ms)", "itl", 3, m_itl50, MM_P50_ITL_MS},
    {"ITL p99 (ms)", "itl", 3, m_itl99, MM_P99_ITL_MS},
    {"E2E p50 (ms)", "e2e", 2, m_e2e50, MM_P50_E2EL_MS},
    {"E2E p99 (ms)", "e2e", 2, m_e2e99, MM_P99_E2EL_MS},
    {"cost (USD per million output tokens)", "cost_per_mtok", 4, m_cost, MM_OUTPUT_THROUGHPUT},
};

/* Which way is better for m: the registry's (stats/registry.h). */
static bool higher_better(const struct cmp_metric *m)
{
    return metric_find(m->metric)->better == METRIC_HIGHER;
}

static void noise_of_case(const struct cmp_case *c, const struct cmp_metric *m, const struct cost *cost,
                          struct cmp_noise *out)
{
    double *v = malloc((c->n ? c->n : 1) * sizeof *v);
    if (!v) {
        *out = (struct cmp_noise){.median = NAN, .lo = NAN, .hi = NAN, .method = "out of memory", .n = 0};
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        if (!c->rows)
            v[i] = m->get(c->rounds[i], cost);
        else if (m->mm < 0)
            v[i] = NAN;
        else if (m->get == m_cost)
            v[i] = cost_per_mtok(cost, c->rows[i]->metric[m->mm]);
        else
            v[i] = c->rows[i]->metric[m->mm];
    }
    cmp_noise_of(v, c->n, BOOTSTRAP_SEED, out);
    free(v);
}

/* Display columns of s (UTF-8 continuation bytes take none). */
static size_t columns(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Adds text as a note, split at spaces into notes that print ("note: "
 * included) within width columns, continuations indented; width 0 adds it
 * whole (JSON, CSV and Markdown keep a sentence in one note). */
static void note_wrapped(struct rdoc *doc, size_t width, const char *text)
{
    const size_t room = width > 16 ? width - 6 : 0;     /* "note: " */
    bool first = true;
    while (room && columns(text) + (first ? 0 : 2) > room) {
        size_t cut = 0, col = first ? 0 : 2;
        for (size_t i = 0; text[i] && col <= room; i++) {
            if (text[i] == ' ')
                cut = i;
            col += ((unsigned char)text[i] & 0xC0) != 0x80;
        }
        if (cut == 0)
            break;              /* one word wider than the room: print it whole */
        rdoc_note(doc, "%s%.*s", first ? "" : "  ", (int)cut, text);
        text += cut + 1;
        first = false;
    }
    rdoc_note(doc, "%s%s", first ? "" : "  ", text);
}

/* The interval a side of n rounds gets, for a table's title. */
static const char *method_of_rounds(size_t n)
{
    return n >= CMP_BOOTSTRAP_MIN_ROUNDS ? "bootstrap 95% CI" : n >= 2 ? "min-max" : "none (1 round)";
}

/* The metric's name without its unit ("TTFT p50 (ms)" -> "TTFT p50"). */
static int short_name_len(const char *name)
{
    const char *u = strstr(name, " (");
    return u ? (int)(u - name) : (int)strlen(name);
}

/* "faster"/"slower" for latencies, "cheaper"/"costlier" for cost,
 * "higher"/"lower" for throughput. */
static const char *direction_word(const struct cmp_metric *m, bool better)
{
    if (m->get == m_cost)
        return better ? "cheaper" : "costlier";
    if (!higher_better(m))
        return better ? "faster" : "slower";
    return better ? "higher" : "lower";
}

/* The summary of one pair: what is better or worse and by how much. */
struct summary {
    char text[1024];
    size_t len, changed, same, na;
};

static void summary_add(struct summary *s, const struct cmp_metric *m, enum cmp_word w, const struct cmp_noise *za,
                        const struct cmp_noise *zb)
{
    if (w == CMP_SAME || w == CMP_NA) {
        *(w == CMP_SAME ? &s->same : &s->na) += 1;
        return;
    }
    double pct = za->median != 0 ? fabs(zb->median / za->median - 1) * 100 : INFINITY;
    int n = snprintf(s->text + s->len, sizeof s->text - s->len, "%s%.*f%% %s in %.*s", s->changed ? ", " : "B is ",
                     pct < 9.95 ? 1 : 0, pct, direction_word(m, w == CMP_BETTER), short_name_len(m->name), m->name);
    if (n > 0 && (size_t)n < sizeof s->text - s->len)
        s->len += (size_t)n;
    s->changed++;
}

static void summary_note(struct rdoc *doc, const struct summary *s, const char *name, size_t width)
{
    char line[2200], na[64] = "";
    if (s->na)
        snprintf(na, sizeof na, "; %zu n/a", s->na);
    if (s->changed)
        snprintf(line, sizeof line, "summary %s: %s; %zu metric%s the same%s", name, s->text, s->same,
                 s->same == 1 ? "" : "s", na);
    else
        snprintf(line, sizeof line, "summary %s: B is the same as A in all %zu metrics%s", name, s->same, na);
    note_wrapped(doc, width, line);
}

static void interval_cells(struct rtable *t, const struct cmp_noise *z, int prec)
{
    rtable_num(t, isnan(z->median) ? NAN : z->lo, prec);
    rtable_num(t, isnan(z->median) ? NAN : z->hi, prec);
    rtable_text(t, isnan(z->median) ? NULL : z->method);
}

static struct rtable *pair_table_head(struct rdoc *doc, const struct cmp_case *a, const struct cmp_case *b,
                                      bool wide)
{
    char title[1400], na[512], nb[512], noise[128];
    const char *ma = method_of_rounds(a->n), *mb = method_of_rounds(b->n);
    if (ma == mb)
        snprintf(noise, sizeof noise, "%s", ma);
    else
        snprintf(noise, sizeof noise, "A %s, B %s", ma, mb);
    snprintf(title, sizeof title, "A %s (rounds: %zu) vs B %s (rounds: %zu); noise: %s", case_name(a, na, sizeof na),
             a->n, case_name(b, nb, sizeof nb), b->n, noise);
    if (!wide)
        return rdoc_table(doc, title, 6, "metric", "A", "B", "B-A", "B/A", "verdict (B)");
    return rdoc_table(doc, title, 12, "metric", "A", "B", "B-A", "B/A", "verdict (B)", "A low", "A high", "A noise",
                      "B low", "B high", "B noise");
}

static void pair_table(struct rdoc *doc, const struct cmp_case *a, const struct cmp_case *b,
                       const struct cmp_opts *o, struct cmp_tally *tally)
{
    struct rtable *t = pair_table_head(doc, a, b, o->wide);
    struct summary sum = {.len = 0};
    bool with_cost = o->cost && isfinite(o->cost->gpu_hour_usd);
    for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++) {
        const struct cmp_metric *m = &metrics[i];
        if (m->get == m_cost && !with_cost)
            continue;
        struct cmp_noise za, zb;
        noise_of_case(a, m, o->cost, &za);
        noise_of_case(b, m, o->cost, &zb);
        if (isnan(za.median) && isnan(zb.median))
            continue;           /* neither side measured it (goodput without SLOs, ITL of seed 001) */
        const char *verdict;
        enum cmp_word w = cmp_judge(&za, &zb, higher_better(m), m->prec, o->min_effect, &verdict);
        summary_add(&sum, m, w, &za, &zb);
        size_t *count[] = {&tally->na, &tally->same, &tally->better, &tally->worse};
        (*count[w])++;
        rtable_text(t, m->name);
        rtable_num(t, za.median, m->prec);
        rtable_num(t, zb.median, m->prec);
        double delta = zb.median - za.median;
        rtable_num(t, cmp_rounds_to_zero(delta, m->prec) ? 0.0 : delta, m->prec);     /* never "-0.00" */
        rtable_num(t, za.median != 0 ? zb.median / za.median : NAN, 3);
        rtable_text(t, verdict);
        if (o->wide) {
            interval_cells(t, &za, m->prec);
            interval_cells(t, &zb, m->prec);
        }
    }
    char na[512];
    summary_note(doc, &sum, case_name(a, na, sizeof na), o->width);
}

/* Every round of c against its first: one case, one workload. */
static int case_consistent(const struct cmp_side *s, const struct cmp_case *c, char *err, size_t errlen)
{
    char why[512];
    for (size_t i = 1; i < c->n; i++)
        if (c->rows ? cmp_row_workload_differs(c->rows[0], c->rows[i], why, sizeof why)
                    : cmp_workload_differs(c->rounds[0], c->rounds[i], why, sizeof why)) {
            char name[512];
            snprintf(err, errlen, "%s: the rounds of case %s were measured under different workloads: %s",
                     s->label, case_name(c, name, sizeof name), why);
            return -1;
        }
    return 0;
}

/* Whether the side's cases name at most one target. */
static bool one_target(const struct cmp_side *s)
{
    for (size_t i = 1; i < s->n_cases; i++)
        if (!same_target(s->cases[i].target, s->cases[0].target))
            return false;
    return true;
}

/* The case of s that c pairs with: same target and id, else (by_id) the
 * same id. */
static const struct cmp_case *find_case(const struct cmp_side *s, const struct cmp_case *c, bool by_id)
{
    for (size_t i = 0; i < s->n_cases; i++)
        if (!strcmp(s->cases[i].id, c->id) && same_target(s->cases[i].target, c->target))
            return &s->cases[i];
    for (size_t i = 0; by_id && i < s->n_cases; i++)
        if (!strcmp(s->cases[i].id, c->id))
            return &s->cases[i];
    return NULL;
}

#define MAX_PAIRS 256

struct cmp_pair {
    const struct cmp_case *a, *b;
};

/* The notes that say how the tables were made. */
static void method_notes(const struct cmp_side *a, const struct cmp_side *b, const struct cmp_opts *o,
                         struct rdoc *doc)
{
    char text[1200];
    snprintf(text, sizeof text, "A = %s, B = %s; values are medians across rounds; the verdict says whether B is "
             "better or worse than A: lower is better for latencies and cost, higher for throughput and goodput",
             a->label, b->label);
    note_wrapped(doc, o->width, text);
    if (a->of_rows)
        note_wrapped(doc, o->width, "matrices: each row is a round; a row has no goodput, endpoint or prompt "
                     "source, so workloads are told apart by lengths, concurrency and rate only");
    snprintf(text, sizeof text, "noise: a side's interval is a bootstrap 95%% CI of its median with %d or more "
             "rounds (percentile interval of %d resamples, MT19937 seed %d), else the min-max of its rounds; "
             "1 round has none (the verdict says so); better or worse needs the intervals apart and |B-A| at "
             "least %g%% of A (--min-effect), else the same (within noise, or under min effect); plain same: "
             "B-A is 0 at the printed precision", CMP_BOOTSTRAP_MIN_ROUNDS, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED,
             o->min_effect * 100);
    note_wrapped(doc, o->width, text);
}

int cmp_compare(const struct cmp_side *a, const struct cmp_side *b, const struct cmp_opts *o,
                struct rdoc *doc, struct cmp_tally *tally, char *err, size_t errlen)
{
    struct cmp_tally ignored;
    if (!tally)
        tally = &ignored;
    *tally = (struct cmp_tally){0};
    if (a->of_rows != b->of_rows) {     /* rounds against a matrix: the rounds as rows */
        struct cmp_side conv;
        const struct cmp_side *rounds = a->of_rows ? b : a;
        if (cmp_side_as_rows(rounds, &conv, err, errlen) != 0)
            return -1;
        int rc = cmp_compare(a->of_rows ? a : &conv, a->of_rows ? &conv : b, o, doc, tally, err, errlen);
        cmp_side_free(&conv);
        if (rc == 0) {
            char text[1200];
            snprintf(text, sizeof text, "%s holds rounds and %s a matrix: the rounds were compared as a "
                     "matrix's rows", rounds->label, a->of_rows ? a->label : b->label);
            note_wrapped(doc, o->width, text);
        }
        return rc;
    }
    for (size_t i = 0; i < a->n_cases; i++)
        if (case_consistent(a, &a->cases[i], err, errlen))
            return -1;
    for (size_t i = 0; i < b->n_cases; i++)
        if (case_consistent(b, &b->cases[i], err, errlen))
            return -1;
    bool single = a->n_cases == 1 && b->n_cases == 1;
    bool by_id = one_target(a) && one_target(b);
    char na[512], nb[512], text[2200];
    size_t pairs = 0;
    struct cmp_pair pair[MAX_PAIRS];
    for (size_t i = 0; i < a->n_cases; i++) {
        const struct cmp_case *cb = single ? &b->cases[0] : find_case(b, &a->cases[i], by_id);
        if (cb && pairs == MAX_PAIRS) {
            snprintf(err, errlen, "more than %d cases to compare", MAX_PAIRS);
            return -1;
        }
        if (cb)
            pair[pairs++] = (struct cmp_pair){&a->cases[i], cb};
    }
    if (pairs == 0) {
        snprintf(err, errlen, "%s and %s share no case to compare (cases are matched by sweep target and "
                 "case id)", a->label, b->label);
        return 1;
    }
    char why[1024];
    for (size_t i = 0; i < pairs; i++) {
        if (!case_workload_differs(pair[i].a, pair[i].b, why, sizeof why))
            continue;
        if (!o->force) {
            snprintf(err, errlen, "refusing to compare %s with %s: %s (--force compares anyway)",
                     case_name(pair[i].a, na, sizeof na), case_name(pair[i].b, nb, sizeof nb), why);
            return 1;
        }
        snprintf(text, sizeof text, "compared despite different workloads (--force): %s vs %s: %s",
                 case_name(pair[i].a, na, sizeof na), case_name(pair[i].b, nb, sizeof nb), why);
        note_wrapped(doc, o->width, text);
    }
    for (size_t i = 0; i < pairs; i++)
        pair_table(doc, pair[i].a, pair[i].b, o, tally);
    for (size_t i = 0; !single && i < a->n_cases; i++)
        if (!find_case(b, &a->cases[i], by_id)) {
            snprintf(text, sizeof text, "case %s is only in A (%s)", case_name(&a->cases[i], na, sizeof na),
                     a->label);
            note_wrapped(doc, o->width, text);
        }
    for (size_t i = 0; !single && i < b->n_cases; i++)
        if (!find_case(a, &b->cases[i], by_id)) {
            snprintf(text, sizeof text, "case %s is only in B (%s)", case_name(&b->cases[i], nb, sizeof nb),
                     b->label);
            note_wrapped(doc, o->width, text);
        }
    method_notes(a, b, o, doc);
    return 0;
}
