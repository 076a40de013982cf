/* test_wrong_side.c — failures are blamed on the side that caused them:
 * this machine's own limits (open files) are the client's, with the fix,
 * and refused before any request when they can be known; a reply that is
 * too large is named as such; a server's text never reaches the terminal or
 * a file with its control characters live. Redirects and unasked-for
 * content codings in streams are conformance cases (test_conformance.c). */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "harness.h"

static char out[65536], err[65536];

Test(wrong_side, too_few_open_files_is_refused_before_any_request, .timeout = 30)
{
    /* a closed port: anything sent would fail as "connect" */
    const char *argv[] = {"prlimit", "--nofile=1024:1024", harness_anvil_bin(), "run", "--base-url",
                          "http://127.0.0.1:9/v1", "--concurrency", "20000", "--num-prompts", "20000", NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    cr_assert_eq(status, 2, "exit %d\n%s", status, err);
    cr_assert(strstr(err, "--concurrency 20000 needs 20064 open files"), "%s", err);
    cr_assert(strstr(err, "open-file limit") && strstr(err, "ulimit"), "%s", err);
    cr_assert_null(strstr(err, "cannot reach"), "the server was asked: %s", err);
}

/* A sweep or a decode matrix with one load too many for the limit runs
 * nothing, the smaller loads before it included. */
Test(wrong_side, a_sweep_or_decode_past_the_limit_runs_nothing, .timeout = 60)
{
    char dir[] = "/tmp/anvil-wrong-side-XXXXXX", sweep_dir[96], decode_out[96], trace[96];
    cr_assert(mkdtemp(dir));
    snprintf(trace, sizeof trace, "%s/trace.jsonl", dir);
    const char *sim_args[] = {"--trace", trace, NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    snprintf(sweep_dir, sizeof sweep_dir, "%s/sweep", dir);
    snprintf(decode_out, sizeof decode_out, "%s/decode", dir);
    const char *sweep[] = {"prlimit", "--nofile=1024:1024", harness_anvil_bin(), "sweep", "--base-url",
                           sim.base_url, "--concurrency", "1,20000", "--num-prompts", "4", "--out-dir",
                           sweep_dir, NULL};
    const char *decode[] = {"prlimit", "--nofile=1024:1024", harness_anvil_bin(), "decode", "--base-url",
                            sim.base_url, "--concurrency", "1,20000", "--out-dir", decode_out, NULL};
    const char *const *cmds[] = {sweep, decode};
    for (int i = 0; i < 2; i++) {
        int status;
        cr_assert_eq(run_cmd_err(cmds[i], out, sizeof out, err, sizeof err, &status), 0);
        cr_assert_eq(status, 2, "%s: exit %d\n%s", cmds[i][3], status, err);
        cr_assert(strstr(err, "--concurrency 20000 needs 20064 open files"), "%s: %s", cmds[i][3], err);
    }
    sim_stop(&sim);
    size_t served = 0;
    char *t = harness_read_file(trace, &served);
    cr_assert_eq(served, 0, "a round or cell sent requests:\n%s", t ? t : "");
    free(t);
    cr_assert_neq(access(sweep_dir, F_OK), 0, "the sweep made its folder");
    unlink(trace);
    rmdir(dir);
}

/* A run whose process starts with 100 descriptors already open under a
 * limit of 150: the 80 streams find no descriptor for some connections. */
Test(wrong_side, running_out_of_descriptors_is_the_clients, .timeout = 90)
{
    const char *sim_args[] = {"--ttft-ms", "50", "--itl-ms", "10", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char art[64], cmd[1024];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    snprintf(cmd, sizeof cmd, "for i in $(seq 10 109); do eval \"exec $i</dev/null\"; done; exec prlimit "
             "--nofile=150:150 %s run --base-url %s --concurrency 80 --num-prompts 200 --output-len 8 "
             "--calibration none --out %s", harness_anvil_bin(), sim.base_url, art);
    const char *argv[] = {"bash", "-c", cmd, NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cJSON *a = harness_load_json(art);
    unlink(art);
    cr_assert(a, "no artifact (exit %d)\n%s", status, err);
    cr_assert_null(strstr(err, "the server went away"), "%s", err);
    cr_assert(strstr(err, "open-file limit (150), not the server") && strstr(err, "no new requests"), "%s", err);
    const cJSON *f, *fs = cJSON_GetObjectItem(a, "failures");
    int client = 0;
    cJSON_ArrayForEach(f, fs) {
        cr_assert_str_eq(cJSON_GetObjectItem(f, "category")->valuestring, "client", "%s",
                         cJSON_GetObjectItem(f, "message")->valuestring);
        cr_assert(strstr(cJSON_GetObjectItem(f, "message")->valuestring, "Too many open files"));
        client++;
    }
    cr_assert_gt(client, 0, "no request ran out of descriptors:\n%s", err);
    cr_assert_gt(harness_num(a, "completed"), 0, "the streams that had a descriptor completed");
    cr_assert_str_eq(cJSON_GetObjectItem(a, "incomplete_reason")->valuestring, "client_limit");
    cJSON_Delete(a);
}

/* Serves every request with the status line and headers head (without
 * Content-Length and the blank line) and n bytes of JSON-looking text until
 * killed; returns its pid, the port in *port. */
static pid_t reply_server(const char *head, size_t n, int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    cr_assert(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 16) == 0);
    getsockname(s, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid) {
        close(s);
        return pid;
    }
    signal(SIGPIPE, SIG_IGN);
    static const char start[] = "{\"object\": \"list\", \"data\": [";
    char *body = malloc(n + sizeof start);
    memset(body, ' ', n);
    memcpy(body, start, n < sizeof start - 1 ? n : sizeof start - 1);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        char req[4096];
        ssize_t got = read(c, req, sizeof req);   /* a GET fits in one read */
        (void)got;
        char whole[512];
        int h = snprintf(whole, sizeof whole, "%sContent-Length: %zu\r\nConnection: close\r\n\r\n", head, n);
        if (write(c, whole, (size_t)h) == h)
            for (size_t off = 0; off < n;) {
                ssize_t w = write(c, body + off, n - off);
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
        close(c);
    }
}

/* What anvil run says of a /models reply of head and n bytes. */
static void models_reply_is(const char *head, size_t n, const char *want)
{
    int port;
    pid_t srv = reply_server(head, n, &port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", url, "--num-prompts", "1", NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    cr_assert_neq(status, 0);
    cr_assert(strstr(err, want), "expected '%s' in:\n%s", want, err);
    cr_assert_null(strstr(err, "not JSON"), "%s", err);
}

Test(wrong_side, an_oversize_models_reply_is_named, .timeout = 60)
{
    models_reply_is("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", 10u << 20,
                    "the reply is larger than 4194304 bytes");
}

Test(wrong_side, a_redirected_or_compressed_models_reply_is_named, .timeout = 60)
{
    models_reply_is("HTTP/1.1 301 Moved Permanently\r\nLocation: http://elsewhere.example/v1/models\r\n", 0,
                    "HTTP 301: a redirect to http://elsewhere.example/v1/models, which anvil does not follow");
    models_reply_is("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n", 64,
                    "the body is compressed (Content-Encoding: gzip), which anvil did not ask for");
}

static bool has_control(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == 0x1b || p[i] == 0x07 || ((unsigned char)p[i] == 0xc2 && i + 1 < n && (unsigned char)p[i + 1] == 0x9b))
            return true;
    return false;
}

Test(wrong_side, a_servers_escape_sequences_never_reach_the_terminal_or_a_file, .timeout = 60)
{
    /* the model's name sets the terminal's title: the start line names it */
    const char *sim_args[] = {"--script", "tests/conformance/error_body_with_terminal_escapes.jsonl", "--model",
                              "evil\x1b]0;title\x07", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char art[64], reqs[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    cr_assert_eq(harness_tmpfile(reqs, sizeof reqs), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--calibration", "none",
                          "--num-prompts", "3", "--input-len", "4", "--output-len", "4", "--out", art,
                          "--requests-out", reqs, NULL};
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, sizeof err, &status), 0);
    sim_stop(&sim);
    cr_assert(strstr(out, "\\x1b[2J"), "the failures list shows the body, escaped:\n%s", out);
    cr_assert(!has_control(out, strlen(out)), "stdout:\n%s", out);
    cr_assert(!has_control(err, strlen(err)), "stderr:\n%s", err);
    /* the messages, once JSON is decoded, hold no control character either
     * (the model's name is the server's identifier, kept as it is, JSON-escaped) */
    cJSON *a = harness_load_json(art);
    const cJSON *f;
    int n = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(a, "failures")) {
        const char *m = cJSON_GetObjectItem(f, "message")->valuestring;
        cr_assert(strstr(m, "\\x1b]0;owned\\x07") && !has_control(m, strlen(m)), "%s", m);
        n++;
    }
    cr_assert_eq(n, 3);
    cJSON_Delete(a);
    cJSON *lines[8];
    int nl = harness_read_jsonl(reqs, lines, 8);
    cr_assert_eq(nl, 3);
    for (int i = 0; i < nl; i++) {
        const cJSON *m = cJSON_GetObjectItem(lines[i], "message");
        cr_assert(cJSON_IsString(m) && !has_control(m->valuestring, strlen(m->valuestring)),
                  "--requests-out line %d: %s", i, cJSON_PrintUnformatted(lines[i]));
        cJSON_Delete(lines[i]);
    }
    /* what reads the artifact back prints the model's name escaped (compare
     * names runs by their case, and must print no control character either) */
    const char *show[] = {harness_anvil_bin(), "show", art, NULL};
    const char *show_md[] = {harness_anvil_bin(), "show", art, "--format", "markdown", NULL};
    const char *compare[] = {harness_anvil_bin(), "compare", art, art, NULL};
    const char *const *readers[] = {show, show_md, compare};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(run_cmd_err(readers[i], out, sizeof out, err, sizeof err, &status), 0);
        cr_assert(i == 2 || strstr(out, "evil\\x1b]0;title\\x07"),
                  "%s %s names the model, escaped:\n%s%s", readers[i][1], readers[i][3] ? readers[i][3] : "", out, err);
        cr_assert(!has_control(out, strlen(out)) && !has_control(err, strlen(err)), "%s:\n%s%s", readers[i][1], out, err);
    }
    const char *files[] = {art, reqs};
    for (int i = 0; i < 2; i++) {
        size_t len;
        char *text = harness_read_file(files[i], &len);
        cr_assert(text && len && !has_control(text, len), "%s holds a raw control byte", files[i]);
        free(text);
        unlink(files[i]);
    }
}
