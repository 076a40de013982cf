/* prompt.c — synthetic prompt text. */
#include "workload/prompt.h"

#include <inttypes.h>
#include <sys/random.h>
#include <time.h>

#include "core/clock.h"
#include "core/rand.h"

static const char *const vocab[] = {
    "the", "model", "server", "token", "stream", "latency", "request", "answer", "question",
    "system", "memory", "cache", "batch", "engine", "prompt", "output", "input", "time",
    "first", "second", "window", "value", "number", "result", "table", "river", "mountain",
    "city", "garden", "music", "letter", "morning", "evening", "story", "history", "science",
    "language", "picture", "window", "market", "people", "country", "water", "light", "paper",
    "simple", "quiet", "bright", "careful", "early", "large", "small", "green", "blue",
    "open", "measure", "explain", "describe", "consider", "follow", "return", "build", "learn",
    "write",
};
#define VOCAB_N (sizeof vocab / sizeof *vocab)

int prompt_build(struct buf *out, uint64_t salt, long index, long words, uint64_t seed)
{
    if (buf_printf(out, "%016" PRIx64 "-%0*ld:", salt, PROMPT_INDEX_DIGITS, index) != 0)
        return -1;
    uint64_t s = seed;
    for (long i = 0; i < words; i++) {
        const char *w = vocab[splitmix64_next(&s) % VOCAB_N];
        if (buf_printf(out, " %s", w) != 0)
            return -1;
    }
    return 0;
}

uint64_t prompt_random_salt(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof v, 0) == (ssize_t)sizeof v)
        return v;
    return (uint64_t)clock_now_ns() ^ (uint64_t)time(NULL) << 20;
}
