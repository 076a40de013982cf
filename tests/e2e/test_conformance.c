/* test_conformance.c — the stream conformance corpus (tests/conformance/):
 * every known trap as a scripted server reply (`anvil sim --script`) with
 * the measurements anvil must report beside it (<case>.expect.json). Times
 * are checked within 6 ms of the script's schedule (the request's own
 * transit, a sanitizer build and a shared VM; the cases tell their events
 * apart by 10 ms or more), counts exactly. A loaded machine also delays the
 * server: the simulator's trace says how late the request reached it and
 * how late its latest write ran, and a time may be off by that much more
 * (the way in only for times from the request's start; measured, not
 * assumed: at rest a fraction of a millisecond; a late step lengthens the
 * gap before it and shortens the one after). A loaded machine delays the
 * client too: a first token read after later writes arrived is dated by
 * the newest (merged_read). Every case runs over both transports (anvil's
 * own and curl), and their two records must agree field for field. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "harness.h"

#define TIME_TOLERANCE_MS 6.0

/* Where an expected key is found: the request's entry, else the metrics. */
static const cJSON *find(const cJSON *art, const char *key)
{
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(art, "request_timings"), 0);
    const cJSON *v = cJSON_GetObjectItem(t, key);
    return v ? v : cJSON_GetObjectItem(cJSON_GetObjectItem(art, "metrics"), key);
}

/* What the simulator's trace says of the run's one request, against
 * anvil's clock: how long the request took to reach it and how late its
 * latest step ran (ms), and when each write began, from anvil's start
 * (ms). */
struct served {
    double transit_ms, late_ms;
    double write_ms[64];
    int n_writes;
    bool first_merged;      /* the request's entry says first_output_merged */
};

/* Fills sv from the trace; returns false when it holds no one generation
 * request (a reply the client refused may end before the script's). */
static bool served_try(const char *trace, const cJSON *art, struct served *sv)
{
    /* the one generation request; a stream without usage is followed by
     * anvil's POST /tokenize of its text, which the script answers too */
    cJSON *lines[4], *tr = NULL;
    int n = harness_read_jsonl(trace, lines, 4), generations = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *path = cJSON_GetObjectItem(lines[i], "path");
        if (cJSON_IsString(path) && strstr(path->valuestring, "completions")) {
            generations++;
            tr = lines[i];
        }
    }
    *sv = (struct served){0};
    const cJSON *entry = cJSON_GetArrayItem(cJSON_GetObjectItem(art, "request_timings"), 0);
    if (generations != 1 || !entry) {       /* a failed request has no timings entry */
        for (int i = 0; i < n; i++)
            cJSON_Delete(lines[i]);
        return false;
    }
    const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(art, "request_timings"), 0), *c;
    double start = harness_num(t, "start_monotonic_ns");
    *sv = (struct served){.transit_ms = (harness_num(tr, "received_ns") - start) / 1e6,
                          .late_ms = harness_num(tr, "late_ns") / 1e6,
                          .first_merged = cJSON_IsTrue(cJSON_GetObjectItem(t, "first_output_merged"))};
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(tr, "chunks"))
        if (sv->n_writes < 64)
            sv->write_ms[sv->n_writes++] = (harness_num(c, "t_ns") - start) / 1e6;
    for (int i = 0; i < n; i++)
        cJSON_Delete(lines[i]);
    cr_assert(sv->transit_ms >= 0 && sv->late_ms >= 0, "arrival %.3f ms after the send, steps %.3f ms late",
              sv->transit_ms, sv->late_ms);
    return true;
}

static void served_of(const char *trace, const cJSON *art, struct served *sv)
{
    cr_assert(served_try(trace, art, sv), "the trace holds no one generation request");
}

/* A time from the request's start (not a gap between chunks). */
static bool from_start(const char *key)
{
    return !strcmp(key, "ttft_ms") || !strcmp(key, "e2e_ms") || !strncmp(key, "time_to_", 8);
}

/* A first-something time the client read late, off the CPU while later
 * writes arrived: the kernel merged their segments and dated them all by
 * the newest (METHODOLOGY.md), so the value is a later write's arrival,
 * within 1 ms — never earlier than expected. For TTFT the request must say
 * so (first_output_merged): that is how a merged read is told. */
static bool merged_read(const char *key, double got, double want, const struct served *sv)
{
    if (strncmp(key, "time_to_first", 13) && strcmp(key, "ttft_ms"))
        return false;
    if (!strcmp(key, "ttft_ms") && !sv->first_merged)
        return false;
    for (int i = 0; i < sv->n_writes && got >= want - TIME_TOLERANCE_MS; i++)
        if (fabs(got - sv->write_ms[i]) <= 1.0 && sv->write_ms[i] > want)
            return true;
    return false;
}

static void check_value(const char *name, const cJSON *want, const cJSON *got, const struct served *sv)
{
    cr_assert(got, "%s: the artifact has no %s", name, want->string);
    if (cJSON_IsNull(want)) {
        cr_assert(cJSON_IsNull(got), "%s: %s should be null (undefined)", name, want->string);
    } else if (cJSON_IsString(want)) {
        cr_assert_str_eq(got->valuestring, want->valuestring, "%s: %s", name, want->string);
    } else if (strstr(want->string, "_ms")) {
        double delay = sv->late_ms + (from_start(want->string) ? sv->transit_ms : 0);
        double g = cJSON_IsNumber(got) ? got->valuedouble : NAN, d = g - want->valuedouble;
        cr_assert(fabs(d) <= TIME_TOLERANCE_MS + delay || merged_read(want->string, g, want->valuedouble, sv),
                  "%s: %s = %g, want %g ± %g (+ the server's own delay, %.3f ms)", name, want->string, g,
                  want->valuedouble, TIME_TOLERANCE_MS, delay);
    } else {
        cr_assert(cJSON_IsNumber(got) && fabs(got->valuedouble - want->valuedouble) < 1e-9,
                  "%s: %s = %g, want %g", name, want->string, got->valuedouble, want->valuedouble);
    }
}

static void check_failure(const char *name, const cJSON *art, const cJSON *expect)
{
    cr_assert_eq(cJSON_GetObjectItem(art, "failed")->valuedouble, 1, "%s: the request must fail", name);
    const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(art, "failures"), 0);
    cr_assert_str_eq(cJSON_GetObjectItem(f, "category")->valuestring,
                     cJSON_GetObjectItem(expect, "category")->valuestring, "%s", name);
    const cJSON *msg = cJSON_GetObjectItem(expect, "message");
    if (msg)
        cr_assert(strstr(cJSON_GetObjectItem(f, "message")->valuestring, msg->valuestring),
                  "%s: message '%s' lacks '%s'", name, cJSON_GetObjectItem(f, "message")->valuestring,
                  msg->valuestring);
    const cJSON *st = cJSON_GetObjectItem(expect, "http_status");
    if (st)
        cr_assert_eq(cJSON_GetObjectItem(f, "http_status")->valuedouble, st->valuedouble, "%s", name);
}

/* Runs case name over transport ("native" or "curl") and checks what
 * anvil reports against the case's expectations. Returns the request's
 * journal record (caller deletes) and in *delay_ms the server's own
 * delay, as the trace says. */
static cJSON *check_case(const char *name, const char *transport, double *delay_ms)
{
    char script[256], expect_path[256], art[64], trace[64];
    snprintf(script, sizeof script, "tests/conformance/%s.jsonl", name);
    snprintf(expect_path, sizeof expect_path, "tests/conformance/%s.expect.json", name);
    cJSON *expect = harness_load_json(expect_path);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--script", script, "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--calibration", "none",
                          "--num-prompts", "1", "--input-len", "4", "--output-len", "16", "--no-ignore-eos",
                          "--idle-timeout-s", "0.5", "--stall-timeout-s", "0", "--transport", transport, "--out", art, NULL};
    static char out[16384];
    int status;
    /* one stream: its own idle timeout speaks, not the run's stall rule (tests/e2e/test_stall.c) */
    cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
    /* a reply the client ended is traced once the simulator sees the close */
    cJSON *line = NULL;
    for (int k = 0; k < 100 && harness_read_jsonl(trace, &line, 1) < 1; k++)
        harness_sleep_ms(20);
    cJSON_Delete(line);
    sim_stop(&sim);
    cJSON *a = harness_load_json(art);
    cJSON *rec = harness_journal_record(art, a, 0);
    unlink(art);
    struct served served;
    *delay_ms = served_try(trace, a, &served) ? served.late_ms + served.transit_ms : 0;
    bool completed = !strcmp(cJSON_GetObjectItem(expect, "status")->valuestring, "completed");
    if (!completed) {
        check_failure(name, a, expect);
    } else {
        cr_assert_eq(cJSON_GetObjectItem(a, "completed")->valuedouble, 1, "%s:\n%s", name, out);
        struct served sv;
        served_of(trace, a, &sv);
        const cJSON *e;
        cJSON_ArrayForEach(e, expect) {
            if (!strcmp(e->string, "status") || !strcmp(e->string, "description") || !strcmp(e->string, "invariant") ||
                !strcmp(e->string, "invariants_ok"))
                continue;
            check_value(name, e, find(a, e->string), &sv);
        }
        const cJSON *inv = cJSON_GetObjectItem(expect, "invariant");
        if (inv)
            cr_assert_geq(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "invariants"),
                                                                   "violations"), inv->valuestring)->valuedouble,
                          1, "%s: invariant %s must be flagged", name, inv->valuestring);
        if (cJSON_IsTrue(cJSON_GetObjectItem(expect, "invariants_ok"))) {
            const cJSON *v, *vs = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "invariants"), "violations");
            cr_assert(cJSON_IsObject(vs) && vs->child, "%s: the artifact has no invariants", name);
            cJSON_ArrayForEach(v, vs)
                cr_assert_eq(v->valuedouble, 0, "%s: invariant %s violated", name, v->string);
        }
    }
    unlink(trace);
    cJSON_Delete(a);
    cJSON_Delete(expect);
    return rec;
}

static const char *const corpus[] = {
    "role_only_first_chunk", "role_early_then_long_gap", "reasoning_only_cut_by_max_tokens",
    "reasoning_then_content_reasoning_content", "reasoning_then_content_reasoning",
    "multi_token_chunks_usage_4x", "single_chunk_content_finish_usage", "usage_arrives_late",
    "continuous_usage_every_chunk", "no_usage_at_all", "usage_null_on_every_chunk",
    "error_object_inside_200_stream", "event_error_frame", "comments_and_crlf",
    "event_split_at_every_byte", "two_events_in_one_write", "event_of_300_kb", "invalid_json_event",
    "http_429_retry_after", "http_400_context_length", "connection_closed_mid_stream",
    "stream_never_ends", "utf8_split_across_writes", "llamacpp_error_line_in_200_stream",
    "llamacpp_error_object_in_200_stream", "vllm_error_event_after_content", "tgi_error_event_in_200_stream",
    "tool_call_only_no_content", "content_then_tool_call", "parallel_tool_calls", "legacy_function_call",
    "done_then_the_body_never_ends", "final_chunk_then_silence", "stream_buffered_into_one_write",
    "usage_far_below_chunks", "malformed_data_prefix", "malformed_prefix_on_one_event",
    "http_307_redirect", "gzip_body_not_asked_for", "error_body_with_terminal_escapes",
};

#define N_CASES (sizeof corpus / sizeof *corpus)

/* Parameters are indexes: a test may run in a freshly started process, where
 * a pointer from the parent would mean nothing. */
ParameterizedTestParameters(conformance, corpus)
{
    static int idx[N_CASES];
    for (size_t i = 0; i < N_CASES; i++)
        idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_CASES);
}

/* Every case on both transports, each against the case's expectations,
 * then against each other: the same record, field for field, times within
 * both runs' tolerance. */
ParameterizedTest(int *i, conformance, corpus, .timeout = 240)
{
    char what[160], why[300];
    snprintf(what, sizeof what, "%s, native against curl", corpus[*i]);
    bool same = false;
    for (int k = 0; k < HARNESS_SAME_TRIES && !same; k++) {
        double dn, dc;
        cJSON *native = check_case(corpus[*i], "native", &dn);
        cJSON *curl = check_case(corpus[*i], "curl", &dc);
        same = harness_same_record(what, native, curl, 2 * TIME_TOLERANCE_MS + dn + dc, why, sizeof why);
        cJSON_Delete(native);
        cJSON_Delete(curl);
    }
    cr_assert(same, "%s (in each of %d tries)", why, HARNESS_SAME_TRIES);
}

Test(conformance, every_script_in_the_folder_is_in_the_corpus)
{
    /* a case added to tests/conformance/ but not to the list above would never run */
    FILE *p = popen("ls tests/conformance/*.jsonl | wc -l", "r");
    int n = 0;
    cr_assert(p && fscanf(p, "%d", &n) == 1);
    pclose(p);
    cr_assert_eq(n, (int)N_CASES);
}

/* A raw POST to the simulator on 127.0.0.1:port (HTTP/1.0, or 1.1 with
 * Connection: close, so the reply ends with the connection); returns the
 * socket. */
static int post_raw(int port, bool http10)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    char req[256];
    int n = snprintf(req, sizeof req, "POST /v1/chat/completions HTTP/1.%d\r\nHost: x\r\nX-Request-Id: stopped\r\n"
                     "Connection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
                     http10 ? 0 : 1);
    cr_assert_eq(write(fd, req, (size_t)n), (ssize_t)n);
    return fd;
}

/* Reads fd to its end; returns the bytes read. */
static size_t read_all(int fd)
{
    char buf[4096];
    size_t total = 0;
    for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;)
        total += (size_t)k;
    close(fd);
    return total;
}

/* The allowance is the server's measured delay: a simulator stopped for
 * 300 ms just after a request was sent to it either reads the request that
 * late (received_ns) or runs its steps that late (late_ns), and its trace
 * says so — every write listed, none before its scheduled time. */
Test(conformance, a_stopped_server_shows_its_delay_in_the_trace, .timeout = 60)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *sim_args[] = {"--script", "tests/conformance/multi_token_chunks_usage_4x.jsonl", "--trace", trace,
                              NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double sent = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
    int fd = post_raw(sim.port, false);
    kill(sim.pid, SIGSTOP);
    harness_sleep_ms(300);
    kill(sim.pid, SIGCONT);
    cr_assert_gt(read_all(fd), 0);
    cr_assert_eq(sim_stop(&sim), 0);
    cJSON *tr[2];
    cr_assert_eq(harness_read_jsonl(trace, tr, 2), 1);
    double t0 = harness_num(tr[0], "received_ns"), late = harness_num(tr[0], "late_ns");
    cr_assert_geq(t0 - sent + late, 200e6, "read %.3f ms after the send, steps %.3f ms late: the 300 ms stop "
                  "must show", (t0 - sent) / 1e6, late / 1e6);
    static const double at_ms[] = {0, 30, 50, 70, 70, 70};
    const cJSON *c, *chunks = cJSON_GetObjectItem(tr[0], "chunks");
    cr_assert_eq(cJSON_GetArraySize(chunks), 6, "every write is listed");
    int k = 0;
    cJSON_ArrayForEach(c, chunks) {
        cr_assert_geq(harness_num(c, "t_ns"), t0 + at_ms[k] * 1e6, "write %d ran before its time", k);
        k++;
    }
    cr_assert_str_eq(cJSON_GetObjectItem(tr[0], "request_id")->valuestring, "stopped");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(tr[0], "first_token_ns")), "a script's bytes are not parsed");
    cJSON_Delete(tr[0]);
    unlink(trace);
}

/* A reply whose last step writes nothing, to an HTTP/1.0 client: ending
 * it frees the connection at once. The playback ended after that and wrote
 * to its freed state (found by ASan in the simulator); now it ends, traced
 * as finished, and the simulator stops cleanly. */
Test(conformance, a_reply_ending_with_an_empty_write_to_http10, .timeout = 60)
{
    char script[64], trace[64];
    cr_assert_eq(harness_tmpfile(script, sizeof script), 0);
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    FILE *f = fopen(script, "w");
    cr_assert(f);
    fputs("{\"status\": 200, \"headers\": {\"content-type\": \"text/event-stream\"}}\n"
          "{\"after_ms\": 0, \"write\": \"data: a\\n\\n\"}\n{\"after_ms\": 50, \"write\": \"\"}\n", f);
    fclose(f);
    const char *sim_args[] = {"--script", script, "--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    cr_assert_gt(read_all(post_raw(sim.port, true)), 0);
    cr_assert_gt(read_all(post_raw(sim.port, true)), 0, "the simulator still answers");
    cr_assert_eq(sim_stop(&sim), 0, "the simulator exits cleanly (no sanitizer report)");
    cJSON *tr[3];
    cr_assert_eq(harness_read_jsonl(trace, tr, 3), 2);
    for (int i = 0; i < 2; i++) {
        cr_assert(cJSON_IsFalse(cJSON_GetObjectItem(tr[i], "client_closed")), "the reply reached its end");
        cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(tr[i], "chunks")), 2);
        cJSON_Delete(tr[i]);
    }
    unlink(script);
    unlink(trace);
}
