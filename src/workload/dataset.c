/* dataset.c — prompt datasets. */
#include "workload/dataset.h"

#include "core/buf.h"
#include "core/file.h"
#include "core/yamljson.h"
#include "workload/image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push(struct dataset *d, cJSON *messages, long max_tokens, long conv, long turn)
{
    struct dataset_entry *e = realloc(d->entries, (d->n + 1) * sizeof *e);
    if (!e) {
        cJSON_Delete(messages);
        return -1;
    }
    d->entries = e;
    d->entries[d->n++] = (struct dataset_entry){messages, max_tokens, conv, turn};
    return 0;
}

static cJSON *message(const char *role, const char *content)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", role);
    cJSON_AddStringToObject(m, "content", content);
    return m;
}

/* A message's content: a string, or (with images) an array of parts. */
static bool content_ok(const cJSON *c)
{
    return cJSON_IsString(c) || cJSON_IsArray(c);
}

/* The image paths of a record: "images" (array of strings) or "image" (a
 * string, LLaVA's key); NULL when it has none. Sets *bad when either key is
 * there but not of that shape. */
static const cJSON *image_list(const cJSON *rec, cJSON **one, bool *bad)
{
    const cJSON *many = cJSON_GetObjectItemCaseSensitive(rec, "images");
    const cJSON *single = cJSON_GetObjectItemCaseSensitive(rec, "image");
    *one = NULL;
    *bad = false;
    if (many) {
        const cJSON *p;
        cJSON_ArrayForEach(p, many)
            *bad |= !cJSON_IsString(p);
        *bad |= !cJSON_IsArray(many) || single;
        return *bad ? NULL : many;
    }
    if (!single)
        return NULL;
    if (!cJSON_IsString(single)) {
        *bad = true;
        return NULL;
    }
    *one = cJSON_CreateArray();
    cJSON_AddItemToArray(*one, cJSON_CreateString(single->valuestring));
    return *one;
}

/* path resolved against the dataset file's folder (absolute paths kept). */
static void resolve(const char *dataset_path, const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(dataset_path, '/');
    if (path[0] == '/' || !slash)
        snprintf(out, cap, "%s", path);
    else
        snprintf(out, cap, "%.*s/%s", (int)(slash - dataset_path), dataset_path, path);
}

/* Makes the first user message of msgs (owned by the caller) its text then
 * an image_url part per image (base64 data: URL of the file). Returns 0, or
 * -1 with err naming the dataset file, the line (or conversation) and the
 * image. */
static int attach_images(cJSON *msgs, const cJSON *paths, const char *dataset_path, const char *where,
                         char *err, size_t errlen)
{
    cJSON *m, *user = NULL;
    cJSON_ArrayForEach(m, msgs) {
        const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));
        if (role && !strcmp(role, "user") && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "content"))) {
            user = m;
            break;
        }
    }
    if (!user) {
        snprintf(err, errlen, "%s %s: images need a user message with text content", dataset_path, where);
        return -1;
    }
    cJSON *parts = cJSON_CreateArray(), *text = cJSON_CreateObject();
    cJSON_AddStringToObject(text, "type", "text");
    cJSON_AddStringToObject(text, "text", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(user, "content")));
    cJSON_AddItemToArray(parts, text);
    const cJSON *p;
    char file[4096], why[4400];
    struct buf url;
    buf_init(&url, 1u << 30);
    int rc = 0;
    cJSON_ArrayForEach(p, paths) {
        resolve(dataset_path, p->valuestring, file, sizeof file);
        buf_reset(&url);
        if ((rc = image_file_data_url(file, &url, why, sizeof why)) != 0) {
            snprintf(err, errlen, "%s %s: %s", dataset_path, where, why);
            break;
        }
        cJSON *part = cJSON_CreateObject();
        cJSON_AddStringToObject(part, "type", "image_url");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(part, "image_url"), "url", url.data);
        cJSON_AddItemToArray(parts, part);
    }
    buf_free(&url);
    if (rc == 0)
        cJSON_ReplaceItemInObjectCaseSensitive(user, "content", parts);
    else
        cJSON_Delete(parts);
    return rc;
}

/* Adds one entry per user turn of msgs (or only the first), each with the
 * turns before it. msgs holds objects with string role and content. */
static int add_turns(struct dataset *d, const cJSON *msgs, long max_tokens, long conv, bool multi_turn)
{
    cJSON *history = cJSON_CreateArray();
    const cJSON *m;
    int added = 0;
    bool awaiting = false;      /* the last entry pushed waits for its recorded reply */
    cJSON_ArrayForEach(m, msgs) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (!cJSON_IsString(role) || !content_ok(content))
            continue;
        if (awaiting && !strcmp(role->valuestring, "assistant")) {
            if (cJSON_IsString(content))
                d->entries[d->n - 1].reply = strdup(content->valuestring);
            awaiting = false;
            if (!multi_turn)
                break;
        }
        cJSON *copy = cJSON_CreateObject();
        cJSON_AddStringToObject(copy, "role", role->valuestring);
        cJSON_AddItemToObject(copy, "content", cJSON_Duplicate(content, 1));
        cJSON_AddItemToArray(history, copy);
        if (strcmp(role->valuestring, "user") != 0)
            continue;
        if (awaiting && !multi_turn)
            break;
        if (push(d, cJSON_Duplicate(history, 1), max_tokens, conv, added) != 0)
            break;
        added++;
        awaiting = true;
    }
    cJSON_Delete(history);
    return added;
}

/* One JSON Lines record: {"prompt": "..."} or {"messages": [...]}, with an
 * optional "max_tokens" and image paths ("images": [...] or "image": "...",
 * sent with its first user message). Returns entries added, or -1 (err set). */
static int jsonl_line(struct dataset *d, const char *line, size_t len, long lineno, bool multi_turn,
                      const char *path, char *err, size_t errlen)
{
    cJSON *j = cJSON_ParseWithLength(line, len);
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(j, "prompt");
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(j, "messages");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "max_tokens");
    bool mt_ok = cJSON_IsNumber(mt) && mt->valuedouble >= 1 && mt->valuedouble <= 1e8 &&
                 mt->valuedouble == floor(mt->valuedouble);
    long max_tokens = mt_ok ? (long)mt->valuedouble : -1;
    int added = -1;
    cJSON *one_image = NULL, *list = NULL;
    bool bad_images = false;
    const cJSON *images = cJSON_IsObject(j) ? image_list(j, &one_image, &bad_images) : NULL;
    char where[48];
    snprintf(where, sizeof where, "line %ld", lineno);
    if (mt && !mt_ok)
        snprintf(err, errlen, "%s line %ld: \"max_tokens\" must be a whole number from 1 to 100000000", path, lineno);
    else if (!cJSON_IsObject(j))
        snprintf(err, errlen, "%s line %ld: not a JSON object", path, lineno);
    else if (bad_images)
        snprintf(err, errlen, "%s line %ld: \"images\" must be an array of file paths (or \"image\" one path)",
                 path, lineno);
    else if (!cJSON_IsString(prompt) && !cJSON_IsArray(msgs))
        snprintf(err, errlen, "%s line %ld: needs a \"prompt\" string or a \"messages\" array", path, lineno);
    else {
        list = cJSON_IsString(prompt) ? cJSON_CreateArray() : cJSON_Duplicate(msgs, 1);
        if (cJSON_IsString(prompt))
            cJSON_AddItemToArray(list, message("user", prompt->valuestring));
        if (!images || attach_images(list, images, path, where, err, errlen) == 0)
            added = cJSON_IsString(prompt) ? (push(d, cJSON_Duplicate(list, 1), max_tokens, lineno - 1, 0) == 0 ? 1 : -1)
                                           : add_turns(d, list, max_tokens, lineno - 1, multi_turn);
    }
    cJSON_Delete(list);
    cJSON_Delete(one_image);
    if (added == 0) {
        snprintf(err, errlen, "%s line %ld: no user message", path, lineno);
        added = -1;
    }
    cJSON_Delete(j);
    return added;
}

static int load_jsonl(struct dataset *d, const char *path, bool multi_turn, char *err, size_t errlen)
{
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "cannot read %s", path);
        return -1;
    }
    long lineno = 0;
    int rc = 0;
    for (char *p = text; p < text + len && rc == 0;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        lineno++;
        if (strspn(p, " \t\r") < n && jsonl_line(d, p, n, lineno, multi_turn, path, err, errlen) < 0)
            rc = -1;
        p += n + 1;
    }
    free(text);
    return rc;
}

static const char *sharegpt_role(const char *from)
{
    if (!strcmp(from, "human") || !strcmp(from, "user"))
        return "user";
    if (!strcmp(from, "gpt") || !strcmp(from, "assistant") || !strcmp(from, "chatgpt"))
        return "assistant";
    if (!strcmp(from, "system"))
        return "system";
    return NULL;
}

static int load_sharegpt(struct dataset *d, const char *path, bool multi_turn, char *err, size_t errlen)
{
    size_t len;
    char *text = file_read_all(path, &len);
    char why[256] = " cannot read the file";
    cJSON *root = text ? json_parse_capped(text, len, DOC_MAX_NODES_DATASET, NULL, why, sizeof why) : NULL;
    free(text);
    if (!cJSON_IsArray(root)) {
        snprintf(err, errlen, "%s:%s", path, root ? " expected a JSON array of conversations" : why);
        cJSON_Delete(root);
        return -1;
    }
    long conv = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, root) {
        cJSON *msgs = cJSON_CreateArray();
        const cJSON *turn;
        cJSON_ArrayForEach(turn, cJSON_GetObjectItemCaseSensitive(c, "conversations")) {
            const cJSON *from = cJSON_GetObjectItemCaseSensitive(turn, "from");
            const cJSON *value = cJSON_GetObjectItemCaseSensitive(turn, "value");
            const char *role = cJSON_IsString(from) ? sharegpt_role(from->valuestring) : NULL;
            if (role && cJSON_IsString(value))
                cJSON_AddItemToArray(msgs, message(role, value->valuestring));
        }
        cJSON *one_image = NULL;
        bool bad = false;
        const cJSON *images = image_list(c, &one_image, &bad);
        char where[48];
        snprintf(where, sizeof where, "conversation %ld", conv);
        if (bad)
            snprintf(err, errlen, "%s conversation %ld: \"images\" must be an array of file paths (or \"image\" "
                     "one path)", path, conv);
        int rc = bad || (images && attach_images(msgs, images, path, where, err, errlen) != 0) ? -1 : 0;
        cJSON_Delete(one_image);
        if (rc == 0)
            add_turns(d, msgs, -1, conv++, multi_turn);     /* conversations without a user turn are skipped */
        cJSON_Delete(msgs);
        if (rc != 0) {
            cJSON_Delete(root);
            return -1;
        }
    }
    cJSON_Delete(root);
    if (d->n == 0) {
        snprintf(err, errlen, "%s: no conversation has a user turn", path);
        return -1;
    }
    return 0;
}

int dataset_load(const char *spec, bool multi_turn, struct dataset *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->spec, sizeof out->spec, "%s", spec);
    int rc;
    if (!strncmp(spec, "jsonl:", 6))
        rc = load_jsonl(out, spec + 6, multi_turn, err, errlen);
    else if (!strncmp(spec, "sharegpt:", 9))
        rc = load_sharegpt(out, spec + 9, multi_turn, err, errlen);
    else {
        snprintf(err, errlen, "expected jsonl:FILE or sharegpt:FILE, got '%s'", spec);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < out->n; i++) {
        const cJSON *m, *part;
        cJSON_ArrayForEach(m, out->entries[i].messages)
            cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(m, "content")) {
                const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "type"));
                out->images += type && !strcmp(type, "image_url");
            }
    }
    if (rc == 0 && out->n == 0) {
        snprintf(err, errlen, "%s holds no prompt", spec);
        rc = -1;
    }
    if (rc != 0)
        dataset_free(out);
    return rc;
}

void dataset_free(struct dataset *d)
{
    for (size_t i = 0; i < d->n; i++) {
        cJSON_Delete(d->entries[i].messages);
        free(d->entries[i].reply);
    }
    free(d->entries);
    d->entries = NULL;
    d->n = 0;
}
