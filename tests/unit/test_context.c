/* test_context.c — each engine's context limit read from the reply it
 * sends (tests/data/fixtures/: llama.cpp /props recorded, SGLang's
 * /server_info and /models reconstructed; TGI's /info from its router
 * source, router/src/lib.rs Info, since no TGI exchange is recorded), and
 * the fit check every command refuses a case with. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "openai/discover.h"
#include "testutil.h"

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

static struct server_info unknown(void)
{
    struct server_info s;
    memset(&s, 0, sizeof s);
    s.max_model_len = s.context_len = s.max_input_len = -1;
    return s;
}

Test(context, llamacpp_props_n_ctx_is_the_slot_context)
{
    cJSON *j = fixture_json("tests/data/fixtures/llamacpp/props.txt");
    struct server_info s = unknown();
    cr_assert_eq(server_context_from_reply(ENGINE_LLAMACPP, j, &s), 1);
    cr_assert_eq(s.context_len, 2048);
    cr_assert_str_eq(s.context_source, "/props default_generation_settings.n_ctx");
    cr_assert_eq(s.max_input_len, -1);
    /* the same reply read as another engine's says nothing */
    struct server_info v = unknown();
    cr_assert_eq(server_context_from_reply(ENGINE_VLLM, j, &v), 0);
    cr_assert_eq(v.context_len, -1);
    cJSON_Delete(j);
}

Test(context, llamacpp_models_n_ctx_train_is_not_the_context)
{
    /* /v1/models' meta.n_ctx_train (16384) is what the model was trained
     * with, not what a slot holds: discovery leaves it alone */
    cJSON *j = fixture_json("tests/data/fixtures/llamacpp/v1_models.txt");
    struct server_info s = unknown();
    cr_assert_eq(server_context_from_reply(ENGINE_LLAMACPP, j, &s), 0);
    cr_assert_eq(s.context_len, -1);
    cJSON_Delete(j);
}

Test(context, sglang_server_info_input_limit_beside_models_context)
{
    cJSON *models = fixture_json("tests/data/fixtures/sglang/models.txt");
    const cJSON *card = cJSON_GetArrayItem(cJSON_GetObjectItem(models, "data"), 0);
    cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "max_model_len")), 32768);
    cJSON_Delete(models);
    cJSON *j = fixture_json("tests/data/fixtures/sglang/server_info.txt");
    /* /models gave 32768: /server_info's context_length (null here) does not replace it */
    struct server_info s = unknown();
    s.context_len = 32768;
    snprintf(s.context_source, sizeof s.context_source, "/models max_model_len");
    cr_assert_eq(server_context_from_reply(ENGINE_SGLANG, j, &s), 1);
    cr_assert_eq(s.context_len, 32768);
    cr_assert_str_eq(s.context_source, "/models max_model_len");
    /* SGLang aborts a prompt of max_req_input_len (32762) tokens or more */
    cr_assert_eq(s.max_input_len, 32761);
    cr_assert_str_eq(s.max_input_source, "/server_info max_req_input_len - 1");
    cJSON_Delete(j);
    /* a server args' context_length is taken when /models said nothing */
    cJSON *set = cJSON_Parse("{\"context_length\":8192,\"max_req_input_len\":8186}");
    struct server_info t = unknown();
    cr_assert_eq(server_context_from_reply(ENGINE_SGLANG, set, &t), 2);
    cr_assert_eq(t.context_len, 8192);
    cr_assert_str_eq(t.context_source, "/server_info context_length");
    cJSON_Delete(set);
}

Test(context, tgi_info_total_and_input_tokens)
{
    cJSON *j = cJSON_Parse("{\"model_id\":\"m\",\"max_concurrent_requests\":128,\"max_best_of\":2,"
                           "\"max_input_tokens\":4095,\"max_total_tokens\":4096,\"router\":\"text-generation-router\","
                           "\"version\":\"3.0.1\"}");
    struct server_info s = unknown();
    cr_assert_eq(server_context_from_reply(ENGINE_TGI, j, &s), 2);
    cr_assert_eq(s.context_len, 4096);
    cr_assert_str_eq(s.context_source, "/info max_total_tokens");
    cr_assert_eq(s.max_input_len, 4095);
    cr_assert_str_eq(s.max_input_source, "/info max_input_tokens");
    cJSON_Delete(j);
    /* TGI before 2.1 named the input limit max_input_length */
    cJSON *old = cJSON_Parse("{\"model_id\":\"m\",\"max_input_length\":1024,\"max_total_tokens\":2048,\"version\":\"1.4.0\"}");
    struct server_info o = unknown();
    cr_assert_eq(server_context_from_reply(ENGINE_TGI, old, &o), 2);
    cr_assert_eq(o.max_input_len, 1024);
    cr_assert_str_eq(o.max_input_source, "/info max_input_length");
    cJSON_Delete(old);
}

Test(context, absent_null_and_bad_values_leave_it_unknown)
{
    const char *bad[] = {"{}", "{\"default_generation_settings\":{\"n_ctx\":null}}",
                         "{\"default_generation_settings\":{\"n_ctx\":0}}",
                         "{\"default_generation_settings\":{\"n_ctx\":\"2048\"}}", "[1]",
                         "{\"default_generation_settings\":7}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *j = cJSON_Parse(bad[i]);
        struct server_info s = unknown();
        cr_assert_eq(server_context_from_reply(ENGINE_LLAMACPP, j, &s), 0, "%s", bad[i]);
        cr_assert_eq(s.context_len, -1, "%s", bad[i]);
        cJSON_Delete(j);
    }
    struct server_info s = unknown();
    cr_assert_eq(server_context_from_reply(ENGINE_LLAMACPP, NULL, &s), 0);
}

Test(context, fit_names_both_numbers_and_the_field)
{
    struct server_info s = unknown();
    char err[400] = "";
    cr_assert_eq(server_check_fit(&s, 1000000, 1000, err, sizeof err), 0, "unknown limits pass");
    cr_assert_eq(server_prompt_limit(&s), -1);
    s.context_len = 2048;
    snprintf(s.context_source, sizeof s.context_source, "/props default_generation_settings.n_ctx");
    cr_assert_eq(server_check_fit(&s, 2032, 16, err, sizeof err), 0, "exactly full fits");
    cr_assert_eq(server_check_fit(&s, 2033, 16, err, sizeof err), -1);
    cr_assert_str_eq(err, "prompt of 2033 tokens with 16 output tokens cannot fit: the server's context is 2048 "
                          "tokens (/props default_generation_settings.n_ctx)");
    cr_assert_eq(server_check_fit(&s, 3000, 16, err, sizeof err), -1);
    cr_assert_str_eq(err, "prompt of 3000 tokens cannot fit: the server's context is 2048 tokens "
                          "(/props default_generation_settings.n_ctx)");
    cr_assert_eq(server_prompt_limit(&s), 2047);
    s.max_input_len = 1000;
    snprintf(s.max_input_source, sizeof s.max_input_source, "/info max_input_tokens");
    cr_assert_eq(server_check_fit(&s, 1001, 1, err, sizeof err), -1);
    cr_assert_str_eq(err, "prompt of 1001 tokens cannot fit: the server takes prompts of at most 1000 tokens "
                          "(/info max_input_tokens)");
    cr_assert_eq(server_prompt_limit(&s), 1000);
}
