/* search_run.c — an SLO search's probes as rounds of the sweep. */
#include "sweep/search_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/benchmark.h"
#include "artifact/json.h"
#include "artifact/matrix.h"
#include "core/vec.h"
#include "stats/dist.h"
#include "sweep/runner.h"
#include "sweep/search.h"

/* The case id of the template's shape at load: "short-16-10-c4" at 8 →
 * "short-16-10-c8". Writes into out (cap bytes). */
static void case_id_for(const char *tmpl, bool rate, double load, char *out, size_t cap)
{
    const char *dash = strrchr(tmpl, '-');
    size_t keep = dash ? (size_t)(dash - tmpl) : strlen(tmpl);
    if (rate)
        snprintf(out, cap, "%.*s-r%g", (int)keep, tmpl, load);
    else
        snprintf(out, cap, "%.*s-c%ld", (int)keep, tmpl, (long)load);
}

/* The job of the template t at load, round: a copy with the load,
 * --case-id and --round values replaced. Returns 0, or -1 (memory). */
static int derive_job(const struct sweep_job *t, bool rate, double load, long round, const char *dir,
                      struct sweep_job *out)
{
    char id[160], value[64], rnd[32], path[1400];
    case_id_for(t->case_id, rate, load, id, sizeof id);
    if (rate)
        snprintf(value, sizeof value, "%.6g", load);
    else
        snprintf(value, sizeof value, "%ld", (long)load);
    snprintf(rnd, sizeof rnd, "%ld", round);
    snprintf(path, sizeof path, "%s/rounds/%s/%s/round-%ld.json", dir, t->target[0] ? t->target : "target",
             id, round);
    *out = (struct sweep_job){.target = strdup(t->target), .base_url = strdup(t->base_url),
                              .case_id = strdup(id), .round = round, .artifact = strdup(path),
                              .args = calloc(t->n_args + 1, sizeof *out->args), .n_args = t->n_args};
    bool oom = !out->target || !out->base_url || !out->case_id || !out->artifact || !out->args;
    const char *load_flag = rate ? "--request-rate" : "--concurrency";
    for (size_t i = 0; !oom && i < t->n_args; i++) {
        const char *prev = i ? t->args[i - 1] : "";
        const char *v = !strcmp(prev, load_flag) ? value : !strcmp(prev, "--case-id") ? id
                      : !strcmp(prev, "--round") ? rnd : t->args[i];
        oom = !(out->args[i] = strdup(v));
    }
    return oom ? -1 : 0;
}

static void job_free(struct sweep_job *j)
{
    free(j->target);
    free(j->base_url);
    free(j->case_id);
    free(j->artifact);
    artifact_strings_free(j->args, j->n_args);
}

static int save_plan(const struct sweep_plan *plan, const char *dir, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/sweep-plan.json", dir);
    cJSON *j = sweep_plan_to_json(plan);
    int rc = j ? artifact_write_file(path, j, err, errlen) : -1;
    if (!j)
        snprintf(err, errlen, "out of memory");
    cJSON_Delete(j);
    return rc;
}

/* The index in plan of template t's job at load, round: found (a resumed
 * search) or appended and the plan saved. Returns it, or -1 with err. */
static long job_at(struct sweep_plan *plan, size_t t, double load, long round, const char *dir, char *err,
                   size_t errlen)
{
    struct sweep_job j;
    if (derive_job(&plan->jobs[t], plan->search.rate, load, round, dir, &j) != 0) {
        job_free(&j);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < plan->n_jobs; i++) {
        const struct sweep_job *k = &plan->jobs[i];
        if (!strcmp(k->target, j.target) && !strcmp(k->case_id, j.case_id) && k->round == round) {
            job_free(&j);
            return (long)i;
        }
    }
    struct sweep_job *grown = realloc(plan->jobs, (plan->n_jobs + 1) * sizeof *grown);
    if (!grown) {
        job_free(&j);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    plan->jobs = grown;
    plan->jobs[plan->n_jobs++] = j;
    return save_plan(plan, dir, err, errlen) == 0 ? (long)plan->n_jobs - 1 : -1;
}

/* What a probe's rounds pooled so far. */
struct pool {
    long good, requests, rounds;
    double *ttft, *tpot, *goodput;
    size_t n_ttft, c_ttft, n_tpot, c_tpot, n_goodput, c_goodput;
    char **artifacts;
    size_t n_artifacts, c_artifacts;
};

static void pool_free(struct pool *p)
{
    free(p->ttft);
    free(p->tpot);
    free(p->goodput);
    artifact_strings_free(p->artifacts, p->n_artifacts);
    *p = (struct pool){0};
}

static int push(double **v, size_t *n, size_t *cap, double x)
{
    if (VEC_RESERVE(*v, *cap, *n + 1, 64) != 0)
        return -1;
    (*v)[(*n)++] = x;
    return 0;
}

/* Adds a complete round artifact b (at path) to the pool. Returns 0 or -1 (memory). */
static int pool_add(struct pool *p, const struct benchmark *b, const char *path)
{
    long good = b->good_requests == ARTIFACT_NONE ? 0 : b->good_requests;
    p->good += good;
    p->requests += b->completed + b->failed;
    p->rounds++;
    int rc = 0;
    for (size_t i = 0; !rc && i < b->n_request_timings; i++) {
        const struct bench_timing *t = &b->request_timings[i];
        rc = push(&p->ttft, &p->n_ttft, &p->c_ttft, t->ttft_ms);
        if (!rc && !isnan(t->tpot_ms))
            rc = push(&p->tpot, &p->n_tpot, &p->c_tpot, t->tpot_ms);
    }
    if (!rc && !isnan(b->metrics.goodput_rps))
        rc = push(&p->goodput, &p->n_goodput, &p->c_goodput, b->metrics.goodput_rps);
    if (!rc && VEC_RESERVE(p->artifacts, p->c_artifacts, p->n_artifacts + 1, 4) != 0)
        rc = -1;
    if (!rc && !(p->artifacts[p->n_artifacts] = strdup(path)))
        rc = -1;
    if (!rc)
        p->n_artifacts++;
    return rc;
}

/* The probe record of a decided pool at load; takes the pool's artifacts. */
static int probe_of(struct pool *p, bool rate, double load, const char *case_id, bool pass, bool by_interval,
                    struct search_probe *out)
{
    struct dist d;
    *out = (struct search_probe){.present = true, .concurrency = rate ? ARTIFACT_NONE : (long)load,
                                 .request_rate = rate ? load : NAN, .case_id = strdup(case_id),
                                 .rounds = p->rounds, .requests = p->requests, .good = p->good,
                                 .attainment = p->requests ? (double)p->good / (double)p->requests : NAN,
                                 .verdict = strdup(pass ? "pass" : "fail"),
                                 .decided_by = strdup(by_interval ? "interval" : "repeats"),
                                 .goodput_rps = NAN, .artifacts = p->artifacts, .n_artifacts = p->n_artifacts};
    p->artifacts = NULL;
    p->n_artifacts = 0;
    search_wilson(p->good, p->requests, SEARCH_Z95, out->interval);
    struct matrix_range g;
    if (p->n_goodput && matrix_range_of(p->goodput, p->n_goodput, &g) == 0)
        out->goodput_rps = g.median;
    dist_compute(p->ttft, p->n_ttft, PCT_NEAREST, &d);
    out->ttft_p50_ms = d.p50;
    out->ttft_p99_ms = d.p99;
    dist_compute(p->tpot, p->n_tpot, PCT_NEAREST, &d);
    out->tpot_p50_ms = d.p50;
    out->tpot_p99_ms = d.p99;
    return out->case_id && out->verdict && out->decided_by ? 0 : -1;
}

/* Runs the job at index k unless its round is done. Returns 0 done, 1 the
 * round did not complete or a signal came (*interrupted), -1 error. */
static int run_round(const struct sweep_plan *plan, size_t k, const char *bin, const char *launcher,
                     const char *dir, int lock_fd, bool *interrupted, char *err, size_t errlen)
{
    struct sweep_plan one = {.rounds = 1, .slo = plan->slo, .jobs = &plan->jobs[k], .n_jobs = 1};
    int failed = sweep_execute_launched(&one, bin, launcher, dir, lock_fd, interrupted, err, errlen);
    if (failed < 0)
        return -1;
    return failed || *interrupted ? 1 : 0;
}

struct search_ctx {
    struct sweep_plan *plan;
    const char *bin, *launcher, *dir;
    int lock_fd;
    FILE *out;
    bool *interrupted;
    char *err;
    size_t errlen;
};

static void print_probe(FILE *out, const char *target, const struct search_probe *p, bool rate)
{
    if (rate)
        fprintf(out, "probe %s%srequest rate %g/s:", target, target[0] ? " " : "", p->request_rate);
    else
        fprintf(out, "probe %s%sconcurrency %ld:", target, target[0] ? " " : "", p->concurrency);
    fprintf(out, " %ld/%ld good over %ld round%s, attainment %.3f (95%% %.3f..%.3f): %s (%s)\n", p->good,
            p->requests, p->rounds, p->rounds == 1 ? "" : "s", p->attainment, p->interval[0], p->interval[1],
            p->verdict, p->decided_by);
    fflush(out);
}

/* Measures the probe at load for template t: rounds until the verdict is
 * decided. Returns 0 (*probe filled), 1 stopped (*why set), -1 error. */
static int measure_probe(struct search_ctx *c, size_t t, double load, struct search_probe *probe,
                         const char **why)
{
    const struct sweep_search *s = &c->plan->search;
    struct pool pool = {0};
    int rc = 0;
    enum probe_verdict v = PROBE_UNCERTAIN;
    bool by_interval = false;
    char case_id[160] = "";
    for (long round = 1; rc == 0 && v == PROBE_UNCERTAIN; round++) {
        long k = job_at(c->plan, t, load, round, c->dir, c->err, c->errlen);
        if (k < 0) {
            rc = -1;
            break;
        }
        const struct sweep_job *job = &c->plan->jobs[k];
        snprintf(case_id, sizeof case_id, "%s", job->case_id);
        if ((rc = run_round(c->plan, (size_t)k, c->bin, c->launcher, c->dir, c->lock_fd, c->interrupted,
                            c->err, c->errlen)) != 0) {
            *why = *c->interrupted ? "interrupted" : "round failed";
            break;
        }
        struct benchmark b;
        char e[512];
        if (benchmark_read_file(job->artifact, &b, NULL, e, sizeof e) != 0 || b.incomplete) {
            *why = "round failed";
            rc = 1;
        } else if (pool_add(&pool, &b, job->artifact) != 0) {
            snprintf(c->err, c->errlen, "out of memory");
            rc = -1;
        }
        benchmark_free(&b);
        if (rc == 0)
            v = search_verdict(pool.good, pool.requests, s->attainment, round - 1, s->repeats, &by_interval);
    }
    if (rc == 0 && probe_of(&pool, s->rate, load, case_id, v == PROBE_PASS, by_interval, probe) != 0) {
        snprintf(c->err, c->errlen, "out of memory");
        rc = -1;
    }
    pool_free(&pool);
    return rc;
}

/* A deep copy of p into *out. Returns 0 or -1 (memory). */
static int probe_copy(const struct search_probe *p, struct search_probe *out)
{
    *out = *p;
    out->case_id = strdup(p->case_id);
    out->verdict = strdup(p->verdict);
    out->decided_by = strdup(p->decided_by);
    out->artifacts = p->n_artifacts ? calloc(p->n_artifacts, sizeof *out->artifacts) : NULL;
    bool oom = !out->case_id || !out->verdict || !out->decided_by || (p->n_artifacts && !out->artifacts);
    for (size_t i = 0; !oom && i < p->n_artifacts; i++)
        oom = !(out->artifacts[i] = strdup(p->artifacts[i]));
    return oom ? -1 : 0;
}

static int write_doc(const struct search_doc *d, const char *dir, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/search.json", dir);
    cJSON *j = search_to_json(d);
    int rc = j ? artifact_write_file(path, j, err, errlen) : -1;
    if (!j)
        snprintf(err, errlen, "out of memory");
    cJSON_Delete(j);
    return rc;
}

/* Sets res->best to a copy of the passing probe at load pass (NaN: none). */
static int set_best(struct search_result *res, double pass)
{
    search_probe_free(&res->best);
    for (size_t i = 0; !isnan(pass) && i < res->n_probes; i++) {
        const struct search_probe *p = &res->probes[i];
        double x = p->concurrency != ARTIFACT_NONE ? (double)p->concurrency : p->request_rate;
        if (x == pass && !strcmp(p->verdict, "pass"))
            return probe_copy(p, &res->best);
    }
    return 0;
}

/* One target's search from template t into res; the document d is
 * rewritten after each probe. Returns 0 or -1 (err set). */
static int search_target(struct search_ctx *c, size_t t, struct search_result *res, const struct search_doc *d)
{
    const struct sweep_search *s = &c->plan->search;
    struct search_rule rule = {.whole = !s->rate, .lo = s->lo, .hi = s->hi, .tolerance = s->tolerance,
                               .max_probes = s->max_probes};
    struct search_state st;
    search_start(&st);
    const char *why = NULL;
    const char *target = c->plan->jobs[t].target;
    free(res->stopped);
    if (!(res->stopped = strdup("running"))) {
        snprintf(c->err, c->errlen, "out of memory");
        return -1;
    }
    for (double load; !why && !isnan(load = search_next(&st, &rule));) {
        struct search_probe p;
        int rc = measure_probe(c, t, load, &p, &why);
        if (rc < 0)
            return -1;
        if (rc > 0)
            break;
        struct search_probe *grown = realloc(res->probes, (res->n_probes + 1) * sizeof *grown);
        if (!grown) {
            search_probe_free(&p);
            snprintf(c->err, c->errlen, "out of memory");
            return -1;
        }
        res->probes = grown;
        res->probes[res->n_probes++] = p;
        print_probe(c->out, target, &p, s->rate);
        search_record(&st, &rule, load, !strcmp(p.verdict, "pass"));
        if (set_best(res, st.pass) != 0 || write_doc(d, c->dir, c->err, c->errlen) != 0)
            return -1;
    }
    free(res->stopped);
    if (!(res->stopped = strdup(why ? why : st.stopped)) || set_best(res, st.pass) != 0) {
        snprintf(c->err, c->errlen, "out of memory");
        return -1;
    }
    return write_doc(d, c->dir, c->err, c->errlen);
}

static void print_answer(FILE *out, const struct search_result *res, bool rate)
{
    const char *target = res->target ? res->target : "";
    fprintf(out, "search%s%s: ", target[0] ? " " : "", target);
    const struct search_probe *b = &res->best;
    if (!b->present)
        fprintf(out, "no load met the SLOs");
    else if (rate)
        fprintf(out, "request rate %g/s", b->request_rate);
    else
        fprintf(out, "concurrency %ld", b->concurrency);
    if (b->present)
        fprintf(out, " (attainment %.3f, goodput %.3g req/s, TTFT p99 %.1f ms)", b->attainment, b->goodput_rps,
                b->ttft_p99_ms);
    fprintf(out, "; stopped: %s after %zu probe%s\n", res->stopped, res->n_probes, res->n_probes == 1 ? "" : "s");
}

/* The document's settings from the plan, and one result per target. */
static int doc_start(const struct sweep_plan *plan, const size_t *tmpl, size_t n_targets, struct search_doc *d)
{
    const struct sweep_search *s = &plan->search;
    *d = (struct search_doc){.schema = strdup(SEARCH_SCHEMA),
                             .search = strdup(s->rate ? "request_rate" : "concurrency"),
                             .slo = strdup(plan->slo ? plan->slo : ""), .slo_attainment = s->attainment,
                             .range = {s->lo, s->hi}, .repeats = s->repeats,
                             .tolerance = s->rate ? s->tolerance : NAN, .max_probes = s->max_probes};
    bool labelled = plan->jobs[tmpl[0]].target[0] != '\0';
    if (labelled && !(d->targets = calloc(n_targets, sizeof *d->targets)))
        return -1;
    d->n_targets = labelled ? n_targets : 0;
    for (size_t i = 0; i < d->n_targets; i++) {
        d->targets[i].present = true;
        if (!(d->targets[i].target = strdup(plan->jobs[tmpl[i]].target)) ||
            !(d->targets[i].stopped = strdup("not started")))
            return -1;
    }
    d->one.present = !labelled;
    if (!labelled && !(d->one.stopped = strdup("not started")))
        return -1;
    return d->schema && d->search && d->slo ? 0 : -1;
}

int sweep_search_run(struct sweep_plan *plan, const char *anvil_bin, const char *launcher, const char *dir,
                     int lock_fd, FILE *out, bool *interrupted, struct search_doc *doc, char *err,
                     size_t errlen)
{
    *interrupted = false;
    *doc = (struct search_doc){0};
    size_t *tmpl = calloc(plan->n_jobs ? plan->n_jobs : 1, sizeof *tmpl), n_t = 0;
    for (size_t i = 0; tmpl && i < plan->n_jobs; i++) {
        bool seen = false;
        for (size_t k = 0; k < n_t && !seen; k++)
            seen = !strcmp(plan->jobs[tmpl[k]].target, plan->jobs[i].target);
        if (!seen)
            tmpl[n_t++] = i;
    }
    if (!tmpl || n_t == 0 || doc_start(plan, tmpl, n_t, doc) != 0) {
        snprintf(err, errlen, !tmpl || n_t ? "out of memory" : "the plan has no job");
        free(tmpl);
        search_doc_free(doc);
        return -1;
    }
    struct search_ctx c = {plan, anvil_bin, launcher, dir, lock_fd, out, interrupted, err, errlen};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n_t && !*interrupted; i++) {
        struct search_result *res = doc->n_targets ? &doc->targets[i] : &doc->one;
        rc = search_target(&c, tmpl[i], res, doc);
        if (rc == 0)
            print_answer(out, res, plan->search.rate);
    }
    free(tmpl);
    return rc;
}
