/* window.c — boundary values and gauge summaries over a window (window.h). */
#include "observe/window.h"

#include <math.h>
#include <stdlib.h>

const char *obs_phase_name(enum obs_phase p)
{
    static const char *const names[] = {
        [OBS_PRE_RUN] = "pre_run", [OBS_BEFORE_WARMUP] = "before_warmup",
        [OBS_WINDOW_START] = "window_start", [OBS_WINDOW_END] = "window_end",
        [OBS_AFTER_LAST] = "after_last", [OBS_PERIODIC] = "periodic", [OBS_POST_RUN] = "post_run",
    };
    return (unsigned)p < sizeof names / sizeof *names ? names[p] : "?";
}

static int64_t mid(const struct obs_time *t)
{
    return t->sent + (t->done - t->sent) / 2;
}

struct obs_pick obs_pick_boundary(const struct obs_time *t, size_t n, int64_t b, bool start,
                                  enum obs_rule rule)
{
    struct obs_pick p = {.lo = -1, .hi = -1};
    for (size_t i = 0; i < n; i++) {
        if (!t[i].usable)
            continue;
        int64_t m = mid(&t[i]);
        if (t[i].done <= b && (p.lo < 0 || m > p.lo_ns)) {
            p.lo = (long)i;
            p.lo_ns = m;
        }
        if (t[i].sent >= b && (p.hi < 0 || m < p.hi_ns)) {
            p.hi = (long)i;
            p.hi_ns = m;
        }
    }
    if (p.lo < 0 || p.hi < 0)
        p.w = p.hi >= 0 ? 1 : 0;
    else if (rule == OBS_COVER)
        p.w = start ? 0 : 1;
    else
        p.w = p.hi_ns > p.lo_ns ? (double)(b - p.lo_ns) / (double)(p.hi_ns - p.lo_ns) : 1;
    if (p.w < 0)
        p.w = 0;
    if (p.w > 1)
        p.w = 1;
    return p;
}

double obs_pick_value(const struct obs_pick *p, double v_lo, double v_hi)
{
    if (p->lo < 0)
        v_lo = NAN;
    if (p->hi < 0)
        v_hi = NAN;
    if (isnan(v_lo))
        return v_hi;
    if (isnan(v_hi))
        return v_lo;
    return v_lo + p->w * (v_hi - v_lo);
}

struct point {
    int64_t m;
    double v;
};

static int cmp_point(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    return x->m < y->m ? -1 : x->m > y->m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int obs_gauge_summary(const int64_t *m, const double *v, size_t n, int64_t ws, int64_t we,
                      struct obs_gauge *out)
{
    *out = (struct obs_gauge){.mean = NAN, .max = NAN, .min = NAN, .time_weighted = NAN, .coverage = NAN,
                              .nonzero_share = NAN, .median = NAN};
    struct point *p = malloc((n ? n : 1) * sizeof *p);
    double *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!p || !sorted) {
        free(p);
        free(sorted);
        return -1;
    }
    size_t k = 0, answered = 0;
    for (size_t i = 0; i < n; i++)
        if (m[i] >= ws && m[i] <= we)
            p[k++] = (struct point){m[i], v[i]};
    qsort(p, k, sizeof *p, cmp_point);
    double sum = 0, area = 0, held = 0;
    int nonzero = 0;
    for (size_t i = 0; i < k; i++) {
        if (isnan(p[i].v)) {
            out->missed++;
            continue;
        }
        double until = (double)((i + 1 < k ? p[i + 1].m : we) - p[i].m);
        sum += p[i].v;
        sorted[answered++] = p[i].v;
        nonzero += p[i].v > 0;
        out->max = answered == 1 ? p[i].v : fmax(out->max, p[i].v);
        out->min = answered == 1 ? p[i].v : fmin(out->min, p[i].v);
        area += p[i].v * until;
        held += until;
    }
    if (answered > 0) {
        qsort(sorted, answered, sizeof *sorted, cmp_double);
        size_t a = answered;
        out->samples = (int)a;
        out->mean = sum / (double)a;
        out->nonzero_share = (double)nonzero / (double)a;
        out->median = a % 2 ? sorted[a / 2] : (sorted[a / 2 - 1] + sorted[a / 2]) / 2;
        out->time_weighted = held > 0 ? area / held : out->mean;
        out->coverage = we > ws ? held / (double)(we - ws) : NAN;
    }
    free(p);
    free(sorted);
    return 0;
}

bool obs_gauge_require(struct obs_gauge *g, double min_coverage)
{
    if (g->samples > 0 && !(g->coverage < min_coverage))
        return true;
    g->mean = g->max = g->min = g->time_weighted = g->median = g->nonzero_share = NAN;
    return false;
}
