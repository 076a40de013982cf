/* calcache.c — the calibration cache file (see calcache.h). */
#include "workload/calcache.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/clock.h"
#include "core/file.h"
#include "core/yamljson.h"
#include "workload/prompt.h"

void calcache_key_text(const struct calcache_key *k, char *out, size_t cap)
{
    snprintf(out, cap, "%s model=%s endpoint=%s engine=%s %s input_len=%ld prompt=%s seed=%" PRIu64
             " shared_prefix_len=%ld", k->server, k->model, k->endpoint, k->engine,
             k->engine_version[0] ? k->engine_version : "-", k->input_len, PROMPT_SCHEME, k->seed,
             k->shared_prefix_len);
}

/* Reads the cache at path: a new document, NULL with *missing when there is
 * no file, or NULL with err set. */
static cJSON *read_cache(const char *path, int *missing, char *err, size_t errlen)
{
    size_t len;
    *missing = 0;
    char *text = file_read_all(path, &len);
    if (!text) {
        if (errno == ENOENT) {
            *missing = 1;
            return NULL;
        }
        snprintf(err, errlen, "--calibration-cache %s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    char why[256];
    cJSON *doc = json_parse_capped(text, len, DOC_MAX_NODES, NULL, why, sizeof why);
    free(text);
    if (!doc) {
        snprintf(err, errlen, "--calibration-cache %s:%s: not a calibration cache", path, why);
        return NULL;
    }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CALCACHE_SCHEMA) != 0 ||
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "entries"))) {
        snprintf(err, errlen, "--calibration-cache %s: not a calibration cache (schema %s with "
                 "\"entries\" expected)", path, CALCACHE_SCHEMA);
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

static bool get_long(const cJSON *o, const char *k, long *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 1e15)
        return false;
    *out = (long)v->valuedouble;
    return true;
}

/* Fills *e from a stored entry. Returns 0, or -1 when a field is missing. */
static int parse_entry(const cJSON *j, struct calcache_entry *e)
{
    struct calibration *c = &e->cal;
    *e = (struct calcache_entry){.shared_prefix_tokens = -1};
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(j, "method");
    const cJSON *tpw = cJSON_GetObjectItemCaseSensitive(j, "tokens_per_word");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(j, "steps");
    if (!cJSON_IsString(method) || !cJSON_IsNumber(tpw) || !(tpw->valuedouble > 0) || !cJSON_IsArray(steps) ||
        !get_long(j, "target_tokens", &c->target_tokens) || !get_long(j, "tolerance_tokens", &c->tolerance_tokens) ||
        !get_long(j, "filler_words", &c->words) || !get_long(j, "measured_tokens", &c->tokens) ||
        c->words < 0)
        return -1;
    snprintf(e->method, sizeof e->method, "%s", method->valuestring);
    c->tokens_per_word = tpw->valuedouble;
    c->converged = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "converged"));
    const cJSON *s;
    cJSON_ArrayForEach(s, steps) {
        if (c->n_steps == CALIB_MAX_STEPS)
            break;
        struct calib_step *st = &c->steps[c->n_steps++];
        if (!get_long(s, "filler_words", &st->words))
            return -1;
        if (!get_long(s, "tokens", &st->tokens))
            st->tokens = -1;
        st->truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "truncated"));
    }
    if (!get_long(j, "shared_prefix_tokens", &e->shared_prefix_tokens))
        e->shared_prefix_tokens = -1;
    const cJSON *spm = cJSON_GetObjectItemCaseSensitive(j, "shared_prefix_method");
    if (cJSON_IsString(spm))
        snprintf(e->shared_prefix_method, sizeof e->shared_prefix_method, "%s", spm->valuestring);
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(j, "run_id");
    if (cJSON_IsString(run))
        snprintf(e->run_id, sizeof e->run_id, "%s", run->valuestring);
    return 0;
}

int calcache_lookup(const char *path, const char *key, struct calcache_entry *e, char *err,
                    size_t errlen)
{
    int missing;
    cJSON *doc = read_cache(path, &missing, err, errlen);
    if (!doc)
        return missing ? 0 : -1;
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "entries"), key);
    int rc = 0;
    if (j && parse_entry(j, e) != 0) {
        snprintf(err, errlen, "--calibration-cache %s: the entry \"%s\" is malformed", path, key);
        rc = -1;
    } else if (j) {
        rc = 1;
    }
    cJSON_Delete(doc);
    return rc;
}

static cJSON *entry_json(const struct calcache_entry *e)
{
    const struct calibration *c = &e->cal;
    cJSON *j = cJSON_CreateObject();
    char now[21];
    clock_utc_iso8601(now);
    cJSON_AddStringToObject(j, "method", e->method);
    cJSON_AddNumberToObject(j, "target_tokens", (double)c->target_tokens);
    cJSON_AddNumberToObject(j, "tolerance_tokens", (double)c->tolerance_tokens);
    cJSON_AddNumberToObject(j, "filler_words", (double)c->words);
    cJSON_AddNumberToObject(j, "measured_tokens", (double)c->tokens);
    cJSON_AddNumberToObject(j, "tokens_per_word", c->tokens_per_word);
    cJSON_AddBoolToObject(j, "converged", c->converged);
    cJSON *steps = cJSON_AddArrayToObject(j, "steps");
    for (int i = 0; i < c->n_steps; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "filler_words", (double)c->steps[i].words);
        if (c->steps[i].tokens >= 0)
            cJSON_AddNumberToObject(s, "tokens", (double)c->steps[i].tokens);
        else
            cJSON_AddNullToObject(s, "tokens");
        if (c->steps[i].truncated)
            cJSON_AddBoolToObject(s, "truncated", 1);
        cJSON_AddItemToArray(steps, s);
    }
    if (e->shared_prefix_tokens >= 0)
        cJSON_AddNumberToObject(j, "shared_prefix_tokens", (double)e->shared_prefix_tokens);
    else
        cJSON_AddNullToObject(j, "shared_prefix_tokens");
    cJSON_AddStringToObject(j, "shared_prefix_method", e->shared_prefix_method);
    cJSON_AddStringToObject(j, "run_id", e->run_id);
    cJSON_AddStringToObject(j, "saved_at", now);
    return j;
}

/* Writes text to path through path.tmp.<pid> renamed into place. */
static int write_replace(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "--calibration-cache %s: cannot write %s: %s", path, tmp, strerror(errno));
        return -1;
    }
    bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "--calibration-cache %s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int calcache_store(const char *path, const char *key, const struct calcache_entry *e, char *err,
                   size_t errlen)
{
    int missing;
    cJSON *doc = read_cache(path, &missing, err, errlen);
    if (!doc && !missing)
        return -1;
    if (!doc) {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", CALCACHE_SCHEMA);
        cJSON_AddObjectToObject(doc, "entries");
    }
    cJSON *entries = cJSON_GetObjectItemCaseSensitive(doc, "entries");
    cJSON_DeleteItemFromObjectCaseSensitive(entries, key);
    cJSON_AddItemToObject(entries, key, entry_json(e));
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    int rc = -1;
    if (!text)
        snprintf(err, errlen, "--calibration-cache %s: out of memory", path);
    else if (file_mkdir_parents(path) != 0)
        snprintf(err, errlen, "--calibration-cache %s: cannot create its directory: %s", path, strerror(errno));
    else
        rc = write_replace(path, text, err, errlen);
    free(text);
    return rc;
}
