/* main.c — anvil's subcommand table. Each command parses its own flags and
 * calls into libanvil; nothing else lives here. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/sim.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
    const char *summary;
};

static const struct command commands[] = {
    {"run", run_main, "benchmark one OpenAI-compatible streaming endpoint"},
    {"sim", sim_main, "serve the built-in OpenAI-compatible engine simulator"},
    {"sweep", sweep_main, "run cases × targets × rounds; write the matrix and load curve"},
    {"aggregate", aggregate_main, "build a matrix (median, min, max across rounds) from round artifacts"},
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
    return c->run(argc - 1, argv + 1);
}
