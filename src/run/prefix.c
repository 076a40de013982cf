/* prefix.c — how many tokens two measured prompts share at their start: the
 * part of every prompt a server's prefix cache may reuse across requests.
 * Expected: the chat template's own tokens before the user's text (plus
 * --shared-prefix-len), nothing of the prompts themselves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "run/stage.h"

/* Filler words in the prompts compared: the shared start is decided by the
 * first few tokens; more only costs the server work. */
#define PREFIX_FILLER_WORDS 16
/* Filler words of the cached_tokens probes: several whole cache blocks. */
#define PREFIX_PROBE_WORDS 64

/* The token ids the server's tokenize gives for prompt (discover.h). */
static long *tokenize_ids(const struct run_ctx *x, const char *prompt, long *n)
{
    char err[512];
    long timeout_ms = (long)(fmin(x->c->transport.timeout_s, 30) * 1000);
    return server_tokenize_ids(&x->srv, x->headers, x->c->transport.endpoint, prompt, timeout_ms, n, err, sizeof err);
}

/* Measured prompts 0 and 1 through /tokenize. Returns the shared start in
 * tokens, or -1 when the server gives no usable ids. */
static long by_tokenize(const struct run_ctx *x)
{
    long *ids[2] = {NULL, NULL}, n[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        struct buf p;
        buf_init(&p, 1u << 30);
        if (workload_prompt(x->wl, i, PREFIX_FILLER_WORDS, &p) == 0)
            ids[i] = tokenize_ids(x, p.data, &n[i]);
        buf_free(&p);
    }
    long shared = -1;
    /* fewer ids than filler words: not this prompt's tokens (e.g. a
     * /tokenize that ignored the chat messages) */
    if (ids[0] && ids[1] && n[0] >= PREFIX_FILLER_WORDS && n[1] >= PREFIX_FILLER_WORDS)
        for (shared = 0; shared < n[0] && shared < n[1] && ids[0][shared] == ids[1][shared];)
            shared++;
    free(ids[0]);
    free(ids[1]);
    return shared;
}

/* usage.prompt_tokens_details.cached_tokens of a non-streamed max_tokens 1
 * request for calibration prompt k, or -1 when the reply has none. */
static long probe_cached(const struct run_ctx *x, long k)
{
    struct request_opts o = {.endpoint = x->c->transport.endpoint, .model = x->srv.model, .max_tokens = 1};
    struct buf p;
    buf_init(&p, 1u << 30);
    char *body = workload_calib_prompt(x->wl, k, PREFIX_PROBE_WORDS, &p) == 0 ? request_body(&o, p.data) : NULL;
    buf_free(&p);
    char url[600];
    snprintf(url, sizeof url, "%s%s", x->srv.base_url, endpoint_path(x->c->transport.endpoint));
    char err[512];
    long status;
    cJSON *reply = body ? server_fetch_json(url, x->headers, body, (long)(fmin(x->c->transport.timeout_s, 30) * 1000),
                                            &status, err, sizeof err) : NULL;
    free(body);
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(reply, "usage"),
                                                            "prompt_tokens_details");
    const cJSON *cached = cJSON_GetObjectItemCaseSensitive(details, "cached_tokens");
    long v = cJSON_IsNumber(cached) && cached->valuedouble >= 0 ? (long)cached->valuedouble : -1;
    cJSON_Delete(reply);
    return v;
}

long run_template_lead(const struct run_ctx *x)
{
    return by_tokenize(x);
}

void run_measure_shared_prefix(struct run_ctx *x, bool may_probe)
{
    x->shared_prefix_tokens = by_tokenize(x);
    if (x->shared_prefix_tokens >= 0) {
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method, "tokenize");
        return;
    }
    if (!may_probe) {
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "not measured: /tokenize gave no token ids, and --calibration tokenize sends no probes");
        return;
    }
    /* calibration heads 1 and 2: they share with no measured prompt, nor
     * with the calibration steps (head 0) */
    if (probe_cached(x, 1) >= 0)
        x->shared_prefix_tokens = probe_cached(x, 2);
    if (x->shared_prefix_tokens >= 0)
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "cached_tokens (whole cache blocks only: a lower bound)");
    else
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "not measured: /tokenize gave no token ids and the server reports no cached_tokens");
}
