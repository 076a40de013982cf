/* plan.c — sweep plans. */
#include "sweep/plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

static void add_arg(cJSON *args, const char *flag, const char *value)
{
    cJSON_AddItemToArray(args, cJSON_CreateString(flag));
    if (value)
        cJSON_AddItemToArray(args, cJSON_CreateString(value));
}

static cJSON *job_args(const struct sweep_case *c, const struct sweep_target *t, long round,
                       const char *const *base_args, const char *slo)
{
    cJSON *args = cJSON_CreateArray();
    char v[64];
    add_arg(args, "--base-url", t->base_url);
    snprintf(v, sizeof v, "%ld", c->input_len);
    add_arg(args, "--input-len", v);
    snprintf(v, sizeof v, "%ld", c->output_len);
    add_arg(args, "--output-len", v);
    if (c->concurrency > 0) {
        snprintf(v, sizeof v, "%ld", c->concurrency);
        add_arg(args, "--concurrency", v);
    }
    if (!isinf(c->request_rate)) {
        snprintf(v, sizeof v, "%.17g", c->request_rate);
        add_arg(args, "--request-rate", v);
    }
    if (slo)
        add_arg(args, "--goodput", slo);
    for (size_t i = 0; base_args && base_args[i]; i++)
        add_arg(args, base_args[i], NULL);
    for (size_t i = 0; c->extra && c->extra[i]; i++)
        add_arg(args, c->extra[i], NULL);
    add_arg(args, "--case-id", c->id);
    snprintf(v, sizeof v, "%ld", round);
    add_arg(args, "--round", v);
    if (t->label[0])
        add_arg(args, "--sweep-target", t->label);
    return args;
}

cJSON *sweep_plan_build(const struct sweep_case *cases, size_t n_cases,
                        const struct sweep_target *targets, size_t n_targets, long rounds,
                        const char *dir, const char *const *base_args, const char *slo)
{
    cJSON *plan = cJSON_CreateObject();
    if (!plan)
        return NULL;
    cJSON_AddStringToObject(plan, "schema", PLAN_SCHEMA);
    cJSON_AddNumberToObject(plan, "rounds", (double)rounds);
    if (slo)
        cJSON_AddStringToObject(plan, "slo", slo);
    else
        cJSON_AddNullToObject(plan, "slo");
    cJSON *jobs = cJSON_AddArrayToObject(plan, "jobs");
    for (long r = 1; r <= rounds; r++)
        for (size_t c = 0; c < n_cases; c++)
            for (size_t t = 0; t < n_targets; t++) {
                cJSON *j = cJSON_CreateObject();
                char path[1024];
                snprintf(path, sizeof path, "%s/rounds/%s/%s/round-%ld.json", dir,
                         targets[t].label[0] ? targets[t].label : "target", cases[c].id, r);
                cJSON_AddStringToObject(j, "target", targets[t].label);
                cJSON_AddStringToObject(j, "base_url", targets[t].base_url);
                cJSON_AddStringToObject(j, "case_id", cases[c].id);
                cJSON_AddNumberToObject(j, "round", (double)r);
                cJSON_AddStringToObject(j, "artifact", path);
                cJSON_AddItemToObject(j, "args", job_args(&cases[c], &targets[t], r, base_args, slo));
                cJSON_AddItemToArray(jobs, j);
            }
    return plan;
}
