/* html_search.c — an SLO search (search.json) for the report (see
 * html_parts.h): its answer per target, in the shape of a load curve's
 * answers, and its probes in the order they ran. */
#include "report/html_parts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

/* The load of probe p: concurrency, or requests/s in a request-rate search. */
static double load_of(const struct search_probe *p)
{
    return isnan(p->request_rate) ? (double)p->concurrency : p->request_rate;
}

static cJSON *interval(const struct search_probe *p)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, html_num(p->interval[0]));
    cJSON_AddItemToArray(a, html_num(p->interval[1]));
    return a;
}

/* The probes of r in the order they ran, for the chart and table. */
static cJSON *probes_json(const struct search_result *r)
{
    cJSON *v = cJSON_CreateArray();
    for (size_t i = 0; i < r->n_probes; i++) {
        const struct search_probe *p = &r->probes[i];
        cJSON *o = cJSON_CreateObject();
        html_add_num(o, "x", load_of(p));
        html_add_num(o, "rounds", (double)p->rounds);
        html_add_num(o, "good", (double)p->good);
        html_add_num(o, "n", (double)p->requests);
        html_add_num(o, "attainment", p->attainment);
        cJSON_AddItemToObject(o, "interval", interval(p));
        cJSON_AddStringToObject(o, "verdict", p->verdict);
        cJSON_AddStringToObject(o, "decided_by", p->decided_by);
        cJSON_AddItemToArray(v, o);
    }
    return v;
}

/* Target r's answer, the shape of html_curve's answers plus the
 * attainment, its interval and the target attainment (kind "search"). */
static cJSON *answer_json(const struct search_doc *d, const struct search_result *r)
{
    const struct search_probe *b = r->best.present ? &r->best : NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "target", r->target ? r->target : "");
    cJSON_AddStringToObject(o, "kind", "search");
    cJSON_AddStringToObject(o, "source", "search");
    html_add_num(o, "x", b ? load_of(b) : NAN);
    html_add_num(o, "tps", NAN);    /* the search keeps no throughput */
    html_add_num(o, "ttft_p99", b ? b->ttft_p99_ms : NAN);
    html_add_num(o, "tpot_p99", b ? b->tpot_p99_ms : NAN);
    html_add_num(o, "goodput", b ? b->goodput_rps : NAN);
    html_add_num(o, "cost", NAN);
    html_add_num(o, "repeats", b ? (double)b->rounds : NAN);
    html_add_num(o, "slo_attainment", d->slo_attainment);
    html_add_num(o, "attainment", b ? b->attainment : NAN);
    if (b)
        cJSON_AddItemToObject(o, "interval", interval(b));
    char why[600];
    if (b)
        snprintf(why, sizeof why, "SLO %s: %ld of %ld requests good over %ld round%s; the search stopped: %s "
                 "(%zu probe%s)", d->slo, b->good, b->requests, b->rounds, b->rounds == 1 ? "" : "s", r->stopped,
                 r->n_probes, r->n_probes == 1 ? "" : "s");
    else
        snprintf(why, sizeof why, "SLO %s: no probe reached attainment %g; the search stopped: %s (%zu probe%s)",
                 d->slo, d->slo_attainment, r->stopped, r->n_probes, r->n_probes == 1 ? "" : "s");
    cJSON_AddStringToObject(o, "why", why);
    return o;
}

cJSON *html_search(const struct artifact_any *a)
{
    const struct search_doc *d = &a->u.search;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", a->path);
    cJSON_AddStringToObject(o, "search", d->search);
    cJSON_AddStringToObject(o, "load_label", !strcmp(d->search, "concurrency") ? "concurrency" : "requests/s");
    cJSON_AddStringToObject(o, "slo", d->slo);
    html_add_num(o, "slo_attainment", d->slo_attainment);
    cJSON *results = cJSON_AddArrayToObject(o, "results"), *answers = cJSON_AddArrayToObject(o, "answers");
    size_t n = d->one.present ? 1 : d->n_targets;
    for (size_t t = 0; t < n; t++) {
        const struct search_result *r = d->one.present ? &d->one : &d->targets[t];
        cJSON *res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "target", r->target ? r->target : "");
        cJSON_AddStringToObject(res, "stopped", r->stopped);
        html_add_num(res, "best", r->best.present ? load_of(&r->best) : NAN);
        cJSON_AddItemToObject(res, "probes", probes_json(r));
        cJSON_AddItemToArray(results, res);
        cJSON_AddItemToArray(answers, answer_json(d, r));
    }
    return o;
}
