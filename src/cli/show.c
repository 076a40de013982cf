/* show.c — `anvil show FILE...`: the flag table and the calls; the tables
 * come from report/show. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "artifact/any.h"
#include "cli/cli.h"
#include "cli/flags.h"
#include "report/rtable.h"
#include "report/show.h"

struct show_cli {
    int format;                 /* enum rformat */
    struct cost cost;
    const char **files;
    int n_files;
};

static const struct flag_spec flags[] = {
    {"format", NULL, FLAG_CHOICE, offsetof(struct show_cli, format), "table|markdown|csv|json",
     "table", "how to print: aligned columns, Markdown tables, CSV, or JSON {tables, notes}",
     .choices = rformat_names},
    {"gpu-hour-cost", NULL, FLAG_DOUBLE, offsetof(struct show_cli, cost.gpu_hour_usd), "USD", NULL,
     "price of one GPU-hour; adds cost per million output tokens (default: no cost)", .min = 0},
    {"gpus", NULL, FLAG_LONG, offsetof(struct show_cli, cost.gpus), "N", "1",
     "GPUs the server ran on, for --gpu-hour-cost", .min = 1, .max = 1000000},
    {0},
};

static int add_file(void *cfg, const char *arg)
{
    struct show_cli *s = cfg;
    const char **v = realloc(s->files, (size_t)(s->n_files + 1) * sizeof *v);
    if (!v)
        return -1;
    s->files = v;
    s->files[s->n_files++] = arg;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil show FILE... [flags]\n"
            "Prints artifacts as the summary their command prints: a run (benchmark/v1), a matrix,\n"
            "a load curve, a decode matrix, graph data or an SLO search (search.json); the kind is\n"
            "told from the file.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 every file shown, 1 the output could not be written, 2 usage "
            "error, or a file could not be read or is not a valid artifact (named on stderr).\n", "-h, --help");
}

int show_main(int argc, char **argv)
{
    struct show_cli s = {.cost.gpu_hour_usd = NAN};
    int rc = flags_defaults("show", flags, &s);
    if (rc == 0)
        rc = flags_parse("show", flags, &s, argc, argv, add_file, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        free(s.files);
        return 0;
    }
    if (rc == 0 && s.n_files == 0) {
        fprintf(stderr, "anvil show: no artifact given (see 'anvil show --help')\n");
        rc = -1;
    }
    if (rc != 0) {
        free(s.files);
        return 2;
    }
    struct rdoc doc = {0};
    int status = 0;
    for (int i = 0; i < s.n_files; i++) {
        struct artifact_any a;
        char err[1024];
        if (artifact_any_read(s.files[i], &a, err, sizeof err) != 0) {
            fprintf(stderr, "anvil show: %s\n", err);
            status = 2;     /* the other files are still shown */
            continue;
        }
        show_artifact(&doc, &a, &s.cost);
        artifact_any_free(&a);
    }
    if (rdoc_print(&doc, (enum rformat)s.format, stdout) != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "anvil show: out of memory or cannot write the output\n");
        status = status ? status : 1;   /* a bad input (2) stays the answer */
    }
    rdoc_free(&doc);
    free(s.files);
    return status;
}
