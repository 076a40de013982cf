/* registry.h — the metric registry: one row per metric anvil reports (name,
 * unit, definition in docs/METHODOLOGY.md's or docs/DECODE.md's words, where
 * that definition lives, the modes it applies to, which way is better, and
 * its place in the headline). The artifact writers' keys, `show`, `compare`,
 * the report's cards, CSV headers, `anvil graph`'s metric_semantics and
 * `anvil metrics` all read it, so a metric is defined once. */
#ifndef ANVIL_STATS_REGISTRY_H
#define ANVIL_STATS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

/* The measurement modes a metric applies to (a bit set). */
enum metric_mode {
    METRIC_REQUESTS = 1u << 0,  /* a run of --num-prompts requests (closed or open loop) */
    METRIC_DURATION = 1u << 1,  /* a duration window: `anvil run --duration`, a decode cell */
    METRIC_BURST = 1u << 2,     /* a decode burst: C × 5 requests, each to its end */
};
#define METRIC_ALL_MODES (METRIC_REQUESTS | METRIC_DURATION | METRIC_BURST)

/* Which way a change of the metric is an improvement. */
enum metric_better { METRIC_HIGHER, METRIC_LOWER, METRIC_NEITHER };

#define METRIC_MAX_ALIASES 4

struct metric_def {
    const char *name;           /* the artifact key without statistic and unit suffix */
    const char *aliases[METRIC_MAX_ALIASES]; /* other spellings of the same figure (seed names),
                                               NULL-terminated */
    const char *unit;           /* unit of the figure ("ms", "tokens/s", ...); a key with a unit
                                   suffix (_ms, _s) is in that unit */
    const char *label;          /* short label for tables, cards and CSV headers */
    const char *definition;     /* the definition, word for word as in source */
    const char *source;         /* the document holding definition ("docs/METHODOLOGY.md", ...) */
    const char *formula_source; /* whose formula it is ("seed 001", "seed 004's methodology",
                                   "vLLM bench serve", "anvil") */
    const char *semantic_key;   /* seed 000's metric_semantics key, or NULL */
    unsigned modes;             /* enum metric_mode bits */
    enum metric_better better;
    unsigned headline;          /* modes in which this is the headline figure (0: none) */
    const char *column;         /* its column heading in result tables and CSV, "{stat}" where the
                                   statistic goes ("TTFT {stat} ms"); NULL: label and unit */
};

/* The column heading of metric name (a row's name or alias) at statistic
 * stat ("p50"; NULL or "" for a figure without one) into out (cap bytes):
 * the row's column with "{stat}" replaced, else "label stat (unit)".
 * Returns out; "" when no row has the name. */
const char *metric_column(const char *name, const char *stat, char *out, size_t cap);

/* The number of rows. */
size_t metric_count(void);

/* Row i (0 ≤ i < metric_count()), in the registry's order. */
const struct metric_def *metric_at(size_t i);

/* The row whose name or one of whose aliases is name (exact), or NULL. */
const struct metric_def *metric_find(const char *name);

/* The row an artifact key reports: the key itself, else the key with its
 * statistic and unit affixes stripped one at a time (units `_ms`, `_s`,
 * `_seconds`; statistics `_mean`, `_min`, `_max`, `_avg`, `_median`, `_std`,
 * `_samples`, `_quantiles`, `_pNN` after the name, `mean_`, `median_`,
 * `avg_`, `max_`, `pNN_` before it), looked up after each strip: so
 * "ttft_p99_ms", "p99_ttft_ms" and "ttft_quantiles_ms" are "ttft", and
 * "decode_tok_s_p50" is "decode_tok_s". A leading "metrics." (graph data's
 * metric paths) is skipped. NULL when no stage names a row. */
const struct metric_def *metric_of_key(const char *key);

/* The headline figure of mode (one enum metric_mode bit): the row whose
 * headline includes it. Never NULL for the three modes. */
const struct metric_def *metric_headline(enum metric_mode mode);

/* "higher", "lower" or "neither". */
const char *metric_better_name(enum metric_better b);

/* The mode's name: "requests", "duration" or "burst" (NULL for anything else). */
const char *metric_mode_name(enum metric_mode mode);

#endif
