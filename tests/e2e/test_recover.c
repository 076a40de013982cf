/* test_recover.c — nothing measured is lost: `anvil run` journals every
 * request as it ends, and after a kill -9 `anvil recover` rebuilds an
 * artifact holding every request that had ended. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

/* Complete lines of the file (newline-terminated). */
static int count_lines(const char *path)
{
    size_t len = 0;
    char *t = harness_read_file(path, &len);
    int n = 0;
    for (size_t i = 0; t && i < len; i++)
        n += t[i] == '\n';
    free(t);
    return n;
}

Test(recover, kill_9_mid_run_then_recover_keeps_every_ended_request, .timeout = 120)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "5", "--itl-ms", "10", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-recover-XXXXXX", out[128], journal[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/r.json", dir);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "400",
                          "--concurrency", "2", "--input-len", "16", "--output-len", "8",
                          "--calibration", "none", "--out", out, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    int lines = 0;
    for (int i = 0; i < 3000 && lines < 12; i++) {     /* header + at least 11 requests */
        harness_sleep_ms(10);
        if (harness_find_journal(dir, journal, sizeof journal) == 0)
            lines = count_lines(journal);
    }
    cr_assert_geq(lines, 12, "the journal did not grow (%d lines)", lines);
    kill(pid, SIGKILL);
    int ws;
    waitpid(pid, &ws, 0);
    cr_assert(WIFSIGNALED(ws));
    cr_assert_neq(access(out, F_OK), 0, "the killed run wrote its artifact");
    int ended = count_lines(journal) - 1;
    const char *rec[] = {harness_anvil_bin(), "recover", journal, NULL};
    char o[8192], e[4096];
    int status;
    cr_assert_eq(run_cmd_err(rec, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 0, "%s", e);
    cr_assert(strstr(o, out), "%s", o);
    cJSON *a = harness_load_json(out);
    cr_assert_eq((int)harness_num(a, "completed") + (int)harness_num(a, "failed"), ended,
                 "the journal has %d ended requests", ended);
    cr_assert_eq(cJSON_GetArraySize(harness_json_path(a, "request_timings")), (int)harness_num(a, "completed"));
    cr_assert(cJSON_IsTrue(harness_json_path(a, "incomplete")));
    cr_assert_eq((int)harness_num(a, "requests"), 400);
    cr_assert_eq((int)harness_num(a, "not_sent"), 400 - ended);
    cr_assert_gt(harness_num(harness_json_path(a, "metrics"), "ttft_p50_ms"), 4);
    cJSON_Delete(a);
    /* a second recovery does not overwrite the first */
    cr_assert_eq(run_cmd_err(rec, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 1);
    cr_assert(strstr(e, "exists"), "%s", e);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(out);
    unlink(journal);
    rmdir(dir);
}

Test(recover, a_finished_run_recovers_to_the_same_measurements, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-recover-XXXXXX", out[128], again[128], journal[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/r.json", dir);
    snprintf(again, sizeof again, "%s/again.json", dir);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "6",
                          "--input-len", "16", "--output-len", "4", "--out", out, NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, NULL, 0, &status), 0);
    cr_assert_eq(status, 0);
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0, "no journal next to %s", out);
    cr_assert_eq(count_lines(journal), 7);
    const char *rec[] = {harness_anvil_bin(), "recover", journal, "--out", again, NULL};
    cr_assert_eq(run_cmd_err(rec, NULL, 0, NULL, 0, &status), 0);
    cr_assert_eq(status, 0);
    cJSON *a = harness_load_json(out), *b = harness_load_json(again);
    /* energy comes from the hardware samplers, which a journal does not hold (as loop lag and
     * client CPU): a recovered artifact has none */
    const char *sampled[] = {"energy_j", "output_tokens_per_joule", "joules_per_output_token"};
    for (size_t i = 0; i < sizeof sampled / sizeof *sampled; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(a, "metrics"), sampled[i]);
    const char *same[] = {"metrics", "request_timings", "failures", "calibration", "provenance", "run_id"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++)
        cr_assert(cJSON_Compare(cJSON_GetObjectItem(a, same[i]), cJSON_GetObjectItem(b, same[i]), 1),
                  "%s differs after recovery", same[i]);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(out);
    unlink(again);
    unlink(journal);
    rmdir(dir);
}

/* With --num-warmups: the warm-ups' journal lines are not the run's
 * requests (their request_index is the warm-up's own), so the recovered
 * artifact leaves them out as the run's did: the same metrics (the peak
 * output rate among them) and context_distribution. */
Test(recover, a_finished_run_with_warmups_recovers_to_the_same_measurements, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "2", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-recover-XXXXXX", out[128], again[128], journal[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/r.json", dir);
    snprintf(again, sizeof again, "%s/again.json", dir);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "6",
                          "--num-warmups", "3", "--input-len", "16", "--output-len", "4", "--calibration", "none",
                          "--out", out, NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, NULL, 0, &status), 0);
    cr_assert_eq(status, 0);
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0, "no journal next to %s", out);
    cr_assert_eq(count_lines(journal), 10, "a header, 3 warm-ups and 6 requests");
    const char *rec[] = {harness_anvil_bin(), "recover", journal, "--out", again, NULL};
    cr_assert_eq(run_cmd_err(rec, NULL, 0, NULL, 0, &status), 0);
    cr_assert_eq(status, 0);
    cJSON *a = harness_load_json(out), *b = harness_load_json(again);
    const char *sampled[] = {"energy_j", "output_tokens_per_joule", "joules_per_output_token"};
    for (size_t i = 0; i < sizeof sampled / sizeof *sampled; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItem(a, "metrics"), sampled[i]);
    cr_assert_eq(harness_num(harness_json_path(b, "context_distribution"), "16"), 6);
    const char *same[] = {"metrics", "context_distribution", "request_timings", "failures", "requests"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++)
        cr_assert(cJSON_Compare(cJSON_GetObjectItem(a, same[i]), cJSON_GetObjectItem(b, same[i]), 1),
                  "%s differs after recovery", same[i]);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(out);
    unlink(again);
    unlink(journal);
    rmdir(dir);
}

Test(recover, a_signal_after_the_last_send_whose_requests_end_in_grace_cuts_nothing, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1500", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char path[64];
    cr_assert_eq(harness_tmpfile(path, sizeof path), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "2",
                          "--concurrency", "2", "--input-len", "16", "--output-len", "2",
                          "--calibration", "none", "--grace-s", "10", "--out", path, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    harness_sleep_ms(700);      /* both sent, both waiting for their first token */
    kill(pid, SIGTERM);
    int ws;
    waitpid(pid, &ws, 0);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "exit %d", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    cJSON *a = harness_load_json(path);
    cr_assert(cJSON_IsFalse(harness_json_path(a, "incomplete")), "a round that lost nothing is incomplete");
    cr_assert_eq((int)harness_num(a, "completed"), 2);
    cJSON_Delete(a);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(path);
}

/* Whether any file in dir holds needle. */
static int holds_secret(const char *dir, const char *needle, char *where, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int hits = 0;
    while (d && (e = readdir(d))) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *t = e->d_name[0] == '.' ? NULL : harness_read_file(path, NULL);
        if (t && strstr(t, needle)) {
            hits++;
            snprintf(where, cap, "%s", path);
        }
        free(t);
    }
    if (d)
        closedir(d);
    return hits;
}

Test(recover, no_secret_reaches_the_artifact_journal_log_or_recovery, .timeout = 60)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-secrets-XXXXXX", out[128], log[128], rec[128], url[256], journal[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/r.json", dir);
    snprintf(log, sizeof log, "%s/requests.jsonl", dir);
    snprintf(rec, sizeof rec, "%s/recovered.json", dir);
    snprintf(url, sizeof url, "http://user:urlSECRETpw@%s:%d/v1", sim.host, sim.port);
    setenv("ANVIL_TEST_KEY", "sk-keySECRET", 1);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", url, "--api-key-env", "ANVIL_TEST_KEY",
                          "--header", "X-Token: hdrSECRET", "--num-prompts", "3", "--input-len", "16",
                          "--output-len", "2", "--requests-out", log, "--out", out, NULL};
    char o[16384], e[8192];
    int status;
    cr_assert_eq(run_cmd_err(argv, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 0, "%s", e);
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0);
    const char *r[] = {harness_anvil_bin(), "recover", journal, "--out", rec, NULL};
    cr_assert_eq(run_cmd_err(r, o, sizeof o, e, sizeof e, &status), 0);
    cr_assert_eq(status, 0, "%s", e);
    const char *secrets[] = {"urlSECRETpw", "sk-keySECRET", "hdrSECRET"};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_null(strstr(o, secrets[i]));
        cr_assert_null(strstr(e, secrets[i]));
    }
    /* and what the reading commands write from the artifact: a matrix, a report, a table */
    char matrix[160], html[160];
    snprintf(matrix, sizeof matrix, "%s/matrix.json", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    const char *agg[] = {harness_anvil_bin(), "aggregate", out, "--out", matrix, NULL};
    const char *rep[] = {harness_anvil_bin(), "report", out, "-o", html, NULL};
    const char *show[] = {harness_anvil_bin(), "show", out, "--format", "json", NULL};
    const char *const *readers[] = {agg, rep, show};
    for (size_t k = 0; k < 3; k++) {
        cr_assert_eq(run_cmd_err(readers[k], o, sizeof o, e, sizeof e, &status), 0);
        cr_assert_eq(status, 0, "%s: %s", readers[k][1], e);
        for (size_t i = 0; i < 3; i++) {
            cr_assert_null(strstr(o, secrets[i]), "%s printed %s", readers[k][1], secrets[i]);
            cr_assert_null(strstr(e, secrets[i]), "%s printed %s", readers[k][1], secrets[i]);
        }
    }
    for (size_t i = 0; i < 3; i++) {
        char where[600] = "";
        cr_assert_eq(holds_secret(dir, secrets[i], where, sizeof where), 0, "%s is in %s", secrets[i], where);
    }
    unlink(matrix);
    unlink(html);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(out);
    unlink(log);
    unlink(rec);
    unlink(journal);
    rmdir(dir);
}

/* A full disk under the journal (here a file-size limit: writes past it fail
 * with EFBIG, as on a full disk with ENOSPC): the run keeps going, its
 * artifact has every request and says how many journal lines were lost, and
 * `anvil recover` skips the line the limit cut, counts it, and recovers the
 * rest. Before, SIGXFSZ killed the run, and recover refused the journal. */
Test(recover, a_journal_cut_by_a_full_disk_is_said_and_recovered_around, .timeout = 90)
{
    struct sim_proc sim;
    const char *sa[] = {"--ttft-ms", "1", "--itl-ms", "0.05", NULL};
    cr_assert_eq(sim_start(&sim, sa), 0);
    char dir[] = "/tmp/anvil-recover-XXXXXX", out[128], again[128], journal[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/r.json", dir);
    snprintf(again, sizeof again, "%s/again.json", dir);
    /* journal lines of ~6 KB (256 chunks each) pass 120 KB within 40 requests; the artifact
     * (~0.7 KB a request) stays under it */
    const char *argv[] = {"prlimit", "--fsize=120000", harness_anvil_bin(), "run", "--base-url", sim.base_url,
                          "--num-prompts", "40", "--concurrency", "4", "--input-len", "16", "--output-len", "256",
                          "--telemetry", "off", "--out", out, NULL};
    static char err[65536];
    int status;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "the measurements are whole: %s", err);
    cr_assert(strstr(err, "could not be written to the journal"), "%s", err);
    cJSON *a = harness_load_json(out);
    double lost = harness_num(a, "journal_lines_lost");
    cr_assert_gt(lost, 0);
    cr_assert_eq(harness_num(a, "completed"), 40);
    cJSON_Delete(a);
    cr_assert_eq(harness_find_journal(dir, journal, sizeof journal), 0);
    int kept = count_lines(journal);
    cr_assert_lt(kept, 41, "the journal is cut short");
    const char *rec[] = {harness_anvil_bin(), "recover", journal, "--out", again, NULL};
    cr_assert_eq(run_cmd_err(rec, NULL, 0, err, sizeof err, &status), 0);
    cr_assert_eq(status, 0, "%s", err);
    cr_assert(strstr(err, "damaged line skipped"), "the cut line is named: %s", err);
    cJSON *b = harness_load_json(again);
    cr_assert_eq(harness_num(b, "completed"), kept - 1, "every whole line recovered");
    const cJSON *why = cJSON_GetObjectItem(b, "incomplete_reason");
    cr_assert(cJSON_IsString(why) && strstr(why->valuestring, "1 damaged line skipped"), "%s",
              cJSON_IsString(why) ? why->valuestring : "null");
    cJSON_Delete(b);
    cr_assert_eq(sim_stop(&sim), 0);
    unlink(out);
    unlink(again);
    unlink(journal);
    rmdir(dir);
}
