/* test_aggregate_checks.c — anvil aggregate never destroys an input, and an
 * open-loop round is not merged with a closed-loop one as rounds of one case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static void round_of(const struct sim_proc *sim, const char *out, const char *rate)
{
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim->base_url, "--num-prompts", "3",
                          "--input-len", "16", "--output-len", "2", "--calibration", "none", "--out", out,
                          "--max-concurrency", "32", rate ? "--request-rate" : NULL, rate, NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, NULL, 0, &status), 0);
    cr_assert_eq(status, 0, "round %s", out);
}

static int aggregate(const char *const *args, char *out, size_t cap, char *err, size_t ecap)
{
    const char *argv[12] = {harness_anvil_bin(), "aggregate"};
    int n = 2, status;
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    cr_assert_eq(run_cmd_err(argv, out, cap, err, ecap, &status), 0);
    return status;
}

Test(aggregate_checks, out_is_never_an_input_and_rates_are_cases_of_their_own, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-aggchk-XXXXXX", a[128], b[128], m[128], alias[160];
    cr_assert(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/poisson.json", dir);
    snprintf(b, sizeof b, "%s/c32.json", dir);
    snprintf(m, sizeof m, "%s/matrix.json", dir);
    snprintf(alias, sizeof alias, "%s/../%s/poisson.json", dir, strrchr(dir, '/') + 1);
    round_of(&sim, a, "8");       /* Poisson 8 req/s, at most 32 in flight */
    round_of(&sim, b, NULL);      /* the closed loop at 32 */
    char *before = harness_read_file(a, NULL);
    char out[8192], err[8192];
    const char *same[] = {a, b, "--out", a, NULL}, *other_name[] = {a, b, "--out", alias, NULL};
    cr_assert_eq(aggregate(same, out, sizeof out, err, sizeof err), 2, "%s", err);
    cr_assert(strstr(err, "is also an input"), "%s", err);
    cr_assert_eq(aggregate(other_name, out, sizeof out, err, sizeof err), 2, "%s", err);
    char *after = harness_read_file(a, NULL);
    cr_assert_str_eq(before, after, "the round artifact was overwritten");
    const char *ok[] = {a, b, "--out", m, NULL};
    cr_assert_eq(aggregate(ok, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(out, "2 rows, 2 cases"), "8 req/s and c=32 merged: %s", out);
    free(before);
    free(after);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(a);
    unlink(b);
    unlink(m);
}
