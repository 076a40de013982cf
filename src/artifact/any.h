/* any.h — one artifact file of any kind anvil reads: tells the kind from
 * the document (its schema, or for seed-shaped files without one, its keys)
 * and reads it through that kind's checked reader. */
#ifndef ANVIL_ARTIFACT_ANY_H
#define ANVIL_ARTIFACT_ANY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/benchmark.h"
#include "artifact/decode_matrix.h"
#include "artifact/graph.h"
#include "artifact/load_curve.h"
#include "artifact/matrix.h"
#include "artifact/search.h"
#include "core/sha256.h"

enum artifact_kind {
    AK_UNKNOWN,
    AK_BENCHMARK,       /* anvil-serving.benchmark/v1 (seed 001) */
    AK_MATRIX,          /* anvil-serving.matrix/v1, or seed 003's rows + aggregates */
    AK_LOAD_CURVE,      /* anvil-serving.load-curve/v1, or seed 002's load + quantiles */
    AK_DECODE_MATRIX,   /* seed 004's metadata.decode_mode + results */
    AK_GRAPH,           /* anvil-serving.benchmark-graph-data/v1 (seed 000) */
    AK_SEARCH,          /* anvil-serving.search/v1 (a sweep's search.json) */
};

/* "benchmark", "matrix", "load curve", "decode matrix", "graph data",
 * "search", "unknown". */
const char *artifact_kind_name(enum artifact_kind k);

/* The kind of a parsed document: by `schema` when it has one, else by
 * the keys of the seed-shaped files (see enum artifact_kind). */
enum artifact_kind artifact_kind_of(const cJSON *j);

/* One artifact read from a file; exactly the member of kind is filled. */
struct artifact_any {
    enum artifact_kind kind;
    char *path;                         /* as given */
    char sha256[SHA256_HEX_LEN + 1];    /* of the file's bytes */
    union {
        struct benchmark bench;
        struct matrix matrix;
        struct load_curve curve;
        struct decode_matrix decode;
        struct graph_data graph;
        struct search_doc search;
    } u;
};

/* Reads the file at path (any kind) into *out. Returns 0, or -1 with err
 * set: cannot read ("PATH: cannot read: why"), not JSON, a kind anvil does
 * not know ("PATH: not an artifact anvil reads (no known schema ...)"), or
 * the kind's reader's message (naming PATH and the key). Release with
 * artifact_any_free. */
int artifact_any_read(const char *path, struct artifact_any *out, char *err, size_t errlen);

/* Every file named *.json under dir (recursively, skipping names that start
 * with '.'), in name order at each level, as a new array *paths of *n
 * malloc'd paths "dir/sub/name.json" (free with artifact_strings_free).
 * Returns 0, or -1 with err set (a directory cannot be opened, out of
 * memory; *paths then NULL). */
int artifact_find_json(const char *dir, char ***paths, size_t *n, char *err, size_t errlen);

/* strcmp, but a run of digits (with a fraction: "1.25") compares as the
 * number it is: c4 before c16, r1.25 before r1.5 (strverscmp gets the
 * second wrong). For load points in names and case ids. */
int artifact_name_cmp(const char *a, const char *b);

/* Frees what *a owns and empties it. */
void artifact_any_free(struct artifact_any *a);

#endif
