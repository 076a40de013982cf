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
    double min_effect_pct;
    int fail_on;                /* enum fail_on */
    struct cost cost;
    const char *side[2];
    int n_sides;
};

enum fail_on { FAIL_NEVER, FAIL_WORSE, FAIL_DIFFERENT };
static const char *const fail_on_names[] = {"never", "worse", "different", NULL};

/* Columns the terminal table keeps to. */
#define TABLE_WIDTH 120

static const struct flag_spec flags[] = {
    {"format", NULL, FLAG_CHOICE, offsetof(struct compare_cli, format), "table|markdown|csv|json",
     "table", "how to print: aligned columns, Markdown (for a PR), CSV, or JSON {tables, notes}",
     .choices = rformat_names},
    {"force", NULL, FLAG_ON, offsetof(struct compare_cli, force), NULL, NULL,
     "compare even when the workloads differ (lengths, load mode, concurrency, rate, endpoint); "
     "the output says what differs"},
    {"min-effect", NULL, FLAG_DOUBLE, offsetof(struct compare_cli, min_effect_pct), "PCT", "1",
     "the smallest difference that counts, in percent of A: a smaller one is \"same (under min effect)\" "
     "even beyond the noise", .min = 0},
    {"fail-on", NULL, FLAG_CHOICE, offsetof(struct compare_cli, fail_on), "worse|different", "never",
     "exit 1 when any metric of any case is worse (worse), or better or worse (different): a CI gate",
     .choices = fail_on_names},
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
            "sweep's matrix.json, seed 003's shape: each row is a round). Cases are matched by their\n"
            "sweep target and case id; per metric it prints both medians, B-A, B/A and a verdict, and\n"
            "per case one summary line (\"B is 12%% faster in TTFT p50, 3.5%% lower in output\n"
            "throughput; 9 metrics the same\").\n"
            "B is better or worse only when the difference exceeds both the noise and --min-effect:\n"
            "noise is each side's interval: a bootstrap 95%% CI of the median with 5 or more rounds\n"
            "(2000 resamples, fixed seed), else the rounds' min-max; the intervals must not overlap.\n"
            "Otherwise B is \"same (within noise)\" or \"same (under min effect)\"; \"same\" alone: B-A is\n"
            "0 at the printed precision. With one round a side has no noise estimate: only the min\n"
            "effect decides, and the verdict says so. The table keeps to 120 columns; --format csv or\n"
            "json add each side's interval (low, high, method).\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 compared; 1 a --fail-on verdict (a metric worse, or better\n"
            "or worse), or the output could not be written; 2 usage error, an input is unreadable or\n"
            "invalid, or the workloads differ (without --force).\n", "-h, --help");
}

/* Whether the verdicts meet --fail-on. */
static bool fails(int fail_on, const struct cmp_tally *t)
{
    return (fail_on == FAIL_WORSE && t->worse) || (fail_on == FAIL_DIFFERENT && (t->worse || t->better));
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
    struct cmp_tally tally;
    const struct cmp_opts o = {.force = c.force, .cost = &c.cost, .min_effect = c.min_effect_pct / 100,
                               .wide = c.format == RF_CSV || c.format == RF_JSON,
                               .width = c.format == RF_TABLE ? TABLE_WIDTH : 0};
    int status = cmp_compare(&a, &b, &o, &doc, &tally, err, sizeof err) == 0 ? 0 : 2;
    if (status)
        fprintf(stderr, "anvil compare: %s\n", err);
    else if (rdoc_print(&doc, (enum rformat)c.format, stdout) != 0 || fflush(stdout) != 0) {
        fprintf(stderr, "anvil compare: out of memory or cannot write the output\n");
        status = 1;
    } else if (fails(c.fail_on, &tally)) {
        fprintf(stderr, "anvil compare: --fail-on %s: %zu metric%s worse, %zu better\n", fail_on_names[c.fail_on],
                tally.worse, tally.worse == 1 ? "" : "s", tally.better);
        status = 1;
    }
    rdoc_free(&doc);
    cmp_side_free(&a);
    cmp_side_free(&b);
    return status;
}
