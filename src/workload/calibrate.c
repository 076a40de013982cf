/* calibrate.c — prompt length calibration: fit, jump, secant, bisect where
 * the server refuses or truncates (see calibrate.h). */
#include "workload/calibrate.h"

#include "stats/record.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A short probe's length: a quarter of the way to the target (counted from
 * the 0-word prompt) at about a token per word, 16 to 256 words — long
 * enough for a slope, short enough to fit any context and cost little. */
#define SHORT_MIN 16
#define SHORT_MAX 256
/* A count under this share of the fit's prediction for a longer prompt is
 * a truncation (tokens per word vary by a few percent along the filler). */
#define TRUNCATED_SHARE 0.8

/* How far a fit's slope may be off where it is extrapolated beyond twice
 * its measured range (tokens per word of the first 16–256 filler words
 * against the rest: a few percent for English words). */
#define EXTRAPOLATION_MARGIN 0.15

/* tokens ≈ a + s·words through two counted steps; hi_words is the larger
 * of their word counts (how far the fit is measured, not extrapolated). */
struct fit {
    bool ok;
    double a, s;
    long hi_words;
};

static bool counted(const struct calib_step *st)
{
    return st->tokens >= 0 && !st->truncated;
}

/* The line through the two counted steps nearest the target in tokens (with
 * different word counts); not ok when there are none or it does not rise. */
static struct fit fit_line(const struct calibration *c)
{
    int i1 = -1, i2 = -1;
    for (int i = 0; i < c->n_steps; i++)
        if (counted(&c->steps[i]) && (i1 < 0 || labs(c->steps[i].tokens - c->target_tokens) <
                                                    labs(c->steps[i1].tokens - c->target_tokens)))
            i1 = i;
    for (int i = 0; i1 >= 0 && i < c->n_steps; i++)
        if (counted(&c->steps[i]) && c->steps[i].words != c->steps[i1].words &&
            (i2 < 0 || labs(c->steps[i].tokens - c->target_tokens) < labs(c->steps[i2].tokens - c->target_tokens)))
            i2 = i;
    if (i2 < 0)
        return (struct fit){.ok = false};
    const struct calib_step *p = &c->steps[i1], *q = &c->steps[i2];
    double s = (double)(q->tokens - p->tokens) / (double)(q->words - p->words);
    return (struct fit){.ok = s > 0, .s = s, .a = (double)p->tokens - s * (double)p->words,
                        .hi_words = p->words > q->words ? p->words : q->words};
}

/* Whether a count looks cut: no more tokens than a counted prompt with fewer
 * words, or (beyond the fit's measured range) well under its prediction. */
static bool looks_truncated(const struct calibration *c, struct fit f, long words, long tokens)
{
    long most_words = -1;
    for (int i = 0; i < c->n_steps - 1; i++) {
        const struct calib_step *st = &c->steps[i];
        if (!counted(st))
            continue;
        if (st->words < words && st->tokens >= tokens)
            return true;
        if (st->words > most_words)
            most_words = st->words;
    }
    return f.ok && words > most_words && (double)tokens < TRUNCATED_SHARE * (f.a + f.s * (double)words);
}

static bool tried(const struct calibration *c, long words)
{
    for (int i = 0; i < c->n_steps; i++)
        if (c->steps[i].words == words)
            return true;
    return false;
}

/* Fills words, tokens, converged and tokens_per_word from the counted step
 * nearest the target and the two counted steps farthest apart. */
static void choose(struct calibration *c)
{
    int best = -1, lo = -1, hi = -1;
    for (int i = 0; i < c->n_steps; i++) {
        const struct calib_step *st = &c->steps[i];
        if (!counted(st))
            continue;
        if (best < 0 || labs(st->tokens - c->target_tokens) < labs(c->steps[best].tokens - c->target_tokens))
            best = i;
        if (lo < 0 || st->words < c->steps[lo].words)
            lo = i;
        if (hi < 0 || st->words > c->steps[hi].words)
            hi = i;
    }
    if (best < 0)
        return;
    c->words = c->steps[best].words;
    c->tokens = c->steps[best].tokens;
    c->converged = labs(c->tokens - c->target_tokens) <= c->tolerance_tokens;
    const struct calib_step *a = &c->steps[lo], *b = &c->steps[hi];
    if (b->words > a->words && b->tokens > a->tokens)
        c->tokens_per_word = (double)(b->tokens - a->tokens) / (double)(b->words - a->words);
    else if (c->words > 0 && c->tokens > 0)
        c->tokens_per_word = (double)c->tokens / (double)c->words;
}

/* The message of a target that cannot fit, from the refused or truncated
 * step at bad words. Returns CALIB_CANNOT_FIT. */
static int cannot_fit(const struct calibration *c, struct fit f, long bad, const char *refusal,
                      char *err, size_t errlen)
{
    const struct calib_step *st = NULL;
    long kept = -1;
    for (int i = 0; i < c->n_steps; i++) {
        if (c->steps[i].words == bad && !counted(&c->steps[i]))
            st = &c->steps[i];
        if (counted(&c->steps[i]) && c->steps[i].tokens > kept)
            kept = c->steps[i].tokens;
    }
    long about = f.ok ? (long)llround(f.a + f.s * (double)bad) : -1;
    char context[128] = "";     /* a truncated count, as what was kept whole, fit the context */
    long fits = st && st->truncated && st->tokens > kept ? st->tokens : kept;
    if (about > fits && fits >= 0)
        snprintf(context, sizeof context, ": the server's context is between %ld and about %ld tokens",
                 fits, about);
    char took[64] = "";
    if (kept >= 0)
        snprintf(took, sizeof took, "; the longest it %s had %ld tokens",
                 st && st->truncated ? "kept whole" : "took", kept);
    if (st && st->truncated)
        snprintf(err, errlen, "prompt of %ld tokens cannot fit%s (it truncated a prompt of %ld filler "
                 "words to %ld tokens%s)", c->target_tokens, context, bad, st->tokens, took);
    else
        snprintf(err, errlen, "prompt of %ld tokens cannot fit%s (it refused a prompt of %ld filler "
                 "words as too long%s)%s%s", c->target_tokens, context, bad, took,
                 refusal[0] ? ": " : "", refusal);
    return CALIB_CANNOT_FIT;
}

/* The next filler length, or -1 to stop (no progress is possible). lo/hi
 * bracket the target in words (-1 / LONG_MAX when open), bad is the fewest
 * words refused or truncated (LONG_MAX: none), cap the most words a probe
 * may have. Sets *unfit when the fit puts the target at or past bad. */
static long next_words(const struct calibration *c, long lo, long hi, long bad, long cap, long limit,
                       bool *unfit)
{
    struct fit f = fit_line(c);
    long next;
    if (c->n_steps == 1) {      /* after the 0-word probe: the short one */
        long n = (c->target_tokens - c->steps[0].tokens) / 4;
        next = n < SHORT_MIN ? SHORT_MIN : n > SHORT_MAX ? SHORT_MAX : n;
    } else if (f.ok) {
        double aim = ((double)c->target_tokens - f.a) / f.s;
        /* the refused or truncated prompt was no longer than the target, by
         * the fit: as it stands where it was measured at least half way,
         * with a margin for its slope where it is extrapolated further */
        double at_bad = f.a + f.s * (double)bad;
        if (bad != LONG_MAX && (f.hi_words * 2 >= bad
                                ? at_bad <= (double)(c->target_tokens + c->tolerance_tokens)
                                : at_bad * (1 + EXTRAPOLATION_MARGIN) <= (double)c->target_tokens)) {
            *unfit = true;
            return -1;
        }
        next = aim < 0 ? 0 : aim > (double)cap ? cap : (long)llround(aim);
        if (limit >= 0) {
            double most = ((double)limit - f.a) / f.s;
            if ((double)next > most)
                next = most < 0 ? 0 : (long)floor(most);
        }
    } else {
        next = -1;
    }
    if (next <= lo || next >= hi) {
        if (lo < 0 || hi == LONG_MAX || hi - lo < 2)
            return next >= 0 && next > lo && next < hi && !tried(c, next) ? next : -1;
        next = lo + (hi - lo) / 2;
    }
    return tried(c, next) ? -1 : next;
}

int calibrate(long target, long limit, calib_count_fn count, void *ud, struct calibration *out,
              char *err, size_t errlen)
{
    *out = (struct calibration){.target_tokens = target, .tolerance_tokens = record_prompt_tolerance(target),
                                .tokens_per_word = 1};
    if (limit >= 0 && target > limit) {
        snprintf(err, errlen, "prompt of %ld tokens cannot fit: the server takes prompts of at most "
                 "%ld tokens", target, limit);
        return CALIB_CANNOT_FIT;
    }
    char refusal[512] = "";
    long lo = -1, hi = LONG_MAX, bad = LONG_MAX, cap = LONG_MAX, w = 0;
    for (int i = 0; i < CALIB_MAX_STEPS && w >= 0; i++) {
        struct fit before = fit_line(out);
        long t = count(ud, w, err, errlen);
        if (t < 0 && t != CALIB_TOO_LONG)
            return -1;
        struct calib_step *st = &out->steps[out->n_steps++];
        *st = (struct calib_step){.words = w, .tokens = t == CALIB_TOO_LONG ? -1 : t};
        if (t == CALIB_TOO_LONG)
            snprintf(refusal, sizeof refusal, "%s", err);
        else
            st->truncated = looks_truncated(out, before, w, t);
        if (!counted(st)) {
            if (w < bad)
                bad = w;
            if (w < hi)
                hi = w;
            if (w == 0)         /* not even the head and template fit */
                return cannot_fit(out, before, 0, refusal, err, errlen);
        } else if (labs(t - target) <= out->tolerance_tokens) {
            break;
        } else if (t < target) {
            lo = w > lo ? w : lo;
        } else {
            hi = w < hi ? w : hi;
        }
        if (i == 0 && target == 0) {    /* context 0: the minimal prompt, whatever it counts */
            choose(out);
            out->converged = 1;
            return 0;
        }
        if (i == 0 && t > target)       /* the 0-word prompt is already too long */
            break;
        bool unfit = false;
        w = next_words(out, lo, hi, bad, cap, limit, &unfit);
        if (unfit)
            return cannot_fit(out, fit_line(out), bad, refusal, err, errlen);
        if (out->n_steps == 2 && w >= 0 && cap == LONG_MAX)   /* the first fit's estimate, doubled */
            cap = 2 * w + SHORT_MIN;
    }
    choose(out);
    return 0;
}

/* Case-insensitive substring search. */
static bool has(const char *s, const char *word)
{
    for (size_t n = strlen(word); *s; s++)
        if (strncasecmp(s, word, n) == 0)
            return true;
    return false;
}

bool calib_error_is_too_long(char *err, size_t errlen)
{
    size_t n = strlen(err);
    while (n && isspace((unsigned char)err[n - 1]))
        n--;
    if (n && err[n - 1] == ':') {
        err[n - 1] = '\0';
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (empty body)");
    } else {
        err[n] = '\0';
    }
    if (has(err, "HTTP 413"))
        return true;
    if (!has(err, "HTTP 400"))
        return false;
    static const char *const words[] = {"context", "too long", "maximum", "exceed", "longer than",
                                        "input_tokens"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (has(err, words[i]))
            return true;
    return false;
}
