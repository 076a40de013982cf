/* compat.c — `vllm bench serve`'s vocabulary for the same settings, so its
 * users' command lines work: --host/--port, --base-url without /v1,
 * --endpoint as a path, --backend, --dataset-name/--dataset-path,
 * --result-dir/--result-filename. */
#include <stdio.h>
#include <string.h>

#include "net/url.h"
#include "run/run.h"

/* vLLM's backends that speak /v1/chat/completions; the others it sends to
 * /v1/completions. Audio, embedding and pooling backends measure something
 * else and are refused. */
static const char *const chat_backends[] = {"openai-chat", "vllm-chat", NULL};
static const char *const completion_backends[] = {
    "vllm", "openai", "sglang", "tgi", "lmdeploy", "deepspeed-mii", "tensorrt-llm", "scalellm",
    "llama.cpp", NULL};

static bool listed(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (!strcmp(*list, s))
            return true;
    return false;
}

/* The endpoint from --endpoint (a name or a path) and --backend. A path
 * ending in /chat/completions or /completions also gives the API prefix that
 * precedes it ("/v1"), stored in prefix. */
static int resolve_endpoint(struct run_config *c, char *prefix, size_t cap, char *err, size_t errlen)
{
    const struct run_compat *k = &c->compat;
    enum endpoint from_backend = EP_CHAT;
    if (k->backend) {
        if (listed(chat_backends, k->backend))
            from_backend = EP_CHAT;
        else if (listed(completion_backends, k->backend))
            from_backend = EP_COMPLETIONS;
        else {
            snprintf(err, errlen, "--backend %s: not a text-generation backend anvil measures "
                     "(openai-chat, vllm-chat; or vllm, openai, sglang, tgi, ... for completions)",
                     k->backend);
            return -1;
        }
        c->transport.endpoint = from_backend;
    }
    prefix[0] = 0;
    if (!k->endpoint)
        return 0;
    enum endpoint ep;
    if (endpoint_parse(k->endpoint, &ep) != 0) {
        size_t n = strlen(k->endpoint), chat = strlen("/chat/completions"), comp = strlen("/completions");
        if (k->endpoint[0] == '/' && n >= chat && !strcmp(k->endpoint + n - chat, "/chat/completions"))
            ep = EP_CHAT, n -= chat;
        else if (k->endpoint[0] == '/' && n >= comp && !strcmp(k->endpoint + n - comp, "/completions"))
            ep = EP_COMPLETIONS, n -= comp;
        else {
            snprintf(err, errlen, "--endpoint %s: expected chat, completions, or a path ending in "
                     "/chat/completions or /completions", k->endpoint);
            return -1;
        }
        if (n >= cap) {
            snprintf(err, errlen, "--endpoint: the path is longer than %zu bytes", cap - 1);
            return -1;
        }
        snprintf(prefix, cap, "%.*s", (int)n, k->endpoint);
    }
    if (k->backend && ep != from_backend) {
        snprintf(err, errlen, "--backend %s calls %s but --endpoint %s calls %s", k->backend,
                 endpoint_name(from_backend), k->endpoint, endpoint_name(ep));
        return -1;
    }
    c->transport.endpoint = ep;
    return 0;
}

/* The OpenAI base URL from --base-url or --host/--port, and the prefix an
 * endpoint path brought. */
static int resolve_base(struct run_config *c, const char *prefix, char *err, size_t errlen)
{
    struct run_compat *k = &c->compat;
    char root[512];
    if ((c->transport.base_url && strlen(c->transport.base_url) >= sizeof root) || (k->host && strlen(k->host) >= 256)) {
        snprintf(err, errlen, "the server's URL is longer than %zu bytes", sizeof root - 1);
        return -1;
    }
    if (k->host || k->port) {
        if (c->transport.base_url) {
            snprintf(err, errlen, "--base-url and --host/--port both say where the server is: give one");
            return -1;
        }
        snprintf(root, sizeof root, "http://%s:%ld", k->host ? k->host : "127.0.0.1",
                 k->port ? k->port : 8000);
    } else {
        snprintf(root, sizeof root, "%s", c->transport.base_url ? c->transport.base_url : RUN_DEFAULT_BASE_URL);
    }
    size_t n = strlen(root);
    while (n > 0 && root[n - 1] == '/')
        root[--n] = 0;
    char path[sizeof root];
    bool parsed = url_path(root, path, sizeof path) == 0;   /* a URL curl refuses is kept as given */
    if (*prefix) {
        /* vLLM joins --base-url and --endpoint; a base that already ends in the prefix keeps it once */
        size_t pl = strlen(prefix);
        if (strlen(path) >= pl && !strcmp(root + n - pl, prefix))
            root[n - pl] = 0;
        snprintf(k->base_url_buf, sizeof k->base_url_buf, "%s%s", root, prefix);
    } else {
        /* a bare host:port means the OpenAI API at its usual /v1; a URL with a path is taken as is */
        snprintf(k->base_url_buf, sizeof k->base_url_buf, "%s%s", root, *path || !parsed ? "" : "/v1");
    }
    c->transport.base_url = k->base_url_buf;
    return 0;
}

static int resolve_dataset(struct run_config *c, char *err, size_t errlen)
{
    struct run_compat *k = &c->compat;
    const char *name = k->dataset_name;
    if (!name && !k->dataset_path)
        return 0;
    if (c->workload.dataset) {
        snprintf(err, errlen, "--dataset and --dataset-name/--dataset-path both name the prompts: give one");
        return -1;
    }
    if (!name)
        name = "custom";
    if (!strcmp(name, "random")) {
        if (!k->dataset_path)
            return 0;
        snprintf(err, errlen, "--dataset-name random makes synthetic prompts: --dataset-path has no use");
        return -1;
    }
    const char *kind = !strcmp(name, "sharegpt") ? "sharegpt" : !strcmp(name, "custom") ? "jsonl" : NULL;
    if (!kind) {
        snprintf(err, errlen, "--dataset-name %s: anvil reads random, sharegpt and custom (JSON Lines)",
                 name);
        return -1;
    }
    if (!k->dataset_path) {
        snprintf(err, errlen, "--dataset-name %s needs --dataset-path FILE", name);
        return -1;
    }
    snprintf(k->dataset_buf, sizeof k->dataset_buf, "%s:%s", kind, k->dataset_path);
    c->workload.dataset = k->dataset_buf;
    return 0;
}

static int resolve_out(struct run_config *c, char *err, size_t errlen)
{
    struct run_compat *k = &c->compat;
    if (!k->result_dir && !k->result_filename)
        return 0;
    if (c->out.path) {
        snprintf(err, errlen, "--out and --result-dir/--result-filename both name the artifact: give one");
        return -1;
    }
    if (k->result_filename) {
        snprintf(k->out_buf, sizeof k->out_buf, "%s%s%s", k->result_dir ? k->result_dir : "",
                 k->result_dir ? "/" : "", k->result_filename);
        c->out.path = k->out_buf;
    } else {
        c->out.dir = k->result_dir;
    }
    return 0;
}

int run_config_resolve(struct run_config *c, char *err, size_t errlen)
{
    char prefix[256];
    if (resolve_endpoint(c, prefix, sizeof prefix, err, errlen) || resolve_base(c, prefix, err, errlen) ||
        resolve_dataset(c, err, errlen) || resolve_out(c, err, errlen))
        return -1;
    if (c->compat.tokenizer)
        fprintf(c->log ? c->log : stderr, "%s: note: --tokenizer is not needed: prompt lengths are "
                "fitted to the server's own tokenizer and chat template (--calibration)\n",
                c->name ? c->name : "anvil");
    return 0;
}
