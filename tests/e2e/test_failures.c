/* test_failures.c — `anvil run` against a tiny misbehaving server (in this
 * file): an idle stream, an error body echoing the API key, a stream with
 * no output. Each must become a categorized failure, promptly, with no
 * secret in any output. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

enum mode { STALL, ECHO_401, EMPTY };

static void reply(int fd, const char *status, const char *type, const char *body)
{
    char head[512];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n", status, type, strlen(body));
    (void)!write(fd, head, (size_t)n);
    (void)!write(fd, body, strlen(body));
}

/* Serves one connection (in its own process) according to mode. */
static void serve(int fd, const void *ud)
{
    enum mode mode = *(const enum mode *)ud;
    char req[65536];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof req - 1 && (n = read(fd, req + len, sizeof req - 1 - len)) > 0) {
        len += (size_t)n;
        req[len] = '\0';
        char *end = strstr(req, "\r\n\r\n");
        const char *cl = strcasestr(req, "content-length:");
        if (end && (!cl || len >= (size_t)(end + 4 - req) + strtoul(cl + 15, NULL, 10)))
            break;
    }
    req[len] = '\0';
    if (!strncmp(req, "GET /v1/models", 14)) {
        reply(fd, "200 OK", "application/json", "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"owned_by\":\"x\"}]}");
    } else if (strncmp(req, "POST ", 5) != 0) {
        reply(fd, "404 Not Found", "application/json", "{\"detail\":\"Not Found\"}");
    } else if (mode == ECHO_401) {
        char body[1024];
        const char *auth = strcasestr(req, "authorization: ");
        snprintf(body, sizeof body, "{\"error\":{\"message\":\"bad key %.*s\"}}",
                 auth ? (int)strcspn(auth + 15, "\r") : 0, auth ? auth + 15 : "");
        reply(fd, "401 Unauthorized", "application/json", body);
    } else if (mode == EMPTY) {
        reply(fd, "200 OK", "text/event-stream", "data: [DONE]\n\n");
    } else {
        const char *head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                           "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
        (void)!write(fd, head, strlen(head));
        sleep(30);
    }
    close(fd);
}


static cJSON *run_once(const char *base_url, const char *const extra[], char *out, size_t outcap,
                       char *err, size_t errcap, int *status)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[32] = {harness_anvil_bin(), "run", "--base-url", base_url, "--num-prompts", "1",
                            "--calibration", "none", "--input-len", "8", "--output-len", "4", "--out", art};
    int n = 14;
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    cr_assert_eq(run_cmd_err(argv, out, outcap, err, errcap, status), 0);
    char *text = harness_read_file(art, NULL);
    cr_assert(text, "no artifact; stderr: %s", err);
    cJSON *a = cJSON_Parse(text);
    free(text);
    unlink(art);
    return a;
}

static const cJSON *first_failure(const cJSON *a)
{
    cr_assert_eq(cJSON_GetObjectItem(a, "failed")->valuedouble, 1);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(a, "failures"), 0);
}

Test(failures_e2e, idle_stream_times_out_on_time, .timeout = 60)
{
    struct raw_server m;
    raw_server_start(&m, serve, &(const enum mode){STALL});
    const char *extra[] = {"--idle-timeout-s", "0.5", NULL};
    static char out[8192], err[8192];
    int status;
    cJSON *a = run_once(m.base_url, extra, out, sizeof out, err, sizeof err, &status);
    raw_server_stop(&m);
    cr_assert_eq(status, 1, "nothing completed: exit 1");
    const cJSON *f = first_failure(a);
    cr_assert_str_eq(cJSON_GetObjectItem(f, "category")->valuestring, "timeout");
    double ms = cJSON_GetObjectItem(f, "elapsed_ms")->valuedouble;
    cr_assert(ms >= 500 && ms < 1000, "idle timeout of 0.5 s fired after %.0f ms", ms);
    cr_assert(strstr(cJSON_GetObjectItem(f, "message")->valuestring, "mid-stream"));
    cJSON_Delete(a);
}

Test(failures_e2e, api_key_echoed_by_the_server_is_redacted, .timeout = 60)
{
    struct raw_server m;
    raw_server_start(&m, serve, &(const enum mode){ECHO_401});
    setenv("OPENAI_API_KEY", "sk-test-secret-9876", 1);
    char reqs[64];
    cr_assert_eq(harness_tmpfile(reqs, sizeof reqs), 0);
    const char *extra[] = {"--requests-out", reqs, NULL};
    static char out[8192], err[8192];
    int status;
    cJSON *a = run_once(m.base_url, extra, out, sizeof out, err, sizeof err, &status);
    raw_server_stop(&m);
    const cJSON *f = first_failure(a);
    cr_assert_str_eq(cJSON_GetObjectItem(f, "category")->valuestring, "http");
    cr_assert_eq(cJSON_GetObjectItem(f, "http_status")->valuedouble, 401);
    const char *msg = cJSON_GetObjectItem(f, "message")->valuestring;
    cr_assert(strstr(msg, "Bearer [redacted]"), "the echoed key is scrubbed: %s", msg);
    char *log = harness_read_file(reqs, NULL);
    cr_assert(!strstr(log, "secret-9876") && !strstr(out, "secret-9876") && !strstr(err, "secret-9876"));
    free(log);
    unlink(reqs);
    cJSON_Delete(a);
}

Test(failures_e2e, stream_without_output_is_a_failure, .timeout = 60)
{
    struct raw_server m;
    raw_server_start(&m, serve, &(const enum mode){EMPTY});
    static char out[8192], err[8192];
    int status;
    cJSON *a = run_once(m.base_url, NULL, out, sizeof out, err, sizeof err, &status);
    raw_server_stop(&m);
    cr_assert_eq(cJSON_GetObjectItem(a, "completed")->valuedouble, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(first_failure(a), "category")->valuestring, "empty_stream");
    cr_assert(strstr(out, "of which empty_stream:"), "the summary names the cause:\n%s", out);
    cJSON_Delete(a);
}

Test(failures_e2e, credentials_in_the_url_stay_out_of_the_artifact, .timeout = 60)
{
    struct raw_server m;
    raw_server_start(&m, serve, &(const enum mode){EMPTY});
    char url[128];
    snprintf(url, sizeof url, "http://user:pw-9876@%s", m.base_url + 7);
    static char out[8192], err[8192];
    int status;
    cJSON *a = run_once(url, NULL, out, sizeof out, err, sizeof err, &status);
    raw_server_stop(&m);
    char *text = cJSON_Print(a);
    cr_assert(!strstr(text, "pw-9876") && !strstr(err, "pw-9876") && !strstr(out, "pw-9876"));
    cr_assert(strstr(cJSON_GetObjectItem(a, "base_url")->valuestring, "http://127.0.0.1:"));
    free(text);
    cJSON_Delete(a);
}
