/* prompt.h — synthetic prompt text: a head unique to each request, then
 * filler words. The head comes first, before anything requests share, so a
 * prefix cache (vLLM, SGLang, llama.cpp) can reuse nothing of one request
 * for another but the chat template's own tokens. The filler is the same
 * seeded word sequence for every request, so every prompt of a run has the
 * same token count. */
#ifndef ANVIL_WORKLOAD_PROMPT_H
#define ANVIL_WORKLOAD_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* The prompt text's scheme; it enters the calibration cache's key, so a
 * change of head or filler words invalidates cached calibrations. */
#define PROMPT_SCHEME "anvil-prompt/2"

/* Words in a head, and the most bytes one takes (words and spaces, no NUL). */
#define PROMPT_HEAD_WORDS 4
#define PROMPT_HEAD_MAX 32

/* Whose head: a measured (or warm-up) request's, or a calibration prompt's.
 * Calibration heads start with a word no measured head starts with, so a
 * server's prefix cache never serves a measured request from a calibration
 * probe. */
enum prompt_space { PROMPT_MEASURED, PROMPT_CALIBRATION };

/* Writes the head of prompt `index` in `space` for the run's salt into out
 * (cap ≥ PROMPT_HEAD_MAX + 1 bytes; NUL-terminated): PROMPT_HEAD_WORDS
 * short common words separated by spaces, no leading or trailing space.
 * The words are the digits of index in a mixed radix (the first digit
 * first), each shifted by a salt-derived offset: within one run and space
 * two heads share their first word only when their indexes differ by a
 * multiple of 63, and all four only beyond 16 million requests; runs with
 * different salts rarely share more than a first word. Returns the length
 * written (0 when cap is too small). Allocates nothing: it runs while other
 * streams are being timed. */
size_t prompt_head(char *out, size_t cap, uint64_t salt, enum prompt_space space, long index);

/* Appends " w1 w2 ... wn" to out: n filler words (each after one space)
 * drawn from a fixed English vocabulary by seed. Returns 0, or -1 when out
 * is full. */
int prompt_filler(struct buf *out, long words, uint64_t seed);

/* Appends block `index` of a trace's prompt to out: " " and a head unique
 * to (salt, index) (prompt_head's words, so blocks of different indexes
 * differ from their first words), then filler words seeded by salt and
 * index, `words` words in all (at least the head's). Equal (salt, index)
 * give equal text, so two prompts built of the same blocks share exactly
 * them. Copies words with memcpy (it runs on the measuring loop). Returns
 * 0, or -1 when out is full. */
int prompt_block(struct buf *out, uint64_t salt, long index, long words);

/* A fresh random 64-bit value (from getrandom), for the per-run salt. */
uint64_t prompt_random_salt(void);

#endif
