/* vllm_result.c — vLLM's result JSON from anvil's figures. */
#include "artifact/vllm_result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "artifact/fields.h"

static void add_rate(cJSON *o, const char *key, const void *v)
{
    double r = *(const double *)v;
    if (isinf(r))
        cJSON_AddStringToObject(o, key, "inf");
    else
        artifact_add_number(o, key, r);
}

static const struct field_codec rate_codec = {add_rate, NULL, NULL};

#define R struct vllm_result
/* vLLM's setup keys, then its benchmark's, in its order (main(), benchmark()). */
static const struct field head[] = {
    F_STR(R, date, 0),
    {"endpoint_type", FIELD_STRING, offsetof(R, backend), 0, 0, NULL, NULL, 0, 0, NULL, NULL},
    F_STR(R, backend, 0),
    F_STR(R, label, 0),
    F_STR(R, model_id, 0),
    F_STR(R, tokenizer_id, 0),
    F_WHOLE(R, num_prompts, 0, NULL),
    F_CUSTOM(R, request_rate, 0, &rate_codec),
    F_NUM(R, burstiness, 0, NULL),
    F_WHOLE(R, max_concurrency, 0, NULL),
    F_NUM(R, duration, 0, "s"),
    F_WHOLE(R, completed, 0, NULL),
    F_WHOLE(R, failed, 0, NULL),
    F_WHOLE(R, total_input_tokens, 0, "tokens"),
    F_WHOLE(R, total_output_tokens, 0, "tokens"),
    F_NUM(R, request_throughput, 0, "req/s"),
    F_NUM(R, request_goodput, 0, "req/s"),
    F_NUM(R, output_throughput, 0, "tok/s"),
    F_NUM(R, total_token_throughput, 0, "tok/s"),
    F_NUM(R, max_output_tokens_per_s, 0, "tok/s"),
    F_WHOLE(R, max_concurrent_requests, 0, NULL),
};
#undef R

/* The struct's string members are borrowed: head is written through a
 * table whose FIELD_STRING rows read const char * as char *. */
static const struct field_table head_t = {"vllm_result", head, sizeof head / sizeof head[0],
                                          sizeof(struct vllm_result), -1};

/* "99" for 99, "99.9" for 99.9: vLLM's p_word. */
static void pct_word(char *out, size_t cap, double p)
{
    if (p == floor(p))
        snprintf(out, cap, "%d", (int)p);
    else
        snprintf(out, cap, "%g", p);
}

cJSON *vllm_result_json(const struct vllm_result *r)
{
    cJSON *o = fields_to_json(&head_t, r);
    for (int i = 0; o && i < r->n_metrics; i++) {
        const struct vllm_metric *m = &r->metrics[i];
        const char *stat[] = {"mean", "median", "std"};
        const double val[] = {m->mean, m->median, m->std};
        char key[64], w[24];
        for (int s = 0; s < 3; s++) {
            snprintf(key, sizeof key, "%s_%s_ms", stat[s], m->name);
            artifact_add_number(o, key, val[s]);
        }
        for (int q = 0; q < r->n_pcts; q++) {
            pct_word(w, sizeof w, r->pcts[q]);
            snprintf(key, sizeof key, "p%s_%s_ms", w, m->name);
            artifact_add_number(o, key, m->at[q]);
        }
    }
    return o;
}

void vllm_result_path(const char *artifact_path, char *out, size_t cap)
{
    size_t n = strlen(artifact_path);
    if (n >= 5 && !strcmp(artifact_path + n - 5, ".json"))
        n -= 5;
    snprintf(out, cap, "%.*s.vllm.json", (int)n, artifact_path);
}
