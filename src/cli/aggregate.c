/* aggregate.c — `anvil aggregate`: its flag table, then artifact/aggregate.h
 * (the matrix), the file and the exit status. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact/aggregate.h"
#include "artifact/json.h"
#include "cli/cli.h"
#include "cli/flags.h"

struct agg_cli {
    const char *out;
    struct aggregate_opts a;
    const char *rounds[4096];
};

#define AT(field) offsetof(struct agg_cli, field)
#define META(i) offsetof(struct agg_cli, a.meta_text) + (i) * sizeof(const char *)

/* The description fields that are counts: checked, then kept as typed. */
static int set_count(void *cfg, const char *cmd, const char *flag, const char *v)
{
    static const char *const names[MATRIX_N_META] = {NULL, NULL, NULL, "context-window",
                                                     "max-running-requests", "tensor-parallel-size", NULL};
    long n;
    if (flag_long(cmd, flag, v, 1, 1L << 40, &n) != 0)
        return -1;
    for (int i = 0; i < MATRIX_N_META; i++)
        if (names[i] && !strcmp(names[i], flag))
            ((struct agg_cli *)cfg)->a.meta_text[i] = v;
    return 0;
}

static const struct flag_spec flags[] = {
    {"out", NULL, FLAG_STRING, AT(out), "FILE", NULL, "where to write the matrix; '-' for stdout (required)",
     .section = "Input and output"},
    {"from-rows", NULL, FLAG_STRING, AT(a.from_rows), "MATRIX", NULL,
     "keep the rows of this matrix file (and its description fields) and recompute status and "
     "aggregates from them; round artifacts given as well are added as further rows"},
    {"model", NULL, FLAG_STRING, META(0), "TEXT", NULL, "model name (default: the rounds' model)",
     .section = "Description fields (override what the inputs tell; default: the --from-rows matrix's "
                "value when not null, else the value every round artifact agrees on, else null)"},
    {"precision", NULL, FLAG_STRING, META(1), "TEXT", NULL, "weight precision, e.g. BF16 (default null)"},
    {"hardware", NULL, FLAG_STRING, META(2), "TEXT", NULL, "hardware description (default: the rounds' gpu label)"},
    {"context-window", NULL, FLAG_CUSTOM, 0, "N", NULL,
     "server context window, tokens (default: the rounds' max_context_tokens)", .parse = set_count},
    {"max-running-requests", NULL, FLAG_CUSTOM, 0, "N", NULL,
     "the server's limit on concurrently running requests, requests (default null)", .parse = set_count},
    {"tensor-parallel-size", NULL, FLAG_CUSTOM, 0, "N", NULL, "GPUs per model replica (default null)",
     .parse = set_count},
    {"scope", NULL, FLAG_STRING, META(6), "TEXT", NULL,
     "what was measured and excluded, in words (default: derived from the rounds' endpoint)"},
    {0},
};

static int round_arg(void *cfg, const char *arg)
{
    struct agg_cli *c = cfg;
    if (c->a.n_rounds == (int)(sizeof c->rounds / sizeof *c->rounds)) {
        fprintf(stderr, "anvil aggregate: more than %zu round artifacts\n", sizeof c->rounds / sizeof *c->rounds);
        return -1;
    }
    c->rounds[c->a.n_rounds++] = arg;
    return 0;
}

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
"(-r<rate> for an open-loop round) and the round its order among the artifacts of that\n"
"target and case.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\n"
"Exit status: 0 matrix written (whatever its status: PASS or FAIL), 1 an input\n"
"could not be read or is invalid, or the output could not be written, 2 usage error\n"
"(also: --out names one of the inputs).\n", "-h, --help");
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

/* What flags_parse cannot check alone. Returns 0 or -1 (printed). */
static int check(const struct agg_cli *c)
{
    if (!c->out) {
        fprintf(stderr, "anvil aggregate: --out: required (the matrix file to write, or '-')\n");
        return -1;
    }
    if (c->a.n_rounds == 0 && !c->a.from_rows) {
        fprintf(stderr, "anvil aggregate: no round artifacts given (and no --from-rows MATRIX)\n");
        return -1;
    }
    for (int i = -1; i < c->a.n_rounds; i++) {
        const char *in = i < 0 ? c->a.from_rows : c->rounds[i];
        if (in && same_file(c->out, in)) {
            fprintf(stderr, "anvil aggregate: --out %s is also an input: writing the matrix would "
                    "destroy it\n", c->out);
            return -1;
        }
    }
    return 0;
}

static void report(const char *path, const struct matrix *m)
{
    FILE *to = strcmp(path, "-") ? stdout : stderr;   /* stdout may be the matrix itself */
    fprintf(to, "matrix: %s: %zu rows, %zu cases, status %s\n", path, m->n_rows, m->n_aggregates, m->status);
    for (size_t i = 0; i < m->n_status_reasons; i++)
        fprintf(to, "  %s\n", m->status_reasons[i]);
}

/* Builds and writes the matrix. Returns the exit status. */
static int aggregate(const struct agg_cli *c, int argc, char **argv)
{
    struct matrix doc;
    char err[1600];
    if (aggregate_build(&c->a, argc, argv, &doc, err, sizeof err) != 0) {
        fprintf(stderr, "anvil aggregate: %s\n", err);
        return 1;
    }
    cJSON *json = matrix_to_json(&doc);
    int rc = 1;
    if (!json)
        fprintf(stderr, "anvil aggregate: out of memory\n");
    else if (matrix_write_file(c->out, json, err, sizeof err) != 0)
        fprintf(stderr, "anvil aggregate: %s\n", err);
    else
        rc = 0;
    if (!rc)
        report(c->out, &doc);
    cJSON_Delete(json);
    matrix_free(&doc);
    return rc;
}

int aggregate_main(int argc, char **argv)
{
    static struct agg_cli c;
    memset(&c, 0, sizeof c);
    c.a.rounds = c.rounds;
    int rc = flags_parse("aggregate", flags, &c, argc, argv, round_arg, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc != 0 || check(&c) != 0)
        return 2;
    return aggregate(&c, argc, argv);
}
