/* fuzz_journal.c — libFuzzer target: the journal's line readers (header and
 * request lines, artifact/journal.h) accept or reject any bytes without a
 * crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "artifact/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    cJSON *j = cJSON_ParseWithLength((const char *)data, len);
    if (!j)
        return 0;
    char err[512];
    int64_t t0;
    struct journal_opts o;
    const cJSON *settings;
    const char *run_id, *artifact;
    journal_header_read(j, "fuzz", &t0, &o, &settings, &run_id, &artifact, err, sizeof err);
    struct req_record r;
    if (journal_record_read(j, "fuzz", 1000, &r, err, sizeof err) == 0)
        record_free(&r);
    cJSON_Delete(j);
    return 0;
}
