/* test_truth.c — anvil's per-request timestamps against the simulator's
 * ground truth (`anvil sim --trace`), on the one CLOCK_MONOTONIC, at
 * concurrency 1 and 64: the moment anvil stamps the first token against the
 * moment the server wrote it: the median within 1 ms at both. Per request,
 * measured here p50 0.05–0.14 ms and max 0.2–0.8 ms, but this 2-vCPU VM
 * sometimes stalls a wake-up by 1–4 ms, so the per-request bounds are 2 ms
 * (concurrency 1) and 5 ms (64). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

#define MAX_REQ 256

/* server's first-token and finish times per request index (ns) */
static void read_trace(const char *path, double *first, double *finished)
{
    char *text = harness_read_file(path, NULL);
    cr_assert(text);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *t = cJSON_Parse(line);
        int idx;
        const cJSON *id = cJSON_GetObjectItem(t, "request_id");
        if (cJSON_IsString(id) && sscanf(id->valuestring, "anvil-req-%d", &idx) == 1 && idx < MAX_REQ) {
            first[idx] = harness_num(t, "first_token_ns");
            finished[idx] = harness_num(t, "finished_ns");
        }
        cJSON_Delete(t);
    }
    free(text);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* max_ms bounds every request's first-token error; the median must be ≤ 1 ms */
static void agree(const char *concurrency, int n, double max_ms)
{
    char trace[64], art[64], np[16];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    snprintf(np, sizeof np, "%d", n);
    const char *sim_args[] = {"--ttft-ms", "30", "--itl-ms", "10", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", concurrency,
                          "--num-prompts", np, "--input-len", "64", "--output-len", "16", "--out", art, NULL};
    static char out[16384];
    int status;
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(status, 0, "%s", out);
    static double first[MAX_REQ], finished[MAX_REQ];
    for (int i = 0; i < MAX_REQ; i++)
        first[i] = finished[i] = NAN;
    read_trace(trace, first, finished);
    char *text = harness_read_file(art, NULL);
    cJSON *a = cJSON_Parse(text);
    free(text);
    const cJSON *t;
    int k = 0;
    double first_errs[MAX_REQ], end_errs[MAX_REQ];
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(a, "request_timings")) {
        int idx = (int)harness_num(t, "request_index");
        double start = harness_num(t, "start_monotonic_ns");
        double err = (start + harness_num(t, "ttft_ms") * 1e6 - first[idx]) / 1e6;
        cr_assert(err >= 0 && err <= max_ms, "concurrency %s, request %d: first token stamped %.3f ms after "
                  "the server wrote it", concurrency, idx, err);
        first_errs[k] = err;
        end_errs[k++] = (start + harness_num(t, "e2e_ms") * 1e6 - finished[idx]) / 1e6;
    }
    cr_assert_eq(k, n);
    qsort(first_errs, (size_t)k, sizeof *first_errs, cmp_double);
    qsort(end_errs, (size_t)k, sizeof *end_errs, cmp_double);
    cr_assert_leq(first_errs[k / 2], 1.0, "concurrency %s: median first-token error %.3f ms", concurrency,
                  first_errs[k / 2]);
    /* the end: the server notes finished_ns after handing over [DONE], so the
     * client may see it first; and [DONE] of many streams ending in one pass
     * leaves one after another. The median must agree within 2 ms. */
    cr_assert(fabs(end_errs[k / 2]) <= 2.0, "concurrency %s: end of stream %.3f ms (median) from the "
              "server's finish", concurrency, end_errs[k / 2]);
    cJSON_Delete(a);
    unlink(trace);
    unlink(art);
}

Test(truth, first_token_median_within_1ms_at_concurrency_1, .timeout = 60)
{
    agree("1", 16, 2.0);
}

Test(truth, first_token_median_within_1ms_at_concurrency_64, .timeout = 120)
{
    agree("64", 192, 5.0);
}
