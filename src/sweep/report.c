/* report.c — matrix and load-curve artifacts of a sweep. */
#include "sweep/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact/benchmark.h"
#include "artifact/matrix.h"
#include "artifact/observe.h"
#include "core/sha256.h"

/* A job's round artifact when it is complete (true: *b read, its bytes'
 * SHA-256 in hex). Otherwise false, with why it is not usable in why ("" when
 * the file is missing, " (incomplete: REASON)" when the round was cut short,
 * e.g. by a server that stalled, " (reader's message)" when it does not read
 * as an artifact). */
static bool load_round(const struct sweep_job *job, struct benchmark *b, char *hex, char *why,
                       size_t whylen)
{
    char err[512];
    why[0] = '\0';
    if (benchmark_read_file(job->artifact, b, hex, err, sizeof err) != 0) {
        if (access(job->artifact, F_OK) == 0)
            snprintf(why, whylen, " (%s)", err);
        return false;
    }
    if (b->incomplete) {    /* as sweep_round_done */
        snprintf(why, whylen, " (incomplete: %s)", b->incomplete_reason ? b->incomplete_reason : "no reason given");
        benchmark_free(b);
        return false;
    }
    return true;
}

/* The complete rounds of plan, in plan order. */
struct rounds {
    struct benchmark *b;
    const struct sweep_job **job;
    char (*sha)[SHA256_HEX_LEN + 1];
    size_t n;
    char **missing;             /* "round R of T C did not complete" per other job */
    size_t n_missing;
};

static void rounds_free(struct rounds *r)
{
    for (size_t i = 0; i < r->n; i++)
        benchmark_free(&r->b[i]);
    free(r->b);
    free(r->job);
    free(r->sha);
    artifact_strings_free(r->missing, r->n_missing);
}

static int load_rounds(const struct sweep_plan *plan, struct rounds *r, char *err, size_t errlen)
{
    size_t n = plan->n_jobs ? plan->n_jobs : 1;
    *r = (struct rounds){.b = calloc(n, sizeof *r->b), .job = calloc(n, sizeof *r->job),
                         .sha = calloc(n, sizeof *r->sha), .missing = calloc(n, sizeof *r->missing)};
    if (!r->b || !r->job || !r->sha || !r->missing) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < plan->n_jobs; i++) {
        const struct sweep_job *job = &plan->jobs[i];
        char why[600], line[1400];
        if (load_round(job, &r->b[r->n], r->sha[r->n], why, sizeof why)) {
            r->job[r->n++] = job;
            continue;
        }
        snprintf(line, sizeof line, "round %ld of %s%s%s did not complete%s", job->round, job->target,
                 job->target[0] ? " " : "", job->case_id, why);
        if (!(r->missing[r->n_missing] = strdup(line))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        r->n_missing++;
    }
    if (r->n == 0) {
        snprintf(err, errlen, "no round completed");
        return -1;
    }
    return 0;
}

/* ---- matrix ---- */

/* The matrix of the loaded rounds into *m. */
static int build_matrix(const struct rounds *r, struct matrix *m, char *err, size_t errlen)
{
    struct matrix_row *rows = calloc(r->n, sizeof *rows);
    const struct benchmark **arts = calloc(r->n, sizeof *arts);
    struct matrix_meta meta = {0};
    size_t k = 0;
    int rc = rows && arts ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (; !rc && k < r->n; k++) {
        char why[400];
        arts[k] = &r->b[k];
        if (matrix_row_of(&r->b[k], r->sha[k][0] ? r->sha[k] : NULL, &rows[k], why, sizeof why) != 0) {
            snprintf(err, errlen, "%s: %s", r->job[k]->artifact, why);
            rc = -1;
        }
    }
    if (!rc && matrix_meta_of(arts, r->n, &meta) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (!rc)
        rc = matrix_assemble(rows, r->n, &meta, r->missing, r->n_missing, m, err, errlen);
    for (size_t i = 0; rows && i < k; i++)
        matrix_row_free(&rows[i]);
    free(rows);
    free(arts);
    matrix_meta_free(&meta);
    return rc;
}

int sweep_write_matrix(const struct sweep_plan *plan, const char *dir, bool interrupted,
                       const struct provenance *prov, char *status, size_t cap, char *err,
                       size_t errlen)
{
    struct rounds r;
    struct matrix m = {0};
    int rc = load_rounds(plan, &r, err, errlen);
    if (!rc)
        rc = build_matrix(&r, &m, err, errlen);
    char *incomplete = !rc && interrupted ? strdup("INCOMPLETE") : NULL;
    if (incomplete) {
        free(m.status);
        m.status = incomplete;
    }
    cJSON *doc = NULL;
    if (!rc && ((interrupted && !incomplete) || provenance_copy(&m.provenance, prov) != 0
                || !(doc = matrix_to_json(&m)))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (!rc) {
        snprintf(status, cap, "%s", m.status);
        char path[1100];
        snprintf(path, sizeof path, "%s/matrix.json", dir);
        rc = matrix_write_file(path, doc, err, errlen);
    }
    cJSON_Delete(doc);
    matrix_free(&m);
    rounds_free(&r);
    return rc;
}

/* ---- load curve ---- */

/* A case id without its load suffix ("-c8", "-r2"): what the points of one
 * curve share. Writes into out (cap bytes). */
static void shape_of(const char *case_id, char *out, size_t cap)
{
    const char *dash = strrchr(case_id, '-');
    bool load = dash && (dash[1] == 'c' || dash[1] == 'r') && dash[2] >= '0' && dash[2] <= '9';
    snprintf(out, cap, "%.*s", (int)(load ? (size_t)(dash - case_id) : strlen(case_id)), case_id);
}

static bool is_open_loop(const struct sweep_job *j)
{
    for (size_t i = 0; i < j->n_args; i++)
        if (!strcmp(j->args[i], "--request-rate"))
            return true;
    return false;
}

/* Whether the plan mixes closed-loop and open-loop cases. */
static bool mixed_loads(const struct sweep_plan *p)
{
    int open = 0, closed = 0;
    for (size_t i = 0; i < p->n_jobs; i++)
        *(is_open_loop(&p->jobs[i]) ? &open : &closed) += 1;
    return open && closed;
}

/* Whether the plan's cases have more than one shape (shape_of). */
static bool several_shapes(const struct sweep_plan *p)
{
    char first[100] = "", shape[100];
    for (size_t i = 0; i < p->n_jobs; i++) {
        shape_of(p->jobs[i].case_id, shape, sizeof shape);
        if (!first[0])
            snprintf(first, sizeof first, "%s", shape);
        else if (strcmp(first, shape) != 0)
            return true;
    }
    return false;
}

/* Which curve and load point a round belongs to. */
struct point_key {
    char group[160];
    double x;
};

static void key_of(const struct benchmark *b, const struct sweep_job *job, bool shapes, bool mixed,
                   struct point_key *k)
{
    const char *label = job->target[0] ? job->target : b->engine;
    bool open = !isnan(b->request_rate);
    k->x = open ? b->request_rate : (double)b->concurrency;
    char shape[100] = "", load[32] = "";
    if (shapes) {
        shape[0] = '/';
        shape_of(job->case_id, shape + 1, sizeof shape - 1);
    }
    if (mixed)      /* one axis, one unit: concurrency and request rate get their own curves */
        snprintf(load, sizeof load, "/%s", open ? "request_rate" : "concurrency");
    snprintf(k->group, sizeof k->group, "%s%s%s", label, shape, load);
}

/* The target named group in c, added (with room for cap points) when new. */
static struct load_curve_target *target_of(struct load_curve *c, const char *group, size_t cap)
{
    for (size_t i = 0; i < c->n_load; i++)
        if (!strcmp(c->load[i].name, group))
            return &c->load[i];
    struct load_curve_target *t = &c->load[c->n_load];
    *t = (struct load_curve_target){.name = strdup(group), .kv_pool_tokens = NAN,
                                    .points = calloc(cap, sizeof *t->points)};
    c->n_load++;
    return t->name && t->points ? t : NULL;
}

/* The telemetry of a point from its m rounds' observation blocks: seed
 * 002's gpu block (the range of the rounds' median SM clocks, the hottest
 * temperature, the thermally throttled share pooled over every round's GPU
 * readings; absent when no round read a GPU) and the curve's KV pool (the
 * first round that has it: the server's, the same in every round). */
static int observed_point(struct load_curve_target *t, struct load_curve_point *p,
                          const struct benchmark *const *same, size_t m)
{
    double *sm = malloc((m ? m : 1) * sizeof *sm), hottest = NAN, throttled = 0, samples = 0;
    if (!sm)
        return -1;
    size_t k = 0;
    p->gpu = (struct load_curve_gpu){.median_sm_mhz = {NAN, NAN, NAN, 0}, .max_temp_c = NAN,
                                     .thermal_share = NAN};
    for (size_t i = 0; i < m; i++) {
        struct observe_figures f;
        observe_figures_of(same[i], &f);
        if (isnan(t->kv_pool_tokens))
            t->kv_pool_tokens = f.kv_pool_tokens;
        if (!f.gpu)
            continue;
        p->gpu.present = true;
        if (!isnan(f.median_sm_mhz))
            sm[k++] = f.median_sm_mhz;
        if (!isnan(f.max_temp_c))
            hottest = isnan(hottest) ? f.max_temp_c : fmax(hottest, f.max_temp_c);
        if (!isnan(f.thermal_share) && f.gpu_samples > 0) {
            throttled += f.thermal_share * f.gpu_samples;
            samples += f.gpu_samples;
        }
    }
    struct matrix_range r;
    if (k && matrix_range_of(sm, k, &r) == 0)
        p->gpu.median_sm_mhz = (struct load_curve_range){r.median, r.min, r.max, (long)k};
    p->gpu.max_temp_c = hottest;
    p->gpu.thermal_share = samples > 0 ? throttled / samples : NAN;
    free(sm);
    return 0;
}

/* Adds the point of key k (every loaded round with that key) to its curve,
 * unless an earlier round made it. */
static int add_point(struct load_curve *c, const struct point_key *k, const struct rounds *r,
                     const struct point_key *keys, const struct benchmark **same)
{
    struct load_curve_target *t = target_of(c, k->group, r->n);
    if (!t)
        return -1;
    for (size_t i = 0; i < t->n_points; i++)
        if (t->points[i].x == k->x)
            return 0;
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++)
        if (keys[i].x == k->x && !strcmp(keys[i].group, k->group))
            same[m++] = &r->b[i];
    if (load_curve_point_of(same, m, k->x, &t->points[t->n_points]) != 0)
        return -1;
    t->n_points++;
    if (observed_point(t, &t->points[t->n_points - 1], same, m) != 0)
        return -1;
    return 0;
}

static int curve_of(const struct rounds *r, bool shapes, bool mixed, struct load_curve *c)
{
    struct point_key *keys = calloc(r->n, sizeof *keys);
    const struct benchmark **same = calloc(r->n, sizeof *same);
    int rc = keys && same && (c->load = calloc(r->n, sizeof *c->load)) ? 0 : -1;
    for (size_t i = 0; !rc && i < r->n; i++)
        key_of(&r->b[i], r->job[i], shapes, mixed, &keys[i]);
    for (size_t i = 0; !rc && i < r->n; i++)
        rc = add_point(c, &keys[i], r, keys, same);
    free(keys);
    free(same);
    return rc;
}

int sweep_load_curve(const struct sweep_plan *plan, const char *profile, double slo_ttft_ms,
                     double slo_tpot_ms, const struct provenance *prov, struct load_curve *out,
                     char *err, size_t errlen)
{
    *out = (struct load_curve){.schema = strdup(LOAD_CURVE_SCHEMA), .profile = strdup(profile),
                               .slo_ttft_ms = slo_ttft_ms, .slo_tpot_ms = slo_tpot_ms};
    for (int i = 0; i < LOAD_CURVE_QUANTILES; i++)
        out->quantiles[i] = i / (double)(LOAD_CURVE_QUANTILES - 1);
    struct rounds r;
    int rc = load_rounds(plan, &r, err, errlen);
    if (!rc && (!out->schema || !out->profile || curve_of(&r, several_shapes(plan), mixed_loads(plan), out) != 0
                || provenance_copy(&out->provenance, prov) != 0)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    rounds_free(&r);
    if (rc)
        load_curve_free(out);
    return rc;
}
