/* test_exit_classes.c — the exit status of the commands that send nothing
 * (show, compare, report, graph) by class, as `--help` documents it:
 * 0 done; 1 the output could not be written (or a --fail-on verdict);
 * 2 usage error, or an input unreadable or invalid. Input errors were 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static const char *seed = "tests/data/seed-001.json";  /* a run (benchmark/v1) */

static int status_of(const char *const argv[])
{
    static char out[1 << 20];
    char err[4096];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    return status;
}

/* argv's status with its stdout on /dev/full (every write fails). */
static int status_to_full(const char *const argv[])
{
    pid_t pid = harness_spawn_to(argv, "/dev/full");
    cr_assert(pid > 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A file that is JSON but not an artifact, and one that is not JSON. */
static void bad_inputs(char *not_artifact, char *not_json)
{
    cr_assert_eq(harness_tmpfile(not_artifact, 64), 0);
    cr_assert_eq(harness_tmpfile(not_json, 64), 0);
    FILE *f = fopen(not_artifact, "w");
    fputs("{\"schema\": \"x\"}\n", f);
    fclose(f);
    f = fopen(not_json, "w");
    fputs("{\n", f);
    fclose(f);
}

Test(exit_classes, show)
{
    char na[64], nj[64];
    bad_inputs(na, nj);
    const char *a = harness_anvil_bin();
    cr_assert_eq(status_of((const char *[]){a, "show", seed, NULL}), 0);
    cr_assert_eq(status_of((const char *[]){a, "show", "no/such.json", NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "show", nj, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "show", seed, na, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "show", "--bogus", seed, NULL}), 2);
    cr_assert_eq(status_to_full((const char *[]){a, "show", seed, NULL}), 1);
    unlink(na);
    unlink(nj);
}

Test(exit_classes, compare)
{
    char na[64], nj[64];
    bad_inputs(na, nj);
    const char *a = harness_anvil_bin();
    cr_assert_eq(status_of((const char *[]){a, "compare", seed, seed, NULL}), 0);
    cr_assert_eq(status_of((const char *[]){a, "compare", seed, "no/such.json", NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "compare", nj, seed, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "compare", seed, na, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "compare", seed, NULL}), 2);
    cr_assert_eq(status_to_full((const char *[]){a, "compare", seed, seed, NULL}), 1);
    unlink(na);
    unlink(nj);
}

Test(exit_classes, report)
{
    char na[64], nj[64], html[64];
    bad_inputs(na, nj);
    cr_assert_eq(harness_tmpfile(html, sizeof html), 0);
    const char *a = harness_anvil_bin();
    cr_assert_eq(status_of((const char *[]){a, "report", seed, "-o", html, NULL}), 0);
    cr_assert_eq(status_of((const char *[]){a, "report", "no/such.json", "-o", html, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "report", nj, "-o", html, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "report", na, "-o", html, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "report", seed, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "report", seed, "-o", "/dev/full", NULL}), 1);
    unlink(na);
    unlink(nj);
    unlink(html);
}

Test(exit_classes, graph)
{
    char plan[64], bad_metric[64], na[64], nj[64];
    bad_inputs(na, nj);
    cr_assert_eq(harness_tmpfile(plan, sizeof plan), 0);
    cr_assert_eq(harness_tmpfile(bad_metric, sizeof bad_metric), 0);
    char cwd[512];
    cr_assert(getcwd(cwd, sizeof cwd));
    const char *metric[] = {"metrics.ttft_p50_ms", "metrics.no_such_ms"};
    const char *paths[] = {plan, bad_metric};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(paths[i], "w");
        fprintf(f, "title: t\ncharts:\n  - metric: %s\n    title: c\n    x_label: x\n    y_label: y\n"
                   "    series:\n      - label: s\n        points:\n          cfg: %s/%s\n", metric[i], cwd, seed);
        fclose(f);
    }
    const char *a = harness_anvil_bin();
    cr_assert_eq(status_of((const char *[]){a, "graph", plan, "--out", "/dev/null", NULL}), 0);
    cr_assert_eq(status_of((const char *[]){a, "graph", "no/such.yaml", NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "graph", bad_metric, "--out", "/dev/null", NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "graph", nj, NULL}), 2);
    cr_assert_eq(status_of((const char *[]){a, "graph", plan, "--out", "/dev/full", NULL}), 1);
    unlink(plan);
    unlink(bad_metric);
    unlink(na);
    unlink(nj);
}
