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
    *out = (struct obs_gauge){.mean = NAN, .max = NAN, .min = NAN, .time_weighted = NAN,
                              .nonzero_share = NAN, .median = NAN};
    struct point *p = malloc((n ? n : 1) * sizeof *p);
    double *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!p || !sorted) {
        free(p);
        free(sorted);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]) && m[i] >= ws && m[i] <= we)
            p[k++] = (struct point){m[i], v[i]};
    if (k > 0) {
        qsort(p, k, sizeof *p, cmp_point);
        double sum = 0, area = 0;
        int nonzero = 0;
        out->max = out->min = p[0].v;
        for (size_t i = 0; i < k; i++) {
            sum += p[i].v;
            sorted[i] = p[i].v;
            nonzero += p[i].v > 0;
            out->max = fmax(out->max, p[i].v);
            out->min = fmin(out->min, p[i].v);
            int64_t until = i + 1 < k ? p[i + 1].m : we;
            area += p[i].v * (double)(until - p[i].m);
        }
        qsort(sorted, k, sizeof *sorted, cmp_double);
        out->samples = (int)k;
        out->mean = sum / (double)k;
        out->nonzero_share = (double)nonzero / (double)k;
        out->median = k % 2 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2;
        out->time_weighted = we > p[0].m ? area / (double)(we - p[0].m) : out->mean;
    }
    free(p);
    free(sorted);
    return 0;
}
