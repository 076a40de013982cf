/* failures.c — failed requests by status and category (failures.h). */
#include "report/failures.h"

#include <string.h>

#define MAX_GROUPS 16

struct group {
    long status;
    enum fail_kind kind;
    int count;
    char first[160];        /* the first record's message, on one line */
};

/* The message on one line: control characters as spaces, cut at cap. */
static void one_line(const char *m, char *out, size_t cap)
{
    size_t i = 0;
    for (; m[i] && i + 1 < cap; i++)
        out[i] = (unsigned char)m[i] < 0x20 ? ' ' : m[i];
    out[i] = '\0';
    if (m[i] && cap > 4)
        memcpy(out + cap - 4, "...", 4);
}

void report_failures(FILE *out, struct rec_iter *it)
{
    struct group g[MAX_GROUPS];
    int ng = 0, other = 0;
    if (it->rewind(it) != 0)
        return;
    for (const struct req_record *r; (r = it->next(it));) {
        if (!r->t_start || r->warmup || r->cut || r->fail == FAIL_NONE)
            continue;
        int k = 0;
        while (k < ng && !(g[k].status == r->http_status && g[k].kind == r->fail))
            k++;
        if (k == ng && ng == MAX_GROUPS) {
            other++;
            continue;
        }
        if (k == ng) {
            g[ng] = (struct group){r->http_status, r->fail, 0, ""};
            one_line(r->fail_msg, g[ng++].first, sizeof g[0].first);
        }
        g[k].count++;
    }
    if (!ng)
        return;
    fprintf(out, "Failures by status and category (first message of each):\n");
    for (int k = 0; k < ng; k++) {
        char status[32] = "no response";
        if (g[k].status > 0)
            snprintf(status, sizeof status, "HTTP %ld", g[k].status);
        fprintf(out, "  %6d  %-11s %-14s %s\n", g[k].count, status, fail_kind_name(g[k].kind), g[k].first);
    }
    if (other)
        fprintf(out, "  %6d  in other groups\n", other);
}
