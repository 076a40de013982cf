/* yamljson.c — YAML documents as cJSON trees, built from libyaml's events so
 * that aliases are counted as they are expanded and a document past a limit
 * is refused where the limit is crossed; JSON text checked against the same
 * limits before cJSON parses it. */
#include "core/yamljson.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#define MAX_ANCHORS 16384u               /* distinct anchors in one document */
#define ANCHOR_SLOTS (2 * MAX_ANCHORS)   /* open addressing, load <= 1/2 */

/* ------------------------------------------------------------------ YAML */

struct anchor {
    char *name;
    const cJSON *node;    /* in the tree being built, owned by it */
    size_t nodes, text;   /* what one use of the alias costs */
    int height;           /* containers nested in node, itself included */
};

struct frame {
    cJSON *node;          /* owned until added to its parent */
    char *key;            /* a mapping's key waiting for its value */
    char *anchor;
    size_t nodes0, text0; /* counts when the node began */
    int height;
};

struct yb {
    struct frame st[DOC_MAX_DEPTH];
    int depth;
    size_t nodes, text;
    struct anchor *slots; /* ANCHOR_SLOTS, allocated at the first anchor */
    size_t nanchors;
    cJSON *root;
    char *err;
    size_t errlen;
    bool failed;
};

static void fail_at(struct yb *b, yaml_mark_t m, const char *why)
{
    if (!b->failed)
        snprintf(b->err, b->errlen, "%zu:%zu: %s", m.line + 1, m.column + 1, why);
    b->failed = true;
}

static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)(h % ANCHOR_SLOTS);
}

static struct anchor *anchor_slot(struct yb *b, const char *name)
{
    size_t i = hash(name);
    while (b->slots[i].name && strcmp(b->slots[i].name, name))
        i = (i + 1) % ANCHOR_SLOTS;
    return &b->slots[i];
}

/* A later anchor of the same name replaces the earlier one (YAML 1.2, 3.2.2.2). */
static void anchor_add(struct yb *b, yaml_mark_t m, char *name, const struct anchor *a)
{
    if (!b->slots && !(b->slots = calloc(ANCHOR_SLOTS, sizeof *b->slots))) {
        free(name);
        fail_at(b, m, "out of memory");
        return;
    }
    struct anchor *s = anchor_slot(b, name);
    if (!s->name && b->nanchors >= MAX_ANCHORS) {
        free(name);
        char why[120];
        snprintf(why, sizeof why, "more than %u anchors (the limit for an input file)", MAX_ANCHORS);
        fail_at(b, m, why);
        return;
    }
    b->nanchors += !s->name;
    free(s->name);
    *s = *a;
    s->name = name;
}

static bool within_limits(struct yb *b, yaml_mark_t m, size_t nodes, size_t text, int height)
{
    char why[200];
    if (b->depth + height > DOC_MAX_DEPTH)
        snprintf(why, sizeof why, "nested deeper than %d levels (the limit for an input file)",
                 DOC_MAX_DEPTH);
    else if (nodes > DOC_MAX_NODES - b->nodes)
        snprintf(why, sizeof why, "more than %u values, aliases counted each time they are used "
                 "(the limit for an input file)", DOC_MAX_NODES);
    else if (text > DOC_MAX_TEXT - b->text)
        snprintf(why, sizeof why, "more than %u MiB of text, aliases counted each time they are "
                 "used (the limit for an input file)", DOC_MAX_TEXT >> 20);
    else {
        b->nodes += nodes;
        b->text += text;
        return true;
    }
    fail_at(b, m, why);
    return false;
}

static cJSON *scalar(const char *v, yaml_scalar_style_t style)
{
    if (style != YAML_PLAIN_SCALAR_STYLE)
        return cJSON_CreateString(v);
    if (!strcmp(v, "true") || !strcmp(v, "True"))
        return cJSON_CreateTrue();
    if (!strcmp(v, "false") || !strcmp(v, "False"))
        return cJSON_CreateFalse();
    if (!strcmp(v, "null") || !strcmp(v, "~") || !v[0])
        return cJSON_CreateNull();
    char *end;
    double d = strtod(v, &end);
    if (end != v && !*end && isfinite(d))
        return cJSON_CreateNumber(d);
    return cJSON_CreateString(v);
}

/* Hands a finished value v to its parent (or makes it the root); a takes
 * the anchor's name when the value had one. */
static void place(struct yb *b, yaml_mark_t m, cJSON *v, char *anchor, const struct anchor *a)
{
    if (!v) {
        free(anchor);
        fail_at(b, m, "out of memory");
        return;
    }
    if (anchor) {
        struct anchor rec = *a;
        rec.node = v;
        anchor_add(b, m, anchor, &rec);
    }
    if (b->depth == 0) {
        b->root = v;
        return;
    }
    struct frame *p = &b->st[b->depth - 1];
    if (p->height < a->height + 1)
        p->height = a->height + 1;
    if (cJSON_IsArray(p->node)) {
        cJSON_AddItemToArray(p->node, v);
        return;
    }
    cJSON_AddItemToObject(p->node, p->key, v);
    free(p->key);
    p->key = NULL;
}

/* True when the parent is a mapping waiting for a key: only a scalar can be one. */
static bool wants_key(const struct yb *b)
{
    return b->depth > 0 && cJSON_IsObject(b->st[b->depth - 1].node) && !b->st[b->depth - 1].key;
}

static void on_scalar(struct yb *b, const yaml_event_t *e)
{
    const char *v = (const char *)e->data.scalar.value;
    size_t len = e->data.scalar.length;
    if (!within_limits(b, e->start_mark, 1, len, 0))
        return;
    if (wants_key(b)) {
        if (!(b->st[b->depth - 1].key = strdup(v)))
            fail_at(b, e->start_mark, "out of memory");
        return;
    }
    char *anchor = e->data.scalar.anchor ? strdup((const char *)e->data.scalar.anchor) : NULL;
    struct anchor a = {.nodes = 1, .text = len};
    place(b, e->start_mark, scalar(v, e->data.scalar.style), anchor, &a);
}

static void on_start(struct yb *b, const yaml_event_t *e, bool seq)
{
    if (wants_key(b)) {
        fail_at(b, e->start_mark, "a mapping key that is not a plain value");
        return;
    }
    if (!within_limits(b, e->start_mark, 1, 0, 1))
        return;
    const yaml_char_t *anchor = seq ? e->data.sequence_start.anchor : e->data.mapping_start.anchor;
    struct frame *f = &b->st[b->depth];
    *f = (struct frame){.node = seq ? cJSON_CreateArray() : cJSON_CreateObject(),
                        .nodes0 = b->nodes - 1, .text0 = b->text, .height = 1};
    if (anchor)
        f->anchor = strdup((const char *)anchor);
    b->depth++;
    if (!f->node || (anchor && !f->anchor))
        fail_at(b, e->start_mark, "out of memory");
}

static void on_end(struct yb *b, const yaml_event_t *e)
{
    struct frame f = b->st[--b->depth];
    struct anchor a = {.nodes = b->nodes - f.nodes0, .text = b->text - f.text0, .height = f.height};
    free(f.key);
    place(b, e->start_mark, f.node, f.anchor, &a);
}

static void on_alias(struct yb *b, const yaml_event_t *e)
{
    const char *name = (const char *)e->data.alias.anchor;
    const struct anchor *a = b->slots ? anchor_slot(b, name) : NULL;
    char why[200];
    if (!a || !a->name) {
        snprintf(why, sizeof why, "alias *%.100s names no anchor defined before it", name);
        fail_at(b, e->start_mark, why);
        return;
    }
    if (wants_key(b)) {
        fail_at(b, e->start_mark, "a mapping key that is not a plain value");
        return;
    }
    if (within_limits(b, e->start_mark, a->nodes, a->text, a->height))
        place(b, e->start_mark, cJSON_Duplicate(a->node, 1), NULL, a);
}

/* One event; returns true when the first document is complete. */
static bool on_event(struct yb *b, const yaml_event_t *e)
{
    switch (e->type) {
    case YAML_SCALAR_EVENT:
        on_scalar(b, e);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        on_start(b, e, e->type == YAML_SEQUENCE_START_EVENT);
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        on_end(b, e);
        break;
    case YAML_ALIAS_EVENT:
        on_alias(b, e);
        break;
    case YAML_DOCUMENT_END_EVENT:
        return true;
    case YAML_STREAM_END_EVENT:
        if (!b->root)
            fail_at(b, e->start_mark, "no YAML document (the file is empty)");
        return true;
    default:
        break;
    }
    return false;
}

static void yb_free(struct yb *b)
{
    for (int i = 0; i < b->depth; i++) {
        cJSON_Delete(b->st[i].node);
        free(b->st[i].key);
        free(b->st[i].anchor);
    }
    for (size_t i = 0; b->slots && i < ANCHOR_SLOTS; i++)
        free(b->slots[i].name);
    free(b->slots);
}

cJSON *yaml_to_json(const char *text, size_t len, char *err, size_t errlen)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "1:1: out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    struct yb b = {.err = err, .errlen = errlen};
    for (bool done = false; !done && !b.failed;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&parser, &e)) {
            fail_at(&b, parser.problem_mark, parser.problem ? parser.problem : "not YAML");
            break;
        }
        done = on_event(&b, &e);
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&parser);
    yb_free(&b);
    if (b.failed) {
        cJSON_Delete(b.root);
        return NULL;
    }
    return b.root;
}

/* ------------------------------------------------------------------ JSON */

static void json_fail(const char *text, size_t at, const char *why, char *err, size_t errlen)
{
    size_t line = 1, start = 0;
    for (size_t i = 0; i < at; i++)
        if (text[i] == '\n')
            line++, start = i + 1;
    snprintf(err, errlen, "%zu:%zu: %s", line, at - start + 1, why);
}

/* An upper bound on the values (1 + containers + commas) and the nesting,
 * outside strings; returns the offset where a limit is crossed, or len. */
static size_t json_scan(const char *t, size_t len, size_t max_nodes, char *why, size_t whylen)
{
    size_t nodes = 1;
    int depth = 0;
    bool str = false;
    for (size_t i = 0; i < len; i++) {
        char c = t[i];
        if (str) {
            if (c == '\\' && i + 1 < len && t[i + 1] != '\n')
                i++;
            else if (c == '"')
                str = false;
            continue;
        }
        if (c == '"')
            str = true;
        else if (c == '[' || c == '{')
            depth++, nodes++;
        else if (c == ']' || c == '}')
            depth--;
        else if (c == ',')
            nodes++;
        if (depth > DOC_MAX_DEPTH) {
            snprintf(why, whylen, "nested deeper than %d levels (the limit for an input file)", DOC_MAX_DEPTH);
            return i;
        }
        if (nodes > max_nodes) {
            snprintf(why, whylen, "more than %zu values (the limit for this input file)", max_nodes);
            return i;
        }
    }
    return len;
}

cJSON *json_parse_capped(const char *text, size_t len, size_t max_nodes, bool *limit, char *err,
                         size_t errlen)
{
    char why[160];
    size_t at = json_scan(text, len, max_nodes, why, sizeof why);
    if (limit)
        *limit = at < len;
    if (at < len) {
        json_fail(text, at, why, err, errlen);
        return NULL;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!j)
        json_fail(text, end && end >= text && end <= text + len ? (size_t)(end - text) : 0,
                  "not JSON (the first character that does not fit)", err, errlen);
    return j;
}

cJSON *json_or_yaml(const char *text, size_t len, char *err, size_t errlen)
{
    /* past a limit as JSON, YAML's exact count decides (the JSON scan's
     * count is an upper bound, and YAML text can hold unquoted brackets) */
    cJSON *j = json_parse_capped(text, len, DOC_MAX_NODES, NULL, err, errlen);
    return j ? j : yaml_to_json(text, len, err, errlen);
}
