/* test_ranks.c — the ranks block's table: every row survives a round trip
 * (generated from the table), instants keep every digit as decimal
 * strings, and the checked reader names what is wrong where. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "artifact/ranks.h"
#include "fields_sample.h"

Test(ranks, every_row_survives_a_round_trip)
{
    char why[256] = "";
    cr_assert(fields_sample_round_trip(&ranks_table, why, sizeof why), "%s", why);
}

/* One entry with instants near int64's top: a double would lose their last digits. */
Test(ranks, instants_are_exact_decimal_strings_and_zero_is_null)
{
    struct rank_entry e = {.rank = 1, .host = "h", .pid = 7, .measure_start_ns = INT64_C(9007199254740993),
                           .unix_minus_monotonic_ns = -INT64_C(1764636000123456789), .start_late_ms = 0.5,
                           .cpu_user_s = NAN, .cpu_sys_s = NAN, .loop_lag_p50_ms = NAN, .loop_lag_p99_ms = NAN,
                           .loop_lag_max_ms = NAN, .clock_offset_ms = NAN, .clock_offset_uncertainty_ms = NAN,
                           .clock_drift_ms = NAN};
    struct ranks_block b = {.count = 2, .alignment = "wall-clock", .max_offset_uncertainty_ms = NAN,
                            .plan = {10, 1, 2}, .per_rank = &e, .n_per_rank = 1};
    cJSON *j = ranks_to_json(&b);
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "per_rank"), 0);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(w, "measure_start_ns")), "9007199254740993");
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(w, "unix_minus_monotonic_ns")), "-1764636000123456789");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(w, "window_start_ns")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(w, "clock_offset_ms")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "max_offset_uncertainty_ms")));
    cr_assert_null(cJSON_GetObjectItem(j, "alignment_note"), "no note unless given");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "missing")), 0, "missing is written empty");
    struct ranks_block back;
    char err[256];
    cr_assert_eq(ranks_from_json(j, "t", &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.per_rank[0].measure_start_ns, INT64_C(9007199254740993));
    cr_assert_eq(back.per_rank[0].unix_minus_monotonic_ns, -INT64_C(1764636000123456789));
    cr_assert_eq(back.per_rank[0].window_start_ns, 0);
    ranks_free(&back);
    cJSON_Delete(j);
}

Test(ranks, a_bad_instant_is_named_with_its_path)
{
    cJSON *j = cJSON_Parse("{\"count\":1,\"alignment\":\"wall-clock\",\"missing\":[],"
                           "\"plan\":{\"num_prompts\":1,\"warmup\":0,\"concurrency\":1},"
                           "\"per_rank\":[{\"rank\":0,\"host\":\"h\",\"window_end_ns\":\"12x\"}]}");
    struct ranks_block b;
    char err[256] = "";
    cr_assert_eq(ranks_from_json(j, "a.json", &b, err, sizeof err), -1);
    cr_assert(strstr(err, "a.json") && strstr(err, "ranks.per_rank[0]") && strstr(err, "window_end_ns"), "%s", err);
    ranks_free(&b);
    cJSON_Delete(j);
}
