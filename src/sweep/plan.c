/* plan.c — sweep plans. */
#include "sweep/plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"
#include "core/file.h"
#include "core/vec.h"
#include "stats/summary.h"

static void len_name(char *out, size_t cap, long n)
{
    if (n >= 1024 && n % 1024 == 0)
        snprintf(out, cap, "%ldk", n / 1024);
    else
        snprintf(out, cap, "%ld", n);
}

void sweep_case_name(char *out, size_t cap, long in, long outl, long concurrency, double rate)
{
    const char *kind = outl > in ? "decode" : in >= 2048 ? "rag" : "short";
    char a[32], b[32], load[48];
    len_name(a, sizeof a, in);
    len_name(b, sizeof b, outl);
    if (isinf(rate))
        snprintf(load, sizeof load, "c%ld", concurrency);
    else
        snprintf(load, sizeof load, "r%g", rate);
    snprintf(out, cap, "%s-%s-%s-%s", kind, a, b, load);
}

/* A growable list of owned argument strings. */
struct arg_list {
    char **v;
    size_t n, cap;
    bool oom;
};

static void add_arg(struct arg_list *a, const char *flag, const char *value)
{
    const char *both[2] = {flag, value};
    for (int i = 0; i < 2 && both[i]; i++) {
        if (VEC_RESERVE(a->v, a->cap, a->n + 1, 16) != 0) {
            a->oom = true;
            return;
        }
        if (!(a->v[a->n] = strdup(both[i])))
            a->oom = true;
        else
            a->n++;
    }
}

static struct arg_list job_args(const struct sweep_case *c, const struct sweep_target *t, long round,
                                const char *const *base_args, const char *slo)
{
    struct arg_list args = {0};
    char v[64];
    add_arg(&args, "--base-url", t->base_url);
    snprintf(v, sizeof v, "%ld", c->input_len);
    add_arg(&args, "--input-len", v);
    snprintf(v, sizeof v, "%ld", c->output_len);
    add_arg(&args, "--output-len", v);
    if (c->concurrency > 0) {
        snprintf(v, sizeof v, "%ld", c->concurrency);
        add_arg(&args, "--concurrency", v);
    }
    if (!isinf(c->request_rate)) {
        snprintf(v, sizeof v, "%.17g", c->request_rate);
        add_arg(&args, "--request-rate", v);
    }
    if (slo)
        add_arg(&args, "--goodput", slo);
    for (size_t i = 0; base_args && base_args[i]; i++)
        add_arg(&args, base_args[i], NULL);
    for (size_t i = 0; c->extra && c->extra[i]; i++)
        add_arg(&args, c->extra[i], NULL);
    add_arg(&args, "--case-id", c->id);
    snprintf(v, sizeof v, "%ld", round);
    add_arg(&args, "--round", v);
    if (t->label[0])
        add_arg(&args, "--sweep-target", t->label);
    return args;
}

int sweep_plan_build(const struct sweep_case *cases, size_t n_cases, const struct sweep_target *targets,
                     size_t n_targets, long rounds, const char *dir, const char *const *base_args,
                     const char *slo, struct sweep_plan *out)
{
    size_t n = (size_t)rounds * n_cases * n_targets;
    *out = (struct sweep_plan){.rounds = rounds, .slo = slo ? strdup(slo) : NULL,
                               .jobs = calloc(n ? n : 1, sizeof *out->jobs)};
    bool oom = !out->jobs || (slo && !out->slo);
    for (long r = 1; !oom && r <= rounds; r++)
        for (size_t c = 0; !oom && c < n_cases; c++)
            for (size_t t = 0; !oom && t < n_targets; t++) {
                char path[1024];
                snprintf(path, sizeof path, "%s/rounds/%s/%s/round-%ld.json", dir,
                         targets[t].label[0] ? targets[t].label : "target", cases[c].id, r);
                struct arg_list args = job_args(&cases[c], &targets[t], r, base_args, slo);
                struct sweep_job *j = &out->jobs[out->n_jobs++];
                *j = (struct sweep_job){
                    .target = strdup(targets[t].label), .base_url = strdup(targets[t].base_url),
                    .case_id = strdup(cases[c].id), .round = r, .artifact = strdup(path),
                    .args = args.v, .n_args = args.n,
                };
                oom = args.oom || !j->target || !j->base_url || !j->case_id || !j->artifact;
            }
    if (oom)
        sweep_plan_free(out);
    return oom ? -1 : 0;
}

cJSON *sweep_plan_to_json(const struct sweep_plan *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "schema", PLAN_SCHEMA);
    cJSON_AddNumberToObject(o, "rounds", (double)p->rounds);
    artifact_add_string(o, "slo", p->slo);
    if (p->search.on) {
        cJSON *s = cJSON_AddObjectToObject(o, "search");
        cJSON_AddStringToObject(s, "kind", p->search.rate ? "request_rate" : "concurrency");
        cJSON_AddNumberToObject(s, "lo", p->search.lo);
        cJSON_AddNumberToObject(s, "hi", p->search.hi);
        cJSON_AddNumberToObject(s, "attainment", p->search.attainment);
        cJSON_AddNumberToObject(s, "repeats", (double)p->search.repeats);
        cJSON_AddNumberToObject(s, "tolerance", p->search.tolerance);
        cJSON_AddNumberToObject(s, "max_probes", (double)p->search.max_probes);
    }
    cJSON *jobs = cJSON_AddArrayToObject(o, "jobs");
    for (size_t i = 0; jobs && i < p->n_jobs; i++) {
        const struct sweep_job *j = &p->jobs[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "target", j->target);
        cJSON_AddStringToObject(e, "base_url", j->base_url);
        cJSON_AddStringToObject(e, "case_id", j->case_id);
        cJSON_AddNumberToObject(e, "round", (double)j->round);
        cJSON_AddStringToObject(e, "artifact", j->artifact);
        cJSON_AddItemToObject(e, "args", artifact_string_array(j->args, j->n_args));
        cJSON_AddItemToArray(jobs, e);
    }
    return o;
}

static void job_read(struct jread *r, const cJSON *e, struct sweep_job *j)
{
    if (!cJSON_IsObject(e)) {
        jread_fail(r, NULL, "expected an object");
        return;
    }
    jread_string(r, e, "target", 0, &j->target);
    jread_string(r, e, "base_url", JR_NONEMPTY, &j->base_url);
    jread_string(r, e, "case_id", JR_NONEMPTY, &j->case_id);
    jread_whole(r, e, "round", 0, 1, &j->round);
    jread_string(r, e, "artifact", JR_NONEMPTY, &j->artifact);
    jread_strings(r, e, "args", 0, &j->args, &j->n_args);
}

/* The plan's search settings, when it has them. */
static void search_read(struct jread *r, const cJSON *j, struct sweep_search *s, bool slo)
{
    const cJSON *o = jread_object(r, j, "search", JR_OPTIONAL);
    if (!o)
        return;
    size_t mark = jread_enter(r, "search");
    char *kind = NULL;
    s->on = true;
    jread_string(r, o, "kind", 0, &kind);
    if (kind && strcmp(kind, "concurrency") != 0 && strcmp(kind, "request_rate") != 0)
        jread_fail(r, "kind", "expected \"concurrency\" or \"request_rate\", got \"%s\"", kind);
    s->rate = kind && !strcmp(kind, "request_rate");
    free(kind);
    jread_number(r, o, "lo", 0, &s->lo);
    jread_number(r, o, "hi", 0, &s->hi);
    jread_number(r, o, "attainment", 0, &s->attainment);
    jread_whole(r, o, "repeats", 0, 0, &s->repeats);
    jread_number(r, o, "tolerance", 0, &s->tolerance);
    jread_whole(r, o, "max_probes", 0, 1, &s->max_probes);
    if (!r->failed && !(s->lo > 0 && s->lo <= s->hi && isfinite(s->hi)))
        jread_fail(r, "hi", "expected 0 < lo ≤ hi, got %g..%g", s->lo, s->hi);
    if (!r->failed && !(s->attainment > 0 && s->attainment <= 1))
        jread_fail(r, "attainment", "expected a share between 0 and 1, got %g", s->attainment);
    if (!r->failed && !(s->tolerance >= 0.01))
        jread_fail(r, "tolerance", "expected a share ≥ 0.01, got %g", s->tolerance);
    if (!r->failed && !slo)
        jread_fail(r, "kind", "a search needs the plan's slo");
    jread_leave(r, mark);
}

int sweep_plan_from_json(const cJSON *j, const char *name, struct sweep_plan *out, char *err,
                         size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    *out = (struct sweep_plan){0};
    char *schema = NULL;
    jread_string(&r, j, "schema", 0, &schema);
    if (schema && strcmp(schema, PLAN_SCHEMA) != 0)
        jread_fail(&r, "schema", "expected \"%s\", got \"%s\"", PLAN_SCHEMA, schema);
    free(schema);
    jread_whole(&r, j, "rounds", 0, 1, &out->rounds);
    jread_string(&r, j, "slo", JR_NULLABLE, &out->slo);
    struct slo probe = {NAN, NAN, NAN};
    if (out->slo && slo_parse(out->slo, &probe) != 0)
        jread_fail(&r, "slo", "expected ttft:MS,tpot:MS (ms > 0), got \"%s\"", out->slo);
    search_read(&r, j, &out->search, out->slo != NULL);
    const cJSON *jobs = jread_array(&r, j, "jobs", 0), *e;
    if (jobs && cJSON_GetArraySize(jobs) == 0)
        jread_fail(&r, "jobs", "expected a non-empty array");
    if (!r.failed && !(out->jobs = calloc((size_t)cJSON_GetArraySize(jobs), sizeof *out->jobs)))
        jread_fail(&r, "jobs", "out of memory");
    size_t mark = jread_enter(&r, "jobs");
    cJSON_ArrayForEach(e, jobs) {
        if (r.failed)
            break;
        size_t m = jread_enter_index(&r, (int)out->n_jobs);
        job_read(&r, e, &out->jobs[out->n_jobs++]);
        jread_leave(&r, m);
    }
    jread_leave(&r, mark);
    if (r.failed) {
        sweep_plan_free(out);
        return -1;
    }
    return 0;
}

int sweep_plan_read_file(const char *path, struct sweep_plan *out, char *err, size_t errlen)
{
    *out = (struct sweep_plan){0};
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    struct jread r;
    jread_init(&r, path, err, errlen);
    cJSON *j;
    int rc = jread_parse(&r, text, len, &j) == 0 ? sweep_plan_from_json(j, path, out, err, errlen) : -1;
    cJSON_Delete(j);
    free(text);
    return rc;
}

void sweep_plan_free(struct sweep_plan *p)
{
    for (size_t i = 0; i < p->n_jobs; i++) {
        struct sweep_job *j = &p->jobs[i];
        free(j->target);
        free(j->base_url);
        free(j->case_id);
        free(j->artifact);
        artifact_strings_free(j->args, j->n_args);
    }
    free(p->jobs);
    free(p->slo);
    *p = (struct sweep_plan){0};
}
