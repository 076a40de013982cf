/* requests_log.h — one line of --requests-out (docs/ARTIFACTS.md,
 * "--requests-out JSON Lines"): the artifact's entry of the request plus
 * the run it belongs to and how it ended. */
#ifndef ANVIL_ARTIFACT_REQUESTS_LOG_H
#define ANVIL_ARTIFACT_REQUESTS_LOG_H

#include <cjson/cJSON.h>

#include "stats/record.h"

/* r's --requests-out line: its request_timings entry (completed) or its
 * failures entry (failed), then run_id, warmup and status ("completed",
 * "failed", or "incomplete" when the run's end cut it). The caller deletes;
 * NULL when memory runs out. */
cJSON *artifact_requests_line(const struct req_record *r, const char *run_id);

#endif
