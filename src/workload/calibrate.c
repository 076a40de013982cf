/* calibrate.c — prompt length calibration by secant search. */
#include <stddef.h>

#include "workload/calibrate.h"

#include "stats/record.h"

#include <math.h>
#include <stdlib.h>

static long clamp_words(double w)
{
    return w < 0 ? 0 : (long)llround(w);
}

int calibrate(long target, calib_count_fn count, void *ud, struct calibration *out,
              char *err, size_t errlen)
{
    *out = (struct calibration){.target_tokens = target, .tolerance_tokens = record_prompt_tolerance(target)};
    long w = target, best = -1;
    double slope = 1.0;     /* tokens per word; measured after the first step */
    for (int i = 0; i < CALIB_MAX_STEPS; i++) {
        long t = count(ud, w, err, errlen);
        if (t < 0)
            return -1;
        out->steps[out->n_steps++] = (struct calib_step){w, t};
        if (best < 0 || labs(t - target) < labs(out->steps[best].tokens - target))
            best = out->n_steps - 1;
        if (labs(t - target) <= out->tolerance_tokens)
            break;
        if (i > 0) {
            struct calib_step a = out->steps[i - 1];
            if (w != a.words && t != a.tokens)
                slope = (double)(t - a.tokens) / (double)(w - a.words);
        } else if (w > 0 && t > 0) {
            slope = (double)t / (double)w;
        }
        if (slope <= 0)
            slope = 1.0;
        long next = clamp_words((double)w + (double)(target - t) / slope);
        if (next == w)          /* no progress possible: 0 words and still too long, or stuck */
            break;
        w = next;
    }
    out->words = out->steps[best].words;
    out->tokens = out->steps[best].tokens;
    out->converged = labs(out->tokens - target) <= out->tolerance_tokens;
    return 0;
}
