/* aggregate.h — what `anvil aggregate` does, as a library call: round
 * artifacts (benchmark/v1) and/or an existing matrix's rows → a matrix
 * document (docs/MATRIX.md) with per target × case median, min and max. */
#ifndef ANVIL_ARTIFACT_AGGREGATE_H
#define ANVIL_ARTIFACT_AGGREGATE_H

#include "artifact/matrix.h"

/* The inputs. Strings are borrowed. */
struct aggregate_opts {
    const char *from_rows;                  /* a matrix whose rows and description carry over; NULL = none */
    const char *meta_text[MATRIX_N_META];   /* description fields by matrix_meta_keys, as typed
                                               (counts already checked); NULL = not given */
    const char *const *rounds;              /* round artifact paths */
    int n_rounds;
};

/* Reads every input (each round digested by its bytes: one given twice, or
 * already a row of from_rows, is refused; so is a round whose sweep target,
 * case and round repeat an earlier one), assembles the matrix into *doc with
 * provenance from argc/argv (redacted). Description fields: meta_text, else
 * from_rows' non-null value, else what every round agrees on. Returns 0
 * (release *doc with matrix_free), or -1 with "PATH: why" in err. */
int aggregate_build(const struct aggregate_opts *o, int argc, char **argv, struct matrix *doc,
                    char *err, size_t errlen);

#endif
