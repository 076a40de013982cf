/* prepare.c — the workload of a run: dataset, prompts, and their fit to the
 * server's tokenizer (docs/METHODOLOGY.md, prompt calibration), measured or
 * read from --calibration-cache. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/redact.h"
#include "core/sha256.h"
#include "run/stage.h"
#include "workload/calcache.h"
#include "workload/image.h"
#include "workload/tools.h"

struct count_ctx {
    const struct run_ctx *x;
    bool tokenize;
};

/* Counts a calibration prompt of `words` filler words. Every step uses
 * calibration head 0: the steps share their start with one another (a
 * server's cache speeds the longer ones up) and with no measured prompt. */
static long count_tokens(void *ud, long words, char *err, size_t errlen)
{
    struct count_ctx *k = ud;
    const struct run_config *c = k->x->c;
    struct buf p;
    buf_init(&p, 1u << 30);
    long n = -1;
    long timeout_ms = (long)(fmin(c->transport.timeout_s, 30) * 1000);
    if (workload_calib_prompt(k->x->wl, 0, words, &p) == 0) {
        /* with tools the template renders their schema into the prompt: a
         * probe carrying them counts it */
        struct request_opts o = {.endpoint = c->transport.endpoint, .tools = k->x->tools, .tool_choice = k->x->tool_choice,
                                 .image_urls = k->x->calib_urls, .n_images = (int)c->workload.images_per_request};
        n = k->x->tools || o.n_images ? server_probe_tokens(&k->x->srv, k->x->headers, &o, p.data, timeout_ms, err, errlen)
                        : server_count_tokens(&k->x->srv, k->x->headers, c->transport.endpoint, k->tokenize, p.data,
                                              timeout_ms, err, errlen);
        if (n < 0 && calib_error_is_too_long(err, errlen))
            n = CALIB_TOO_LONG;
    } else {
        snprintf(err, errlen, "prompt of %ld words is too large", words);
    }
    buf_free(&p);
    return n;
}

/* The longest prompt and reply the workload plans must fit the context the
 * server reports (discover.h: context_len, max_input_len). Returns 0, or -1
 * with the message in err. */
static int check_fits(const struct run_ctx *x, char *err, size_t errlen)
{
    const struct run_config *c = x->c;
    long p = (long)floor((double)c->workload.input_len * (1 + c->workload.input_range));
    long k = (long)floor((double)c->workload.output_len * (1 + c->workload.output_range));
    return server_check_fit(&x->srv, p, k, err, errlen);
}

static void cache_key(const struct run_ctx *x, char *out, size_t cap)
{
    const struct run_config *c = x->c;
    char root[sizeof x->srv.display_url];
    snprintf(root, sizeof root, "%s", x->srv.display_url);
    size_t n = strlen(root);    /* the root, as the key names a server, not an API path */
    if (n >= 3 && !strcmp(root + n - 3, "/v1"))
        root[n - 3] = '\0';
    /* tools change what a prompt counts: their text's hash is part of the key */
    char endpoint[32 + SHA256_HEX_LEN];
    snprintf(endpoint, sizeof endpoint, "%s", endpoint_name(c->transport.endpoint));
    char *tools = x->tools ? cJSON_PrintUnformatted(x->tools) : NULL;
    char *choice = x->tool_choice ? cJSON_PrintUnformatted(x->tool_choice) : NULL;
    struct buf t;
    buf_init(&t, 1u << 30);
    char hex[SHA256_HEX_LEN + 1];
    if (tools && buf_printf(&t, "%s%s", tools, choice ? choice : "") == 0 && sha256_hex(t.data, t.len, hex) == 0)
        snprintf(endpoint, sizeof endpoint, "%s+tools:%.16s", endpoint_name(c->transport.endpoint), hex);
    if (c->workload.images_per_request > 0) {   /* images are prompt too */
        size_t at = strlen(endpoint);
        snprintf(endpoint + at, sizeof endpoint - at, "+images:%ldx%dx%d%s", c->workload.images_per_request, x->image_w,
                 x->image_h, x->image_format == IMAGE_JPEG ? "jpeg" : "");
    }
    buf_free(&t);
    free(tools);
    free(choice);
    struct calcache_key k = {
        .server = root, .model = x->srv.model, .endpoint = endpoint,
        .engine = x->srv.engine, .engine_version = x->srv.engine_version, .input_len = c->workload.input_len,
        .seed = (uint64_t)c->workload.seed, .shared_prefix_len = c->workload.shared_prefix_len,
    };
    calcache_key_text(&k, out, cap);
}

/* Takes the calibration from --calibration-cache when it has this run's
 * entry. Returns the method it was measured with (and fills x->cal, the
 * shared prefix), NULL with err empty when there is no entry, or NULL with
 * err set. */
static const char *from_cache(struct run_ctx *x, char *err, size_t errlen)
{
    struct calcache_entry e;
    err[0] = '\0';
    int rc = calcache_lookup(x->c->workload.calibration_cache, x->calibration_key, &e, err, errlen);
    if (rc != 1)
        return NULL;
    const char *method = !strcmp(e.method, "tokenize") ? "tokenize" : !strcmp(e.method, "probe") ? "probe" : NULL;
    if (!method || e.cal.target_tokens != x->c->workload.input_len) {
        snprintf(err, errlen, "--calibration-cache %s: the entry \"%.300s\" is not a calibration of %ld "
                 "tokens", x->c->workload.calibration_cache, x->calibration_key, x->c->workload.input_len);
        return NULL;
    }
    x->cal = e.cal;
    x->shared_prefix_tokens = e.shared_prefix_tokens;
    snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method, "%s", e.shared_prefix_method);
    x->calibration_source = "cache";
    run_say(x, "calibration from %s: %ld filler words give %ld tokens (measured by run %s)",
            x->c->workload.calibration_cache, e.cal.words, e.cal.tokens, e.run_id[0] ? e.run_id : "unknown");
    return method;
}

static void to_cache(struct run_ctx *x, const char *method)
{
    struct calcache_entry e = {.cal = x->cal, .shared_prefix_tokens = x->shared_prefix_tokens};
    snprintf(e.method, sizeof e.method, "%s", method);
    snprintf(e.shared_prefix_method, sizeof e.shared_prefix_method, "%s", x->shared_prefix_method);
    snprintf(e.run_id, sizeof e.run_id, "%s", x->res->run_id);
    char err[600];
    if (calcache_store(x->c->workload.calibration_cache, x->calibration_key, &e, err, sizeof err) != 0)
        run_say(x, "warning: %s; the calibration is not cached", err);
}

/* Calibrates against the server (tokenize, falling back to probes under
 * auto). Returns the method used, or NULL with err set. */
static const char *measure(struct run_ctx *x, char *err, size_t errlen)
{
    const struct run_config *c = x->c;
    struct calibration *cal = &x->cal;
    /* a probe asks for 1 output token */
    long limit = server_prompt_limit(&x->srv);
    /* auto asks a tokenize endpoint only where the engine has one anvil knows; tools and images
     * are counted only by real requests (the template renders them) */
    bool tokenize = !x->tools && !c->workload.images_per_request &&
                    (c->workload.calib == CALIB_TOKENIZE ||
                     (c->workload.calib == CALIB_AUTO && server_tokenize_supported(&x->srv, c->transport.endpoint)));
    struct count_ctx k = {x, tokenize};
    int rc = calibrate(c->workload.input_len, limit, count_tokens, &k, cal, err, errlen);
    if (rc == -1 && c->workload.calib == CALIB_AUTO && tokenize) {
        run_say(x, "calibrating with probe requests: the %s tokenize endpoint failed (%s)", x->srv.engine, err);
        k.tokenize = false;
        rc = calibrate(c->workload.input_len, limit, count_tokens, &k, cal, err, errlen);
    }
    if (rc == CALIB_CANNOT_FIT && x->srv.context_len > 0) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (the server reports a context of %ld tokens: %s)", x->srv.context_len,
                 x->srv.context_source);
    }
    if (rc != 0)
        return NULL;
    if (!cal->converged)
        run_say(x, "warning: prompts will have %ld tokens, not %ld (closest reachable)",
                cal->tokens, c->workload.input_len);
    x->calibration_source = "measured";
    return k.tokenize ? "tokenize" : "probe";
}

/* The tokens one image adds: the calibration's first step (no filler words,
 * with the images) against the same prompt without them. */
static void measure_image_tokens(struct run_ctx *x, long with_images)
{
    const struct run_config *c = x->c;
    struct buf p;
    buf_init(&p, 1u << 20);
    char err[600];
    struct request_opts o = {.endpoint = c->transport.endpoint, .tools = x->tools, .tool_choice = x->tool_choice};
    long without = workload_calib_prompt(x->wl, 0, 0, &p) == 0
        ? server_probe_tokens(&x->srv, x->headers, &o, p.data, (long)(fmin(c->transport.timeout_s, 30) * 1000), err, sizeof err)
        : -1;
    buf_free(&p);
    if (without >= 0 && with_images >= without)
        x->image_tokens = (double)(with_images - without) / (double)c->workload.images_per_request;
    else
        run_say(x, "warning: the tokens of an image could not be measured");
}

/* The calibration probes' images: seeded apart from every measured one. */
static int make_calib_images(struct run_ctx *x, char *err, size_t errlen)
{
    long n = x->c->workload.images_per_request;
    if (image_parse_size(x->c->workload.image_size ? x->c->workload.image_size : "512x512", &x->image_w, &x->image_h) != 0) {
        snprintf(err, errlen, "--image-size: expected WxH with sides from 1 to %d pixels, got '%s'",
                 IMAGE_MAX_SIDE, x->c->workload.image_size);
        return -1;
    }
    if (image_parse_format(x->c->workload.image_format ? x->c->workload.image_format : "png", &x->image_format) != 0) {
        snprintf(err, errlen, "--image-format: expected png or jpeg, got '%s'", x->c->workload.image_format);
        return -1;
    }
    x->calib_images = calloc((size_t)n, sizeof *x->calib_images);
    x->calib_urls = calloc((size_t)n, sizeof *x->calib_urls);
    for (long i = 0; x->calib_images && x->calib_urls && i < n; i++) {
        buf_init(&x->calib_images[i], 1u << 30);
        if (image_data_url(x->image_format, x->salt ^ 0x63616c696d67ull ^ (uint64_t)i, x->image_w, x->image_h,
                           &x->calib_images[i]) != 0)
            break;
        x->calib_urls[i] = x->calib_images[i].data;
    }
    if (!x->calib_urls || !x->calib_urls[n - 1]) {
        snprintf(err, errlen, "cannot make the calibration images (out of memory, or libpng or libjpeg failed)");
        return -1;
    }
    return 0;
}

/* ShareGPT replies get their recorded lengths unless --output-len was given:
 * each used entry's reply counted by the server's tokenizer as plain text.
 * A server that cannot count leaves --output-len (said once). */
static void sharegpt_reply_lengths(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    if (c->workload.output_len_set || strncmp(x->ds.spec, "sharegpt:", 9) != 0)
        return;
    size_t used = (size_t)(c->load.num_prompts + c->load.warmup) < x->ds.n ? (size_t)(c->load.num_prompts + c->load.warmup) : x->ds.n;
    long timeout_ms = (long)(fmin(c->transport.timeout_s, 30) * 1000);
    size_t counted = 0;
    for (size_t i = 0; i < used; i++) {
        struct dataset_entry *e = &x->ds.entries[i];
        if (!e->reply || e->max_tokens > 0)
            continue;
        char err[512];
        long n = server_count_tokens(&x->srv, x->headers, EP_COMPLETIONS, true, e->reply, timeout_ms, err, sizeof err);
        if (n < 0) {
            run_say(x, "warning: ShareGPT replies cannot be counted (%s): every request gets --output-len %ld",
                    err, c->workload.output_len);
            return;
        }
        e->max_tokens = n > 0 ? n : 1;
        counted++;
    }
    if (counted)
        run_say(x, "ShareGPT: %zu requests get their recorded reply's length as max_tokens "
                "(--output-len sets one for all)", counted);
}

/* Chooses the filler length and fits the workload. Returns the method used,
 * or NULL with err set. */
static const char *calibrate_workload(struct run_ctx *x, char *err, size_t errlen)
{
    const struct run_config *c = x->c;
    if (x->ds.n) {
        sharegpt_reply_lengths(x);
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method, "not measured: dataset prompts");
        return "dataset";
    }
    if (c->workload.calib == CALIB_NONE) {
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "not measured: --calibration none sends nothing before the run");
        return workload_fit(x->wl, c->workload.input_len, 1) == 0 ? "none" : NULL;
    }
    const char *method = NULL;
    if (c->workload.calibration_cache) {
        cache_key(x, x->calibration_key, sizeof x->calibration_key);
        if (!(method = from_cache(x, err, errlen)) && err[0])
            return NULL;
    }
    bool measured = !method;
    if (measured && !(method = measure(x, err, errlen)))
        return NULL;
    if (c->workload.prefix_hit_rate > 0 && c->workload.calib != CALIB_NONE) {
        long lead = run_template_lead(x);
        if (lead >= 0)
            workload_set_template_lead(x->wl, lead);
        else
            run_say(x, "warning: the server's tokenize gives no ids: the prefix counts every chat template "
                    "token as coming before the prompt's text, so the hit rate may fall short");
    }
    if (c->workload.images_per_request > 0 && x->cal.n_steps && x->cal.steps[0].words == 0 && x->cal.steps[0].tokens >= 0) {
        measure_image_tokens(x, x->cal.steps[0].tokens);
        if (c->workload.input_len > 0 && x->cal.steps[0].tokens > c->workload.input_len + x->cal.tolerance_tokens) {
            snprintf(err, errlen, "the images and the chat template alone are %ld tokens, more than --input-len "
                     "%ld: raise --input-len, or lower --image-size or --images-per-request",
                     x->cal.steps[0].tokens, c->workload.input_len);
            return NULL;
        }
    }
    if (workload_fit(x->wl, x->cal.words, x->cal.tokens_per_word) != 0) {
        snprintf(err, errlen, "out of memory building prompts");
        return NULL;
    }
    if (x->trace.n)
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "not measured: trace prompts share the blocks their hash_ids name");
    else if (c->workload.prefix_hit_rate > 0)
        snprintf(x->shared_prefix_method, sizeof x->shared_prefix_method,
                 "not measured: --prefix-hit-rate gives each of its groups its own prefix");
    else if (measured) {
        run_measure_shared_prefix(x, c->workload.calib != CALIB_TOKENIZE);
        if (c->workload.calibration_cache)
            to_cache(x, method);
    }
    return method;
}

int run_prepare_workload(struct run_ctx *x)
{
    const struct run_config *c = x->c;
    char *err = x->res->error;
    size_t errlen = sizeof x->res->error;
    char why[900];
    x->shared_prefix_tokens = -1;
    if (c->workload.dataset && !x->trace.n && !x->ds.n && dataset_load(c->workload.dataset, c->workload.multi_turn, &x->ds, why, sizeof why) != 0) {
        snprintf(err, errlen, "--dataset: %s", why);
        return -1;
    }
    if (x->ds.images && c->transport.endpoint != EP_CHAT) {
        snprintf(err, errlen, "--dataset %s names images: they go with the chat endpoint", c->workload.dataset);
        return -1;
    }
    if (c->workload.tools_file && !(x->tools = tools_load(c->workload.tools_file, why, sizeof why))) {
        snprintf(err, errlen, "--tools: %s", why);
        return -1;
    }
    if (c->workload.tool_choice && !(x->tool_choice = tool_choice_parse(c->workload.tool_choice, x->tools, err, errlen)))
        return -1;
    if (c->workload.images_per_request > 0 && make_calib_images(x, err, errlen) != 0)
        return -1;
    struct workload_cfg wc = {
        .ro = {.endpoint = c->transport.endpoint, .model = x->srv.model, .stream = true,
               .ignore_eos = c->workload.ignore_eos, .continuous_usage = run_continuous_usage(x),
               .sampling = c->workload.sampling, .extra_body = c->workload.extra_body,
               .tools = x->tools, .tool_choice = x->tool_choice},
        .salt = x->salt, .seed = (uint64_t)c->workload.seed, .input_len = c->workload.input_len,
        .output_len = c->workload.output_len, .input_range = c->workload.input_range, .output_range = c->workload.output_range,
        .shared_prefix_len = c->workload.shared_prefix_len, .ds = x->ds.n ? &x->ds : NULL,
        .prefix_groups = c->workload.prefix_hit_rate > 0 ? (c->workload.prefix_groups > 1 ? c->workload.prefix_groups : 1) : 0,
        .trace = x->trace.n ? &x->trace : NULL,
        .images = (int)c->workload.images_per_request, .image_w = x->image_w, .image_h = x->image_h,
        .image_format = x->image_format,
    };
    if (!(x->wl = workload_new(&wc))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* refused before any request, calibration probes included; none sends
     * what was asked for: a server's refusals are then the requests'
     * recorded failures, and a prompt it cut fails as prompt_truncated */
    if (!x->ds.n && c->workload.calib != CALIB_NONE && check_fits(x, err, errlen) != 0) {
        x->res->refused = true;
        secrets_scrub(&x->secrets, err, errlen);
        return -1;
    }
    const char *method = calibrate_workload(x, why, sizeof why);
    if (c->workload.images_per_request > 0)
        x->images_meta = (struct bench_images){true, c->workload.images_per_request, x->image_w, x->image_h,
                                               x->image_tokens, (char *)image_format_name(x->image_format)};
    if (!(x->calibration_method = method)) {
        snprintf(err, errlen, "prompt calibration failed: %s", why);
        secrets_scrub(&x->secrets, err, errlen);
        return -1;
    }
    return 0;
}
