/* sweep.c — `anvil sweep`: cases × targets × rounds, each round one
 * `anvil run`; then the matrix (and, with --slo, the load curve). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "artifact/load_curve.h"
#include "artifact/matrix.h"
#include "artifact/provenance.h"
#include "cli/cli.h"
#include "cli/flags.h"
#include "cli/run_cli.h"
#include "openai/discover.h"
#include "core/clock.h"
#include "core/dirlock.h"
#include "core/stop.h"
#include "core/file.h"
#include "report/sweep_table.h"
#include "run/outcome.h"
#include "stats/summary.h"
#include "sweep/cases.h"
#include "sweep/guard.h"
#include "sweep/plan.h"
#include "sweep/report.h"
#include "sweep/runner.h"
#include "sweep/search_run.h"
#include "core/yamljson.h"
#include "net/url.h"

#define MAX_LIST 64
#define MAX_TARGETS 16

struct sweep_opts {
    const char *base_url, *targets, *out_dir, *resume, *plan_file, *slo;
    const char *conc_list, *rate_list, *in_list, *out_list;
    const char *launcher;   /* --launcher: put before every round's anvil run (mpirun, srun) */
    long rounds, num_prompts;
    bool force;             /* replace an earlier sweep in --out-dir */
    struct cost cost;       /* --gpu-hour-cost, --gpus: the end table's cost column */
    char **run_args;        /* after "--": passed to every anvil run (points into argv) */
    const char *search;     /* --search concurrency|request-rate */
    double attainment, tolerance;       /* --slo-attainment, --search-tolerance */
    long repeats, max_probes;           /* --search-repeats, --search-max-probes */
    struct sweep_search search_cfg;     /* from the flags above (on when --search) */
    char search_lo[64];     /* the one load point of a search's first plan: LO */
};

#define AT(field) offsetof(struct sweep_opts, field)

static const struct flag_spec flags[] = {
    {"base-url", NULL, FLAG_STRING, AT(base_url), "URL", "http://127.0.0.1:8000/v1", "one target",
     .section = "Targets"},
    {"targets", NULL, FLAG_STRING, AT(targets), "L=URL,...", NULL,
     "several labelled targets, e.g. sglang=http://h1:30000/v1 (labels unique)"},
    {"concurrency", NULL, FLAG_STRING, AT(conc_list), "LIST", NULL,
     "closed-loop load points, e.g. 1,4,8,16,32 (default 1)", .section = "Cases (the cross product of the lists)"},
    {"request-rate", NULL, FLAG_STRING, AT(rate_list), "LIST", NULL,
     "open-loop load points in requests/s, e.g. 1,2,4,8 (instead of --concurrency)"},
    {"input-len", NULL, FLAG_STRING, AT(in_list), "LIST", "128", "prompt tokens, e.g. 0,128,4096 (0 = a minimal prompt)"},
    {"output-len", NULL, FLAG_STRING, AT(out_list), "LIST", "64", "max_tokens, e.g. 64"},
    {"plan", NULL, FLAG_STRING, AT(plan_file), "FILE", NULL,
     "a JSON or YAML plan instead: {\"cases\": [{\"input_len\": N, \"output_len\": N, \"concurrency\": N "
     "| \"request_rate\": R, \"name\": ID, any anvil run flag as a key (\"endpoint\": \"completions\", "
     "\"warmup\": 2, ...), \"args\": [flags]}], \"rounds\": N, \"num_prompts\": N}"},
    {"rounds", NULL, FLAG_LONG, AT(rounds), "N", "3", "repeats of every case", .section = "Rounds",
     .min = 1, .max = 1000},
    {"num-prompts", NULL, FLAG_LONG, AT(num_prompts), "N", "32", "measured requests per round",
     .min = 1, .max = 100000000},
    {"slo", NULL, FLAG_STRING, AT(slo), "ttft:MS,tpot:MS", NULL,
     "SLOs (ms): goodput per round and the load-curve artifact"},
    {"out-dir", NULL, FLAG_STRING, AT(out_dir), "DIR", NULL,
     "where rounds, logs and results go (default results/sweep-<time>)", .section = "Output"},
    {"resume", NULL, FLAG_STRING, AT(resume), "DIR", NULL,
     "continue a cut sweep: runs only the rounds not yet complete"},
    {"force", NULL, FLAG_ON, AT(force), NULL, NULL,
     "replace an earlier sweep in --out-dir (its files are moved to DIR/replaced-<time>)"},
    {"gpu-hour-cost", NULL, FLAG_DOUBLE, AT(cost.gpu_hour_usd), "USD", NULL,
     "price of one GPU-hour: the results table gets cost per million output tokens", .min = 0},
    {"gpus", NULL, FLAG_LONG, AT(cost.gpus), "N", "1", "GPUs each target ran on, for --gpu-hour-cost",
     .min = 1, .max = 1000000},
    {"search", NULL, FLAG_STRING, AT(search), "concurrency|request-rate", NULL,
     "find the largest load whose SLO attainment is at least --slo-attainment, within --concurrency "
     "LO..HI or --request-rate LO..HI: doubling from LO, then bisecting; needs --slo; the answer goes "
     "to DIR/search.json (docs/METHODOLOGY.md, \"SLO search\")", .section = "SLO search"},
    {"slo-attainment", NULL, FLAG_DOUBLE, AT(attainment), "A", "0.99",
     "share of a probe's requests that must meet every SLO", .min = 0},
    {"search-repeats", NULL, FLAG_LONG, AT(repeats), "N", "2",
     "extra rounds for a probe whose 95 % interval of attainment holds A", .min = 0, .max = 100},
    {"search-tolerance", NULL, FLAG_DOUBLE, AT(tolerance), "SHARE", "0.05",
     "request rate: stop when (fail − pass)/pass is at most this (≥ 0.01)", .min = 0},
    {"search-max-probes", NULL, FLAG_LONG, AT(max_probes), "N", "20", "load points one target's search may take",
     .min = 1, .max = 1000},
    {"launcher", NULL, FLAG_STRING, AT(launcher), "'CMD ARGS'", NULL,
     "start every round through this command, e.g. 'mpirun -np 4 --hostfile hosts' or 'srun -N 4': "
     "each round is then one run over the ranks, merged into the round's artifact (docs/SCALEOUT.md)",
     .section = "Scale-out"},
    {0},
};

static void usage(FILE *out)
{
    fprintf(out,
"usage: anvil sweep [flags] [-- anvil-run-flags...]\n"
"Runs every case against every target, --rounds times, rounds interleaved across\n"
"cases so drift hits all alike; each round is one `anvil run` with its own\n"
"artifact. Writes DIR/matrix.json (median, min, max across rounds) and, with\n"
"--slo, DIR/load-curve.json. With --search, the rounds are the probes of an SLO\n"
"search and DIR/search.json holds the answer.\n\n");
    flags_help(out, flags);
    fprintf(out,
"  %-28s everything after -- goes to every anvil run (e.g. --endpoint\n"
"  %-28s completions --warmup 2)\n"
"  %-28s this text\n\n"
"Before the first round every round's flags are parsed as anvil run parses them and every\n"
"target is asked GET {base}/models: a bad flag, an unknown plan key or a target that does\n"
"not answer stops the sweep at once. Header values given with --header (after -- or as a\n"
"plan's \"header\" key) are never written to the plan: it keeps --header-env NAME=VAR, and\n"
"--resume reads VAR from the environment again.\n\n"
"Exit status: 0 the matrix status is PASS; 1 FAIL or INCOMPLETE, a target unreachable, or\n"
"nothing could run; 2 usage error (a bad flag, plan or round flags).\n", "-- FLAGS", "", "-h, --help");
}

/* Splits "a,b,c" into numbers; "inf" allowed when rates, whole numbers from
 * min otherwise. Returns the count or -1. */
static int parse_list(const char *flag, const char *s, double *out, bool rates, long min)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == MAX_LIST)
            return -1;
        double v;
        long l;
        if (rates ? flag_rate("sweep", flag, tok, &v) : flag_long("sweep", flag, tok, min, 100000000, &l))
            return -1;
        out[n++] = rates ? v : (double)l;
    }
    if (n == 0)
        fprintf(stderr, "anvil sweep: --%s: empty list\n", flag);
    return n ? n : -1;
}

static int parse_targets(const char *s, const char *base_url, struct sweep_target *t, size_t *n)
{
    *n = 0;
    if (!s) {
        snprintf(t[0].base_url, sizeof t[0].base_url, "%s", base_url);
        t[0].label[0] = '\0';
        *n = 1;
        if (url_has_credentials(base_url)) {
            fprintf(stderr, "anvil sweep: --base-url: a URL with user:password@ would be saved in the "
                            "plan; send credentials as a header instead (-- --header-env 'Authorization=VAR')\n");
            return -1;
        }
        return 0;
    }
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1] || *n == MAX_TARGETS) {
            fprintf(stderr, "anvil sweep: --targets: expected LABEL=URL[,LABEL=URL...], got '%s'\n", tok);
            return -1;
        }
        *eq = '\0';
        if (!sweep_safe_name(tok)) {
            fprintf(stderr, "anvil sweep: --targets: label '%s' may hold only letters, digits, '.', '_' "
                            "and '-' (it names a directory)\n", tok);
            return -1;
        }
        for (size_t k = 0; k < *n; k++)
            if (!strcmp(t[k].label, tok)) {
                fprintf(stderr, "anvil sweep: --targets: label '%s' is given twice (labels name the "
                                "rows of the matrix and must be unique)\n", tok);
                return -1;
            }
        snprintf(t[*n].label, sizeof t[*n].label, "%s", tok);
        snprintf(t[*n].base_url, sizeof t[*n].base_url, "%s", eq + 1);
        (*n)++;
    }
    for (size_t k = 0; k < *n; k++)
        if (url_has_credentials(t[k].base_url)) {
            fprintf(stderr, "anvil sweep: %s: a URL with user:password@ would be saved in the plan; "
                            "send credentials as a header instead (-- --header-env 'Authorization=VAR')\n",
                    s ? "--targets" : "--base-url");
            return -1;
        }
    return 0;
}

/* Returns 0 to run, 1 for --help, -1 on a usage error (printed). */
static int parse_args(int argc, char **argv, struct sweep_opts *o)
{
    *o = (struct sweep_opts){.cost.gpu_hour_usd = NAN};
    int rest = argc;
    int rc = flags_defaults("sweep", flags, o);
    if (rc == 0)
        rc = flags_parse("sweep", flags, o, argc, argv, NULL, &rest, NULL);
    o->run_args = argv + rest;      /* argv[argc] is NULL: an empty list without -- */
    return rc;
}

/* Cases from the flag lists: input × output × load point, into a new
 * array (*out, caller frees). */
static int cases_from_flags(const struct sweep_opts *o, struct sweep_case **out, size_t *n)
{
    double ins[MAX_LIST] = {128}, outs[MAX_LIST] = {64}, loads[MAX_LIST] = {1};
    int ni = 1, no = 1, nl = 1;
    bool open = o->rate_list != NULL;
    if ((o->in_list && (ni = parse_list("input-len", o->in_list, ins, false, 0)) < 0) ||
        (o->out_list && (no = parse_list("output-len", o->out_list, outs, false, 1)) < 0) ||
        (open && (nl = parse_list("request-rate", o->rate_list, loads, true, 1)) < 0) ||
        (!open && o->conc_list && (nl = parse_list("concurrency", o->conc_list, loads, false, 1)) < 0))
        return -1;
    if (open && o->conc_list) {
        fprintf(stderr, "anvil sweep: give --concurrency or --request-rate load points, not both "
                        "(a cap goes after --: -- --max-concurrency N)\n");
        return -1;
    }
    *n = 0;
    struct sweep_case *cases = *out = calloc((size_t)ni * (size_t)no * (size_t)nl, sizeof *cases);
    if (!cases) {
        fprintf(stderr, "anvil sweep: out of memory for %d cases\n", ni * no * nl);
        return -1;
    }
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < no; j++)
            for (int l = 0; l < nl; l++) {
                struct sweep_case *c = &cases[(*n)++];
                *c = (struct sweep_case){.input_len = (long)ins[i], .output_len = (long)outs[j],
                                         .concurrency = open ? 0 : (long)loads[l],
                                         .request_rate = open ? loads[l] : INFINITY};
                sweep_case_name(c->id, sizeof c->id, c->input_len, c->output_len, c->concurrency,
                                c->request_rate);
            }
    return 0;
}

static void default_dir(char *out, size_t cap)
{
    char compact[17];
    clock_utc_compact(compact);
    snprintf(out, cap, "results/sweep-%s", compact);
}

/* Parses every round's flags as anvil run will, before the first round:
 * a typo key or a bad flag is found now, not when its round starts.
 * Returns 0, or -1 (reported). */
static int check_rounds(const struct sweep_plan *plan)
{
    FILE *quiet = fopen("/dev/null", "w");
    int rc = 0;
    for (size_t j = 0; !rc && j < plan->n_jobs; j++) {
        const struct sweep_job *job = &plan->jobs[j];
        char **argv = calloc(job->n_args + 4, sizeof *argv);
        if (!argv) {
            rc = -1;
            break;
        }
        argv[0] = "run";
        for (size_t i = 0; i < job->n_args; i++)
            argv[i + 1] = job->args[i];
        argv[job->n_args + 1] = "--out";
        argv[job->n_args + 2] = job->artifact;
        struct run_cli r = {0};
        if (run_cli_parse(&r, (int)job->n_args + 3, argv, quiet ? quiet : stderr) != 0) {
            fprintf(stderr, "anvil sweep: case %s%s%s, round %ld: its anvil run flags are not valid "
                    "(above); nothing was run\n", job->case_id, job->target[0] ? ", target " : "",
                    job->target, job->round);
            rc = -1;
        }
        run_cli_free(&r);
        free(argv);
    }
    if (quiet)
        fclose(quiet);
    return rc;
}

/* Whether job's prompt and reply fit its target's context (discover.h:
 * context_len and max_input_len, from discovery without credentials: a
 * target that needs them is left to its rounds, which refuse the same
 * before their first request). srv holds the target's discovery once
 * asked (context_len -1 when it did not answer). Returns 0, or -1 naming
 * the case, the lengths and the context. */
static int check_length(const struct sweep_job *job, const struct run_config *c, struct server_info *srv,
                        bool *asked)
{
    char err[600];
    if (!*asked) {
        *asked = true;
        if (discover(job->base_url, NULL, c->transport.model, 10000, srv, err, sizeof err) != 0)
            srv->context_len = srv->max_input_len = -1;
    }
    long p = (long)floor((double)c->workload.input_len * (1 + c->workload.input_range));
    long k = (long)floor((double)c->workload.output_len * (1 + c->workload.output_range));
    if (c->workload.dataset || c->workload.calib == CALIB_NONE || server_check_fit(srv, p, k, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "anvil sweep: case %s%s%s: %s; nothing was run\n", job->case_id,
            job->target[0] ? ", target " : "", job->target, err);
    return -1;
}

/* Every round's lengths against its target's context, before the first
 * round. Returns 0, or -1 (reported). */
static int check_lengths(const struct sweep_plan *plan)
{
    struct server_info *ctx = calloc(plan->n_jobs ? plan->n_jobs : 1, sizeof *ctx);
    bool *asked = calloc(plan->n_jobs ? plan->n_jobs : 1, sizeof *asked);
    FILE *quiet = fopen("/dev/null", "w");
    int rc = ctx && asked ? 0 : -1;
    for (size_t j = 0; !rc && j < plan->n_jobs; j++) {
        const struct sweep_job *job = &plan->jobs[j];
        size_t first = j;       /* the first job of this target asks for its context */
        for (size_t k = 0; k < j && first == j; k++)
            if (!strcmp(plan->jobs[k].base_url, job->base_url))
                first = k;
        char **argv = calloc(job->n_args + 2, sizeof *argv);
        if (!argv) {
            rc = -1;
            break;
        }
        argv[0] = "run";
        for (size_t i = 0; i < job->n_args; i++)
            argv[i + 1] = job->args[i];
        struct run_cli r = {0};
        if (run_cli_parse(&r, (int)job->n_args + 1, argv, quiet ? quiet : stderr) == 0)
            rc = check_length(job, &r.c, &ctx[first], &asked[first]);
        run_cli_free(&r);
        free(argv);
    }
    if (quiet)
        fclose(quiet);
    free(ctx);
    free(asked);
    return rc;
}

/* Asks every target GET {base}/models before the first round: any HTTP
 * answer (even 401) means it is there; then every round's lengths against
 * its target's context. Returns 0, or -1 naming the target that did not
 * answer or the case that does not fit. */
static int check_targets(const struct sweep_plan *plan)
{
    for (size_t j = 0; j < plan->n_jobs; j++) {
        const struct sweep_job *job = &plan->jobs[j];
        bool seen = false;
        for (size_t k = 0; k < j && !seen; k++)
            seen = !strcmp(plan->jobs[k].base_url, job->base_url);
        if (seen)
            continue;
        char url[600], err[600];
        long status = 0;
        snprintf(url, sizeof url, "%s/models", job->base_url);
        cJSON_Delete(server_fetch_json(url, NULL, NULL, 10000, &status, err, sizeof err));
        if (status == 0) {
            fprintf(stderr, "anvil sweep: target %s does not answer: %s; nothing was run\n",
                    job->target[0] ? job->target : job->base_url, err);
            return -1;
        }
    }
    return check_lengths(plan);
}

/* Builds, checks and saves the plan of a new sweep into *plan. Returns 0,
 * -2 when a target does not answer, or -1 otherwise (reported). */
static int new_plan(struct sweep_opts *o, const char *dir, struct sweep_plan *plan)
{
    struct sweep_case *cases = NULL;
    struct sweep_target targets[MAX_TARGETS];
    size_t nc = 0, nt = 0;
    cJSON *plan_file = NULL;
    int rc = -1;
    if (o->plan_file && !(plan_file = sweep_read_plan_file(o->plan_file)))
        return -1;
    int got = plan_file ? sweep_cases_from_plan(o->plan_file, plan_file, &o->rounds, &o->num_prompts, &cases, &nc) : cases_from_flags(o, &cases, &nc);
    if (got == 0 && parse_targets(o->targets, o->base_url, targets, &nt) == 0) {
        char np[32];
        snprintf(np, sizeof np, "%ld", o->num_prompts);
        char cache[1100];       /* rounds and cases calibrate once (docs/METHODOLOGY.md) */
        snprintf(cache, sizeof cache, "%s/calibration.json", dir);
        const char *base[256] = {"--num-prompts", np, "--calibration-cache", cache};
        size_t k = 4;
        for (size_t i = 0; o->run_args[i] && k < 255; i++)
            base[k++] = o->run_args[i];
        base[k] = NULL;
        char path[1100], err[512] = "out of memory";
        snprintf(path, sizeof path, "%s/sweep-plan.json", dir);
        cJSON *json = NULL;
        bool built = sweep_plan_build(cases, nc, targets, nt, o->rounds, dir, base, o->slo, plan) == 0;
        if (built)
            plan->search = o->search_cfg;
        if (built && (sweep_hide_headers(plan) != 0 || check_rounds(plan) != 0))
            rc = -1;
        else if (built && check_targets(plan) != 0)
            rc = -2;
        else if (built && (json = sweep_plan_to_json(plan)) && artifact_write_file(path, json, err, sizeof err) == 0)
            rc = 0;
        else
            fprintf(stderr, "anvil sweep: %s\n", err);
        cJSON_Delete(json);
    }
    sweep_cases_free(cases, nc);
    cJSON_Delete(plan_file);
    if (rc)
        sweep_plan_free(plan);
    return rc;
}

/* "LO..HI" of --flag into lo, hi (whole numbers ≥ 1 unless rate). Returns 0 or -1 (printed). */
static int parse_range(const char *flag, const char *s, bool rate, double *lo, double *hi)
{
    const char *dots = s ? strstr(s, "..") : NULL;
    char a[64];
    long l;
    if (!dots || (size_t)(dots - s) >= sizeof a) {
        fprintf(stderr, "anvil sweep: --search needs --%s LO..HI (the range searched), got '%s'\n", flag,
                s ? s : "nothing");
        return -1;
    }
    snprintf(a, sizeof a, "%.*s", (int)(dots - s), s);
    const char *end[2] = {a, dots + 2};
    double *v[2] = {lo, hi};
    for (int i = 0; i < 2; i++) {
        if (rate ? flag_rate("sweep", flag, end[i], v[i]) : flag_long("sweep", flag, end[i], 1, 100000000, &l))
            return -1;
        if (!rate)
            *v[i] = (double)l;
    }
    if (!(*lo > 0 && *lo <= *hi && isfinite(*hi))) {
        fprintf(stderr, "anvil sweep: --%s: expected 0 < LO ≤ HI (finite), got '%s'\n", flag, s);
        return -1;
    }
    return 0;
}

/* The search's settings from the flags into o->search_cfg; its first plan
 * gets the one load point LO and one round. Returns 0, or -1 (printed). */
static int search_settings(struct sweep_opts *o)
{
    if (!o->search)
        return 0;
    bool rate = !strcmp(o->search, "request-rate") || !strcmp(o->search, "request_rate");
    const char *why = NULL;
    if (!rate && strcmp(o->search, "concurrency") != 0)
        why = "--search: expected concurrency or request-rate";
    else if (!o->slo)
        why = "--search needs --slo (the SLOs a probe's requests must meet)";
    else if (o->plan_file)
        why = "--search takes its one case from the flags, not --plan";
    else if ((o->in_list && strchr(o->in_list, ',')) || (o->out_list && strchr(o->out_list, ',')))
        why = "--search takes one --input-len and one --output-len";
    else if (rate ? o->conc_list != NULL : o->rate_list != NULL)
        why = rate ? "--search request-rate: give the range as --request-rate LO..HI, not --concurrency"
                   : "--search concurrency: give the range as --concurrency LO..HI, not --request-rate";
    else if (!(o->attainment > 0 && o->attainment <= 1))
        why = "--slo-attainment: expected a share above 0, at most 1";
    else if (!(o->tolerance >= 0.01))     /* rates are probed to 4 digits: a finer bracket would repeat one */
        why = "--search-tolerance: expected a share of at least 0.01";
    if (why) {
        fprintf(stderr, "anvil sweep: %s\n", why);
        return -1;
    }
    struct sweep_search *s = &o->search_cfg;
    *s = (struct sweep_search){.on = true, .rate = rate, .attainment = o->attainment, .repeats = o->repeats,
                               .tolerance = o->tolerance, .max_probes = o->max_probes};
    if (parse_range(rate ? "request-rate" : "concurrency", rate ? o->rate_list : o->conc_list, rate, &s->lo,
                    &s->hi) != 0)
        return -1;
    snprintf(o->search_lo, sizeof o->search_lo, "%.17g", s->lo);
    *(rate ? &o->rate_list : &o->conc_list) = o->search_lo;
    o->rounds = 1;      /* a probe's repeats are its later rounds */
    return 0;
}

/* Reads DIR/sweep-plan.json into *plan. Returns 0, or -1 (reported). */
static int load_plan(const char *dir, struct sweep_plan *plan)
{
    char path[1100], err[1400];
    snprintf(path, sizeof path, "%s/sweep-plan.json", dir);
    if (sweep_plan_read_file(path, plan, err, sizeof err) != 0) {
        fprintf(stderr, "anvil sweep: --resume %s: %s\n", dir, err);
        return -1;
    }
    return 0;
}

/* Writes the matrix and, with SLOs, the load curve. Returns the exit status. */
static int write_results(const struct sweep_plan *plan, const char *dir, bool interrupted,
                         const struct provenance *prov, const struct cost *cost)
{
    char err[1600], status[32] = "";
    if (sweep_write_matrix(plan, dir, interrupted, prov, status, sizeof status, err, sizeof err) != 0) {
        fprintf(stderr, "anvil sweep: no matrix: %s\n", err);
        return 1;
    }
    printf("matrix: %s/matrix.json (%s)\n", dir, status);
    if (report_sweep_results(stdout, dir, plan->slo, cost, RF_TABLE, err, sizeof err) != 0)
        fprintf(stderr, "anvil sweep: no results table: %s\n", err);
    if (plan->slo) {
        struct slo slo = {NAN, NAN, NAN};
        slo_parse(plan->slo, &slo);     /* checked when the plan was read */
        const char *profile = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
        struct load_curve curve;
        cJSON *json = NULL;
        char path[1100];
        snprintf(path, sizeof path, "%s/load-curve.json", dir);
        if (sweep_load_curve(plan, profile, slo.ttft_ms, slo.tpot_ms, prov, &curve, err, sizeof err) != 0)
            fprintf(stderr, "anvil sweep: no load curve: %s\n", err);
        else if (!(json = load_curve_to_json(&curve)) || matrix_write_file(path, json, err, sizeof err) != 0)
            fprintf(stderr, "anvil sweep: no load curve: %s\n", json ? err : "out of memory");
        else
            printf("load curve: %s\n", path);
        cJSON_Delete(json);
        load_curve_free(&curve);
    }
    /* FAIL is the matrix's own verdict on its rounds: not met, as a failed result */
    struct outcome out = {.incomplete = !strcmp(status, "INCOMPLETE"),
                          .failed = strcmp(status, "PASS") && strcmp(status, "INCOMPLETE")};
    return outcome_exit_status(&out, NULL, 0);
}

/* Runs a search's probes (sweep/search_run.h), then the matrix and load
 * curve of every probe's rounds. Returns the exit status. */
static int execute_search(struct sweep_plan *plan, const char *self, const char *dir, const char *launcher,
                          int lock_fd, const struct provenance *prov, const struct cost *cost)
{
    char err[1600];
    bool interrupted = false;
    struct search_doc doc;
    int rc = sweep_search_run(plan, self, launcher, dir, lock_fd, stdout, &interrupted, &doc, err, sizeof err);
    search_doc_free(&doc);
    if (rc != 0) {
        fprintf(stderr, "anvil sweep: %s\n", err);
        return 1;
    }
    printf("search: %s/search.json\n", dir);
    if (interrupted)
        fprintf(stderr, "anvil sweep: interrupted; finished probes kept; continue with --resume %s\n", dir);
    return write_results(plan, dir, interrupted, prov, cost);
}

/* Runs the plan's rounds not yet done and writes the results. Returns the
 * exit status. */
static int execute(struct sweep_plan *plan, const char *dir, const char *launcher, int lock_fd,
                   const struct provenance *prov, const struct cost *cost)
{
    char self[PATH_MAX], err[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "anvil sweep: cannot find the anvil binary (/proc/self/exe)\n");
        return 1;
    }
    self[n] = '\0';
    bool interrupted = false;
    if (plan->search.on)
        return execute_search(plan, self, dir, launcher, lock_fd, prov, cost);
    int failed = sweep_execute_launched(plan, self, launcher, dir, lock_fd, &interrupted, err, sizeof err);
    if (failed < 0) {
        fprintf(stderr, "anvil sweep: %s\n", err);
        return 1;
    }
    if (interrupted)
        fprintf(stderr, "anvil sweep: interrupted; finished rounds kept; continue with --resume %s\n", dir);
    return write_results(plan, dir, interrupted, prov, cost);
}

/* Takes dir's lock (core/dirlock.h). Returns its descriptor, or -1
 * (reported: the processes measuring there are named). */
static int take_lock(const char *dir)
{
    char err[1400];
    int fd = dirlock_take(dir, "anvil sweep", err, sizeof err);
    if (fd < 0)
        fprintf(stderr, "anvil sweep: %s\n", err);
    return fd;
}

/* Sets the directory aside (--force), makes a new plan or reads the one to
 * resume, into *plan. Returns 0, or the exit status (reported). */
static int prepare_plan(struct sweep_opts *o, const char *dir, const char *earlier, struct sweep_plan *plan)
{
    int rc;
    if (!o->resume && o->force && access(earlier, F_OK) == 0 && sweep_set_aside(dir) != 0)
        return 1;
    if (!o->resume && (rc = new_plan(o, dir, plan)) != 0)
        return rc == -2 ? 1 : 2;
    if (o->resume && load_plan(dir, plan) != 0)
        return 1;
    if (o->resume && (rc = check_rounds(plan) != 0 ? 2 : check_targets(plan) != 0 ? 1 : 0)) {
        sweep_plan_free(plan);
        return rc;
    }
    return 0;
}

int sweep_main(int argc, char **argv)
{
    struct sweep_plan plan_storage;
    struct sweep_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        if (rc == 1)
            usage(stdout);
        return rc == 1 ? 0 : 2;
    }
    struct slo probe = {NAN, NAN, NAN};
    if (o.slo && slo_parse(o.slo, &probe) != 0) {
        fprintf(stderr, "anvil sweep: --slo: expected ttft:MS,tpot:MS (ms > 0), got '%s'\n", o.slo);
        return 2;
    }
    if (search_settings(&o) != 0)
        return 2;
    char dir[900];
    if (o.resume)
        snprintf(dir, sizeof dir, "%s", o.resume);
    else if (o.out_dir)
        snprintf(dir, sizeof dir, "%s", o.out_dir);
    else
        default_dir(dir, sizeof dir);
    char earlier[1000];
    snprintf(earlier, sizeof earlier, "%s/sweep-plan.json", dir);
    if (!o.resume && !o.force && access(earlier, F_OK) == 0) {
        fprintf(stderr, "anvil sweep: %s holds an earlier sweep (sweep-plan.json): --resume %s "
                        "continues it, --force replaces it\n", dir, dir);
        return 2;
    }
    stop_install();     /* Ctrl-C, SIGTERM, SIGHUP while targets are checked; rounds: sweep/runner.c */
    /* one measurement per directory: a round of a killed sweep may still be
     * ending. Taken before an earlier sweep is resumed or set aside; a new
     * one takes it once its plan (and so its directory) is made. */
    bool early = o.resume || o.force;
    int lock_fd = early ? take_lock(dir) : -1;
    if (early && lock_fd < 0)
        return 2;
    rc = prepare_plan(&o, dir, earlier, &plan_storage);
    if (!rc && !early && (lock_fd = take_lock(dir)) < 0) {
        sweep_plan_free(&plan_storage);
        rc = 2;
    }
    if (rc) {
        dirlock_release(lock_fd);
        return rc;
    }
    struct sweep_plan plan = plan_storage;
    /* the sweep's own command line; its rounds' flags after -- are recorded
     * (redacted by their own rules) in each round artifact */
    struct provenance prov;
    if (provenance_collect(&prov, argc, argv, true) != 0) {
        fprintf(stderr, "anvil sweep: out of memory\n");
        sweep_plan_free(&plan);
        dirlock_release(lock_fd);
        return 1;
    }
    rc = execute(&plan, dir, o.launcher, lock_fd, &prov, &o.cost);
    provenance_free(&prov);
    sweep_plan_free(&plan);
    dirlock_release(lock_fd);
    return rc;
}
