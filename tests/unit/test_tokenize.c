/* test_tokenize.c — each engine's tokenize reply and version endpoint, read
 * from the recorded bytes (tests/data/fixtures/); TGI's from its router
 * source (router/src/server.rs, lib.rs), since no TGI exchange is recorded. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "openai/discover.h"
#include "openai/tokenize.h"
#include "testutil.h"

/* The parsed JSON body of a fixture (caller deletes). */
static cJSON *fixture_json(const char *path)
{
    char *text = tu_read_file(path, NULL);
    int status;
    cJSON *j = cJSON_Parse(tu_fixture_body(text, &status));
    cr_assert(j, "%s: body is not JSON", path);
    cr_assert_eq(status, 200, "%s", path);
    free(text);
    return j;
}

static long count_in(enum server_engine e, enum endpoint ep, const char *path)
{
    cJSON *j = fixture_json(path);
    long n = tokenize_reply_count(e, ep, j);
    cJSON_Delete(j);
    return n;
}

Test(tokenize, vllm_reply_count)
{
    cr_assert_eq(count_in(ENGINE_VLLM, EP_CHAT, "tests/data/fixtures/vllm/tokenize.txt"), 4);
    cr_assert_eq(count_in(ENGINE_ANVIL_SIM, EP_COMPLETIONS, "tests/data/fixtures/vllm/tokenize.txt"), 4);
}

Test(tokenize, sglang_reply_count)
{
    cr_assert_eq(count_in(ENGINE_SGLANG, EP_COMPLETIONS, "tests/data/fixtures/sglang/tokenize.txt"), 4);
}

Test(tokenize, llamacpp_reply_is_a_token_list_without_count)
{
    /* the shape that made a vLLM-only reader fail with 'reply has no "count"' */
    cr_assert_eq(count_in(ENGINE_VLLM, EP_COMPLETIONS, "tests/data/fixtures/llamacpp/tokenize_default.txt"), -1);
    cr_assert_eq(count_in(ENGINE_LLAMACPP, EP_COMPLETIONS, "tests/data/fixtures/llamacpp/tokenize_default.txt"), 17);
    /* with_pieces (and add_special: the BOS is the 18th) */
    cr_assert_eq(count_in(ENGINE_LLAMACPP, EP_CHAT, "tests/data/fixtures/llamacpp/tokenize_with_pieces.txt"), 18);
}

Test(tokenize, tgi_reply_shapes)
{
    /* POST /tokenize {"inputs":...}: Json(TokenizeResponse(Vec<SimpleToken>)) */
    cJSON *t = cJSON_Parse("[{\"id\":1,\"text\":\"<s>\",\"start\":0,\"stop\":0},"
                           "{\"id\":22557,\"text\":\"Hello\",\"start\":0,\"stop\":5}]");
    /* POST /chat_tokenize: ChatTokenizeResponse {tokenize_response, templated_text} */
    cJSON *c = cJSON_Parse("{\"tokenize_response\":[{\"id\":1,\"text\":\"\",\"start\":0,\"stop\":0},"
                           "{\"id\":733,\"text\":\"[INST]\",\"start\":0,\"stop\":6},"
                           "{\"id\":22557,\"text\":\"Hello\",\"start\":7,\"stop\":12}],"
                           "\"templated_text\":\"<s>[INST] Hello [/INST]\"}");
    cr_assert_eq(tokenize_reply_count(ENGINE_TGI, EP_COMPLETIONS, t), 2);
    cr_assert_eq(tokenize_reply_count(ENGINE_TGI, EP_CHAT, c), 3);
    cr_assert_eq(tokenize_reply_count(ENGINE_TGI, EP_CHAT, t), -1);
    cr_assert_eq(tokenize_reply_count(ENGINE_TGI, EP_COMPLETIONS, c), -1);
    cJSON_Delete(t);
    cJSON_Delete(c);
}

Test(tokenize, malformed_replies_are_refused)
{
    const char *bad[] = {"{\"tokens\":[1,\"x\"]}", "{\"tokens\":7}", "{}", "{\"tokens\":[{\"piece\":\"a\"}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *j = cJSON_Parse(bad[i]);
        cr_assert_eq(tokenize_reply_count(ENGINE_LLAMACPP, EP_COMPLETIONS, j), -1, "%s", bad[i]);
        cJSON_Delete(j);
    }
    cJSON *neg = cJSON_Parse("{\"count\":-3}");
    cr_assert_eq(tokenize_reply_count(ENGINE_SGLANG, EP_COMPLETIONS, neg), -1);
    cr_assert_eq(tokenize_reply_count(ENGINE_UNKNOWN, EP_COMPLETIONS, neg), -1);
    cJSON_Delete(neg);
    cr_assert_str_eq(tokenize_reply_expected(ENGINE_LLAMACPP, EP_CHAT), "no \"tokens\" array of ids");
}

Test(tokenize, llamacpp_apply_template_prompt)
{
    /* llama-server's handle_apply_template: res_ok(res, {{"prompt", data.at("prompt")}}) */
    cJSON *j = cJSON_Parse("{\"prompt\":\"<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n\"}");
    cr_assert_str_eq(tokenize_templated_prompt(j), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    cJSON_Delete(j);
    cJSON *none = cJSON_Parse("{\"content\":\"x\"}");
    cr_assert_null(tokenize_templated_prompt(none));
    cJSON_Delete(none);
}

Test(tokenize, unknown_engine_names_why_without_asking)
{
    struct server_info s = {.engine_id = ENGINE_UNKNOWN};
    snprintf(s.display_url, sizeof s.display_url, "http://127.0.0.1:9/v1");
    snprintf(s.root_url, sizeof s.root_url, "http://127.0.0.1:9");
    snprintf(s.owned_by, sizeof s.owned_by, "openai");
    cr_assert_not(server_tokenize_supported(&s, EP_CHAT));
    char err[512];
    cr_assert_eq(server_count_tokens(&s, NULL, EP_CHAT, true, "hi", 1000, err, sizeof err), -1);
    cr_assert(strstr(err, "not an engine anvil knows") && strstr(err, "owned_by \"openai\""), "%s", err);
    s.engine_id = ENGINE_LLAMACPP;
    cr_assert(server_tokenize_supported(&s, EP_CHAT));
}

static void version_of(enum server_engine e, const char *path, const char *want)
{
    cJSON *j = fixture_json(path);
    char v[64] = "";
    cr_assert_eq(server_version_from_reply(e, j, v, sizeof v), 0, "%s", path);
    cr_assert_str_eq(v, want, "%s", path);
    cJSON_Delete(j);
}

Test(discover, engine_version_from_each_engines_endpoint)
{
    version_of(ENGINE_VLLM, "tests/data/fixtures/vllm/version.txt", "0.21.0");
    version_of(ENGINE_SGLANG, "tests/data/fixtures/sglang/server_info.txt", "0.5.12");
    version_of(ENGINE_LLAMACPP, "tests/data/fixtures/llamacpp/props.txt", "b0-unknown");
    /* TGI GET /info (router/src/lib.rs Info: ..., "router", "version", "sha", ...) */
    cJSON *info = cJSON_Parse("{\"model_id\":\"m\",\"max_input_tokens\":4095,\"max_total_tokens\":4096,"
                              "\"router\":\"text-generation-router\",\"version\":\"3.0.1\",\"sha\":null}");
    char v[64] = "";
    cr_assert_eq(server_version_from_reply(ENGINE_TGI, info, v, sizeof v), 0);
    cr_assert_str_eq(v, "3.0.1");
    cJSON_Delete(info);
    /* llama.cpp has no "version" in /props, and vLLM no "build_info" */
    cJSON *props = fixture_json("tests/data/fixtures/llamacpp/props.txt");
    cr_assert_eq(server_version_from_reply(ENGINE_VLLM, props, v, sizeof v), -1);
    cJSON_Delete(props);
}
