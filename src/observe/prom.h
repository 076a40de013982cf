/* prom.h — the Prometheus text exposition format (0.0.4) and OpenMetrics
 * text (1.0), parsed into one snapshot: every sample with its family's type
 * and its labels. Bytes from a server are untrusted: the parser never reads
 * past len, accepts any byte sequence without crashing (fuzz/fuzz_prom.c),
 * and either returns a complete snapshot or an error naming the line.
 *
 * What is accepted (after Prometheus' expfmt text parser and the OpenMetrics
 * 1.0 ABNF):
 *   # HELP name docstring        (escapes \\ and \n)
 *   # TYPE name counter|gauge|histogram|summary|untyped|unknown|info|
 *               stateset|gaugehistogram
 *   # UNIT name unit, other "#" comments, blank lines: skipped
 *   # EOF                        OpenMetrics end; nothing may follow
 *   name{label="value",...} value [timestamp] [# exemplar]
 * Names [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*, label
 * values with the escapes \\ \" \n (any other escape is an error), a
 * trailing comma in the label set, values and timestamps as floats
 * ("NaN", "+Inf", "-Inf", "1.5e+06"), spaces or tabs between tokens, LF or
 * CRLF line ends. A NUL byte, a duplicate label name, an unknown TYPE or
 * text after the value is an error.
 *
 * A sample belongs to the family whose # TYPE (or # HELP) named it, or whose
 * name it extends by a suffix its type allows: _bucket, _count, _sum
 * (histogram, gaugehistogram's _gcount/_gsum), _count and _sum (summary),
 * _total and _created (counter, as OpenMetrics writes them), _created
 * (histogram, summary), _info (info). Anything else is a family of its own,
 * PROM_UNTYPED. So vLLM's "vllm:generation_tokens_total" (TYPE counter, the
 * 0.0.4 way) and "vllm:generation_tokens_created" (its own gauge family) stay
 * apart: callers match names exactly, never by prefix. */
#ifndef ANVIL_OBSERVE_PROM_H
#define ANVIL_OBSERVE_PROM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

enum prom_type {
    PROM_UNTYPED, PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM, PROM_SUMMARY, PROM_INFO,
    PROM_STATESET, PROM_GAUGEHISTOGRAM,
};

struct prom_label {
    const char *name;
    const char *value;          /* unescaped */
};

struct prom_sample {
    const char *name;           /* as written, e.g. "vllm:iteration_tokens_total_bucket" */
    const char *family;         /* the family it belongs to, e.g. "vllm:iteration_tokens_total" */
    enum prom_type type;        /* the family's type */
    const struct prom_label *labels;    /* in the order written */
    size_t n_labels;
    double value;               /* NaN and ±Inf as written */
    bool has_timestamp;
    double timestamp;           /* as written: ms in 0.0.4, s in OpenMetrics */
};

struct prom_family {
    const char *name;
    enum prom_type type;        /* PROM_UNTYPED without a # TYPE line */
    const char *help;           /* unescaped # HELP text, or NULL */
};

/* One parsed exposition. Every string points into storage the snapshot
 * owns; prom_snapshot_free releases it all. */
struct prom_snapshot {
    struct prom_sample *samples;
    size_t n_samples;
    struct prom_family *families;   /* in the order first named */
    size_t n_families;
    bool eof;                   /* an OpenMetrics "# EOF" ended the text */
    /* private */
    char *arena;
    struct prom_label *label_store;
};

/* Parses len bytes of text into *out (any previous content is not freed:
 * pass a zeroed or freed snapshot). Cost O(len). Returns 0, or -1 with
 * "line N: what" in err (out is then empty and owns nothing) on malformed
 * text or when memory runs out. */
int prom_parse(const char *text, size_t len, struct prom_snapshot *out, char *err, size_t errlen);

/* Frees what s owns and zeroes it. NULL-safe. */
void prom_snapshot_free(struct prom_snapshot *s);

/* The value of label name on s, or NULL when s has none. Cost O(labels). */
const char *prom_label(const struct prom_sample *s, const char *name);

/* The type's name as # TYPE writes it ("counter", ..., "untyped"). Static. */
const char *prom_type_name(enum prom_type t);

/* Appends s's series identity to out: name{l1="v1",l2="v2"} with the labels
 * in their written order and values escaped as the format requires (just
 * the name when s has no labels), so parsing "<key> <value>" gives back the
 * same sample. Returns 0, or -1 when out is full. */
int prom_series_key(const struct prom_sample *s, struct buf *out);

#endif
