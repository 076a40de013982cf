/* invariants.h — checks every completed request's record against what must
 * hold when the numbers are right, so a violation is reported rather than
 * silently averaged in. */
#ifndef ANVIL_STATS_INVARIANTS_H
#define ANVIL_STATS_INVARIANTS_H

#include <stdbool.h>

#include "stats/record.h"

enum invariant {
    INV_ORDER,          /* headers ≤ first output ≤ first content ≤ end */
    INV_CHUNKS_IN_E2E,  /* every output chunk lies between first output and end; the gaps
                           between chunks plus the tail after the last add up to generation */
    INV_IGNORE_EOS,     /* output tokens = max_tokens when ignore_eos was sent */
    INV_USAGE,          /* the server reported prompt and completion tokens */
    INV_LATE_END,       /* the end came > max(5 ms, 10% of generation) after the last output:
                           a late usage chunk or [DONE] stretches E2E (a warning) */
    INV_ONE_READ,       /* ≥ 4 output chunks, all arrived within 0.1 ms, the client not late
                           (first_output_merged false): something between client and server (a
                           buffering proxy) held the stream, so TTFT, ITL and TPOT are its */
    INV_USAGE_CHUNKS,   /* usage reports fewer tokens than output chunks − 1: every chunk carries one */
    INV_UNKNOWN_LINES,  /* lines of no SSE field came (e.g. "dat: {...}"): events may have been lost */
    INV_COUNT
};

#define INV_EXAMPLES 5

struct inv_example {
    int request_index;
    enum invariant what;
    char detail[120];
};

struct invariants {
    int checked;                        /* completed requests checked */
    int violations[INV_COUNT];
    int n_examples;
    struct inv_example examples[INV_EXAMPLES];  /* the violations of the lowest request_index, in its order */
};

/* Name as written in artifacts ("order", "chunks_in_e2e", ...). */
const char *invariant_name(enum invariant i);

/* Checks the completed, measured records among n (warm-ups, cut and failed
 * ones are skipped). ignore_eos says whether it was sent. */
void invariants_check(const struct req_record *recs, int n, bool ignore_eos, struct invariants *out);

/* invariants_check over the records of it, in one pass. Returns 0, or -1
 * on the iterator's error (it->err; *out then holds what was read). */
int invariants_check_iter(struct rec_iter *it, bool ignore_eos, struct invariants *out);

/* Adds one record to *out (zeroed first by the caller): checked when
 * completed and measured, skipped otherwise; for a pass that computes
 * more than the invariants. */
void invariants_add(const struct req_record *r, bool ignore_eos, struct invariants *out);

/* Total violations (warnings included). */
int invariants_total(const struct invariants *inv);

#endif
