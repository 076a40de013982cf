/* prompt.c — synthetic prompt text. */
#include "workload/prompt.h"

#include <string.h>
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

/* Head words: short common words, each one token in GPT-2 and Llama
 * vocabularies, at most 6 letters (PROMPT_HEAD_MAX holds four and their
 * spaces). Word 0 starts calibration heads only. */
static const char *const head_vocab[] = {
    "probe", "apple", "bird", "cloud", "dog", "egg", "fish", "gold", "house", "ice", "jam",
    "king", "lamp", "moon", "nest", "ocean", "pen", "queen", "rain", "sun", "tree", "van",
    "wolf", "yard", "zebra", "bread", "chair", "door", "field", "glass", "hill", "iron", "kite",
    "leaf", "milk", "nut", "plum", "road", "salt", "table", "uncle", "vase", "wheat", "anchor",
    "bell", "coin", "desk", "fire", "grape", "horse", "lemon", "mouse", "night", "olive",
    "pearl", "river", "stone", "tiger", "wagon", "piano", "cake", "frog", "drum", "boat",
};
#define HEAD_N 64
_Static_assert(sizeof head_vocab / sizeof *head_vocab == HEAD_N, "64 head words");

size_t prompt_head(char *out, size_t cap, uint64_t salt, enum prompt_space space, long index)
{
    if (cap < PROMPT_HEAD_MAX + 1)
        return 0;
    /* one offset per word from the salt; the calibration space gets other offsets */
    uint64_t s = salt ^ (space == PROMPT_CALIBRATION ? 0x63616c6962726174ull : 0);
    uint64_t rest = index < 0 ? 0 : (uint64_t)index;
    size_t n = 0;
    for (int k = 0; k < PROMPT_HEAD_WORDS; k++) {
        uint64_t off = splitmix64_next(&s);
        size_t w;
        if (k > 0) {
            w = (size_t)((rest % HEAD_N + off % HEAD_N) % HEAD_N);
            rest /= HEAD_N;
        } else if (space == PROMPT_CALIBRATION) {
            w = 0;
        } else {        /* words 1..63: never the calibration word */
            w = 1 + (size_t)((rest % (HEAD_N - 1) + off % (HEAD_N - 1)) % (HEAD_N - 1));
            rest /= HEAD_N - 1;
        }
        size_t len = strlen(head_vocab[w]);
        if (k > 0)
            out[n++] = ' ';
        memcpy(out + n, head_vocab[w], len);
        n += len;
    }
    out[n] = '\0';
    return n;
}

int prompt_filler(struct buf *out, long words, uint64_t seed)
{
    uint64_t s = seed;
    for (long i = 0; i < words; i++) {
        const char *w = vocab[splitmix64_next(&s) % VOCAB_N];
        if (buf_printf(out, " %s", w) != 0)
            return -1;
    }
    return 0;
}

int prompt_block(struct buf *out, uint64_t salt, long index, long words)
{
    char head[PROMPT_HEAD_MAX + 2] = " ";
    size_t n = 1 + prompt_head(head + 1, sizeof head - 1, salt, PROMPT_MEASURED, index);
    if (buf_append(out, head, n) != 0)
        return -1;
    uint64_t s = salt ^ ((uint64_t)index * 0x9e3779b97f4a7c15ull) ^ 0x626c6f636b000000ull;
    for (long i = PROMPT_HEAD_WORDS; i < words; i++) {
        const char *w = vocab[splitmix64_next(&s) % VOCAB_N];
        size_t len = strlen(w);
        if (buf_append(out, " ", 1) != 0 || buf_append(out, w, len) != 0)
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
