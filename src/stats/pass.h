/* pass.h — one pass over a run's records (struct rec_iter, record.h) for
 * the stats computed from them: begin rewinds, the loop takes it->next
 * until NULL, end says whether that NULL was the end or the iterator's
 * error. Each pass may cost a read of the whole journal, so the functions
 * say how many they make. */
#ifndef ANVIL_STATS_PASS_H
#define ANVIL_STATS_PASS_H

#include "stats/record.h"

/* Starts a pass: forgets an earlier error, rewinds. Returns 0, or -1 (it->err says why). */
static inline int pass_begin(struct rec_iter *it)
{
    it->err[0] = '\0';
    return it->rewind(it);
}

/* After it->next returned NULL: 0 at the end, -1 on the iterator's error (it->err). */
static inline int pass_end(const struct rec_iter *it)
{
    return it->err[0] ? -1 : 0;
}

#endif
