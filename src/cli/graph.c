/* graph.c — `anvil graph PLAN`: the flag table and the calls; the graph
 * data is built by artifact/graph (graph_build). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/graph.h"
#include "cli/cli.h"
#include "cli/flags.h"
#include "core/file.h"
#include "core/yamljson.h"

struct graph_cli {
    const char *out;
    const char *plan;
};

static const struct flag_spec flags[] = {
    {"out", NULL, FLAG_STRING, offsetof(struct graph_cli, out), "FILE", "-",
     "where to write the graph data (schema " GRAPH_SCHEMA "); - for stdout"},
    {0},
};

static int set_plan(void *cfg, const char *arg)
{
    struct graph_cli *g = cfg;
    if (g->plan)
        return -1;
    g->plan = arg;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil graph PLAN [--out FILE]\n"
            "Builds graph data (schema %s) from a plan in JSON or YAML:\n"
            "  title: ...            subtitle: ... (optional)\n"
            "  metric_semantics: {key: sentence, ...}   (optional; definitions of the charted\n"
            "                        metrics from docs/METHODOLOGY.md are added)\n"
            "  charts:\n"
            "    - metric: metrics.ttft_p50_ms   title: ...   x_label: ...   y_label: ...\n"
            "      series:\n"
            "        - label: TP1\n"
            "          points: {\"config A\": a.json, \"config B\": b.json}\n"
            "                  (or a list of {x: ..., artifact: ...})\n"
            "Each artifact (relative to the plan's directory) is read, hashed (SHA-256) and its metric\n"
            "taken by the dotted path.\n\n", GRAPH_SCHEMA);
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 written, 1 the file cannot be written, 2 usage error, "
            "or the plan, an artifact or a metric is missing or invalid (named).\n", "-h, --help");
}

/* The plan as a tree: JSON, else YAML. */
static cJSON *read_plan(const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    char why[512];
    cJSON *j = json_or_yaml(text, len, why, sizeof why);
    if (!j)
        snprintf(err, errlen, "%s:%s (read as JSON, else YAML)", path, why);
    free(text);
    return j;
}

int graph_main(int argc, char **argv)
{
    struct graph_cli g = {0};
    int rc = flags_defaults("graph", flags, &g);
    if (rc == 0)
        rc = flags_parse("graph", flags, &g, argc, argv, set_plan, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc == 0 && !g.plan) {
        fprintf(stderr, "anvil graph: no plan given (see 'anvil graph --help')\n");
        rc = -1;
    }
    if (rc != 0)
        return 2;
    char err[2048];
    cJSON *plan = read_plan(g.plan, err, sizeof err);
    if (!plan) {
        fprintf(stderr, "anvil graph: %s\n", err);
        return 2;
    }
    char *dir = strdup(g.plan);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = '\0';
    struct graph_data data;
    rc = dir ? graph_build(plan, g.plan, slash ? dir : NULL, &data, err, sizeof err) : -1;
    if (!dir)
        snprintf(err, sizeof err, "out of memory");
    cJSON_Delete(plan);
    free(dir);
    int status = rc == 0 ? 0 : 2;   /* the plan, an artifact or a metric is missing or invalid */
    if (rc == 0) {
        status = graph_write_file(g.out, &data, err, sizeof err) == 0 ? 0 : 1;
        graph_free(&data);
    }
    if (status != 0)
        fprintf(stderr, "anvil graph: %s\n", err);
    return status;
}
