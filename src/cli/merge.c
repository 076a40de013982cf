/* merge.c — `anvil merge SHARD_ARTIFACTS... --out FILE`: the artifacts of
 * the shards of one run (`anvil run --shard I/N`) merged into the artifact
 * of the whole run (run/merge.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "core/file.h"
#include "report/table.h"
#include "run/merge.h"
#include "run/outcome.h"

#define MERGE_MAX_INPUTS 4096

struct merge_cli {
    const char *out;
    double max_failure_rate;
    const char *inputs[MERGE_MAX_INPUTS];
    int n;
};

#define AT(field) offsetof(struct merge_cli, field)

static const struct flag_spec flags[] = {
    {"out", NULL, FLAG_STRING, AT(out), "FILE", NULL, "where to write the merged artifact; '-' for stdout"},
    {"max-failure-rate", NULL, FLAG_DOUBLE, AT(max_failure_rate), "R", "0.05",
     "exit 1 when more than this share of the merged run's measured requests failed (as anvil run)",
     .min = 0, .max = 1},
    {0},
};

static int input_arg(void *cfg, const char *arg)
{
    struct merge_cli *m = cfg;
    if (m->n == MERGE_MAX_INPUTS) {
        fprintf(stderr, "anvil merge: at most %d shard artifacts\n", MERGE_MAX_INPUTS);
        return -1;
    }
    m->inputs[m->n++] = arg;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: anvil merge SHARD_ARTIFACT... --out FILE\n"
            "Merges the artifacts of the shards of one run (anvil run --shard I/N --start-at T) into\n"
            "the artifact of the whole run: every shard's raw records from its journal (next to its\n"
            "artifact), brought onto shard 0's clock through the hosts' wall clocks, the summary\n"
            "recomputed from them (percentiles exact), and a ranks block. A shard not given is named\n"
            "as missing and the artifact is incomplete.\n\n");
    flags_help(out, flags);
    fprintf(out, "  %-28s this text\n\nExit status (as anvil run's): 0 complete, with at most "
            "--max-failure-rate of the requests failed; 1 incomplete (a shard missing or cut short; the artifact "
            "is still written), nothing measured, more requests failed, or an input unreadable; 2 usage "
            "error.\n", "-h, --help");
}

/* The rank, count and journal file an artifact's ranks block names. */
static int shard_of(const char *path, const char *text, int *rank, int *count, char *journal, size_t cap)
{
    cJSON *j = cJSON_Parse(text);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(j, "ranks");
    const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ranks, "per_rank"), 0);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(ranks, "count"), *r = cJSON_GetObjectItemCaseSensitive(e, "rank");
    const char *jn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "journal"));
    int rc = -1;
    if (!j)
        fprintf(stderr, "anvil merge: %s: not JSON\n", path);
    else if (!cJSON_IsNumber(c) || !cJSON_IsNumber(r) || cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ranks, "per_rank")) != 1)
        fprintf(stderr, "anvil merge: %s: not a shard's artifact (no ranks block of one entry: was it run "
                "with --shard?)\n", path);
    else {
        *rank = (int)r->valuedouble;
        *count = (int)c->valuedouble;
        const char *slash = strrchr(path, '/');
        int dir = slash ? (int)(slash - path) + 1 : 0;
        snprintf(journal, cap, "%.*s%s", dir, path, jn ? jn : "");
        if (!jn)
            journal[0] = '\0';
        rc = 0;
    }
    cJSON_Delete(j);
    return rc;
}

/* Reads every input into parts (count of them, by rank). Returns 0, or -1 after saying why. */
static int read_inputs(const struct merge_cli *m, struct merge_part **parts, char ***texts, int *count)
{
    *count = 0;
    *parts = NULL;
    *texts = calloc((size_t)m->n * 2, sizeof **texts);
    if (!*texts)
        return -1;
    for (int i = 0; i < m->n; i++) {
        char journal[4200];
        int rank, n;
        char *text = (*texts)[2 * i] = file_read_all(m->inputs[i], NULL);
        if (!text) {
            fprintf(stderr, "anvil merge: cannot read %s\n", m->inputs[i]);
            return -1;
        }
        if (shard_of(m->inputs[i], text, &rank, &n, journal, sizeof journal) != 0)
            return -1;
        if (!*parts) {
            if (n < 1 || n > 100000 || !(*parts = calloc((size_t)n, sizeof **parts)))
                return -1;
            *count = n;
            for (int k = 0; k < n; k++)
                (*parts)[k].missing_reason = "no artifact of this shard was given";
        }
        if (n != *count || rank < 0 || rank >= n || (*parts)[rank].artifact) {
            fprintf(stderr, "anvil merge: %s: shard %d of %d does not fit the others (%d shards%s)\n",
                    m->inputs[i], rank, n, *count, rank >= 0 && rank < n ? ", or given twice" : "");
            return -1;
        }
        struct merge_part *p = &(*parts)[rank];
        p->name = m->inputs[i];
        p->artifact = text;
        p->journal = (*texts)[2 * i + 1] = journal[0] ? file_read_all(journal, NULL) : NULL;
        if (!p->journal) {
            fprintf(stderr, "anvil merge: %s: cannot read its journal %s: the merge needs its raw records\n",
                    m->inputs[i], journal[0] ? journal : "(none named)");
            return -1;
        }
    }
    return 0;
}

int merge_main(int argc, char **argv)
{
    struct merge_cli m = {0};
    int rc = flags_defaults("merge", flags, &m);
    if (rc == 0)
        rc = flags_parse("merge", flags, &m, argc, argv, input_arg, NULL, NULL);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc == 0 && (!m.n || !m.out)) {
        fprintf(stderr, "anvil merge: %s (see 'anvil merge --help')\n", !m.n ? "no shard artifacts given" : "--out FILE is required");
        rc = -1;
    }
    if (rc != 0)
        return 2;
    struct merge_part *parts;
    char **texts;
    int count, status = 1;
    struct merge_result res;
    if (read_inputs(&m, &parts, &texts, &count) == 0) {
        int merged = run_merge(parts, count, "wall-clock", m.out, &res);
        char why[300];
        struct outcome out = outcome_of_merge(merged, &res, m.max_failure_rate);
        status = outcome_exit_status(&out, why, sizeof why);
        if (merged != 0) {
            fprintf(stderr, "anvil merge: %s\n", res.error);
        } else {
            FILE *to = strcmp(res.artifact_path, "-") ? stdout : stderr;
            if (res.summarized && to == stdout)
                report_table(stdout, "Serving Benchmark Result (merged)", &res.summary, 0);
            if (res.incomplete)
                fprintf(stderr, "anvil merge: incomplete: %s\n", res.incomplete_reason);
            fprintf(to, "artifact: %s%s\n", res.artifact_path, res.incomplete ? " (incomplete)" : "");
            if (why[0])
                fprintf(stderr, "anvil merge: %s\n", why);
        }
    }
    for (int i = 0; texts && i < 2 * m.n; i++)
        free(texts[i]);
    free(texts);
    free(parts);
    return status;
}
