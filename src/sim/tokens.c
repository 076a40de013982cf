/* tokens.c — the simulator's deterministic token model (see tokens.h). */
#include "sim/tokens.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Plain ASCII, no quotes or backslashes: chunks embed them in JSON as-is.
 * The leading space is the token's own, as BPE vocabularies have it, so
 * that concatenated output never merges two tokens into one; words have at
 * most SIM_PIECE_LETTERS letters, so both tokenizers count one token per
 * word and /tokenize of a reply's text counts the tokens that carry it. */
static const char *const vocab[SIM_VOCAB_WORDS] = {
    " the", " of", " and", " to", " in", " is", " that", " it",
    " was", " for", " on", " are", " with", " as", " at", " be",
    " this", " have", " from", " or", " one", " had", " by", " word",
    " but", " not", " what", " all", " were", " we", " when", " your",
    " can", " said", " there", " use", " an", " each", " which", " she",
    " do", " how", " their", " if", " will", " up", " other", " about",
    " out", " many", " then", " them", " these", " so", " some", " her",
    " would", " make", " like", " him", " into", " time", " has", " look",
    " two", " more", " write", " go", " see", " number", " no", " way",
    " could", " people", " my", " than", " first", " water", " been", " call",
    " who", " oil", " its", " now", " find", " long", " down", " day",
    " did", " get", " come", " made", " may", " part", " over", " new",
    " sound", " take", " only", " little", " work", " know", " place", " year",
    " live", " me", " back", " give", " most", " very", " after", " thing",
    " our", " just", " name", " good", " kind", " man", " think", " say",
    " great", " where", " help", " hand", " much", " before", " line", " right",
};

bool sim_next_token(const char *s, size_t len, size_t *pos, size_t *tok_start,
                    size_t *tok_len)
{
    size_t i = *pos;
    while (i < len && sim_is_space((unsigned char)s[i]))
        i++;
    if (i == len) {
        *pos = len;
        return false;
    }
    size_t start = i;
    while (i < len && !sim_is_space((unsigned char)s[i]))
        i++;
    *tok_start = start;
    *tok_len = i - start;
    *pos = i;
    return true;
}

int64_t sim_count_tokens(const char *s, size_t len)
{
    /* Count token starts: a non-space byte after a space (or at 0). */
    int64_t n = 0;
    bool in_token = false;
    for (size_t i = 0; i < len; i++) {
        bool sp = sim_is_space((unsigned char)s[i]);
        if (!sp && !in_token)
            n++;
        in_token = !sp;
    }
    return n;
}

/* PIECES classes: 0 space, 1 letter, 2 digit, 3 any other byte. */
static int piece_class(unsigned char c)
{
    if (sim_is_space(c))
        return 0;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80)
        return 1;
    return c >= '0' && c <= '9' ? 2 : 3;
}

bool sim_next_token_as(enum sim_tokenizer t, const char *s, size_t len, size_t *pos,
                       size_t *tok_start, size_t *tok_len)
{
    if (t == SIM_TOKENIZER_WORDS)
        return sim_next_token(s, len, pos, tok_start, tok_len);
    size_t i = *pos;
    while (i < len && sim_is_space((unsigned char)s[i]))
        i++;
    if (i == len) {
        *pos = len;
        return false;
    }
    int cls = piece_class((unsigned char)s[i]);
    size_t most = cls == 1 ? SIM_PIECE_LETTERS : cls == 2 ? SIM_PIECE_DIGITS : 1, start = i;
    while (i < len && i - start < most && piece_class((unsigned char)s[i]) == cls)
        i++;
    *tok_start = start;
    *tok_len = i - start;
    *pos = i;
    return true;
}

int64_t sim_count_tokens_as(enum sim_tokenizer t, const char *s, size_t len)
{
    if (t == SIM_TOKENIZER_WORDS)
        return sim_count_tokens(s, len);
    int64_t n = 0;
    size_t pos = 0, start, tlen;
    while (sim_next_token_as(t, s, len, &pos, &start, &tlen))
        n++;
    return n;
}

int sim_tokenizer_parse(const char *name, enum sim_tokenizer *out)
{
    if (!strcmp(name, "words"))
        *out = SIM_TOKENIZER_WORDS;
    else if (!strcmp(name, "pieces"))
        *out = SIM_TOKENIZER_PIECES;
    else
        return -1;
    return 0;
}

uint64_t sim_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t sim_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int64_t sim_token_id(const char *tok, size_t len)
{
    uint64_t h = sim_mix64(sim_hash_bytes(SIM_HASH_INIT, tok, len));
    return SIM_TOKEN_ID_FIRST_WORD
           + (int64_t)(h % (uint64_t)(SIM_TOKEN_ID_LIMIT - SIM_TOKEN_ID_FIRST_WORD));
}

int64_t sim_completion_prompt_tokens(const char *prompt, size_t len)
{
    return sim_count_tokens(prompt, len) + SIM_BOS_TOKENS;
}

int64_t sim_chat_prompt_tokens(const char *const contents[], const size_t lens[], size_t n)
{
    int64_t total = SIM_CHAT_REPLY_TOKENS;
    for (size_t i = 0; i < n; i++)
        total += SIM_CHAT_MSG_TOKENS + (contents[i] ? sim_count_tokens(contents[i], lens[i]) : 0);
    return total;
}

uint64_t sim_request_key(uint64_t server_seed, uint64_t prompt_hash, uint64_t request_seed)
{
    /* Chained mixes so that swapping two inputs gives a different key. */
    return sim_mix64(sim_mix64(sim_mix64(server_seed) ^ prompt_hash) ^ request_seed);
}

struct sim_output sim_plan_output(uint64_t key, int64_t max_tokens, bool ignore_eos)
{
    struct sim_output o = {.key = key, .completion_tokens = max_tokens, .stopped = false};
    if (ignore_eos || key % 4 != 0)
        return o;
    int64_t pct = 50 + (int64_t)((key >> 16) % 41);
    /* max_tokens <= max_model_len, far below INT64_MAX / 100: no overflow. */
    int64_t n = max_tokens * pct / 100;
    o.completion_tokens = n < 1 ? 1 : n;
    o.stopped = true;
    return o;
}

const char *sim_token_text(const struct sim_output *o, int64_t i)
{
    if (o->stopped && i == o->completion_tokens - 1)
        return "";      /* EOS decodes to nothing, as in vLLM's finish chunk */
    uint64_t h = sim_mix64(o->key ^ sim_mix64((uint64_t)i));
    return vocab[h % SIM_VOCAB_WORDS];
}

/* Salts the chunkless draw so that it is independent of the word choice. */
#define SIM_CHUNKLESS_SALT 0x6a09e667f3bcc909ULL

bool sim_token_chunkless(const struct sim_output *o, int64_t i, double p)
{
    if (p <= 0 || i >= o->completion_tokens - 1)
        return false;
    uint64_t h = sim_mix64(sim_mix64(o->key ^ SIM_CHUNKLESS_SALT) ^ sim_mix64((uint64_t)i));
    return (double)(h >> 11) * 0x1.0p-53 < p;     /* uniform in [0, 1) */
}

int64_t sim_chunk_end(const struct sim_output *o, double p, int64_t from, int64_t to)
{
    for (int64_t j = to - 1; j >= from; j--)
        if (!sim_token_chunkless(o, j, p))
            return j + 1;
    return from;
}

const char *sim_finish_reason(const struct sim_output *o)
{
    return o->stopped ? "stop" : "length";
}

int sim_check_context(int64_t max_model_len, int64_t prompt_tokens, int64_t max_tokens,
                      char *msg, size_t cap)
{
    if (prompt_tokens <= max_model_len && max_tokens <= max_model_len - prompt_tokens)
        return 0;
    snprintf(msg, cap,
             "This model's maximum context length is %" PRId64 " tokens. However, you "
             "requested %" PRId64 " tokens (%" PRId64 " in the messages, %" PRId64
             " in the completion). Please reduce the length of the messages or completion.",
             max_model_len, prompt_tokens + max_tokens, prompt_tokens, max_tokens);
    return -1;
}
