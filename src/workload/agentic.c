/* agentic.c — agent sessions: reading, generating, and turning them into
 * the multi-turn dataset the run sends. */
#include "workload/agentic.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/file.h"
#include "core/rand.h"
#include "core/yamljson.h"
#include "workload/prompt.h"

#define MAX_LEN 10000000L

/* A whole number in [0, MAX_LEN] at key (absent: dflt), else -2. */
static long len_at(const cJSON *o, const char *key, long dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return dflt;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > MAX_LEN || v->valuedouble != floor(v->valuedouble))
        return -2;
    return (long)v->valuedouble;
}

/* Seconds in [0, 86400] at key (absent: 0), else -1. */
static double seconds_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 86400 ? v->valuedouble : -1;
}

/* Reads one turn into out. Returns NULL, or the first field that is not as
 * the file format says (the turn itself when it is not an object). */
static const char *read_turn(const cJSON *t, struct agentic_turn *out)
{
    if (!cJSON_IsObject(t))
        return "the turn (not an object)";
    *out = (struct agentic_turn){len_at(t, "user_len", 0), len_at(t, "tool_calls", 0),
                                 len_at(t, "tool_result_len", 0), len_at(t, "output_len", -1),
                                 seconds_at(t, "think_time_s"), len_at(t, "sub_agents", 0),
                                 len_at(t, "sub_agent_len", 100), len_at(t, "sub_agent_output_len", -1),
                                 len_at(t, "sub_agent_result_len", 100)};
    return out->user_len < 0 ? "user_len"
         : out->tool_calls < 0 || out->tool_calls > 64 ? "tool_calls"
         : out->tool_result_len < 0 ? "tool_result_len"
         : out->output_len == -2 || out->output_len == 0 ? "output_len"
         : out->think_s < 0 ? "think_time_s"
         : out->sub_agents < 0 || out->sub_agents > 64 ? "sub_agents"
         : out->sub_agent_len < 1 ? "sub_agent_len"
         : out->sub_agent_output_len == -2 || out->sub_agent_output_len == 0 ? "sub_agent_output_len"
         : out->sub_agent_result_len < 0 ? "sub_agent_result_len" : NULL;
}

static int read_session(const cJSON *s, struct agentic_session *out, const char *path, size_t i, char *err,
                        size_t errlen)
{
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(s, "turns");
    out->system_len = len_at(s, "system_len", 0);
    if (!cJSON_IsObject(s) || out->system_len < 0 || !cJSON_IsArray(turns) || cJSON_GetArraySize(turns) < 1) {
        snprintf(err, errlen, "%s: sessions[%zu] needs \"turns\": a non-empty array (and \"system_len\" a "
                 "whole number)", path, i);
        return -1;
    }
    out->n_turns = (size_t)cJSON_GetArraySize(turns);
    if (!(out->turns = calloc(out->n_turns, sizeof *out->turns))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, turns) {
        const char *bad = read_turn(t, &out->turns[k]);
        if (bad) {
            snprintf(err, errlen, "%s: sessions[%zu].turns[%zu]: bad %s: user_len, tool_calls (up to 64), "
                     "tool_result_len, sub_agents (up to 64), sub_agent_result_len must be whole numbers, "
                     "output_len, sub_agent_output_len and sub_agent_len ones >= 1, think_time_s seconds "
                     "from 0 to 86400", path, i, k, bad);
            return -1;
        }
        k++;
    }
    if (out->system_len == 0 && out->turns[0].user_len == 0) {
        snprintf(err, errlen, "%s: sessions[%zu]: the first turn needs a user message or the session a "
                 "system prompt", path, i);
        return -1;
    }
    return 0;
}

int agentic_load(const char *path, struct agentic *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->source, sizeof out->source, "file:%s", path);
    char *text = file_read_all(path, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read the file", path);
        return -1;
    }
    /* a hand-written file may be YAML (a .yaml/.yml name) or JSON */
    const char *dot = strrchr(path, '.');
    bool yaml = dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"));
    char why[256] = "";
    size_t len = strlen(text);
    cJSON *root = yaml ? yaml_to_json(text, len, why, sizeof why)
                       : json_parse_capped(text, len, DOC_MAX_NODES, NULL, why, sizeof why);
    free(text);
    if (!root) {
        snprintf(err, errlen, "%s:%s%s", path, why, yaml ? "" : " (JSON, or YAML in a .yaml/.yml file)");
        return -1;
    }
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(root, "sessions"), *s;
    int rc = 0;
    if (!cJSON_IsArray(sessions) || cJSON_GetArraySize(sessions) < 1) {
        snprintf(err, errlen, "%s: expected {\"sessions\": [...]} (JSON, or YAML in a .yaml/.yml file) with one "
                 "session at least", path);
        rc = -1;
    } else if (!(out->sessions = calloc((size_t)cJSON_GetArraySize(sessions), sizeof *out->sessions))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    const cJSON *list = rc ? NULL : sessions;
    cJSON_ArrayForEach(s, list) {
        if ((rc = read_session(s, &out->sessions[out->n], path, out->n, err, errlen)) != 0)
            break;
        out->n++;
    }
    if (rc != 0 && out->sessions)
        out->n++;       /* the one that failed half-way is freed too */
    cJSON_Delete(root);
    if (rc != 0)
        agentic_free(out);
    return rc;
}

/* Reads the whole of s[0..n) as a number, without the leading blanks or
 * sign strtod and strtol skip (whole: an integer, base 10). Returns 0 or -1. */
static int range_bound(const char *s, size_t n, bool whole, double *out)
{
    char b[64], *end;
    if (n == 0 || n >= sizeof b || !(isdigit((unsigned char)s[0]) || (!whole && s[0] == '.')))
        return -1;
    memcpy(b, s, n);
    b[n] = '\0';
    errno = 0;
    *out = whole ? (double)strtol(b, &end, 10) : strtod(b, &end);
    return *end == '\0' && !errno && isfinite(*out) ? 0 : -1;
}

/* "A..B" or "A", split at the "..": strtod alone would read "1..5" as "1."
 * and ".5". Returns 0 or -1. */
static int parse_bounds(const char *s, bool whole, double *lo, double *hi)
{
    const char *dots = strstr(s, "..");
    size_t n = dots ? (size_t)(dots - s) : strlen(s);
    if (range_bound(s, n, whole, lo) != 0)
        return -1;
    *hi = *lo;
    return dots ? range_bound(dots + 2, strlen(dots + 2), whole, hi) : 0;
}

int agentic_parse_range(const char *s, long *lo, long *hi)
{
    double a, b;
    if (parse_bounds(s, true, &a, &b) != 0 || !(a >= 1 && a <= b && b <= 10000))
        return -1;
    *lo = (long)a;
    *hi = (long)b;
    return 0;
}

int agentic_parse_think(const char *s, double *lo, double *hi)
{
    return parse_bounds(s, false, lo, hi) == 0 && *lo >= 0 && *lo <= *hi && *hi <= 86400 ? 0 : -1;
}

int agentic_generate(const struct agentic_gen *g, struct agentic *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (g->sessions < 1 || g->sessions > 1000000 || g->turns_min < 1 || g->turns_min > g->turns_max ||
        g->sub_agents < 0 || g->sub_agents > 64 || !(g->think_min_s >= 0 && g->think_min_s <= g->think_max_s)) {
        snprintf(err, errlen, "--agentic-sessions must be at least 1, --turns A..B have 1 <= A <= B, "
                 "--think-time A..B 0 <= A <= B, --sub-agents 0 to 64");
        return -1;
    }
    snprintf(out->source, sizeof out->source, "generated: %ld sessions, %ld..%ld turns, user %ld, tool "
             "result %ld, system %ld words, think %g..%g s, %ld sub-agents, seed %llu", g->sessions,
             g->turns_min, g->turns_max, g->user_len, g->tool_result_len, g->system_len, g->think_min_s,
             g->think_max_s, g->sub_agents, (unsigned long long)g->seed);
    if (!(out->sessions = calloc((size_t)g->sessions, sizeof *out->sessions))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint64_t state = g->seed ^ 0x6167656e746963ull;
    for (long i = 0; i < g->sessions; i++, out->n++) {
        struct agentic_session *s = &out->sessions[i];
        long span = g->turns_max - g->turns_min + 1;
        s->n_turns = (size_t)(g->turns_min + (long)(splitmix64_next(&state) % (uint64_t)span));
        s->system_len = g->system_len;
        if (!(s->turns = calloc(s->n_turns, sizeof *s->turns))) {
            snprintf(err, errlen, "out of memory");
            agentic_free(out);
            return -1;
        }
        for (size_t k = 0; k < s->n_turns; k++) {
            bool last = k + 1 == s->n_turns;
            /* 53 bits / 2^53: uniform in [0, 1) */
            double u = (double)(splitmix64_next(&state) >> 11) / 9007199254740992.0;
            s->turns[k] = (struct agentic_turn){k == 0 ? (g->user_len > 0 ? g->user_len : 1) : 0,
                                                !last, g->tool_result_len, -1,
                                                k ? g->think_min_s + u * (g->think_max_s - g->think_min_s) : 0,
                                                last ? 0 : g->sub_agents, g->user_len > 0 ? g->user_len : 1, -1,
                                                g->tool_result_len};
        }
    }
    return 0;
}

/* Seeded filler of n words (without the leading space), as a new string. */
static char *words(uint64_t seed, long session, long turn, long part, long n)
{
    struct buf b;
    buf_init(&b, 1u << 30);
    uint64_t s = seed ^ ((uint64_t)session * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)turn << 40) ^ ((uint64_t)part << 52);
    char *out = NULL;
    if (prompt_filler(&b, n > 0 ? n : 1, splitmix64_next(&s)) == 0)
        out = strdup(b.data + 1);
    buf_free(&b);
    return out;
}

static cJSON *text_message(const char *role, char *text)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", role);
    cJSON_AddStringToObject(m, "content", text ? text : "");
    free(text);
    return m;
}

/* The assistant's reply to turn k with its tool calls (the sub-agents'
 * "task" calls after the others), then their results. */
static void add_tool_round(cJSON *history, uint64_t seed, long s, long k, const struct agentic_turn *t)
{
    cJSON *a = cJSON_CreateObject(), *calls = cJSON_CreateArray();
    cJSON_AddStringToObject(a, "role", "assistant");
    cJSON_AddNullToObject(a, "content");
    char id[64], args[96];
    long n = t->tool_calls + t->sub_agents;
    for (long c = 0; c < n; c++) {
        bool task = c >= t->tool_calls;
        cJSON *call = cJSON_CreateObject(), *fn = cJSON_CreateObject();
        snprintf(id, sizeof id, "call_s%ld_t%ld_%ld", s, k, c);
        snprintf(args, sizeof args, "{\"%s\": \"session %ld step %ld part %ld\"}", task ? "task" : "query", s,
                 k, c);
        cJSON_AddStringToObject(call, "id", id);
        cJSON_AddStringToObject(call, "type", "function");
        cJSON_AddStringToObject(fn, "name", task ? "task" : "lookup");
        cJSON_AddStringToObject(fn, "arguments", args);
        cJSON_AddItemToObject(call, "function", fn);
        cJSON_AddItemToArray(calls, call);
    }
    cJSON_AddItemToObject(a, "tool_calls", calls);
    cJSON_AddItemToArray(history, a);
    for (long c = 0; c < n; c++) {
        snprintf(id, sizeof id, "call_s%ld_t%ld_%ld", s, k, c);
        long len = c < t->tool_calls ? t->tool_result_len : t->sub_agent_result_len;
        cJSON *m = text_message("tool", words(seed, s, k, 1 + c, len));
        cJSON_AddStringToObject(m, "tool_call_id", id);
        cJSON_AddItemToArray(history, m);
    }
}

/* Appends an entry of a copy of msgs (plus extra, owned, when not NULL).
 * Returns 0 or -1 (memory; extra freed). */
static int add_entry(struct dataset *out, const cJSON *msgs, cJSON *extra, struct dataset_entry e)
{
    struct dataset_entry *n = realloc(out->entries, (out->n + 1) * sizeof *n);
    cJSON *copy = cJSON_Duplicate(msgs, 1);
    if (n)
        out->entries = n;
    if (!n || !copy) {
        cJSON_Delete(copy);
        cJSON_Delete(extra);
        return -1;
    }
    if (extra)
        cJSON_AddItemToArray(copy, extra);
    e.messages = copy;
    out->entries[out->n++] = e;
    return 0;
}

/* Turn k's sub-agents: each the history so far and a task of its own. */
static int add_sub_agents(struct dataset *out, const cJSON *history, uint64_t seed, long s, long k,
                          const struct agentic_turn *t)
{
    for (long j = 1; j <= t->sub_agents; j++) {
        /* parts past the tool results' (1 + calls) */
        cJSON *task = text_message("user", words(seed, s, k, 1000 + j, t->sub_agent_len));
        struct dataset_entry e = {.max_tokens = t->sub_agent_output_len, .conversation = s, .turn = k, .agent = j};
        if (add_entry(out, history, task, e) != 0)
            return -1;
    }
    return 0;
}

int agentic_to_dataset(const struct agentic *a, uint64_t seed, struct dataset *out)
{
    for (size_t s = 0; s < a->n; s++) {
        const struct agentic_session *ss = &a->sessions[s];
        cJSON *history = cJSON_CreateArray();
        if (ss->system_len > 0)
            cJSON_AddItemToArray(history, text_message("system", words(seed, (long)s, -1, 0, ss->system_len)));
        for (size_t k = 0; k < ss->n_turns; k++) {
            const struct agentic_turn *t = &ss->turns[k];
            if (k > 0 && ss->turns[k - 1].tool_calls + ss->turns[k - 1].sub_agents > 0)
                add_tool_round(history, seed, (long)s, (long)k - 1, &ss->turns[k - 1]);
            if (t->user_len > 0)
                cJSON_AddItemToArray(history, text_message("user", words(seed, (long)s, (long)k, 0, t->user_len)));
            struct dataset_entry e = {.max_tokens = t->output_len, .conversation = (long)s, .turn = (long)k,
                                      .think_s = k > 0 ? t->think_s : 0};
            if (add_entry(out, history, NULL, e) != 0 ||
                add_sub_agents(out, history, seed, (long)s, (long)k, t) != 0) {
                cJSON_Delete(history);
                return -1;
            }
        }
        cJSON_Delete(history);
    }
    snprintf(out->spec, sizeof out->spec, "agentic:%.500s", a->source);
    return 0;
}

void agentic_free(struct agentic *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->sessions[i].turns);
    free(a->sessions);
    memset(a, 0, sizeof *a);
}
