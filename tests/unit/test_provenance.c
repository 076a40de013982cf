/* test_provenance.c — what every artifact records about where it came
 * from: the command line with secrets redacted, the host's CPU model. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "core/version.h"
#include "artifact/provenance.h"
#include "core/host.h"
#include "core/redact.h"

static void expect_redacted(int argc, char **argv, bool dashdash, const char *const *want)
{
    char **v = redact_argv(argc, argv, dashdash);
    cr_assert(v);
    for (int i = 0; i < argc; i++)
        cr_assert_str_eq(v[i], want[i], "argument %d", i);
    redact_argv_free(v, argc);
}

Test(provenance, header_and_api_key_values_are_redacted)
{
    char *argv[] = {"run", "--header", "Authorization: Bearer sk-123", "--header=X-Key: abc",
                    "--api-key-env", "MY_KEY", "--api-key=sk-9", "--hea", "Cookie: c=1", "--api", "V",
                    "--help-me", "--model", "m", "--concurrency", "4"};
    const char *want[] = {"run", "--header", REDACTED, "--header=" REDACTED, "--api-key-env", REDACTED,
                          "--api-key=" REDACTED, "--hea", REDACTED, "--api", REDACTED,
                          "--help-me", "--model", "m", "--concurrency", "4"};
    expect_redacted(16, argv, false, want);
}

Test(provenance, url_credentials_are_redacted)
{
    char *argv[] = {"sweep", "--base-url", "http://user:pw@h:8000/v1",
                    "--targets", "a=https://tok@h1/v1,b=http://h2:1/v1?x=u@y,c=http://u:p@h3",
                    "--base-url=http://k:s@h", "http://plain/v1"};
    const char *want[] = {"sweep", "--base-url", "http://" REDACTED "@h:8000/v1",
                          "--targets", "a=https://" REDACTED "@h1/v1,b=http://h2:1/v1?x=u@y,c=http://" REDACTED "@h3",
                          "--base-url=http://" REDACTED "@h", "http://plain/v1"};
    expect_redacted(7, argv, false, want);
}

Test(provenance, everything_after_dashdash_is_redacted_for_sweep)
{
    char *argv[] = {"sweep", "--rounds", "2", "--", "--endpoint", "completions", "--header", "A: b"};
    const char *sweep[] = {"sweep", "--rounds", "2", "--", REDACTED, REDACTED, REDACTED, REDACTED};
    const char *other[] = {"sweep", "--rounds", "2", "--", "--endpoint", "completions", "--header", REDACTED};
    expect_redacted(8, argv, true, sweep);
    expect_redacted(8, argv, false, other);
}

Test(provenance, cpu_model_from_cpuinfo)
{
    char out[64];
    cr_assert_eq(host_cpu_model("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\n"
                                "model name\t: AMD EPYC 7B13  \nflags\t: fpu\nmodel name\t: other\n", out, sizeof out), 0);
    cr_assert_str_eq(out, "AMD EPYC 7B13");
    cr_assert_eq(host_cpu_model("processor : 0\nBogoMIPS : 50.00\nHardware : BCM2835\n", out, sizeof out), 0);
    cr_assert_str_eq(out, "BCM2835");
    cr_assert_eq(host_cpu_model("processor : 0\nmodel : 85\n", out, sizeof out), -1);
    cr_assert_str_eq(out, "");
}

Test(provenance, collect_records_version_command_line_and_host)
{
    struct provenance p;
    char *argv[] = {"run", "--header", "Authorization: Bearer sk-123", NULL};
    cr_assert_eq(provenance_collect(&p, 3, argv, false), 0);
    cr_assert(p.present);
    cr_assert_str_eq(p.anvil_version, anvil_version());
    cr_assert_eq(p.n_command_line, 4);
    cr_assert_str_eq(p.command_line[0], "anvil");
    cr_assert_str_eq(p.command_line[1], "run");
    cr_assert_str_eq(p.command_line[3], REDACTED);
    cr_assert(p.host && p.kernel && p.cpu_cores >= 1);
    struct provenance q;
    cr_assert_eq(provenance_copy(&q, &p), 0);
    cr_assert_str_eq(q.command_line[3], REDACTED);
    cr_assert_str_eq(q.kernel, p.kernel);
    provenance_free(&p);
    provenance_free(&q);
    cr_assert_eq(provenance_collect(&p, 0, NULL, false), 0);
    cr_assert_null(p.command_line, "not recorded: null");
    provenance_free(&p);
}
