/* guard.c — what keeps a sweep's files safe (guard.h). */
#include "sweep/guard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"

/* --force over an earlier sweep: its files move to DIR/replaced-<time>/
 * (never deleted: they are measurements), so none of its rounds counts as
 * done for the new plan. Returns 0, or -1 (reported). */
int sweep_set_aside(const char *dir)
{
    static const char *const names[] = {"sweep-plan.json", "matrix.json", "load-curve.json", "rounds",
                                        "logs", "calibration.json"};
    char compact[17], aside[1100];
    clock_utc_compact(compact);
    snprintf(aside, sizeof aside, "%s/replaced-%s", dir, compact);
    if (mkdir(aside, 0777) != 0) {
        fprintf(stderr, "anvil sweep: --force: cannot create %s: %s\n", aside, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char from[1100], to[1200];
        snprintf(from, sizeof from, "%s/%s", dir, names[i]);
        snprintf(to, sizeof to, "%s/%s", aside, names[i]);
        if (rename(from, to) != 0 && errno != ENOENT) {
            fprintf(stderr, "anvil sweep: --force: cannot move %s aside: %s\n", from, strerror(errno));
            return -1;
        }
    }
    fprintf(stderr, "anvil sweep: the earlier sweep in %s was moved to %s\n", dir, aside);
    return 0;
}

/* Replaces args[i] (owned) with a copy of v. Returns 0 or -1. */
static int replace_arg(char **args, size_t i, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return -1;
    free(args[i]);
    args[i] = c;
    return 0;
}

/* Header values never reach the plan file: each --header NAME: VALUE of a
 * round becomes --header-env NAME=ANVIL_SWEEP_HEADER_<k>, the variable set
 * here (the rounds inherit it) and named on stderr for a later --resume.
 * Returns 0, or -1 (reported). */
int sweep_hide_headers(struct sweep_plan *plan)
{
    char values[16][4096];
    int n_values = 0;
    for (size_t j = 0; j < plan->n_jobs; j++) {
        struct sweep_job *job = &plan->jobs[j];
        for (size_t i = 0; i < job->n_args; i++) {
            bool joined = !strncmp(job->args[i], "--header=", 9);
            if (strcmp(job->args[i], "--header") && !joined)
                continue;
            const char *h = joined ? job->args[i] + 9 : i + 1 < job->n_args ? job->args[i + 1] : NULL;
            const char *colon = h ? strchr(h, ':') : NULL;
            if (!colon || colon == h)
                continue;           /* anvil run's own check names it */
            int k = 0;
            while (k < n_values && strcmp(values[k], h))
                k++;
            if (k == n_values) {
                if (n_values == 16) {
                    fprintf(stderr, "anvil sweep: more than 16 distinct --header values\n");
                    return -1;
                }
                snprintf(values[n_values++], sizeof values[0], "%s", h);
                char var[32];
                snprintf(var, sizeof var, "ANVIL_SWEEP_HEADER_%d", k + 1);
                const char *v = colon + 1;
                while (*v == ' ')
                    v++;
                setenv(var, v, 1);
                fprintf(stderr, "anvil sweep: the value of header %.*s is not saved in the plan; it is "
                        "read from %s (set it again for --resume)\n", (int)(colon - h), h, var);
            }
            char ref[200];
            snprintf(ref, sizeof ref, "%.*s=ANVIL_SWEEP_HEADER_%d", (int)(colon - h) > 150 ? 150 : (int)(colon - h), h, k + 1);
            if (joined) {
                char both[240];
                snprintf(both, sizeof both, "--header-env=%s", ref);
                if (replace_arg(job->args, i, both) != 0)
                    return -1;
            } else if (replace_arg(job->args, i, "--header-env") != 0 || replace_arg(job->args, i + 1, ref) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

