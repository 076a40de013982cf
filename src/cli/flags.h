/* flags.h — strict parsing of numeric flag values, with errors that name the flag. */
#ifndef ANVIL_CLI_FLAGS_H
#define ANVIL_CLI_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Parses an integer in [min, max] from the whole of s. On error prints
 * "anvil CMD: --FLAG: ..." to stderr and returns -1; else stores it and returns 0. */
int flag_long(const char *cmd, const char *flag, const char *s, long min, long max, long *out);

/* Parses a finite number ≥ min from the whole of s; errors as flag_long. */
int flag_double(const char *cmd, const char *flag, const char *s, double min, double *out);

/* Parses a duration (core/duration.h: "90" seconds, "90m", "2h", "1h30m")
 * of at least min seconds from the whole of s, in seconds; errors as
 * flag_long. */
int flag_duration(const char *cmd, const char *flag, const char *s, double min, double *out);

/* Parses a rate-like value > 0: a finite number or "inf" (INFINITY); errors
 * as flag_long. */
int flag_rate(const char *cmd, const char *flag, const char *s, double *out);

struct curl_slist;

/* Appends a `--header 'Name: value'` to *headers (curl's list, owned by the
 * caller). A value without a name is refused, printing "anvil CMD: --FLAG:
 * ..." to stderr without the value (it may be a secret). Returns 0, or -1
 * (bad value, memory; *headers unchanged). */
int flag_header(const char *cmd, const char *flag, const char *v, struct curl_slist **headers);

/* One command's flags as a table: each row names the flag, how its value
 * is read, where it is stored (an offset into the command's config
 * struct), its default and its help. Help text, parsing and defaults all
 * come from the table, so they cannot drift apart. */
enum flag_kind {
    FLAG_STRING,    /* const char * (the argv string itself, borrowed) */
    FLAG_LONG,      /* long in [min, max] */
    FLAG_DOUBLE,    /* finite double ≥ min */
    FLAG_DURATION,  /* double, seconds ≥ min (and ≤ max when above min): "90", "90m", "2h", "1h30m"
                       (core/duration.h) */
    FLAG_RATE,      /* double > 0 or "inf" */
    FLAG_ON,        /* bool set true; no value */
    FLAG_OFF,       /* bool set false; no value */
    FLAG_CHOICE,    /* int: index of the value in choices */
    FLAG_CUSTOM,    /* parse(cfg, value) does the work */
    FLAG_NOTE,      /* another tool's flag that changes nothing here: accepted, nothing stored,
                       one note saying why (help) through parse, else on stderr (flag_note); a
                       value when metavar is set, any number of them (none too) with many */
    FLAG_REFUSED,   /* another tool's flag anvil cannot honour: a usage error whose reason is help */
};

struct flag_spec {
    const char *name;           /* without "--"; NULL ends the table; "hf-*" is every name
                                   that starts with "hf-" */
    const char *alias;          /* a second name (vLLM's), or NULL */
    enum flag_kind kind;
    size_t offset;              /* of the field in the config struct */
    const char *metavar;        /* "N", "S", "URL" ...; NULL for FLAG_ON/FLAG_OFF */
    const char *def;            /* the default as it would be typed, applied by flags_defaults
                                   and shown by flags_help; NULL = none (the help says why) */
    const char *help;           /* with the unit of the value */
    const char *section;        /* a heading printed before this flag, or NULL */
    double min, max;            /* FLAG_LONG bounds; FLAG_DOUBLE: min, and max when above min */
    const char *const *choices; /* FLAG_CHOICE: NULL-terminated */
    /* FLAG_CUSTOM: stores v into cfg. Returns 0, or -1 after printing why. */
    int (*parse)(void *cfg, const char *cmd, const char *flag, const char *v);
    bool many;                  /* arguments after the value that are not flags are more values
                                   (vLLM's --goodput ttft:100 tpot:50) */
};

/* Applies every row's default to cfg. Returns 0, or -1 when a default does
 * not parse (a bug in the table; printed). */
int flags_defaults(const char *cmd, const struct flag_spec *t, void *cfg);

/* The flag of table t whose name or alias is nearest to name (no "--"),
 * by edit distance, when it is within a typo or two (at most a third of
 * the name's length, plus one); NULL when none is. Static, from t. */
const char *flags_suggest(const struct flag_spec *t, const char *name);

/* Parses argv[1..argc) against the table into cfg: "--name value",
 * "--name=value", "-h"/"--help". Arguments that are not flags are handed to
 * positional (NULL: an error); "--" ends the flags and the rest go to
 * positional too, when rest is NULL, or *rest = index of the first after it.
 * When given, seen[i] is set for each row i that appeared. Returns 0, 1 when
 * help was asked for, or -1 on a usage error (printed as "anvil CMD: ..."). */
int flags_parse(const char *cmd, const struct flag_spec *t, void *cfg, int argc, char **argv,
                int (*positional)(void *cfg, const char *arg), int *rest, bool *seen);

/* Prints "anvil CMD: note: --NAME does not apply to anvil: HELP" for
 * FLAG_NOTE row f, given as name (without "--"), to out. */
void flag_note(FILE *out, const char *cmd, const struct flag_spec *f, const char *name);

/* Prints the table as help: sections, "--name METAVAR  help (default D)". */
void flags_help(FILE *out, const struct flag_spec *t);

/* Rows in the table (before its {0} end). */
size_t flags_count(const struct flag_spec *t);

/* The row named name (without "--"), or NULL. */
const struct flag_spec *flags_find(const struct flag_spec *t, const char *name);

/* The longest time a duration flag takes, s (366 days): a soak of any
 * sensible length, and far below where its nanoseconds overflow int64
 * (292 years). */
#define FLAG_YEAR_S 31622400.0

#endif
