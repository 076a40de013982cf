/* test_journal.c — a journal request line read back gives the record's
 * chunks exactly, and prints them as cJSON would. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/journal.h"
#include "stats/record.h"

/* Times and chunk times past 2^31 ns (cJSON's int), past 10^15 ns (2^52 + 1: where
 * %.15g would lose digits), tokens -1 (unknown) and a reasoning chunk. */
Test(journal, chunks_survive_a_line_exactly)
{
    const int64_t t0 = 1000;
    const int64_t at[] = {t0 + 1, t0 + 2147483648LL, t0 + 123456789012345LL, t0 + 4503599627370497LL};
    const int32_t tok[] = {1, -1, 17, 0};
    struct req_record r;
    record_init(&r, 3, false, 16, 8);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(record_add_chunk(&r, at[i], tok[i], 10 + i, i != 1), 0);
    r.t_start = t0 + 5;
    r.t_end = t0 + 4503599627370497LL;
    r.first_output_merged = true;
    cJSON *j = journal_record(&r, t0);
    cr_assert(j);
    char *line = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    cr_assert(strstr(line, "\"chunks\":[[1,1,true,10],[2147483648,-1,false,11],[123456789012345,17,true,12],"
                           "[4503599627370497,0,true,13]]"), "%s", line);
    cJSON *p = cJSON_Parse(line);
    free(line);
    cr_assert(p);
    struct req_record b;
    char err[256];
    cr_assert_eq(journal_record_read(p, "j", t0, &b, err, sizeof err), 0, "%s", err);
    cJSON_Delete(p);
    cr_assert_eq(b.t_start, r.t_start);
    cr_assert_eq(b.t_end, r.t_end);
    cr_assert_eq(b.t_headers, 0, "a time that did not happen stays null");
    cr_assert(b.first_output_merged, "first_output_merged survives the line");
    cr_assert_eq(b.n_chunks, 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(b.chunks[i].t_ns, at[i], "chunk %d", i);
        cr_assert_eq(b.chunks[i].tokens, tok[i], "chunk %d", i);
        cr_assert_eq(b.chunks[i].content, i != 1, "chunk %d", i);
        cr_assert_eq(b.chunks[i].bytes, 10 + i, "chunk %d", i);
    }
    record_free(&b);
    record_free(&r);
}

/* No chunk: an empty array, as before. */
Test(journal, no_chunks_is_an_empty_array)
{
    struct req_record r;
    record_init(&r, 0, true, -1, 4);
    cJSON *j = journal_record(&r, 0);
    cr_assert(j);
    char *line = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    cr_assert(strstr(line, "\"chunks\":[]"), "%s", line);
    free(line);
    record_free(&r);
}
