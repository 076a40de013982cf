/* fields.c — the writer, reader and free that walk a field table. */
#include "artifact/fields.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT(s, off, type) ((type *)((char *)(s) + (off)))
#define CAT(s, off, type) ((const type *)((const char *)(s) + (off)))

static bool object_present(const struct field_table *t, const void *s)
{
    return t->present < 0 || *CAT(s, (size_t)t->present, bool);
}

static bool none(const struct field *f, const void *s)
{
    switch (f->kind) {
    case FIELD_NUMBER: return isnan(*CAT(s, f->offset, double));
    case FIELD_WHOLE: return *CAT(s, f->offset, long) == ARTIFACT_NONE;
    case FIELD_STRING: return *CAT(s, f->offset, char *) == NULL;
    case FIELD_STRINGS:
    case FIELD_ARRAY: return *CAT(s, f->count_offset, size_t) == 0;
    case FIELD_OBJECT: return !object_present(f->sub, (const char *)s + f->offset);
    default: return false;
    }
}

static void write_number(cJSON *o, const struct field *f, double v)
{
    if ((f->write & FW_INF) && isinf(v) && v > 0)
        cJSON_AddStringToObject(o, f->key, "inf");
    else
        artifact_add_number(o, f->key, v);
}

static void write_array(cJSON *o, const struct field *f, const void *s)
{
    cJSON *a = cJSON_AddArrayToObject(o, f->key);
    const char *v = *CAT(s, f->offset, const char *);
    size_t n = *CAT(s, f->count_offset, size_t);
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, fields_to_json(f->sub, v + i * f->sub->size));
}

/* Returns whether the row was written (FW_WITH_PREV). */
static bool write_one(cJSON *o, const struct field *f, const void *s, bool prev)
{
    if ((f->write & FW_READONLY) || ((f->write & FW_OMIT_NONE) && none(f, s)) ||
        ((f->write & FW_WITH_PREV) && !prev))
        return false;
    const void *m = (const char *)s + f->offset;
    if (f->kind == FIELD_OBJECT && (f->write & FW_INLINE)) {
        bool present = object_present(f->sub, m);
        if (present)
            fields_write(o, f->sub, m);
        return present;
    }
    switch (f->kind) {
    case FIELD_NUMBER: write_number(o, f, *(const double *)m); break;
    case FIELD_WHOLE: artifact_add_whole(o, f->key, *(const long *)m); break;
    case FIELD_STRING: artifact_add_string(o, f->key, *(char *const *)m); break;
    case FIELD_BOOL: cJSON_AddBoolToObject(o, f->key, *(const bool *)m); break;
    case FIELD_STRINGS:
        if ((f->write & FW_NULL_STRS) && !*(char **const *)m)
            cJSON_AddNullToObject(o, f->key);
        else
            cJSON_AddItemToObject(o, f->key, artifact_string_array(*(char **const *)m,
                                                                   *CAT(s, f->count_offset, size_t)));
        break;
    case FIELD_OBJECT:
        if (object_present(f->sub, m))
            fields_write(cJSON_AddObjectToObject(o, f->key), f->sub, m);
        else if (f->write & FW_NULL)
            cJSON_AddNullToObject(o, f->key);
        else if (f->write & FW_EMPTY)
            cJSON_AddObjectToObject(o, f->key);
        break;
    case FIELD_ARRAY: write_array(o, f, s); break;
    case FIELD_CUSTOM: f->codec->write(o, f->key, m); break;
    }
    return true;
}

void fields_write(cJSON *o, const struct field_table *t, const void *s)
{
    bool prev = true;
    for (size_t i = 0; o && i < t->n; i++)
        prev = write_one(o, &t->f[i], s, prev);
}

cJSON *fields_to_json(const struct field_table *t, const void *s)
{
    cJSON *o = cJSON_CreateObject();
    fields_write(o, t, s);
    return o;
}

struct array_ctx {
    const struct field_table *sub;
    char *v;
};

static void array_elem_read(struct jread *r, const cJSON *item, int i, void *ctx)
{
    struct array_ctx *a = ctx;
    fields_read(r, item, a->sub, a->v + (size_t)i * a->sub->size);
}

static void read_array(struct jread *r, const cJSON *o, const struct field *f, void *s)
{
    const cJSON *a = jread_array(r, o, f->key, f->read);
    size_t n = a ? (size_t)cJSON_GetArraySize(a) : 0;
    if (!n)
        return;
    char *v = calloc(n, f->sub->size);
    if (!v) {
        jread_fail(r, f->key, "out of memory");
        return;
    }
    *AT(s, f->offset, char *) = v;
    *AT(s, f->count_offset, size_t) = n;    /* elements not read are zero: free is safe */
    struct array_ctx ctx = {f->sub, v};
    jread_each(r, f->key, a, array_elem_read, &ctx);
}

static void zero(const struct field_table *t, void *s);

/* An FW_INLINE object: its rows in o itself; one with a present flag is
 * there when its first key is. */
static void read_inline(struct jread *r, const cJSON *o, const struct field *f, void *m)
{
    const char *first = f->sub->n ? f->sub->f[0].key : "";
    if (f->sub->present < 0 || cJSON_GetObjectItemCaseSensitive(o, first))
        fields_read(r, o, f->sub, m);
    else if (!(f->read & JR_OPTIONAL))
        jread_fail(r, first, "missing");
    else
        zero(f->sub, m);
}

static void read_one(struct jread *r, const cJSON *o, const struct field *f, void *s)
{
    void *m = (char *)s + f->offset;
    if ((f->write & FW_READONLY) &&
        (!cJSON_GetObjectItemCaseSensitive(o, f->key) || (f->kind != FIELD_CUSTOM && !none(f, s))))
        return;     /* an older key: it fills the member only where a file has it and the new key did not */
    switch (f->kind) {
    case FIELD_NUMBER: jread_number(r, o, f->key, f->read, m); break;
    case FIELD_WHOLE: jread_whole(r, o, f->key, f->read, f->min, m); break;
    case FIELD_STRING: jread_string(r, o, f->key, f->read, m); break;
    case FIELD_BOOL: jread_bool(r, o, f->key, f->read, m); break;
    case FIELD_STRINGS: jread_strings(r, o, f->key, f->read, m, AT(s, f->count_offset, size_t)); break;
    case FIELD_OBJECT:
        if (f->write & FW_INLINE)
            read_inline(r, o, f, m);
        else
            fields_read_object(r, o, f->key, f->read, f->sub, m);
        break;
    case FIELD_ARRAY: read_array(r, o, f, s); break;
    case FIELD_CUSTOM: f->codec->read(r, o, f->key, f->read, m); break;
    }
}

static void zero(const struct field_table *t, void *s)
{
    memset(s, 0, t->size);
    for (size_t i = 0; i < t->n; i++) {
        const struct field *f = &t->f[i];
        if (f->kind == FIELD_NUMBER)
            *AT(s, f->offset, double) = NAN;
        else if (f->kind == FIELD_WHOLE)
            *AT(s, f->offset, long) = ARTIFACT_NONE;
    }
}

int fields_read(struct jread *r, const cJSON *o, const struct field_table *t, void *s)
{
    zero(t, s);
    if (t->present >= 0)
        *AT(s, (size_t)t->present, bool) = true;
    for (size_t i = 0; i < t->n && !r->failed; i++)
        read_one(r, o, &t->f[i], s);
    return r->failed ? -1 : 0;
}

int fields_read_object(struct jread *r, const cJSON *o, const char *key, unsigned flags,
                       const struct field_table *t, void *s)
{
    zero(t, s);
    const cJSON *j = jread_object(r, o, key, flags);
    if (!j)
        return r->failed ? -1 : 0;
    size_t mark = jread_enter(r, key);
    int rc = fields_read(r, j, t, s);
    jread_leave(r, mark);
    return rc;
}

void fields_free(const struct field_table *t, void *s)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct field *f = &t->f[i];
        void *m = (char *)s + f->offset;
        switch (f->kind) {
        case FIELD_STRING: free(*(char **)m); break;
        case FIELD_STRINGS: artifact_strings_free(*(char ***)m, *AT(s, f->count_offset, size_t)); break;
        case FIELD_OBJECT: fields_free(f->sub, m); break;
        case FIELD_ARRAY: {
            char *v = *(char **)m;
            for (size_t k = 0; v && k < *AT(s, f->count_offset, size_t); k++)
                fields_free(f->sub, v + k * f->sub->size);
            free(v);
            break;
        }
        case FIELD_CUSTOM:
            if (f->codec->free)
                f->codec->free(m);
            break;
        default: break;
        }
    }
    zero(t, s);
}

void fields_walk(const struct field_table *t, const char *prefix,
                 void (*visit)(const struct field *f, const char *path, void *ctx), void *ctx)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct field *f = &t->f[i];
        char path[256];
        snprintf(path, sizeof path, "%s%s%s%s", prefix ? prefix : "", prefix && *prefix ? "." : "",
                 f->key, f->kind == FIELD_ARRAY ? "[]" : "");
        if (f->write & FW_INLINE) {   /* its rows are keys of this object */
            fields_walk(f->sub, prefix, visit, ctx);
            continue;
        }
        visit(f, path, ctx);
        if (f->sub)
            fields_walk(f->sub, path, visit, ctx);
    }
}

/* ---- codecs ---- */

static void json_write(cJSON *o, const char *key, const void *value)
{
    const cJSON *v = *(cJSON *const *)value;
    cJSON_AddItemToObject(o, key, v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
}

static void json_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    const cJSON *v = jread_item(r, o, key, flags);
    *(cJSON **)value = NULL;
    if (v && !cJSON_IsNull(v) && !(*(cJSON **)value = cJSON_Duplicate(v, true)))
        jread_fail(r, key, "out of memory");
}

static void json_free(void *value)
{
    cJSON_Delete(*(cJSON **)value);
    *(cJSON **)value = NULL;
}

const struct field_codec field_json_codec = {json_write, json_read, json_free};

static void tribool_write(cJSON *o, const char *key, const void *value)
{
    int v = *(const int *)value;
    if (v < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddBoolToObject(o, key, v != 0);
}

static void tribool_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    const cJSON *v = jread_item(r, o, key, flags);
    *(int *)value = v && cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
    if (v && !cJSON_IsBool(v) && !cJSON_IsNull(v))
        jread_fail(r, key, "expected true, false or null");
}

const struct field_codec field_tribool_codec = {tribool_write, tribool_read, NULL};

static void pair_write(cJSON *o, const char *key, const void *value)
{
    const double *v = value;
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int i = 0; a && i < 2; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
}

static void pair_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    jread_numbers(r, o, key, flags, value, 2);
}

const struct field_codec field_pair_codec = {pair_write, pair_read, NULL};
