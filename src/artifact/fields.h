/* fields.h — an artifact's fields as rows of a table: key, type, unit,
 * where the value lives in the struct, how it may be absent, the schema
 * version that added it. The writer, the checked reader, the free and the
 * round-trip test all walk the same rows, so a key written is a key read
 * (the way curl's option table and SQLite's pragma table hold one fact per
 * row). Values that no row type fits (name → count maps, opaque JSON kept
 * for seeds) are a FIELD_CUSTOM row with their own codec. */
#ifndef ANVIL_ARTIFACT_FIELDS_H
#define ANVIL_ARTIFACT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/json.h"

enum field_kind {
    FIELD_NUMBER,   /* double; NaN/±inf written as null (FW_INF: +inf as "inf") */
    FIELD_WHOLE,    /* long; ARTIFACT_NONE written as null; read ≥ min */
    FIELD_STRING,   /* char * (owned, malloc'd); NULL written as null */
    FIELD_BOOL,     /* bool */
    FIELD_STRINGS,  /* char ** (owned) with a size_t count at count_offset */
    FIELD_OBJECT,   /* a struct member described by sub; with sub->present it may be absent */
    FIELD_ARRAY,    /* a pointer to sub->size elements (owned) with a size_t count at count_offset */
    FIELD_CUSTOM,   /* codec's functions */
};

/* Write flags. */
#define FW_OMIT_NONE 1u  /* leave the key out when the value is none (NaN, ARTIFACT_NONE,
                            NULL, an absent object, an empty array) instead of writing null */
#define FW_INF       2u  /* numbers: +inf written as the string "inf" (read it with JR_INF) */
#define FW_NULL      4u  /* objects: an absent object is written as null (default: left out) */
#define FW_READONLY  8u  /* an older key of a member (its row after the new key's): never
                            written, read only where a file has it and the new key left the
                            member none */
#define FW_INLINE   16u  /* objects: the sub-table's rows are keys of this object itself, not of
                            an object under key: a group of keys written together or not at all
                            (left out when absent); read: a sub-table with a present flag is
                            present when its first key is there (absent: an error unless the
                            row is JR_OPTIONAL). A block whose tail exists only in some states */
#define FW_WITH_PREV 32u /* written only when the row before it was written */
#define FW_EMPTY    64u  /* objects: an absent object is written as {} (default: left out) */
#define FW_NULL_STRS 128u /* strings arrays: a NULL array is written as null (default: []) */

/* How a FIELD_CUSTOM value is written, read and freed. value points at the
 * member. read records its errors in r; free may be NULL. */
struct field_codec {
    void (*write)(cJSON *o, const char *key, const void *value);
    void (*read)(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value);
    void (*free)(void *value);
};

/* Codecs for values no row kind holds:
 * field_json_codec: a cJSON * member (owned), written as a copy (NULL as
 *   null), read as a copy of whatever is there (absent or null: NULL) —
 *   name → value maps whose names are data, not keys;
 * field_tribool_codec: an int, negative null (-1: unknown), 0 false, else true;
 * field_pair_codec: a double[2] written as [a, b], NaN/±inf as null. */
extern const struct field_codec field_json_codec, field_tribool_codec, field_pair_codec;

struct field_table;

struct field {
    const char *key;            /* the JSON key */
    enum field_kind kind;
    size_t offset;              /* of the member in the struct */
    unsigned read;              /* JR_* flags of the checked reader */
    unsigned write;             /* FW_* flags */
    const char *unit;           /* "ms", "s", "tokens", "tok/s", ...; NULL: none or a name */
    const char *since;          /* the schema version that added the key; NULL: the first */
    long min;                   /* FIELD_WHOLE: the smallest value read */
    size_t count_offset;        /* FIELD_STRINGS, FIELD_ARRAY: the size_t count member */
    const struct field_table *sub;      /* FIELD_OBJECT, FIELD_ARRAY */
    const struct field_codec *codec;    /* FIELD_CUSTOM */
};

/* A struct's rows. present ≥ 0 is the offset of a bool that says whether
 * the object is there at all (absent or null reads as false). */
struct field_table {
    const char *name;           /* the struct, for messages and docs */
    const struct field *f;
    size_t n;
    size_t size;                /* sizeof the struct: array elements */
    long present;               /* offset of `bool present`, or -1 */
};

/* Row builders: T is the struct type, m the member (its name is the key;
 * FIELD_KEY_* take another key). R is the JR_* read flags. */
#define F_NUM(T, m, R, unit)      {#m, FIELD_NUMBER, offsetof(T, m), (R), 0, (unit), NULL, 0, 0, NULL, NULL}
#define F_WHOLE(T, m, R, unit)    {#m, FIELD_WHOLE, offsetof(T, m), (R), 0, (unit), NULL, 0, 0, NULL, NULL}
#define F_STR(T, m, R)            {#m, FIELD_STRING, offsetof(T, m), (R), 0, NULL, NULL, 0, 0, NULL, NULL}
#define F_BOOL(T, m, R)           {#m, FIELD_BOOL, offsetof(T, m), (R), 0, NULL, NULL, 0, 0, NULL, NULL}
#define F_STRS(T, m, n, R)        {#m, FIELD_STRINGS, offsetof(T, m), (R), 0, NULL, NULL, 0, offsetof(T, n), NULL, NULL}
#define F_OBJ(T, m, R, sub)       {#m, FIELD_OBJECT, offsetof(T, m), (R), 0, NULL, NULL, 0, 0, (sub), NULL}
#define F_ARR(T, m, n, R, sub)    {#m, FIELD_ARRAY, offsetof(T, m), (R), 0, NULL, NULL, 0, offsetof(T, n), (sub), NULL}
#define F_CUSTOM(T, m, R, codec)  {#m, FIELD_CUSTOM, offsetof(T, m), (R), 0, NULL, NULL, 0, 0, NULL, (codec)}
/* The same with write flags W (FW_*) and, for whole numbers, the least
 * value read. */
#define F_NUM_W(T, m, R, W, unit)         {#m, FIELD_NUMBER, offsetof(T, m), (R), (W), (unit), NULL, 0, 0, NULL, NULL}
#define F_WHOLE_MIN(T, m, R, W, unit, lo) {#m, FIELD_WHOLE, offsetof(T, m), (R), (W), (unit), NULL, (lo), 0, NULL, NULL}
#define F_STR_W(T, m, R, W)               {#m, FIELD_STRING, offsetof(T, m), (R), (W), NULL, NULL, 0, 0, NULL, NULL}
#define F_BOOL_W(T, m, R, W)              {#m, FIELD_BOOL, offsetof(T, m), (R), (W), NULL, NULL, 0, 0, NULL, NULL}
#define F_STRS_W(T, m, n, R, W)           {#m, FIELD_STRINGS, offsetof(T, m), (R), (W), NULL, NULL, 0, offsetof(T, n), NULL, NULL}
#define F_OBJ_W(T, m, R, W, sub)          {#m, FIELD_OBJECT, offsetof(T, m), (R), (W), NULL, NULL, 0, 0, (sub), NULL}
#define F_ARR_W(T, m, n, R, W, sub)       {#m, FIELD_ARRAY, offsetof(T, m), (R), (W), NULL, NULL, 0, offsetof(T, n), (sub), NULL}
/* A row whose key is not its member's name (key k; m may be a path,
 * "meta.scope", or an array element, "metric[2]"). */
#define F_KEYED(k, kind, T, m, R, W, unit, sub, codec) \
    {(k), (kind), offsetof(T, m), (R), (W), (unit), NULL, 0, 0, (sub), (codec)}
#define F_CUSTOM_U(T, m, R, unit, codec)  {#m, FIELD_CUSTOM, offsetof(T, m), (R), 0, (unit), NULL, 0, 0, NULL, (codec)}

/* A table over an array of rows. */
#define FIELD_TABLE(name, T, rows, present_member) \
    {name, rows, sizeof rows / sizeof rows[0], sizeof(T), (long)offsetof(T, present_member)}
#define FIELD_TABLE_ALWAYS(name, T, rows) \
    {name, rows, sizeof rows / sizeof rows[0], sizeof(T), -1}

/* Adds every row of t from the struct s to the object o, in row order.
 * Objects with present false are left out (FW_NULL: written as null). */
void fields_write(cJSON *o, const struct field_table *t, const void *s);

/* fields_write into a new object: the caller deletes; NULL when memory
 * runs out. */
cJSON *fields_to_json(const struct field_table *t, const void *s);

/* Reads every row of t from o into s (zeroed first; owned strings and
 * arrays malloc'd, freed by fields_free), each lookup checked as the row's
 * flags say. With t->present, s's present flag is set true. Errors are
 * recorded in r (the first kept); returns 0 or -1. */
int fields_read(struct jread *r, const cJSON *o, const struct field_table *t, void *s);

/* Reads o[key] as the object of table t into s: absent (JR_OPTIONAL) or
 * null (JR_NULLABLE) leaves s zeroed with present false. Returns 0 or -1. */
int fields_read_object(struct jread *r, const cJSON *o, const char *key, unsigned flags,
                       const struct field_table *t, void *s);

/* Frees what fields_read allocated in s (strings, arrays, custom values)
 * and zeroes it. */
void fields_free(const struct field_table *t, void *s);

/* Visits every row of t and of its nested tables, depth first; path is
 * the dotted key path ("duration_mode.window_s", "rows[].ttft_ms"). For
 * docs and the registry's coverage test. */
void fields_walk(const struct field_table *t, const char *prefix,
                 void (*visit)(const struct field *f, const char *path, void *ctx), void *ctx);

#endif
