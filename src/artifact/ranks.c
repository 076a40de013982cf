/* ranks.c — the ranks block's rows (ranks.h). */
#include "artifact/ranks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* An int64 instant as a decimal string (exact, as the journal's t0_ns);
 * 0 as null. */
static void ns_write(cJSON *o, const char *key, const void *value)
{
    int64_t ns = *(const int64_t *)value;
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, ns);
    if (ns)
        cJSON_AddStringToObject(o, key, b);
    else
        cJSON_AddNullToObject(o, key);
}

/* Absent or null reads as 0; anything but a decimal string is an error. */
static void ns_read(struct jread *r, const cJSON *o, const char *key, unsigned flags, void *value)
{
    int64_t *ns = value;
    *ns = 0;
    const cJSON *v = jread_item(r, o, key, flags);
    if (!v || cJSON_IsNull(v))
        return;
    char *end = NULL;
    errno = 0;
    long long n = cJSON_IsString(v) ? strtoll(v->valuestring, &end, 10) : 0;
    if (!cJSON_IsString(v) || end == v->valuestring || *end || errno)
        jread_fail(r, key, "expected a decimal string of nanoseconds or null");
    else
        *ns = (int64_t)n;
}

static const struct field_codec ns_codec = {ns_write, ns_read, NULL};

#define OPT (JR_OPTIONAL | JR_NULLABLE)

static const struct field entry_rows[] = {
    F_WHOLE(struct rank_entry, rank, 0, NULL),
    F_STR(struct rank_entry, host, 0),
    F_WHOLE(struct rank_entry, pid, OPT, NULL),
    F_STR(struct rank_entry, run_id, OPT),
    F_STR(struct rank_entry, journal, OPT),
    F_WHOLE(struct rank_entry, threads, OPT, NULL),
    F_WHOLE(struct rank_entry, requests, OPT, "requests"),
    F_WHOLE(struct rank_entry, sent, OPT, "requests"),
    F_WHOLE(struct rank_entry, completed, OPT, "requests"),
    F_WHOLE(struct rank_entry, failed, OPT, "requests"),
    F_NUM(struct rank_entry, cpu_user_s, OPT, "s"),
    F_NUM(struct rank_entry, cpu_sys_s, OPT, "s"),
    F_NUM(struct rank_entry, loop_lag_p50_ms, OPT, "ms"),
    F_NUM(struct rank_entry, loop_lag_p99_ms, OPT, "ms"),
    F_NUM(struct rank_entry, loop_lag_max_ms, OPT, "ms"),
    F_WHOLE(struct rank_entry, loop_lag_samples, OPT, NULL),
    F_WHOLE(struct rank_entry, prewarmed_connections, OPT, NULL),
    F_WHOLE(struct rank_entry, arrival_stamps_kernel_rx, OPT, NULL),
    F_WHOLE(struct rank_entry, arrival_stamps_client_clock, OPT, NULL),
    F_BOOL(struct rank_entry, incomplete, JR_OPTIONAL),
    F_STR(struct rank_entry, incomplete_reason, OPT),
    F_CUSTOM(struct rank_entry, measure_start_ns, OPT, &ns_codec),
    F_CUSTOM(struct rank_entry, window_start_ns, OPT, &ns_codec),
    F_CUSTOM(struct rank_entry, window_end_ns, OPT, &ns_codec),
    F_CUSTOM(struct rank_entry, unix_minus_monotonic_ns, OPT, &ns_codec),
    F_NUM(struct rank_entry, start_late_ms, OPT, "ms"),
    F_NUM(struct rank_entry, clock_offset_ms, OPT, "ms"),
    F_NUM(struct rank_entry, clock_offset_uncertainty_ms, OPT, "ms"),
    F_NUM(struct rank_entry, clock_drift_ms, OPT, "ms"),
};
static const struct field_table entry_table = FIELD_TABLE_ALWAYS("rank_entry", struct rank_entry, entry_rows);

static const struct field missing_rows[] = {
    F_WHOLE(struct rank_missing, rank, 0, NULL),
    F_STR(struct rank_missing, reason, OPT),
};
static const struct field_table missing_table = FIELD_TABLE_ALWAYS("rank_missing", struct rank_missing, missing_rows);

static const struct field plan_rows[] = {
    F_WHOLE(struct ranks_plan, num_prompts, 0, "requests"),
    F_WHOLE(struct ranks_plan, warmup, 0, "requests"),
    F_WHOLE(struct ranks_plan, concurrency, 0, "requests"),
};
static const struct field_table plan_table = FIELD_TABLE_ALWAYS("ranks_plan", struct ranks_plan, plan_rows);

static const struct field block_rows[] = {
    F_WHOLE(struct ranks_block, count, 0, NULL),
    F_STR(struct ranks_block, alignment, JR_NONEMPTY),
    {"alignment_note", FIELD_STRING, offsetof(struct ranks_block, alignment_note), OPT, FW_OMIT_NONE,
     NULL, NULL, 0, 0, NULL, NULL},
    F_NUM(struct ranks_block, max_offset_uncertainty_ms, JR_OPTIONAL, "ms"),
    F_ARR(struct ranks_block, missing, n_missing, 0, &missing_table),
    F_OBJ(struct ranks_block, plan, 0, &plan_table),
    F_ARR(struct ranks_block, per_rank, n_per_rank, 0, &entry_table),
};
const struct field_table ranks_table = FIELD_TABLE_ALWAYS("ranks", struct ranks_block, block_rows);

cJSON *ranks_to_json(const struct ranks_block *b)
{
    return fields_to_json(&ranks_table, b);
}

int artifact_add_ranks(cJSON *art, const struct ranks_block *b)
{
    cJSON *r = ranks_to_json(b);
    if (!r || !cJSON_AddItemToObject(art, "ranks", r)) {
        cJSON_Delete(r);
        return -1;
    }
    return 0;
}

int ranks_from_json(const cJSON *o, const char *name, struct ranks_block *b, char *err, size_t errlen)
{
    struct jread r;
    jread_init(&r, name, err, errlen);
    size_t mark = jread_enter(&r, "ranks");
    int rc = fields_read(&r, o, &ranks_table, b);
    jread_leave(&r, mark);
    return rc;
}

void ranks_free(struct ranks_block *b)
{
    fields_free(&ranks_table, b);
}
