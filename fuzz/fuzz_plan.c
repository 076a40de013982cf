/* fuzz_plan.c — libFuzzer target: a sweep plan file (JSON, else YAML, as
 * `anvil sweep` reads it, with the input-file limits of core/yamljson.h)
 * through sweep_plan_from_json: any bytes are accepted or rejected with a
 * message, never a crash or a leak; fuzz/ci runs it under an RSS limit, so
 * nested aliases that escaped the limits would fail it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sweep/plan.h"
#include "core/yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char *text = malloc(len + 1);
    if (!text)
        return 0;
    memcpy(text, data, len);
    text[len] = '\0';
    char err[600];
    cJSON *j = json_or_yaml(text, len, err, sizeof err);
    free(text);
    if (!j)
        return 0;
    struct sweep_plan p;
    if (sweep_plan_from_json(j, "fuzz", &p, err, sizeof err) == 0)
        sweep_plan_free(&p);
    cJSON_Delete(j);
    return 0;
}
