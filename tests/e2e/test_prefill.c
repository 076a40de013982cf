/* test_prefill.c — standalone cold prefills (decode/prefill.h) against
 * `anvil sim` with its prefix cache on: every measured prompt is unique, so
 * the server finds none of it cached and its own counters validate the
 * client's prefill figure; a context the server cannot hold is recorded,
 * not rendered, and the next context still runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "decode/prefill.h"
#include "harness.h"

static void tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/anvil-prefill-XXXXXX");
    cr_assert(mkdtemp(out));
}

static void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The run settings of the tests: the simulator, quiet, no telemetry. */
static void base_of(struct run_config *c, const struct sim_proc *sim, FILE *log)
{
    run_config_defaults(c);
    c->transport.base_url = sim->base_url;
    c->observe.telemetry = OBS_MODE_OFF;
    c->observe.scrape_interval_ms = 200;
    c->log = log;
    c->name = "test prefill";
}

Test(prefill_e2e, cold_prefills_per_context_validated_by_the_server, .timeout = 60)
{
    char trace[64], dir[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    tmpdir(dir, sizeof dir);
    const char *sim_args[] = {"--enable-prefix-caching", "--max-model-len", "4096", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    FILE *log = tmpfile();
    struct run_config base;
    base_of(&base, &sim, log);
    const long contexts[] = {256, 1024, 8192};     /* 8192 does not fit the 4096-token context */
    struct prefill_config c;
    char err[256];
    cr_assert_eq(prefill_config_from_run(&c, &base, contexts, 3, 2, err, sizeof err), 0, "%s", err);
    c.out_dir = dir;
    struct prefill_result r;
    int rc = prefill_run(&c, &r);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(rc, -1, "the 8192 context failed");
    cr_assert(r.warmup_run && r.warmup_status == RUN_OK, "%s", r.warmup_error);
    cr_assert_eq(r.n, 3);
    for (int i = 0; i < 2; i++) {
        const struct prefill_entry *e = &r.entries[i];
        cr_assert_eq(e->status, RUN_OK, "context %ld: %s", contexts[i], e->error);
        cr_assert_eq(e->samples, 2);
        cr_assert_leq(labs(e->prompt_tokens - contexts[i]), 4 + contexts[i] / 100, "%ld", e->prompt_tokens);
        cr_assert_gt(e->client_ttft_s, 0);
        cr_assert_eq(e->client_tok_per_sec, (double)e->prompt_tokens / e->client_ttft_s, "prompt_tokens / TTFT");
        cr_assert_str_eq(e->server.invalid_reason, "", "context %ld: %s", contexts[i], e->server.invalid_reason);
        cr_assert_str_eq(e->server.method, "prometheus:kv_computed");
        cr_assert_eq(e->server.samples, 2);
        cr_assert_eq(e->server.cached_tokens, 0, "cold: nothing found in the prefix cache");
        cr_assert_eq(e->server.prompt_tokens, e->prompt_tokens);
        cr_assert_gt(e->server.tok_per_sec, 0);
        cr_assert(access(e->artifact_path, F_OK) == 0, "%s", e->artifact_path);
    }
    const struct prefill_entry *big = &r.entries[2];
    cr_assert_not(big->sent);
    cr_assert(strstr(big->error, "cannot fit"), "%s", big->error);
    struct decode_prefill_map typed;
    cr_assert_eq(prefill_entries_typed(r.entries, r.n, &typed), 0);
    cJSON *j = decode_prefill_map_json(typed.v, typed.n);
    for (size_t i = 0; i < typed.n; i++)
        decode_prefill_free(&typed.v[i]);
    free(typed.v);
    cr_assert_eq(cJSON_GetArraySize(j), 2);
    cr_assert(cJSON_GetObjectItem(j, "256") && cJSON_GetObjectItem(j, "1024") && !cJSON_GetObjectItem(j, "8192"));
    cJSON_Delete(j);
    prefill_result_free(&r);
    /* the server's view: one warm-up and 2 × 2 measured prompts, none of them cached */
    cJSON *lines[64];
    int n = harness_read_jsonl(trace, lines, 64);
    int measured = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *id = cJSON_GetObjectItem(lines[i], "request_id");
        if (cJSON_IsString(id)) {
            measured++;
            cr_assert_eq(harness_num(lines[i], "cached_tokens"), 0, "line %d", i);
        }
        cJSON_Delete(lines[i]);
    }
    cr_assert_eq(measured, 5);
    fclose(log);
    unlink(trace);
    rmtree(dir);
}
