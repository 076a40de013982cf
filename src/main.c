/* main.c — anvil's subcommand table. Each command parses its own flags and
 * calls into libanvil; nothing else lives here. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/version.h"
#include "sim/sim.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
    const char *summary;
};

/* `anvil version` and `anvil --version`: one line, e.g.
 * "anvil 0.3.0-12-gabc1234 (mpi: off, nvml: dlopen)". */
static int version_main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: anvil version\n       anvil --version\n\n"
               "Prints the version anvil was built from (git describe, or the VERSION file of a\n"
               "release) and the optional components built in.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "anvil version: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    printf("anvil %s (%s)\n", anvil_version(), anvil_components());
    return 0;
}

static const struct command commands[] = {
    {"run", run_main, "benchmark one OpenAI-compatible streaming endpoint"},
    {"sim", sim_main, "serve the built-in OpenAI-compatible engine simulator"},
    {"sweep", sweep_main, "run cases × targets × rounds; write the matrix and load curve"},
    {"decode", decode_main, "the sustained-decode matrix: concurrency x context cells after a readiness gate (seed 004)"},
    {"aggregate", aggregate_main, "build a matrix (median, min, max across rounds) from round artifacts"},
    {"show", show_main, "print any artifact as its summary tables (table, markdown, csv, json)"},
    {"compare", compare_main, "compare two runs or sweeps metric by metric: delta, ratio, better, worse or the same within noise"},
    {"graph", graph_main, "graph data (charts of one metric across artifacts, with their sha256) from a plan"},
    {"metrics", metrics_main, "every metric anvil reports: name, unit, definition, modes, better, headline"},
    {"report", report_main, "one self-contained HTML report (charts) of runs, sweeps, load curves, matrices, graph data"},
    {"recover", recover_main, "rebuild a killed run's artifact from its journal"},
    {"merge", merge_main, "merge the shard artifacts of one run (run --shard I/N) into the run's artifact"},
    {"ceiling", ceiling_main, "the SSE events/s one measuring thread sustains with stamps within 1 ms (local simulator)"},
    {"version", version_main, "print the version and the optional components built in"},
};

static void usage(FILE *out)
{
    fprintf(out, "anvil — benchmark harness for LLM inference servers\n\n"
                 "usage: anvil <command> [flags]\n       anvil help <command>\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'anvil <command> --help' lists every flag with its unit and default.\n");
}

static const struct command *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version"))
        return version_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "help")) {
        if (argc < 3) { usage(stdout); return 0; }
        const struct command *c = find(argv[2]);
        if (!c) { fprintf(stderr, "anvil: unknown command '%s'\n", argv[2]); return 2; }
        char *help_argv[] = {argv[2], "--help", NULL};
        return c->run(2, help_argv);
    }
    const struct command *c = find(argv[1]);
    if (!c) {
        fprintf(stderr, "anvil: unknown command '%s' (try 'anvil --help')\n", argv[1]);
        return 2;
    }
    /* a file-size limit (ulimit -f) makes a write fail with EFBIG, which anvil reports and
     * survives with what it measured; by default SIGXFSZ would kill the process instead */
    signal(SIGXFSZ, SIG_IGN);
    return c->run(argc - 1, argv + 1);
}
