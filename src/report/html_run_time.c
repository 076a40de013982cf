/* html_run_time.c — a run over time for the report (see html_parts.h):
 * the artifact's timeseries rows, the drift verdicts of report/drift.h,
 * the steady state in one line and its window, the ramp's end. */
#include "report/html_parts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/drift.h"
#include "stats/steady.h"

/* A row's own length, s: up to the next row's start; the last row up to
 * the run's end (run_s, NaN when unknown), at most the interval. */
static double row_len(const struct bench_timeseries *t, size_t i, double run_s)
{
    double w = t->interval_s;
    if (i + 1 < t->n_rows)
        return t->rows[i + 1].t_s - t->rows[i].t_s;
    double left = run_s - t->rows[i].t_s;
    return isfinite(left) && left > 0 && left < w ? left : w;
}

/* Adds array k of the rows' values to o. */
#define COLUMN(o, k, expr)                                                                                   \
    do {                                                                                                     \
        cJSON *col_ = cJSON_AddArrayToObject(o, k);                                                          \
        for (size_t i = 0; i < t->n_rows; i++) {                                                             \
            const struct bench_ts_row *r = &t->rows[i];                                                      \
            double len = row_len(t, i, run_s);                                                               \
            (void)r;                                                                                         \
            (void)len;                                                                                       \
            cJSON_AddItemToArray(col_, html_num(expr));                                                      \
        }                                                                                                    \
    } while (0)

/* The drift verdicts: {judged, quarter_s, metrics: [{label, unit, first,
 * last, noise, drifted}]}. */
static cJSON *drift_json(const struct benchmark *b)
{
    struct drift d[DRIFT_MAX];
    double quarter_s = NAN;
    int n = drift_of_run(b, d, DRIFT_MAX, &quarter_s);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "judged", n >= 0);
    html_add_num(o, "quarter_s", n >= 0 ? quarter_s : NAN);
    html_add_num(o, "min_rows", DRIFT_MIN_ROWS + 1);
    cJSON *m = cJSON_AddArrayToObject(o, "metrics");
    for (int i = 0; i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "label", d[i].label);
        cJSON_AddStringToObject(x, "unit", d[i].unit);
        html_add_num(x, "first", d[i].first);
        html_add_num(x, "last", d[i].last);
        html_add_num(x, "noise", d[i].noise);
        cJSON_AddBoolToObject(x, "drifted", d[i].drifted);
        cJSON_AddItemToArray(m, x);
    }
    return o;
}

static cJSON *rows_json(const struct bench_timeseries *t, double run_s)
{
    cJSON *o = cJSON_CreateObject();
    COLUMN(o, "t_s", r->t_s);
    COLUMN(o, "len_s", len);
    COLUMN(o, "started", (double)r->started);
    COLUMN(o, "completed", (double)r->completed);
    COLUMN(o, "failed", (double)r->failed);
    COLUMN(o, "cut", (double)r->cut);
    COLUMN(o, "in_flight", (double)r->in_flight);
    COLUMN(o, "output_tps", len > 0 ? (double)r->output_tokens / len : NAN);
    COLUMN(o, "ttft_p50", r->ttft_p50_ms);
    COLUMN(o, "ttft_p99", r->ttft_p99_ms);
    COLUMN(o, "itl_p50", r->itl_p50_ms);
    COLUMN(o, "itl_p99", r->itl_p99_ms);
    COLUMN(o, "running", r->server.present ? r->server.running_requests : NAN);
    COLUMN(o, "waiting", r->server.present ? r->server.waiting_requests : NAN);
    return o;
}

/* The steady state in one line, for the run's answer. */
static void steady_text(const struct bench_steady *s, char *out, size_t cap)
{
    bool rate = s->basis && !strcmp(s->basis, "completion_rate");
    if (!s->present) {
        snprintf(out, cap, "Steady state not judged (the artifact predates steady_state)");
        return;
    }
    if (s->reached) {
        snprintf(out, cap, "Steady state reached: %.1f s of %.1f s (%.0f %%), from %.1f s to %.1f s after the "
                 "first send; %s %.2f of %g%s", s->length_s, s->run_s, 100 * s->share, s->start_s, s->end_s,
                 rate ? "completion rate" : "in flight", s->level, s->target, rate ? " req/s" : "");
        return;
    }
    int k = snprintf(out, cap, "Steady state not reached: %s — %s", s->reason ? s->reason : "unknown",
                     steady_reason_text(s->reason));
    if (k >= 0 && (size_t)k < cap && isfinite(s->length_s))
        snprintf(out + k, cap - (size_t)k, " (the longest stretch in the band: %.1f s of %.1f s)", s->length_s,
                 s->run_s);
}

static cJSON *steady_json(const struct bench_steady *s)
{
    char line[512];
    steady_text(s, line, sizeof line);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "present", s->present);
    cJSON_AddBoolToObject(o, "reached", s->present && s->reached);
    if (s->present && s->reason)
        cJSON_AddStringToObject(o, "reason", s->reason);
    cJSON_AddStringToObject(o, "line", line);
    html_add_num(o, "start_s", s->present ? s->start_s : NAN);
    html_add_num(o, "end_s", s->present ? s->end_s : NAN);
    html_add_num(o, "length_s", s->present ? s->length_s : NAN);
    return o;
}

void html_run_time(cJSON *r, const struct benchmark *b)
{
    cJSON_AddItemToObject(r, "steady", steady_json(&b->steady_state));
    if (b->ramp.present) {
        cJSON *ramp = cJSON_AddObjectToObject(r, "ramp");
        cJSON_AddStringToObject(ramp, "strategy", b->ramp.strategy ? b->ramp.strategy : "");
        /* on the series' clock (the first measured send), as the steady state holds it: in
           duration mode the ramp began with the warm-up, before it */
        html_add_num(ramp, "end_s", b->steady_state.present ? b->steady_state.not_before_s : b->ramp.end_s);
    }
    const struct bench_timeseries *t = &b->timeseries;
    if (!t->present || !t->n_rows)
        return;
    double run_s = b->steady_state.present ? b->steady_state.run_s : NAN;
    cJSON *o = cJSON_AddObjectToObject(r, "ts");
    html_add_num(o, "interval_s", t->interval_s);
    html_add_num(o, "requested_interval_s", t->requested_interval_s);
    html_add_num(o, "exact_from_s", t->exact_from_s);
    cJSON_AddItemToObject(o, "rows", rows_json(t, run_s));
    cJSON_AddItemToObject(o, "drift", drift_json(b));
}
