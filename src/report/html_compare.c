/* html_compare.c — the page's comparison (see html_parts.h): `anvil
 * compare`'s tables and verdicts (report/compare.h), the first input
 * against each other one. */
#include "report/html_parts.h"

#include <stdbool.h>
#include <string.h>

#include "report/compare.h"

/* Pairs at most: beyond, the page says how many were left out. */
#define MAX_COMPARED 16

/* Whether a[i] is an input of its own to compare: a run, or a matrix (a
 * sweep's). A sweep's rounds are left to their matrix when the page holds
 * one (or a load curve), as the runs section leaves them to curve.js, and
 * a decode matrix's runs to it (html_decode_part). */
static bool comparable(const struct artifact_any *a, size_t n, size_t i, bool summaries)
{
    if (a[i].kind == AK_MATRIX)
        return true;
    return a[i].kind == AK_BENCHMARK && !html_decode_part(a, n, i) &&
           !(summaries && a[i].u.bench.sweep.present && a[i].u.bench.sweep.case_id);
}

/* The doc's tables and notes as JSON: tables [{title, columns, rows}] with
 * cells as printed, summary lines ("summary ..." notes) apart from the
 * other notes. */
static void doc_json(cJSON *pair, const struct rdoc *doc)
{
    cJSON *tables = cJSON_AddArrayToObject(pair, "tables");
    for (size_t i = 0; i < doc->n_tables; i++) {
        const struct rtable *t = doc->tables[i];
        cJSON *tj = cJSON_CreateObject(), *rows = cJSON_CreateArray();
        cJSON_AddStringToObject(tj, "title", t->title);
        cJSON_AddItemToObject(tj, "columns", html_strings((const char *const *)t->cols, t->ncols));
        for (size_t r = 0; t->ncols && r < t->ncells / t->ncols; r++) {
            cJSON *row = cJSON_CreateArray();
            for (size_t c = 0; c < t->ncols; c++) {
                const char *s = t->cells[r * t->ncols + c].text;
                cJSON_AddItemToArray(row, cJSON_CreateString(s ? s : "n/a"));
            }
            cJSON_AddItemToArray(rows, row);
        }
        cJSON_AddItemToObject(tj, "rows", rows);
        cJSON_AddItemToArray(tables, tj);
    }
    cJSON *summary = cJSON_AddArrayToObject(pair, "summary"), *notes = cJSON_AddArrayToObject(pair, "notes");
    for (size_t i = 0; i < doc->n_notes; i++) {
        const char *n = doc->notes[i];
        if (!strncmp(n, "summary ", 8))
            cJSON_AddItemToArray(summary, cJSON_CreateString(n + 8));
        else
            cJSON_AddItemToArray(notes, cJSON_CreateString(n));
    }
}

/* One pair: A the baseline's side, b's path the other. */
static cJSON *pair_json(const struct cmp_side *a, const char *b_path, const struct cmp_opts *o)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "a", a->label);
    cJSON_AddStringToObject(p, "b", b_path);
    char err[1024];
    struct cmp_side b;
    if (cmp_side_read(b_path, &b, err, sizeof err) != 0) {
        cJSON_AddStringToObject(p, "refused", err);
        return p;
    }
    struct rdoc doc = {0};
    struct cmp_tally tally;
    int rc = cmp_compare(a, &b, o, &doc, &tally, err, sizeof err);
    if (rc == 0 && doc.oom) {
        snprintf(err, sizeof err, "out of memory");
        rc = -1;
    }
    if (rc != 0)
        cJSON_AddStringToObject(p, "refused", err);
    else {
        doc_json(p, &doc);
        cJSON *t = cJSON_AddObjectToObject(p, "tally");
        cJSON_AddNumberToObject(t, "better", (double)tally.better);
        cJSON_AddNumberToObject(t, "worse", (double)tally.worse);
        cJSON_AddNumberToObject(t, "same", (double)tally.same);
        cJSON_AddNumberToObject(t, "na", (double)tally.na);
    }
    rdoc_free(&doc);
    cmp_side_free(&b);
    return p;
}

cJSON *html_compare(const struct artifact_any *a, size_t n, const struct cost *cost)
{
    bool summaries = false;
    for (size_t i = 0; i < n; i++)
        summaries |= a[i].kind == AK_MATRIX || a[i].kind == AK_LOAD_CURVE;
    size_t base = n, count = 0;
    for (size_t i = 0; i < n; i++)
        if (comparable(a, n, i, summaries)) {
            base = base == n ? i : base;
            count++;
        }
    if (count < 2)
        return NULL;
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "baseline", a[base].path);
    cJSON_AddNumberToObject(c, "min_effect_pct", HTML_COMPARE_MIN_EFFECT * 100);
    cJSON *pairs = cJSON_AddArrayToObject(c, "pairs");
    char err[1024];
    struct cmp_side side;
    if (cmp_side_read(a[base].path, &side, err, sizeof err) != 0) {
        cJSON_AddStringToObject(c, "refused", err);
        return c;
    }
    const struct cmp_opts o = {.cost = cost, .min_effect = HTML_COMPARE_MIN_EFFECT};
    size_t done = 0, left = 0;
    for (size_t i = base + 1; i < n; i++) {
        if (!comparable(a, n, i, summaries))
            continue;
        if (done == MAX_COMPARED) {
            left++;
            continue;
        }
        cJSON_AddItemToArray(pairs, pair_json(&side, a[i].path, &o));
        done++;
    }
    cJSON_AddNumberToObject(c, "left_out", (double)left);
    cmp_side_free(&side);
    return c;
}
