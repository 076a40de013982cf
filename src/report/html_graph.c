/* html_graph.c — graph data for the report (see html_parts.h): its charts,
 * each with which way its metric is better (stats/registry.h), series and
 * points. */
#include "report/html_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "artifact/graph.h"
#include "stats/registry.h"

static const char *semantic(const struct graph_data *g, const char *metric)
{
    const char *key, *text;
    if (graph_semantic_of(metric, &key, &text) != 0)
        return NULL;
    for (size_t i = 0; i < g->n_semantics; i++)
        if (!strcmp(g->semantics[i].key, key))
            return g->semantics[i].text;
    return text;
}

cJSON *html_graph(const struct artifact_any *a)
{
    const struct graph_data *g = &a->u.graph;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "title", g->title);
    if (g->subtitle)
        cJSON_AddStringToObject(o, "subtitle", g->subtitle);
    cJSON *charts = cJSON_AddArrayToObject(o, "charts");
    for (size_t c = 0; c < g->n_charts; c++) {
        const struct graph_chart *ch = &g->charts[c];
        cJSON *co = cJSON_CreateObject();
        cJSON_AddStringToObject(co, "title", ch->title);
        cJSON_AddStringToObject(co, "metric", ch->metric);
        cJSON_AddStringToObject(co, "x_label", ch->x_label);
        cJSON_AddStringToObject(co, "y_label", ch->y_label);
        const char *def = semantic(g, ch->metric);
        if (def)
            cJSON_AddStringToObject(co, "def", def);
        /* which way is better: the metric registry's, "neither" for a metric anvil does not define */
        const struct metric_def *md = metric_of_key(ch->metric);
        cJSON_AddStringToObject(co, "better", md ? metric_better_name(md->better) : "neither");
        cJSON *series = cJSON_AddArrayToObject(co, "series");
        for (size_t s = 0; s < ch->n_series; s++) {
            cJSON *so = cJSON_CreateObject(), *pts = cJSON_AddArrayToObject(so, "points");
            cJSON_AddStringToObject(so, "label", ch->series[s].label);
            for (size_t i = 0; i < ch->series[s].n_points; i++) {
                cJSON *p = cJSON_CreateObject();
                cJSON_AddStringToObject(p, "x", ch->series[s].points[i].x);
                html_add_num(p, "value", ch->series[s].points[i].value);
                cJSON_AddStringToObject(p, "artifact", ch->series[s].points[i].artifact);
                cJSON_AddItemToArray(pts, p);
            }
            cJSON_AddItemToArray(series, so);
        }
        cJSON_AddItemToArray(charts, co);
    }
    return o;
}
