/* rtable.h — tables of results that print four ways: aligned text for the
 * terminal, Markdown (for pasting into a PR), CSV and JSON. `anvil show`
 * and `anvil compare` build their output as a list of these (a struct rdoc)
 * so every format carries the same cells. */
#ifndef ANVIL_REPORT_RTABLE_H
#define ANVIL_REPORT_RTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum rformat { RF_TABLE, RF_MARKDOWN, RF_CSV, RF_JSON };

/* The names of enum rformat in order ("table", "markdown", "csv", "json"),
 * NULL-terminated (a FLAG_CHOICE list). */
extern const char *const rformat_names[];

/* One cell: text as printed; when is_num, num is the value JSON gets
 * (NaN prints as "n/a" and is null in JSON). A label (rtable_label) is a
 * field's name: its text ends in the ':' the table and Markdown print,
 * which CSV and JSON leave out. */
struct rcell {
    char *text;
    double num;
    bool is_num;
    bool is_label;
};

/* A table of ncols columns; cells are appended row by row. */
struct rtable {
    char *title;
    size_t ncols;
    char **cols;
    struct rcell *cells;        /* nrows * ncols */
    size_t ncells, cap;
    bool oom;                   /* an allocation failed: rendering says so */
};

/* A document: tables, then notes (one sentence each: warnings, how noise was
 * judged). */
struct rdoc {
    struct rtable **tables;
    size_t n_tables;
    char **notes;
    size_t n_notes;
    bool oom;
};

/* A new table titled title with the ncols column names given after it
 * (copied). Returns the table, owned by doc (freed by rdoc_free), or NULL
 * when memory runs out (doc->oom is then set). */
struct rtable *rdoc_table(struct rdoc *doc, const char *title, size_t ncols, ...);

/* Appends a text cell (copied; NULL prints as "n/a" and is null in JSON). */
void rtable_text(struct rtable *t, const char *s);

/* Appends a field's name, name without a colon (copied): "Engine" prints
 * as "Engine:" in the table and Markdown formats, as "Engine" in CSV and
 * JSON (a key a script looks up, not prose). */
void rtable_label(struct rtable *t, const char *name);

/* Appends a number printed with prec decimals ("n/a" when NaN or ±inf). */
void rtable_num(struct rtable *t, double v, int prec);

/* Appends a whole number (ARTIFACT_NONE-style negatives < 0 print as
 * "n/a" when none_below_zero). */
void rtable_whole(struct rtable *t, long v, bool none_below_zero);

/* Appends a printf-formatted text cell. */
void rtable_textf(struct rtable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Adds a note (printf-formatted) printed after the tables. */
void rdoc_note(struct rdoc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints doc to out in format f. Table: a title line, column headers and
 * aligned columns (the first left-aligned, the rest right-aligned); markdown:
 * "### title" and a pipe table; CSV: per table a "# title" line, the header
 * row and the rows (RFC 4180 quoting), tables separated by a blank line;
 * JSON: {"tables": [{"title", "columns", "rows": [[cell...]...]}], "notes":
 * [...]} with numbers as numbers. A label keeps its ':' in the table and
 * Markdown only. Notes print as "note: ..." lines (CSV:
 * "# note: ..."). Returns 0, or -1 when the document ran out of memory
 * while built or printing fails. */
int rdoc_print(const struct rdoc *doc, enum rformat f, FILE *out);

/* Frees everything doc owns and empties it. */
void rdoc_free(struct rdoc *doc);

#endif
