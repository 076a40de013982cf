/* html.c — the HTML report: the artifacts' data as JSON (one part per
 * kind, html_parts.h) for the page's script, wrapped with uPlot and the
 * report's script and style. */
#include "report/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/version.h"
#include "report/assets.h"
#include "report/html_parts.h"
#include "stats/registry.h"

bool report_html_available(void)
{
    return report_have_uplot != 0;
}

/* ---- shared by the parts (html_parts.h) ---- */

cJSON *html_num(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

void html_add_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, html_num(v));
}

const char *html_base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

bool html_decode_part(const struct artifact_any *a, size_t n, size_t i)
{
    static const char *const parts[] = {"cells/", "burst/", "prefill/"};
    if (a[i].kind != AK_BENCHMARK)
        return false;
    for (size_t k = 0; k < n; k++) {
        if (a[k].kind != AK_DECODE_MATRIX)
            continue;
        const char *slash = strrchr(a[k].path, '/');
        size_t dir = slash ? (size_t)(slash - a[k].path) + 1 : 0;
        if (strncmp(a[i].path, a[k].path, dir))
            continue;
        for (size_t p = 0; p < sizeof parts / sizeof *parts; p++)
            if (!strncmp(a[i].path + dir, parts[p], strlen(parts[p])))
                return true;
    }
    return false;
}

cJSON *html_strings(const char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

/* ---- the document ---- */

static cJSON *definitions(void)
{
    cJSON *d = cJSON_CreateObject();
    /* the metric registry's (stats/registry.h): "name (unit): definition" */
    static const char *const keys[][2] = {{"ttft", "ttft"}, {"tpot", "tpot"}, {"itl", "itl"}, {"e2e", "e2e"},
                                          {"throughput", "output_throughput"}, {"lateness", "send_lateness"},
                                          {"cost", "cost_per_mtok"}, {"goodput", "goodput_rps"}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct metric_def *m = metric_find(keys[i][1]);
        char line[640];
        snprintf(line, sizeof line, "%s (%s): %s", m->name, m->unit, m->definition);
        cJSON_AddStringToObject(d, keys[i][0], line);
    }
    /* docs/METHODOLOGY.md, "Server metrics and telemetry over time" */
    static const char *const over_time[][2] = {
        {"server_tps", "server output tokens/s: Δ`generation_tokens` between two points / the time between "
                       "their midpoints (the server's counter), beside the client's output tokens/s (each "
                       "request's tokens spread evenly from its first token to its end)."},
        {"server_load", "running and waiting requests: the server's gauges at each reading; KV cache usage: "
                        "its `kv_cache_usage` gauge (0..1) in %."},
        {"gpu_util", "GPU utilization: the driver's share of the last sample period a kernel ran "
                     "(`utilization.gpu`), per GPU; host CPU: busy / all jiffies of /proc/stat between two points."},
        {"gpu_power", "GPU power: each GPU's power draw at the reading, W."},
        {"gpu_clock", "GPU SM clock: each GPU's SM clock at the reading, MHz (a clock falling under load: "
                      "power or thermal limits)."},
        {"gpu_temp", "GPU temperature: each GPU's core temperature at the reading, °C."},
    };
    for (size_t i = 0; i < sizeof over_time / sizeof *over_time; i++)
        cJSON_AddStringToObject(d, over_time[i][0], over_time[i][1]);
    return d;
}

static cJSON *data_json(const struct artifact_any *a, size_t n, const struct cost *cost, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "definitions", definitions());
    cJSON *runs = cJSON_AddArrayToObject(o, "runs"), *curves = cJSON_AddArrayToObject(o, "curves"),
          *matrices = cJSON_AddArrayToObject(o, "matrices"), *decode = cJSON_AddArrayToObject(o, "decode"),
          *graphs = cJSON_AddArrayToObject(o, "graphs"), *searches = cJSON_AddArrayToObject(o, "searches");
    for (size_t i = 0; i < n; i++) {
        switch (a[i].kind) {
        case AK_BENCHMARK: {
            cJSON *r = html_run(&a[i], cost, err, errlen);
            if (!r) {
                cJSON_Delete(o);
                return NULL;
            }
            if (html_decode_part(a, n, i))  /* decode.js stands for it */
                cJSON_AddBoolToObject(r, "decode_part", true);
            cJSON_AddItemToArray(runs, r);
            break;
        }
        case AK_LOAD_CURVE: {
            cJSON *c = html_curve(&a[i], cost, err, errlen);
            if (!c) {
                cJSON_Delete(o);
                return NULL;
            }
            cJSON_AddItemToArray(curves, c);
            break;
        }
        case AK_MATRIX: cJSON_AddItemToArray(matrices, html_matrix(&a[i], cost)); break;
        case AK_DECODE_MATRIX: cJSON_AddItemToArray(decode, html_decode(&a[i], cost)); break;
        case AK_GRAPH: cJSON_AddItemToArray(graphs, html_graph(&a[i])); break;
        case AK_SEARCH: cJSON_AddItemToArray(searches, html_search(&a[i])); break;
        case AK_UNKNOWN: break;
        }
    }
    /* a sweep without SLOs writes no load curve: its rounds make one */
    cJSON *from_rounds = NULL;
    if (cJSON_GetArraySize(curves) == 0 && html_curve_of_rounds(a, n, cost, &from_rounds, err, errlen) != 0) {
        cJSON_Delete(o);
        return NULL;
    }
    if (from_rounds)
        cJSON_AddItemToArray(curves, from_rounds);
    cJSON *comparison = html_compare(a, n, cost);
    if (comparison)
        cJSON_AddItemToObject(o, "comparison", comparison);
    return o;
}

/* Text for HTML: & < > " escaped. */
static void html_text(FILE *out, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
}

/* JSON inside <script>: '<' written as \u003c so no "</script>" can end it. */
static void script_json(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("\\u003c", out);
        else
            fputc(*s, out);
}

int report_html(FILE *out, const struct artifact_any *a, size_t n, const struct cost *cost, char *err,
                size_t errlen)
{
    if (!report_html_available()) {
        snprintf(err, errlen, "this build of anvil has no chart bundle (uPlot was not in node_modules "
                 "when it was built): run scripts/install-report-deps, then make");
        return -1;
    }
    cJSON *data = data_json(a, n, cost, err, errlen);
    if (!data)
        return -1;
    char *json = cJSON_PrintUnformatted(data);
    cJSON_Delete(data);
    if (!json) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          /* nothing may load from anywhere: the file is the whole report */
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
          "<title>anvil report</title>\n<style>\n", out);
    fwrite(report_uplot_css, 1, report_uplot_css_len, out);
    fputs("\n</style>\n<style>\n", out);
    fwrite(report_css, 1, report_css_len, out);
    fprintf(out, "</style>\n</head>\n<body>\n<h1>anvil report</h1>\n<div id=\"anvil-report\"></div>\n"
            "<details class=\"inputs\"><summary>Inputs: %zu file%s; anvil %s, charts by uPlot %s</summary>\n",
            n, n == 1 ? "" : "s", anvil_version(), report_uplot_version);
    for (size_t i = 0; i < n; i++) {
        html_text(out, a[i].path);
        fprintf(out, " (%s, sha256 %.16s…)<br>\n", artifact_kind_name(a[i].kind), a[i].sha256);
    }
    fputs("</details>\n<div id=\"anvil-status\" class=\"bad\">This report draws its charts with JavaScript, "
          "which did not run.</div>\n"
          "<script type=\"application/json\" id=\"anvil-data\">", out);
    script_json(out, json);
    free(json);
    fputs("</script>\n<script>\n", out);
    fwrite(report_uplot_js, 1, report_uplot_js_len, out);
    fputs("\n</script>\n<script>\n", out);
    fwrite(report_js, 1, report_js_len, out);
    fputs("</script>\n</body>\n</html>\n", out);
    if (ferror(out)) {
        snprintf(err, errlen, "cannot write the report");
        return -1;
    }
    return 0;
}
