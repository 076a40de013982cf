/* prepare.c — the workload of a run: dataset, prompts, and their fit to the
 * server's tokenizer (docs/METHODOLOGY.md, prompt calibration). */
#include <math.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/redact.h"
#include "run/stage.h"

struct count_ctx {
    const struct run_ctx *x;
    bool tokenize;
};

static long count_tokens(void *ud, long words, char *err, size_t errlen)
{
    struct count_ctx *k = ud;
    const struct run_config *c = k->x->c;
    struct buf p;
    buf_init(&p, 1u << 30);
    long n = -1;
    if (workload_prompt(k->x->wl, 0, words, &p) == 0)
        n = server_count_tokens(&k->x->srv, k->x->headers, c->endpoint, k->tokenize, p.data,
                                (long)(fmin(c->timeout_s, 30) * 1000), err, errlen);
    else
        snprintf(err, errlen, "prompt of %ld words is too large", words);
    buf_free(&p);
    return n;
}

/* Tokens per filler word, from the calibration steps: the slope between the
 * two most distant steps, else the one step's ratio. */
static double tokens_per_word(const struct calibration *cal)
{
    const struct calib_step *lo = &cal->steps[0], *hi = &cal->steps[0];
    for (int i = 1; i < cal->n_steps; i++) {
        if (cal->steps[i].words < lo->words) lo = &cal->steps[i];
        if (cal->steps[i].words > hi->words) hi = &cal->steps[i];
    }
    if (hi->words > lo->words && hi->tokens > lo->tokens)
        return (double)(hi->tokens - lo->tokens) / (double)(hi->words - lo->words);
    return cal->words > 0 ? (double)cal->tokens / (double)cal->words : 1;
}

/* Chooses the filler length and fits the workload. Returns the method used,
 * or NULL with err set. */
static const char *calibrate_workload(struct run_ctx *x, char *err, size_t errlen)
{
    const struct run_config *c = x->c;
    struct calibration *cal = &x->cal;
    if (x->ds.n)
        return "dataset";
    if (c->calib == CALIB_NONE)
        return workload_fit(x->wl, c->input_len, 1) == 0 ? "none" : NULL;
    struct count_ctx k = {x, c->calib != CALIB_PROBE};
    int rc = calibrate(c->input_len, count_tokens, &k, cal, err, errlen);
    if (rc != 0 && c->calib == CALIB_AUTO) {
        run_say(x, "/tokenize unusable (%s); calibrating with probe requests", err);
        k.tokenize = false;
        rc = calibrate(c->input_len, count_tokens, &k, cal, err, errlen);
    }
    if (rc != 0)
        return NULL;
    if (!cal->converged)
        run_say(x, "warning: prompts will have %ld tokens, not %ld (closest reachable)",
                cal->tokens, c->input_len);
    if (workload_fit(x->wl, cal->words, tokens_per_word(cal)) != 0) {
        snprintf(err, errlen, "out of memory building prompts");
        return NULL;
    }
    return k.tokenize ? "tokenize" : "probe";
}

int run_prepare_workload(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    char *err = x->res->error;
    size_t errlen = sizeof x->res->error;
    char why[512];
    if (c->dataset && dataset_load(c->dataset, c->multi_turn, &x->ds, why, sizeof why) != 0) {
        snprintf(err, errlen, "--dataset: %s", why);
        return -1;
    }
    struct workload_cfg wc = {
        .ro = {.endpoint = c->endpoint, .model = x->srv.model, .stream = true,
               .ignore_eos = c->ignore_eos, .continuous_usage = c->continuous_usage,
               .sampling = c->sampling, .extra_body = c->extra_body},
        .salt = x->salt, .seed = (uint64_t)c->seed, .input_len = c->input_len,
        .output_len = c->output_len, .input_range = c->input_range, .output_range = c->output_range,
        .shared_prefix_len = c->shared_prefix_len, .ds = x->ds.n ? &x->ds : NULL,
    };
    if (!(x->wl = workload_new(&wc))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!(x->calibration_method = calibrate_workload(x, why, sizeof why))) {
        snprintf(err, errlen, "prompt calibration failed: %s", why);
        if (x->secret)
            redact(err, errlen, x->secret);
        return -1;
    }
    return 0;
}
