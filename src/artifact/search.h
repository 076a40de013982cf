/* search.h — the SLO search artifact, DIR/search.json of `anvil sweep
 * --search` (schema anvil-serving.search/v1; docs/ARTIFACTS.md): the
 * largest load whose SLO attainment is at least the target, the probes
 * that found it in the order they ran, and why the search stopped. One
 * answer per target: a sweep of one unlabelled target has best, probes and
 * stopped at the top level; with --targets each is an entry of `targets`. */
#ifndef ANVIL_ARTIFACT_SEARCH_H
#define ANVIL_ARTIFACT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/json.h"

#define SEARCH_SCHEMA "anvil-serving.search/v1"

/* One probe: a load point measured over one or more rounds, and what its
 * requests said. Also the answer (`best`), the probe that passed at the
 * largest load. */
struct search_probe {
    bool present;
    long concurrency;           /* closed loop; ARTIFACT_NONE in a request-rate search */
    double request_rate;        /* requests/s, open loop; NaN in a concurrency search */
    char *case_id;              /* the case the probe's rounds are named by */
    long rounds;                /* rounds measured at this load */
    long requests;              /* measured requests over the rounds: completed + failed */
    long good;                  /* completed requests that met every SLO */
    double attainment;          /* good / requests (ratio) */
    double interval[2];         /* 95 % Wilson score interval of attainment (ratio) */
    char *verdict;              /* "pass" (attainment ≥ target) or "fail" */
    char *decided_by;           /* "interval" (it excluded the target) or "repeats" (all
                                   repeats spent: the attainment over every request) */
    double goodput_rps;         /* median over the rounds of goodput_rps */
    double ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, tpot_p99_ms;  /* nearest rank over every
                                   completed request of the rounds; NaN when none */
    char **artifacts;           /* the rounds' artifacts, paths as the plan has them */
    size_t n_artifacts;
};

/* One target's search. */
struct search_result {
    bool present;
    char *target;               /* the --targets label; NULL for a single unlabelled target */
    char *stopped;              /* "converged", "HI passes", "LO fails", "probe limit",
                                   "round failed" or "interrupted"; while the sweep runs
                                   "running" or "not started" */
    struct search_probe best;   /* absent (null) when no probe passed */
    struct search_probe *probes;
    size_t n_probes;
};

struct search_doc {
    char *schema;               /* SEARCH_SCHEMA */
    char *search;               /* "concurrency" or "request_rate" */
    char *slo;                  /* the --slo text */
    double slo_attainment;      /* the target attainment A (ratio) */
    double range[2];            /* LO, HI (concurrency, or requests/s) */
    long repeats;               /* --search-repeats: extra rounds of an uncertain probe */
    double tolerance;           /* request rate: stop when (hi − lo)/lo ≤ it; NaN for concurrency */
    long max_probes;            /* probes one target's search may take */
    struct search_result one;   /* a single unlabelled target (present), written inline */
    struct search_result *targets;  /* with --targets: one per label */
    size_t n_targets;
};

/* The rows of the document, a target's result and a probe. */
struct field_table;
extern const struct field_table search_doc_table, search_result_table, search_probe_table;

/* The document as JSON: a new tree (caller deletes), NULL when memory runs out. */
cJSON *search_to_json(const struct search_doc *d);

/* Reads a search document into *out, every key checked (schema
 * SEARCH_SCHEMA). Returns 0, or -1 with "NAME: key.path: what" in err
 * (*out then empty). */
int search_from_json(const cJSON *j, const char *name, struct search_doc *out, char *err, size_t errlen);

/* Reads the file at path (search_from_json). Returns 0, or -1 with err. */
int search_read_file(const char *path, struct search_doc *out, char *err, size_t errlen);

/* Frees what *p owns and empties it. */
void search_probe_free(struct search_probe *p);

/* Frees what *d owns and empties it. */
void search_doc_free(struct search_doc *d);

#endif
