/* fuzz_artifact.c — libFuzzer target: the artifact readers (benchmark/v1
 * and matrix/v1) accept or reject any bytes with a message, never a crash,
 * a leak or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "artifact/benchmark.h"
#include "artifact/matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    char err[1024];
    struct matrix m;
    if (matrix_read((const char *)data, len, "fuzz", &m, err, sizeof err) == 0)
        matrix_free(&m);
    cJSON *j = cJSON_ParseWithLength((const char *)data, len);
    if (!j)
        return 0;
    struct benchmark b;
    if (benchmark_from_json(j, "fuzz", &b, err, sizeof err) == 0)
        benchmark_free(&b);
    cJSON_Delete(j);
    return 0;
}
