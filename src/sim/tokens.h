/* tokens.h — the simulator's deterministic token model.
 *
 * No real tokenizer: a token is a maximal run of non-whitespace bytes, the
 * chat template costs a fixed number of tokens per message, and output tokens
 * are words drawn from a fixed vocabulary by a hash. Everything is a pure
 * function of its arguments, so tests (and the client's own checks) can
 * predict every count the server reports. docs/SIM.md states the rules. */
#ifndef ANVIL_SIM_TOKENS_H
#define ANVIL_SIM_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_BOS_TOKENS 1          /* completions: one BOS token before the prompt */
#define SIM_CHAT_MSG_TOKENS 3     /* chat template tokens around each message */
#define SIM_CHAT_REPLY_TOKENS 3   /* chat template tokens opening the assistant's turn */
#define SIM_VOCAB_WORDS 128       /* words an output token can be */
#define SIM_HASH_INIT 0xcbf29ce484222325ULL /* FNV-1a offset basis: start of every hash */

/* Token ids reported by /tokenize for the template's special tokens. Word
 * ids are >= SIM_TOKEN_ID_FIRST_WORD and < SIM_TOKEN_ID_LIMIT. */
#define SIM_TOKEN_ID_BOS 1
#define SIM_TOKEN_ID_MSG_START 2
#define SIM_TOKEN_ID_MSG_END 3
#define SIM_TOKEN_ID_NEWLINE 4
#define SIM_TOKEN_ID_FIRST_WORD 256
#define SIM_TOKEN_ID_LIMIT 32000

/* How prompt text splits into tokens (--tokenizer). WORDS: a token is a
 * maximal run of non-whitespace bytes. PIECES, after the pre-tokenizers of
 * GPT-2 and Llama 3 and BPE's splitting of long or rare strings: a run of at
 * most SIM_PIECE_LETTERS letters (ASCII letters and bytes >= 0x80), a run of
 * at most SIM_PIECE_DIGITS digits, or one other byte; whitespace separates
 * tokens in both. "a3f9-0001:" is 1 token in WORDS, 8 in PIECES. */
enum sim_tokenizer { SIM_TOKENIZER_WORDS, SIM_TOKENIZER_PIECES };
#define SIM_PIECE_LETTERS 6
#define SIM_PIECE_DIGITS 3

/* Returns true for the bytes that separate tokens: space, \t, \n, \r, \f, \v. */
static inline bool sim_is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Counts the tokens in the len bytes at s (need not be NUL-terminated; NUL
 * bytes are ordinary token bytes). O(len). Returns 0 for len 0. */
int64_t sim_count_tokens(const char *s, size_t len);

/* Iterates over the tokens of the len bytes at s. *pos is the iterator (start
 * it at 0). Returns true and sets *tok_start and *tok_len to the next token's
 * offset and length (> 0), advancing *pos past it; false when none is left. */
bool sim_next_token(const char *s, size_t len, size_t *pos, size_t *tok_start,
                    size_t *tok_len);

/* sim_count_tokens and sim_next_token under tokenizer t. */
int64_t sim_count_tokens_as(enum sim_tokenizer t, const char *s, size_t len);
bool sim_next_token_as(enum sim_tokenizer t, const char *s, size_t len, size_t *pos,
                       size_t *tok_start, size_t *tok_len);

/* Parses "words" or "pieces". Returns 0, or -1. */
int sim_tokenizer_parse(const char *name, enum sim_tokenizer *out);

/* Continues a 64-bit FNV-1a hash h over n bytes at p. Start with
 * SIM_HASH_INIT. Used for prompt hashes: stable across runs and machines. */
uint64_t sim_hash_bytes(uint64_t h, const void *p, size_t n);

/* splitmix64's finalizer: a bijective scramble of x with good avalanche. */
uint64_t sim_mix64(uint64_t x);

/* The id /tokenize reports for the token of len bytes at tok: a hash of its
 * bytes in [SIM_TOKEN_ID_FIRST_WORD, SIM_TOKEN_ID_LIMIT). */
int64_t sim_token_id(const char *tok, size_t len);

/* usage.prompt_tokens of a /v1/completions prompt of len bytes:
 * tokens(prompt) + SIM_BOS_TOKENS. */
int64_t sim_completion_prompt_tokens(const char *prompt, size_t len);

/* usage.prompt_tokens of a chat request whose n messages have the given
 * contents (contents[i] is lens[i] bytes; NULL with length 0 for no content):
 * sum over messages of (SIM_CHAT_MSG_TOKENS + tokens(content)) plus
 * SIM_CHAT_REPLY_TOKENS for the assistant's turn. */
int64_t sim_chat_prompt_tokens(const char *const contents[], const size_t lens[], size_t n);

/* The key every output decision of one request derives from: a hash of the
 * server's --seed, the prompt hash and the request's own seed (pass 0 when
 * the request has none, or uses greedy sampling). */
uint64_t sim_request_key(uint64_t server_seed, uint64_t prompt_hash, uint64_t request_seed);

/* What a request will generate. */
struct sim_output {
    uint64_t key;               /* from sim_request_key */
    int64_t completion_tokens;  /* tokens in the reply, >= 1; includes the EOS token when stopped */
    bool stopped;               /* true: the last token is EOS, finish_reason "stop"; else "length" */
};

/* Plans the reply for a request with key, max_tokens (1 .. 2^56) and ignore_eos.
 * ignore_eos: exactly max_tokens tokens, "length". Otherwise when key % 4 == 0
 * the reply stops at EOS after floor(max_tokens * p / 100) tokens, at least 1,
 * where p = 50 + (key >> 16) % 41 is in [50, 90]; the EOS token is the last of
 * those and is counted, as vLLM counts it. Else max_tokens tokens, "length". */
struct sim_output sim_plan_output(uint64_t key, int64_t max_tokens, bool ignore_eos);

/* The text of token i (0-based, < completion_tokens) of the planned reply:
 * " word" (leading space) from the vocabulary, or "" for the EOS token.
 * Returns static storage; never NULL. */
const char *sim_token_text(const struct sim_output *o, int64_t i);

/* Whether output token i (0-based) of the planned reply produces no SSE
 * chunk of its own (--tokens-without-chunk p, 0 <= p < 1): its text waits
 * and joins the next chunk that is sent, as llama-server holds a token that
 * ends in partial UTF-8 or is a control token. A draw of (o->key, i) below
 * p, so deterministic from --seed and the request; the reply's last token
 * is never held (its chunk ends the reply). */
bool sim_token_chunkless(const struct sim_output *o, int64_t i, double p);

/* Where the chunk sent now ends. Tokens [from, to) exist and are in no chunk
 * yet (from: the first token not yet sent; to: tokens generated so far);
 * the chunk carries tokens [from, e), and tokens [e, to) wait for a later
 * one. e is one past the last token in [from, to) that has a chunk of its
 * own (sim_token_chunkless false), or from when there is none (no chunk is
 * sent now). 0 <= from <= to <= o->completion_tokens. */
int64_t sim_chunk_end(const struct sim_output *o, double p, int64_t from, int64_t to);

/* finish_reason of the planned reply: "stop" or "length" (static storage). */
const char *sim_finish_reason(const struct sim_output *o);

/* Checks that prompt_tokens + max_tokens fits max_model_len (all in tokens).
 * Returns 0 when it fits; otherwise writes vLLM's message ("This model's
 * maximum context length is M tokens. However, you requested N tokens (P in
 * the messages, K in the completion). Please reduce the length of the
 * messages or completion.") into msg (cap bytes, NUL-terminated, truncated if
 * short) and returns -1. */
int sim_check_context(int64_t max_model_len, int64_t prompt_tokens, int64_t max_tokens,
                      char *msg, size_t cap);

#endif
