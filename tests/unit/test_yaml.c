/* test_yaml.c — YAML plans read as JSON trees. */
#include <stdio.h>
#include <stdlib.h>
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
    cr_assert_eq(strncmp(err, "3:1: ", 5), 0, "%s", err);
}

/* levels of anchors, each a list of ten aliases to the one before: 10^levels
 * values once expanded, from a few hundred bytes */
static char *alias_bomb(int levels)
{
    static char y[2048];
    size_t n = (size_t)snprintf(y, sizeof y, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < levels; i++) {
        n += (size_t)snprintf(y + n, sizeof y - n, "a%d: &a%d [", i, i);
        for (int k = 0; k < 10; k++)
            n += (size_t)snprintf(y + n, sizeof y - n, "*a%d%s", i - 1, k < 9 ? ", " : "]\n");
    }
    return y;
}

Test(yaml, nested_aliases_are_refused_at_the_node_limit, .timeout = 30)
{
    char err[256];
    for (int levels = 6; levels <= 10; levels += 4) {   /* 10^6 nodes, and 10^10 (a 23 GB tree before) */
        const char *y = alias_bomb(levels);
        cJSON *j = yaml_to_json(y, strlen(y), err, sizeof err);
        cr_assert_null(j, "%d levels of aliases expanded to a tree", levels);
        cr_assert(strstr(err, "more than 1000000 values"), "%s", err);
        cr_assert(strstr(err, "aliases counted each time"), "%s", err);
        /* 10 + 100 + ... + 10^6 values: the limit is crossed on line 6, by its 10th alias */
        cr_assert_eq(strncmp(err, "6:45: ", 6), 0, "%s", err);
    }
}

Test(yaml, deep_nesting_is_refused_where_it_crosses_the_limit, .timeout = 30)
{
    size_t n = 200000;        /* 40 s of CPU to refuse before */
    char *y = malloc(n + 1);
    memset(y, '[', n);
    y[n] = '\0';
    char err[256];
    cr_assert_null(yaml_to_json(y, n, err, sizeof err));
    cr_assert_str_eq(err, "1:65: nested deeper than 64 levels (the limit for an input file)");
    memset(y, ' ', n);        /* block style: two spaces per level */
    size_t at = 0;
    for (int d = 0; d < 70; d++)
        at += (size_t)sprintf(y + at, "%*sk%d:\n", 2 * d, "", d);
    cr_assert_null(yaml_to_json(y, at, err, sizeof err));
    /* level 65 is the mapping that k64 (line 65, two spaces per level) opens */
    cr_assert_str_eq(err, "65:129: nested deeper than 64 levels (the limit for an input file)");
    free(y);
}

Test(yaml, aliases_within_the_limits_expand)
{
    const char *y = "base: &b {rate: 2, tags: [x, y]}\nbig: &t long\ncases:\n  - *b\n  - {name: *t, opts: *b}\n";
    char err[256];
    cJSON *j = yaml_to_json(y, strlen(y), err, sizeof err);
    cr_assert(j, "%s", err);
    const cJSON *c = cJSON_GetObjectItem(j, "cases");
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(c, 0), "rate")->valuedouble, 2);
    const cJSON *c1 = cJSON_GetArrayItem(c, 1);
    cr_assert_str_eq(cJSON_GetObjectItem(c1, "name")->valuestring, "long");
    cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c1, "opts"), "tags"), 1)->valuestring, "y");
    cJSON_Delete(j);
}

Test(yaml, errors_say_what_and_where)
{
    const struct { const char *y, *want; } cases[] = {
        {"", "1:1: no YAML document (the file is empty)"},
        {"a: 1\nb: *nope\n", "2:4: alias *nope names no anchor defined before it"},
        {"a: 1\n? [k]\n: v\n", "2:3: a mapping key that is not a plain value"},
        {"a: &x 1\n*x : 2\n", "2:1: a mapping key that is not a plain value"},
    };
    char err[256];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_assert_null(yaml_to_json(cases[i].y, strlen(cases[i].y), err, sizeof err), "case %zu", i);
        cr_assert_str_eq(err, cases[i].want, "case %zu", i);
    }
}

Test(yaml, json_is_checked_against_the_limits_before_parsing)
{
    char err[256];
    bool limit = false;
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    cr_assert_null(json_parse_capped(deep, sizeof deep, DOC_MAX_NODES, &limit, err, sizeof err));
    cr_assert(limit);
    cr_assert_str_eq(err, "1:65: nested deeper than 64 levels (the limit for an input file)");
    const char *many = "{\"a\": [1, 2,\n 3, \"x,y,z\", 5]}";
    /* 7 values: the object, the array and its five items (a comma in a string is text) */
    cr_assert_null(json_parse_capped(many, strlen(many), 6, &limit, err, sizeof err));
    cr_assert(limit);
    cr_assert_str_eq(err, "2:12: more than 6 values (the limit for this input file)");
    cJSON *j = json_parse_capped(many, strlen(many), 7, &limit, err, sizeof err);
    cr_assert(j && !limit, "%s", err);
    cJSON_Delete(j);
    const char *bad = "{\"a\": 1,\n  \"b\": tru}";
    cr_assert_null(json_parse_capped(bad, strlen(bad), DOC_MAX_NODES, &limit, err, sizeof err));
    cr_assert(!limit);
    cr_assert_eq(strncmp(err, "2:", 2), 0, "%s", err);
    cr_assert(strstr(err, "not JSON"), "%s", err);
}
