/* html_decode.c — a decode matrix for the report (see html_parts.h). */
#include "report/html_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>


static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The distinct values of v[0..n) sorted, into u (n slots); returns how many. */
static size_t distinct(const long *v, size_t n, long *u)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && u[j] != v[i])
            j++;
        if (j == k)
            u[k++] = v[i];
    }
    qsort(u, k, sizeof *u, cmp_long);
    return k;
}

cJSON *html_decode(const struct artifact_any *a, const struct cost *cost)
{
    const struct decode_matrix *m = &a->u.decode;
    size_t n = m->n_results;
    long *ctx = malloc(n * sizeof *ctx), *conc = malloc(n * sizeof *conc), *uc = malloc(n * sizeof *uc),
         *un = malloc(n * sizeof *un);
    cJSON *o = cJSON_CreateObject();
    if (!ctx || !conc || !uc || !un)
        goto out;
    for (size_t i = 0; i < n; i++) {
        ctx[i] = m->results[i].context_tokens;
        conc[i] = m->results[i].concurrency;
    }
    size_t nctx = distinct(ctx, n, uc), nconc = distinct(conc, n, un);
    cJSON_AddStringToObject(o, "name", html_base_name(a->path));
    cJSON *cc = cJSON_AddArrayToObject(o, "concurrency");
    for (size_t j = 0; j < nconc; j++)
        cJSON_AddItemToArray(cc, cJSON_CreateNumber((double)un[j]));
    bool priced = cost && isfinite(cost->gpu_hour_usd);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows"), *flags = cJSON_AddArrayToObject(o, "flags");
    cJSON *cost_rows = priced ? cJSON_AddArrayToObject(o, "cost_rows") : NULL;
    for (size_t i = 0; i < nctx; i++) {
        cJSON *r = cJSON_CreateArray(), *f = cJSON_CreateArray(), *cr = cJSON_CreateArray();
        char label[32];
        snprintf(label, sizeof label, "%ld", uc[i]);     /* a row label, not a value to shade */
        cJSON_AddItemToArray(r, cJSON_CreateString(label));
        cJSON_AddItemToArray(cr, cJSON_CreateString(label));
        cJSON_AddItemToArray(f, cJSON_CreateFalse());
        for (size_t j = 0; j < nconc; j++) {
            const struct decode_cell *cell = NULL;
            for (size_t k = 0; k < n; k++)
                if (m->results[k].context_tokens == uc[i] && m->results[k].concurrency == un[j])
                    cell = &m->results[k];
            cJSON_AddItemToArray(r, cell ? html_num(cell->aggregate_tps) : cJSON_CreateNull());
            cJSON_AddItemToArray(cr, cell ? html_num(cost_per_mtok(cost, cell->aggregate_tps)) : cJSON_CreateNull());
            cJSON_AddItemToArray(f, cJSON_CreateBool(cell && (cell->capacity_limited || cell->underfilled)));
        }
        cJSON_AddItemToArray(rows, r);
        cJSON_AddItemToArray(flags, f);
        if (cost_rows)
            cJSON_AddItemToArray(cost_rows, cr);
        else
            cJSON_Delete(cr);
    }
out:
    free(ctx);
    free(conc);
    free(uc);
    free(un);
    return o;
}
