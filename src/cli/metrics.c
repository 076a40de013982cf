/* metrics.c — `anvil metrics [--format table|json]`: the metric registry
 * (stats/registry.h) as a table or as JSON {"metrics": [{name, unit, ...}]}. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "report/rtable.h"
#include "stats/registry.h"

static const char *const formats[] = {"table", "json", NULL};
enum { FMT_TABLE, FMT_JSON };

struct metrics_cli {
    int format;
};

static const struct flag_spec flags[] = {
    {"format", NULL, FLAG_CHOICE, offsetof(struct metrics_cli, format), "table|json", "table",
     "how to print: aligned columns, or JSON {\"metrics\": [{name, unit, definition, ...}]}",
     .choices = formats},
    {0},
};

static const enum metric_mode modes[] = {METRIC_REQUESTS, METRIC_DURATION, METRIC_BURST};
#define N_MODES (sizeof modes / sizeof *modes)

/* The mode names of bits as an array. */
static cJSON *mode_array(unsigned bits)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < N_MODES; i++)
        if (bits & (unsigned)modes[i])
            cJSON_AddItemToArray(a, cJSON_CreateString(metric_mode_name(modes[i])));
    return a;
}

static cJSON *row_json(const struct metric_def *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON *al = cJSON_AddArrayToObject(o, "aliases");
    for (int i = 0; al && i < METRIC_MAX_ALIASES && d->aliases[i]; i++)
        cJSON_AddItemToArray(al, cJSON_CreateString(d->aliases[i]));
    cJSON_AddStringToObject(o, "unit", d->unit);
    cJSON_AddStringToObject(o, "label", d->label);
    char col[96];
    cJSON_AddStringToObject(o, "column", metric_column(d->name, d->column && strstr(d->column, "{stat}") ? "{stat}" : NULL,
                                                       col, sizeof col));
    cJSON_AddStringToObject(o, "definition", d->definition);
    cJSON_AddStringToObject(o, "definition_source", d->source);
    cJSON_AddStringToObject(o, "formula_source", d->formula_source);
    if (d->semantic_key)
        cJSON_AddStringToObject(o, "metric_semantics_key", d->semantic_key);
    else
        cJSON_AddNullToObject(o, "metric_semantics_key");
    cJSON_AddItemToObject(o, "modes", mode_array(d->modes));
    cJSON_AddStringToObject(o, "better", metric_better_name(d->better));
    cJSON_AddItemToObject(o, "headline", mode_array(d->headline));
    return o;
}

static int print_json(FILE *out)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "metrics");
    for (size_t i = 0; arr && i < metric_count(); i++)
        cJSON_AddItemToArray(arr, row_json(metric_at(i)));
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s)
        return -1;
    int rc = fprintf(out, "%s\n", s) < 0 ? -1 : 0;
    free(s);
    return rc;
}

/* "requests, duration" for bits; "-" for none. */
static void mode_text(char *buf, size_t cap, unsigned bits)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_MODES; i++)
        if (bits & (unsigned)modes[i])
            n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? ", " : "", metric_mode_name(modes[i]));
    if (!n)
        snprintf(buf, cap, "-");
}

static int print_table(FILE *out)
{
    struct rdoc doc = {0};
    struct rtable *t = rdoc_table(&doc, "Metrics (docs/METHODOLOGY.md)", 6, "name", "unit", "better", "modes",
                                  "headline in", "definition");
    for (size_t i = 0; t && i < metric_count(); i++) {
        const struct metric_def *d = metric_at(i);
        char m[64], h[64];
        mode_text(m, sizeof m, d->modes);
        mode_text(h, sizeof h, d->headline);
        rtable_text(t, d->name);
        rtable_text(t, d->unit);
        rtable_text(t, metric_better_name(d->better));
        rtable_text(t, m);
        rtable_text(t, h);
        rtable_text(t, d->definition);
    }
    int rc = rdoc_print(&doc, RF_TABLE, out);
    rdoc_free(&doc);
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil metrics [--format table|json]\n"
            "Prints every metric anvil reports: its name (an artifact key without statistic and unit\n"
            "suffix), unit, definition (docs/METHODOLOGY.md's words), whose formula it is, the modes it\n"
            "applies to, which way is better, and the modes whose headline it is.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status: 0 printed, 1 the output cannot be written, 2 usage "
            "error.\n", "-h, --help");
}

int metrics_main(int argc, char **argv)
{
    struct metrics_cli m = {0};
    int rc = flags_defaults("metrics", flags, &m);
    if (rc == 0)
        rc = flags_parse("metrics", flags, &m, argc, argv, NULL, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc != 0)
        return 2;
    if ((m.format == FMT_JSON ? print_json(stdout) : print_table(stdout)) != 0) {
        fprintf(stderr, "anvil metrics: out of memory or cannot write the output\n");
        return 1;
    }
    return 0;
}
