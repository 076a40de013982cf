/* timeline.c — thinned readings over time (see timeline.h). */
#include "observe/timeline.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/host.h"

struct obs_column *obs_timeline_add(struct obs_timeline *t, const char *name, int device)
{
    if (t->n_cols == OBS_TIMELINE_COLS)
        return NULL;
    double *v = malloc((t->n ? t->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        v[i] = NAN;
    struct obs_column *c = &t->col[t->n_cols++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->device = device;
    c->v = v;
    return c;
}

void obs_timeline_free(struct obs_timeline *t)
{
    for (int i = 0; i < t->n_cols; i++)
        free(t->col[i].v);
    free(t->t_ns);
    *t = (struct obs_timeline){0};
}

/* The points: of the usable readings (usable[i]), every stride-th and the
 * last, into keep[0..n) (indices into the readings). Sets t->n, readings,
 * stride and t_ns from mid[]. Returns 0, or -1 when memory runs out. */
static int pick(struct obs_timeline *t, const bool *usable, const int64_t *mid, size_t n_readings, size_t **keep)
{
    size_t usable_n = 0;
    for (size_t i = 0; i < n_readings; i++)
        usable_n += usable[i];
    t->readings = usable_n;
    /* ceil((usable_n − 1) / (MAX − 1)): the multiples and the last fit in MAX */
    t->stride = usable_n > OBS_TIMELINE_MAX ? (usable_n + OBS_TIMELINE_MAX - 3) / (OBS_TIMELINE_MAX - 1) : 1;
    *keep = malloc((usable_n ? usable_n : 1) * sizeof **keep);
    t->t_ns = malloc((usable_n ? usable_n : 1) * sizeof *t->t_ns);
    if (!*keep || !t->t_ns) {
        free(*keep);
        *keep = NULL;
        return -1;
    }
    size_t k = 0, seen = 0;
    for (size_t i = 0; i < n_readings; i++) {
        if (!usable[i])
            continue;
        if (seen % t->stride == 0 || seen == usable_n - 1) {
            (*keep)[k] = i;
            t->t_ns[k++] = mid[i];
        }
        seen++;
    }
    t->n = k;
    return 0;
}

/* Drops the columns that are NaN at every point. */
static void drop_empty(struct obs_timeline *t)
{
    int w = 0;
    for (int c = 0; c < t->n_cols; c++) {
        bool any = false;
        for (size_t i = 0; i < t->n && !any; i++)
            any = !isnan(t->col[c].v[i]);
        if (any)
            t->col[w++] = t->col[c];
        else
            free(t->col[c].v);
    }
    t->n_cols = w;
}

/* Frees a timeline build's scratch arrays; then out on an error (rc != 0),
 * else its empty columns. Returns rc. */
static int finish(struct obs_timeline *out, int rc, bool *usable, int64_t *mid, size_t *keep)
{
    free(usable);
    free(mid);
    free(keep);
    if (rc)
        obs_timeline_free(out);
    else
        drop_empty(out);
    return rc;
}

int srv_timeline_of(const struct srv_series *s, struct obs_timeline *out)
{
    static const struct { const char *name; enum srv_value v; } cols[] = {
        {"running_requests", SV_RUNNING}, {"waiting_requests", SV_WAITING}, {"kv_cache_usage", SV_KV_USAGE},
        {"generation_tokens", SV_GEN_TOKENS}, {"prompt_tokens", SV_PROMPT_TOKENS}, {"requests", SV_REQUESTS},
    };
    *out = (struct obs_timeline){0};
    bool *usable = malloc((s->n ? s->n : 1) * sizeof *usable);
    int64_t *mid = malloc((s->n ? s->n : 1) * sizeof *mid);
    size_t *keep = NULL;
    int rc = usable && mid ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        usable[i] = s->r[i].ok;
        mid[i] = s->r[i].t_sent + (s->r[i].t_done - s->r[i].t_sent) / 2;
    }
    if (rc == 0)
        rc = pick(out, usable, mid, s->n, &keep);
    for (size_t c = 0; rc == 0 && c < sizeof cols / sizeof *cols; c++) {
        struct obs_column *col = obs_timeline_add(out, cols[c].name, -1);
        if (!col)
            rc = -1;
        for (size_t i = 0; col && i < out->n; i++)
            col->v[i] = s->r[keep[i]].v[cols[c].v];
    }
    return finish(out, rc, usable, mid, keep);
}

/* The GPU figures a timeline keeps, by name. */
static double gpu_value(const struct gpu_sample *g, int k)
{
    switch (k) {
    case 0: return g->util_pct;
    case 1: return g->power_w;
    case 2: return g->temp_c;
    case 3: return g->sm_mhz;
    default: return g->mem_used_mib;
    }
}

static const char *const gpu_names[] = {"util_pct", "power_w", "temp_c", "sm_mhz", "mem_used_mb"};
#define GPU_COLS 5

int hw_timeline_of(const struct hw_series *s, struct obs_timeline *out)
{
    *out = (struct obs_timeline){0};
    bool *usable = malloc((s->n ? s->n : 1) * sizeof *usable);
    int64_t *mid = malloc((s->n ? s->n : 1) * sizeof *mid);
    size_t *keep = NULL;
    int rc = usable && mid ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        const struct hw_reading *r = s->r[i];
        usable[i] = (r->ok && r->n_gpus > 0) || r->has_host;
        mid[i] = r->t_sent + (r->t_done - r->t_sent) / 2;
    }
    if (rc == 0)
        rc = pick(out, usable, mid, s->n, &keep);
    struct obs_column *cpu = rc == 0 ? obs_timeline_add(out, "cpu_util_pct", -1) : NULL;
    struct obs_column *mem = cpu ? obs_timeline_add(out, "mem_used_mb", -1) : NULL;
    if (rc == 0 && !mem)
        rc = -1;
    const struct hw_reading *prev = NULL;      /* the previous point with the host */
    for (size_t i = 0; rc == 0 && i < out->n; i++) {
        const struct hw_reading *r = s->r[keep[i]];
        if (!r->has_host)
            continue;
        cpu->v[i] = prev ? host_cpu_util(&prev->host, &r->host) : NAN;
        mem->v[i] = r->host.mem_used_mib;
        prev = r;
    }
    for (int d = 0; rc == 0 && d < s->n_gpus && d < GPU_MAX; d++)
        for (int k = 0; rc == 0 && k < GPU_COLS; k++) {
            struct obs_column *col = obs_timeline_add(out, gpu_names[k], d);
            if (!col) {
                rc = -1;
                break;
            }
            for (size_t i = 0; i < out->n; i++) {
                const struct hw_reading *r = s->r[keep[i]];
                if (r->ok && d < r->n_gpus)
                    col->v[i] = gpu_value(&r->gpu[d], k);
            }
        }
    return finish(out, rc, usable, mid, keep);
}
