/* test_live.c — a run watched live and joined to the server's traces, end
 * to end against the reference simulator: `--metrics-listen` scraped
 * mid-run only ever rises, never shows more than the artifact says at the
 * end, and shows exactly the artifact's counts once the load is over (the
 * artifact goes to a FIFO, so the run waits, endpoint up, until the test
 * has scraped); a port in use is a usage error before any request;
 * `--traceparent` sends one distinct W3C header per request, which the
 * simulator's trace records and the artifact's trace_id matches; a soak
 * of `--duration 2h` stopped by Ctrl-C keeps what it measured. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"
#include "load/live.h"
#include "observe/prom.h"

#define N_REQ 40

/* A TCP port nothing listens on now (bound to port 0, then closed). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* What one scrape said. */
struct scrape {
    double started, completed, failed, cut, tokens, in_flight;
    double ttft_count, itl_count, lag_count;
};

/* The value of the unlabelled sample name, or of name{le="+Inf"} when inf;
 * fails the test when absent. */
static double sample(const struct prom_snapshot *s, const char *name, bool inf)
{
    for (size_t i = 0; i < s->n_samples; i++) {
        const struct prom_sample *p = &s->samples[i];
        const char *le = prom_label(p, "le");
        if (!strcmp(p->name, name) && (inf ? le && !strcmp(le, "+Inf") : p->n_labels == 0))
            return p->value;
    }
    cr_assert_fail("no sample %s in the scrape", name);
    return NAN;
}

/* Every histogram's cumulative buckets never fall and end at its _count. */
static void check_histograms(const struct prom_snapshot *s)
{
    const char *names[] = {"anvil_ttft_seconds", "anvil_itl_seconds", "anvil_loop_lag_seconds",
                           "anvil_send_lateness_seconds"};
    for (size_t h = 0; h < sizeof names / sizeof *names; h++) {
        char bucket[80], count[80];
        snprintf(bucket, sizeof bucket, "%s_bucket", names[h]);
        snprintf(count, sizeof count, "%s_count", names[h]);
        double last = 0;
        int n = 0;
        for (size_t i = 0; i < s->n_samples; i++) {
            if (strcmp(s->samples[i].name, bucket))
                continue;
            cr_assert_eq(s->samples[i].type, PROM_HISTOGRAM, "%s is not typed histogram", bucket);
            cr_assert_geq(s->samples[i].value, last, "%s falls", bucket);
            last = s->samples[i].value;
            n++;
        }
        cr_assert_eq(n, LIVE_BUCKETS + 1, "%s: %d buckets", names[h], n);
        cr_assert_eq(sample(s, count, false), last, "%s != its +Inf bucket", count);
    }
}

/* Scrapes url into *out. Returns 0, or -1 when nothing answered. */
static int scrape(const char *url, struct scrape *out)
{
    struct http_reply r;
    if (http_get(url, &r) != 0 || r.status != 200) {
        http_reply_free(&r);
        return -1;
    }
    cr_assert(strstr(r.content_type, "text/plain"), "Content-Type %s", r.content_type);
    struct prom_snapshot s = {0};
    char err[200];
    cr_assert_eq(prom_parse(r.body, r.len, &s, err, sizeof err), 0, "anvil's own text: %s", err);
    *out = (struct scrape){
        .started = sample(&s, "anvil_requests_started_total", false),
        .completed = sample(&s, "anvil_requests_completed_total", false),
        .failed = sample(&s, "anvil_requests_failed_total", false),
        .cut = sample(&s, "anvil_requests_cut_total", false),
        .tokens = sample(&s, "anvil_output_tokens_total", false),
        .in_flight = sample(&s, "anvil_requests_in_flight", false),
        .ttft_count = sample(&s, "anvil_ttft_seconds_count", false),
        .itl_count = sample(&s, "anvil_itl_seconds_count", false),
        .lag_count = sample(&s, "anvil_loop_lag_seconds_count", false),
    };
    check_histograms(&s);
    prom_snapshot_free(&s);
    http_reply_free(&r);
    return 0;
}

/* Counters never fall from one scrape to the next. */
static void check_rises(const struct scrape *a, const struct scrape *b)
{
    cr_assert(b->started >= a->started && b->completed >= a->completed && b->failed >= a->failed &&
              b->tokens >= a->tokens && b->ttft_count >= a->ttft_count && b->itl_count >= a->itl_count &&
              b->lag_count >= a->lag_count, "a counter fell between two scrapes");
}

Test(live, metrics_listen_scraped_mid_run_matches_the_artifact_at_the_end, .timeout = 120)
{
    char dir[64], fifo[96], trace[64], cmd[1200], url[64];
    cr_assert_eq(harness_tmpfile(dir, sizeof dir), 0);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    unlink(dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    snprintf(fifo, sizeof fifo, "%s/artifact.fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    /* 20 tokens at 10 ms: ~0.2 s a request; one in five answered 503, one in five cut mid-stream */
    const char *sa[] = {"--ttft-ms", "10", "--itl-ms", "10", "--fail-rate", "0.2", "--disconnect-rate", "0.2",
                        "--seed", "7", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    int port = free_port();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", port);
    snprintf(cmd, sizeof cmd, "exec %s run --base-url %s --concurrency 4 --threads 2 --num-prompts %d "
             "--warmup 2 --input-len 16 --output-len 20 --calibration none --metrics-listen 127.0.0.1:%d "
             "--out %s", harness_anvil_bin(), sim.base_url, N_REQ, port, fifo);
    const char *argv[] = {"sh", "-c", cmd, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    struct scrape prev = {0}, now;
    int scrapes = 0, mid = 0;
    /* until every measured request has ended: the counts are final then,
     * and the run waits on the FIFO with its endpoint still up */
    for (int i = 0; i < 3000 && !(scrapes && prev.completed + prev.failed == N_REQ); i++) {
        if (scrape(url, &now) == 0) {
            check_rises(&prev, &now);
            cr_assert_leq(now.in_flight, 4);
            cr_assert_eq(now.in_flight, now.started - now.completed - now.failed - now.cut);
            cr_assert_eq(now.ttft_count, now.completed, "one TTFT per completed request");
            mid += now.started > 0 && now.completed + now.failed < N_REQ;
            prev = now;
            scrapes++;
        }
        harness_sleep_ms(20);
    }
    cr_assert_gt(mid, 0, "no scrape while requests ran");
    int fd = open(fifo, O_RDONLY);  /* lets the run write its artifact and end */
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "r");
    char *text = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&text, &cap, '\0', f);
    fclose(f);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_gt(n, 0);
    cJSON *a = cJSON_Parse(text);
    free(text);
    cr_assert(a, "the artifact is JSON");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "exit %d", WEXITSTATUS(st));
    /* the end: the artifact's counts, and warm-ups never counted */
    cr_assert_eq(prev.started, N_REQ);
    cr_assert_eq(prev.completed, harness_num(a, "completed"));
    cr_assert_eq(prev.failed, harness_num(a, "failed"));
    cr_assert_gt(prev.failed, 0, "the fault rate failed none: the test proves less");
    cr_assert_eq(prev.tokens, harness_num(cJSON_GetObjectItem(a, "metrics"), "output_tokens"));
    cr_assert_eq(prev.in_flight, 0);
    /* ITL: one gap per output chunk after the first, over the artifact's completed requests only
     * (a stream cut mid-way had gaps too: they were counted as they came) */
    double gaps = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings"))
        gaps += harness_num(r, "output_chunks") - 1;
    cr_assert_eq(prev.itl_count, gaps);
    cJSON_Delete(a);
    unlink(fifo);
    unlink(trace);
    rmdir(dir);
}

/* A port already in use: exit 2, naming the flag and the address, and the
 * server saw no request. */
Test(live, metrics_listen_on_a_port_in_use_is_a_usage_error_before_any_request, .timeout = 60)
{
    char trace[64], err[2048], spec[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sa[] = {"--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    snprintf(spec, sizeof spec, "127.0.0.1:%d", sim.port);   /* the simulator holds it */
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "2",
                          "--calibration", "none", "--metrics-listen", spec, NULL};
    int st;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, err, sizeof err, &st), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(st, 2, "exit %d: %s", st, err);
    cr_assert(strstr(err, "--metrics-listen") && strstr(err, spec) && strstr(err, "in use"), "%s", err);
    char *t = harness_read_file(trace, NULL);
    cr_assert(!t || !strstr(t, "/v1/"), "a request reached the server: %s", t);
    free(t);
    unlink(trace);
}

/* The trace id of a traceparent header value, checked against the W3C
 * format (version 00, 32 and 16 lowercase hex, not all zero, sampled). */
static void trace_id_of(const char *tp, char out[33])
{
    regex_t re;
    cr_assert_eq(regcomp(&re, "^00-[0-9a-f]{32}-[0-9a-f]{16}-01$", REG_EXTENDED | REG_NOSUB), 0);
    cr_assert_eq(regexec(&re, tp, 0, NULL, 0), 0, "not a W3C traceparent: %s", tp);
    regfree(&re);
    cr_assert(strncmp(tp + 3, "00000000000000000000000000000000", 32), "an all-zero trace id");
    cr_assert(strncmp(tp + 36, "0000000000000000", 16), "an all-zero span id");
    memcpy(out, tp + 3, 32);
    out[32] = '\0';
}

static void traced_run(bool on, cJSON **art, cJSON **lines, int *n_lines)
{
    char trace[64], path[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(path, sizeof path), 0);
    const char *sa[] = {"--ttft-ms", "5", "--itl-ms", "2", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--num-prompts", "24",
                          "--concurrency", "4", "--threads", "2", "--warmup", "2", "--input-len", "16",
                          "--output-len", "8", "--calibration", "none", "--out", path,
                          on ? "--traceparent" : NULL, NULL};
    int st;
    cr_assert_eq(run_cmd_err(argv, NULL, 0, NULL, 0, &st), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_eq(st, 0);
    *art = harness_load_json(path);
    cr_assert(*art);
    *n_lines = harness_read_jsonl(trace, lines, 64);
    cr_assert_gt(*n_lines, 0);
    unlink(trace);
    unlink(path);
}

Test(live, traceparent_reaches_the_server_and_the_artifact_names_its_trace, .timeout = 60)
{
    cJSON *a, *lines[64];
    int n;
    traced_run(true, &a, lines, &n);
    char ids[64][33];
    int posts = 0;
    for (int i = 0; i < n; i++) {
        const char *rid = cJSON_GetStringValue(cJSON_GetObjectItem(lines[i], "request_id"));
        const char *tp = cJSON_GetStringValue(cJSON_GetObjectItem(lines[i], "traceparent"));
        if (!rid)
            continue;       /* the pre-warm GETs carry none */
        cr_assert(tp, "request %s sent no traceparent", rid);
        char id[33];
        trace_id_of(tp, id);
        for (int k = 0; k < posts; k++)
            cr_assert(strcmp(ids[k], id), "two requests share trace id %s", id);
        memcpy(ids[posts++], id, sizeof id);
        int index;
        if (sscanf(rid, "anvil-req-%d", &index) != 1)
            continue;       /* a warm-up: sent a header, not in the artifact */
        const cJSON *r;
        bool found = false;
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings")) {
            if (harness_num(r, "request_index") != index)
                continue;
            found = true;
            cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "trace_id")), id,
                             "request %d's trace_id is not the one its server saw", index);
        }
        cr_assert(found, "request %d not in the artifact", index);
    }
    cr_assert_eq(posts, 26, "%d requests with a traceparent (24 + 2 warm-ups)", posts);
    for (int i = 0; i < n; i++)
        cJSON_Delete(lines[i]);
    cJSON_Delete(a);
}

Test(live, without_traceparent_no_header_is_sent_and_no_trace_id_written, .timeout = 60)
{
    cJSON *a, *lines[64];
    int n;
    traced_run(false, &a, lines, &n);
    for (int i = 0; i < n; i++) {
        cr_assert(cJSON_IsNull(cJSON_GetObjectItem(lines[i], "traceparent")), "a traceparent was sent");
        cJSON_Delete(lines[i]);
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings"))
        cr_assert_null(cJSON_GetObjectItem(r, "trace_id"));
    cJSON_Delete(a);
}

/* o's string k, or "" when it has none. */
static const char *str(const cJSON *o, const char *k)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
    return s ? s : "";
}

/* A soak typed in hours, stopped by Ctrl-C a few seconds in: it ends
 * within its grace period, says it was cut short (exit 1), keeps the
 * window it ran (not the two hours asked) and every request it measured:
 * each completed one is a reply the server finished, as its trace says. */
Test(live, a_soak_of_hours_stopped_by_ctrl_c_keeps_what_it_measured, .timeout = 90)
{
    char trace[64], art[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    unlink(art);
    const char *sa[] = {"--ttft-ms", "5", "--itl-ms", "10", "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start_reference(&sim, sa), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "4",
                          "--duration", "2h", "--input-len", "16", "--output-len", "20", "--calibration",
                          "none", "--grace-s", "1", "--out", art, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    cJSON *lines[512];
    int n = 0;
    for (int i = 0; i < 3000 && n < 12; i++) {
        harness_sleep_ms(10);
        char *t = harness_read_file(trace, NULL);
        n = 0;
        for (const char *p = t; p && (p = strstr(p, "anvil-req-")); p++)
            n++;
        free(t);
    }
    cr_assert_geq(n, 12, "the soak never got going");
    kill(pid, SIGINT);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    cJSON *a = harness_load_json(art);
    cr_assert(a);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "incomplete")));
    const cJSON *dm = cJSON_GetObjectItem(a, "duration_mode");
    cr_assert_eq(harness_num(dm, "duration_s"), 7200);
    cr_assert(harness_num(dm, "window_s") > 0.1 && harness_num(dm, "window_s") < 60, "window %g s",
              harness_num(dm, "window_s"));
    n = harness_read_jsonl(trace, lines, 512);
    cr_assert_gt(n, 0);
    int kept = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(a, "request_timings")) {
        char rid[32];
        snprintf(rid, sizeof rid, "anvil-req-%d", (int)harness_num(r, "request_index"));
        bool finished = false;
        for (int i = 0; i < n && !finished; i++)
            finished = !strcmp(str(lines[i], "request_id"), rid) && !strcmp(str(lines[i], "finish_reason"), "length") &&
                       harness_num(lines[i], "completion_tokens") == harness_num(r, "output_tokens");
        cr_assert(finished, "%s completed in the artifact, not in the server's trace", rid);
        kept++;
    }
    cr_assert_geq(kept, 8, "only %d requests kept", kept);
    cr_assert_eq(kept, harness_num(a, "completed"));
    for (int i = 0; i < n; i++)
        cJSON_Delete(lines[i]);
    cJSON_Delete(a);
    unlink(trace);
    unlink(art);
}
