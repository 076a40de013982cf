/* provenance.h — where an artifact came from: anvil's version, the command
 * line as given (secrets redacted), and the host it ran on. Every artifact
 * kind (benchmark, matrix, load curve) carries it as `provenance`. */
#ifndef ANVIL_ARTIFACT_PROVENANCE_H
#define ANVIL_ARTIFACT_PROVENANCE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "artifact/json.h"

struct provenance {
    bool present;           /* false: the artifact has none (seed files, artifacts of older anvils) */
    char *anvil_version;    /* ANVIL_VERSION of the build, "unknown" when the build set none */
    char **command_line;    /* argv as given, argv[0] "anvil" then the command's name, secrets
                               redacted (redact_argv); NULL = null (not recorded) */
    size_t n_command_line;
    char *host, *kernel, *cpu_model;    /* host name, `uname -r`, /proc/cpuinfo model name; NULL = null */
    long cpu_cores;         /* online CPUs; ARTIFACT_NONE = null */
};


/* provenance's rows: the writer, reader and free below walk them. */
struct field_table;
extern const struct field_table provenance_table;

/* Fills *out for an artifact written now by the command whose arguments
 * are argv[0..argc) (argv[0] the command name, as main hands it on: "run",
 * "sweep", "aggregate"; argc 0 / argv NULL: command_line null). The command
 * line is copied with secrets redacted; with after_dashdash everything after
 * "--" is redacted too (anvil sweep's flags for its rounds). Host facts come
 * from host_facts_get. Returns 0, or -1 when memory runs out (*out is then
 * empty: provenance_free is still safe). */
int provenance_collect(struct provenance *out, int argc, char *const argv[], bool after_dashdash);

/* A deep copy of *src into *dst. Returns 0, or -1 when memory runs out
 * (*dst is then empty). */
int provenance_copy(struct provenance *dst, const struct provenance *src);

/* Adds `provenance` to o when p->present: {anvil_version, command_line,
 * host, kernel, cpu_model, cpu_cores}. */
void provenance_write(cJSON *o, const struct provenance *p);

/* Reads o's optional `provenance` into *out (present false when absent;
 * every key required when present; strings, the command line and cpu_cores
 * may be null). Returns 0, or -1 with the error recorded in r. */
int provenance_read(struct jread *r, const cJSON *o, struct provenance *out);

/* Frees what *p owns and empties it. */
void provenance_free(struct provenance *p);

#endif
