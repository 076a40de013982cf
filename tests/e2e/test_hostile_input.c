/* test_hostile_input.c — input files built to cost memory or CPU (nested
 * YAML aliases, deep nesting) are refused by every command that reads one,
 * quickly, before any request, naming the limit and FILE:LINE:COLUMN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

/* 10 levels of ten aliases each: 10^10 values once expanded (23 GB before). */
static void write_alias_bomb(const char *path, const char *tail)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for (int i = 1; i < 10; i++) {
        fprintf(f, "a%d: &a%d [", i, i);
        for (int k = 0; k < 10; k++)
            fprintf(f, "*a%d%s", i - 1, k < 9 ? ", " : "]\n");
    }
    fputs(tail, f);
    fclose(f);
}

static void write_deep(const char *path, int levels)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    for (int i = 0; i < levels; i++)
        fputc('[', f);
    fclose(f);
}

/* Runs argv with its address space capped (a bomb that escaped the limits
 * fails to allocate instead of taking the machine), and checks it is refused
 * with want in its stderr. */
static void refused(const char *const argv[], const char *want)
{
    static char err[16384];
    int status;
    struct rlimit old;
    getrlimit(RLIMIT_CPU, &old);
    struct rlimit cpu = {20, old.rlim_max};     /* 40 s of CPU to refuse before */
    setrlimit(RLIMIT_CPU, &cpu);
    int rc = run_cmd_err(argv, NULL, 0, err, sizeof err, &status);
    setrlimit(RLIMIT_CPU, &old);
    cr_assert_eq(rc, 0);
    cr_assert(status == 1 || status == 2, "%s: exit %d\n%s", argv[1], status, err);
    cr_assert(strstr(err, want), "%s: expected '%s' in:\n%s", argv[1], want, err);
}

Test(hostile_input, nested_aliases_are_refused_by_every_yaml_reader, .timeout = 120)
{
    char dir[] = "/tmp/anvil-hostile-XXXXXX", plan[96], sessions[96], graph[96], out[96], want[160];
    cr_assert(mkdtemp(dir));
    snprintf(plan, sizeof plan, "%s/plan.yaml", dir);
    snprintf(sessions, sizeof sessions, "%s/sessions.yaml", dir);
    snprintf(graph, sizeof graph, "%s/graph.yaml", dir);
    write_alias_bomb(plan, "cases:\n  - input_len: 16\n");
    write_alias_bomb(sessions, "sessions:\n  - turns: [{user_len: 5}]\n");
    write_alias_bomb(graph, "charts: []\n");
    /* a closed port: the file must be refused before the server is asked anything */
    const char *sweep[] = {harness_anvil_bin(), "sweep", "--plan", plan, "--base-url", "http://127.0.0.1:9",
                           "--out-dir", dir, NULL};
    snprintf(want, sizeof want, "%s:6:45: more than 1000000 values, aliases counted each time", plan);
    refused(sweep, want);
    const char *run[] = {harness_anvil_bin(), "run", "--agentic", sessions, "--base-url", "http://127.0.0.1:9",
                         "--ready-check-timeout-sec", "0", NULL};
    snprintf(want, sizeof want, "%s:6:45: more than 1000000 values", sessions);
    refused(run, want);
    snprintf(out, sizeof out, "%s/graph.json", dir);
    const char *gr[] = {harness_anvil_bin(), "graph", graph, "--out", out, NULL};
    snprintf(want, sizeof want, "%s:6:45: more than 1000000 values", graph);
    refused(gr, want);
    unlink(plan);
    unlink(sessions);
    unlink(graph);
    rmdir(dir);
}

Test(hostile_input, deep_nesting_is_refused_at_once, .timeout = 60)
{
    char dir[] = "/tmp/anvil-hostile-XXXXXX", plan[96], sessions[96], want[160];
    cr_assert(mkdtemp(dir));
    snprintf(plan, sizeof plan, "%s/plan.yaml", dir);
    snprintf(sessions, sizeof sessions, "%s/sessions.json", dir);
    write_deep(plan, 200000);
    write_deep(sessions, 200000);
    const char *sweep[] = {harness_anvil_bin(), "sweep", "--plan", plan, "--base-url", "http://127.0.0.1:9",
                           "--out-dir", dir, NULL};
    snprintf(want, sizeof want, "%s:1:65: nested deeper than 64 levels", plan);
    refused(sweep, want);
    const char *run[] = {harness_anvil_bin(), "run", "--agentic", sessions, "--base-url", "http://127.0.0.1:9",
                         "--ready-check-timeout-sec", "0", NULL};
    snprintf(want, sizeof want, "%s:1:65: nested deeper than 64 levels", sessions);
    refused(run, want);
    unlink(plan);
    unlink(sessions);
    rmdir(dir);
}
