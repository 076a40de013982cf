/* test_tgi.c — `anvil run` against a small stand-in for Hugging Face TGI (in
 * this file): no TGI exchange is recorded, so its replies follow TGI's
 * router source (router/src/server.rs, lib.rs): /v1/models owned_by the
 * model id, GET /info with "router" and "version", POST /tokenize {inputs}
 * → [{id,text,start,stop}], POST /chat_tokenize → {tokenize_response,
 * templated_text}, streams of OpenAI chunks and errors as
 * {"error": "...", "error_type": "..."}. anvil must detect TGI, report its
 * version, and calibrate through its tokenize endpoints. */
#include <arpa/inet.h>
#include <math.h>
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

/* The stand-in's tokenizer: one token per whitespace-separated word, plus
 * BOS; a chat prompt is "<s>[INST] content [/INST]": 2 more. */
static int words(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        n += (p == s || p[-1] == ' ' || p[-1] == '\n') && *p != ' ' && *p != '\n';
    return n;
}

static int prompt_tokens(const cJSON *req, bool chat)
{
    const char *text = chat ? cJSON_GetStringValue(harness_json_path(req, "messages.0.content"))
                            : cJSON_GetStringValue(cJSON_GetObjectItem(req, "inputs"));
    if (!text)
        text = cJSON_GetStringValue(cJSON_GetObjectItem(req, "prompt"));
    return 1 + words(text ? text : "") + (chat ? 2 : 0);
}

static void reply(int fd, const char *status, const char *type, const char *body)
{
    char head[256];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n", status, type, strlen(body));
    (void)!write(fd, head, (size_t)n);
    (void)!write(fd, body, strlen(body));
}

/* A token list of n SimpleTokens. */
static char *token_list(int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "id", i ? 1000 + i : 1);
        cJSON_AddStringToObject(t, "text", i ? "w" : "<s>");
        cJSON_AddNumberToObject(t, "start", i);
        cJSON_AddNumberToObject(t, "stop", i + 1);
        cJSON_AddItemToArray(a, t);
    }
    char *s = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return s;
}

static void stream(int fd, const cJSON *req, bool chat, bool fail)
{
    const char *head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
    (void)!write(fd, head, strlen(head));
    int p = prompt_tokens(req, chat), c = (int)cJSON_GetObjectItem(req, "max_tokens")->valuedouble;
    char ev[1024];
    for (int i = 0; i < c; i++) {
        int n = chat ? snprintf(ev, sizeof ev, "data: {\"object\":\"chat.completion.chunk\",\"id\":\"\",\"created\":1,"
                                "\"model\":\"m\",\"system_fingerprint\":\"3.0.1-native\",\"choices\":[{\"index\":0,"
                                "\"delta\":{\"role\":\"assistant\",\"content\":\" w\"},\"logprobs\":null,"
                                "\"finish_reason\":%s}],\"usage\":null}\n\n", i + 1 == c ? "\"length\"" : "null")
                     : snprintf(ev, sizeof ev, "data: {\"id\":\"\",\"object\":\"text_completion\",\"created\":1,"
                                "\"model\":\"m\",\"system_fingerprint\":\"3.0.1-native\",\"choices\":[{\"index\":0,"
                                "\"text\":\" w\",\"logprobs\":null,\"finish_reason\":%s}]}\n\n",
                                i + 1 == c ? "\"length\"" : "null");
        (void)!write(fd, ev, (size_t)n);
        if (fail) {   /* Event::json_data(ErrorResponse {error, error_type}) */
            const char *e = "data: {\"error\":\"Request failed during generation: Server error: CUDA out of "
                            "memory\",\"error_type\":\"generation\"}\n\n";
            (void)!write(fd, e, strlen(e));
            return;
        }
    }
    int n = snprintf(ev, sizeof ev, "data: {\"object\":\"chat.completion.chunk\",\"id\":\"\",\"created\":1,\"model\":"
                     "\"m\",\"system_fingerprint\":\"3.0.1-native\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,"
                     "\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", p, c, p + c);
    (void)!write(fd, ev, (size_t)n);
}

static void serve(int fd, bool fail)
{
    static char req[1 << 20];
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
    char *body_at = strstr(req, "\r\n\r\n");
    cJSON *body = body_at ? cJSON_Parse(body_at + 4) : NULL;
    bool streamed = cJSON_IsTrue(cJSON_GetObjectItem(body, "stream"));
    if (!strncmp(req, "GET /v1/models ", 15)) {
        reply(fd, "200 OK", "application/json",
              "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"created\":0,\"owned_by\":\"m\"}]}");
    } else if (!strncmp(req, "GET /info ", 10)) {
        reply(fd, "200 OK", "application/json",
              "{\"model_id\":\"m\",\"model_sha\":null,\"model_pipeline_tag\":\"text-generation\",\"max_concurrent_requests\":128,"
              "\"max_best_of\":2,\"max_stop_sequences\":4,\"max_input_tokens\":4095,\"max_total_tokens\":4096,"
              "\"validation_workers\":2,\"max_client_batch_size\":4,\"router\":\"text-generation-router\","
              "\"version\":\"3.0.1\",\"sha\":null,\"docker_label\":null}");
    } else if (!strncmp(req, "POST /tokenize ", 15) || !strncmp(req, "POST /chat_tokenize ", 20)) {
        bool chat = !strncmp(req, "POST /chat_tokenize ", 20);
        char *list = token_list(prompt_tokens(body, chat));
        char *out = malloc(strlen(list) + 64);
        sprintf(out, chat ? "{\"tokenize_response\":%s,\"templated_text\":\"...\"}" : "%s", list);
        reply(fd, "200 OK", "application/json", out);
        free(out);
        free(list);
    } else if (!strncmp(req, "POST /v1/chat/completions ", 26) && streamed) {
        stream(fd, body, true, fail);
    } else if (!strncmp(req, "POST /v1/completions ", 21) && streamed) {
        stream(fd, body, false, fail);
    } else {
        reply(fd, "404 Not Found", "application/json", "{\"error\":\"Not Found\",\"error_type\":\"not_found\"}");
    }
    cJSON_Delete(body);
    close(fd);
}

struct tgi {
    pid_t pid;
    char base_url[64];
};

static pid_t running;   /* the stand-in of the current test, stopped by its .fini even when an assertion fails */

static void tgi_start(struct tgi *t, bool fail)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(ls, 64), 0);
    getsockname(ls, (struct sockaddr *)&a, &alen);
    snprintf(t->base_url, sizeof t->base_url, "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
    t->pid = fork();
    if (t->pid == 0) {
        signal(SIGCHLD, SIG_IGN);
        for (;;) {
            int fd = accept(ls, NULL, NULL);
            if (fd >= 0 && fork() == 0) {
                serve(fd, fail);
                _exit(0);
            }
            if (fd >= 0)
                close(fd);
        }
    }
    close(ls);
    running = t->pid;
}

static void tgi_stop(void)
{
    if (running > 0) {
        kill(running, SIGKILL);
        waitpid(running, NULL, 0);
    }
    running = 0;
}

static cJSON *run(const struct tgi *t, const char *endpoint, const char *calib, char *err, size_t errcap,
                  int *status)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", t->base_url, "--endpoint", endpoint,
                          "--calibration", calib, "--num-prompts", "2", "--input-len", "200", "--output-len",
                          "3", "--out", art, NULL};
    static char out[16384];
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, errcap, status), 0);
    char *text = harness_read_file(art, NULL);
    unlink(art);
    cJSON *a = text ? cJSON_Parse(text) : NULL;
    free(text);
    return a;
}

Test(tgi, detected_with_version_and_calibrated_by_its_tokenize, .timeout = 60, .fini = tgi_stop)
{
    struct tgi t;
    tgi_start(&t, false);
    const char *endpoints[] = {"chat", "completions"};
    for (int i = 0; i < 2; i++) {
        char err[4096];
        int st;
        cJSON *a = run(&t, endpoints[i], "tokenize", err, sizeof err, &st);
        cr_assert_eq(st, 0, "%s: exit %d\n%s", endpoints[i], st, err);
        cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(a, "engine")), "tgi");
        cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(a, "engine_version")), "3.0.1");
        cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(a, "calibration.method")), "tokenize");
        const cJSON *r;
        cJSON_ArrayForEach(r, harness_json_path(a, "request_timings"))
            cr_assert_leq(fabs(harness_json_path(r, "prompt_tokens")->valuedouble - 200), 4, "%s", endpoints[i]);
        cJSON_Delete(a);
    }
}

Test(tgi, error_string_inside_200_stream, .timeout = 60, .fini = tgi_stop)
{
    struct tgi t;
    tgi_start(&t, true);
    char err[4096];
    int st;
    cJSON *a = run(&t, "chat", "tokenize", err, sizeof err, &st);
    cr_assert(a, "no artifact: %s", err);
    const cJSON *f = harness_json_path(a, "failures.0");
    cr_assert_str_eq(cJSON_GetStringValue(harness_json_path(f, "category")), "stream_error");
    cr_assert(strstr(cJSON_GetStringValue(harness_json_path(f, "message")), "CUDA out of memory (generation)"),
              "%s", cJSON_GetStringValue(harness_json_path(f, "message")));
    cJSON_Delete(a);
}
