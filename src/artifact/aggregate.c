/* aggregate.c — round artifacts (and/or an existing matrix's rows) → a
 * matrix document with per-case median/min/max (aggregate.h). */
#include "artifact/aggregate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"
#include "artifact/provenance.h"
#include "core/buf.h"
#include "core/sha256.h"

/* The description fields that are counts rather than text. */
static bool meta_is_count(int i)
{
    return i == 3 || i == 4 || i == 5;
}

/* ---- inputs ---- */

/* One round artifact: its bytes' digest and what it says. */
struct input {
    const char *path;
    char sha[SHA256_HEX_LEN + 1];
    struct benchmark b;
};

/* Reads path whole into b. Returns 0, or -1 with "PATH: why" in err. */
static int read_whole(const char *path, struct buf *b, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char chunk[65536];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (buf_append(b, chunk, n) != 0) {
            snprintf(err, errlen, "%s: too large or out of memory", path);
            rc = -1;
        }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* Reads, digests and reads in->path as a round artifact (the digest is of
 * exactly the bytes read). Returns 0, or -1 with "PATH: why" in err. */
static int load_input(struct input *in, char *err, size_t errlen)
{
    struct buf b;
    buf_init(&b, (size_t)1 << 34);
    cJSON *json = NULL;
    int rc = read_whole(in->path, &b, err, errlen);
    if (!rc && sha256_hex(b.data, b.len, in->sha) != 0) {
        snprintf(err, errlen, "%s: SHA-256 failed (libcrypto)", in->path);
        rc = -1;
    }
    if (!rc && !(json = artifact_parse(b.data, b.len, in->path, err, errlen)))
        rc = -1;
    if (!rc)
        rc = matrix_round_read(json, in->path, &in->b, err, errlen);
    cJSON_Delete(json);
    buf_free(&b);
    return rc;
}

/* ---- assembling the matrix ---- */

struct work {
    struct input *in;           /* round artifacts */
    int n;
    bool have_matrix;           /* --from-rows given: */
    struct matrix matrix;       /* its document */
    struct matrix_row *rows;    /* the --from-rows matrix's rows, then one per round */
    size_t n_rows, n_matrix_rows;
    char **reasons;             /* status reasons carried over or found */
    size_t n_reasons;
    char *err;                  /* the caller's buffer: the first error */
    size_t errlen;
};

/* Records the first error of the aggregation in w's caller's buffer. */
static int fail(struct work *w, const char *what)
{
    if (!w->err[0])
        snprintf(w->err, w->errlen, "%s", what);
    return 1;
}

static int fail_file(struct work *w, const char *path, const char *what)
{
    if (!w->err[0])
        snprintf(w->err, w->errlen, "%s: %s", path, what);
    return 1;
}

static int add_reason(struct work *w, const char *s)
{
    char **v = realloc(w->reasons, (w->n_reasons + 1) * sizeof *v);
    if (!v)
        return -1;
    w->reasons = v;
    if (!(v[w->n_reasons] = strdup(s)))
        return -1;
    w->n_reasons++;
    return 0;
}

/* Fails when a round's bytes were already counted: given twice, or already
 * a row of the --from-rows matrix. */
static int check_unique(const struct work *w, int i, char *err, size_t errlen)
{
    for (int j = 0; j < i; j++)
        if (!strcmp(w->in[j].sha, w->in[i].sha)) {
            snprintf(err, errlen, "same bytes as %s: a round would be counted twice", w->in[j].path);
            return -1;
        }
    for (size_t k = 0; k < w->n_matrix_rows; k++) {
        const char *s = w->rows[k].source_sha256;
        if (s && !strcmp(s, w->in[i].sha)) {
            snprintf(err, errlen, "already a row of the --from-rows matrix (same source_sha256)");
            return -1;
        }
    }
    return 0;
}

/* Loads --from-rows: its rows, description fields and status reasons carry over. */
static int load_matrix(const char *path, struct work *w)
{
    char err[512];
    struct buf b;
    buf_init(&b, (size_t)1 << 34);
    int rc = read_whole(path, &b, err, sizeof err);
    if (!rc)
        rc = matrix_read(b.data, b.len, path, &w->matrix, err, sizeof err);
    buf_free(&b);
    if (rc)
        return fail(w, err);
    w->have_matrix = true;
    w->rows = calloc(w->matrix.n_rows + (size_t)w->n, sizeof *w->rows);
    if (!w->rows)
        return fail(w, "out of memory");
    for (; w->n_rows < w->matrix.n_rows; w->n_rows++)
        if (matrix_row_copy(&w->rows[w->n_rows], &w->matrix.rows[w->n_rows]) != 0)
            return fail(w, "out of memory");
    w->n_matrix_rows = w->n_rows;
    for (size_t i = 0; i < w->matrix.n_status_reasons; i++)
        if (add_reason(w, w->matrix.status_reasons[i]) != 0)
            return fail(w, "out of memory");
    return 0;
}

static bool same_round(const struct matrix_row *a, const struct matrix_row *b)
{
    return a->repeat != ARTIFACT_NONE && a->repeat == b->repeat && !strcmp(a->engine, b->engine)
           && !strcmp(a->case_id, b->case_id);
}

/* Fails when row (of round i) names the same target, case and round as an
 * earlier row: the matrix's rows come first, then one per earlier round. */
static int check_round_free(const struct work *w, const struct matrix_row *row, char *err, size_t errlen)
{
    for (size_t k = 0; k < w->n_rows; k++)
        if (same_round(&w->rows[k], row)) {
            snprintf(err, errlen, "its sweep target, case_id and round are those of %s",
                     k < w->n_matrix_rows ? "a row of the --from-rows matrix" : w->in[k - w->n_matrix_rows].path);
            return -1;
        }
    return 0;
}

/* Loads every round artifact and appends its row. */
static int load_rounds(struct work *w)
{
    char err[1024];
    if (!w->rows && !(w->rows = calloc((size_t)w->n + 1, sizeof *w->rows)))
        return fail(w, "out of memory");
    for (int i = 0; i < w->n; i++) {
        struct input *in = &w->in[i];
        if (load_input(in, err, sizeof err))
            return fail(w, err);
        if (check_unique(w, i, err, sizeof err))
            return fail_file(w, in->path, err);
        struct matrix_row row;
        if (matrix_row_of(&in->b, in->sha, &row, err, sizeof err))
            return fail_file(w, in->path, err);
        if (check_round_free(w, &row, err, sizeof err)) {
            matrix_row_free(&row);
            return fail_file(w, in->path, err);
        }
        w->rows[w->n_rows++] = row;
        char why[300], reason[1400];
        if (matrix_round_cut(&in->b, why, sizeof why)) {
            snprintf(reason, sizeof reason, "%s: %s", in->path, why);
            if (add_reason(w, reason) != 0)
                return fail(w, "out of memory");
        }
    }
    return 0;
}

/* Replaces *dst with a copy of v. Returns 0 or -1. */
static int set_text(char **dst, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return -1;
    free(*dst);
    *dst = c;
    return 0;
}

/* Description fields: flags, else the matrix's non-null value, else what
 * the rounds agree on. Returns 0, or -1 when memory runs out. */
static int merge_meta(const struct aggregate_opts *o, const struct work *w, struct matrix_meta *meta)
{
    const struct benchmark **b = malloc((size_t)(w->n ? w->n : 1) * sizeof *b);
    if (!b)
        return -1;
    for (int i = 0; i < w->n; i++)
        b[i] = &w->in[i].b;
    int rc = matrix_meta_of(b, (size_t)w->n, meta);
    free(b);
    const struct matrix_meta *old = w->have_matrix ? &w->matrix.meta : NULL;
    char **text[] = {&meta->model, &meta->precision, &meta->hardware, NULL, NULL, NULL, &meta->scope};
    double *count[] = {NULL, NULL, NULL, &meta->context_window, &meta->max_running_requests,
                       &meta->tensor_parallel_size, NULL};
    const char *old_text[] = {old ? old->model : NULL, old ? old->precision : NULL, old ? old->hardware : NULL,
                              NULL, NULL, NULL, old ? old->scope : NULL};
    const double old_count[] = {NAN, NAN, NAN, old ? old->context_window : NAN,
                                old ? old->max_running_requests : NAN, old ? old->tensor_parallel_size : NAN, NAN};
    for (int i = 0; !rc && i < MATRIX_N_META; i++) {
        const char *flag = o->meta_text[i];
        if (meta_is_count(i) && (flag || !isnan(old_count[i])))
            *count[i] = flag ? strtod(flag, NULL) : old_count[i];
        else if (!meta_is_count(i) && (flag || old_text[i]))
            rc = set_text(text[i], flag ? flag : old_text[i]);
    }
    return rc;
}

static void work_free(struct work *w)
{
    for (int i = 0; w->in && i < w->n; i++)
        benchmark_free(&w->in[i].b);
    free(w->in);
    matrix_free(&w->matrix);
    for (size_t i = 0; i < w->n_rows; i++)
        matrix_row_free(&w->rows[i]);
    free(w->rows);
    artifact_strings_free(w->reasons, w->n_reasons);
}

int aggregate_build(const struct aggregate_opts *o, int argc, char **argv, struct matrix *doc,
                    char *err, size_t errlen)
{
    err[0] = '\0';
    struct work w = {.n = o->n_rounds, .err = err, .errlen = errlen};
    w.in = calloc((size_t)(w.n ? w.n : 1), sizeof *w.in);
    int rc = w.in ? 0 : fail(&w, "out of memory");
    for (int i = 0; !rc && i < w.n; i++)
        w.in[i].path = o->rounds[i];
    if (!rc && o->from_rows)
        rc = load_matrix(o->from_rows, &w);
    if (!rc)
        rc = load_rounds(&w);
    struct matrix_meta meta = {0};
    char why[512];
    *doc = (struct matrix){0};
    if (!rc && merge_meta(o, &w, &meta) != 0)
        rc = fail(&w, "out of memory");
    if (!rc && matrix_assemble(w.rows, w.n_rows, &meta, w.reasons, w.n_reasons, doc, why, sizeof why) != 0)
        rc = fail_file(&w, o->from_rows && !w.n ? o->from_rows : "cannot build the matrix", why);
    if (!rc && provenance_collect(&doc->provenance, argc, argv, false) != 0)
        rc = fail(&w, "out of memory");
    matrix_meta_free(&meta);
    work_free(&w);
    if (rc)
        matrix_free(doc);
    return rc ? -1 : 0;
}

