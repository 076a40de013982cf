/* journal.h — the per-request journal of a run, schema
 * anvil-serving.journal/v1 (docs/ARTIFACTS.md, "The journal"): JSON Lines,
 * a header line with the run's settings, then one line per request as it
 * ends with its raw timestamps, so that `anvil recover` can rebuild the
 * artifact after the run was killed. This module only turns records into
 * lines and lines back into records; the run appends and the recovery reads. */
#ifndef ANVIL_ARTIFACT_JOURNAL_H
#define ANVIL_ARTIFACT_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "stats/record.h"
#include "stats/summary.h"

#define JOURNAL_SCHEMA "anvil-serving.journal/v1"

/* How the summary was to be computed: the options of summary_compute that
 * are settings, not measurements. */
struct journal_opts {
    enum pct_method method;
    bool ignore_eos, lateness_is_client, check_prompt_tokens;
    struct slo slo;
};

/* The rows of the header line and of a request line (journal.c). */
struct field_table;
extern const struct field_table journal_header_table, journal_line_table;

/* The header line: {"journal": JOURNAL_SCHEMA, "run_id", "artifact" (the
 * path the run writes its artifact to), "t0_ns" (a CLOCK_MONOTONIC base, as
 * a decimal string: every time of the request lines is ns after it),
 * "summary_opts", "settings" (the artifact as it would read with no request
 * measured yet: settings is borrowed and copied)}. Returns a new tree
 * (caller deletes) or NULL when memory runs out. */
cJSON *journal_header(const char *run_id, const char *artifact, int64_t t0_ns,
                      const struct journal_opts *o, const cJSON *settings);

/* One request line: the record's every field, times as ns after t0_ns
 * (null when the event did not happen), chunks as [t, tokens, content]
 * triples. Returns a new tree (caller deletes) or NULL when out of memory. */
cJSON *journal_record(const struct req_record *r, int64_t t0_ns);

/* Reads a header line (parsed) into its parts: *t0_ns, *o, and the borrowed
 * *settings, *run_id and *artifact (pointing into h). Returns 0, or -1 with
 * "NAME: key: what" in err. */
int journal_header_read(const cJSON *h, const char *name, int64_t *t0_ns, struct journal_opts *o,
                        const cJSON **settings, const char **run_id, const char **artifact,
                        char *err, size_t errlen);

/* Reads a request line (parsed) into *r (record_init'ed first; chunks
 * owned by *r, released with record_free). Returns 0, or -1 with
 * "NAME: key: what" in err (*r then holds nothing to free). */
int journal_record_read(const cJSON *j, const char *name, int64_t t0_ns, struct req_record *r,
                        char *err, size_t errlen);

#endif
