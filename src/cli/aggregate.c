/* aggregate.c — `anvil aggregate`: round artifacts (and/or an existing
 * matrix's rows) → a matrix artifact with per-case median/min/max. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/matrix.h"
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
    return 0;
}

/* ---- inputs ---- */

/* One input file: its bytes' digest and parsed JSON. */
struct input {
    const char *path;
    char sha[SHA256_HEX_LEN + 1];
    cJSON *json;
};

/* Reads path whole into b. Returns 0, or -1 with err set. */
static int read_whole(const char *path, struct buf *b, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return -1;
    }
    char chunk[65536];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (buf_append(b, chunk, n) != 0) {
            snprintf(err, errlen, "too large or out of memory");
            rc = -1;
        }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "cannot read: %s", strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* Reads, digests and parses in->path (the digest is of exactly the bytes
 * parsed). Returns 0, or -1 with err set. */
static int load_input(struct input *in, char *err, size_t errlen)
{
    struct buf b;
    buf_init(&b, (size_t)1 << 34);
    int rc = read_whole(in->path, &b, err, errlen);
    if (!rc && sha256_hex(b.data, b.len, in->sha) != 0) {
        snprintf(err, errlen, "SHA-256 failed (libcrypto)");
        rc = -1;
    }
    if (!rc && !(in->json = cJSON_ParseWithLength(b.data ? b.data : "", b.len))) {
        snprintf(err, errlen, b.len ? "not valid JSON" : "empty file");
        rc = -1;
    }
    buf_free(&b);
    return rc;
}

/* Fails when a round's bytes were already counted: given twice, or already
 * a row of the --from-rows matrix. */
static int check_unique(const struct input *in, int n, int i, const cJSON *rows, char *err,
                        size_t errlen)
{
    for (int j = 0; j < i && j < n; j++)
        if (!strcmp(in[j].sha, in[i].sha)) {
            snprintf(err, errlen, "same bytes as %s: a round would be counted twice", in[j].path);
            return -1;
        }
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "source_sha256");
        if (cJSON_IsString(s) && !strcmp(s->valuestring, in[i].sha)) {
            snprintf(err, errlen, "already a row of the --from-rows matrix (same source_sha256)");
            return -1;
        }
    }
    return 0;
}

/* ---- assembling the matrix ---- */

struct work {
    struct input *in;       /* round artifacts */
    int n;
    cJSON *matrix;          /* --from-rows document, or NULL */
    cJSON *rows, *reasons;  /* inputs to matrix_build */
};

static int fail_file(const char *path, const char *what)
{
    fprintf(stderr, "anvil aggregate: %s: %s\n", path, what);
    return 1;
}

/* Loads --from-rows: its rows and status reasons carry over. */
static int load_matrix(const char *path, struct work *w)
{
    struct input m = {.path = path};
    char err[512];
    struct buf b;
    buf_init(&b, (size_t)1 << 34);
    int rc = read_whole(path, &b, err, sizeof err);
    if (!rc && !(m.json = matrix_parse(b.data ? b.data : "", b.len, err, sizeof err)))
        rc = -1;
    buf_free(&b);
    if (rc)
        return fail_file(path, err);
    w->matrix = m.json;
    cJSON_Delete(w->rows);
    w->rows = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(m.json, "rows"), true);
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(m.json, "status_reasons"), *s;
    cJSON_ArrayForEach(s, old)
        if (cJSON_IsString(s))
            cJSON_AddItemToArray(w->reasons, cJSON_CreateString(s->valuestring));
    return 0;
}

static bool same_round(const cJSON *a, const cJSON *b)
{
    static const char *const keys[] = {"engine", "case_id", "repeat"};
    for (int i = 0; i < 3; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, keys[i]);
        if (cJSON_IsNull(x) || !cJSON_Compare(x, cJSON_GetObjectItemCaseSensitive(b, keys[i]), true))
            return false;
    }
    return true;
}

/* Fails when row (of round i) names the same target, case and round as an
 * earlier row: the matrix's rows come first, then one per earlier round. */
static int check_round_free(const struct work *w, int i, const cJSON *row, char *err, size_t errlen)
{
    int n_old = cJSON_GetArraySize(w->rows) - i, k = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, w->rows) {
        if (same_round(r, row)) {
            snprintf(err, errlen, "its sweep target, case_id and round are those of %s",
                     k < n_old ? "a row of the --from-rows matrix" : w->in[k - n_old].path);
            return -1;
        }
        k++;
    }
    return 0;
}

/* Loads every round artifact and appends its row. */
static int load_rounds(struct work *w)
{
    char err[512];
    for (int i = 0; i < w->n; i++) {
        struct input *in = &w->in[i];
        if (load_input(in, err, sizeof err) || check_unique(w->in, w->n, i, w->rows, err, sizeof err))
            return fail_file(in->path, err);
        cJSON *row = matrix_row_from_round(in->json, in->sha, err, sizeof err);
        if (!row)
            return fail_file(in->path, err);
        if (check_round_free(w, i, row, err, sizeof err)) {
            cJSON_Delete(row);
            return fail_file(in->path, err);
        }
        cJSON_AddItemToArray(w->rows, row);
        char why[300], reason[1400];
        if (matrix_round_incomplete(in->json, why, sizeof why)) {
            snprintf(reason, sizeof reason, "%s: %s", in->path, why);
            cJSON_AddItemToArray(w->reasons, cJSON_CreateString(reason));
        }
    }
    return 0;
}

/* Description fields: flags, else the matrix's non-null value, else what
 * the rounds agree on. Returns a new object (caller deletes) or NULL. */
static cJSON *merge_meta(const struct agg_opts *o, const struct work *w)
{
    const cJSON **arts = malloc((size_t)(w->n ? w->n : 1) * sizeof *arts);
    if (!arts)
        return NULL;
    for (int i = 0; i < w->n; i++)
        arts[i] = w->in[i].json;
    cJSON *meta = w->n ? matrix_meta_from_rounds(arts, (size_t)w->n) : cJSON_CreateObject();
    free(arts);
    for (int i = 0; meta && i < MATRIX_N_META; i++) {
        const char *k = matrix_meta_keys[i];
        const cJSON *old = w->matrix ? cJSON_GetObjectItemCaseSensitive(w->matrix, k) : NULL;
        cJSON *v = NULL;
        if (o->meta_text[i])
            v = meta_is_count(i) ? cJSON_CreateNumber(strtod(o->meta_text[i], NULL))
                                 : cJSON_CreateString(o->meta_text[i]);
        else if (old && !cJSON_IsNull(old))
            v = cJSON_Duplicate(old, true);
        if (!v)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(meta, k);
        cJSON_AddItemToObject(meta, k, v);
    }
    return meta;
}

static int write_matrix(const char *path, const cJSON *doc)
{
    char err[1200];
    if (matrix_write_file(path, doc, err, sizeof err) != 0) {
        fprintf(stderr, "anvil aggregate: %s\n", err);
        return 1;
    }
    return 0;
}

static void report(const char *path, const cJSON *doc)
{
    FILE *to = strcmp(path, "-") ? stdout : stderr;   /* stdout may be the matrix itself */
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(doc, "status"), *r;
    fprintf(to, "matrix: %s: %d rows, %d cases, status %s\n", path,
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "rows")),
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "aggregates")),
            status->valuestring);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "status_reasons"))
        fprintf(to, "  %s\n", r->valuestring);
}

static int aggregate(const struct agg_opts *o)
{
    struct work w = {.n = o->n_rounds, .rows = cJSON_CreateArray(), .reasons = cJSON_CreateArray()};
    w.in = calloc((size_t)(w.n ? w.n : 1), sizeof *w.in);
    int rc = w.in && w.rows && w.reasons ? 0 : fail_file("error", "out of memory");
    for (int i = 0; !rc && i < w.n; i++)
        w.in[i].path = o->rounds[i];
    if (!rc && o->from_rows)
        rc = load_matrix(o->from_rows, &w);
    if (!rc)
        rc = load_rounds(&w);
    cJSON *meta = rc ? NULL : merge_meta(o, &w), *doc = NULL;
    char err[512];
    if (!rc && !meta)
        rc = fail_file("error", "out of memory");
    if (!rc && !(doc = matrix_build(w.rows, meta, w.reasons, err, sizeof err)))
        rc = fail_file(o->from_rows && !w.n ? o->from_rows : "cannot build the matrix", err);
    if (!rc && !(rc = write_matrix(o->out, doc)))
        report(o->out, doc);
    cJSON_Delete(doc);
    cJSON_Delete(meta);
    for (int i = 0; w.in && i < w.n; i++)
        cJSON_Delete(w.in[i].json);
    free(w.in);
    cJSON_Delete(w.matrix);
    cJSON_Delete(w.rows);
    cJSON_Delete(w.reasons);
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
        status = aggregate(&o);
    }
    free(o.rounds);
    return status;
}
