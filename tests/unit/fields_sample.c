/* fields_sample.c — round trips generated from field tables. */
#include "fields_sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT(s, off, type) ((type *)((char *)(s) + (off)))

static char *sample_string(int v)
{
    char b[32];
    snprintf(b, sizeof b, "s%d", v);
    return strdup(b);
}

void fields_sample_fill(const struct field_table *t, void *s, int seed)
{
    memset(s, 0, t->size);
    if (t->present >= 0)
        *AT(s, (size_t)t->present, bool) = true;
    for (size_t i = 0; i < t->n; i++) {
        const struct field *f = &t->f[i];
        int v = seed + (int)i;
        void *m = (char *)s + f->offset;
        switch (f->kind) {
        case FIELD_NUMBER: *(double *)m = v + 0.25; break;
        case FIELD_WHOLE: *(long *)m = f->min + v; break;
        case FIELD_STRING: *(char **)m = sample_string(v); break;
        case FIELD_BOOL: *(bool *)m = true; break;
        case FIELD_STRINGS: {
            char **a = calloc(2, sizeof *a);
            a[0] = sample_string(v);
            a[1] = sample_string(v + 1);
            *(char ***)m = a;
            *AT(s, f->count_offset, size_t) = 2;
            break;
        }
        case FIELD_OBJECT: fields_sample_fill(f->sub, m, v * 100); break;
        case FIELD_ARRAY: {
            char *a = calloc(2, f->sub->size);
            fields_sample_fill(f->sub, a, v * 100);
            fields_sample_fill(f->sub, a + f->sub->size, v * 100 + 50);
            *(char **)m = a;
            *AT(s, f->count_offset, size_t) = 2;
            break;
        }
        case FIELD_CUSTOM: break;
        }
    }
}

static bool same_string(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool row_equal(const struct field *f, const void *a, const void *b, char *why, size_t cap)
{
    const void *x = (const char *)a + f->offset, *y = (const char *)b + f->offset;
    switch (f->kind) {
    case FIELD_NUMBER: {
        double p = *(const double *)x, q = *(const double *)y;
        return p == q || (isnan(p) && isnan(q));
    }
    case FIELD_WHOLE: return *(const long *)x == *(const long *)y;
    case FIELD_STRING: return same_string(*(char *const *)x, *(char *const *)y);
    case FIELD_BOOL: return *(const bool *)x == *(const bool *)y;
    case FIELD_STRINGS: {
        size_t n = *(const size_t *)((const char *)a + f->count_offset);
        if (n != *(const size_t *)((const char *)b + f->count_offset))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!same_string((*(char **const *)x)[i], (*(char **const *)y)[i]))
                return false;
        return true;
    }
    case FIELD_OBJECT: return fields_sample_equal(f->sub, x, y, why, cap);
    case FIELD_ARRAY: {
        size_t n = *(const size_t *)((const char *)a + f->count_offset);
        if (n != *(const size_t *)((const char *)b + f->count_offset))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!fields_sample_equal(f->sub, *(char *const *)x + i * f->sub->size,
                                     *(char *const *)y + i * f->sub->size, why, cap))
                return false;
        return true;
    }
    case FIELD_CUSTOM: return true;
    }
    return false;
}

bool fields_sample_equal(const struct field_table *t, const void *a, const void *b, char *why, size_t cap)
{
    if (t->present >= 0 && *(const bool *)((const char *)a + t->present) !=
                           *(const bool *)((const char *)b + t->present)) {
        snprintf(why, cap, "%s: present differs", t->name);
        return false;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct field *f = &t->f[i];
        if (f->write & FW_READONLY)
            continue;
        if (!row_equal(f, a, b, why, cap)) {
            if (f->kind != FIELD_OBJECT && f->kind != FIELD_ARRAY)
                snprintf(why, cap, "%s.%s differs after the round trip", t->name, f->key);
            return false;
        }
    }
    return true;
}

bool fields_sample_round_trip(const struct field_table *t, char *why, size_t cap)
{
    void *a = calloc(1, t->size), *b = calloc(1, t->size);
    fields_sample_fill(t, a, 1);
    cJSON *j = fields_to_json(t, a);
    char err[256];
    struct jread r;
    jread_init(&r, t->name, err, sizeof err);
    bool ok = fields_read(&r, j, t, b) == 0;
    if (!ok)
        snprintf(why, cap, "%s", err);
    ok = ok && fields_sample_equal(t, a, b, why, cap);
    cJSON *k = ok ? fields_to_json(t, b) : NULL;
    if (ok && !cJSON_Compare(j, k, true)) {
        snprintf(why, cap, "%s: the JSON written from what was read differs", t->name);
        ok = false;
    }
    cJSON_Delete(j);
    cJSON_Delete(k);
    fields_free(t, a);
    fields_free(t, b);
    free(a);
    free(b);
    return ok;
}
