/* report.c — `anvil report FILE|DIR... -o report.html`: the flag table and
 * the calls; the HTML is report/html. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact/any.h"
#include "artifact/json.h"
#include "core/file.h"
#include "cli/cli.h"
#include "cli/flags.h"
#include "report/html.h"

struct report_cli {
    const char *out;
    struct cost cost;
    const char **inputs;
    int n_inputs;
    bool want_out;              /* "-o" was the last argument: the next is the output */
};

static const struct flag_spec flags[] = {
    {"out", NULL, FLAG_STRING, offsetof(struct report_cli, out), "FILE", NULL,
     "the HTML file to write (also -o FILE; required)"},
    {"gpu-hour-cost", NULL, FLAG_DOUBLE, offsetof(struct report_cli, cost.gpu_hour_usd), "USD", NULL,
     "price of one GPU-hour; adds cost per million output tokens to the run cards (default: no cost)",
     .min = 0},
    {"gpus", NULL, FLAG_LONG, offsetof(struct report_cli, cost.gpus), "N", "1",
     "GPUs the server ran on, for --gpu-hour-cost", .min = 1, .max = 1000000},
    {0},
};

static int add_input(void *cfg, const char *arg)
{
    struct report_cli *r = cfg;
    if (r->want_out) {
        r->out = arg;
        r->want_out = false;
        return 0;
    }
    if (!strcmp(arg, "-o")) {
        r->want_out = true;
        return 0;
    }
    const char **v = realloc(r->inputs, (size_t)(r->n_inputs + 1) * sizeof *v);
    if (!v)
        return -1;
    r->inputs = v;
    r->inputs[r->n_inputs++] = arg;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil report FILE|DIR... -o report.html [flags]\n"
            "Writes one self-contained HTML file (no network needed to open it) for any mix of artifacts:\n"
            "runs (workload line, cards, failures by status, TTFT/TPOT/ITL/E2E CDFs and their p90-p99.9\n"
            "tails, the timeline of requests, throughput over time; several runs overlaid; two or more\n"
            "runs or matrices open with compare's verdicts against the first), load curves (SLO lines, the\n"
            "goodput knee), SLO searches (the answer and its probes), matrices and decode matrices (heat\n"
            "tables), graph data (grouped bars).\n"
            "A directory is searched for artifacts (*.json of a kind anvil reads; others are skipped).\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 written, 1 the build has no chart bundle or the file "
            "cannot be written, 2 usage error, or an input is unreadable or invalid.\n", "-h, --help");
}

/* Appends the artifact at path to *v; in a directory (quiet) files of no
 * kind anvil reads are skipped. */
static int load(const char *path, bool quiet, struct artifact_any **v, size_t *n)
{
    struct artifact_any a;
    char err[1024];
    if (artifact_any_read(path, &a, err, sizeof err) != 0) {
        if (quiet && strstr(err, "not an artifact anvil reads"))
            return 0;
        fprintf(stderr, "anvil report: %s\n", err);
        return -1;
    }
    struct artifact_any *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) {
        artifact_any_free(&a);
        fprintf(stderr, "anvil report: out of memory\n");
        return -1;
    }
    *v = nv;
    nv[(*n)++] = a;
    return 0;
}

static int load_input(const char *path, struct artifact_any **v, size_t *n)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return load(path, false, v, n);
    char **files, err[1024];
    size_t k;
    if (artifact_find_json(path, &files, &k, err, sizeof err) != 0) {
        fprintf(stderr, "anvil report: %s\n", err);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k; i++)
        rc = load(files[i], true, v, n);
    artifact_strings_free(files, k);
    return rc;
}

int report_main(int argc, char **argv)
{
    struct report_cli r = {.cost.gpu_hour_usd = NAN};
    int rc = flags_defaults("report", flags, &r);
    if (rc == 0)
        rc = flags_parse("report", flags, &r, argc, argv, add_input, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        free(r.inputs);
        return 0;
    }
    if (rc == 0 && (r.want_out || !r.out || !r.n_inputs)) {
        fprintf(stderr, "anvil report: %s (see 'anvil report --help')\n",
                r.n_inputs ? "-o FILE is required" : "no artifact or directory given");
        rc = -1;
    }
    if (rc != 0) {
        free(r.inputs);
        return 2;
    }
    if (!report_html_available()) {
        fprintf(stderr, "anvil report: this build of anvil has no chart bundle (uPlot was not in "
                "node_modules when it was built): run scripts/install-report-deps, then make\n");
        free(r.inputs);
        return 1;
    }
    struct artifact_any *arts = NULL;
    size_t n = 0;
    int status = 0;
    for (int i = 0; status == 0 && i < r.n_inputs; i++)
        status = load_input(r.inputs[i], &arts, &n) ? 2 : 0;
    if (status == 0 && n == 0) {
        fprintf(stderr, "anvil report: no artifact found in the inputs\n");
        status = 2;
    }
    char err[1024];
    /* a missing folder is made, as anvil run's --out does */
    FILE *f = status == 0 && file_mkdir_parents(r.out) == 0 ? fopen(r.out, "w") : NULL;
    if (status == 0 && !f) {
        fprintf(stderr, "anvil report: %s: cannot write: %s\n", r.out, strerror(errno));
        status = 1;
    }
    if (f) {
        if (report_html(f, arts, n, &r.cost, err, sizeof err) != 0) {
            fprintf(stderr, "anvil report: %s: %s\n", r.out, err);
            status = 1;
        }
        if (fclose(f) != 0 && status == 0) {
            fprintf(stderr, "anvil report: %s: cannot write: %s\n", r.out, strerror(errno));
            status = 1;
        }
    }
    for (size_t i = 0; i < n; i++)
        artifact_any_free(&arts[i]);
    free(arts);
    free(r.inputs);
    return status;
}
