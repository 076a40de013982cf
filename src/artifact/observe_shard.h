/* observe_shard.h — what a shard's artifact says of the server it shared
 * with the run's other shards (docs/SCALEOUT.md): beside artifact/observe.h,
 * which writes the observed blocks of any run. */
#ifndef ANVIL_ARTIFACT_OBSERVE_SHARD_H
#define ANVIL_ARTIFACT_OBSERVE_SHARD_H

#include <cjson/cJSON.h>

/* In art's server_metrics.cross_checks (nothing when absent): other_traffic
 * set to null (unknown: a shard cannot tell its siblings' tokens from
 * another client's) and other_traffic_note saying why, naming shard
 * index of count. Returns 0, or -1 when memory runs out. */
int artifact_observe_shared_server(cJSON *art, int index, int count);

#endif
