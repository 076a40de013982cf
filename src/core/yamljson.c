/* yamljson.c — YAML documents as cJSON trees, through libyaml's loader. */
#include "core/yamljson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

static cJSON *scalar(const yaml_node_t *n)
{
    const char *v = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
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

static cJSON *convert(yaml_document_t *doc, const yaml_node_t *n, int depth)
{
    if (!n || depth > 64)
        return NULL;
    if (n->type == YAML_SCALAR_NODE)
        return scalar(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        cJSON *a = cJSON_CreateArray();
        for (yaml_node_item_t *i = n->data.sequence.items.start; a && i < n->data.sequence.items.top; i++) {
            cJSON *c = convert(doc, yaml_document_get_node(doc, *i), depth + 1);
            if (!c) {
                cJSON_Delete(a);
                return NULL;
            }
            cJSON_AddItemToArray(a, c);
        }
        return a;
    }
    cJSON *o = cJSON_CreateObject();
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; o && p < n->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = yaml_document_get_node(doc, p->key);
        cJSON *v = convert(doc, yaml_document_get_node(doc, p->value), depth + 1);
        if (!k || k->type != YAML_SCALAR_NODE || !v) {
            cJSON_Delete(v);
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, (const char *)k->data.scalar.value, v);
    }
    return o;
}

cJSON *yaml_to_json(const char *text, size_t len, char *err, size_t errlen)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    cJSON *out = NULL;
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errlen, "line %zu: %s", parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "not YAML");
    } else {
        out = convert(&doc, yaml_document_get_root_node(&doc), 0);
        if (!out)
            snprintf(err, errlen, "empty document, or a mapping key that is not a plain value");
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    return out;
}
