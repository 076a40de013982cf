/* calibrate.h — finds how many filler words make a prompt of a target token
 * count on the server under test (its tokenizer and chat template decide). */
#ifndef ANVIL_WORKLOAD_CALIBRATE_H
#define ANVIL_WORKLOAD_CALIBRATE_H

#define CALIB_MAX_STEPS 12

/* Counts the tokens the server sees for a prompt of `words` filler words.
 * Returns the count, or -1 on error (with a message in err, errlen bytes). */
typedef long (*calib_count_fn)(void *ud, long words, char *err, size_t errlen);

struct calib_step {
    long words;
    long tokens;
};

struct calibration {
    long target_tokens;     /* what was asked for */
    long tolerance_tokens;  /* record_prompt_tolerance(target): max(4, 1% of target) */
    long words;             /* the chosen filler length */
    long tokens;            /* what the server counted for it */
    int n_steps;
    struct calib_step steps[CALIB_MAX_STEPS];
    int converged;          /* 1 when |tokens − target| ≤ tolerance */
};

/* Searches for the filler length whose token count is within tolerance of
 * target (secant steps on the measured counts, at most CALIB_MAX_STEPS
 * calls of count). Fills *out with every step. Returns 0 (converged or the
 * closest count found, see out->converged), or -1 when count failed (err
 * holds its message). */
int calibrate(long target_tokens, calib_count_fn count, void *ud, struct calibration *out,
              char *err, size_t errlen);

#endif
