/* test_sim_flavor.c — `anvil sim --flavor vllm|sglang|llamacpp`: endpoints,
 * stream shapes and /metrics names as the recorded transcripts in
 * tests/data/fixtures/ show them. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static cJSON *jget(const cJSON *o, const char *path) { return harness_json_path(o, path); }

static void start_flavor(struct sim_proc *p, const char *flavor)
{
    cr_assert_eq(sim_start(p, (const char *const[]){"--flavor", flavor, "--model", "m", NULL}), 0);
}

static void stop_clean(struct sim_proc *p)
{
    cr_assert_eq(sim_stop(p), 0, "sim did not exit 0 on SIGTERM (sanitizer report above?)");
}

static cJSON *get_json(const struct sim_proc *p, const char *path, long want_status)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", p->root_url, path);
    struct http_reply r;
    cr_assert_eq(http_get(url, &r), 0);
    cr_expect_eq(r.status, want_status, "GET %s: %ld", path, r.status);
    cJSON *j = cJSON_Parse(r.body);
    http_reply_free(&r);
    return j;
}

/* POSTs a chat stream and returns its events (JSON, [DONE] excluded). */
static int chat_events(const struct sim_proc *p, const char *extra, cJSON **ev, int cap, char **raw)
{
    char url[256], body[512];
    snprintf(url, sizeof url, "%s/chat/completions", p->base_url);
    snprintf(body, sizeof body, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":4,"
             "\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}%s}", extra);
    struct http_reply r;
    cr_assert_eq(http_post(url, body, &r), 0);
    cr_assert_eq(r.status, 200);
    int n = 0;
    for (const char *s = r.body; (s = strstr(s, "data: ")) && n < cap; s += 6) {
        const char *end = strstr(s, "\n\n");
        if (strncmp(s + 6, "[DONE]", 6))
            ev[n++] = cJSON_ParseWithLength(s + 6, (size_t)(end - s - 6));
    }
    *raw = r.body;   /* the caller frees it; the rest of r goes now */
    r.body = NULL;
    http_reply_free(&r);
    return n;
}

static void free_events(cJSON **ev, int n, char *raw)
{
    for (int i = 0; i < n; i++)
        cJSON_Delete(ev[i]);
    free(raw);
}

Test(sim_flavor, vllm_endpoints_and_metrics, .timeout = 60)
{
    struct sim_proc p;
    start_flavor(&p, "vllm");
    cJSON *v = get_json(&p, "/version", 200);
    cr_expect_str_eq(cJSON_GetStringValue(jget(v, "version")), "0.21.0");
    cr_expect_null(jget(v, "server"), "a real vLLM does not name anvil-sim");
    cJSON_Delete(v);
    cJSON *m = get_json(&p, "/v1/models", 200);
    cr_expect_str_eq(cJSON_GetStringValue(jget(m, "data.0.owned_by")), "vllm");
    cr_expect_str_eq(cJSON_GetStringValue(jget(m, "data.0.permission.0.object")), "model_permission");
    cJSON_Delete(m);
    cJSON *ev[16];
    char *raw;
    int n = chat_events(&p, "", ev, 16, &raw);
    cr_expect(strstr(raw, "\"prompt_token_ids\":null,\"prompt_text\":null}") != NULL, "vLLM role chunk");
    cr_expect(strstr(raw, "\"system_fingerprint\":\"vllm-0.21.0-") != NULL);
    cr_expect_eq(jget(ev[n - 1], "usage.completion_tokens")->valuedouble, 4);
    free_events(ev, n, raw);
    cr_expect_eq(harness_metric(p.root_url, "vllm:num_requests_running{engine=\"0\",model_name=\"m\"}"), 0);
    cr_expect_eq(harness_metric(p.root_url, "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"}"), 4);
    char url[256];
    snprintf(url, sizeof url, "%s/metrics", p.root_url);
    struct http_reply r;
    cr_assert_eq(http_get(url, &r), 0);
    cr_expect(strstr(r.body, "vllm:cache_config_info{block_size=\"16\"") != NULL);
    cr_expect(strstr(r.body, "num_gpu_blocks=\"32768\"") != NULL);
    cr_expect(strstr(r.body, "anvil_sim:") == NULL, "no anvil-only series");
    http_reply_free(&r);
    stop_clean(&p);
}

Test(sim_flavor, sglang_stream_and_endpoints, .timeout = 60)
{
    struct sim_proc p;
    start_flavor(&p, "sglang");
    cJSON *v = get_json(&p, "/version", 404);
    cr_expect_str_eq(cJSON_GetStringValue(jget(v, "detail")), "Not Found");
    cJSON_Delete(v);
    cJSON *info = get_json(&p, "/get_server_info", 200);
    cr_expect_eq(jget(info, "max_total_num_tokens")->valuedouble, 524288);
    cr_expect_str_eq(cJSON_GetStringValue(jget(info, "version")), "0.5.12");
    cr_expect(cJSON_IsNumber(jget(info, "internal_states.0.last_gen_throughput")));
    cJSON_Delete(info);
    cJSON *m = get_json(&p, "/v1/models", 200);
    cr_expect_str_eq(cJSON_GetStringValue(jget(m, "data.0.owned_by")), "sglang");
    cJSON_Delete(m);
    cJSON *ev[16];
    char *raw;
    int n = chat_events(&p, ",\"model\":\"whatever\"", ev, 16, &raw);
    cr_assert_eq(n, 1 + 4 + 1 + 1, "role, 4 tokens, finish, usage");
    cr_expect(cJSON_IsNull(jget(ev[0], "choices.0.delta.reasoning_content")));
    cr_expect_str_eq(cJSON_GetStringValue(jget(ev[0], "choices.0.delta.role")), "assistant");
    cr_expect_eq(strlen(cJSON_GetStringValue(jget(ev[0], "id"))), 32, "bare 32-hex id");
    cr_expect_str_eq(cJSON_GetStringValue(jget(ev[0], "model")), "whatever", "SGLang echoes the model");
    for (int i = 1; i <= 4; i++)
        cr_expect(cJSON_IsNull(jget(ev[i], "choices.0.finish_reason")), "finish never on content");
    cr_expect_null(jget(ev[5], "choices.0.delta.content"), "finish chunk has an empty delta");
    cr_expect_str_eq(cJSON_GetStringValue(jget(ev[5], "choices.0.finish_reason")), "length");
    cr_expect(cJSON_IsNull(jget(ev[5], "choices.0.matched_stop")));
    cr_expect(cJSON_IsNull(jget(ev[6], "usage.prompt_tokens_details")));
    cr_expect_eq(jget(ev[6], "usage.reasoning_tokens")->valuedouble, 0);
    cr_expect(strstr(raw, "system_fingerprint") == NULL);
    free_events(ev, n, raw);
    char url[256];
    snprintf(url, sizeof url, "%s/v1/tokenize", p.root_url);
    struct http_reply r;
    cr_assert_eq(http_post(url, "{\"prompt\":\"Hello, world!\"}", &r), 0);
    cr_expect(strncmp(r.body, "{\"tokens\":[", 11) == 0, "%s", r.body);
    cr_expect(strstr(r.body, "],\"count\":3,\"max_model_len\":131072}") != NULL,
              "tokens, count, the tokenizer's nominal max_model_len (not the server's 32768): %s", r.body);
    http_reply_free(&r);
    cr_assert_eq(http_post(url, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", &r), 0);
    cr_expect_eq(r.status, 400, "SGLang's tokenize has no chat form");
    cr_expect(strstr(r.body, "\"object\":\"error\"") != NULL, "%s", r.body);
    http_reply_free(&r);
    snprintf(url, sizeof url, "%s/tokenize", p.root_url);
    cr_assert_eq(http_post(url, "{\"prompt\":\"Hello, world!\"}", &r), 0);
    cr_expect_eq(r.status, 404, "this build has /v1/tokenize only (error_responses.txt case 4)");
    cr_expect_str_eq(r.body, "{\"detail\":\"Not Found\"}");
    http_reply_free(&r);
    cr_expect_eq(harness_metric(p.root_url, "sglang:num_running_reqs{engine_type=\"unified\",model_name=\"m\","
                                "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"}"), 0);
    cr_expect_eq(harness_metric(p.root_url, "sglang:generation_tokens_total{engine_type=\"unified\","
                                "is_streaming=\"true\",model_name=\"m\"}"), 4);
    stop_clean(&p);
}

Test(sim_flavor, llamacpp_stream_and_endpoints, .timeout = 60)
{
    struct sim_proc p;
    start_flavor(&p, "llamacpp");
    cJSON *m = get_json(&p, "/v1/models", 200);
    cr_expect_str_eq(cJSON_GetStringValue(jget(m, "data.0.owned_by")), "llamacpp");
    cr_expect(cJSON_IsNumber(jget(m, "data.0.meta.n_ctx_train")));
    cJSON_Delete(m);
    cJSON *props = get_json(&p, "/props", 200);
    cr_expect_eq(jget(props, "total_slots")->valuedouble, 256);
    cJSON_Delete(props);
    cJSON *ev[16];
    char *raw;
    int n = chat_events(&p, "", ev, 16, &raw);
    cr_assert_eq(n, 4 + 1, "no role chunk; 4 tokens; final chunk (no separate usage chunk)");
    cr_expect_str_eq(cJSON_GetStringValue(jget(ev[0], "object")), "chat.completion.chunk");
    cr_expect(strncmp(cJSON_GetStringValue(jget(ev[0], "id")), "chatcmpl-", 9) == 0);
    cr_expect_eq(strlen(cJSON_GetStringValue(jget(ev[0], "id"))), 9 + 32);
    cr_expect_str_eq(cJSON_GetStringValue(jget(ev[0], "system_fingerprint")), "b0-unknown");
    const char *order = "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":";
    cr_expect(strncmp(raw, order, strlen(order)) == 0, "llama.cpp key order: %.90s", raw);
    cr_expect_str_eq(cJSON_GetStringValue(jget(ev[4], "choices.0.finish_reason")), "length");
    cr_expect_eq(jget(ev[4], "usage.completion_tokens")->valuedouble, 4);
    cr_expect_eq(jget(ev[4], "timings.predicted_n")->valuedouble, 4);
    cr_expect(strstr(raw, "data: [DONE]") != NULL);
    free_events(ev, n, raw);
    char url[256];
    snprintf(url, sizeof url, "%s/metrics", p.root_url);
    struct http_reply r;
    cr_assert_eq(http_get(url, &r), 0);
    cr_expect(strstr(r.body, "\nllamacpp:tokens_predicted_total 4\n") != NULL, "%s", r.body);
    cr_expect(strstr(r.body, "llamacpp:requests_processing 0\n") != NULL);
    http_reply_free(&r);
    stop_clean(&p);
}

Test(sim_flavor, anvil_run_detects_flavor, .timeout = 60)
{
    const char *flavors[] = {"vllm", "sglang"};
    for (int f = 0; f < 2; f++) {
        struct sim_proc p;
        cr_assert_eq(sim_start(&p, (const char *const[]){"--flavor", flavors[f], "--decode-base-ms", "1",
                                                         "--prefill-tok-s", "0", NULL}), 0);
        char out[64];
        cr_assert_eq(harness_tmpfile(out, sizeof out), 0);
        int st;
        const char *argv[] = {harness_anvil_bin(), "run", "--base-url", p.base_url, "--num-prompts", "4",
                              "--input-len", "32", "--output-len", "8", "--out", out, NULL};
        char so[8192];
        cr_assert_eq(run_cmd(argv, so, sizeof so, &st), 0);
        cr_expect_eq(st, 0, "anvil run against --flavor %s", flavors[f]);
        char *text = harness_read_file(out, NULL);
        unlink(out);
        cJSON *a = text ? cJSON_Parse(text) : NULL;
        free(text);
        cr_expect_str_eq(cJSON_GetStringValue(jget(a, "engine")), flavors[f]);
        cJSON_Delete(a);
        stop_clean(&p);
    }
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* POSTs body to root_url + path; the reply (caller frees). */
static struct http_reply post_root(const struct sim_proc *p, const char *path, const char *body)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", p->root_url, path);
    struct http_reply r;
    cr_assert_eq(http_post(url, body, &r), 0);
    return r;
}

Test(sim_flavor, llamacpp_tokenize_and_apply_template_as_the_fixtures, .timeout = 60)
{
    struct sim_proc p;
    start_flavor(&p, "llamacpp");
    /* tokenize_default.txt: ids only, no BOS (add_special defaults to false), no count */
    struct http_reply r = post_root(&p, "/tokenize", "{\"content\":\"Hello, world!\"}");
    cJSON *t = cJSON_Parse(r.body);
    cr_expect(strncmp(r.body, "{\"tokens\":[", 11) == 0 && cJSON_GetArraySize(jget(t, "tokens")) == 2, "%s", r.body);
    cr_expect(cJSON_IsNumber(jget(t, "tokens.0")) && jget(t, "tokens.0")->valuedouble != 1);
    cr_expect_null(jget(t, "count"));
    cJSON_Delete(t);
    http_reply_free(&r);
    /* tokenize_with_pieces.txt: {"id","piece"} objects, BOS first with add_special */
    r = post_root(&p, "/tokenize", "{\"content\":\"Hello, world!\",\"add_special\":true,\"with_pieces\":true}");
    cr_expect(starts_with(r.body, "{\"tokens\":[{\"id\":1,\"piece\":\"<|begin_of_text|>\"},{\"id\":"), "%s", r.body);
    cr_expect(strstr(r.body, "\"piece\":\"world!\"}]}") != NULL, "%s", r.body);
    http_reply_free(&r);
    /* the vLLM body names no "content": llama-server tokenizes nothing */
    r = post_root(&p, "/tokenize", "{\"model\":\"m\",\"prompt\":\"Hello, world!\"}");
    cr_expect_eq(r.status, 200);
    cr_expect_str_eq(r.body, "{\"tokens\":[]}");
    http_reply_free(&r);
    /* /apply-template, then /tokenize with add_special: a chat request's prompt_tokens */
    const char *msgs = "{\"messages\":[{\"role\":\"system\",\"content\":\"Be terse.\"},"
                       "{\"role\":\"user\",\"content\":\"count these words\"}]";
    char body[512];
    snprintf(body, sizeof body, "%s}", msgs);
    r = post_root(&p, "/apply-template", body);
    cJSON *at = cJSON_Parse(r.body);
    const char *prompt = cJSON_GetStringValue(jget(at, "prompt"));
    cr_assert_str_eq(prompt, "<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\ncount these words"
                     "<|im_end|>\n<|im_start|>assistant\n");
    cJSON *tb = cJSON_CreateObject();
    cJSON_AddStringToObject(tb, "content", prompt);
    cJSON_AddTrueToObject(tb, "add_special");
    char *tbody = cJSON_PrintUnformatted(tb);
    struct http_reply tr = post_root(&p, "/tokenize", tbody);
    snprintf(body, sizeof body, "%s,\"max_tokens\":1}", msgs);
    char url[256];
    snprintf(url, sizeof url, "%s/chat/completions", p.base_url);
    struct http_reply c;
    cr_assert_eq(http_post(url, body, &c), 0);
    cJSON *tj = cJSON_Parse(tr.body), *cj = cJSON_Parse(c.body);
    cr_expect_eq(cJSON_GetArraySize(jget(tj, "tokens")), 1 + (3 + 2) + (3 + 3) + 3, "BOS, two messages, reply: %s",
                 tr.body);
    cr_expect_eq(cJSON_GetArraySize(jget(tj, "tokens")), jget(cj, "usage.prompt_tokens")->valuedouble);
    cJSON_Delete(tj);
    cJSON_Delete(cj);
    cJSON_Delete(tb);
    cJSON_free(tbody);
    cJSON_Delete(at);
    http_reply_free(&r);
    http_reply_free(&tr);
    http_reply_free(&c);
    cJSON *v = get_json(&p, "/version", 404);
    cJSON_Delete(v);
    cJSON *props = get_json(&p, "/props", 200);
    cr_expect_str_eq(cJSON_GetStringValue(jget(props, "build_info")), "b0-unknown");
    cJSON_Delete(props);
    stop_clean(&p);
}

Test(sim_flavor, vllm_tokenize_as_the_fixture, .timeout = 60)
{
    struct sim_proc p;
    start_flavor(&p, "vllm");
    struct http_reply r = post_root(&p, "/tokenize", "{\"model\":\"m\",\"prompt\":\"Hello, world!\"}");
    cr_expect(starts_with(r.body, "{\"count\":3,\"max_model_len\":32768,\"tokens\":[1,"), "%s", r.body);
    cr_expect(strstr(r.body, "],\"token_strs\":null}") != NULL, "%s", r.body);
    http_reply_free(&r);
    r = post_root(&p, "/tokenize", "{\"model\":\"other\",\"prompt\":\"x\"}");
    cr_expect_eq(r.status, 404, "an unknown model is vLLM's 404");
    http_reply_free(&r);
    stop_clean(&p);
}

Test(sim_flavor, llamacpp_errors_inside_the_stream, .timeout = 60)
{
    /* the build the fixtures were recorded from writes server_sent_event(sink,
     * "error", ...): an "error:" line, then [DONE] */
    struct sim_proc p;
    cr_assert_eq(sim_start(&p, (const char *const[]){"--flavor", "llamacpp", "--max-model-len", "64",
                                                     "--stream-error-rate", "1", NULL}), 0);
    char url[256];
    snprintf(url, sizeof url, "%s/chat/completions", p.base_url);
    struct http_reply r;
    cr_assert_eq(http_post(url, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":100,"
                           "\"stream\":true}", &r), 0);
    cr_expect_eq(r.status, 200, "the context is checked after the stream began");
    cr_expect_str_eq(r.body, "error: {\"code\":400,\"message\":\"the request exceeds the available context size, "
                     "try increasing it\",\"type\":\"exceed_context_size_error\"}\n\ndata: [DONE]\n\n");
    http_reply_free(&r);
    cr_assert_eq(http_post(url, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":100}", &r), 0);
    cr_expect_eq(r.status, 400, "not streamed: an HTTP error");
    cr_expect(strstr(r.body, "\"type\":\"exceed_context_size_error\"") != NULL, "%s", r.body);
    http_reply_free(&r);
    cr_assert_eq(http_post(url, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":20,"
                           "\"stream\":true}", &r), 0);
    const char *e = strstr(r.body, "\n\nerror: {\"code\":500,\"message\":\"Internal server error\",\"type\":\"server_error\"}"
                           "\n\ndata: [DONE]\n\n");
    cr_expect(e && !strstr(r.body, "data: {\"error\""), "an injected fault in the same shape:\n%s", r.body);
    http_reply_free(&r);
    stop_clean(&p);
}
