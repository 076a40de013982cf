/* test_layers.c — scripts/check-layers and scripts/check-libs
 * (docs/ARCHITECTURE.md): the tree as committed passes; a copy with an
 * upward include, a client file including the simulator, a folder without a
 * row, or a table with a circle fails, naming the file and line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static char out[65536], err[65536];

/* Runs argv; returns its exit status (stdout in out, stderr in err). */
static int run(const char *const argv[])
{
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0, "cannot start %s", argv[0]);
    return status;
}

static int check_layers(const char *root)
{
    const char *argv[] = {"scripts/check-layers", root, NULL};
    return run(argv);
}

/* A copy of src/ and docs/ARCHITECTURE.md under a new directory dir
 * (at least 32 bytes); removed by rm_tree. */
static void copy_tree(char *dir)
{
    strcpy(dir, "/tmp/anvil-layers-XXXXXX");
    cr_assert(mkdtemp(dir));
    char docs[96];
    snprintf(docs, sizeof docs, "%s/docs", dir);
    const char *cp_src[] = {"cp", "-R", "src", dir, NULL};
    const char *mk_docs[] = {"mkdir", docs, NULL};
    const char *cp_doc[] = {"cp", "docs/ARCHITECTURE.md", docs, NULL};
    cr_assert_eq(run(cp_src), 0, "%s", err);
    cr_assert_eq(run(mk_docs), 0, "%s", err);
    cr_assert_eq(run(cp_doc), 0, "%s", err);
}

/* Removes dir, keeping out and err (they hold the output under test). */
static void rm_tree(const char *dir)
{
    const char *argv[] = {"rm", "-rf", dir, NULL};
    int status;
    run_cmd(argv, NULL, 0, &status);
}

/* Appends line (with its newline) to dir/rel, creating the file and its
 * folder when absent. Returns the line's number in the file. */
static int append_line(const char *dir, const char *rel, const char *line)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    const char *mk[] = {"mkdir", "-p", path, NULL};
    cr_assert_eq(run(mk), 0, "%s", err);
    *slash = '/';
    int n = 0;
    char *text = harness_read_file(path, NULL);
    for (const char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    FILE *f = fopen(path, "a");
    cr_assert(f, "cannot append to %s", path);
    fprintf(f, "%s\n", line);
    fclose(f);
    return n + 1;
}

/* Replaces the one occurrence of from with to in dir/rel. */
static void replace_in(const char *dir, const char *rel, const char *from, const char *to)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *text = harness_read_file(path, NULL);
    cr_assert(text, "cannot read %s", path);
    char *at = strstr(text, from);
    cr_assert(at, "'%s' not in %s", from, path);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    fclose(f);
    free(text);
}

Test(layers, committed_tree_follows_the_rule)
{
    const char *argv[] = {"scripts/check-layers", NULL};
    cr_assert_eq(run(argv), 0, "%s", err);
    cr_assert(strstr(out, "follow docs/ARCHITECTURE.md"), "%s", out);
}

Test(layers, copy_of_the_tree_passes_unchanged)
{
    char dir[64];
    copy_tree(dir);
    int status = check_layers(dir);
    rm_tree(dir);
    cr_assert_eq(status, 0, "%s", err);
}

Test(layers, upward_include_from_core_fails_naming_file_and_line)
{
    char dir[64];
    copy_tree(dir);
    int line = append_line(dir, "src/core/buf.c", "#include \"cli/cli.h\"");
    int status = check_layers(dir);
    rm_tree(dir);
    char want[128];
    snprintf(want, sizeof want, "src/core/buf.c:%d: core may not include cli (rule: core → nothing)\n", line);
    cr_assert_eq(status, 1, "%s", err);
    cr_assert(strstr(err, want), "want '%s' in:\n%s", want, err);
    cr_assert(strstr(err, "1 violation of the rule"), "%s", err);
}

Test(layers, the_old_circle_fails)
{
    char dir[64];
    copy_tree(dir);
    append_line(dir, "src/stats/summary.c", "#include \"workload/calibrate.h\"");
    int status = check_layers(dir);
    rm_tree(dir);
    cr_assert_eq(status, 1);
    cr_assert(strstr(err, "src/stats/summary.c:"), "%s", err);
    cr_assert(strstr(err, "stats may not include workload (rule: stats → core)"), "%s", err);
}

Test(layers, client_and_simulator_never_include_each_other)
{
    char dir[64];
    copy_tree(dir);
    append_line(dir, "src/cli/run.c", "#include \"sim/sim.h\"");
    append_line(dir, "src/sim/sim.c", "#include \"stats/record.h\"");
    append_line(dir, "tests/unit/test_dist.c", "#include \"sim/tokens.h\"");
    append_line(dir, "tests/unit/test_sim_x.c", "#include \"openai/chunk.h\"");
    append_line(dir, "tests/unit/test_sim_y.c", "#include \"sim/tokens.h\"");
    int status = check_layers(dir);
    rm_tree(dir);
    cr_assert_eq(status, 1);
    cr_assert(strstr(err, "src/cli/run.c:"), "%s", err);
    cr_assert(strstr(err, ": cli may not include sim"), "%s", err);
    cr_assert(strstr(err, ": sim may not include stats (rule: sim → core)"), "%s", err);
    cr_assert(strstr(err, "tests/unit/test_dist.c:1: tests may not include sim"), "%s", err);
    cr_assert(strstr(err, "tests/unit/test_sim_x.c:1: sim-tests may not include openai"), "%s", err);
    cr_assert_null(strstr(err, "test_sim_y.c"), "a simulator test may include the simulator:\n%s", err);
    cr_assert(strstr(err, "4 violations"), "%s", err);
}

Test(layers, folder_without_a_row_and_relative_paths_fail)
{
    char dir[64];
    copy_tree(dir);
    append_line(dir, "src/gadget/gadget.c", "int gadget;");
    append_line(dir, "src/net/sse.c", "#include \"../core/buf.h\"");
    int status = check_layers(dir);
    rm_tree(dir);
    cr_assert_eq(status, 1);
    cr_assert(strstr(err, "src/gadget/gadget.c:1: folder gadget has no row"), "%s", err);
    cr_assert(strstr(err, "src/net/sse.c:"), "%s", err);
    cr_assert(strstr(err, "includes \"../core/buf.h\", which is not in a folder of the include table"), "%s", err);
}

Test(layers, a_table_with_a_circle_is_refused)
{
    char dir[64];
    copy_tree(dir);
    replace_in(dir, "docs/ARCHITECTURE.md", "| `core` `stats` `artifact` `observe` |",
               "| `core` `stats` `artifact` `observe` `sweep` |");
    int status = check_layers(dir);
    rm_tree(dir);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "docs/ARCHITECTURE.md:"), "%s", err);
    cr_assert(strstr(err, "row report lists sweep, which is not a row above it"), "%s", err);
}

Test(layers, a_table_letting_the_client_include_the_simulator_is_refused)
{
    char dir[64];
    copy_tree(dir);
    /* move the sim row above cli and let cli list it */
    replace_in(dir, "docs/ARCHITECTURE.md", "| `sim` | sim |", "| `sim-gone` | sim |");
    replace_in(dir, "docs/ARCHITECTURE.md", "| `cli` | client |", "| `sim` | sim | x | `core` |\n| `cli` | client |");
    replace_in(dir, "docs/ARCHITECTURE.md", "`sweep` `decode` |\n| `sim-gone`", "`sweep` `decode` `sim` |\n| `sim-gone`");
    int status = check_layers(dir);
    rm_tree(dir);
    cr_assert_eq(status, 2, "%s", err);
    cr_assert(strstr(err, "row cli (library client) lists sim (library sim)"), "%s", err);
}

Test(layers, check_libs_passes_on_the_build_and_fails_on_a_client_call_into_the_simulator)
{
    const char *ok[] = {"scripts/check-libs", "build", NULL};
    cr_assert_eq(run(ok), 0, "make build/anvil first:\n%s%s", out, err);
    char dir[64] = "/tmp/anvil-libs-XXXXXX";
    cr_assert(mkdtemp(dir));
    char src[96], obj[96], lib[96];
    snprintf(src, sizeof src, "%s/calls_sim.c", dir);
    snprintf(obj, sizeof obj, "%s/calls_sim.o", dir);
    snprintf(lib, sizeof lib, "%s/libanvil.a", dir);
    FILE *f = fopen(src, "w");
    cr_assert(f);
    fputs("int sim_main(int argc, char **argv);\nint calls_sim(void) { return sim_main(0, 0); }\n", f);
    fclose(f);
    const char *cp[] = {"cp", "build/libanvil.a", "build/libanvil-sim.a", "build/libanvil-core.a", dir, NULL};
    const char *cc[] = {"cc", "-c", src, "-o", obj, NULL};
    const char *ar[] = {"ar", "rs", lib, obj, NULL};
    const char *bad[] = {"scripts/check-libs", dir, NULL};
    cr_assert_eq(run(cp), 0, "%s", err);
    cr_assert_eq(run(cc), 0, "%s", err);
    cr_assert_eq(run(ar), 0, "%s", err);
    int status = run(bad);
    rm_tree(dir);
    cr_assert_eq(status, 1, "%s%s", out, err);
    cr_assert(strstr(out, "libanvil.a:calls_sim.o: uses sim_main from"), "%s", out);
}

/* The table allows only edges the code uses: an edge no file needs is a
 * rule wider than the code, named with the fix. */
Test(layers, an_edge_no_file_uses_fails)
{
    char dir[64];
    copy_tree(dir);
    replace_in(dir, "docs/ARCHITECTURE.md", "<!-- layers:end -->", "| `spare` | client | nothing | `core` `net` |\n<!-- layers:end -->");
    append_line(dir, "src/spare/spare.c", "#include \"core/buf.h\"");
    int status = check_layers(dir);
    rm_tree(dir);
    cr_assert_eq(status, 1, "%s", err);
    cr_assert(strstr(err, "docs/ARCHITECTURE.md: spare may include net, but no file of spare includes net"), "%s", err);
    cr_assert_null(strstr(err, "spare may include core"), "%s", err);
}
