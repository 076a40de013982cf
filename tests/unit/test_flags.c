/* test_flags.c — flag tables: parsing, defaults and help from one row each,
 * and anvil run's table agreeing with the run library's defaults. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "cli/run_cli.h"
#include "core/duration.h"
#include "run/run.h"
#include "workload/agentic.h"

#include "testutil.h"

struct demo {
    const char *name;
    long n;
    double s;
    double rate;
    bool on;
    int choice;
    int many;
};

static int count_many(void *cfg, const char *cmd, const char *flag, const char *v)
{
    (void)cmd; (void)flag; (void)v;
    ((struct demo *)cfg)->many++;
    return 0;
}

static const char *const colours[] = {"red", "green", "blue", NULL};

static const struct flag_spec demo_flags[] = {
    {"name", "alias", FLAG_STRING, offsetof(struct demo, name), "TEXT", "x", "a name", .section = "Demo"},
    {"n", NULL, FLAG_LONG, offsetof(struct demo, n), "N", "3", "a count", .min = 1, .max = 9},
    {"s", NULL, FLAG_DOUBLE, offsetof(struct demo, s), "S", "0.5", "seconds", .min = 0.001},
    {"rate", NULL, FLAG_RATE, offsetof(struct demo, rate), "R", "inf", "per second"},
    {"on", NULL, FLAG_ON, offsetof(struct demo, on), NULL, NULL, "switch on"},
    {"off", NULL, FLAG_OFF, offsetof(struct demo, on), NULL, NULL, "switch off"},
    {"colour", NULL, FLAG_CHOICE, offsetof(struct demo, choice), "C", "green", "a colour", .choices = colours},
    {"many", NULL, FLAG_CUSTOM, 0, "V...", NULL, "several values", .parse = count_many, .many = true},
    {0},
};

static int parse(struct demo *d, int argc, char **argv)
{
    *d = (struct demo){0};
    cr_assert_eq(flags_defaults("demo", demo_flags, d), 0);
    return flags_parse("demo", demo_flags, d, argc, argv, NULL, NULL, NULL);
}

Test(flags, defaults_come_from_the_table)
{
    struct demo d;
    char *argv[] = {"demo"};
    cr_assert_eq(parse(&d, 1, argv), 0);
    cr_assert_str_eq(d.name, "x");
    cr_assert_eq(d.n, 3);
    cr_assert_float_eq(d.s, 0.5, 1e-15);
    cr_assert(isinf(d.rate));
    cr_assert_eq(d.choice, 1);
    cr_assert_not(d.on);
}

Test(flags, both_value_forms_aliases_and_many)
{
    struct demo d;
    char *argv[] = {"demo", "--alias=y", "--n", "9", "--s=2", "--rate", "4", "--on", "--colour",
                    "blue", "--many", "a", "b", "c", "--off"};
    cr_assert_eq(parse(&d, 15, argv), 0);
    cr_assert_str_eq(d.name, "y");
    cr_assert_eq(d.n, 9);
    cr_assert_float_eq(d.s, 2, 1e-15);
    cr_assert_float_eq(d.rate, 4, 1e-15);
    cr_assert_eq(d.choice, 2);
    cr_assert_eq(d.many, 3);
    cr_assert_not(d.on);
}

Test(flags, errors_and_help_request)
{
    struct demo d;
    char *a1[] = {"demo", "--n", "10"};       /* above max */
    char *a2[] = {"demo", "--nope"};
    char *a3[] = {"demo", "--n"};             /* no value */
    char *a4[] = {"demo", "--on=1"};          /* a switch takes none */
    char *a5[] = {"demo", "--colour", "pink"};
    char *a6[] = {"demo", "stray"};
    char *a7[] = {"demo", "--n", "2", "-h"};
    char *a8[] = {"demo", "--s", "0"};        /* below min */
    cr_assert_eq(parse(&d, 3, a1), -1);
    cr_assert_eq(parse(&d, 2, a2), -1);
    cr_assert_eq(parse(&d, 2, a3), -1);
    cr_assert_eq(parse(&d, 2, a4), -1);
    cr_assert_eq(parse(&d, 3, a5), -1);
    cr_assert_eq(parse(&d, 2, a6), -1);
    cr_assert_eq(parse(&d, 4, a7), 1);
    cr_assert_eq(parse(&d, 3, a8), -1);
}

/* Every row of the help shows its flag, alias and default. */
Test(flags, help_lists_every_row_with_its_default)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    flags_help(f, demo_flags);
    fclose(f);
    for (const struct flag_spec *r = demo_flags; r->name; r++) {
        char want[64];
        snprintf(want, sizeof want, "--%s", r->name);
        cr_assert(strstr(text, want), "%s missing from help:\n%s", want, text);
    }
    cr_assert(strstr(text, "Demo\n"));
    cr_assert(strstr(text, "(alias --alias) (default x)"));
    cr_assert(strstr(text, "(default green)"));
    free(text);
}

/* anvil run's table and run_config_defaults must say the same thing: a
 * default in one place only would let help and behaviour drift apart. */
Test(flags, run_table_defaults_equal_the_library_defaults)
{
    struct run_config lib, cli;
    run_config_defaults(&lib);
    /* the table's rows store into a struct starting with the run_config */
    struct run_cli wrapped = {0};
    run_config_defaults(&wrapped.c);
    cr_assert_eq(flags_defaults("run", run_flag_table(), &wrapped), 0);
    cli = wrapped.c;
    int rows = 0;
    for (const struct flag_spec *r = run_flag_table(); r->name; r++) {
        /* rows past the run_config (--max-failure-rate) are the command's own */
        if (!r->def || r->kind == FLAG_CUSTOM || r->offset >= sizeof(struct run_config))
            continue;
        rows++;
        const char *a = (const char *)&lib + r->offset, *b = (const char *)&cli + r->offset;
        if (r->kind == FLAG_STRING)
            cr_assert_str_eq(*(const char *const *)a, *(const char *const *)b, "--%s", r->name);
        else if (r->kind == FLAG_LONG)
            cr_assert_eq(*(const long *)a, *(const long *)b, "--%s", r->name);
        else if (r->kind == FLAG_CHOICE)
            cr_assert_eq(*(const int *)a, *(const int *)b, "--%s", r->name);
        else
            cr_assert(*(const double *)a == *(const double *)b, "--%s", r->name);
    }
    cr_assert_gt(rows, 15);
    cr_assert_eq(cli.transport.endpoint, lib.transport.endpoint);
    cr_assert_eq(cli.workload.input_range, lib.workload.input_range);
}

/* The README's own example: whole-number bounds of an A..B range. strtod
 * read "1..5" as "1." and ".5", so --think-time 1..5, 0..1 and 1..1 were
 * refused (only "0.5..1" worked); the refusal came after the run began,
 * exit 1, where every other usage error exits 2. */
Test(flags, ranges_take_whole_and_fractional_bounds)
{
    const struct { const char *s; double lo, hi; } ok[] = {
        {"1..5", 1, 5}, {"0..1", 0, 1}, {"1..1", 1, 1}, {"0.5..1", 0.5, 1}, {"1.5..2.25", 1.5, 2.25},
        {"2", 2, 2}, {"0..86400", 0, 86400},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        double lo = -1, hi = -1;
        cr_assert_eq(agentic_parse_think(ok[i].s, &lo, &hi), 0, "%s refused", ok[i].s);
        cr_assert(lo == ok[i].lo && hi == ok[i].hi, "%s: %g..%g", ok[i].s, lo, hi);
    }
    const char *bad[] = {"5..1", "1..", "..5", "1...5", "1..5x", " 1..5", "1.. 5", "-1..2", "0..86401",
                         "nan..1", "0..inf", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double lo, hi;
        cr_assert_eq(agentic_parse_think(bad[i], &lo, &hi), -1, "'%s' accepted", bad[i]);
    }
    long a, b;
    cr_assert_eq(agentic_parse_range("3..8", &a, &b), 0);
    cr_assert(a == 3 && b == 8);
    cr_assert_eq(agentic_parse_range("1..1", &a, &b), 0);
    const char *bad_turns[] = {"0..3", "3..2", "1.5..3", "1..", " 2", "2..10001", "+2..3"};
    for (size_t i = 0; i < sizeof bad_turns / sizeof *bad_turns; i++)
        cr_assert_eq(agentic_parse_range(bad_turns[i], &a, &b), -1, "'%s' accepted", bad_turns[i]);
}

/* anvil run's parse of the README's agentic lines; a bad range is a usage
 * error of the parse (exit 2), before anything is sent. */
Test(flags, run_takes_the_readme_agentic_ranges_and_refuses_bad_ones_at_parse)
{
    char *ok[] = {"run", "--base-url", "http://127.0.0.1:1/v1", "--agentic-sessions", "8", "--think-time",
                  "1..5", "--sub-agents", "3", "--turns", "3..8"};
    struct run_cli r = {0};
    cr_assert_eq(run_cli_parse(&r, 11, ok, NULL), 0);
    cr_assert_str_eq(r.c.workload.think_time, "1..5");
    cr_assert_str_eq(r.c.workload.agentic_turns, "3..8");
    run_cli_free(&r);
    char *bad_think[] = {"run", "--agentic-sessions", "8", "--think-time", "5..1"};
    char *bad_turns[] = {"run", "--agentic-sessions", "8", "--turns", "0..2"};
    struct run_cli b = {0};
    cr_assert_eq(run_cli_parse(&b, 5, bad_think, NULL), -1);
    run_cli_free(&b);
    cr_assert_eq(run_cli_parse(&b, 5, bad_turns, NULL), -1);
    run_cli_free(&b);
}

/* vllm bench serve's names on anvil run's table: --served-model-name is the
 * model requested whichever order it comes in (vLLM reads only the
 * tokenizer from --model), --custom-output-len is --output-len, and a
 * noted flag of many values (--metadata) takes none or several, noted once. */
Test(flags, run_takes_vllm_names_and_notes_flags_that_change_nothing)
{
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    char *a[] = {"run", "--model", "org/Model-8B", "--served-model-name", "m8", "--custom-output-len", "7",
                 "--metadata", "a=1", "b=2", "--label", "x", "--trust-remote-code", "--metadata"};
    struct run_cli r = {0};
    cr_assert_eq(run_cli_parse(&r, 14, a, log), 0);
    fclose(log);
    cr_assert_str_eq(r.c.transport.model, "m8");
    cr_assert_eq(r.c.workload.output_len, 7);
    cr_assert(r.c.workload.output_len_set);
    cr_assert(strstr(text, "requesting --served-model-name m8, not --model org/Model-8B"), "%s", text);
    const char *at = strstr(text, "note: --metadata does not apply to anvil: every request");
    cr_assert(at && strstr(at + 1, "note: --metadata does not apply"), "given twice, noted twice:\n%s", text);
    cr_assert(strstr(text, "note: --label does not apply") && strstr(text, "note: --trust-remote-code does not"),
              "%s", text);
    cr_assert_null(strstr(text, "a=1"), "a value is not a flag:\n%s", text);
    free(text);
    run_cli_free(&r);
    char *b[] = {"run", "--served-model-name", "m8", "--model", "org/Model-8B"};
    FILE *quiet = fopen("/dev/null", "w");
    cr_assert_eq(run_cli_parse(&r, 5, b, quiet), 0);
    fclose(quiet);
    cr_assert_str_eq(r.c.transport.model, "m8");
    run_cli_free(&r);
    /* a refused flag stops the parse, with or without its value; hf-* is every --hf-... */
    char *c1[] = {"run", "--hf-subset", "x"}, *c2[] = {"run", "--use-beam-search"}, *c3[] = {"run", "--hf"};
    cr_assert_eq(run_cli_parse(&r, 3, c1, NULL), -1);
    run_cli_free(&r);
    cr_assert_eq(run_cli_parse(&r, 2, c2, NULL), -1);
    run_cli_free(&r);
    cr_assert_eq(run_cli_parse(&r, 2, c3, NULL), -1, "--hf is no --hf-* flag (unknown)");
    run_cli_free(&r);
}

/* Every flag in the first column of README.md's "From `vllm bench serve`"
 * table is a row of anvil run's table (used, noted or refused): none of
 * them is an 'unknown flag'. */
Test(flags, every_vllm_flag_of_the_readme_table_has_a_row)
{
    char *readme = tu_read_file("README.md", NULL);
    cr_assert_not_null(readme);
    char *table = strstr(readme, "| `vllm bench serve` | `anvil run` | notes |");
    cr_assert_not_null(table, "the README's vLLM table is gone");
    char *end = strstr(table, "\n\n");
    if (end)
        *end = '\0';
    int flags = 0;
    for (char *line = strchr(table, '\n'); line; line = strchr(line + 1, '\n')) {
        char *cell_end = strstr(line + 2, " | ");     /* the first column: "| `--a`, `--b` | ..." */
        for (char *f = strstr(line, "`--"); f && cell_end && f < cell_end; f = strstr(f + 1, "`--")) {
            char name[64];
            size_t n = strcspn(f + 3, "`");
            cr_assert_lt(n, sizeof name);
            snprintf(name, sizeof name, "%.*s", (int)n, f + 3);
            cr_assert_not_null(flags_find(run_flag_table(), name), "README's --%s is not a flag of anvil run", name);
            flags++;
        }
    }
    cr_assert_gt(flags, 50, "only %d flags read from the table", flags);
    free(readme);
}

/* --stall-timeout-s: the idle timeout's value unless given (120 by
 * default, or --idle-timeout-s's, in either order), 0 = never, a
 * negative value a usage error. */
Test(flags, stall_timeout_defaults_to_the_idle_timeout)
{
    struct { int argc; char *argv[6]; double want; } ok[] = {
        {1, {"run"}, 120},
        {3, {"run", "--idle-timeout-s", "5"}, 5},
        {5, {"run", "--stall-timeout-s", "2", "--idle-timeout-s", "9"}, 2},
        {5, {"run", "--idle-timeout-s", "9", "--stall-timeout-s", "30"}, 30},
        {3, {"run", "--stall-timeout-s", "0"}, 0},
        {2, {"run", "--stall-timeout-s=0.25"}, 0.25},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        struct run_cli r = {0};
        cr_assert_eq(run_cli_parse(&r, ok[i].argc, ok[i].argv, NULL), 0, "case %zu", i);
        cr_assert_eq(run_stall_timeout_s(&r.c), ok[i].want, "case %zu: %g", i, run_stall_timeout_s(&r.c));
        run_cli_free(&r);
    }
    struct run_config lib;
    run_config_defaults(&lib);
    cr_assert_eq(run_stall_timeout_s(&lib), lib.transport.idle_timeout_s, "the library's default follows the idle timeout");
    lib.transport.idle_timeout_s = 7;
    cr_assert_eq(run_stall_timeout_s(&lib), 7);
    char *bad[][3] = {{"run", "--stall-timeout-s", "-1"}, {"run", "--stall-timeout-s", "soon"},
                      {"run", "--stall-timeout-s", "nan"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct run_cli r = {0};
        cr_assert_eq(run_cli_parse(&r, 3, bad[i], NULL), -1, "%s accepted", bad[i][2]);
        run_cli_free(&r);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    flags_help(f, run_flag_table());
    fclose(f);
    cr_assert(strstr(text, "--stall-timeout-s S"), "run --help lists it");
    cr_assert(strstr(text, "default: the --idle-timeout-s value; 0 = never"));
    free(text);
}

/* An unknown flag near a known one (a typo or two) is named; a word that
 * is no flag's is not matched to the nearest anyway. */
Test(flags, a_typo_gets_the_nearest_flag)
{
    static const struct flag_spec t[] = {
        {"concurrency", "max-concurrency", FLAG_LONG, 0, "N", NULL, "x"},
        {"output-len", "random-output-len", FLAG_LONG, 0, "N", NULL, "x"},
        {"hf-*", NULL, FLAG_REFUSED, 0, NULL, NULL, "x"},
        {NULL},
    };
    cr_assert_str_eq(flags_suggest(t, "concurency"), "concurrency");
    cr_assert_str_eq(flags_suggest(t, "max-concurency"), "max-concurrency");
    cr_assert_str_eq(flags_suggest(t, "outpt-len"), "output-len");
    cr_assert_null(flags_suggest(t, "foo"));
    cr_assert_null(flags_suggest(t, "seed"));
}

/* anvil run's table is its features' tables joined: every flag and alias
 * once, the help's sections in their order, and a flag of each feature
 * found and stored into its feature's settings. */
Test(flags, run_table_joins_each_features_rows_once)
{
    const struct flag_spec *t = run_flag_table();
    size_t n = flags_count(t);
    cr_assert_gt(n, 100);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            cr_assert_str_neq(t[i].name, t[j].name, "--%s twice", t[i].name);
            cr_assert(!t[i].alias || !t[j].alias || strcmp(t[i].alias, t[j].alias), "--%s twice", t[i].alias);
        }
    static const char *const sections[] = {"Target", "Load", "Workload", "Limits", "Output", "Server and hardware"};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].section && k < sizeof sections / sizeof *sections) {
            cr_assert_str_eq(t[i].section, sections[k], "section %zu", k);
            k++;
        }
    cr_assert_eq(k, sizeof sections / sizeof *sections);
    struct run_cli r = {0};
    char *argv[] = {"run", "--base-url", "http://h:1/v1", "--concurrency", "7", "--shard", "1/2", "--input-len", "9",
                    "--idle-timeout-s", "3", "--out", "a.json", "--telemetry", "off", "--gpu-label", "H200",
                    "--tokenizer-mode", "slow", "--num-prompts", "14"};
    FILE *devnull = fopen("/dev/null", "w");
    cr_assert_eq(run_cli_parse(&r, sizeof argv / sizeof *argv, argv, devnull), 0);
    fclose(devnull);
    cr_assert_str_eq(r.c.transport.base_url, "http://h:1/v1");
    cr_assert_eq(r.c.load.concurrency, 7);
    cr_assert_eq(r.c.shard.index, 1);
    cr_assert_eq(r.c.shard.count, 2);
    cr_assert_eq(r.c.workload.input_len, 9);
    cr_assert(r.c.transport.idle_timeout_s == 3);
    cr_assert_str_eq(r.c.out.path, "a.json");
    cr_assert_eq(r.c.observe.telemetry, OBS_MODE_OFF);
    cr_assert_str_eq(r.c.out.gpu_label, "H200");
    run_cli_free(&r);
}

/* Durations as a soak is typed: plain seconds, h/m/s units and their sums;
 * anything else refused whole (no sign, no exponent, no "ms", no unit twice). */
Test(flags, durations_take_hours_and_minutes)
{
    static const struct { const char *s; double v; } ok[] = {
        {"90", 90}, {"0.5", 0.5}, {"45s", 45}, {"90m", 5400}, {"2h", 7200}, {"1.5h", 5400},
        {"1h30m", 5400}, {"1h0m30s", 3630}, {"30m1h", 5400}, {".5m", 30}, {"3.", 3}, {"0", 0},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        double v = -1;
        cr_assert_eq(duration_parse(ok[i].s, &v), 0, "'%s' refused", ok[i].s);
        cr_assert_float_eq(v, ok[i].v, 1e-9, "'%s' = %g, not %g", ok[i].s, v, ok[i].v);
    }
    const char *bad[] = {"", "h", "2x", "2 h", " 2h", "-1", "+2h", "1e3", "inf", "nan", "0x10",
                         "10ms", "1h1h", "2h30", "1..2h", ".", "2hm", "1h ", "1d"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double v = 7;
        cr_assert_eq(duration_parse(bad[i], &v), -1, "'%s' accepted", bad[i]);
        cr_assert_eq(v, 7, "'%s' wrote the output", bad[i]);
    }
}

/* anvil run --duration 2h and --warmup-s 90s land in seconds; garbage is a
 * usage error of the parse that names the flag. */
Test(flags, run_duration_takes_units_and_names_the_flag_on_garbage)
{
    char *ok[] = {"run", "--duration", "2h", "--warmup-s", "1m30s"};
    struct run_cli r = {0};
    cr_assert_eq(run_cli_parse(&r, 5, ok, NULL), 0);
    cr_assert_float_eq(r.c.load.duration_s, 7200, 1e-9);
    cr_assert_float_eq(r.c.load.warmup_s, 90, 1e-9);
    run_cli_free(&r);
    char *bad[] = {"run", "--duration", "2hours"};
    struct run_cli b = {0};
    char *err = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&err, &n);
    FILE *saved = stderr;
    stderr = mem;
    int rc = run_cli_parse(&b, 3, bad, NULL);
    stderr = saved;
    fclose(mem);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(err, "--duration") && strstr(err, "'2hours'"), "%s", err);
    free(err);
    run_cli_free(&b);
    /* past a year: refused (it overflowed the window's nanoseconds: a window closed at once, exit 1) */
    const char *flag[] = {"--duration", "--warmup-s", "--ramp-up-s"};
    for (int i = 0; i < 3; i++) {
        char *huge[] = {"run", (char *)flag[i], "3000000000h"};
        struct run_cli h = {0};
        mem = open_memstream(&err, &n);
        stderr = mem;
        rc = run_cli_parse(&h, 3, huge, NULL);
        stderr = saved;
        fclose(mem);
        cr_assert_eq(rc, -1, "%s 3000000000h taken", flag[i]);
        cr_assert(strstr(err, flag[i]), "%s", err);
        free(err);
        run_cli_free(&h);
    }
}
