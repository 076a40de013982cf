/* search.c — the SLO search artifact's rows, writer and checked reader. */
#include "artifact/search.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/fields.h"
#include "core/file.h"

#define P struct search_probe
static const struct field probe_rows[] = {
    F_WHOLE_MIN(P, concurrency, JR_OPTIONAL, FW_OMIT_NONE, NULL, 1),
    F_NUM_W(P, request_rate, JR_OPTIONAL, FW_OMIT_NONE, "req/s"),
    F_STR(P, case_id, JR_NONEMPTY),
    F_WHOLE_MIN(P, rounds, 0, 0, NULL, 1),
    F_WHOLE_MIN(P, requests, 0, 0, NULL, 0),
    F_WHOLE_MIN(P, good, 0, 0, NULL, 0),
    F_NUM(P, attainment, 0, "ratio"),
    F_CUSTOM_U(P, interval, 0, "ratio", &field_pair_codec),
    F_STR(P, verdict, JR_NONEMPTY),
    F_STR(P, decided_by, JR_NONEMPTY),
    F_NUM(P, goodput_rps, 0, "req/s"),
    F_NUM(P, ttft_p50_ms, 0, "ms"),
    F_NUM(P, ttft_p99_ms, 0, "ms"),
    F_NUM(P, tpot_p50_ms, 0, "ms"),
    F_NUM(P, tpot_p99_ms, 0, "ms"),
    F_STRS(P, artifacts, n_artifacts, 0),
};
#undef P
const struct field_table search_probe_table = FIELD_TABLE("search_probe", struct search_probe, probe_rows, present);

#define R struct search_result
static const struct field result_rows[] = {
    F_STR(R, stopped, JR_NONEMPTY),     /* first: an inline result is there when this key is */
    F_STR_W(R, target, JR_OPTIONAL | JR_NONEMPTY, FW_OMIT_NONE),
    F_OBJ_W(R, best, JR_NULLABLE, FW_NULL, &search_probe_table),
    F_ARR_W(R, probes, n_probes, 0, 0, &search_probe_table),
};
#undef R
const struct field_table search_result_table = FIELD_TABLE("search_result", struct search_result, result_rows, present);

#define D struct search_doc
static const struct field doc_rows[] = {
    F_STR(D, schema, JR_NONEMPTY),
    F_STR(D, search, JR_NONEMPTY),
    F_STR(D, slo, JR_NONEMPTY),
    F_NUM(D, slo_attainment, 0, "ratio"),
    F_CUSTOM(D, range, 0, &field_pair_codec),
    F_WHOLE_MIN(D, repeats, 0, 0, NULL, 0),
    F_NUM_W(D, tolerance, JR_OPTIONAL, FW_OMIT_NONE, "ratio"),
    F_WHOLE_MIN(D, max_probes, 0, 0, NULL, 1),
    F_OBJ_W(D, one, JR_OPTIONAL, FW_INLINE, &search_result_table),
    F_ARR_W(D, targets, n_targets, JR_OPTIONAL, FW_OMIT_NONE, &search_result_table),
};
#undef D
const struct field_table search_doc_table = FIELD_TABLE_ALWAYS("search", struct search_doc, doc_rows);

cJSON *search_to_json(const struct search_doc *d)
{
    return fields_to_json(&search_doc_table, d);
}

/* What the rows cannot say: the schema, the kind, verdicts, and exactly
 * one way of giving the results. */
static void check_doc(struct jread *r, const struct search_doc *d)
{
    if (strcmp(d->schema, SEARCH_SCHEMA) != 0)
        jread_fail(r, "schema", "expected \"%s\", got \"%s\"", SEARCH_SCHEMA, d->schema);
    else if (strcmp(d->search, "concurrency") != 0 && strcmp(d->search, "request_rate") != 0)
        jread_fail(r, "search", "expected \"concurrency\" or \"request_rate\", got \"%s\"", d->search);
    else if (d->one.present == (d->n_targets > 0))
        jread_fail(r, "targets", "expected either stopped/best/probes or targets");
    for (size_t t = 0; !r->failed && t <= d->n_targets; t++) {
        const struct search_result *res = t < d->n_targets ? &d->targets[t] : &d->one;
        for (size_t i = 0; !r->failed && i < res->n_probes; i++)
            if (strcmp(res->probes[i].verdict, "pass") != 0 && strcmp(res->probes[i].verdict, "fail") != 0)
                jread_fail(r, "probes", "verdict: expected \"pass\" or \"fail\", got \"%s\"",
                           res->probes[i].verdict);
    }
}

int search_from_json(const cJSON *j, const char *name, struct search_doc *out, char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    if (fields_read(&r, j, &search_doc_table, out) == 0)
        check_doc(&r, out);
    if (r.failed) {
        search_doc_free(out);
        return -1;
    }
    return 0;
}

int search_read_file(const char *path, struct search_doc *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    cJSON *j = artifact_parse(text, len, path, err, errlen);
    free(text);
    int rc = j ? search_from_json(j, path, out, err, errlen) : -1;
    cJSON_Delete(j);
    return rc;
}

void search_probe_free(struct search_probe *p)
{
    fields_free(&search_probe_table, p);
}

void search_doc_free(struct search_doc *d)
{
    fields_free(&search_doc_table, d);
}
