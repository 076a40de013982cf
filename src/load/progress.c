/* progress.c — the progress line's text. */
#include "load/progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BAR 20

void progress_duration(char *buf, size_t cap, double s)
{
    if (!(s >= 0) || isinf(s))
        snprintf(buf, cap, "?");
    else if (s < 10)
        snprintf(buf, cap, "%.1f s", s);
    else if (s < 60)
        snprintf(buf, cap, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* "[#####     ]" for the share f in [0, 1]. */
static void bar(char *buf, double f)
{
    int fill = f > 0 ? (int)(BAR * (f < 1 ? f : 1)) : 0;
    buf[0] = '[';
    memset(buf + 1, '#', (size_t)fill);
    memset(buf + 1 + fill, ' ', (size_t)(BAR - fill));
    buf[BAR + 1] = ']';
    buf[BAR + 2] = '\0';
}

/* The part every mode shows: requests ended, failed, in flight, tok/s. */
static void counts(char *buf, size_t cap, const struct progress_view *v, bool of_total)
{
    char tps[32] = "- tok/s";
    if (v->tok_per_s >= 0)
        snprintf(tps, sizeof tps, "%.0f tok/s", v->tok_per_s);
    if (of_total)
        snprintf(buf, cap, "%ld/%ld done, %ld failed, %ld in flight, %s", v->done, v->total, v->failed,
                 v->in_flight, tps);
    else
        snprintf(buf, cap, "%ld done, %ld failed, %ld in flight, %s", v->done, v->failed, v->in_flight, tps);
}

size_t progress_line(char *buf, size_t cap, const struct progress_view *v, int columns)
{
    char b[BAR + 3], c[160], t1[24], t2[24], t3[24];
    if (v->duration_s > 0) {
        counts(c, sizeof c, v, false);
        if (v->window_s < 0) {
            progress_duration(t1, sizeof t1, v->elapsed_s);
            progress_duration(t2, sizeof t2, v->warmup_s);
            bar(b, v->warmup_s > 0 ? v->elapsed_s / v->warmup_s : 1);
            snprintf(buf, cap, "warm-up %s %s of %s, %s", b, t1, t2, c);
        } else {
            double left = v->duration_s - v->window_s;
            progress_duration(t1, sizeof t1, v->window_s);
            progress_duration(t2, sizeof t2, v->duration_s);
            progress_duration(t3, sizeof t3, left > 0 ? left : 0);
            bar(b, v->window_s / v->duration_s);
            snprintf(buf, cap, "window %s %s of %s, %s left, %s", b, t1, t2, t3, c);
        }
    } else {
        counts(c, sizeof c, v, true);
        double eta = v->done > 0 && v->total >= v->done ? v->elapsed_s * (double)(v->total - v->done) / (double)v->done
                                                       : NAN;
        progress_duration(t1, sizeof t1, v->elapsed_s);
        progress_duration(t2, sizeof t2, eta);
        bar(b, v->total > 0 ? (double)v->done / (double)v->total : 0);
        snprintf(buf, cap, "%s %s, %s, ETA %s", b, c, t1, t2);
    }
    size_t n = strlen(buf);
    if (columns > 1 && n > (size_t)columns - 1)
        buf[n = (size_t)columns - 1] = '\0';
    return n;
}
