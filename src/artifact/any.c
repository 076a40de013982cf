/* any.c — reading an artifact file of any kind. */
#include "artifact/any.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "artifact/json.h"
#include "core/file.h"

const char *artifact_kind_name(enum artifact_kind k)
{
    switch (k) {
    case AK_BENCHMARK: return "benchmark";
    case AK_MATRIX: return "matrix";
    case AK_LOAD_CURVE: return "load curve";
    case AK_DECODE_MATRIX: return "decode matrix";
    case AK_GRAPH: return "graph data";
    case AK_SEARCH: return "search";
    case AK_UNKNOWN: break;
    }
    return "unknown";
}

static bool has(const cJSON *j, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(j, key) != NULL;
}

enum artifact_kind artifact_kind_of(const cJSON *j)
{
    if (!cJSON_IsObject(j))
        return AK_UNKNOWN;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(j, "schema");
    if (cJSON_IsString(schema)) {
        const char *s = schema->valuestring;
        if (!strcmp(s, BENCHMARK_SCHEMA)) return AK_BENCHMARK;
        if (!strcmp(s, MATRIX_SCHEMA)) return AK_MATRIX;
        if (!strcmp(s, LOAD_CURVE_SCHEMA)) return AK_LOAD_CURVE;
        if (!strcmp(s, GRAPH_SCHEMA)) return AK_GRAPH;
        if (!strcmp(s, SEARCH_SCHEMA)) return AK_SEARCH;
        return AK_UNKNOWN;
    }
    if (decode_matrix_is(j))
        return AK_DECODE_MATRIX;
    if (has(j, "rows") && has(j, "aggregates"))
        return AK_MATRIX;
    if (has(j, "load") && has(j, "quantiles"))
        return AK_LOAD_CURVE;
    return AK_UNKNOWN;
}

static int read_kind(const cJSON *j, struct artifact_any *a, char *err, size_t errlen)
{
    const char *name = a->path;
    switch (a->kind) {
    case AK_BENCHMARK: return benchmark_from_json(j, name, &a->u.bench, err, errlen);
    case AK_MATRIX: return matrix_from_json(j, name, &a->u.matrix, err, errlen);
    case AK_LOAD_CURVE: return load_curve_from_json(j, name, &a->u.curve, err, errlen);
    case AK_DECODE_MATRIX: return decode_matrix_from_json(j, name, &a->u.decode, err, errlen);
    case AK_GRAPH: return graph_from_json(j, name, &a->u.graph, err, errlen);
    case AK_SEARCH: return search_from_json(j, name, &a->u.search, err, errlen);
    case AK_UNKNOWN: break;
    }
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(j, "schema");
    snprintf(err, errlen, "%s: not an artifact anvil reads (schema %s%s%s; known: %s, %s, %s, %s, %s, "
             "or a seed-shaped matrix, load curve or decode matrix)", name,
             cJSON_IsString(schema) ? "\"" : "", cJSON_IsString(schema) ? schema->valuestring : "absent",
             cJSON_IsString(schema) ? "\"" : "", BENCHMARK_SCHEMA, MATRIX_SCHEMA, LOAD_CURVE_SCHEMA,
             GRAPH_SCHEMA, SEARCH_SCHEMA);
    for (char *c = err; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = '?';
    return -1;
}

int artifact_any_read(const char *path, struct artifact_any *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len = 0;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    if (sha256_hex(text, len, out->sha256) != 0)
        out->sha256[0] = '\0';
    cJSON *j = artifact_parse(text, len, path, err, errlen);
    free(text);
    if (!j)
        return -1;
    if (!(out->path = strdup(path))) {
        cJSON_Delete(j);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    out->kind = artifact_kind_of(j);
    int rc = read_kind(j, out, err, errlen);
    cJSON_Delete(j);
    if (rc != 0) {
        out->kind = AK_UNKNOWN;
        artifact_any_free(out);
        return -1;
    }
    return 0;
}

void artifact_any_free(struct artifact_any *a)
{
    switch (a->kind) {
    case AK_BENCHMARK: benchmark_free(&a->u.bench); break;
    case AK_MATRIX: matrix_free(&a->u.matrix); break;
    case AK_LOAD_CURVE: load_curve_free(&a->u.curve); break;
    case AK_DECODE_MATRIX: decode_matrix_free(&a->u.decode); break;
    case AK_GRAPH: graph_free(&a->u.graph); break;
    case AK_SEARCH: search_doc_free(&a->u.search); break;
    case AK_UNKNOWN: break;
    }
    free(a->path);
    memset(a, 0, sizeof *a);
}

/* The number at *p (digits, then a fraction when a digit follows the
 * point); *p moves past it. */
static double number_at(const char **p)
{
    double v = 0, scale = 1;
    for (; isdigit((unsigned char)**p); ++*p)
        v = v * 10 + (**p - '0');
    if (**p == '.' && isdigit((unsigned char)(*p)[1]))
        for (++*p; isdigit((unsigned char)**p); ++*p)
            v += (**p - '0') * (scale /= 10);
    return v;
}

int artifact_name_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            double x = number_at(&a), y = number_at(&b);
            if (x != y)
                return x < y ? -1 : 1;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int by_name(const void *a, const void *b)
{
    int c = artifact_name_cmp(*(char *const *)a, *(char *const *)b);
    return c ? c : strcmp(*(char *const *)a, *(char *const *)b);  /* "c01" and "c1": still an order */
}

/* Appends s (taken) to *v. */
static int push(char ***v, size_t *n, char *s)
{
    char **nv = s ? realloc(*v, (*n + 1) * sizeof *nv) : NULL;
    if (!nv) {
        free(s);
        return -1;
    }
    *v = nv;
    nv[(*n)++] = s;
    return 0;
}

static int walk(const char *dir, char ***paths, size_t *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t k = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));)
        if (e->d_name[0] != '.' && push(&names, &k, strdup(e->d_name)) != 0)
            rc = -1;
    closedir(d);
    if (k)
        qsort(names, k, sizeof *names, by_name);
    for (size_t i = 0; rc == 0 && i < k; i++) {
        char *path = NULL;
        struct stat st;
        size_t dl = strlen(dir);    /* "dir/" as given keeps one slash: "dir/x.json" */
        if (asprintf(&path, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names[i]) < 0) {
            rc = -1;
            break;
        }
        size_t l = strlen(names[i]);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = walk(path, paths, n, err, errlen) != 0 ? -2 : 0;
            free(path);
        } else if (l > 5 && !strcmp(names[i] + l - 5, ".json")) {
            rc = push(paths, n, path);
        } else {
            free(path);
        }
    }
    artifact_strings_free(names, k);
    if (rc == -1)
        snprintf(err, errlen, "%s: out of memory", dir);
    return rc ? -1 : 0;
}

int artifact_find_json(const char *dir, char ***paths, size_t *n, char *err, size_t errlen)
{
    *paths = NULL;
    *n = 0;
    if (walk(dir, paths, n, err, errlen) == 0)
        return 0;
    artifact_strings_free(*paths, *n);
    *paths = NULL;
    *n = 0;
    return -1;
}
