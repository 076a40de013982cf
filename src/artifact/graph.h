/* graph.h — graph data, schema anvil-serving.benchmark-graph-data/v1 (seed
 * 000's shape): charts that compare configurations on one metric each,
 * grouped in series, every point naming the artifact it came from and the
 * SHA-256 of that file's bytes, plus metric_semantics in words. struct
 * graph_data holds every field; graph_to_json writes it, graph_from_json
 * reads it back (checked), and graph_build makes it from a plan (charts
 * whose points name artifact files). */
#ifndef ANVIL_ARTIFACT_GRAPH_H
#define ANVIL_ARTIFACT_GRAPH_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/sha256.h"

#define GRAPH_SCHEMA "anvil-serving.benchmark-graph-data/v1"

struct graph_point {
    char *x;                    /* the point's label on the x axis */
    char *artifact;             /* the artifact's file name (no directory) */
    char sha256[SHA256_HEX_LEN + 1];    /* of the artifact file's bytes, lowercase hex */
    double value;               /* the metric in the artifact */
};

struct graph_series {
    char *label;
    struct graph_point *points;
    size_t n_points;
};

struct graph_chart {
    char *metric;               /* dotted path in the artifact: "metrics.ttft_p50_ms" */
    char *title, *x_label, *y_label;
    struct graph_series *series;
    size_t n_series;
};

/* A name → sentence entry of metric_semantics, in file order. */
struct graph_semantic {
    char *key, *text;
};

struct graph_data {
    char *schema;               /* GRAPH_SCHEMA */
    char *title, *subtitle;     /* subtitle NULL when absent */
    struct graph_chart *charts;
    size_t n_charts;
    struct graph_semantic *semantics;
    size_t n_semantics;
};

/* The document: charts [{metric, series [{label, points [{artifact,
 * artifact_sha256, value, x}]}], title, x_label, y_label}],
 * metric_semantics {key: text}, schema, subtitle (when set), title — seed
 * 000's keys. Returns a new tree (caller deletes) or NULL when memory runs
 * out. */
cJSON *graph_to_json(const struct graph_data *g);

/* Reads a graph-data document into *out: schema GRAPH_SCHEMA, title, charts
 * (a non-empty array; each with metric, title, x_label, y_label strings and
 * a non-empty series array of {label, points}, each point {x, artifact,
 * artifact_sha256 (64 hex digits), value (a number)}) and metric_semantics
 * (object of strings) required; subtitle optional. Returns 0, or -1 with
 * "NAME: key.path: what" in err (*out then empty). */
int graph_from_json(const cJSON *j, const char *name, struct graph_data *out, char *err,
                    size_t errlen);

/* Builds graph data from a plan (parsed JSON or YAML): {title, subtitle?,
 * metric_semantics? {key: text}, charts: [{metric, title, x_label,
 * y_label, series: [{label, points}]}]} where points is either an object
 * {x label: artifact file, ...} (in order) or an array of {x, artifact}.
 * Artifact paths that are not absolute are taken relative to base_dir
 * (NULL: the current directory). Each artifact is read, its bytes hashed
 * and the metric taken by its dotted path (object keys, or array indexes
 * as numbers); metric_semantics gets the plan's own entries and then, for
 * every metric charted, the definition from docs/METHODOLOGY.md
 * (graph_semantic_of) under its key, once. plan_name names the plan in
 * messages. Returns 0, or -1 with the error in err — a missing artifact or
 * a metric it lacks names both ("PLAN: charts[0].series[1].points[2]: FILE:
 * metric metrics.x: absent") — (*out then empty). */
int graph_build(const cJSON *plan, const char *plan_name, const char *base_dir,
                struct graph_data *out, char *err, size_t errlen);

/* The metric_semantics key and definition (docs/METHODOLOGY.md, in words)
 * of a metric path such as "metrics.ttft_p99_ms" or
 * "metrics.decode_tok_s_p50": the metric registry's row of the key
 * (stats/registry.h, metric_of_key) that has a seed-000 key. Returns 0 with *key and *text set to static strings, or -1
 * when anvil has no definition of it. */
int graph_semantic_of(const char *metric, const char **key, const char **text);

/* The definition of percentiles (docs/METHODOLOGY.md): added under
 * "percentiles" when a charted metric is a percentile. */
extern const char *const graph_percentiles_text;

/* Writes g (graph_to_json, every number exact) to path, or to stdout when
 * path is "-"; a file is replaced atomically (artifact_write_file). Returns
 * 0, or -1 with a message in err. */
int graph_write_file(const char *path, const struct graph_data *g, char *err, size_t errlen);

/* Frees what *g owns and empties it. */
void graph_free(struct graph_data *g);

#endif
