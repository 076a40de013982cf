/* test_sim_arrival.c — the simulator dates a request by when its bytes
 * reached the host, not by when its loop got around to reading them: a
 * request sent while the simulator is stopped (SIGSTOP, as a loop busy
 * with a thousand others would be) is traced as received when it was
 * sent, and its fixed schedule counts from there. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "harness.h"

#define MS 1000000LL

static int connect_to(const struct sim_proc *p)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->port)};
    cr_assert_eq(inet_pton(AF_INET, p->host, &a.sin_addr), 1, "host %s", p->host);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    cr_assert_eq(send(fd, s, n, 0), (ssize_t)n);
}

/* Reads from fd until the bytes so far contain end. */
static void read_until(int fd, const char *end)
{
    static char buf[65536];
    size_t len = 0;
    while (!memmem(buf, len, end, strlen(end))) {
        cr_assert_lt(len, sizeof buf - 1, "no '%s' in the reply", end);
        ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
        cr_assert_gt(r, 0, "connection ended before '%s'", end);
        len += (size_t)r;
    }
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&t, NULL);
}

Test(sim_arrival, a_request_read_late_is_dated_and_served_from_its_arrival, .timeout = 30)
{
    char trace[64];
    cr_assert_eq(harness_tmpfile(trace, sizeof trace), 0);
    const char *args[] = {"--ttft-ms", "50", "--itl-ms", "10", "--trace", trace, NULL};
    struct sim_proc p;
    cr_assert_eq(sim_start_reference(&p, args), 0);
    int fd = connect_to(&p);
    /* the connection's first request: a kept-alive connection, as a client's pre-warm leaves it */
    send_all(fd, "GET /v1/models HTTP/1.1\r\nHost: sim\r\n\r\n");
    read_until(fd, "\"data\"");
    sleep_ms(20);   /* the rest of that reply, if any, has arrived */
    static const char body[] = "{\"model\":\"anvil-sim\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                               "\"max_tokens\":3,\"ignore_eos\":true,\"stream\":true}";
    char req[512];
    snprintf(req, sizeof req, "POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nX-Request-Id: late\r\n"
             "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", sizeof body - 1, body);
    cr_assert_eq(kill(p.pid, SIGSTOP), 0);
    int64_t sent = clock_now_ns();
    send_all(fd, req);
    sleep_ms(300);
    int64_t resumed = clock_now_ns();
    cr_assert_eq(kill(p.pid, SIGCONT), 0);
    read_until(fd, "[DONE]");
    close(fd);
    cr_assert_eq(sim_stop(&p), 0);

    char *text = harness_read_file(trace, NULL);
    unlink(trace);
    cr_assert_not_null(text);
    cJSON *line = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(line, "one trace line (the POST)");
    int64_t rx = (int64_t)harness_num(line, "received_ns");
    int64_t first = (int64_t)harness_num(line, "first_token_ns");
    cr_expect_geq(rx, sent - 1 * MS, "received %.1f ms before the send", (double)(sent - rx) / 1e6);
    cr_expect_lt(rx, sent + 100 * MS, "received %.1f ms after the send, %.1f ms after the simulator resumed: "
                 "dated by the read, not the arrival", (double)(rx - sent) / 1e6, (double)(rx - resumed) / 1e6);
    cr_expect_geq(first, rx + 50 * MS, "the first token is never before arrival + TTFT");
    cr_expect_lt(first, resumed + 100 * MS, "the overdue first token went out once the simulator ran "
                 "(%.1f ms after it resumed)", (double)(first - resumed) / 1e6);
    cJSON_Delete(line);
}
