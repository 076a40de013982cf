/* graph.c — graph data: writer, checked reader, and building from a plan. */
#include "artifact/graph.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/json.h"
#include "core/file.h"
#include "stats/registry.h"

/* ---- definitions: the metric registry's (stats/registry.h, METHODOLOGY.md's words) ---- */

const char *const graph_percentiles_text =
    "nearest rank by default: the p-th percentile of n sorted values is element ⌈p·n/100⌉ "
    "(1-based); `--percentile-method linear` gives numpy's default interpolation. The artifact "
    "names the method.";

int graph_semantic_of(const char *metric, const char **key, const char **text)
{
    const struct metric_def *d = metric_of_key(metric);
    if (!d || !d->semantic_key)
        return -1;
    *key = d->semantic_key;
    *text = d->definition;
    return 0;
}

static bool is_percentile(const char *metric)
{
    const char *p = strstr(metric, "_p");
    return p && isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[3]);
}

/* ---- writing ---- */

static cJSON *point_json(const struct graph_point *p)
{
    cJSON *o = cJSON_CreateObject();
    artifact_add_string(o, "artifact", p->artifact);
    artifact_add_string(o, "artifact_sha256", p->sha256);
    artifact_add_number(o, "value", p->value);
    artifact_add_string(o, "x", p->x);
    return o;
}

static cJSON *chart_json(const struct graph_chart *c)
{
    cJSON *o = cJSON_CreateObject();
    artifact_add_string(o, "metric", c->metric);
    cJSON *series = cJSON_AddArrayToObject(o, "series");
    for (size_t s = 0; series && s < c->n_series; s++) {
        cJSON *so = cJSON_CreateObject();
        artifact_add_string(so, "label", c->series[s].label);
        cJSON *pts = cJSON_AddArrayToObject(so, "points");
        for (size_t i = 0; pts && i < c->series[s].n_points; i++)
            cJSON_AddItemToArray(pts, point_json(&c->series[s].points[i]));
        cJSON_AddItemToArray(series, so);
    }
    artifact_add_string(o, "title", c->title);
    artifact_add_string(o, "x_label", c->x_label);
    artifact_add_string(o, "y_label", c->y_label);
    return o;
}

cJSON *graph_to_json(const struct graph_data *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *charts = cJSON_AddArrayToObject(o, "charts");
    for (size_t i = 0; charts && i < g->n_charts; i++)
        cJSON_AddItemToArray(charts, chart_json(&g->charts[i]));
    cJSON *sem = cJSON_AddObjectToObject(o, "metric_semantics");
    for (size_t i = 0; sem && i < g->n_semantics; i++)
        artifact_add_string(sem, g->semantics[i].key, g->semantics[i].text);
    artifact_add_string(o, "schema", GRAPH_SCHEMA);
    if (g->subtitle)
        artifact_add_string(o, "subtitle", g->subtitle);
    artifact_add_string(o, "title", g->title);
    /* a failed allocation anywhere leaves a NULL item or a missing key */
    char *probe = charts && sem ? cJSON_PrintUnformatted(o) : NULL;
    if (!probe) {
        cJSON_Delete(o);
        return NULL;
    }
    free(probe);
    return o;
}

/* ---- reading ---- */

static bool is_hex64(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!isxdigit((unsigned char)s[n]) || isupper((unsigned char)s[n]))
            return false;
    return n == SHA256_HEX_LEN;
}

/* An array of at least one element at o[key]; its size, or -1 (recorded). */
static int nonempty_array(struct jread *r, const cJSON *o, const char *key, const cJSON **a)
{
    *a = jread_array(r, o, key, 0);
    if (!*a)
        return -1;
    int n = cJSON_GetArraySize(*a);
    if (n == 0)
        return jread_fail(r, key, "expected at least one entry");
    return n;
}

static void *alloc_n(struct jread *r, int n, size_t size)
{
    void *p = calloc((size_t)n, size);
    if (!p)
        jread_fail(r, NULL, "out of memory");
    return p;
}

static void read_point(struct jread *r, const cJSON *o, struct graph_point *p)
{
    char *sha = NULL;
    jread_string(r, o, "x", 0, &p->x);
    jread_string(r, o, "artifact", JR_NONEMPTY, &p->artifact);
    jread_string(r, o, "artifact_sha256", 0, &sha);
    if (sha && !is_hex64(sha))
        jread_fail(r, "artifact_sha256", "expected 64 lowercase hex digits, got '%.80s'", sha);
    else if (sha)
        memcpy(p->sha256, sha, SHA256_HEX_LEN + 1);
    free(sha);
    const cJSON *v = jread_item(r, o, "value", 0);
    if (v && !cJSON_IsNumber(v))
        jread_fail(r, "value", "expected a number");
    else if (v)
        p->value = v->valuedouble;
}

/* jread_each's reader of a series' points (ctx: the series). */
static void read_point_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct graph_series *s = ctx;
    read_point(r, o, &s->points[i]);
    s->n_points++;
}

static void read_series(struct jread *r, const cJSON *o, struct graph_series *s)
{
    jread_string(r, o, "label", 0, &s->label);
    const cJSON *pts;
    int n = nonempty_array(r, o, "points", &pts);
    if (n < 0 || !(s->points = alloc_n(r, n, sizeof *s->points)))
        return;
    jread_each(r, "points", pts, read_point_at, s);
}

/* jread_each's reader of a chart's series (ctx: the chart). */
static void read_series_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct graph_chart *c = ctx;
    read_series(r, o, &c->series[i]);
    c->n_series++;
}

static void read_chart(struct jread *r, const cJSON *o, struct graph_chart *c)
{
    jread_string(r, o, "metric", JR_NONEMPTY, &c->metric);
    jread_string(r, o, "title", 0, &c->title);
    jread_string(r, o, "x_label", 0, &c->x_label);
    jread_string(r, o, "y_label", 0, &c->y_label);
    const cJSON *ser;
    int n = nonempty_array(r, o, "series", &ser);
    if (n < 0 || !(c->series = alloc_n(r, n, sizeof *c->series)))
        return;
    jread_each(r, "series", ser, read_series_at, c);
}

/* jread_each's reader of a graph's charts (ctx: the graph). */
static void read_chart_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct graph_data *g = ctx;
    read_chart(r, o, &g->charts[i]);
    g->n_charts++;
}

/* metric_semantics: an object of strings, copied in order. */
static void read_semantics(struct jread *r, const cJSON *sem, struct graph_data *g)
{
    int n = cJSON_GetArraySize(sem);
    if (n == 0 || !(g->semantics = alloc_n(r, n, sizeof *g->semantics)))
        return;
    size_t mark = jread_enter(r, "metric_semantics");
    const cJSON *e;
    cJSON_ArrayForEach(e, sem) {
        struct graph_semantic *s = &g->semantics[g->n_semantics];
        if (jread_string(r, sem, e->string, 0, &s->text) != 0)
            break;
        if (!(s->key = strdup(e->string))) {
            free(s->text);
            jread_fail(r, NULL, "out of memory");
            break;
        }
        g->n_semantics++;
    }
    jread_leave(r, mark);
}

int graph_from_json(const cJSON *j, const char *name, struct graph_data *out, char *err,
                    size_t errlen)
{
    struct jread r;
    *out = (struct graph_data){0};
    if (jread_document(&r, j, name, err, errlen) != 0)
        return -1;
    jread_string(&r, j, "schema", 0, &out->schema);
    if (out->schema && strcmp(out->schema, GRAPH_SCHEMA) != 0)
        jread_fail(&r, "schema", "expected \"%s\", got \"%.80s\"", GRAPH_SCHEMA, out->schema);
    jread_string(&r, j, "title", 0, &out->title);
    jread_string(&r, j, "subtitle", JR_OPTIONAL | JR_NULLABLE, &out->subtitle);
    const cJSON *sem = jread_object(&r, j, "metric_semantics", 0);
    if (sem)
        read_semantics(&r, sem, out);
    const cJSON *charts;
    int n = r.failed ? -1 : nonempty_array(&r, j, "charts", &charts);
    if (n > 0 && (out->charts = alloc_n(&r, n, sizeof *out->charts))) {
        jread_each(&r, "charts", charts, read_chart_at, out);
    }
    if (r.failed) {
        graph_free(out);
        return -1;
    }
    return 0;
}

/* ---- building from a plan ---- */

/* The value at a dotted path under o ("metrics.ttft_p50_ms", "rows.0.x"). */
static const cJSON *at_path(const cJSON *o, const char *path)
{
    char buf[512];
    if (strlen(path) >= sizeof buf)
        return NULL;
    strcpy(buf, path);
    char *save = NULL;
    for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
        if (cJSON_IsArray(o)) {
            char *end;
            errno = 0;
            long i = strtol(k, &end, 10);
            o = errno || *end || end == k || i < 0 || i > 1000000 ? NULL : cJSON_GetArrayItem(o, (int)i);
        } else {
            o = cJSON_GetObjectItemCaseSensitive(o, k);
        }
    }
    return o;
}

/* Reads the artifact at file (relative to base_dir unless absolute): its
 * SHA-256 and the metric's value into *p. */
static int take_point(struct jread *r, const char *base_dir, const char *file, const char *metric,
                      struct graph_point *p)
{
    char path[4096];
    if (file[0] == '/' || !base_dir || !base_dir[0])
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "%s/%s", base_dir, file);
    size_t len = 0;
    char *text = file_read_all(path, &len);
    if (!text)
        return jread_fail(r, NULL, "%s: cannot read the artifact: %s", path, strerror(errno));
    if (sha256_hex(text, len, p->sha256) != 0) {
        free(text);
        return jread_fail(r, NULL, "%s: cannot compute its SHA-256", path);
    }
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return jread_fail(r, NULL, "%s: not a JSON object (metric %s)", path, metric);
    }
    const cJSON *v = at_path(j, metric);
    int rc = 0;
    if (!v)
        rc = jread_fail(r, NULL, "%s: metric %s: absent", path, metric);
    else if (!cJSON_IsNumber(v))
        rc = jread_fail(r, NULL, "%s: metric %s: expected a number, got %s", path, metric,
                        cJSON_IsNull(v) ? "null" : "another type");
    else
        p->value = v->valuedouble;
    cJSON_Delete(j);
    if (rc)
        return rc;
    const char *slash = strrchr(file, '/');
    if (!(p->artifact = strdup(slash ? slash + 1 : file)))
        return jread_fail(r, NULL, "out of memory");
    return 0;
}

/* A plan's points: {x: file, ...} or [{x, artifact}, ...]. */
static void plan_points(struct jread *r, const cJSON *pts, const char *metric, const char *base_dir,
                        struct graph_series *s)
{
    int n = cJSON_IsObject(pts) || cJSON_IsArray(pts) ? cJSON_GetArraySize(pts) : 0;
    if (n == 0) {
        jread_fail(r, "points", "expected a non-empty object {x label: artifact file} or array "
                   "of {x, artifact}");
        return;
    }
    if (!(s->points = alloc_n(r, n, sizeof *s->points)))
        return;
    size_t mark = jread_enter(r, "points");
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, pts) {
        struct graph_point *p = &s->points[s->n_points++];
        size_t m = jread_enter_index(r, i++);
        char *file = NULL;
        if (cJSON_IsObject(pts)) {
            if (!cJSON_IsString(e) || !e->valuestring[0])
                jread_fail(r, NULL, "expected an artifact file name for x '%.80s'", e->string);
            else if (!(p->x = strdup(e->string)) || !(file = strdup(e->valuestring)))
                jread_fail(r, NULL, "out of memory");
        } else if (!cJSON_IsObject(e)) {
            jread_fail(r, NULL, "expected an object {x, artifact}");
        } else {
            jread_string(r, e, "x", 0, &p->x);
            jread_string(r, e, "artifact", JR_NONEMPTY, &file);
        }
        if (!r->failed)
            take_point(r, base_dir, file, metric, p);
        free(file);
        jread_leave(r, m);
        if (r->failed)
            break;
    }
    jread_leave(r, mark);
}

static void plan_chart(struct jread *r, const cJSON *o, const char *base_dir, struct graph_chart *c)
{
    jread_string(r, o, "metric", JR_NONEMPTY, &c->metric);
    jread_string(r, o, "title", 0, &c->title);
    jread_string(r, o, "x_label", 0, &c->x_label);
    jread_string(r, o, "y_label", 0, &c->y_label);
    const cJSON *ser;
    int n = r->failed ? -1 : nonempty_array(r, o, "series", &ser);
    if (n < 0 || !(c->series = alloc_n(r, n, sizeof *c->series)))
        return;
    size_t mark = jread_enter(r, "series");
    for (int i = 0; !r->failed && i < n; i++) {
        size_t m = jread_enter_index(r, i);
        const cJSON *s = cJSON_GetArrayItem(ser, i);
        struct graph_series *gs = &c->series[c->n_series++];
        if (!cJSON_IsObject(s)) {
            jread_fail(r, NULL, "expected an object {label, points}");
        } else {
            jread_string(r, s, "label", 0, &gs->label);
            const cJSON *pts = jread_item(r, s, "points", 0);
            if (pts)
                plan_points(r, pts, c->metric, base_dir, gs);
        }
        jread_leave(r, m);
    }
    jread_leave(r, mark);
}

/* What jread_each's reader of a plan's charts fills, and where the plan is. */
struct plan_charts {
    struct graph_data *g;
    const char *base_dir;
};

static void plan_chart_at(struct jread *r, const cJSON *o, int i, void *ctx)
{
    struct plan_charts *pc = ctx;
    plan_chart(r, o, pc->base_dir, &pc->g->charts[i]);
    pc->g->n_charts++;
}

static bool has_semantic(const struct graph_data *g, const char *key)
{
    for (size_t i = 0; i < g->n_semantics; i++)
        if (!strcmp(g->semantics[i].key, key))
            return true;
    return false;
}

/* Appends key: text unless key is there already. */
static int add_semantic(struct jread *r, struct graph_data *g, const char *key, const char *text)
{
    if (has_semantic(g, key))
        return 0;
    struct graph_semantic *v = realloc(g->semantics, (g->n_semantics + 1) * sizeof *v);
    if (!v)
        return jread_fail(r, NULL, "out of memory");
    g->semantics = v;
    struct graph_semantic *s = &v[g->n_semantics];
    s->key = strdup(key);
    s->text = strdup(text);
    if (!s->key || !s->text) {
        free(s->key);
        free(s->text);
        return jread_fail(r, NULL, "out of memory");
    }
    g->n_semantics++;
    return 0;
}

int graph_build(const cJSON *plan, const char *plan_name, const char *base_dir,
                struct graph_data *out, char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, plan_name, err, errlen);
    *out = (struct graph_data){0};
    if (!cJSON_IsObject(plan)) {
        jread_fail(&r, NULL, "expected a plan object {title, charts: [...]}");
        return -1;
    }
    if (!(out->schema = strdup(GRAPH_SCHEMA)))
        jread_fail(&r, NULL, "out of memory");
    jread_string(&r, plan, "title", 0, &out->title);
    jread_string(&r, plan, "subtitle", JR_OPTIONAL | JR_NULLABLE, &out->subtitle);
    const cJSON *sem = jread_object(&r, plan, "metric_semantics", JR_OPTIONAL | JR_NULLABLE);
    if (sem && !r.failed)
        read_semantics(&r, sem, out);
    const cJSON *charts;
    int n = r.failed ? -1 : nonempty_array(&r, plan, "charts", &charts);
    if (n > 0 && (out->charts = alloc_n(&r, n, sizeof *out->charts))) {
        struct plan_charts pc = {out, base_dir};
        jread_each(&r, "charts", charts, plan_chart_at, &pc);
    }
    bool pct = false;
    for (size_t i = 0; !r.failed && i < out->n_charts; i++) {
        const char *key, *text;
        if (graph_semantic_of(out->charts[i].metric, &key, &text) == 0)
            add_semantic(&r, out, key, text);
        pct |= is_percentile(out->charts[i].metric);
    }
    if (pct && !r.failed)
        add_semantic(&r, out, "percentiles", graph_percentiles_text);
    if (r.failed) {
        graph_free(out);
        return -1;
    }
    return 0;
}

int graph_write_file(const char *path, const struct graph_data *g, char *err, size_t errlen)
{
    cJSON *doc = graph_to_json(g);
    if (!doc) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc;
    if (strcmp(path, "-") != 0) {
        rc = artifact_write_file(path, doc, err, errlen);
    } else {
        char *text = artifact_print(doc);
        rc = text && puts(text) >= 0 && fflush(stdout) == 0 ? 0 : -1;
        if (rc)
            snprintf(err, errlen, "cannot write the graph data to stdout");
        free(text);
    }
    cJSON_Delete(doc);
    return rc;
}

void graph_free(struct graph_data *g)
{
    for (size_t c = 0; c < g->n_charts; c++) {
        struct graph_chart *ch = &g->charts[c];
        for (size_t s = 0; s < ch->n_series; s++) {
            for (size_t i = 0; i < ch->series[s].n_points; i++) {
                free(ch->series[s].points[i].x);
                free(ch->series[s].points[i].artifact);
            }
            free(ch->series[s].points);
            free(ch->series[s].label);
        }
        free(ch->series);
        free(ch->metric);
        free(ch->title);
        free(ch->x_label);
        free(ch->y_label);
    }
    free(g->charts);
    for (size_t i = 0; i < g->n_semantics; i++) {
        free(g->semantics[i].key);
        free(g->semantics[i].text);
    }
    free(g->semantics);
    free(g->schema);
    free(g->title);
    free(g->subtitle);
    *g = (struct graph_data){0};
}
