/* tools.c — --tools FILE and --tool-choice, checked before anything is sent. */
#include "workload/tools.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/yamljson.h"

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

static const char *function_name(const cJSON *tool)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(tool, "function");
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name"));
}

static int check_tool(const cJSON *t, const char *path, int i, char *err, size_t errlen)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(t, "type");
    const char *name = function_name(t);
    if (!cJSON_IsObject(t) || !cJSON_IsString(type) || strcmp(type->valuestring, "function") != 0) {
        snprintf(err, errlen, "%s: tools[%d] is not {\"type\": \"function\", \"function\": {...}}", path, i);
        return -1;
    }
    if (!name || !valid_name(name)) {
        snprintf(err, errlen, "%s: tools[%d].function.name must be 1-64 letters, digits, '_' or '-'", path, i);
        return -1;
    }
    return 0;
}

cJSON *tools_load(const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read the file", path);
        return NULL;
    }
    char why[256];
    cJSON *root = json_parse_capped(text, len, DOC_MAX_NODES, NULL, why, sizeof why);
    free(text);
    if (!root) {
        snprintf(err, errlen, "%s:%s", path, why);
        return NULL;
    }
    cJSON *tools = cJSON_IsObject(root) ? cJSON_DetachItemFromObjectCaseSensitive(root, "tools") : NULL;
    if (cJSON_IsArray(root)) {
        tools = root;
        root = NULL;
    }
    cJSON_Delete(root);
    if (!cJSON_IsArray(tools) || cJSON_GetArraySize(tools) == 0) {
        snprintf(err, errlen, "%s: expected a non-empty JSON array of tools, or an object with one in \"tools\"", path);
        cJSON_Delete(tools);
        return NULL;
    }
    int i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tools)
        if (check_tool(t, path, i++, err, errlen) != 0) {
            cJSON_Delete(tools);
            return NULL;
        }
    return tools;
}

cJSON *tool_choice_parse(const char *s, const cJSON *tools, char *err, size_t errlen)
{
    if (!strcmp(s, "auto") || !strcmp(s, "none") || !strcmp(s, "required"))
        return cJSON_CreateString(s);
    if (s[0] == '{') {
        cJSON *j = cJSON_Parse(s);
        if (!cJSON_IsObject(j)) {
            snprintf(err, errlen, "--tool-choice: '%.200s' is not a JSON object", s);
            cJSON_Delete(j);
            return NULL;
        }
        return j;
    }
    const cJSON *t;
    cJSON_ArrayForEach(t, tools) {
        const char *name = function_name(t);
        if (name && !strcmp(name, s)) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "type", "function");
            cJSON_AddStringToObject(cJSON_AddObjectToObject(j, "function"), "name", s);
            return j;
        }
    }
    snprintf(err, errlen, "--tool-choice: '%.200s' is not auto, none, required, a JSON object or a "
             "function --tools defines", s);
    return NULL;
}
