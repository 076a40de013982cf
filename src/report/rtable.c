/* rtable.c — result tables in four formats. */
#include "report/rtable.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/escape.h"
#include "core/vec.h"

const char *const rformat_names[] = {"table", "markdown", "csv", "json", NULL};

/* s (taken) with its control characters escaped (core/escape.h): cells
 * quote artifacts, and an artifact quotes its server (a model's name, an
 * engine's version). Returns s itself when nothing needed escaping. */
static char *shown(char *s, bool *oom)
{
    if (!s)
        return NULL;
    size_t n = strlen(s), cap = 4 * n + 1;      /* at most \xNN per byte */
    char *e = malloc(cap);
    if (!e) {
        *oom = true;
        return s;
    }
    text_escape(e, cap, s, n);
    if (!strcmp(e, s)) {
        free(e);
        return s;
    }
    free(s);
    return e;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

struct rtable *rdoc_table(struct rdoc *doc, const char *title, size_t ncols, ...)
{
    struct rtable **v = realloc(doc->tables, (doc->n_tables + 1) * sizeof *v);
    struct rtable *t = calloc(1, sizeof *t);
    char **cols = calloc(ncols ? ncols : 1, sizeof *cols);
    if (v)
        doc->tables = v;
    if (!v || !t || !cols) {
        free(t);
        free(cols);
        doc->oom = true;
        return NULL;
    }
    t->title = dup_or_null(title, &t->oom);
    t->ncols = ncols;
    t->cols = cols;
    va_list ap;
    va_start(ap, ncols);
    for (size_t i = 0; i < ncols; i++)
        cols[i] = dup_or_null(va_arg(ap, const char *), &t->oom);
    va_end(ap);
    doc->tables[doc->n_tables++] = t;
    return t;
}

static void add_cell(struct rtable *t, char *text, double num, bool is_num, bool is_label)
{
    if (!t)
        return;
    if (!is_num)
        text = shown(text, &t->oom);
    if (VEC_RESERVE(t->cells, t->cap, t->ncells + 1, 32) != 0) {
        free(text);
        t->oom = true;
        return;
    }
    t->cells[t->ncells++] = (struct rcell){.text = text, .num = num, .is_num = is_num, .is_label = is_label};
}

void rtable_text(struct rtable *t, const char *s)
{
    if (!t)
        return;
    add_cell(t, dup_or_null(s, &t->oom), NAN, false, false);
}

void rtable_label(struct rtable *t, const char *name)
{
    if (!t)
        return;
    char *s = NULL;
    if (asprintf(&s, "%s:", name ? name : "") < 0) {
        s = NULL;
        t->oom = true;
    }
    add_cell(t, s, NAN, false, true);
}

void rtable_textf(struct rtable *t, const char *fmt, ...)
{
    if (!t)
        return;
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0) {
        s = NULL;
        t->oom = true;
    }
    va_end(ap);
    add_cell(t, s, NAN, false, false);
}

void rtable_num(struct rtable *t, double v, int prec)
{
    if (!t)
        return;
    char *s = NULL;
    if (isfinite(v) && asprintf(&s, "%.*f", prec, v) < 0) {
        s = NULL;
        t->oom = true;
    }
    add_cell(t, s, isfinite(v) ? v : NAN, true, false);
}

void rtable_whole(struct rtable *t, long v, bool none_below_zero)
{
    if (!t)
        return;
    char *s = NULL;
    bool none = none_below_zero && v < 0;
    if (!none && asprintf(&s, "%ld", v) < 0) {
        s = NULL;
        t->oom = true;
    }
    add_cell(t, s, none ? NAN : (double)v, true, false);
}

void rdoc_note(struct rdoc *doc, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    char **v = rc < 0 ? NULL : realloc(doc->notes, (doc->n_notes + 1) * sizeof *v);
    if (!v) {
        if (rc >= 0)
            free(s);
        doc->oom = true;
        return;
    }
    doc->notes = v;
    doc->notes[doc->n_notes++] = shown(s, &doc->oom);
}

static const char *cell_text(const struct rcell *c)
{
    return c->text ? c->text : "n/a";
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void pad(FILE *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(' ', out);
}

static void print_text(const struct rtable *t, FILE *out)
{
    size_t nrows = t->ncols ? t->ncells / t->ncols : 0;
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
    bool *num = calloc(t->ncols ? t->ncols : 1, sizeof *num);
    if (!w || !num) {
        free(w);
        free(num);
        return;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = width(t->cols[c] ? t->cols[c] : "");
        num[c] = true;
        for (size_t r = 0; r < nrows; r++) {
            num[c] &= t->cells[r * t->ncols + c].is_num;
            size_t cw = width(cell_text(&t->cells[r * t->ncols + c]));
            if (cw > w[c])
                w[c] = cw;
        }
    }
    size_t total = 0;
    for (size_t c = 0; c < t->ncols; c++)
        total += w[c] + (c ? 2 : 0);
    fprintf(out, "== %s ==\n", t->title ? t->title : "");
    for (size_t r = 0; r <= nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            /* a column of numbers is right-aligned, any other left-aligned */
            bool right = num[c] && c > 0;
            const char *s = r == 0 ? (t->cols[c] ? t->cols[c] : "")
                                   : cell_text(&t->cells[(r - 1) * t->ncols + c]);
            size_t sw = width(s);
            bool last = c + 1 == t->ncols;
            if (c)
                fputs("  ", out);
            if (right)
                pad(out, w[c] - sw);
            fputs(s, out);
            if (!right && !last)
                pad(out, w[c] - sw);
        }
        fputc('\n', out);
        if (r == 0) {
            for (size_t i = 0; i < total; i++)
                fputc('-', out);
            fputc('\n', out);
        }
    }
    free(w);
    free(num);
}

/* A Markdown cell: '|' escaped, newlines as spaces. */
static void md_cell(FILE *out, const char *s)
{
    fputc(' ', out);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else
            fputc(*s == '\n' ? ' ' : *s, out);
    }
    fputs(" |", out);
}

static void print_markdown(const struct rtable *t, FILE *out)
{
    size_t nrows = t->ncols ? t->ncells / t->ncols : 0;
    fprintf(out, "### %s\n\n|", t->title ? t->title : "");
    for (size_t c = 0; c < t->ncols; c++)
        md_cell(out, t->cols[c] ? t->cols[c] : "");
    fputs("\n|", out);
    for (size_t c = 0; c < t->ncols; c++)
        fputs(c ? " ---: |" : " --- |", out);
    fputc('\n', out);
    for (size_t r = 0; r < nrows; r++) {
        fputc('|', out);
        for (size_t c = 0; c < t->ncols; c++)
            md_cell(out, cell_text(&t->cells[r * t->ncols + c]));
        fputc('\n', out);
    }
}

/* The first len bytes of s, RFC 4180: quoted when they hold a comma,
 * quote or line break. */
static void csv_cell(FILE *out, const char *s, size_t len, bool first)
{
    if (!first)
        fputc(',', out);
    if (!memchr(s, ',', len) && !memchr(s, '"', len) && !memchr(s, '\r', len) && !memchr(s, '\n', len)) {
        fwrite(s, 1, len, out);
        return;
    }
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"')
            fputc('"', out);
        fputc(s[i], out);
    }
    fputc('"', out);
}

/* How much of a cell's text CSV and JSON carry: a label without the ':'
 * rtable_label added. */
static size_t data_len(const struct rcell *c)
{
    size_t n = strlen(c->text);
    return c->is_label && n ? n - 1 : n;
}

static void print_csv(const struct rtable *t, FILE *out)
{
    size_t nrows = t->ncols ? t->ncells / t->ncols : 0;
    fprintf(out, "# %s\n", t->title ? t->title : "");
    for (size_t c = 0; c < t->ncols; c++) {
        const char *s = t->cols[c] ? t->cols[c] : "";
        csv_cell(out, s, strlen(s), c == 0);
    }
    fputc('\n', out);
    for (size_t r = 0; r < nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const struct rcell *cell = &t->cells[r * t->ncols + c];
            csv_cell(out, cell->text ? cell->text : "", cell->text ? data_len(cell) : 0, c == 0);
        }
        fputc('\n', out);
    }
}

/* A text cell as a JSON string (a label without its ':'). */
static cJSON *label_json(const struct rcell *c)
{
    if (!c->is_label)
        return cJSON_CreateString(c->text);
    char *s = strndup(c->text, data_len(c));
    cJSON *v = s ? cJSON_CreateString(s) : NULL;
    free(s);
    return v;
}

static cJSON *table_json(const struct rtable *t)
{
    size_t nrows = t->ncols ? t->ncells / t->ncols : 0;
    cJSON *o = cJSON_CreateObject();
    cJSON *cols = cJSON_AddArrayToObject(o, "columns");
    cJSON *rows = NULL;
    if (!cJSON_AddStringToObject(o, "title", t->title ? t->title : "") || !cols
        || !(rows = cJSON_AddArrayToObject(o, "rows"))) {
        cJSON_Delete(o);
        return NULL;
    }
    for (size_t c = 0; c < t->ncols; c++)
        cJSON_AddItemToArray(cols, cJSON_CreateString(t->cols[c] ? t->cols[c] : ""));
    for (size_t r = 0; r < nrows; r++) {
        cJSON *row = cJSON_CreateArray();
        for (size_t c = 0; c < t->ncols; c++) {
            const struct rcell *cell = &t->cells[r * t->ncols + c];
            cJSON *v = cell->is_num ? (isnan(cell->num) ? cJSON_CreateNull() : cJSON_CreateNumber(cell->num))
                                    : cell->text ? label_json(cell) : cJSON_CreateNull();
            cJSON_AddItemToArray(row, v);
        }
        cJSON_AddItemToArray(rows, row);
    }
    return o;
}

static int print_json(const struct rdoc *doc, FILE *out)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *tables = cJSON_AddArrayToObject(o, "tables");
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    if (!tables || !notes) {
        cJSON_Delete(o);
        return -1;
    }
    for (size_t i = 0; i < doc->n_tables; i++)
        cJSON_AddItemToArray(tables, table_json(doc->tables[i]));
    for (size_t i = 0; i < doc->n_notes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(doc->notes[i]));
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (!s)
        return -1;
    fprintf(out, "%s\n", s);
    free(s);
    return 0;
}

int rdoc_print(const struct rdoc *doc, enum rformat f, FILE *out)
{
    bool oom = doc->oom;
    for (size_t i = 0; i < doc->n_tables; i++)
        oom |= doc->tables[i]->oom;
    if (oom)
        return -1;
    if (f == RF_JSON)
        return print_json(doc, out);
    for (size_t i = 0; i < doc->n_tables; i++) {
        if (i)
            fputc('\n', out);
        if (f == RF_TABLE)
            print_text(doc->tables[i], out);
        else if (f == RF_MARKDOWN)
            print_markdown(doc->tables[i], out);
        else
            print_csv(doc->tables[i], out);
    }
    if (doc->n_notes && f != RF_TABLE)
        fputc('\n', out);
    for (size_t i = 0; i < doc->n_notes; i++)
        fprintf(out, f == RF_CSV ? "# note: %s\n" : f == RF_MARKDOWN ? "- note: %s\n" : "note: %s\n",
                doc->notes[i]);
    return ferror(out) ? -1 : 0;
}

static void table_free(struct rtable *t)
{
    free(t->title);
    for (size_t c = 0; c < t->ncols; c++)
        free(t->cols[c]);
    free(t->cols);
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i].text);
    free(t->cells);
    free(t);
}

void rdoc_free(struct rdoc *doc)
{
    for (size_t i = 0; i < doc->n_tables; i++)
        table_free(doc->tables[i]);
    free(doc->tables);
    for (size_t i = 0; i < doc->n_notes; i++)
        free(doc->notes[i]);
    free(doc->notes);
    *doc = (struct rdoc){0};
}
