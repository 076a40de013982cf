/* test_request.c — request bodies: sampling settings sent only when given,
 * --extra-body keys added last and replacing anvil's own. */
#include <stdlib.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "openai/request.h"

static cJSON *body(const struct request_opts *o)
{
    char *s = request_body(o, "hello");
    cr_assert(s);
    cJSON *j = cJSON_Parse(s);
    free(s);
    cr_assert(j);
    return j;
}

Test(request, sampling_only_when_set)
{
    struct request_opts o = {.endpoint = EP_CHAT, .model = "m", .max_tokens = 8, .stream = true};
    cJSON *j = body(&o);
    cr_assert_null(cJSON_GetObjectItem(j, "temperature"));
    cr_assert_null(cJSON_GetObjectItem(j, "top_p"));
    cr_assert_null(cJSON_GetObjectItem(j, "top_k"));
    cJSON_Delete(j);
    o.sampling = (struct sampling){.has_temperature = true, .temperature = 0, .has_top_k = true, .top_k = 5};
    j = body(&o);
    cr_assert_eq(cJSON_GetObjectItem(j, "temperature")->valuedouble, 0);   /* 0 is a real value */
    cr_assert_eq(cJSON_GetObjectItem(j, "top_k")->valuedouble, 5);
    cr_assert_null(cJSON_GetObjectItem(j, "top_p"));
    cJSON_Delete(j);
}

Test(request, extra_body_adds_and_replaces)
{
    cJSON *extra = cJSON_Parse("{\"max_tokens\": 3, \"chat_template_kwargs\": {\"enable_thinking\": false}}");
    struct request_opts o = {.endpoint = EP_COMPLETIONS, .model = "m", .max_tokens = 8, .extra_body = extra};
    cJSON *j = body(&o);
    cr_assert_eq(cJSON_GetObjectItem(j, "max_tokens")->valuedouble, 3);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "chat_template_kwargs"), "enable_thinking")));
    cr_assert_str_eq(cJSON_GetObjectItem(j, "prompt")->valuestring, "hello");
    cJSON_Delete(j);
    cJSON_Delete(extra);
}
