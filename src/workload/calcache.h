/* calcache.h — prompt calibrations kept in a JSON file across runs
 * (`anvil run --calibration-cache FILE`; `anvil sweep` gives every round
 * DIR/calibration.json), so the rounds and cases of a sweep that share
 * server, model, endpoint, engine, prompt length and prompt scheme calibrate
 * once. docs/ARTIFACTS.md describes the file. */
#ifndef ANVIL_WORKLOAD_CALCACHE_H
#define ANVIL_WORKLOAD_CALCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "workload/calibrate.h"

#define CALCACHE_SCHEMA "anvil-serving.calibration-cache/v1"

/* What a calibration depends on. Strings are borrowed. */
struct calcache_key {
    const char *server;             /* the server's root URL, without credentials */
    const char *model, *endpoint;   /* endpoint: "chat" or "completions" */
    const char *engine, *engine_version;
    long input_len;                 /* target tokens */
    uint64_t seed;                  /* the filler's seed */
    long shared_prefix_len;         /* tokens; the shared words replace filler words */
};

/* One cached calibration. */
struct calcache_entry {
    struct calibration cal;         /* steps as measured by the run that stored it */
    char method[16];                /* how it was counted: "tokenize" or "probe" */
    long shared_prefix_tokens;      /* tokens two prompts share at their start; -1 = not measured */
    char shared_prefix_method[200]; /* how that was measured, or why it was not */
    char run_id[64];                /* the run that measured it ("" when unknown) */
};

/* Writes the key as one line of text into out (cap bytes, truncated if
 * short): "SERVER model=M endpoint=E engine=NAME VERSION input_len=N
 * prompt=PROMPT_SCHEME seed=N shared_prefix_len=N". Entries are found by
 * this exact text. */
void calcache_key_text(const struct calcache_key *k, char *out, size_t cap);

/* Looks key (calcache_key_text) up in the cache file at path. Returns 1 and
 * fills *e when the entry is there, 0 when the file or the entry is not,
 * -1 when the file exists but is unreadable, not JSON, not a calibration
 * cache, or its entry is malformed (err names the file and what is wrong). */
int calcache_lookup(const char *path, const char *key, struct calcache_entry *e, char *err,
                    size_t errlen);

/* Adds (or replaces) key's entry in the cache file at path, keeping the
 * others, creating the file and its directories when missing. The new file
 * is written beside it and renamed over it, so a reader never sees half a
 * file (writers are sequential: a sweep's rounds run one after another; of
 * two concurrent writers the later rename wins). Returns 0, or -1 with err. */
int calcache_store(const char *path, const char *key, const struct calcache_entry *e, char *err,
                   size_t errlen);

#endif
