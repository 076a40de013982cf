/* test_artifact_tables.c — a round trip generated from every field table of
 * the observe blocks, provenance and the matrix: each row filled with a
 * value of its own, written, read back and compared, so a row the writer or
 * the reader skips fails; and seeds 003 (a matrix) and 002 (a load curve)
 * read and written again are the seeds, key for key, in order, bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/fields.h"
#include "artifact/journal.h"
#include "artifact/load_curve.h"
#include "artifact/matrix.h"
#include "artifact/observe.h"
#include "artifact/provenance.h"
#include "artifact/search.h"
#include "fields_sample.h"
#include "testutil.h"

static const struct field_table *const tables[] = {
    &observe_server_metrics_table, &observe_gauge_table, &observe_hist_table, &observe_hardware_table,
    &observe_run_summary_table, &observe_series_table, &observe_energy_metrics_table, &provenance_table,
    &matrix_table, &matrix_row_table, &matrix_aggregate_table,
    &load_curve_table, &load_curve_target_table, &load_curve_point_table,
    &journal_header_table, &journal_line_table,
    &search_doc_table, &search_result_table, &search_probe_table,
};


/* text parsed and read as a load curve (the reader's own two steps). */
static int read_curve(const char *text, size_t len, const char *name, struct load_curve *out, char *err,
                      size_t errlen)
{
    *out = (struct load_curve){0};
    cJSON *j = artifact_parse(text, len, name, err, errlen);
    int rc = j ? load_curve_from_json(j, name, out, err, errlen) : -1;
    cJSON_Delete(j);
    return rc;
}

Test(artifact_tables, every_table_survives_a_round_trip)
{
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char why[256] = "";
        cr_assert(fields_sample_round_trip(tables[i], why, sizeof why), "%s: %s", tables[i]->name, why);
    }
}

struct unit_ctx {
    int missing;
    char first[128];
};

/* A key that names a unit by its suffix must carry it in its row. */
static void check_unit(const struct field *f, const char *path, void *ctx)
{
    static const char *const suffixes[] = {"_ms", "_s", "_pct", "_mb", "_w", "_c", "_mhz", "_j", "_ns", "_tokens"};
    struct unit_ctx *u = ctx;
    size_t n = strlen(f->key);
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && !strcmp(f->key + n - k, suffixes[i]) && !f->unit && f->kind != FIELD_OBJECT
            && f->kind != FIELD_BOOL && f->kind != FIELD_STRING && !u->missing++)
            snprintf(u->first, sizeof u->first, "%s", path);
    }
}

Test(artifact_tables, every_key_with_a_unit_suffix_has_its_unit)
{
    struct unit_ctx u = {0};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        fields_walk(tables[i], tables[i]->name, check_unit, &u);
    cr_assert_eq(u.missing, 0, "%d rows lack a unit, first %s", u.missing, u.first);
}

/* Numbers are compared as the doubles they print to. */
static void assert_same_json(const cJSON *a, const cJSON *b, const char *path)
{
    cr_assert_eq(a->type & 0xff, b->type & 0xff, "%s: type differs", path);
    if (cJSON_IsNumber(a))
        cr_assert(a->valuedouble == b->valuedouble, "%s: %.17g vs %.17g", path, a->valuedouble, b->valuedouble);
    if (cJSON_IsString(a))
        cr_assert_str_eq(a->valuestring, b->valuestring, "%s", path);
    if (!cJSON_IsObject(a) && !cJSON_IsArray(a))
        return;
    cr_assert_eq(cJSON_GetArraySize(a), cJSON_GetArraySize(b), "%s: member count differs", path);
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%s", path, x->string ? x->string : "[]");
        if (x->string)
            cr_assert_str_eq(x->string, y->string, "%s: key order differs", sub);
        assert_same_json(x, y, sub);
    }
}

Test(artifact_tables, seed003_matrix_written_again_is_the_seed)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-003.json", &len);
    char err[256] = "";
    struct matrix m;
    cr_assert_eq(matrix_read(text, len, "seed-003", &m, err, sizeof err), 0, "%s", err);
    cJSON *seed = cJSON_Parse(text), *again = matrix_to_json(&m);
    cJSON_DeleteItemFromObject(again, "status_reasons");   /* the seed has none; anvil writes [] */
    cr_assert_eq(m.n_rows, 66);
    assert_same_json(again, seed, "seed-003");
    cJSON_Delete(again);
    cJSON_Delete(seed);
    matrix_free(&m);
    free(text);
}

Test(artifact_tables, seed002_load_curve_written_again_is_the_seed)
{
    size_t len;
    char *text = tu_read_file("tests/data/seed-002.json", &len);
    char err[256] = "";
    struct load_curve c;
    cr_assert_eq(read_curve(text, len, "seed-002", &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.n_load, 3);
    cJSON *seed = cJSON_Parse(text), *again = load_curve_to_json(&c);
    assert_same_json(again, seed, "seed-002");
    cJSON_Delete(again);
    cJSON_Delete(seed);
    load_curve_free(&c);
    free(text);
}
