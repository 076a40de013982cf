/* compare.c — `anvil compare A B`: the flag table and the calls; the
 * comparison is report/compare. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "report/compare.h"
#include "report/rtable.h"

struct compare_cli {
    int format;                 /* enum rformat */
    bool force;
    struct cost cost;
    const char *side[2];
    int n_sides;
};

static const struct flag_spec flags[] = {
    {"format", NULL, FLAG_CHOICE, offsetof(struct compare_cli, format), "table|markdown|csv|json",
     "table", "how to print: aligned columns, Markdown (for a PR), CSV, or JSON {tables, notes}",
     .choices = rformat_names},
    {"force", NULL, FLAG_ON, offsetof(struct compare_cli, force), NULL, NULL,
     "compare even when the workloads differ (lengths, load mode, concurrency, rate, endpoint); "
     "the output says what differs"},
    {"gpu-hour-cost", NULL, FLAG_DOUBLE, offsetof(struct compare_cli, cost.gpu_hour_usd), "USD", NULL,
     "price of one GPU-hour; adds cost per million output tokens (default: no cost)", .min = 0},
    {"gpus", NULL, FLAG_LONG, offsetof(struct compare_cli, cost.gpus), "N", "1",
     "GPUs the server ran on, for --gpu-hour-cost", .min = 1, .max = 1000000},
    {0},
};

static int add_side(void *cfg, const char *arg)
{
    struct compare_cli *c = cfg;
    if (c->n_sides == 2)
        return -1;
    c->side[c->n_sides++] = arg;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil compare A B [flags]\n"
            "Compares two sets of rounds: each of A and B is a benchmark/v1 artifact (anvil run), a\n"
            "directory searched for them (a sweep's --out-dir, a folder of rounds), or a matrix (a\n"
            "sweep's matrix.json, seed 003's shape: each row is a round). Cases are matched\n"
            "by their sweep target and case id; per metric it prints both medians, B - A, B / A and\n"
            "whether B is better, worse, within noise (the rounds' spread: a bootstrap 95%% interval\n"
            "of the median with 3 or more rounds, else their min-max) or the same at the printed\n"
            "precision; with one round a side has no noise estimate, and the verdict says so.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 compared, 1 the output could not be written, 2 usage "
            "error, an input is unreadable or invalid, or the workloads differ (without --force).\n", "-h, --help");
}

int compare_main(int argc, char **argv)
{
    struct compare_cli c = {.cost.gpu_hour_usd = NAN};
    int rc = flags_defaults("compare", flags, &c);
    if (rc == 0)
        rc = flags_parse("compare", flags, &c, argc, argv, add_side, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc == 0 && c.n_sides != 2) {
        fprintf(stderr, "anvil compare: expected two inputs A and B (see 'anvil compare --help')\n");
        rc = -1;
    }
    if (rc != 0)
        return 2;
    struct cmp_side a, b;
    char err[2048];
    if (cmp_side_read(c.side[0], &a, err, sizeof err) != 0) {
        fprintf(stderr, "anvil compare: %s\n", err);
        return 2;
    }
    if (cmp_side_read(c.side[1], &b, err, sizeof err) != 0) {
        fprintf(stderr, "anvil compare: %s\n", err);
        cmp_side_free(&a);
        return 2;
    }
    struct rdoc doc = {0};
    int status = cmp_compare(&a, &b, c.force, &c.cost, &doc, err, sizeof err) == 0 ? 0 : 2;
    if (status)
        fprintf(stderr, "anvil compare: %s\n", err);
    else if (rdoc_print(&doc, (enum rformat)c.format, stdout) != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "anvil compare: out of memory or cannot write the output\n");
        status = 1;
    }
    rdoc_free(&doc);
    cmp_side_free(&a);
    cmp_side_free(&b);
    return status;
}
