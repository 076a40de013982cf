/* observe_shard.c — a shard's note on the server it shared (observe_shard.h). */
#include "artifact/observe_shard.h"

#include <stdio.h>

int artifact_observe_shared_server(cJSON *art, int index, int count)
{
    cJSON *cc = cJSON_GetObjectItem(cJSON_GetObjectItem(art, "server_metrics"), "cross_checks");
    if (!cc)
        return 0;
    char note[200];
    snprintf(note, sizeof note, "shard %d/%d: the server also served this run's other shards, so "
             "excess_tokens holds their tokens; other traffic is not checked per shard", index, count);
    cJSON *unknown = cJSON_CreateNull();
    if (!unknown || !cJSON_ReplaceItemInObject(cc, "other_traffic", unknown)) {
        cJSON_Delete(unknown);
        return -1;
    }
    return cJSON_AddStringToObject(cc, "other_traffic_note", note) ? 0 : -1;
}
