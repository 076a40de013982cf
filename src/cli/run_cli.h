/* run_cli.h — what `anvil run`'s flag table (run_flags.c) fills and its
 * command (run.c) turns into a run (private to src/cli/). */
#ifndef ANVIL_CLI_RUN_CLI_H
#define ANVIL_CLI_RUN_CLI_H

#include "run/run.h"

/* The config, and what only the command line needs to build it. */
struct run_cli {
    struct run_config c;
    struct curl_slist *headers;     /* --header values; owned */
    cJSON *extra_body;              /* --extra-body; owned */
    bool no_progress;               /* --disable-tqdm */
    double max_failure_rate;        /* --max-failure-rate: above it the run exits 1 */
};

#endif
