/* calibrate.h — finds how many filler words make a prompt of a target token
 * count on the server under test (its tokenizer and chat template decide):
 * a fit of tokens against words from two short probes, a jump to the
 * estimate, secant refinement, and bisection only where the server refuses
 * or truncates a prompt (docs/METHODOLOGY.md, prompt calibration). */
#ifndef ANVIL_WORKLOAD_CALIBRATE_H
#define ANVIL_WORKLOAD_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#define CALIB_MAX_STEPS 12

/* A count function's return when the server refused the prompt for its
 * length (err then holds the server's message, possibly empty). */
#define CALIB_TOO_LONG (-2)

/* calibrate()'s return when the target cannot fit the server's context. */
#define CALIB_CANNOT_FIT (-2)

/* Counts the tokens the server sees for a prompt of `words` filler words.
 * Returns the count, CALIB_TOO_LONG, or -1 on any other error (with a
 * message in err, errlen bytes). */
typedef long (*calib_count_fn)(void *ud, long words, char *err, size_t errlen);

struct calib_step {
    long words;
    long tokens;            /* the server's count; -1 when it refused the prompt as too long */
    bool truncated;         /* the count fell short of the fit: the server cut the prompt */
};

struct calibration {
    long target_tokens;     /* what was asked for */
    long tolerance_tokens;  /* record_prompt_tolerance(target): max(4, 1% of target) */
    long words;             /* the chosen filler length */
    long tokens;            /* what the server counted for it */
    double tokens_per_word; /* slope of the fit over the counted steps (1 when unknown) */
    int n_steps;
    struct calib_step steps[CALIB_MAX_STEPS];
    int converged;          /* 1 when |tokens − target| ≤ tolerance */
};

/* Searches for the filler length whose token count is within tolerance of
 * target. Probes 0 words, then a short prompt (a quarter of the way, 16 to
 * 256 words) to fit tokens = a + s·words, jumps to the fit's estimate and
 * refines by secant steps on the two counted points nearest the target;
 * typically 3–4 calls of count. A count below 80% of the fit's prediction
 * for a longer prompt, or no larger than a shorter prompt's, is a
 * truncation; it and a CALIB_TOO_LONG refusal bound the search from above,
 * and the next probes bisect below that bound. No probe aims past
 * limit_tokens (the longest prompt the server takes; -1 = unknown) or past
 * twice the word count the first fit gives for the target. At most
 * CALIB_MAX_STEPS calls; out gets every step. A target of 0 is the
 * minimal prompt (the head and the template, no filler words): one count of
 * 0 words, which is then the target met (converged, tokens what the server
 * counted).
 * Returns 0 (converged, or the closest count found: see out->converged),
 * -1 when count failed (err holds its message), or CALIB_CANNOT_FIT when a
 * prompt of target tokens is longer than the server takes (target above
 * limit_tokens, or the fit puts the target at or beyond a refused or
 * truncated prompt — within tolerance where the fit was measured at least
 * half way there, with 15% to spare where it is extrapolated further): err
 * says so with the bounds on the context the steps show and the server's
 * own message when it gave one. */
int calibrate(long target_tokens, long limit_tokens, calib_count_fn count, void *ud,
              struct calibration *out, char *err, size_t errlen);

/* Reads a failed count's message (as server_count_tokens words it: "URL
 * answered HTTP S: BODY"), drops a trailing ": " left by an empty body
 * (writing " (empty body)" instead), and returns true when it is the
 * server refusing the prompt for its length: HTTP 413, or HTTP 400 whose
 * body speaks of the context or the prompt's length ("context", "too long",
 * "maximum", "exceed", "longer than", "input_tokens"). err is modified in
 * place (errlen bytes). */
bool calib_error_is_too_long(char *err, size_t errlen);

#endif
