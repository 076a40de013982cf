/* rows.c — the artifact's request_timings and failures of a run that
 * dropped its records, read back from its journal in request_index order
 * and handed to the writer one row at a time (artifact_write_streamed), so
 * that no more than one row is in memory however many there are.
 *
 * One pass over the journal finds where each row's line is; the writer's
 * callbacks then read the lines at those places, in index order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/stage.h"

int run_rows_index(struct run_rows *w, struct jiter *j, struct rec_iter *it, const struct bench_meta *meta,
                   long n_index)
{
    long n = meta->max_request_rows > 0 && meta->max_request_rows < n_index ? meta->max_request_rows : n_index;
    *w = (struct run_rows){.j = j, .n = n > 0 ? n : 0};
    w->pos = malloc((size_t)(w->n ? w->n : 1) * sizeof *w->pos);
    w->failed = calloc((size_t)(w->n ? w->n : 1), 1);
    if (!w->pos || !w->failed) {
        snprintf(it->err, sizeof it->err, "out of memory");
        return -1;
    }
    for (long i = 0; i < w->n; i++)
        w->pos[i] = INT64_MIN;
    if (it->rewind(it) != 0)
        return -1;
    for (const struct req_record *r; (r = it->next(it));)
        if (benchmark_row_of(meta, r, NULL) && r->index >= 0 && r->index < w->n) {
            w->pos[r->index] = j->pos;
            w->failed[r->index] = r->fail != FAIL_NONE;
        }
    return it->err[0] ? -1 : 0;
}

/* The next row of the list (failed or completed ones), or NULL at its end
 * or on an error (*error 1). */
static cJSON *next_row(struct run_rows *w, long *at, bool failed, int *error)
{
    for (; *at < w->n; (*at)++) {
        long i = *at;
        if (w->pos[i] == INT64_MIN || w->failed[i] != failed)
            continue;
        (*at)++;
        const struct req_record *r = jiter_at(w->j, w->pos[i]);
        cJSON *row = !r ? NULL : failed ? artifact_failure(r) : artifact_request_timing(r);
        /* whatever a server sent back may echo a credential */
        if (row && w->secrets && secrets_scrub_json(w->secrets, row) != 0) {
            cJSON_Delete(row);
            row = NULL;
        }
        if (!row)
            *error = 1;
        return row;
    }
    return NULL;
}

cJSON *run_rows_timing(void *ud, int *error)
{
    struct run_rows *w = ud;
    return next_row(w, &w->at_timing, false, error);
}

cJSON *run_rows_failure(void *ud, int *error)
{
    struct run_rows *w = ud;
    return next_row(w, &w->at_failure, true, error);
}

void run_rows_free(struct run_rows *w)
{
    free(w->pos);
    free(w->failed);
    w->pos = NULL;
    w->failed = NULL;
}
