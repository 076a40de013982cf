/* aggregate.c — `anvil aggregate`: round artifacts (and/or an existing
 * matrix's rows) → a matrix artifact with per-case median/min/max. */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact/json.h"
#include "artifact/matrix.h"
#include "artifact/provenance.h"
#include "cli/cli.h"
#include "cli/flags.h"
#include "core/buf.h"
#include "core/sha256.h"

struct agg_opts {
    const char *out, *from_rows;
    const char *meta_text[MATRIX_N_META];   /* flag values by matrix_meta_keys; NULL: not given */
    const char **rounds;                    /* positional arguments (owned array of argv's strings) */
    int n_rounds;
};

static void usage(FILE *out)
{
    fprintf(out,
"usage: anvil aggregate ROUND_ARTIFACT... --out FILE [flags]\n"
"       anvil aggregate --from-rows MATRIX [ROUND_ARTIFACT...] --out FILE [flags]\n"
"Builds a matrix artifact (schema anvil-serving.matrix/v1, docs/MATRIX.md) from round\n"
"artifacts written by 'anvil run' (schema anvil-serving.benchmark/v1): one row per\n"
"target x case x round, and per target x case the median, min and max of every metric\n"
"across rounds. A round's target, case and round number come from its \"sweep\" object;\n"
"without one, the target is its engine, the case run-<input>-<output>-c<concurrency>\n"
"and the round its order among the artifacts of that target and case.\n\n"
"Input and output\n"
"  --out FILE               where to write the matrix; '-' for stdout (required)\n"
"  --from-rows MATRIX       keep the rows of this matrix file (and its description\n"
"                           fields) and recompute status and aggregates from them;\n"
"                           round artifacts given as well are added as further rows\n"
"Description fields (override what the inputs tell; default: the --from-rows matrix's\n"
"value when not null, else the value every round artifact agrees on, else null)\n"
"  --model TEXT             model name (default: the rounds' model)\n"
"  --precision TEXT         weight precision, e.g. BF16 (default null)\n"
"  --hardware TEXT          hardware description (default: the rounds' gpu label)\n"
"  --context-window N       server context window, tokens (default: the rounds'\n"
"                           max_context_tokens)\n"
"  --max-running-requests N the server's limit on concurrently running requests,\n"
"                           requests (default null)\n"
"  --tensor-parallel-size N GPUs per model replica (default null)\n"
"  --scope TEXT             what was measured and excluded, in words (default: derived\n"
"                           from the rounds' endpoint)\n"
"  -h, --help               this text\n\n"
"Exit status: 0 matrix written (whatever its status: PASS or FAIL), 1 an input\n"
"could not be read or is invalid, or the output could not be written, 2 usage error.\n");
}

enum { O_OUT = 256, O_FROM_ROWS, O_META /* + index into matrix_meta_keys */ };

/* Flag names of the description fields, by matrix_meta_keys index. */
static const char *const meta_flags[MATRIX_N_META] = {
    "model", "precision", "hardware", "context-window", "max-running-requests",
    "tensor-parallel-size", "scope",
};

static const struct option long_opts[] = {
    {"out", required_argument, 0, O_OUT},
    {"from-rows", required_argument, 0, O_FROM_ROWS},
    {"model", required_argument, 0, O_META + 0},
    {"precision", required_argument, 0, O_META + 1},
    {"hardware", required_argument, 0, O_META + 2},
    {"context-window", required_argument, 0, O_META + 3},
    {"max-running-requests", required_argument, 0, O_META + 4},
    {"tensor-parallel-size", required_argument, 0, O_META + 5},
    {"scope", required_argument, 0, O_META + 6},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* The description fields that are counts rather than text. */
static bool meta_is_count(int i)
{
    return i == 3 || i == 4 || i == 5;
}

/* Handles one option. Returns 0, 1 for --help, or -1 on a usage error. */
static int parse_one(struct agg_opts *o, int c, const char *v)
{
    if (c >= O_META && c < O_META + MATRIX_N_META) {
        int i = c - O_META;
        long n;
        if (meta_is_count(i) && flag_long("aggregate", meta_flags[i], v, 1, 1L << 40, &n))
            return -1;
        o->meta_text[i] = v;
        return 0;
    }
    switch (c) {
    case O_OUT: o->out = v; return 0;
    case O_FROM_ROWS: o->from_rows = v; return 0;
    case 'h': return 1;
    default: return -1;
    }
}

/* Whether paths a and b name the same file (an existing one, by device
 * and inode; else by their text). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, "-"))
        return false;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return !strcmp(a, b);
}

/* Returns 0 to run, 1 when help was asked for, -1 on a usage error (reported). */
static int parse_args(int argc, char **argv, struct agg_opts *o)
{
    *o = (struct agg_opts){.rounds = calloc((size_t)argc, sizeof *o->rounds)};
    if (!o->rounds) {
        fprintf(stderr, "anvil aggregate: out of memory\n");
        return -1;
    }
    optind = 1;
    opterr = 0;
    int c;
    /* '-' leading the optstring keeps file arguments in place among flags */
    while ((c = getopt_long(argc, argv, "-:h", long_opts, NULL)) != -1) {
        if (c == '?' || c == ':') {
            fprintf(stderr, "anvil aggregate: %s '%s' (see 'anvil aggregate --help')\n",
                    c == '?' ? "unknown flag" : "missing value for", argv[optind - 1]);
            return -1;
        }
        if (c == 1) {
            o->rounds[o->n_rounds++] = optarg;
            continue;
        }
        int rc = parse_one(o, c, optarg);
        if (rc)
            return rc;
    }
    if (!o->out) {
        fprintf(stderr, "anvil aggregate: --out: required (the matrix file to write, or '-')\n");
        return -1;
    }
    if (o->n_rounds == 0 && !o->from_rows) {
        fprintf(stderr, "anvil aggregate: no round artifacts given (and no --from-rows MATRIX)\n");
        return -1;
    }
    for (int i = -1; i < o->n_rounds; i++) {
        const char *in = i < 0 ? o->from_rows : o->rounds[i];
        if (in && same_file(o->out, in)) {
            fprintf(stderr, "anvil aggregate: --out %s is also an input: writing the matrix would "
                    "destroy it\n", o->out);
            return -1;
        }
    }
    return 0;
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
    struct jread r;
    jread_init(&r, in->path, err, errlen);
    cJSON *json = NULL;
    int rc = read_whole(in->path, &b, err, errlen);
    if (!rc && sha256_hex(b.data, b.len, in->sha) != 0) {
        snprintf(err, errlen, "%s: SHA-256 failed (libcrypto)", in->path);
        rc = -1;
    }
    if (!rc)
        rc = jread_parse(&r, b.data, b.len, &json);
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
};

static int fail(const char *what)
{
    fprintf(stderr, "anvil aggregate: %s\n", what);
    return 1;
}

static int fail_file(const char *path, const char *what)
{
    fprintf(stderr, "anvil aggregate: %s: %s\n", path, what);
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
        return fail(err);
    w->have_matrix = true;
    w->rows = calloc(w->matrix.n_rows + (size_t)w->n, sizeof *w->rows);
    if (!w->rows)
        return fail("out of memory");
    for (; w->n_rows < w->matrix.n_rows; w->n_rows++)
        if (matrix_row_copy(&w->rows[w->n_rows], &w->matrix.rows[w->n_rows]) != 0)
            return fail("out of memory");
    w->n_matrix_rows = w->n_rows;
    for (size_t i = 0; i < w->matrix.n_status_reasons; i++)
        if (add_reason(w, w->matrix.status_reasons[i]) != 0)
            return fail("out of memory");
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
        return fail("out of memory");
    for (int i = 0; i < w->n; i++) {
        struct input *in = &w->in[i];
        if (load_input(in, err, sizeof err))
            return fail(err);
        if (check_unique(w, i, err, sizeof err))
            return fail_file(in->path, err);
        struct matrix_row row;
        if (matrix_row_of(&in->b, in->sha, &row, err, sizeof err))
            return fail_file(in->path, err);
        if (check_round_free(w, &row, err, sizeof err)) {
            matrix_row_free(&row);
            return fail_file(in->path, err);
        }
        w->rows[w->n_rows++] = row;
        char why[300], reason[1400];
        if (matrix_round_cut(&in->b, why, sizeof why)) {
            snprintf(reason, sizeof reason, "%s: %s", in->path, why);
            if (add_reason(w, reason) != 0)
                return fail("out of memory");
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
static int merge_meta(const struct agg_opts *o, const struct work *w, struct matrix_meta *meta)
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

static int write_matrix(const char *path, const cJSON *doc)
{
    char err[1200];
    if (matrix_write_file(path, doc, err, sizeof err) != 0)
        return fail(err);
    return 0;
}

static void report(const char *path, const struct matrix *m)
{
    FILE *to = strcmp(path, "-") ? stdout : stderr;   /* stdout may be the matrix itself */
    fprintf(to, "matrix: %s: %zu rows, %zu cases, status %s\n", path, m->n_rows, m->n_aggregates, m->status);
    for (size_t i = 0; i < m->n_status_reasons; i++)
        fprintf(to, "  %s\n", m->status_reasons[i]);
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

static int aggregate(const struct agg_opts *o, int argc, char **argv)
{
    struct work w = {.n = o->n_rounds};
    w.in = calloc((size_t)(w.n ? w.n : 1), sizeof *w.in);
    int rc = w.in ? 0 : fail("out of memory");
    for (int i = 0; !rc && i < w.n; i++)
        w.in[i].path = o->rounds[i];
    if (!rc && o->from_rows)
        rc = load_matrix(o->from_rows, &w);
    if (!rc)
        rc = load_rounds(&w);
    struct matrix_meta meta = {0};
    struct matrix doc = {0};
    char err[512];
    if (!rc && merge_meta(o, &w, &meta) != 0)
        rc = fail("out of memory");
    if (!rc && matrix_assemble(w.rows, w.n_rows, &meta, w.reasons, w.n_reasons, &doc, err, sizeof err) != 0)
        rc = fail_file(o->from_rows && !w.n ? o->from_rows : "cannot build the matrix", err);
    if (!rc && provenance_collect(&doc.provenance, argc, argv, false) != 0)
        rc = fail("out of memory");
    cJSON *json = rc ? NULL : matrix_to_json(&doc);
    if (!rc && !json)
        rc = fail("out of memory");
    if (!rc && !(rc = write_matrix(o->out, json)))
        report(o->out, &doc);
    cJSON_Delete(json);
    matrix_free(&doc);
    matrix_meta_free(&meta);
    work_free(&w);
    return rc;
}

int aggregate_main(int argc, char **argv)
{
    struct agg_opts o;
    int rc = parse_args(argc, argv, &o), status = 2;
    if (rc == 1) {
        usage(stdout);
        status = 0;
    } else if (rc == 0) {
        status = aggregate(&o, argc, argv);
    }
    free(o.rounds);
    return status;
}
