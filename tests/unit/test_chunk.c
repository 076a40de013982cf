/* test_chunk.c — decoding single stream events. */
#include <string.h>

#include <criterion/criterion.h>

#include "openai/chunk.h"

static struct chunk dec(const char *s)
{
    struct chunk c;
    chunk_decode(s, strlen(s), &c);
    return c;
}

Test(chunk, role_only_first_chunk_has_no_output)
{
    struct chunk c = dec("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}");
    cr_assert_eq(c.kind, CHUNK_DATA);
    cr_assert_eq(c.content_bytes, 0);
    cr_assert_eq(c.reasoning_bytes, 0);
    cr_assert_str_eq(c.finish_reason, "");
    cr_assert_eq(c.completion_tokens, -1);
}

Test(chunk, content_delta_counts_bytes_of_decoded_text)
{
    struct chunk c = dec("{\"choices\":[{\"delta\":{\"content\":\" h\\u00e9\"}}]}");
    cr_assert_eq(c.content_bytes, 4, "' hé' is 4 bytes of UTF-8");
}

Test(chunk, completions_text)
{
    struct chunk c = dec("{\"object\":\"text_completion\",\"choices\":[{\"text\":\"abc\",\"finish_reason\":\"length\"}]}");
    cr_assert_eq(c.content_bytes, 3);
    cr_assert_str_eq(c.finish_reason, "length");
}

Test(chunk, reasoning_either_field_never_the_sum)
{
    struct chunk a = dec("{\"choices\":[{\"delta\":{\"reasoning\":\"think\"}}]}");
    struct chunk b = dec("{\"choices\":[{\"delta\":{\"reasoning_content\":\"think\",\"content\":null}}]}");
    struct chunk both = dec("{\"choices\":[{\"delta\":{\"reasoning\":\"think\",\"reasoning_content\":\"think\"}}]}");
    cr_assert_eq(a.reasoning_bytes, 5);
    cr_assert_eq(b.reasoning_bytes, 5);
    cr_assert_eq(b.content_bytes, 0);
    cr_assert_eq(both.reasoning_bytes, 5, "duplicated reasoning (vLLM 0.11-0.15) counts once");
}

Test(chunk, usage_only_chunk)
{
    struct chunk c = dec("{\"choices\":[],\"usage\":{\"prompt_tokens\":36,\"total_tokens\":42,\"completion_tokens\":6,"
                         "\"prompt_tokens_details\":{\"cached_tokens\":16}}}");
    cr_assert_eq(c.kind, CHUNK_DATA);
    cr_assert_eq(c.content_bytes, 0);
    cr_assert_eq(c.prompt_tokens, 36);
    cr_assert_eq(c.completion_tokens, 6);
    cr_assert_eq(c.cached_tokens, 16);
}

Test(chunk, null_usage_is_absent)
{
    struct chunk c = dec("{\"choices\":[{\"text\":\"x\"}],\"usage\":null}");
    cr_assert_eq(c.prompt_tokens, -1);
    cr_assert_eq(c.completion_tokens, -1);
    cr_assert_eq(c.content_bytes, 1);
}

Test(chunk, content_finish_and_usage_in_one_chunk)
{
    struct chunk c = dec("{\"choices\":[{\"delta\":{\"content\":\"end\"},\"finish_reason\":\"stop\"}],"
                         "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9}}");
    cr_assert_eq(c.content_bytes, 3);
    cr_assert_str_eq(c.finish_reason, "stop");
    cr_assert_eq(c.completion_tokens, 9);
}

Test(chunk, error_objects_nested_and_flat)
{
    struct chunk a = dec("{\"error\": {\"object\": \"error\", \"message\": \"The request queue is full.\", \"code\": 503}}");
    struct chunk b = dec("{\"object\":\"error\",\"message\":\"bad things\",\"code\":400}");
    cr_assert_eq(a.kind, CHUNK_ERROR);
    cr_assert_str_eq(a.error, "The request queue is full. (code 503)");
    cr_assert_eq(b.kind, CHUNK_ERROR);
    cr_assert_str_eq(b.error, "bad things (code 400)");
}

Test(chunk, done_and_invalid)
{
    cr_assert_eq(dec("[DONE]").kind, CHUNK_DONE);
    struct chunk c = dec("{\"choices\":[{\"delta\":{\"content\":\"x\"");
    cr_assert_eq(c.kind, CHUNK_INVALID);
    cr_assert(strstr(c.error, "not a JSON object"));
    cr_assert_eq(dec("42").kind, CHUNK_INVALID);
}
