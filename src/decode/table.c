/* table.c — the decode matrix's terminal table: context × concurrency. */
#include "decode/table.h"

#include "decode/grid.h"

/* The cell of results at (conc, ctx), or NULL. */
static const cJSON *cell_at(const cJSON *results, double conc, double ctx)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, results) {
        if (cJSON_GetNumberValue(cJSON_GetObjectItem(r, "concurrency")) == conc &&
            cJSON_GetNumberValue(cJSON_GetObjectItem(r, "context_tokens")) == ctx)
            return r;
    }
    return NULL;
}

void decode_print_table(FILE *out, const cJSON *doc)
{
    const cJSON *meta = cJSON_GetObjectItem(doc, "metadata");
    const cJSON *conc = cJSON_GetObjectItem(meta, "concurrency_levels");
    const cJSON *ctx = cJSON_GetObjectItem(meta, "context_lengths");
    const cJSON *results = cJSON_GetObjectItem(doc, "results");
    fprintf(out, "\nSustained decode, aggregate output tok/s (* capacity-limited, ! warm-up timed out, - not run)"
            "\n%-10s", "context");
    const cJSON *c, *x;
    cJSON_ArrayForEach(c, conc) {
        char h[32];
        snprintf(h, sizeof h, "C=%.0f", c->valuedouble);
        fprintf(out, " %12s", h);
    }
    fputc('\n', out);
    cJSON_ArrayForEach(x, ctx) {
        char label[32];
        decode_size_label((long)x->valuedouble, label, sizeof label);
        fprintf(out, "%-10s", label);
        cJSON_ArrayForEach(c, conc) {
            const cJSON *r = cell_at(results, c->valuedouble, x->valuedouble);
            const cJSON *tps = cJSON_GetObjectItem(r, "aggregate_tps");
            char v[32];
            if (!r || !cJSON_IsNumber(tps))
                snprintf(v, sizeof v, "-");
            else
                snprintf(v, sizeof v, "%.1f%s%s", tps->valuedouble,
                         cJSON_IsTrue(cJSON_GetObjectItem(r, "capacity_limited")) ? "*" : "",
                         cJSON_IsTrue(cJSON_GetObjectItem(r, "warmup_timed_out")) ? "!" : "");
            fprintf(out, " %12s", v);
        }
        fputc('\n', out);
    }
}
