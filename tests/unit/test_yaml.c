/* test_yaml.c — YAML plans read as JSON trees. */
#include <string.h>

#include <criterion/criterion.h>

#include "core/yamljson.h"

Test(yaml, scalars_sequences_and_mappings)
{
    const char *y = "rounds: 3\nname: 'x'\nrate: 2.5\nflag: true\noff: false\nnone: ~\n"
                    "list: [1, two, \"3\"]\ncases:\n  - a: 1\n  - b: hello\n";
    char err[128];
    cJSON *j = yaml_to_json(y, strlen(y), err, sizeof err);
    cr_assert(j, "%s", err);
    cr_assert_eq(cJSON_GetObjectItem(j, "rounds")->valuedouble, 3);
    cr_assert_str_eq(cJSON_GetObjectItem(j, "name")->valuestring, "x");
    cr_assert_eq(cJSON_GetObjectItem(j, "rate")->valuedouble, 2.5);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "flag")));
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "off")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "none")));
    const cJSON *l = cJSON_GetObjectItem(j, "list");
    cr_assert_eq(cJSON_GetArrayItem(l, 0)->valuedouble, 1);
    cr_assert_str_eq(cJSON_GetArrayItem(l, 1)->valuestring, "two");
    cr_assert_str_eq(cJSON_GetArrayItem(l, 2)->valuestring, "3", "a quoted number stays a string");
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cases"), 1), "b")->valuestring, "hello");
    cJSON_Delete(j);
}

Test(yaml, errors_name_the_line)
{
    const char *y = "a: 1\nb: [unclosed\n";
    char err[128];
    cr_assert_null(yaml_to_json(y, strlen(y), err, sizeof err));
    cr_assert(strstr(err, "line "), "%s", err);
}
