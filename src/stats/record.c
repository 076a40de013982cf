/* record.c — the per-request record. */
#include "stats/record.h"

#include "core/escape.h"
#include "core/redact.h"
#include "core/vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long record_prompt_tolerance(long planned_prompt_tokens)
{
    long pct = planned_prompt_tokens / 100;
    return pct > 4 ? pct : 4;
}

const char *fail_kind_name(enum fail_kind k)
{
    static const char *const names[] = {
        [FAIL_NONE] = "none",       [FAIL_CONNECT] = "connect",   [FAIL_DNS] = "dns",
        [FAIL_HTTP] = "http",       [FAIL_STREAM_ERROR] = "stream_error",
        [FAIL_TRUNCATED] = "truncated", [FAIL_TIMEOUT] = "timeout", [FAIL_INVALID] = "invalid_stream",
        [FAIL_EMPTY] = "empty_stream", [FAIL_PROMPT_TRUNCATED] = "prompt_truncated",
        [FAIL_CANCELLED] = "cancelled", [FAIL_CLIENT] = "client", [FAIL_OTHER] = "transport",
    };
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "unknown";
}

void record_init(struct req_record *r, int index, bool warmup, long planned_prompt_tokens,
                 long max_tokens)
{
    memset(r, 0, sizeof *r);
    r->index = index;
    r->warmup = warmup;
    r->planned_prompt_tokens = planned_prompt_tokens;
    r->max_tokens = max_tokens;
    r->prompt_tokens = r->completion_tokens = r->cached_tokens = r->text_tokens = -1;
    buf_init(&r->text, RECORD_TEXT_MAX);
}

int record_add_chunk(struct req_record *r, int64_t t_ns, int32_t tokens, size_t bytes, bool content)
{
    if (VEC_RESERVE(r->chunks, r->cap_chunks, r->n_chunks + 1, 64) != 0)
        return -1;
    r->chunks[r->n_chunks++] = (struct out_chunk){t_ns, tokens, bytes < UINT16_MAX ? (uint16_t)bytes : UINT16_MAX,
                                                  content};
    return 0;
}

void record_fail(struct req_record *r, enum fail_kind k, const char *fmt, ...)
{
    if (r->fail != FAIL_NONE)
        return;
    r->fail = k;
    char raw[sizeof r->fail_msg];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    text_escape(r->fail_msg, sizeof r->fail_msg, raw, n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1);
}

void record_redact(struct req_record *r, const char *secret)
{
    redact(r->fail_msg, sizeof r->fail_msg, secret);
}

void record_scrub(struct req_record *r, const struct secrets *s)
{
    secrets_scrub(s, r->fail_msg, sizeof r->fail_msg);
    secrets_scrub(s, r->finish_reason, sizeof r->finish_reason);
}

void record_free(struct req_record *r)
{
    free(r->chunks);
    r->chunks = NULL;
    r->n_chunks = r->cap_chunks = 0;
    buf_free(&r->text);
}

static const struct req_record *array_next(struct rec_iter *it)
{
    return it->at < it->n ? &it->recs[it->at++] : NULL;
}

static int array_rewind(struct rec_iter *it)
{
    it->at = 0;
    return 0;
}

void rec_iter_array(struct rec_iter *it, const struct req_record *recs, int n)
{
    *it = (struct rec_iter){.next = array_next, .rewind = array_rewind, .recs = recs,
                            .n = n > 0 ? (size_t)n : 0};
}
