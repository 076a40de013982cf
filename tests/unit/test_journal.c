/* test_journal.c — a journal request line read back gives the record's
 * chunks exactly, and prints them as cJSON would. */
#include <math.h>
#include <stdio.h>
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

static char *line(cJSON *j)
{
    cr_assert(j);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

/* A line read back and written again is the same line, byte for byte: every
 * key, null, count and time of a rich record, and of a header. */
Test(journal, a_line_read_and_written_again_is_the_same_line)
{
    const int64_t t0 = 5000;
    struct req_record r;
    record_init(&r, 12, true, -1, 64);
    r.t_scheduled = t0 - 3;     /* before t0: a negative offset */
    r.t_start = t0 + 10;
    r.t_first_byte = t0 + 20;
    r.t_end = t0 + 123456789012345LL;
    r.http_status = 429;
    r.prompt_tokens = 17;
    r.completion_tokens = -1;
    r.cached_tokens = 4;
    r.content_chunks = 2;
    r.reasoning_chunks = 1;
    r.tool_call_chunks = 3;
    r.tool_calls = 1;
    r.events = 9;
    r.unknown_lines = 2;
    r.done_seen = true;
    r.cut = true;
    snprintf(r.finish_reason, sizeof r.finish_reason, "tool_calls");
    r.fail = FAIL_HTTP;
    snprintf(r.fail_msg, sizeof r.fail_msg, "HTTP 429 \"slow down\"");
    cr_assert_eq(record_add_chunk(&r, t0 + 30, 2, 7, true), 0);
    cr_assert_eq(record_add_chunk(&r, t0 + 40, -1, 0, false), 0);
    char *first = line(journal_record(&r, t0));
    cr_assert(strstr(first, "\"t_scheduled\":-3,\"t_start\":10,\"t_headers\":null,\"t_first_byte\":20,"), "%s", first);
    cr_assert(strstr(first, "\"planned_prompt_tokens\":null,\"max_tokens\":64,"), "%s", first);
    cJSON *p = cJSON_Parse(first);
    struct req_record b;
    char err[256];
    cr_assert_eq(journal_record_read(p, "j", t0, &b, err, sizeof err), 0, "%s", err);
    char *second = line(journal_record(&b, t0));
    cr_assert_str_eq(second, first);
    cr_assert_eq(b.fail, FAIL_HTTP);
    cr_assert_eq(b.cached_tokens, 4);
    cJSON_Delete(p);
    free(first);
    free(second);
    record_free(&b);
    record_free(&r);

    struct journal_opts o = {PCT_LINEAR, true, false, true, {250, NAN, 9000.5}}, q;
    cJSON *settings = cJSON_Parse("{\"schema\":\"anvil-serving.benchmark/v1\",\"n\":[1,null]}");
    first = line(journal_header("run-1", "results/a.json", 123456789012345678LL, &o, settings));
    p = cJSON_Parse(first);
    int64_t t;
    const cJSON *set;
    const char *id, *art;
    cr_assert_eq(journal_header_read(p, "j", &t, &q, &set, &id, &art, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t, 123456789012345678LL, "t0 past a double's 2^53, exact");
    second = line(journal_header(id, art, t, &q, set));
    cr_assert_str_eq(second, first);
    cJSON_Delete(p);
    cJSON_Delete(settings);
    free(first);
    free(second);
}
