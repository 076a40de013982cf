/* fuzz_chunk.c — libFuzzer target: the fast chunk scanner must decode every
 * input exactly as cJSON (the reference) does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "openai/chunk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    struct chunk fast, ref;
    chunk_decode((const char *)data, len, &fast);
    chunk_decode_json((const char *)data, len, &ref);
    if (fast.kind != ref.kind || fast.content_bytes != ref.content_bytes ||
        fast.reasoning_bytes != ref.reasoning_bytes || fast.tool_call_bytes != ref.tool_call_bytes ||
        fast.tool_calls_started != ref.tool_calls_started || strcmp(fast.finish_reason, ref.finish_reason) ||
        fast.prompt_tokens != ref.prompt_tokens || fast.completion_tokens != ref.completion_tokens ||
        fast.cached_tokens != ref.cached_tokens || strcmp(fast.error, ref.error))
        abort();
    return 0;
}
