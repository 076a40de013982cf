/* test_version.c — `anvil --version` and `anvil version` print the version
 * the tree says (git describe in a checkout, else the VERSION file, as
 * docs/ARCHITECTURE.md "Version" defines it, computed here with git itself),
 * and scripts/version follows those rules in a tree of its own: a tarball,
 * a clone without tags, a tagged commit, uncommitted changes. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static char out[256], err[4096];

/* Runs argv; returns its exit status, stdout in out without a trailing
 * newline (stderr in err). */
static int run(const char *const argv[])
{
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0, "cannot start %s", argv[0]);
    out[strcspn(out, "\n")] = '\0';
    return status;
}

/* The VERSION file's first word. */
static void version_file(const char *path, char *v, size_t cap)
{
    char *text = harness_read_file(path, NULL);
    cr_assert(text, "cannot read %s", path);
    snprintf(v, cap, "%.*s", (int)strcspn(text, " \t\r\n"), text);
    free(text);
}

/* What the version of the tree in the current directory must be. */
static void expected_version(char *v, size_t cap)
{
    char file[64], cwd[512];
    version_file("VERSION", file, sizeof file);
    cr_assert(getcwd(cwd, sizeof cwd));
    char *real = realpath(cwd, NULL);
    const char *top[] = {"git", "rev-parse", "--show-toplevel", NULL};
    char *top_real = run(top) == 0 ? realpath(out, NULL) : NULL;
    int checkout = top_real && !strcmp(top_real, real);
    free(real);
    free(top_real);
    if (!checkout) {
        snprintf(v, cap, "%s", file);
        return;
    }
    const char *tagged[] = {"git", "describe", "--tags", "--dirty", NULL};
    if (run(tagged) == 0) {
        snprintf(v, cap, "%s", out);
        return;
    }
    const char *commit[] = {"git", "describe", "--always", "--dirty", NULL};
    cr_assert_eq(run(commit), 0, "%s", err);
    snprintf(v, cap, "%s-g%s", file, out);
}

Test(version, flag_and_command_print_the_tree_version_and_components)
{
    char want[512], line[512];
    expected_version(want, sizeof want);
    cr_assert_neq(want[0], '\0');
    const char *flag[] = {harness_anvil_bin(), "--version", NULL};
    cr_assert_eq(run(flag), 0, "%s", err);
    snprintf(line, sizeof line, "%s", out);
    const char *cmd[] = {harness_anvil_bin(), "version", NULL};
    cr_assert_eq(run(cmd), 0, "%s", err);
    cr_assert_str_eq(out, line, "anvil version and anvil --version differ");

    regex_t re;
    cr_assert_eq(regcomp(&re, "^anvil ([A-Za-z0-9._+-]+) \\(mpi: (on|off), nvml: (dlopen|off)\\)$",
                         REG_EXTENDED), 0);
    regmatch_t m[2];
    int rc = regexec(&re, line, 2, m, 0);
    regfree(&re);
    cr_assert_eq(rc, 0, "unexpected line '%s'", line);
    cr_assert_eq((size_t)(m[1].rm_eo - m[1].rm_so), strlen(want), "got '%s', want version '%s'", line, want);
    cr_assert_eq(strncmp(line + m[1].rm_so, want, strlen(want)), 0, "got '%s', want version '%s'", line, want);
}

Test(version, extra_argument_is_a_usage_error)
{
    const char *argv[] = {harness_anvil_bin(), "version", "--short", NULL};
    cr_assert_eq(run(argv), 2);
    cr_assert(strstr(err, "unexpected argument '--short'"), "%s", err);
    static char usage[4096];
    const char *help[] = {harness_anvil_bin(), "--help", NULL};
    cr_assert_eq(run_cmd(help, usage, sizeof usage, &(int){0}), 0);
    cr_assert(strstr(usage, "\n  version "), "anvil --help lists version:\n%s", usage);
}

/* A tree holding scripts/version and a VERSION file of 9.8.7, outside any
 * git repository (dir at least 32 bytes). */
static void version_tree(char *dir)
{
    strcpy(dir, "/tmp/anvil-version-XXXXXX");
    cr_assert(mkdtemp(dir));
    char scripts[96], file[96];
    snprintf(scripts, sizeof scripts, "%s/scripts", dir);
    snprintf(file, sizeof file, "%s/VERSION", dir);
    const char *mk[] = {"mkdir", scripts, NULL};
    const char *cp[] = {"cp", "scripts/version", scripts, NULL};
    cr_assert_eq(run(mk), 0, "%s", err);
    cr_assert_eq(run(cp), 0, "%s", err);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fputs("9.8.7\n", f);
    fclose(f);
    const char *inside[] = {"git", "-C", dir, "rev-parse", "--show-toplevel", NULL};
    if (run(inside) == 0)
        cr_skip_test("%s is inside a git repository (%s)", dir, out);
}

static void git(const char *dir, const char *const args[])
{
    const char *argv[16] = {"git", "-C", dir, "-c", "user.name=anvil", "-c", "user.email=anvil@localhost"};
    int n = 7;
    for (; *args; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    cr_assert_eq(run(argv), 0, "git %s: %s", argv[7], err);
}

static const char *script_version(const char *dir)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/scripts/version", dir);
    const char *argv[] = {path, NULL};
    cr_assert_eq(run(argv), 0, "%s", err);
    return out;
}

Test(version, script_follows_tarball_clone_tag_and_dirty_rules)
{
    char dir[64];
    version_tree(dir);
    cr_assert_str_eq(script_version(dir), "9.8.7", "a tarball takes the VERSION file");

    git(dir, (const char *[]){"init", "-q", NULL});
    git(dir, (const char *[]){"add", "-A", NULL});
    git(dir, (const char *[]){"commit", "-q", "-m", "first", NULL});
    const char *head[] = {"git", "-C", dir, "rev-parse", "--short", "HEAD", NULL};
    cr_assert_eq(run(head), 0);
    char want[512];
    snprintf(want, sizeof want, "9.8.7-g%s", out);
    cr_assert_str_eq(script_version(dir), want, "no tag reachable: VERSION, -g and the commit");

    git(dir, (const char *[]){"tag", "-a", "9.9.0", "-m", "9.9.0", NULL});
    cr_assert_str_eq(script_version(dir), "9.9.0", "a tagged commit is its tag");

    char file[96];
    snprintf(file, sizeof file, "%s/VERSION", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fputs("9.9.1\n", f);
    fclose(f);
    cr_assert_str_eq(script_version(dir), "9.9.0-dirty", "uncommitted changes are marked");

    const char *rm[] = {"rm", "-rf", dir, NULL};
    run(rm);
}
