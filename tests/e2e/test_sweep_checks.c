/* test_sweep_checks.c — a sweep checks everything before its first round
 * (every round's flags, plan keys, targets, labels), never writes a header
 * value into any file, and never replaces an earlier sweep silently. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

#define SECRET "sk-test-S3CR3T-value"

static int secret_hits;
static char secret_where[512];

static int scan_file(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)st;
    (void)f;
    if (type != FTW_F)
        return 0;
    char *t = harness_read_file(path, NULL);
    if (t && strstr(t, SECRET)) {
        secret_hits++;
        snprintf(secret_where, sizeof secret_where, "%s", path);
    }
    free(t);
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)st;
    (void)type;
    (void)f;
    return remove(path);
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int sweep(const char *const *args, char *err, size_t cap)
{
    const char *argv[40] = {harness_anvil_bin(), "sweep"};
    int n = 2;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, cap, &status), 0);
    return status;
}

Test(sweep_checks, header_values_never_reach_a_file_and_resume_asks_the_environment, .timeout = 120)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-sweepchk-XXXXXX", plan[128];
    cr_assert(mkdtemp(dir));
    snprintf(plan, sizeof plan, "%s.plan.json", dir);
    FILE *f = fopen(plan, "w");
    fprintf(f, "{\"cases\": [{\"input_len\": 16, \"output_len\": 2, \"header\": \"X-Api-Key: %s\"}]}", SECRET);
    fclose(f);
    char err[8192];
    const char *args[] = {"--base-url", sim.base_url, "--plan", plan, "--out-dir", dir, "--rounds", "1",
                          "--num-prompts", "2", "--", "--header", "Authorization: Bearer " SECRET,
                          "--calibration", "none", NULL};
    int status = sweep(args, err, sizeof err);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert_null(strstr(err, SECRET), "the secret was printed: %s", err);
    secret_hits = 0;
    nftw(dir, scan_file, 16, FTW_PHYS);
    cr_assert_eq(secret_hits, 0, "the secret is in %s", secret_where);
    /* a resume without the variable is refused before anything runs */
    unsetenv("ANVIL_SWEEP_HEADER_1");
    const char *resume[] = {"--resume", dir, NULL};
    status = sweep(resume, err, sizeof err);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "ANVIL_SWEEP_HEADER_1 is not set"), "%s", err);
    cr_assert_eq(sim_stop(&sim), 0);
    rm_tree(dir);
    unlink(plan);
}

Test(sweep_checks, an_earlier_sweep_is_kept_unless_resume_or_force, .timeout = 120)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-sweepchk-XXXXXX", path[256];
    cr_assert(mkdtemp(dir));
    char err[8192];
    const char *args[] = {"--base-url", sim.base_url, "--out-dir", dir, "--rounds", "1", "--num-prompts", "2",
                          "--input-len", "16", "--output-len", "2", "--", "--calibration", "none", NULL};
    cr_assert_eq(sweep(args, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/sweep-plan.json", dir);
    char *before = harness_read_file(path, NULL);
    cr_assert_eq(sweep(args, err, sizeof err), 2, "%s", err);
    cr_assert(strstr(err, "holds an earlier sweep"), "%s", err);
    char *after = harness_read_file(path, NULL);
    cr_assert_str_eq(before, after, "the earlier plan was replaced");
    free(after);
    const char *forced[] = {"--base-url", sim.base_url, "--out-dir", dir, "--rounds", "1", "--num-prompts", "2",
                            "--input-len", "16", "--output-len", "2", "--force", "--", "--calibration", "none", NULL};
    cr_assert_eq(sweep(forced, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(err, "was moved to"), "%s", err);
    const char *aside = strstr(err, "was moved to ") + strlen("was moved to ");
    char old[512];
    snprintf(old, sizeof old, "%.*s/sweep-plan.json", (int)strcspn(aside, "\n"), aside);
    char *kept = harness_read_file(old, NULL);
    cr_assert(kept && !strcmp(kept, before), "the earlier plan is not kept at %s", old);
    free(kept);
    free(before);
    cr_assert_eq(sim_stop(&sim), 0);
    rm_tree(dir);
}

Test(sweep_checks, bad_round_flags_plan_keys_labels_and_targets_stop_before_the_first_round, .timeout = 60)
{
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, NULL), 0);
    char dir[] = "/tmp/anvil-sweepchk-XXXXXX", plan[128], logs[160], labels[300];
    cr_assert(mkdtemp(dir));
    rmdir(dir);
    snprintf(plan, sizeof plan, "%s.plan.json", dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    snprintf(labels, sizeof labels, "a=%s,a=%s", sim.base_url, sim.base_url);
    FILE *f = fopen(plan, "w");
    fprintf(f, "{\"cases\": [{\"input_len\": 16}, {\"input_len\": 32, \"warmpu\": 2}]}");
    fclose(f);
    struct { const char *args[12]; int status; const char *want; } cases[] = {
        {{"--base-url", sim.base_url, "--out-dir", dir, "--", "--bogus-flag"}, 2, "unknown flag '--bogus-flag'"},
        {{"--base-url", sim.base_url, "--out-dir", dir, "--", "--input-len", "-1"}, 2, "--input-len"},
        {{"--base-url", sim.base_url, "--out-dir", dir, "--plan", plan}, 2, "unknown flag '--warmpu'"},
        {{"--targets", labels, "--out-dir", dir}, 2, "label 'a' is given twice"},
        {{"--base-url", "http://127.0.0.1:1/v1", "--out-dir", dir}, 1, "does not answer"},
        {{"--base-url", "http://u:pw@127.0.0.1:1/v1", "--out-dir", dir}, 2, "user:password@"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[8192];
        cr_assert_eq(sweep(cases[i].args, err, sizeof err), cases[i].status, "case %zu: %s", i, err);
        cr_assert(strstr(err, cases[i].want), "case %zu: '%s' not in %s", i, cases[i].want, err);
        cr_assert_neq(access(logs, F_OK), 0, "case %zu: a round ran", i);
        cr_assert_neq(access(dir, F_OK), 0, "case %zu: the sweep left %s", i, dir);
    }
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(plan);
}

/* Regression: a case longer than the server's context was found only when
 * its round ran (each round refused it in turn); now before the first. */
Test(sweep_checks, a_case_longer_than_the_context_stops_before_the_first_round, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--max-model-len", "512", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-sweeplen-XXXXXX", logs[160];
    cr_assert(mkdtemp(dir));
    rmdir(dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    const char *args[] = {"--base-url", sim.base_url, "--out-dir", dir, "--input-len", "128,600",
                          "--output-len", "16", "--rounds", "1", NULL};
    char err[8192];
    cr_assert_eq(sweep(args, err, sizeof err), 1, "%s", err);
    cr_assert(strstr(err, "case short-600-16-c1: prompt of 600 tokens cannot fit: the server's context is "
                          "512 tokens (/models max_model_len); nothing was run"), "%s", err);
    cr_assert_neq(access(logs, F_OK), 0, "a round ran");
    cr_assert_neq(access(dir, F_OK), 0, "the sweep left %s", dir);
    cr_assert_eq(sim_stop(&sim), 0);
}
