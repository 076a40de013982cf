/* recover.c — `anvil recover JOURNAL`: the artifact of a run that was
 * killed, rebuilt from its journal (run/run.h, run_recover). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "report/table.h"
#include "run/run.h"

struct recover_cli {
    const char *journal, *out;
    bool force;
};

#define AT(field) offsetof(struct recover_cli, field)

static const struct flag_spec flags[] = {
    {"out", NULL, FLAG_STRING, AT(out), "FILE", NULL,
     "where to write the artifact; '-' for stdout (default: where the run would have written it)"},
    {"force", NULL, FLAG_ON, AT(force), NULL, NULL, "replace an artifact that exists there"},
    {0},
};

static int journal_arg(void *cfg, const char *arg)
{
    struct recover_cli *r = cfg;
    if (r->journal) {
        fprintf(stderr, "anvil recover: one journal at a time ('%s' and '%s')\n", r->journal, arg);
        return -1;
    }
    r->journal = arg;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil recover JOURNAL [flags]\n"
            "Rebuilds the artifact of a run that did not finish (kill -9, power loss) from its\n"
            "journal, <run_id>.requests.jsonl next to where the artifact was to go: every request\n"
            "that had ended, with the summary recomputed from their raw timestamps. The artifact is\n"
            "marked incomplete.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 artifact written, 1 the journal cannot be "
            "read or the artifact cannot be written, 2 usage error.\n", "-h, --help");
}

int recover_main(int argc, char **argv)
{
    struct recover_cli r = {0};
    int rc = flags_parse("recover", flags, &r, argc, argv, journal_arg, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc == 0 && !r.journal) {
        fprintf(stderr, "anvil recover: no journal given (see 'anvil recover --help')\n");
        rc = -1;
    }
    if (rc != 0)
        return 2;
    struct run_recovery res;
    if (run_recover(r.journal, r.out, r.force, &res) != 0) {
        fprintf(stderr, "anvil recover: %s\n", res.error);
        return 1;
    }
    FILE *to = strcmp(res.artifact_path, "-") ? stdout : stderr;   /* stdout may be the artifact */
    if (res.summarized && to == stdout)
        report_table(stdout, "Serving Benchmark Result (recovered)", &res.summary, 0);
    if (res.dropped)
        fprintf(stderr, "anvil recover: %d damaged line%s skipped (cut by a kill or a full disk; first: %s)\n",
                res.dropped, res.dropped == 1 ? "" : "s", res.first_dropped);
    fprintf(to, "artifact: %s (incomplete: recovered)\n", res.artifact_path);
    return 0;
}
