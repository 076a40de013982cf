/* matrix.c — building the anvil-serving.matrix/v1 artifact: rows from
 * round artifacts, numbering and ordering, aggregates across rounds,
 * status (writing and reading are in matrix_io.c). */
#include "artifact/matrix.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/any.h"

#define MATRIX_METRIC_NAME(e, key, unit) #key,
const char *const matrix_metric_names[MATRIX_N_METRICS] = {MATRIX_METRICS(MATRIX_METRIC_NAME)};

const char *const matrix_meta_keys[MATRIX_N_META] = {
    "model", "precision", "hardware", "context_window", "max_running_requests",
    "tensor_parallel_size", "scope",
};

/* ---- median, min, max ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int matrix_range_of(const double *v, size_t n, struct matrix_range *out)
{
    if (n == 0)
        return -1;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    out->min = s[0];
    out->max = s[n - 1];
    /* statistics.median / numpy.median: the middle value, or the mean of the
     * two middle ones — the form seed 003's medians were computed with */
    out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return 0;
}

/* ---- rows from round artifacts ---- */

int matrix_round_read(const cJSON *art, const char *name, struct benchmark *out, char *err,
                      size_t errlen)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(art, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, BENCHMARK_SCHEMA) != 0) {
        *out = (struct benchmark){0};
        snprintf(err, errlen, "%s%snot a round artifact: 'schema' is not \"%s\"", name ? name : "",
                 name ? ": " : "", BENCHMARK_SCHEMA);
        return -1;
    }
    return benchmark_from_json(art, name, out, err, errlen);
}

static bool whole_number(double v)
{
    return v >= 0 && v <= 9007199254740992.0 && v == floor(v);
}

/* The row's latency metrics: mean, p50, p95, p99 of TTFT, TPOT, ITL (per
 * chunk) and E2E, in matrix_metric order from MM_MEAN_TTFT_MS on. */
static void latencies_of(const struct bench_dists *d, double *metric)
{
    const struct dist *from[] = {&d->ttft, &d->tpot, &d->itl, &d->e2e};
    for (int b = 0; b < 4; b++) {
        double *m = &metric[MM_MEAN_TTFT_MS + 4 * b];
        m[0] = from[b]->mean;
        m[1] = from[b]->p50;
        m[2] = from[b]->p95;
        m[3] = from[b]->p99;
    }
}

double matrix_round_output_tps(const struct benchmark *b)
{
    const struct bench_metrics *m = &b->metrics;
    if (b->duration_mode.present && !isnan(b->duration_mode.aggregate_tps))
        return b->duration_mode.aggregate_tps;
    /* throughput_tok_s is the same figure under seed 001's name
     * (docs/METHODOLOGY.md); artifacts without the vLLM name still have it */
    return isnan(m->output_throughput) ? m->throughput_tok_s : m->output_throughput;
}

bool matrix_round_outlasted_window(const struct benchmark *b)
{
    return b->duration_mode.present && b->completed == 0 && b->duration_mode.tokens_in_window > 0;
}

const char *matrix_case_id(const struct benchmark *b, char *buf, size_t cap)
{
    if (b->sweep.present && b->sweep.case_id) {
        snprintf(buf, cap, "%s", b->sweep.case_id);
        return buf;
    }
    char ctx[32] = "dataset";
    if (!isnan(b->context_tokens))
        snprintf(ctx, sizeof ctx, "%.0f", b->context_tokens);
    int n = snprintf(buf, cap, "run-%s-%ld-c%ld", ctx, b->max_tokens, b->concurrency);
    if (!isnan(b->request_rate) && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "-r%g", b->request_rate);
    return buf;
}

int matrix_row_of(const struct benchmark *b, const char *sha256_hex, struct matrix_row *out,
                  char *err, size_t errlen)
{
    *out = (struct matrix_row){.repeat = ARTIFACT_NONE};
    if (!whole_number(b->context_tokens)) {
        snprintf(err, errlen, "'context_tokens' is not a whole number ≥ 0 (a round needs a planned prompt length)");
        return -1;
    }
    out->input_tokens = (long)b->context_tokens;
    out->output_tokens = b->max_tokens;
    out->concurrency = b->concurrency;      /* 0: open loop, no cap */
    char case_id[160];
    /* who the round measured: from `sweep` when anvil ran it inside a
     * sweep, else from the artifact's own fields */
    out->engine = strdup(b->sweep.present ? b->sweep.target : b->engine);
    out->case_id = strdup(matrix_case_id(b, case_id, sizeof case_id));
    out->repeat = b->sweep.present ? b->sweep.round : ARTIFACT_NONE;
    /* open-loop rounds: their load point (requests/s); concurrency is then the cap */
    out->has_request_rate = true;
    out->request_rate = b->request_rate;
    out->completed = b->completed;
    out->failed = b->failed;
    out->total_output_tokens = b->metrics.output_tokens;
    out->source_sha256 = sha256_hex ? strdup(sha256_hex) : NULL;
    const struct bench_metrics *m = &b->metrics;
    out->metric[MM_DURATION] = b->wall_clock_ms / 1000;
    out->metric[MM_REQUEST_THROUGHPUT] = m->request_throughput;
    out->metric[MM_OUTPUT_THROUGHPUT] = matrix_round_output_tps(b);
    out->outlasted_window = matrix_round_outlasted_window(b);
    out->metric[MM_TOTAL_TOKEN_THROUGHPUT] = m->total_token_throughput;
    latencies_of(&m->dist, out->metric);
    if (!out->engine || !out->case_id || (sha256_hex && !out->source_sha256)) {
        matrix_row_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

bool matrix_round_cut(const struct benchmark *b, char *why, size_t whylen)
{
    if (b->incomplete) {
        snprintf(why, whylen, "incomplete round (%s)", b->incomplete_reason ? b->incomplete_reason : "no reason given");
        return true;
    }
    if (b->not_sent > 0) {
        snprintf(why, whylen, "%ld requests not sent", b->not_sent);
        return true;
    }
    return false;
}

/* ---- description fields from round artifacts ---- */

/* The string get gives of every round when all are equal (and not
 * NULL), else NULL. */
static const char *common_string(const struct benchmark *const *b, size_t n, const char *(*get)(const struct benchmark *))
{
    const char *first = n ? get(b[0]) : NULL;
    for (size_t i = 1; first && i < n; i++)
        if (!get(b[i]) || strcmp(first, get(b[i])) != 0)
            return NULL;
    return first;
}

static const char *model_of(const struct benchmark *b) { return b->model; }
static const char *gpu_of(const struct benchmark *b) { return b->gpu; }
static const char *endpoint_of(const struct benchmark *b) { return b->endpoint; }

int matrix_meta_of(const struct benchmark *const *b, size_t n, struct matrix_meta *out)
{
    *out = (struct matrix_meta){.context_window = NAN, .max_running_requests = NAN,
                                .tensor_parallel_size = NAN};
    const char *model = common_string(b, n, model_of), *gpu = common_string(b, n, gpu_of);
    const char *ep = common_string(b, n, endpoint_of);
    out->model = model ? strdup(model) : NULL;
    out->hardware = gpu ? strdup(gpu) : NULL;
    double window = n ? b[0]->max_context_tokens : NAN;
    for (size_t i = 1; i < n; i++)
        if (b[i]->max_context_tokens != window)
            window = NAN;
    out->context_window = window;
    if (ep) {
        /* what anvil run's workload is, in seed 003's words */
        char scope[256];
        snprintf(scope, sizeof scope,
                 "Fixed-length synthetic text via %s; excludes warmup requests and failed requests.",
                 strcmp(ep, "chat") ? ep : "chat completions");
        out->scope = strdup(scope);
    }
    if ((model && !out->model) || (gpu && !out->hardware) || (ep && !out->scope)) {
        matrix_meta_free(out);
        return -1;
    }
    return 0;
}

/* ---- numbering and ordering rows ---- */

static bool same_case(const struct matrix_row *a, const struct matrix_row *b)
{
    return !strcmp(a->engine, b->engine) && !strcmp(a->case_id, b->case_id);
}

/* The index of the first row of v[0..n) in the same engine × case as row. */
static size_t case_index(const struct matrix_row *v, size_t n, const struct matrix_row *row)
{
    for (size_t i = 0; i < n; i++)
        if (same_case(&v[i], row))
            return i;
    return n;
}

static bool repeat_used(const struct matrix_row *v, size_t n, const struct matrix_row *row, long r)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].repeat == r && same_case(&v[i], row))
            return true;
    return false;
}

/* Gives each unnumbered row the smallest round its case does not use. */
static void number_rows(struct matrix_row *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].repeat != ARTIFACT_NONE)
            continue;
        long r = 1;
        while (repeat_used(v, n, &v[i], r))
            r++;
        v[i].repeat = r;
    }
}

/* Whether two case ids are the same but for their numbers: "rag-4k-128-c4"
 * and "rag-16k-256-c8" are load points of one workload. */
static bool same_shape(const char *a, const char *b)
{
    for (;;) {
        bool da = isdigit((unsigned char)*a), db = isdigit((unsigned char)*b);
        if (da != db)
            return false;
        if (da) {
            while (isdigit((unsigned char)*a))
                a++;
            while (isdigit((unsigned char)*b))
                b++;
            continue;
        }
        if (*a != *b)
            return false;
        if (!*a)
            return true;
        a++;
        b++;
    }
}

/* The index of the first row of v[0..n) of row's engine and case shape. */
static size_t shape_index(const struct matrix_row *v, size_t n, const struct matrix_row *row)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].engine, row->engine) && same_shape(v[i].case_id, row->case_id))
            return i;
    return n;
}

struct keyed_row {
    struct matrix_row row;
    size_t shape, group, pos;   /* first appearance of its engine × case shape, of its case; input position */
};

/* Workloads (engine × case shape) in order of appearance, then their load
 * points in numeric order (artifact_name_cmp: c1, c4, c8, c16, not c1, c16, c4,
 * c8; 4k before 16k), then rounds. */
static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed_row *x = a, *y = b;
    if (x->shape != y->shape)
        return x->shape < y->shape ? -1 : 1;
    int c = artifact_name_cmp(x->row.case_id, y->row.case_id);
    if (c)
        return c;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->row.repeat != y->row.repeat)
        return x->row.repeat < y->row.repeat ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Reorders v in place by engine, case (cmp_keyed), then repeat, and fails
 * on a repeated (engine, case_id, repeat). */
static int order_rows(struct matrix_row *v, size_t n, char *err, size_t errlen)
{
    struct keyed_row *k = malloc(n * sizeof *k);
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (struct keyed_row){v[i], shape_index(v, n, &v[i]), case_index(v, n, &v[i]), i};
    qsort(k, n, sizeof *k, cmp_keyed);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rc && i && k[i].group == k[i - 1].group && k[i].row.repeat == k[i - 1].row.repeat) {
            snprintf(err, errlen, "two rows are engine '%s', case '%s', round %ld", k[i].row.engine,
                     k[i].row.case_id, k[i].row.repeat);
            rc = -1;
        }
        v[i] = k[i].row;
    }
    free(k);
    return rc;
}

/* ---- aggregates ---- */

/* Summarizes metric m over the rounds g[0..n): median/min/max, all NaN when
 * a round lacks it. */
static int metric_range(const struct matrix_row *const *g, size_t n, int m, struct matrix_range *out)
{
    *out = (struct matrix_range){NAN, NAN, NAN};
    double *vals = malloc(n * sizeof *vals);
    if (!vals)
        return -1;
    size_t have = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(g[i]->metric[m]))
            vals[have++] = g[i]->metric[m];
    int rc = have == n ? matrix_range_of(vals, n, out) : 0;
    free(vals);
    return rc;
}

/* The aggregate of the rounds g[0..n) of one case. */
static int aggregate_case(const struct matrix_row *const *g, size_t n, struct matrix_aggregate *a,
                          char *err, size_t errlen)
{
    static const char *const same[] = {"input_tokens", "output_tokens", "concurrency"};
    *a = (struct matrix_aggregate){0};
    for (size_t i = 1; i < n; i++) {
        const long x[3] = {g[0]->input_tokens, g[0]->output_tokens, g[0]->concurrency};
        const long y[3] = {g[i]->input_tokens, g[i]->output_tokens, g[i]->concurrency};
        for (int s = 0; s < 3; s++)
            if (x[s] != y[s]) {
                snprintf(err, errlen, "engine '%s', case '%s': rounds disagree on %s (%ld, %ld)",
                         g[0]->engine, g[0]->case_id, same[s], x[s], y[s]);
                return -1;
            }
    }
    *a = (struct matrix_aggregate){
        .engine = strdup(g[0]->engine), .case_id = strdup(g[0]->case_id),
        .input_tokens = g[0]->input_tokens, .output_tokens = g[0]->output_tokens,
        .concurrency = g[0]->concurrency, .rounds = (long)n,
    };
    int rc = a->engine && a->case_id ? 0 : -1;
    for (size_t i = 0; i < n; i++)
        a->completed += g[i]->completed;
    for (int m = 0; !rc && m < MATRIX_N_METRICS; m++)
        rc = metric_range(g, n, m, &a->metric[m]);
    if (rc)
        snprintf(err, errlen, "out of memory");
    return rc;
}

void matrix_aggregates_free(struct matrix_aggregate *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(a[i].engine);
        free(a[i].case_id);
    }
    free(a);
}

int matrix_aggregates_of(const struct matrix_row *rows, size_t n, struct matrix_aggregate **out,
                         size_t *n_out, char *err, size_t errlen)
{
    *out = calloc(n ? n : 1, sizeof **out);
    const struct matrix_row **g = malloc((n ? n : 1) * sizeof *g);
    *n_out = 0;
    int rc = *out && g ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        if (case_index(rows, i, &rows[i]) < i)
            continue;   /* its case was aggregated at its first row */
        size_t k = 0;
        for (size_t j = i; j < n; j++)
            if (same_case(&rows[j], &rows[i]))
                g[k++] = &rows[j];
        rc = aggregate_case(g, k, &(*out)[*n_out], err, errlen);
        (*n_out)++;
    }
    free(g);
    if (rc) {
        matrix_aggregates_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}

/* ---- the document ---- */

static const char *count_word(long n)
{
    static const char *const words[] = {"zero", "one", "two", "three", "four", "five", "six",
                                        "seven", "eight", "nine", "ten"};
    return n >= 0 && n <= 10 ? words[n] : NULL;
}

/* n spelled out up to ten, as seed 003 does, else in digits. */
static void count_text(char *out, size_t cap, long n)
{
    if (count_word(n))
        snprintf(out, cap, "%s", count_word(n));
    else
        snprintf(out, cap, "%ld", n);
}

/* "Each metric: median and range across three rounds. ..." as in seed 003;
 * "two to three rounds" when cases have different round counts. */
static char *statistics_of(const struct matrix_aggregate *a, size_t n)
{
    long lo = n ? a[0].rounds : 0, hi = lo;
    for (size_t i = 1; i < n; i++) {
        lo = a[i].rounds < lo ? a[i].rounds : lo;
        hi = a[i].rounds > hi ? a[i].rounds : hi;
    }
    char l[32], h[32], range[80], text[256];
    count_text(l, sizeof l, lo);
    count_text(h, sizeof h, hi);
    snprintf(range, sizeof range, lo == hi ? "%s" : "%s to %s", l, h);
    snprintf(text, sizeof text, "Each metric: median and range across %s rounds. "
             "Round percentiles are not pooled percentiles.", range);
    return strdup(text);
}

/* Appends a copy of s to m's status reasons. */
static int add_reason(struct matrix *m, const char *s)
{
    char **v = realloc(m->status_reasons, (m->n_status_reasons + 1) * sizeof *v);
    if (!v)
        return -1;
    m->status_reasons = v;
    if (!(v[m->n_status_reasons] = strdup(s)))
        return -1;
    m->n_status_reasons++;
    return 0;
}

/* Failed requests or no completed request in a round make the matrix FAIL. */
static int add_row_reasons(struct matrix *m)
{
    for (size_t i = 0; i < m->n_rows; i++) {
        const struct matrix_row *r = &m->rows[i];
        char why[512];
        if (r->failed > 0)
            snprintf(why, sizeof why, "engine '%s', case '%s', round %ld: %ld of %ld requests failed",
                     r->engine, r->case_id, r->repeat, r->failed, r->failed + r->completed);
        else if (r->completed == 0 && !r->outlasted_window)    /* streams longer than the window are measured, not failed */
            snprintf(why, sizeof why, "engine '%s', case '%s', round %ld: no request completed",
                     r->engine, r->case_id, r->repeat);
        else
            continue;
        if (add_reason(m, why))
            return -1;
    }
    return 0;
}

/* Copies rows[0..n) into m->rows. */
static int copy_rows(struct matrix *m, const struct matrix_row *rows, size_t n)
{
    if (!(m->rows = calloc(n, sizeof *m->rows)))
        return -1;
    for (; m->n_rows < n; m->n_rows++)
        if (matrix_row_copy(&m->rows[m->n_rows], &rows[m->n_rows]))
            return -1;
    return 0;
}

int matrix_assemble(const struct matrix_row *rows, size_t n, const struct matrix_meta *meta,
                    char *const *reasons, size_t n_reasons, struct matrix *out, char *err,
                    size_t errlen)
{
    *out = (struct matrix){.counted_rounds = (long)n};
    if (n == 0) {
        snprintf(err, errlen, "no rows");
        return -1;
    }
    int rc = copy_rows(out, rows, n);
    if (!rc) {
        number_rows(out->rows, n);
        rc = order_rows(out->rows, n, err, errlen);
    } else {
        snprintf(err, errlen, "out of memory");
    }
    if (!rc)
        rc = matrix_aggregates_of(out->rows, n, &out->aggregates, &out->n_aggregates, err, errlen);
    bool oom = false;
    for (size_t i = 0; !rc && !oom && i < n_reasons; i++)
        oom = add_reason(out, reasons[i]) != 0;
    if (!rc && !oom) {
        oom = add_row_reasons(out) != 0;
        out->schema = strdup(MATRIX_SCHEMA);
        out->status = strdup(out->n_status_reasons ? "FAIL" : "PASS");
        out->statistics = statistics_of(out->aggregates, out->n_aggregates);
        oom = oom || !out->schema || !out->status || !out->statistics;
        if (meta)
            oom = oom || matrix_meta_copy(&out->meta, meta) != 0;
        else
            out->meta = (struct matrix_meta){.context_window = NAN, .max_running_requests = NAN,
                                             .tensor_parallel_size = NAN};
        for (size_t i = 0; i < n; i++)
            out->counted_requests += out->rows[i].completed;
    }
    if (oom && !rc) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (rc)
        matrix_free(out);
    return rc;
}

/* ---- copies and frees ---- */

static int copy_str(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

int matrix_row_copy(struct matrix_row *dst, const struct matrix_row *src)
{
    *dst = *src;
    int rc = copy_str(&dst->engine, src->engine) | copy_str(&dst->case_id, src->case_id)
             | copy_str(&dst->source_sha256, src->source_sha256);
    if (rc)
        matrix_row_free(dst);
    return rc ? -1 : 0;
}

void matrix_row_free(struct matrix_row *r)
{
    free(r->engine);
    free(r->case_id);
    free(r->source_sha256);
    r->engine = r->case_id = r->source_sha256 = NULL;
}

int matrix_meta_copy(struct matrix_meta *dst, const struct matrix_meta *src)
{
    *dst = *src;
    int rc = copy_str(&dst->model, src->model) | copy_str(&dst->precision, src->precision)
             | copy_str(&dst->hardware, src->hardware) | copy_str(&dst->scope, src->scope);
    if (rc)
        matrix_meta_free(dst);
    return rc ? -1 : 0;
}

void matrix_meta_free(struct matrix_meta *m)
{
    free(m->model);
    free(m->precision);
    free(m->hardware);
    free(m->scope);
    m->model = m->precision = m->hardware = m->scope = NULL;
}

void matrix_free(struct matrix *m)
{
    free(m->schema);
    free(m->status);
    artifact_strings_free(m->status_reasons, m->n_status_reasons);
    matrix_meta_free(&m->meta);
    free(m->statistics);
    for (size_t i = 0; i < m->n_rows; i++)
        matrix_row_free(&m->rows[i]);
    free(m->rows);
    matrix_aggregates_free(m->aggregates, m->n_aggregates);
    provenance_free(&m->provenance);
    *m = (struct matrix){0};
}
