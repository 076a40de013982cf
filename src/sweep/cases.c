/* cases.c — the cases of a sweep's plan file (cases.h). */
#include "sweep/cases.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"
#include "core/file.h"
#include "core/yamljson.h"

bool sweep_safe_name(const char *s)
{
    if (!s[0] || s[0] == '.')
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* Keys of a plan case that are not anvil run flags. */
static bool case_key(const char *k)
{
    static const char *const keys[] = {"name", "input_len", "output_len", "concurrency", "request_rate", "args"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!strcmp(k, keys[i]))
            return true;
    return false;
}

/* The case's extra `anvil run` flags: its "args" list, then every other key
 * as a flag (input_len style or input-len style; true = the bare flag, false
 * = left out). Strings are owned by k->extra_text. Returns 0 or -1. */
static int case_flags(const cJSON *c, struct sweep_case *k)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, c)
        n += 2 + (cJSON_IsArray(e) ? cJSON_GetArraySize(e) : 0);
    k->extra = calloc((size_t)n + 1, sizeof *k->extra);
    k->extra_text = cJSON_CreateArray();
    if (!k->extra || !k->extra_text)
        return -1;
    int i = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c, "args"))
        if (cJSON_IsString(e))
            k->extra[i++] = e->valuestring;
    cJSON_ArrayForEach(e, c) {
        if (case_key(e->string) || cJSON_IsFalse(e) || cJSON_IsNull(e))
            continue;
        char flag[128], value[64];
        snprintf(flag, sizeof flag, "--%s", e->string);
        for (char *p = flag; *p; p++)
            if (*p == '_')
                *p = '-';
        cJSON *f = cJSON_CreateString(flag);
        cJSON_AddItemToArray(k->extra_text, f);
        k->extra[i++] = f->valuestring;
        if (cJSON_IsTrue(e))
            continue;
        if (cJSON_IsNumber(e))
            snprintf(value, sizeof value, "%.17g", e->valuedouble);
        cJSON *v = cJSON_CreateString(cJSON_IsNumber(e) ? value : cJSON_IsString(e) ? e->valuestring : "");
        cJSON_AddItemToArray(k->extra_text, v);
        k->extra[i++] = v->valuestring;
    }
    return 0;
}

/* Reads case c of a plan file (the current path of r) into *k: every key
 * checked, defaults for the ones not given (128 → 64 tokens, concurrency 1,
 * or no cap with a request_rate). Returns 0 or -1 (recorded in r). */
static int read_case(struct jread *r, const cJSON *c, struct sweep_case *k)
{
    if (!cJSON_IsObject(c))
        return jread_fail(r, NULL, "expected an object");
    long in, out, conc;
    double rate;
    char *name = NULL, **args = NULL;
    size_t n_args = 0;
    jread_whole(r, c, "input_len", JR_OPTIONAL, 0, &in);     /* 0: a minimal prompt */
    jread_whole(r, c, "output_len", JR_OPTIONAL, 1, &out);
    jread_whole(r, c, "concurrency", JR_OPTIONAL, 1, &conc);
    jread_number(r, c, "request_rate", JR_OPTIONAL, &rate);
    if (!r->failed && !isnan(rate) && !(rate > 0 && isfinite(rate)))
        jread_fail(r, "request_rate", "expected requests/s > 0, got %g", rate);
    jread_string(r, c, "name", JR_OPTIONAL | JR_NONEMPTY, &name);
    jread_strings(r, c, "args", JR_OPTIONAL, &args, &n_args);
    artifact_strings_free(args, n_args);
    const cJSON *e;
    cJSON_ArrayForEach(e, c)
        if (!r->failed && !case_key(e->string) && (cJSON_IsArray(e) || cJSON_IsObject(e)))
            jread_fail(r, e->string, "expected an anvil run flag's value (a string, number, true or false)");
    if (r->failed) {
        free(name);
        return -1;
    }
    *k = (struct sweep_case){.input_len = in == ARTIFACT_NONE ? 128 : in,
                             .output_len = out == ARTIFACT_NONE ? 64 : out,
                             .concurrency = conc != ARTIFACT_NONE ? conc : isnan(rate) ? 1 : 0,
                             .request_rate = isnan(rate) ? INFINITY : rate};
    if (name)
        snprintf(k->id, sizeof k->id, "%s", name);
    else
        sweep_case_name(k->id, sizeof k->id, k->input_len, k->output_len, k->concurrency, k->request_rate);
    free(name);
    return 0;
}

/* A case name becomes a directory and must be unique. Returns 0 or -1
 * (reported). */
static int check_case_id(const char *file, const struct sweep_case *k, const struct sweep_case *earlier,
                         size_t n_earlier)
{
    if (!sweep_safe_name(k->id)) {
        fprintf(stderr, "anvil sweep: --plan %s: case name '%s' may hold only letters, digits, '.', '_' "
                        "and '-' (it names a directory)\n", file, k->id);
        return -1;
    }
    for (size_t i = 0; i < n_earlier; i++)
        if (!strcmp(earlier[i].id, k->id)) {
            fprintf(stderr, "anvil sweep: --plan %s: two cases are named '%s'\n", file, k->id);
            return -1;
        }
    return 0;
}

/* The plan file's rounds and num_prompts, when given, into o. */
static void read_plan_counts(struct jread *r, const cJSON *plan, long *rounds_out, long *num_prompts_out)
{
    long rounds, num_prompts;
    jread_whole(r, plan, "rounds", JR_OPTIONAL, 1, &rounds);
    jread_whole(r, plan, "num_prompts", JR_OPTIONAL, 1, &num_prompts);
    if (!r->failed && rounds > 1000)
        jread_fail(r, "rounds", "expected 1 to 1000, got %ld", rounds);
    if (rounds != ARTIFACT_NONE)
        *rounds_out = rounds;
    if (num_prompts != ARTIFACT_NONE)
        *num_prompts_out = num_prompts;
}

int sweep_cases_from_plan(const char *file, const cJSON *plan, long *rounds, long *num_prompts,
                          struct sweep_case **out, size_t *n)
{
    char err[600];
    struct jread r;
    jread_init(&r, file, err, sizeof err);
    *n = 0;
    *out = NULL;
    const cJSON *list = jread_array(&r, plan, "cases", 0), *c;
    if (!r.failed && cJSON_GetArraySize(list) == 0)
        jread_fail(&r, "cases", "expected a non-empty array of cases");
    read_plan_counts(&r, plan, rounds, num_prompts);
    struct sweep_case *cases = r.failed ? NULL : calloc((size_t)cJSON_GetArraySize(list), sizeof *cases);
    if (!r.failed && !cases)
        jread_fail(&r, NULL, "out of memory");
    *out = cases;
    size_t mark = jread_enter(&r, "cases");
    cJSON_ArrayForEach(c, list) {
        if (r.failed)
            break;
        size_t m = jread_enter_index(&r, (int)*n);
        struct sweep_case *k = &cases[*n];
        if (read_case(&r, c, k) == 0) {
            (*n)++;
            if (check_case_id(file, k, cases, *n - 1) != 0)
                return -1;
            if (case_flags(c, k) != 0)
                jread_fail(&r, NULL, "out of memory");
        }
        jread_leave(&r, m);
    }
    jread_leave(&r, mark);
    if (r.failed) {
        fprintf(stderr, "anvil sweep: --plan %s\n", err);
        return -1;
    }
    return 0;
}

cJSON *sweep_read_plan_file(const char *path)
{
    char *text = file_read_all(path, NULL), err[300] = "cannot read";
    cJSON *plan = NULL;
    if (text)                                   /* JSON, else YAML */
        plan = json_or_yaml(text, strlen(text), err, sizeof err);
    free(text);
    if (!plan)
        fprintf(stderr, "anvil sweep: --plan %s%s%s\n", path, text ? ":" : ": ", err);
    return plan;
}

void sweep_cases_free(struct sweep_case *cases, size_t n)
{
    for (size_t i = 0; cases && i < n; i++) {
        free(cases[i].extra);
        cJSON_Delete(cases[i].extra_text);
    }
    free(cases);
}
