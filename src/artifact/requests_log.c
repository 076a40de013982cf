/* requests_log.c — a --requests-out line (requests_log.h). */
#include "artifact/requests_log.h"

#include "artifact/benchmark.h"

cJSON *artifact_requests_line(const struct req_record *r, const char *run_id)
{
    cJSON *line = r->fail == FAIL_NONE ? artifact_request_timing(r) : artifact_failure(r);
    if (line && (!cJSON_AddStringToObject(line, "run_id", run_id) || !cJSON_AddBoolToObject(line, "warmup", r->warmup) ||
                 !cJSON_AddStringToObject(line, "status", r->cut ? "incomplete"
                                                          : r->fail == FAIL_NONE ? "completed" : "failed"))) {
        cJSON_Delete(line);
        return NULL;
    }
    return line;
}
