/* test_transports.c — anvil's own HTTP/1.1 transport against curl on a
 * hostile server (in this file): replies that are valid HTTP but unusual
 * (a Content-Length body, a body ended by the close, 100 Continue,
 * upper-case names, chunk extensions and trailers, a head sent a byte at a
 * time, a server that drops every kept-alive connection) and replies that
 * are not (a bad chunk size, a status line that is not HTTP, a reset, a
 * close before any byte). Each runs over both transports: the outcome is
 * the case's, and the two records agree field for field
 * (harness_same_record). The corpus (test_conformance.c) and the truth
 * tests (test_truth.c) run on both transports too. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "harness.h"

/* Two output events and the usage, as a chat stream (chunk sizes below:
 * 0x4b, 0x39, 0x52 and 0x68 for the last two together). */
#define EV_ROLE "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
#define EV_A "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
#define EV_B "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"length\"}]}\n\n"
#define EV_USAGE "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":2,\"total_tokens\":10}}\n\n"
#define EV_DONE "data: [DONE]\n\n"

enum step_kind { WRITE, BYTEWISE, CLOSE, RESET, END };

/* After ms, write bytes (BYTEWISE: one byte per millisecond), or end the
 * connection (CLOSE: FIN, RESET: RST). A script without CLOSE or RESET
 * leaves the connection open for the next request. */
struct step {
    enum step_kind kind;
    int ms;
    const char *bytes;
};

struct hostile {
    const char *name;
    struct step steps[10];
    const char *want;       /* "completed", or the failure's category */
    int requests;           /* sent one after another (concurrency 1) */
};

#define HEAD_SSE "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
#define CHUNKED "Transfer-Encoding: chunked\r\n\r\n"

static const struct hostile cases[] = {
    {"content_length_body",
     {{WRITE, 0, HEAD_SSE "Content-Length: 318\r\n\r\n" EV_ROLE}, {WRITE, 20, EV_A}, {WRITE, 10, EV_B},
      {WRITE, 10, EV_USAGE EV_DONE}, {END, 0, NULL}},
     "completed", 2},
    {"body_ended_by_the_close",
     {{WRITE, 0, HEAD_SSE "Connection: close\r\n\r\n" EV_ROLE}, {WRITE, 20, EV_A}, {WRITE, 10, EV_B},
      {WRITE, 10, EV_USAGE EV_DONE}, {CLOSE, 5, NULL}, {END, 0, NULL}},
     "completed", 2},
    {"continue_then_the_reply",
     {{WRITE, 0, "HTTP/1.1 100 Continue\r\n\r\n"}, {WRITE, 10, HEAD_SSE CHUNKED}, {WRITE, 10, "4b\r\n" EV_ROLE "\r\n"},
      {WRITE, 20, "39\r\n" EV_A "\r\n"}, {WRITE, 10, "52\r\n" EV_B "\r\n"},
      {WRITE, 10, "68\r\n" EV_USAGE EV_DONE "\r\n0\r\n\r\n"}, {END, 0, NULL}},
     "completed", 2},
    {"upper_case_names_extensions_and_trailers",
     {{WRITE, 0, "HTTP/1.1 200 OK\r\nCONTENT-TYPE: text/event-stream\r\nTRANSFER-ENCODING: CHUNKED\r\n\r\n"},
      {WRITE, 10, "4B;ext=1\r\n" EV_ROLE "\r\n"}, {WRITE, 20, "39 ; x=\"y\"\r\n" EV_A "\r\n"},
      {WRITE, 10, "52\r\n" EV_B "\r\n"}, {WRITE, 10, "68\r\n" EV_USAGE EV_DONE "\r\n0\r\nX-Trailer: 1\r\n\r\n"},
      {END, 0, NULL}},
     "completed", 2},
    {"head_a_byte_at_a_time",
     {{BYTEWISE, 0, HEAD_SSE CHUNKED}, {WRITE, 10, "4b\r\n" EV_ROLE "\r\n"}, {WRITE, 20, "39\r\n" EV_A "\r\n"},
      {WRITE, 10, "52\r\n" EV_B "\r\n"}, {WRITE, 10, "68\r\n" EV_USAGE EV_DONE "\r\n0\r\n\r\n"}, {END, 0, NULL}},
     "completed", 1},
    {"kept_alive_connections_dropped_after_each_reply",
     {{WRITE, 0, HEAD_SSE CHUNKED "4b\r\n" EV_ROLE "\r\n"}, {WRITE, 20, "39\r\n" EV_A "\r\n"},
      {WRITE, 10, "52\r\n" EV_B "\r\n"}, {WRITE, 10, "68\r\n" EV_USAGE EV_DONE "\r\n0\r\n\r\n"}, {CLOSE, 30, NULL},
      {END, 0, NULL}},
     "completed", 3},
    {"head_ended_by_a_later_segment",
     {{WRITE, 0, HEAD_SSE "Transfer-Encoding: chunked\r\n"}, {WRITE, 60, "\r\n"},
      {WRITE, 30, "4b\r\n" EV_ROLE "\r\n"}, {WRITE, 20, "39\r\n" EV_A "\r\n"}, {WRITE, 10, "52\r\n" EV_B "\r\n"},
      {WRITE, 10, "68\r\n" EV_USAGE EV_DONE "\r\n0\r\n\r\n"}, {END, 0, NULL}},
     "completed", 2},
    {"no_content_with_a_content_length",
     {{WRITE, 0, "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"}, {END, 0, NULL}},
     "truncated", 2},
    {"content_length_beside_chunked",
     {{WRITE, 0, HEAD_SSE "Content-Length: 100\r\n" CHUNKED "4b\r\n" EV_ROLE "\r\n"}, {WRITE, 20, "39\r\n" EV_A "\r\n"},
      {WRITE, 10, "52\r\n" EV_B "\r\n"}, {WRITE, 10, "68\r\n" EV_USAGE EV_DONE "\r\n0\r\n\r\n"}, {END, 0, NULL}},
     "completed", 2},
    {"content_length_repeated",
     {{WRITE, 0, HEAD_SSE "Content-Length: 5\r\nContent-Length: 318\r\n\r\n" EV_ROLE}, {WRITE, 20, EV_A},
      {WRITE, 10, EV_B}, {WRITE, 10, EV_USAGE EV_DONE}, {END, 0, NULL}},
     "completed", 2},
    {"bad_chunk_size",
     {{WRITE, 0, HEAD_SSE CHUNKED "4b\r\n" EV_ROLE "\r\n"}, {WRITE, 20, "zz\r\n" EV_A "\r\n"}, {END, 0, NULL}},
     "truncated", 1},
    {"status_line_not_http",
     {{WRITE, 0, "HELLO THERE\r\n\r\n"}, {CLOSE, 10, NULL}, {END, 0, NULL}},
     "transport", 1},
    {"reset_mid_stream",
     {{WRITE, 0, HEAD_SSE CHUNKED "4b\r\n" EV_ROLE "\r\n"}, {WRITE, 20, "39\r\n" EV_A "\r\n"}, {RESET, 10, NULL},
      {END, 0, NULL}},
     "truncated", 1},
    {"closed_before_any_byte",
     {{CLOSE, 10, NULL}, {END, 0, NULL}},
     "truncated", 1},
};

#define N_CASES (sizeof cases / sizeof *cases)

static void put(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            _exit(0);
        p += w;
        n -= (size_t)w;
    }
}

static void reply(int fd, const char *status, const char *body)
{
    char head[256];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                     status, strlen(body));
    put(fd, head, (size_t)n);
    put(fd, body, strlen(body));
}

/* Reads one request (head, and a Content-Length body) into req; returns
 * its length, 0 when the client closed. */
static size_t read_request(int fd, char *req, size_t cap)
{
    size_t len = 0;
    ssize_t n;
    while (len < cap - 1 && (n = read(fd, req + len, cap - 1 - len)) > 0) {
        len += (size_t)n;
        req[len] = '\0';
        char *end = strstr(req, "\r\n\r\n");
        const char *cl = strcasestr(req, "content-length:");
        if (end && (!cl || len >= (size_t)(end + 4 - req) + strtoul(cl + 15, NULL, 10)))
            return len;
    }
    return 0;
}

/* Serves one connection (in its own process): set-up GETs answered, each
 * generation POST with the case's script. */
static void serve(int fd, const void *ud)
{
    const struct hostile *h = ud;
    static char req[65536];
    while (read_request(fd, req, sizeof req) > 0) {
        if (!strncmp(req, "GET /v1/models", 14)) {
            reply(fd, "200 OK", "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"owned_by\":\"x\"}]}");
            continue;
        }
        if (strncmp(req, "POST /v1/chat/completions", 25) != 0) {
            reply(fd, "404 Not Found", "{\"detail\":\"Not Found\"}");
            continue;
        }
        for (const struct step *s = h->steps; s->kind != END; s++) {
            harness_sleep_ms(s->ms);
            if (s->kind == WRITE) {
                put(fd, s->bytes, strlen(s->bytes));
            } else if (s->kind == BYTEWISE) {
                for (const char *p = s->bytes; *p; p++) {
                    put(fd, p, 1);
                    harness_sleep_ms(1);
                }
            } else {
                if (s->kind == RESET) {
                    struct linger lg = {1, 0};
                    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                }
                close(fd);
                return;
            }
        }
    }
    close(fd);
}

/* Runs case h over transport; checks its outcome; returns the records of
 * its requests (caller deletes). */
static void run_case(const struct hostile *h, const char *transport, cJSON **recs)
{
    struct raw_server srv;
    raw_server_start(&srv, serve, h);
    char art[64], np[16];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    snprintf(np, sizeof np, "%d", h->requests);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", srv.base_url, "--model", "m",
                          "--calibration", "none", "--num-prompts", np, "--concurrency", "1", "--input-len", "8",
                          "--output-len", "2", "--idle-timeout-s", "2", "--max-failure-rate", "1",
                          "--transport", transport, "--out", art, NULL};
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    raw_server_stop(&srv);
    cJSON *a = harness_load_json(art);
    bool completed = !strcmp(h->want, "completed");
    cr_assert_eq(harness_num(a, completed ? "completed" : "failed"), h->requests, "%s over %s: %s\n%s",
                 h->name, transport, err, cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "failures")));
    if (!completed) {
        const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "failures"), 0);
        cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(f, "category")), h->want, "%s over %s: %s",
                         h->name, transport, cJSON_GetStringValue(cJSON_GetObjectItem(f, "message")));
    }
    for (int i = 0; i < h->requests; i++) {
        cr_assert((recs[i] = harness_journal_record(art, a, i)), "%s over %s: no record of request %d", h->name,
                  transport, i);
        cr_assert(!completed || harness_num(recs[i], "completion_tokens") == 2, "%s over %s: request %d",
                  h->name, transport, i);
    }
    cJSON_Delete(a);
    unlink(art);
}

ParameterizedTestParameters(transports, hostile)
{
    static int idx[N_CASES];
    for (size_t i = 0; i < N_CASES; i++)
        idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_CASES);
}

/* Times agree within 10 ms: the scripts space their writes 10 ms or more
 * apart, and both runs see the same server on a shared machine. */
ParameterizedTest(int *i, transports, hostile, .timeout = 120)
{
    const struct hostile *h = &cases[*i];
    cr_assert_leq(h->requests, 4);
    char why[300] = "";
    bool same = false;
    for (int t = 0; t < HARNESS_SAME_TRIES && !same; t++) {
        cJSON *native[4], *curl[4];
        run_case(h, "native", native);
        run_case(h, "curl", curl);
        same = true;
        for (int k = 0; k < h->requests; k++) {
            char what[160], w[300];
            snprintf(what, sizeof what, "%s, request %d, native against curl", h->name, k);
            if (!harness_same_record(what, native[k], curl[k], 10.0, w, sizeof w) && same) {
                same = false;
                snprintf(why, sizeof why, "%s", w);
            }
            cJSON_Delete(native[k]);
            cJSON_Delete(curl[k]);
        }
    }
    cr_assert(same, "%s (in each of %d tries)", why, HARNESS_SAME_TRIES);
}

/* The artifact says which transport carried the run, and --transport
 * native refuses what it does not speak before any request. */
Test(transports, the_artifact_names_the_transport_and_native_refuses_https, .timeout = 60)
{
    const struct hostile *h = &cases[0];
    struct raw_server srv;
    raw_server_start(&srv, serve, h);
    const char *names[] = {"auto", "native", "curl"}, *want[] = {"native", "native", "curl"};
    for (int k = 0; k < 3; k++) {
        char art[64];
        cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
        const char *argv[] = {harness_anvil_bin(), "run", "--base-url", srv.base_url, "--model", "m",
                              "--calibration", "none", "--num-prompts", "1", "--input-len", "8", "--output-len",
                              "2", "--transport", names[k], "--out", art, NULL};
        static char out[16384];
        int status;
        cr_assert_eq(run_cmd(argv, out, sizeof out, &status), 0);
        cJSON *a = harness_load_json(art);
        cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(a, "client.transport")), want[k], "--transport %s",
                         names[k]);
        cJSON_Delete(a);
        unlink(art);
    }
    raw_server_stop(&srv);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", "https://127.0.0.1:9/v1", "--model", "m",
                          "--calibration", "none", "--num-prompts", "1", "--transport", "native", NULL};
    static char out[16384], err[16384];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2, "a usage error: %s", err);
    cr_assert(strstr(err, "--transport native speaks plain http://"), "%s", err);
}
