/* test_fields.c — the field-table writer, reader and free: every kind of
 * row survives a round trip, absence and null follow the flags, and the
 * checked reader names the key path of a mistyped value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/fields.h"
#include "fields_sample.h"

struct inner {
    bool present;
    double a_ms;
    long b;
};
struct elem {
    char *name;
    double v;
};
struct outer {
    double x;
    long n;
    char *s;
    bool flag;
    char **tags;
    size_t n_tags;
    struct inner in;
    struct elem *rows;
    size_t n_rows;
    double skipped;
};

static const struct field inner_rows[] = {
    F_NUM(struct inner, a_ms, 0, "ms"),
    F_WHOLE(struct inner, b, JR_OPTIONAL | JR_NULLABLE, NULL),
};
static const struct field_table inner_t = FIELD_TABLE("inner", struct inner, inner_rows, present);
static const struct field elem_rows[] = {
    F_STR(struct elem, name, JR_NONEMPTY),
    F_NUM(struct elem, v, 0, NULL),
};
static const struct field_table elem_t = FIELD_TABLE_ALWAYS("elem", struct elem, elem_rows);
static const struct field outer_rows[] = {
    F_NUM(struct outer, x, 0, "s"),
    F_WHOLE(struct outer, n, 0, NULL),
    F_STR(struct outer, s, JR_OPTIONAL | JR_NULLABLE),
    F_BOOL(struct outer, flag, JR_OPTIONAL),
    F_STRS(struct outer, tags, n_tags, JR_OPTIONAL),
    F_OBJ(struct outer, in, JR_OPTIONAL | JR_NULLABLE, &inner_t),
    F_ARR(struct outer, rows, n_rows, JR_OPTIONAL, &elem_t),
};
static const struct field_table outer_t = FIELD_TABLE_ALWAYS("outer", struct outer, outer_rows);

Test(fields, every_kind_survives_a_round_trip)
{
    char why[256] = "";
    cr_assert(fields_sample_round_trip(&outer_t, why, sizeof why), "%s", why);
}

/* The sampler itself must see a lost row: a table whose reader drops a
 * key (a row marked never written compares as equal, so use a different
 * table to read) fails the comparison. */
Test(fields, a_row_the_reader_lacks_fails_the_round_trip)
{
    static const struct field fewer[] = {
        F_NUM(struct outer, x, 0, "s"),
        F_WHOLE(struct outer, n, 0, NULL),
    };
    static const struct field_table fewer_t = FIELD_TABLE_ALWAYS("outer", struct outer, fewer);
    struct outer a, b;
    fields_sample_fill(&outer_t, &a, 1);
    cJSON *j = fields_to_json(&outer_t, &a);
    char err[128], why[256] = "";
    struct jread r;
    jread_init(&r, "x", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &fewer_t, &b), 0);
    cr_assert_not(fields_sample_equal(&outer_t, &a, &b, why, sizeof why));
    cr_assert(strstr(why, "outer.s"), "%s", why);
    cJSON_Delete(j);
    fields_free(&outer_t, &a);
    fields_free(&fewer_t, &b);
}

Test(fields, absent_and_null_follow_the_flags)
{
    char err[256];
    struct jread r;
    struct outer o;
    cJSON *j = cJSON_Parse("{\"x\":null,\"n\":3,\"in\":null}");
    jread_init(&r, "f.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &outer_t, &o), 0, "%s", err);
    cr_assert(isnan(o.x));
    cr_assert_eq(o.n, 3);
    cr_assert_null(o.s);
    cr_assert_not(o.in.present);
    cr_assert_eq(o.n_rows, 0);
    cJSON *w = fields_to_json(&outer_t, &o);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(w, "x")));
    cr_assert_null(cJSON_GetObjectItem(w, "in"), "an absent object is left out");
    cJSON_Delete(w);
    fields_free(&outer_t, &o);
    cJSON_Delete(j);

    j = cJSON_Parse("{\"x\":1}");
    jread_init(&r, "f.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &outer_t, &o), -1);
    cr_assert_str_eq(err, "f.json: n: missing");
    fields_free(&outer_t, &o);
    cJSON_Delete(j);
}

Test(fields, a_mistyped_value_is_named_by_its_path)
{
    char err[256];
    struct jread r;
    struct outer o;
    cJSON *j = cJSON_Parse("{\"x\":1,\"n\":2,\"in\":{\"a_ms\":\"fast\"},\"rows\":[]}");
    jread_init(&r, "f.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &outer_t, &o), -1);
    cr_assert(strstr(err, "f.json: in.a_ms: expected a number"), "%s", err);
    fields_free(&outer_t, &o);
    cJSON_Delete(j);

    j = cJSON_Parse("{\"x\":1,\"n\":2,\"rows\":[{\"name\":\"a\",\"v\":1},{\"name\":\"\",\"v\":2}]}");
    jread_init(&r, "f.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &outer_t, &o), -1);
    cr_assert(strstr(err, "rows[1].name"), "%s", err);
    fields_free(&outer_t, &o);
    cJSON_Delete(j);
}

Test(fields, omit_none_and_inf_write_flags)
{
    static const struct field rows[] = {
        {"x", FIELD_NUMBER, offsetof(struct outer, x), JR_OPTIONAL | JR_INF, FW_INF, NULL, NULL, 0, 0, NULL, NULL},
        {"n", FIELD_WHOLE, offsetof(struct outer, n), JR_OPTIONAL, FW_OMIT_NONE, NULL, NULL, 0, 0, NULL, NULL},
    };
    static const struct field_table t = FIELD_TABLE_ALWAYS("t", struct outer, rows);
    struct outer o = {.x = INFINITY, .n = ARTIFACT_NONE};
    cJSON *j = fields_to_json(&t, &o);
    char *s = cJSON_PrintUnformatted(j);
    cr_assert_str_eq(s, "{\"x\":\"inf\"}");
    char err[128];
    struct jread r;
    jread_init(&r, NULL, err, sizeof err);
    struct outer b;
    cr_assert_eq(fields_read(&r, j, &t, &b), 0, "%s", err);
    cr_assert(isinf(b.x));
    cr_assert_eq(b.n, ARTIFACT_NONE);
    free(s);
    cJSON_Delete(j);
}

/* FW_NULL writes an absent object as null, FW_EMPTY as {} (seed 004's
 * prefill hardware_summary without a GPU reading); both read back absent
 * or, for {}, present with every field none. */
Test(fields, an_absent_object_is_null_or_empty_as_asked)
{
    static const struct field rows[] = {
        {"a", FIELD_OBJECT, offsetof(struct outer, in), JR_OPTIONAL | JR_NULLABLE, FW_NULL, NULL, NULL, 0, 0,
         &inner_t, NULL},
        {"b", FIELD_OBJECT, offsetof(struct outer, in), JR_OPTIONAL | JR_NULLABLE, FW_EMPTY, NULL, NULL, 0, 0,
         &inner_t, NULL},
        {"c", FIELD_OBJECT, offsetof(struct outer, in), JR_OPTIONAL | JR_NULLABLE, 0, NULL, NULL, 0, 0, &inner_t,
         NULL},
    };
    static const struct field_table t = FIELD_TABLE_ALWAYS("t", struct outer, rows);
    struct outer o = {.in = {.present = false}};
    cJSON *j = fields_to_json(&t, &o);
    char *s = cJSON_PrintUnformatted(j);
    cr_assert_str_eq(s, "{\"a\":null,\"b\":{}}");
    free(s);
    cJSON_Delete(j);
}

static void count_path(const struct field *f, const char *path, void *ctx)
{
    (void)f;
    if (strcmp(path, "rows[].v") == 0 || strcmp(path, "in.a_ms") == 0)
        ++*(int *)ctx;
}

Test(fields, walk_names_nested_paths)
{
    int hits = 0;
    fields_walk(&outer_t, "", count_path, &hits);
    cr_assert_eq(hits, 2);
}

/* FW_INLINE: a group of keys written into the parent object together, or
 * not at all; read back when its first key is there. FW_WITH_PREV: a row
 * written only when the row before it was. */
struct grouped {
    long n;
    struct inner g;     /* flat: a_ms and b are keys of the parent */
    long first;
    double second;      /* only with first */
};

static const struct field grouped_rows[] = {
    F_WHOLE(struct grouped, n, 0, NULL),
    {"g", FIELD_OBJECT, offsetof(struct grouped, g), JR_OPTIONAL, FW_INLINE, NULL, NULL, 0, 0, &inner_t, NULL},
    {"first", FIELD_WHOLE, offsetof(struct grouped, first), JR_OPTIONAL, FW_OMIT_NONE, NULL, NULL, 0, 0, NULL, NULL},
    {"second", FIELD_NUMBER, offsetof(struct grouped, second), JR_OPTIONAL, FW_WITH_PREV, NULL, NULL, 0, 0, NULL,
     NULL},
};
static const struct field_table grouped_t = FIELD_TABLE_ALWAYS("grouped", struct grouped, grouped_rows);

static char *written(const struct grouped *g)
{
    cJSON *j = fields_to_json(&grouped_t, g);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

Test(fields, flat_groups_and_rows_written_with_the_one_before)
{
    char why[256] = "";
    cr_assert(fields_sample_round_trip(&grouped_t, why, sizeof why), "%s", why);

    struct grouped g = {.n = 1, .g = {true, 2.5, 3}, .first = 4, .second = NAN};
    char *s = written(&g);
    cr_assert_str_eq(s, "{\"n\":1,\"a_ms\":2.5,\"b\":3,\"first\":4,\"second\":null}");
    free(s);
    g = (struct grouped){.n = 1, .g = {false, 2.5, 3}, .first = ARTIFACT_NONE, .second = 5};
    s = written(&g);
    cr_assert_str_eq(s, "{\"n\":1}", "an absent group and a row after one left out are left out");
    free(s);

    char err[128];
    struct jread r;
    struct grouped b;
    cJSON *j = cJSON_Parse("{\"n\":1,\"b\":3}");
    jread_init(&r, "g.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &grouped_t, &b), 0, "%s", err);
    cr_assert_not(b.g.present, "a group without its first key is absent");
    cr_assert(isnan(b.g.a_ms));
    cJSON_Delete(j);
    j = cJSON_Parse("{\"n\":1,\"a_ms\":2}");
    jread_init(&r, "g.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &grouped_t, &b), 0, "%s", err);
    cr_assert(b.g.present);
    cr_assert_eq(b.g.a_ms, 2);
    cr_assert_eq(b.g.b, ARTIFACT_NONE);
    cJSON_Delete(j);
    j = cJSON_Parse("{\"n\":1,\"a_ms\":\"x\"}");
    jread_init(&r, "g.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &grouped_t, &b), -1);
    cr_assert(strstr(err, "g.json: a_ms: expected a number") == err, "%s", err);
    cJSON_Delete(j);
}

static void count_flat(const struct field *f, const char *path, void *ctx)
{
    (void)f;
    ++*(int *)ctx;
    cr_assert(strcmp(path, "g") && strcmp(path, "g.a_ms"), "%s: a flat group's keys are its parent's", path);
}

Test(fields, walk_names_a_flat_groups_keys_as_the_parents)
{
    int hits = 0;
    fields_walk(&grouped_t, "", count_flat, &hits);
    cr_assert_eq(hits, 5);
}

/* An older key (FW_READONLY after the row of its new key) fills the member
 * only where a file has it: an old file's value is read, a new file's is
 * not overwritten by the old key's absence, and only the new key is
 * written. */
Test(fields, an_older_key_is_read_only_where_a_file_has_it)
{
    static const struct field rows[] = {
        {"new_name", FIELD_NUMBER, offsetof(struct outer, x), JR_OPTIONAL, 0, NULL, NULL, 0, 0, NULL, NULL},
        {"old_name", FIELD_NUMBER, offsetof(struct outer, x), JR_OPTIONAL, FW_READONLY, NULL, NULL, 0, 0, NULL, NULL},
    };
    static const struct field_table t = FIELD_TABLE_ALWAYS("t", struct outer, rows);
    const char *docs[] = {"{\"old_name\": 1.5}", "{\"new_name\": 2.5}", "{\"new_name\": 2.5, \"old_name\": 1.5}"};
    const double want[] = {1.5, 2.5, 2.5};     /* both keys: the new one wins */
    for (int i = 0; i < 3; i++) {
        cJSON *j = cJSON_Parse(docs[i]);
        char err[128];
        struct jread r;
        jread_init(&r, NULL, err, sizeof err);
        struct outer o;
        cr_assert_eq(fields_read(&r, j, &t, &o), 0, "%s", err);
        cr_assert_eq(o.x, want[i]);
        cJSON *w = fields_to_json(&t, &o);
        char *s = cJSON_PrintUnformatted(w);
        cr_assert_str_eq(s, i ? "{\"new_name\":2.5}" : "{\"new_name\":1.5}");
        free(s);
        cJSON_Delete(w);
        cJSON_Delete(j);
    }
}

/* ---- inline objects, null string arrays, keyed rows, codecs ---- */

struct tail {
    bool present;
    char *engine;
    double n_ms;
};
struct head {
    bool on;
    char **argv;
    size_t n_argv;
    int tri;
    double pair[2];
    cJSON *map;
    struct tail rest;
};
static const struct field tail_rows[] = {
    F_STR(struct tail, engine, 0),
    F_NUM(struct tail, n_ms, 0, "ms"),
};
static const struct field_table tail_t = FIELD_TABLE("tail", struct tail, tail_rows, present);
static const struct field head_rows[] = {
    F_BOOL(struct head, on, 0),
    F_STRS_W(struct head, argv, n_argv, JR_NULLABLE, FW_NULL_STRS),
    F_CUSTOM(struct head, tri, 0, &field_tribool_codec),
    F_KEYED("bounds_ms", FIELD_CUSTOM, struct head, pair, 0, 0, "ms", NULL, &field_pair_codec),
    F_CUSTOM(struct head, map, JR_OPTIONAL, &field_json_codec),
    F_OBJ_W(struct head, rest, JR_OPTIONAL, FW_INLINE, &tail_t),
};
static const struct field_table head_t = FIELD_TABLE_ALWAYS("head", struct head, head_rows);

static char *print(const struct head *h)
{
    cJSON *j = fields_to_json(&head_t, h);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

Test(fields, an_inline_object_writes_its_rows_beside_its_parents_only_when_present)
{
    struct head h = {.on = false, .tri = -1, .pair = {NAN, 2}};
    char *s = print(&h);
    cr_assert_str_eq(s, "{\"on\":false,\"argv\":null,\"tri\":null,\"bounds_ms\":[null,2],\"map\":null}");
    free(s);
    char *argv[] = {"anvil", "run"};
    h = (struct head){.on = true, .argv = argv, .n_argv = 2, .tri = 7, .pair = {1, INFINITY},
                      .map = cJSON_Parse("{\"a{x=1}\":3}"), .rest = {true, "vllm", 1.5}};
    s = print(&h);
    cr_assert_str_eq(s, "{\"on\":true,\"argv\":[\"anvil\",\"run\"],\"tri\":true,\"bounds_ms\":[1,null],"
                        "\"map\":{\"a{x=1}\":3},\"engine\":\"vllm\",\"n_ms\":1.5}");

    cJSON *j = cJSON_Parse(s);
    char err[128];
    struct jread r;
    jread_init(&r, "h.json", err, sizeof err);
    struct head b;
    cr_assert_eq(fields_read(&r, j, &head_t, &b), 0, "%s", err);
    cr_assert(b.rest.present);
    cr_assert_str_eq(b.rest.engine, "vllm");
    cr_assert_eq(b.tri, 1);
    cr_assert_eq(b.pair[0], 1);
    cr_assert(isnan(b.pair[1]));
    cr_assert_eq(cJSON_GetObjectItem(b.map, "a{x=1}")->valuedouble, 3);
    cr_assert_eq(b.n_argv, 2);
    fields_free(&head_t, &b);
    cJSON_Delete(j);
    cJSON_Delete(h.map);
    free(s);

    j = cJSON_Parse("{\"on\":false,\"argv\":null,\"tri\":null,\"bounds_ms\":[null,null]}");
    jread_init(&r, "h.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &head_t, &b), 0, "%s", err);
    cr_assert_not(b.rest.present, "no first key: the inline object is absent");
    cr_assert_null(b.argv);
    cr_assert_eq(b.tri, -1);
    cr_assert_null(b.map);
    fields_free(&head_t, &b);
    cJSON_Delete(j);

    j = cJSON_Parse("{\"on\":true,\"argv\":null,\"tri\":true,\"bounds_ms\":[1,2],\"engine\":\"e\",\"n_ms\":\"x\"}");
    jread_init(&r, "h.json", err, sizeof err);
    cr_assert_eq(fields_read(&r, j, &head_t, &b), -1);
    cr_assert(strstr(err, "h.json: n_ms: expected a number"), "an inline row is named at its parent: %s", err);
    fields_free(&head_t, &b);
    cJSON_Delete(j);
}

Test(fields, the_new_rows_survive_a_generated_round_trip)
{
    char why[256] = "";
    cr_assert(fields_sample_round_trip(&head_t, why, sizeof why), "%s", why);
}
