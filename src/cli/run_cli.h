/* run_cli.h — what `anvil run`'s flag table (run_flags.c) fills and its
 * command (run.c) turns into a run (private to src/cli/). */
#ifndef ANVIL_CLI_RUN_CLI_H
#define ANVIL_CLI_RUN_CLI_H

#include "report/percentiles.h"
#include "report/show.h"
#include "run/run.h"

/* The config, and what only the command line needs to build it. */
struct run_cli {
    struct run_config c;
    struct curl_slist *headers;     /* --header values; owned */
    cJSON *extra_body;              /* --extra-body; owned */
    const char *served_model_name;  /* --served-model-name: requested instead of --model */
    bool no_progress;               /* --disable-tqdm */
    double max_failure_rate;        /* --max-failure-rate: above it the run exits 1 */
    struct pct_request pct;         /* --percentile-metrics / --metric-percentiles */
    bool pct_given;
    struct cost cost;               /* --gpu-hour-cost, --gpus: the summary's cost section */
    int result_format;              /* --result-format: RESULT_ANVIL, or RESULT_VLLM (also vLLM's file) */
};

enum { RESULT_ANVIL, RESULT_VLLM };

/* --result-format vllm: writes vLLM's result JSON (artifact/vllm_result.h)
 * of the run res beside its artifact, from the artifact as written and the
 * records (percentiles at --percentile-metrics/--metric-percentiles, by
 * --percentile-method: linear is numpy's, vLLM's own). Prints where, or
 * why not. Returns 0, or -1 when it could not be written. */
int run_write_vllm_result(const struct run_cli *r, const struct run_result *res);

/* `anvil run`'s flags (argv[0] "run") → a resolved, checked config in *r:
 * the command itself and `anvil sweep`, which checks every round's flags
 * before the first round runs. Notes go to log (NULL = stderr); errors are
 * printed as "anvil run: ...". Returns 0, 1 for --help, -1 on a usage error.
 * Release with run_cli_free whatever it returned. */
int run_cli_parse(struct run_cli *r, int argc, char **argv, FILE *log);

/* Frees what r owns. */
void run_cli_free(struct run_cli *r);

#endif
