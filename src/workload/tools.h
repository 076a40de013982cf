/* tools.h — the tool definitions a chat request offers the model (OpenAI's
 * "tools" array) and its "tool_choice", read from --tools FILE and
 * --tool-choice. */
#ifndef ANVIL_WORKLOAD_TOOLS_H
#define ANVIL_WORKLOAD_TOOLS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Reads the tools of path: a JSON array of tool definitions, or an object
 * whose "tools" member is one (a request body's shape). Every entry must be
 * {"type": "function", "function": {"name": NAME, ...}} with NAME of 1-64
 * letters, digits, '_' or '-' (OpenAI's rule). Returns the array (the caller
 * deletes it), or NULL with a message naming the file and the entry in err. */
cJSON *tools_load(const char *path, char *err, size_t errlen);

/* The "tool_choice" value for text s: "auto", "none" and "required" as
 * they are, a JSON object (starting with '{') as given, else the name of
 * one of tools' functions, which becomes {"type": "function", "function":
 * {"name": s}}. Returns a new item (the caller deletes it), or NULL with a
 * message in err (invalid JSON, a name tools do not define). */
cJSON *tool_choice_parse(const char *s, const cJSON *tools, char *err, size_t errlen);

#endif
