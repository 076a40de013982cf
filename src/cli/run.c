/* run.c — `anvil run`: the flag table → a run_config → run_execute → the
 * summary on stdout and an exit code. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "cli/run_cli.h"
#include "core/stop.h"
#include "report/failures.h"
#include "report/observe.h"
#include "report/table.h"
#include "run/outcome.h"
#include "workload/trace.h"
#ifdef ANVIL_WITH_MPI
#include "mpi/run.h"
#endif

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil run [flags]\n"
            "Benchmarks one OpenAI-compatible streaming endpoint: a closed loop (exactly --concurrency\n"
            "requests in flight until --num-prompts measured requests finished; with neither\n"
            "--concurrency nor --request-rate every prompt at once, as vllm bench serve), an open\n"
            "loop with --request-rate, or a time window with --duration.\n\n");
    flags_help(out, run_flag_table());
    fprintf(out, "  %-28s this text\n\nExit status: 0 complete, with at most --max-failure-rate of "
            "the requests failed; 1 incomplete, nothing measured, or more requests failed (the artifact "
            "is still written when anything was measured); 2 usage error, or a planned prompt and output that "
            "cannot fit the server's context (refused before any request).\n", "-h, --help");
}

/* Settings the flags imply: an open loop has no cap unless one is given,
 * duration mode caps sends only loosely. */
static void settle(struct run_cli *r, const bool *seen)
{
    const struct flag_spec *t = run_flag_table();
    struct run_config *c = &r->c;
    bool trace = trace_spec_is_trace(c->workload.dataset);
    bool cap_given = seen[flags_find(t, "concurrency") - t], ramp = c->load.ramp.strategy != RAMP_NONE;
    if (!cap_given && (!isinf(c->load.request_rate) || trace || ramp))
        c->load.concurrency = 0;
    /* vllm bench serve's default: no rate and no cap send every prompt at once (sessions: every
     * session); a duration window and an --agentic file keep one stream unless told */
    long all = c->workload.agentic_sessions > 0 ? c->workload.agentic_sessions : c->load.num_prompts;
    if (!cap_given && !seen[flags_find(t, "request-rate") - t] && !trace && !ramp && c->load.duration_s <= 0 &&
        !c->workload.agentic_file && all > 1) {
        c->load.concurrency = all;
        fprintf(c->log ? c->log : stderr, "anvil run: note: no --request-rate and no --concurrency: all %ld %s at "
                "once, as vllm bench serve sends them (--concurrency 1: one at a time)\n", all,
                c->workload.agentic_sessions > 0 ? "sessions" : "prompts");
    }
    if ((trace || c->workload.agentic_file || c->workload.agentic_sessions > 0) && !seen[flags_find(t, "num-prompts") - t])
        c->load.num_prompts = 0;     /* the whole window */
    if (c->load.duration_s > 0 && !seen[flags_find(t, "num-prompts") - t])
        c->load.num_prompts = 200000;
    c->workload.output_len_set = seen[flags_find(t, "output-len") - t] || seen[flags_find(t, "sharegpt-output-len") - t] ||
                        seen[flags_find(t, "custom-output-len") - t];
    if (r->served_model_name) {
        /* vLLM requests the served name and reads its tokenizer from --model */
        if (c->transport.model && strcmp(c->transport.model, r->served_model_name))
            fprintf(c->log ? c->log : stderr, "anvil run: note: requesting --served-model-name %s, not "
                    "--model %s (vLLM reads only its tokenizer from --model)\n", r->served_model_name, c->transport.model);
        c->transport.model = r->served_model_name;
    }
    c->transport.headers = r->headers;
    c->out.progress = !r->no_progress && isatty(STDERR_FILENO);
}

/* The load settings, as vLLM's summary repeats them before its numbers,
 * as they were sent: a replayed trace goes at its recorded times, not a
 * rate; a dataset's requests ask their recorded output lengths. */
static void load_settings(FILE *to, const struct run_config *c)
{
    char rate[48] = "inf (closed loop)", burst[48] = "n/a (closed loop)", cap[32] = "none";
    if (trace_spec_is_trace(c->workload.dataset)) {
        snprintf(rate, sizeof rate, "trace times x%g", c->workload.trace_speed > 0 ? c->workload.trace_speed : 1);
        snprintf(burst, sizeof burst, "n/a (trace replay)");
    } else if (c->load.ramp.strategy != RAMP_NONE) {
        snprintf(rate, sizeof rate, "ramp %g to %g", c->load.ramp.start_rps, c->load.ramp.end_rps);
        snprintf(burst, sizeof burst, "%g%s", c->load.burstiness, c->load.burstiness == 1 ? " (Poisson)" : "");
    } else if (!isinf(c->load.request_rate)) {
        snprintf(rate, sizeof rate, "%g", c->load.request_rate);
        snprintf(burst, sizeof burst, "%g%s", c->load.burstiness, c->load.burstiness == 1 ? " (Poisson)" : "");
    }
    if (c->load.concurrency > 0)
        snprintf(cap, sizeof cap, "%ld", c->load.concurrency);
    fprintf(to, "%-44s %15s\n%-44s %15s\n%-44s %15s\n", "Traffic request rate (req/s):", rate,
            "Burstiness factor:", burst, "Max request concurrency:", cap);
    const char *ds = c->workload.dataset;
    bool recorded = ds && (!strncmp(ds, "sharegpt:", 9) || trace_spec_is_trace(ds));
    if (recorded && !c->workload.output_len_set)
        fprintf(to, "%-44s %15s\n", "Output tokens per request:", "as recorded");
}

/* Prints the summary and returns the exit status. */
static int report(const struct run_cli *r, const struct run_result *res)
{
    const struct run_config *c = &r->c;
    /* --out -: stdout is the artifact, the rest goes to stderr */
    FILE *to = strcmp(res->artifact_path, "-") ? stdout : stderr;
    if (res->summarized) {
        load_settings(to, c);
        report_table(to, "Serving Benchmark Result", &res->summary, res->warmup_failed);
        /* duration mode: charged on the window's tokens, as the sweep's table and show charge it */
        report_cost(to, &r->cost, isnan(res->summary.aggregate_tps) ? res->summary.output_throughput
                                                                    : res->summary.aggregate_tps);
        struct run_records rr;
        char err[600];
        if (run_records_open(res, &rr, err, sizeof err) == 0) {
            if (r->pct_given)
                report_percentiles(to, &r->pct, &rr.it, c->out.pct);
            report_failures(to, &rr.it);
            run_records_close(&rr);
        } else {
            fprintf(stderr, "%s: the records could not be read back: %s\n", c->name, err);
        }
        if (res->observe)
            report_observe(to, res->observe);
        if (res->cache_contaminated)
            fprintf(to, "warning: %.1f%% of prompt tokens were served from the prefix cache although "
                   "every prompt starts with a unique prefix: prefill numbers are not from a cold "
                   "cache\n", 100.0 * (double)res->summary.cached_tokens / (double)res->summary.prompt_tokens);
    }
    char why[300];
    struct outcome out = outcome_of_run(res, r->max_failure_rate);
    int status = outcome_exit_status(&out, why, sizeof why);
    if (res->status == RUN_FAILED) {
        fprintf(stderr, "anvil run: %s\n", res->error);
        return status;
    }
    fprintf(to, "artifact: %s%s\n", res->artifact_path, res->incomplete ? " (incomplete)" : "");
    if (res->log_errors)
        fprintf(stderr, "anvil run: %d lines could not be written to --requests-out %s\n",
                res->log_errors, c->out.requests_out);
    if (res->journal_lines_lost)
        fprintf(stderr, "anvil run: warning: %ld lines could not be written to the journal %s (disk full?): "
                "it is cut short, and its artifact says so (journal_lines_lost); the artifact has every "
                "request\n", res->journal_lines_lost, res->journal_path);
    if (why[0])
        fprintf(stderr, "anvil run: %s\n", why);
    return status;
}

int run_cli_parse(struct run_cli *r, int argc, char **argv, FILE *log)
{
    const struct flag_spec *t = run_flag_table();
    bool *seen = calloc(flags_count(t), sizeof *seen);
    char err[1024];
    run_config_defaults(&r->c);
    r->c.log = log;
    r->cost.gpu_hour_usd = NAN;
    int rc = seen ? flags_defaults("run", t, r) : -1;
    r->pct_given = false;       /* the defaults alone print nothing beyond the summary */
    if (rc == 0)
        rc = flags_parse("run", t, r, argc, argv, NULL, NULL, seen);
    if (rc == 0) {
        settle(r, seen);
        r->c.out.argc = argc;
        r->c.out.argv = argv;
        if (run_config_resolve(&r->c, err, sizeof err) != 0 || run_config_check(&r->c, err, sizeof err) != 0) {
            fprintf(stderr, "anvil run: %s\n", err);
            rc = -1;
        } else if (r->result_format == RESULT_VLLM && r->c.out.path && !strcmp(r->c.out.path, "-")) {
            fprintf(stderr, "anvil run: --result-format vllm writes beside the artifact file: not with --out -\n");
            rc = -1;
        }
    }
    free(seen);
    return rc;
}

void run_cli_free(struct run_cli *r)
{
    curl_slist_free_all(r->headers);
    cJSON_Delete(r->extra_body);
    r->headers = NULL;
    r->extra_body = NULL;
}

#ifdef ANVIL_WITH_MPI
/* Under mpirun: this rank's part of the run (mpi/run.h); rank 0 prints the
 * merged run's summary. Returns the exit status, as report's. */
static int run_mpi(const struct run_cli *r)
{
    struct mpi_outcome o;
    int rc = mpi_run(&r->c, &o), status;
    char why[300] = "";
    if (o.rank != 0) {
        if (o.error[0])
            fprintf(stderr, "anvil run: %s\n", o.error);
        /* its shard alone: the whole run's numbers are rank 0's to judge */
        status = outcome_exit_status(&(struct outcome){.usage = o.usage, .failed = rc != 0 || o.own == RUN_FAILED,
                                                       .incomplete = o.own == RUN_INCOMPLETE}, NULL, 0);
    } else if (!o.merged) {
        fprintf(stderr, "anvil run: %s\n", o.error);
        status = outcome_exit_status(&(struct outcome){.usage = o.usage, .failed = true}, NULL, 0);
    } else {
        const struct run_summary *s = &o.m.summary;
        FILE *to = strcmp(o.m.artifact_path, "-") ? stdout : stderr;   /* --out -: stdout is the artifact */
        if (o.m.summarized) {
            load_settings(to, &r->c);
            report_table(to, "Serving Benchmark Result (all ranks)", s, 0);
        }
        if (o.m.incomplete)
            fprintf(stderr, "anvil run: incomplete: %s\n", o.m.incomplete_reason);
        fprintf(to, "artifact: %s%s (%d ranks)\n", o.m.artifact_path, o.m.incomplete ? " (incomplete)" : "", o.size);
        struct outcome out = outcome_of_merge(0, &o.m, r->max_failure_rate);
        status = outcome_exit_status(&out, why, sizeof why);
        if (why[0])
            fprintf(stderr, "anvil run: %s\n", why);
    }
    fflush(stdout);
    fflush(stderr);
    mpi_end(&o);
    return status;
}
#endif

int run_main(int argc, char **argv)
{
    struct run_cli r = {0};
    int rc = run_cli_parse(&r, argc, argv, NULL), status = 2;
    if (rc == 1) {
        usage(stdout);
        status = 0;
    } else if (rc == 0) {
        stop_install();     /* Ctrl-C, SIGTERM, SIGHUP: stop at any step, keep what was measured */
        curl_global_init(CURL_GLOBAL_DEFAULT);
#ifdef ANVIL_WITH_MPI
        if (mpi_launched() && !r.c.shard.count) {
            if (r.result_format == RESULT_VLLM)
                fprintf(stderr, "anvil run: --result-format vllm is not written by a run over MPI ranks\n");
            status = r.result_format == RESULT_VLLM ? 2 : run_mpi(&r);
            curl_global_cleanup();
            run_cli_free(&r);
            return status;
        }
#endif
        struct run_result res;
        r.c.keep_records = r.result_format == RESULT_VLLM;    /* its peak concurrency walks them */
        run_execute(&r.c, &res);
        status = report(&r, &res);
        if (r.result_format == RESULT_VLLM && res.status != RUN_FAILED && run_write_vllm_result(&r, &res) != 0 &&
            status == 0)
            status = 1;
        run_result_free(&res);
        curl_global_cleanup();
    }
    run_cli_free(&r);
    return status;
}
