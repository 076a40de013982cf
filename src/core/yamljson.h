/* yamljson.h — reads a YAML document (libyaml) as a cJSON tree, so the
 * files people write by hand (sweep and graph plans, agentic session files)
 * can be YAML or JSON alike. */
#ifndef ANVIL_CORE_YAMLJSON_H
#define ANVIL_CORE_YAMLJSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Parses the first YAML document of text (len bytes). Mappings become
 * objects, sequences arrays; a plain scalar that reads as a number, true,
 * false or null (or ~) becomes that, any other scalar a string. Returns the
 * tree (caller deletes), or NULL with the line and libyaml's reason in err. */
cJSON *yaml_to_json(const char *text, size_t len, char *err, size_t errlen);

#endif
