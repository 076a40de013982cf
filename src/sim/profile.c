/* profile.c — engine parameters: defaults, the flag/profile table, JSON
 * profiles (see profile.h). */
#include "sim/profile.h"

#include "core/file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum param_kind { P_INT, P_DOUBLE, P_BOOL, P_ACCEPT };

struct param {
    const char *key;
    enum param_kind kind;
    size_t offset;
    double lo, hi;          /* inclusive range of the value */
    const char *metavar;
    const char *help;
};

#define OFF(f) offsetof(struct sim_engine_params, f)

static const struct param params[] = {
    {"max_num_seqs", P_INT, OFF(max_num_seqs), 1, 1 << 20, "N",
     "sequences running at once (default 256)"},
    {"max_num_batched_tokens", P_INT, OFF(max_num_batched_tokens), 1, 1 << 24, "TOKENS",
     "token budget of one engine step (default 8192)"},
    {"kv_cache_tokens", P_INT, OFF(kv_cache_tokens), 1, 1e12, "TOKENS",
     "KV cache capacity in tokens (default 524288)"},
    {"block_size", P_INT, OFF(block_size), 1, 1 << 16, "TOKENS",
     "tokens per KV block (default 16)"},
    {"decode_base_ms", P_DOUBLE, OFF(decode_base_ms), 0, 86400e3, "MS",
     "fixed cost of every step, ms (default 5)"},
    {"decode_ms_per_seq", P_DOUBLE, OFF(decode_ms_per_seq), 0, 86400e3, "MS",
     "step cost per sequence in the step, ms (default 0.05)"},
    {"attn_ms_per_ktok", P_DOUBLE, OFF(attn_ms_per_ktok), 0, 86400e3, "MS",
     "step cost per 1000 context tokens attended, ms (default 0.02)"},
    {"prefill_tok_s", P_DOUBLE, OFF(prefill_tok_s), 0, 1e12, "TOK/S",
     "prefill throughput in tokens/s, 0 = free (default 20000)"},
    {"prefill_base_ms", P_DOUBLE, OFF(prefill_base_ms), 0, 86400e3, "MS",
     "extra cost of a step that holds prefill tokens, ms (default 0)"},
    {"draft_ms_per_token", P_DOUBLE, OFF(draft_ms_per_token), 0, 86400e3, "MS",
     "step cost per speculative draft token, ms (default 0)"},
    {"frontend_ms", P_DOUBLE, OFF(frontend_ms), 0, 86400e3, "MS",
     "serial per-request frontend time before the scheduler sees a request, ms (default 0)"},
    {"enable_prefix_caching", P_BOOL, OFF(enable_prefix_caching), 0, 1, NULL,
     "reuse KV blocks of identical prompt prefixes (default off)"},
    {"num_speculative_tokens", P_INT, OFF(num_speculative_tokens), 0, SIM_SPEC_MAX, "K",
     "draft tokens per decode step, 0..16 (default 0: no speculative decoding)"},
    {"spec_acceptance", P_ACCEPT, OFF(spec_acceptance), 0, 1, "P[,P...]",
     "acceptance rate of each draft position (one value: P, P^2, P^3...; default 0.7)"},
};

void sim_engine_params_default(struct sim_engine_params *p)
{
    *p = (struct sim_engine_params){
        .max_num_seqs = 256, .max_num_batched_tokens = 8192, .kv_cache_tokens = 524288,
        .block_size = 16, .decode_base_ms = 5, .decode_ms_per_seq = 0.05,
        .attn_ms_per_ktok = 0.02, .prefill_tok_s = 20000,
    };
    for (int i = 0; i < SIM_SPEC_MAX; i++)
        p->spec_acceptance[i] = pow(0.7, i + 1);
}

size_t sim_param_count(void) { return sizeof params / sizeof *params; }
const char *sim_param_key(size_t i) { return params[i].key; }
const char *sim_param_help(size_t i) { return params[i].help; }
const char *sim_param_metavar(size_t i) { return params[i].metavar; }

static int want(char *err, size_t cap, const struct param *pm, const char *got)
{
    char range[96];
    if (pm->kind == P_INT)
        snprintf(range, sizeof range, "an integer %.0f..%.0f", pm->lo, pm->hi);
    else if (pm->kind == P_ACCEPT)
        snprintf(range, sizeof range, "probabilities 0..1, non-increasing, at most %d", SIM_SPEC_MAX);
    else
        snprintf(range, sizeof range, "a number %g..%g", pm->lo, pm->hi);
    snprintf(err, cap, "expected %s, got '%s'", range, got);
    return -1;
}

/* A single value (already range-checked) into its field. */
static void store(struct sim_engine_params *p, const struct param *pm, double v)
{
    char *field = (char *)p + pm->offset;
    if (pm->kind == P_INT)
        *(int64_t *)field = (int64_t)v;
    else if (pm->kind == P_BOOL)
        *(bool *)field = v != 0;
    else
        *(double *)field = v;
}

/* A list of acceptance rates. One value P means P^i at position i (each
 * draft accepted with probability P given the previous one was); a list
 * gives the unconditional rate per position, as vLLM's per-position
 * counters report it, so it may not increase. */
static int store_accept(struct sim_engine_params *p, const double *v, size_t n)
{
    if (n == 0 || n > SIM_SPEC_MAX)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(v[i] >= 0 && v[i] <= 1) || (i > 0 && v[i] > v[i - 1]))
            return -1;
    for (int i = 0; i < SIM_SPEC_MAX; i++)
        p->spec_acceptance[i] = n == 1 ? pow(v[0], i + 1) : (size_t)i < n ? v[i] : 0;
    return 0;
}

static int parse_accept_text(struct sim_engine_params *p, const char *text)
{
    double v[SIM_SPEC_MAX];
    size_t n = 0;
    const char *s = text;
    while (*s) {
        char *end;
        errno = 0;
        if (n == SIM_SPEC_MAX)
            return -1;
        v[n++] = strtod(s, &end);
        if (errno || end == s || (*end && *end != ','))
            return -1;
        s = *end ? end + 1 : end;
    }
    return store_accept(p, v, n);
}

int sim_param_set_text(struct sim_engine_params *p, size_t i, const char *text, char *err,
                       size_t cap)
{
    const struct param *pm = &params[i];
    if (pm->kind == P_BOOL) {
        store(p, pm, 1);
        return 0;
    }
    if (pm->kind == P_ACCEPT)
        return parse_accept_text(p, text) ? want(err, cap, pm, text) : 0;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < pm->lo || v > pm->hi ||
        (pm->kind == P_INT && v != floor(v)))
        return want(err, cap, pm, text);
    store(p, pm, v);
    return 0;
}

static const struct param *find_param(const char *key)
{
    for (size_t i = 0; i < sim_param_count(); i++)
        if (!strcmp(params[i].key, key))
            return &params[i];
    return NULL;
}

/* One "key": value pair of a profile. */
static int apply_json(struct sim_engine_params *p, const cJSON *item, char *err, size_t cap)
{
    const struct param *pm = find_param(item->string);
    if (!pm) {
        snprintf(err, cap, "unknown key \"%s\"", item->string);
        return -1;
    }
    char *text = cJSON_PrintUnformatted(item);
    int rc = 0;
    if (pm->kind == P_BOOL && cJSON_IsBool(item))
        store(p, pm, cJSON_IsTrue(item));
    else if (pm->kind == P_ACCEPT && cJSON_IsArray(item)) {
        double v[SIM_SPEC_MAX];
        int n = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, item) {
            if (n == SIM_SPEC_MAX || !cJSON_IsNumber(e))
                n = SIM_SPEC_MAX + 1;
            else
                v[n++] = e->valuedouble;
        }
        rc = n <= SIM_SPEC_MAX && store_accept(p, v, (size_t)n) == 0 ? 0 : -1;
    } else if (pm->kind == P_ACCEPT && cJSON_IsNumber(item))
        rc = store_accept(p, &item->valuedouble, 1);
    else if ((pm->kind == P_INT || pm->kind == P_DOUBLE) && cJSON_IsNumber(item)) {
        char num[64];
        snprintf(num, sizeof num, "%.17g", item->valuedouble);
        rc = sim_param_set_text(p, (size_t)(pm - params), num, err, cap);
    } else
        rc = -1;
    if (rc) {
        char why[256];
        want(why, sizeof why, pm, text ? text : "?");
        snprintf(err, cap, "\"%s\": %s", pm->key, pm->kind == P_BOOL ? "expected true or false" : why);
    }
    cJSON_free(text);
    return rc;
}

int sim_profile_load(const char *path, struct sim_engine_params *p, char *err, size_t cap)
{
    size_t len = 0;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, cap, "--profile '%s': %s", path, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    struct sim_engine_params tmp = *p;
    char why[384] = "not a JSON object";
    int rc = cJSON_IsObject(root) ? 0 : -1;
    const cJSON *item;
    cJSON *obj = rc == 0 ? root : NULL;
    cJSON_ArrayForEach(item, obj) {
        if (!strcmp(item->string, "description") || !strcmp(item->string, "fitted_to"))
            continue;
        if ((rc = apply_json(&tmp, item, why, sizeof why)) != 0)
            break;
    }
    cJSON_Delete(root);
    if (rc) {
        snprintf(err, cap, "--profile '%s': %s", path, why);
        return -1;
    }
    *p = tmp;
    return 0;
}

int sim_engine_params_check(const struct sim_engine_params *p, int64_t max_model_len, char *err,
                            size_t cap)
{
    int64_t blocks = p->kv_cache_tokens / p->block_size;
    if (blocks < 1) {
        snprintf(err, cap, "--kv-cache-tokens %lld holds no block of --block-size %lld",
                 (long long)p->kv_cache_tokens, (long long)p->block_size);
        return -1;
    }
    /* vLLM refuses to start when one max-length sequence cannot fit. */
    int64_t need = (max_model_len + p->num_speculative_tokens + p->block_size - 1) / p->block_size;
    if (need > blocks) {
        snprintf(err, cap, "one sequence of --max-model-len %lld needs %lld KV blocks, but "
                 "--kv-cache-tokens %lld gives only %lld; raise --kv-cache-tokens or lower "
                 "--max-model-len", (long long)max_model_len, (long long)need,
                 (long long)p->kv_cache_tokens, (long long)blocks);
        return -1;
    }
    return 0;
}
