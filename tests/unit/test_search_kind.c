/* test_search_kind.c — search.json (anvil-serving.search/v1) is a kind
 * anvil reads: told by its schema, read through the search reader, shown
 * with the file's own numbers; refused by name where it cannot be used. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/any.h"
#include "report/compare.h"
#include "report/rtable.h"
#include "report/show.h"
#include "testutil.h"

#define FIXTURE "tests/data/search-concurrency.json"

static cJSON *fixture(void)
{
    size_t len;
    char *text = tu_read_file(FIXTURE, &len);
    cJSON *j = cJSON_ParseWithLength(text, len);
    free(text);
    cr_assert(j);
    return j;
}

Test(report_search, the_kind_is_told_by_the_schema)
{
    cJSON *j = fixture();
    cr_assert_eq(artifact_kind_of(j), AK_SEARCH);
    cr_assert_str_eq(artifact_kind_name(AK_SEARCH), "search");
    /* the schema decides, not the keys: another version is not this kind */
    cJSON_ReplaceItemInObject(j, "schema", cJSON_CreateString("anvil-serving.search/v2"));
    cr_assert_eq(artifact_kind_of(j), AK_UNKNOWN);
    cJSON_Delete(j);
}

Test(report_search, reads_and_shows_with_the_files_numbers)
{
    struct artifact_any a;
    char err[512];
    cr_assert_eq(artifact_any_read(FIXTURE, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.kind, AK_SEARCH);
    cJSON *j = fixture();
    const cJSON *best = cJSON_GetObjectItem(j, "best"), *probes = cJSON_GetObjectItem(j, "probes");
    cr_assert(a.u.search.one.present);
    cr_assert_eq(a.u.search.one.best.concurrency, (long)cJSON_GetObjectItem(best, "concurrency")->valuedouble);
    cr_assert_eq(a.u.search.one.n_probes, (size_t)cJSON_GetArraySize(probes));
    struct rdoc d = {0};
    show_artifact(&d, &a, NULL);
    cr_assert_eq(d.n_tables, 3);
    const struct rtable *ans = d.tables[1], *pt = d.tables[2];
    cr_assert(strstr(ans->title, "the largest load with SLO attainment >= 0.99"), "%s", ans->title);
    cr_assert_str_eq(ans->cells[0].text, "concurrency:");
    cr_assert_eq(ans->cells[1].num, cJSON_GetObjectItem(best, "concurrency")->valuedouble);
    cr_assert_eq(pt->ncols, 7);
    cr_assert_eq(pt->ncells / pt->ncols, (size_t)cJSON_GetArraySize(probes));
    size_t r = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, probes) {
        const struct rcell *c = &pt->cells[r++ * pt->ncols];
        cr_assert_eq(c[0].num, cJSON_GetObjectItem(p, "concurrency")->valuedouble);
        cr_assert_eq(c[3].num, cJSON_GetObjectItem(p, "good")->valuedouble /
                               cJSON_GetObjectItem(p, "requests")->valuedouble);
        cr_assert_str_eq(c[5].text, cJSON_GetObjectItem(p, "verdict")->valuestring);
        cr_assert_str_eq(c[6].text, cJSON_GetObjectItem(p, "decided_by")->valuestring);
    }
    rdoc_free(&d);
    cJSON_Delete(j);
    artifact_any_free(&a);
}

Test(report_search, compare_refuses_it_naming_the_file)
{
    struct cmp_side s;
    char err[512];
    cr_assert_neq(cmp_side_read(FIXTURE, &s, err, sizeof err), 0);
    cr_assert(strstr(err, FIXTURE) && strstr(err, "a search cannot be compared"), "%s", err);
}
