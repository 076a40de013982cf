/* test_trace.c — reading Mooncake and Azure traces, the replay window and
 * clock, and the prefix hit rate their block ids promise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "workload/trace.h"

static char path[64];

static const char *write_tmp(const char *text)
{
    snprintf(path, sizeof path, "/tmp/anvil-trace-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static int load(const char *kind, const char *text, struct trace_window w, struct trace *t, char *err)
{
    char spec[128];
    snprintf(spec, sizeof spec, "%s:%s", kind, write_tmp(text));
    int rc = trace_load(spec, &w, t, err, 512);
    unlink(path);
    return rc;
}

Test(trace, mooncake_lines_sorted_windowed_and_scaled)
{
    const char *text =
        "{\"timestamp\": 3000, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2]}\n"
        "\n"
        "{\"timestamp\": 1000, \"input_length\": 1024, \"output_length\": 0, \"hash_ids\": [1, 3]}\n"
        "{\"timestamp\": 2000, \"input_length\": 100, \"output_length\": 7}\n"
        "{\"timestamp\": 9000, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [9]}\n";
    struct trace t;
    char err[512];
    cr_assert_eq(load("mooncake", text, (struct trace_window){0, 0, 1}, &t, err), 0, "%s", err);
    cr_assert_eq(t.n, 4);
    cr_assert_eq(t.lines, 4);
    cr_assert_eq(t.reqs[0].t_ns, 0);
    cr_assert_eq(t.reqs[0].input_len, 1024);
    cr_assert_eq(t.reqs[0].output_len, 1, "output_length 0 asks for one token");
    cr_assert_eq(t.reqs[1].t_ns, 1000000000LL);
    cr_assert_eq(t.reqs[1].n_hash, 0);
    cr_assert_eq(t.reqs[2].hash_ids[1], 2);
    cr_assert_float_eq(t.span_s, 8.0, 1e-9);
    trace_free(&t);
    /* [0.5 s, 2.5 s) after the first (at 1 s): the requests at 2 s and 3 s, twice as fast */
    cr_assert_eq(load("mooncake", text, (struct trace_window){0.5, 2, 2}, &t, err), 0, "%s", err);
    cr_assert_eq(t.n, 2);
    cr_assert_eq(t.reqs[0].input_len, 100);
    cr_assert_eq(t.reqs[1].t_ns, 500000000LL);
    trace_free(&t);
}

Test(trace, theoretical_hit_rate_follows_chained_blocks)
{
    /* r0 [1,2] 1000 tokens: nothing cached.  r1 [1,2,3] 1500: block 1 whole (512), of
     * block 2 r0 had 488 tokens (its last, cut), so the chain stops there: 1000.
     * r2 [4,2] 1024: block 4 is new, the chain is broken: 0.  r3 [1,2,3] 1500:
     * all 1500 were seen, at most 1499 */
    const char *text =
        "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
        "{\"timestamp\": 1, \"input_length\": 1500, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
        "{\"timestamp\": 2, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [4, 2]}\n"
        "{\"timestamp\": 3, \"input_length\": 1500, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n";
    struct trace t;
    char err[512];
    cr_assert_eq(load("mooncake", text, (struct trace_window){0, 0, 1}, &t, err), 0, "%s", err);
    double want = (0 + 1000 + 0 + 1499) / (1000.0 + 1500 + 1024 + 1500);
    cr_assert_float_eq(trace_theoretical_hit_rate(&t), want, 1e-12);
    trace_free(&t);
}

Test(trace, azure_csv_and_no_sharing)
{
    const char *text = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                       "2023-11-16 18:15:46.6805900,374,44\r\n"
                       "2023-11-16 18:15:50.9951690,396,109\n"
                       "2023-11-16 18:16:47.0000000,2000,1\n";
    struct trace t;
    char err[512];
    cr_assert_eq(load("azure", text, (struct trace_window){0, 0, 1}, &t, err), 0, "%s", err);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.reqs[1].input_len, 396);
    cr_assert_eq(t.reqs[1].output_len, 109);
    cr_assert_eq(llabs(t.reqs[1].t_ns - 4314579000LL) < 1000, 1, "%lld", (long long)t.reqs[1].t_ns);
    cr_assert_float_eq(t.span_s, 60.31941, 1e-4);
    cr_assert_float_eq(trace_theoretical_hit_rate(&t), 0, 1e-12, "no block ids: nothing shared");
    trace_free(&t);
}

Test(trace, bad_input_names_file_and_line)
{
    struct trace t;
    char err[512];
    struct trace_window all = {0, 0, 1};
    cr_assert_eq(load("mooncake", "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 1}\n"
                                  "{\"timestamp\": 2, \"input_length\": 0, \"output_length\": 1}\n", all, &t, err), -1);
    cr_assert(strstr(err, ":2: needs \"input_length\""), "%s", err);
    cr_assert_eq(load("mooncake", "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 1, "
                                  "\"hash_ids\": [1, -2]}\n", all, &t, err), -1);
    cr_assert(strstr(err, ":1: \"hash_ids\" must hold whole numbers"), "%s", err);
    cr_assert_eq(load("azure", "TIME,ContextTokens,GeneratedTokens\n1,2,3\n", all, &t, err), -1);
    cr_assert(strstr(err, ":1: the header must name TIMESTAMP"), "%s", err);
    cr_assert_eq(load("azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,abc,3\n", all, &t, err), -1);
    cr_assert(strstr(err, ":2: ContextTokens"), "%s", err);
    cr_assert_eq(load("mooncake", "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 1}\n",
                      (struct trace_window){10, 0, 1}, &t, err), -1);
    cr_assert(strstr(err, "no request in the window"), "%s", err);
    cr_assert_eq(trace_load("mooncake:/nonexistent/x", &all, &t, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/x: cannot read"), "%s", err);
}
