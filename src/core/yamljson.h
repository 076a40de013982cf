/* yamljson.h — reads the files people write by hand (sweep and graph plans,
 * agentic session files, tools, datasets, caches) as cJSON trees, YAML
 * (libyaml) or JSON alike, at a bounded cost whatever the bytes are.
 *
 * Limits (docs/RELIABILITY.md, "Input files"): a document may hold at most
 * DOC_MAX_NODES values (YAML aliases counted once per use, so a few hundred
 * bytes of nested aliases cannot expand to gigabytes), nest at most
 * DOC_MAX_DEPTH containers deep, and hold at most DOC_MAX_TEXT bytes of
 * scalar text after alias expansion. A document past a limit is refused as
 * soon as the limit is crossed, before the rest is read. */
#ifndef ANVIL_CORE_YAMLJSON_H
#define ANVIL_CORE_YAMLJSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define DOC_MAX_NODES 1000000u             /* values in one input document */
#define DOC_MAX_DEPTH 64                   /* nested arrays/objects */
#define DOC_MAX_TEXT (64u << 20)           /* bytes of scalar text, aliases expanded */
#define DOC_MAX_NODES_DATASET 20000000u    /* a whole-file dataset (ShareGPT is ~2 M) */

/* Parses the first YAML document of text (len bytes). Mappings become
 * objects, sequences arrays; a plain scalar that reads as a number, true,
 * false or null (or ~) becomes that, any other scalar a string. Returns the
 * tree (caller deletes), or NULL with "LINE:COLUMN: reason" in err (1-based,
 * so a caller prefixes "FILE:"), naming the limit when one was crossed. */
cJSON *yaml_to_json(const char *text, size_t len, char *err, size_t errlen);

/* Parses text (len bytes) as one JSON value, refusing more than max_nodes
 * values or more than DOC_MAX_DEPTH levels of nesting before cJSON builds
 * anything. Returns the tree (caller deletes), or NULL with
 * "LINE:COLUMN: reason" in err; *limit (may be NULL) is set when the reason
 * is a limit rather than a syntax error. */
cJSON *json_parse_capped(const char *text, size_t len, size_t max_nodes, bool *limit, char *err,
                         size_t errlen);

/* A hand-written file that may be either: JSON when text parses as JSON
 * within the default limits, else YAML (a superset of JSON) with the same
 * limits. On NULL, err holds "LINE:COLUMN: reason" of the YAML reading. */
cJSON *json_or_yaml(const char *text, size_t len, char *err, size_t errlen);

#endif
