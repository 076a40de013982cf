/* harness.c — child processes and blocking HTTP for e2e tests (see harness.h). */
#include "harness.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <dirent.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#define HARNESS_MAX_ARGS 64
#define HARNESS_WAIT_MS 15000

const char *harness_anvil_bin(void)
{
    const char *b = getenv("ANVIL_BIN");
    return b && *b ? b : "build/anvil";
}

void harness_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int decode_status(int ws)
{
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    if (WIFSIGNALED(ws))
        return 128 + WTERMSIG(ws);
    return -1;
}

/* Reads one line (without '\n') from fd within timeout_ms. Returns its
 * length, or -1 on EOF, error or timeout. */
static int read_line(int fd, char *line, size_t cap, int timeout_ms)
{
    size_t n = 0;
    while (n + 1 < cap) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, timeout_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return -1;
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (c == '\n')
            break;
        line[n++] = c;
    }
    line[n] = '\0';
    return (int)n;
}

/* Parses "listening on http://HOST:PORT" into p. */
static int parse_listening(const char *line, struct sim_proc *p)
{
    static const char prefix[] = "listening on http://";
    if (strncmp(line, prefix, sizeof prefix - 1) != 0)
        return -1;
    const char *hp = line + sizeof prefix - 1;
    const char *colon = strrchr(hp, ':');
    if (!colon || colon == hp || (size_t)(colon - hp) >= sizeof p->host)
        return -1;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port <= 0 || port > 65535)
        return -1;
    memcpy(p->host, hp, (size_t)(colon - hp));
    p->host[colon - hp] = '\0';
    p->port = (int)port;
    snprintf(p->root_url, sizeof p->root_url, "http://%s:%d", p->host, p->port);
    snprintf(p->base_url, sizeof p->base_url, "http://%s:%d/v1", p->host, p->port);
    return 0;
}

/* In a child before exec: die with the test process (a failed assertion
 * ends the test without sim_stop), and hold none of its other descriptors
 * (Criterion's result pipes among them). */
static void detach_from_test(void)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    close_range(3, ~0U, 0);
}

const char *harness_reference_sim_bin(void)
{
    const char *b = getenv("ANVIL_SIM_BIN");
    return b && *b ? b : harness_anvil_bin();
}

static void child_exec(const char *bin, int out_fd, const char *const extra_args[])
{
    const char *argv[HARNESS_MAX_ARGS];
    int n = 0;
    argv[n++] = bin;
    argv[n++] = "sim";
    argv[n++] = "--port";
    argv[n++] = "0";
    for (int i = 0; extra_args && extra_args[i] && n < HARNESS_MAX_ARGS - 1; i++)
        argv[n++] = extra_args[i];
    argv[n] = NULL;
    dup2(out_fd, STDOUT_FILENO);
    close(out_fd);
    detach_from_test();
    execv(argv[0], (char *const *)argv);
    fprintf(stderr, "harness: cannot exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Starts `bin sim --port 0 <extra_args...>`; see sim_start. */
static int start_bin(const char *bin, struct sim_proc *p, const char *const extra_args[])
{
    memset(p, 0, sizeof *p);
    p->stdout_fd = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fflush(NULL);   /* the child must not re-flush our buffered output */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_exec(bin, fds[1], extra_args);
    }
    close(fds[1]);
    p->pid = pid;
    p->stdout_fd = fds[0];
    char line[256];
    if (read_line(fds[0], line, sizeof line, HARNESS_WAIT_MS) < 0 || parse_listening(line, p) != 0) {
        fprintf(stderr, "harness: %s sim did not print 'listening on http://HOST:PORT'\n", bin);
        sim_stop(p);
        memset(p, 0, sizeof *p);
        p->stdout_fd = -1;
        return -1;
    }
    return 0;
}

int sim_start(struct sim_proc *p, const char *const extra_args[])
{
    return start_bin(harness_anvil_bin(), p, extra_args);
}

int sim_start_reference(struct sim_proc *p, const char *const extra_args[])
{
    return start_bin(harness_reference_sim_bin(), p, extra_args);
}

/* Waits up to ms for pid; returns its decoded status or -1 on timeout. */
static int wait_for(pid_t pid, int ms)
{
    for (int waited = 0; waited <= ms; waited += 10) {
        int ws;
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid)
            return decode_status(ws);
        if (r < 0 && errno != EINTR)
            return -1;
        harness_sleep_ms(10);
    }
    return -1;
}

int sim_stop(struct sim_proc *p)
{
    if (p->pid <= 0)
        return -1;
    kill(p->pid, SIGTERM);
    int st = wait_for(p->pid, HARNESS_WAIT_MS);
    if (st < 0) {
        kill(p->pid, SIGKILL);
        int ws;
        waitpid(p->pid, &ws, 0);
        st = decode_status(ws);
    }
    if (p->stdout_fd >= 0)
        close(p->stdout_fd);
    p->stdout_fd = -1;
    p->pid = 0;
    return st;
}

/* Appends what fd holds into out (keeps reading past cap, discarding). */
static void drain_into(int fd, char *out, size_t cap, size_t *len)
{
    char tmp[4096];
    ssize_t r;
    while ((r = read(fd, tmp, sizeof tmp)) > 0 || (r < 0 && errno == EINTR)) {
        if (r < 0)
            continue;
        size_t room = cap > *len + 1 ? cap - *len - 1 : 0;
        size_t k = (size_t)r < room ? (size_t)r : room;
        if (k)
            memcpy(out + *len, tmp, k);
        *len += k;
    }
    if (cap)
        out[*len] = '\0';
}

int run_cmd_err(const char *const argv[], char *out, size_t outcap, char *err, size_t errcap,
                int *status)
{
    int ofd[2];
    FILE *errf = err ? tmpfile() : NULL;
    if ((err && !errf) || pipe2(ofd, O_CLOEXEC) != 0) {
        if (errf)
            fclose(errf);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, STDIN_FILENO);
        dup2(ofd[1], STDOUT_FILENO);
        if (errf)
            dup2(fileno(errf), STDERR_FILENO);
        detach_from_test();
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "harness: cannot exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(ofd[1]);
    size_t olen = 0;
    if (pid > 0)
        drain_into(ofd[0], out, outcap, &olen);
    close(ofd[0]);
    int ws = 0;
    int rc = pid > 0 && waitpid(pid, &ws, 0) == pid ? 0 : -1;
    if (rc == 0)
        *status = decode_status(ws);
    if (errf) {
        size_t elen = 0;
        fflush(errf);
        lseek(fileno(errf), 0, SEEK_SET);
        drain_into(fileno(errf), err, errcap, &elen);
        fclose(errf);
    }
    return rc;
}

pid_t harness_spawn_to(const char *const argv[], const char *out_path)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(devnull, STDIN_FILENO);
        dup2(out >= 0 ? out : devnull, STDOUT_FILENO);
        detach_from_test();
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "harness: cannot exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

pid_t harness_spawn(const char *const argv[], int quiet)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        if (quiet)
            dup2(devnull, STDERR_FILENO);
        detach_from_test();
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "harness: cannot exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

void harness_read_trace(const char *path, struct harness_traced *t, int cap)
{
    for (int i = 0; i < cap; i++)
        t[i] = (struct harness_traced){.received = NAN, .first = NAN, .finished = NAN};
    char *text = harness_read_file(path, NULL);
    cr_assert(text, "cannot read the trace %s", path);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j, "%s: a trace line is not JSON", path);
        int idx;
        const cJSON *id = cJSON_GetObjectItem(j, "request_id"), *c;
        if (cJSON_IsString(id) && sscanf(id->valuestring, "anvil-req-%d", &idx) == 1 && idx >= 0 && idx < cap) {
            struct harness_traced *r = &t[idx];
            cr_assert(isnan(r->finished), "%s: request %d traced twice", path, idx);
            const cJSON *first = cJSON_GetObjectItem(j, "first_token_ns");
            r->first = cJSON_IsNumber(first) ? first->valuedouble : NAN;
            r->received = harness_num(j, "received_ns");
            r->finished = harness_num(j, "finished_ns");
            cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "chunks"))
                if (r->n_chunks < HARNESS_TRACE_CHUNKS && cJSON_IsNumber(cJSON_GetObjectItem(c, "t_ns")))
                    r->chunk[r->n_chunks++] = harness_num(c, "t_ns");
        }
        cJSON_Delete(j);
    }
    free(text);
}

bool harness_check_first_stamp(const struct harness_traced *t, double stamp_ns, int k, bool merged,
                               const char *what)
{
    double err = (stamp_ns - t->first) / 1e6;
    if (fabs(err) <= 1.0)
        return false;
    cr_assert(merged, "%s: first token stamped %.3f ms from the server's write, not flagged first_output_merged",
              what, err);
    if (k < 2) {        /* dated by the clock at a late read: later than the write, by how much unknown */
        cr_assert_gt(err, 0, "%s: first token stamped %.3f ms before the server's write", what, -err);
        return true;
    }
    cr_assert_leq(k, t->n_chunks, "%s: %d outputs share a stamp, the server wrote %d", what, k, t->n_chunks);
    double newest = t->chunk[k - 1];
    if (fabs(stamp_ns - newest) <= 1e6 || (k == t->n_chunks && fabs(stamp_ns - t->finished) <= 1e6))
        return true;
    cr_assert_fail("%s: first token stamped %.3f ms from the server's write, read with %d outputs but %.3f ms "
                   "from the newest one's write", what, err, k, (stamp_ns - newest) / 1e6);
    return true;
}

/* The journal next to the artifact art written at art_path:
 * <dir>/<run_id>.requests.jsonl, into path (cap bytes). */
static void journal_beside(const char *art_path, const cJSON *art, char *path, size_t cap)
{
    const char *run_id = cJSON_GetStringValue(cJSON_GetObjectItem(art, "run_id"));
    const char *slash = strrchr(art_path, '/');
    cr_assert(run_id, "the artifact has no run_id");
    snprintf(path, cap, "%.*s%s.requests.jsonl", slash ? (int)(slash - art_path) + 1 : 0, art_path, run_id);
}

void harness_first_shared(const char *art_path, const cJSON *art, int *k, int cap)
{
    for (int i = 0; i < cap; i++)
        k[i] = 0;
    char path[512];
    journal_beside(art_path, art, path, sizeof path);
    char *text = harness_read_file(path, NULL);
    cr_assert(text, "cannot read the journal %s", path);
    char *save = NULL;
    strtok_r(text, "\n", &save);     /* the header */
    for (char *line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j, "%s: a line is not JSON", path);
        int idx = (int)harness_num(j, "index");
        const cJSON *c = cJSON_GetObjectItem(j, "chunks"), *e;
        double t0 = cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetArrayItem(c, 0), 0));
        int n = 0;
        cJSON_ArrayForEach(e, c) {
            if (cJSON_GetNumberValue(cJSON_GetArrayItem(e, 0)) != t0)
                break;
            n++;
        }
        if (idx >= 0 && idx < cap && !cJSON_IsTrue(cJSON_GetObjectItem(j, "warmup")))
            k[idx] = n;
        cJSON_Delete(j);
    }
    free(text);
    unlink(path);
}

void harness_split_cpus(pid_t sim)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2)
        return;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET((int)n - 1, &s);
    cr_assert_eq(sched_setaffinity(sim, sizeof s, &s), 0);
    CPU_ZERO(&s);
    for (int i = 0; i < n - 1; i++)
        CPU_SET(i, &s);
    cr_assert_eq(sched_setaffinity(0, sizeof s, &s), 0);
}

int run_cmd(const char *const argv[], char *out, size_t outcap, int *status)
{
    return run_cmd_err(argv, out, outcap, NULL, 0, status);
}

struct sink {
    struct http_reply *r;
    size_t abort_after;
    int cut;        /* we cut the transfer on purpose */
    int oom;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    struct sink *s = arg;
    size_t n = size * nmemb;
    char *p = realloc(s->r->body, s->r->len + n + 1);
    if (!p) {
        s->oom = 1;
        return 0;
    }
    memcpy(p + s->r->len, data, n);
    s->r->body = p;
    s->r->len += n;
    p[s->r->len] = '\0';
    if (s->abort_after && s->r->len >= s->abort_after) {
        s->cut = 1;
        return 0;   /* curl aborts the transfer and closes the connection */
    }
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
    struct http_reply *r = arg;
    size_t n = size * nmemb, old = r->headers ? strlen(r->headers) : 0;
    char *p = realloc(r->headers, old + n + 1);
    if (!p)
        return 0;
    memcpy(p + old, data, n);
    p[old + n] = '\0';
    r->headers = p;
    return n;
}

/* One configured easy handle for http_do / http_post_many. */
static CURL *make_easy(const char *method, const char *url, const char *body,
                       struct curl_slist *hdrs, struct sink *s)
{
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, s->r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    return c;
}

static struct curl_slist *make_headers(const char *body, const char *header)
{
    struct curl_slist *hdrs = NULL;
    if (body)
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    if (header)
        hdrs = curl_slist_append(hdrs, header);
    return hdrs;
}

/* Copies what curl learned about a finished transfer into r. */
static void finish_reply(CURL *c, struct http_reply *r, struct sink *s, CURLcode rc)
{
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    char *ct = NULL;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        snprintf(r->content_type, sizeof r->content_type, "%s", ct);
    curl_easy_getinfo(c, CURLINFO_STARTTRANSFER_TIME, &r->ttfb_s);
    r->curl_code = (int)rc;
    if (!r->body && !s->oom && (r->body = calloc(1, 1)) == NULL)
        s->oom = 1;
}

int http_do(const char *method, const char *url, const char *body, const char *header,
            size_t abort_after, struct http_reply *r)
{
    memset(r, 0, sizeof *r);
    struct sink s = {.r = r, .abort_after = abort_after};
    struct curl_slist *hdrs = make_headers(body, header);
    CURL *c = make_easy(method, url, body, hdrs, &s);
    if (!c) {
        curl_slist_free_all(hdrs);
        return -1;
    }
    CURLcode rc = curl_easy_perform(c);
    finish_reply(c, r, &s, rc);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    return (rc == CURLE_OK || s.cut) && !s.oom ? 0 : -1;
}

int http_post_many(const char *url, const char *const bodies[], const char *const headers[], int n,
                   struct http_reply replies[], void (*tick)(void *arg), void *arg)
{
    CURLM *m = curl_multi_init();
    CURL **easy = calloc((size_t)n, sizeof *easy);
    struct sink *sinks = calloc((size_t)n, sizeof *sinks);
    struct curl_slist **hl = calloc((size_t)n, sizeof *hl);
    int rc = m && easy && sinks && hl ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        memset(&replies[i], 0, sizeof replies[i]);
        sinks[i].r = &replies[i];
        hl[i] = make_headers(bodies[i], headers ? headers[i] : NULL);
        easy[i] = make_easy("POST", url, bodies[i], hl[i], &sinks[i]);
        curl_easy_setopt(easy[i], CURLOPT_PRIVATE, (char *)&sinks[i]);
        curl_multi_add_handle(m, easy[i]);
    }
    int running = rc == 0 ? n : 0;
    while (running > 0) {
        curl_multi_perform(m, &running);
        if (running)
            curl_multi_poll(m, NULL, 0, 5, NULL);
        if (tick)
            tick(arg);
    }
    CURLMsg *msg;
    int left;
    while (m && (msg = curl_multi_info_read(m, &left)))
        for (int i = 0; i < n; i++)
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy[i]) {
                finish_reply(easy[i], &replies[i], &sinks[i], msg->data.result);
                if (msg->data.result != CURLE_OK)
                    rc = -1;
            }
    for (int i = 0; easy && i < n; i++) {
        if (easy[i]) {
            curl_multi_remove_handle(m, easy[i]);
            curl_easy_cleanup(easy[i]);
        }
        curl_slist_free_all(hl[i]);
    }
    curl_multi_cleanup(m);
    free(easy);
    free(sinks);
    free(hl);
    return rc;
}

double harness_metric(const char *root_url, const char *series)
{
    char url[256];
    snprintf(url, sizeof url, "%s/metrics", root_url);
    struct http_reply r;
    double v = NAN;
    size_t n = strlen(series);
    if (http_get(url, &r) == 0)
        for (const char *l = r.body; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
            if (strncmp(l, series, n) == 0 && l[n] == ' ') {
                v = strtod(l + n + 1, NULL);
                break;
            }
    http_reply_free(&r);
    return v;
}

cJSON *harness_json_path(const cJSON *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *cur = o;
    for (char *save, *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
        cur = (*tok >= '0' && *tok <= '9') ? cJSON_GetArrayItem(cur, atoi(tok))
                                           : cJSON_GetObjectItemCaseSensitive(cur, tok);
    return (cJSON *)cur;
}

int harness_read_jsonl(const char *path, cJSON **lines, int cap)
{
    char *text = harness_read_file(path, NULL);
    if (!text)
        return -1;
    int n = 0;
    for (char *save, *l = strtok_r(text, "\n", &save); l && n < cap; l = strtok_r(NULL, "\n", &save)) {
        if (!(lines[n] = cJSON_Parse(l))) {
            for (int i = 0; i < n; i++)
                cJSON_Delete(lines[i]);
            n = -1;
            break;
        }
        n++;
    }
    free(text);
    return n;
}

int http_get(const char *url, struct http_reply *r)
{
    return http_do("GET", url, NULL, NULL, 0, r);
}

int http_post(const char *url, const char *json, struct http_reply *r)
{
    return http_do("POST", url, json, NULL, 0, r);
}

void http_reply_free(struct http_reply *r)
{
    free(r->body);
    free(r->headers);
    r->headers = NULL;
    r->body = NULL;
    r->len = 0;
}

/* The test run's own folder for temporary files (and the journals anvil
 * writes beside an artifact): made before the first test, in the runner
 * process whose environment every test inherits, and removed with what it
 * holds after the last one. Its cache/ is every test's $XDG_CACHE_HOME. */
#define TMP_ENV "ANVIL_TEST_TMPDIR"
static char run_tmp[64];

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    (void)set;
    snprintf(run_tmp, sizeof run_tmp, "/tmp/anvil-tests-XXXXXX");
    if (mkdtemp(run_tmp)) {
        setenv(TMP_ENV, run_tmp, 1);
        /* no run reads this machine's own ceiling (anvil ceiling's file under ~/.cache): a test
         * that wants one puts it here */
        char cache[96];
        snprintf(cache, sizeof cache, "%s/cache", run_tmp);
        setenv("XDG_CACHE_HOME", cache, 1);
    } else {
        run_tmp[0] = '\0';
    }
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    if (!run_tmp[0])
        return;
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "harness: could not remove %s\n", run_tmp);
}

int harness_tmpfile(char *path, size_t cap)
{
    const char *dir = getenv(TMP_ENV);
    if (snprintf(path, cap, "%s/anvil-XXXXXX", dir && *dir ? dir : "/tmp") >= (int)cap)
        return -1;
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

char *harness_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

cJSON *harness_load_json(const char *path)
{
    char *text = harness_read_file(path, NULL);
    cr_assert(text, "cannot read %s", path);
    cJSON *j = cJSON_Parse(text);
    free(text);
    cr_assert(j, "%s is not JSON", path);
    return j;
}

double harness_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert(cJSON_IsNumber(v), "'%s' is missing or not a number", k);
    return v->valuedouble;
}

/* Runs argv with stdout and stderr on a new pseudo-terminal, reading all
 * it writes into out (cap bytes, NUL-terminated). Returns the exit status. */
int harness_run_on_pty(const char *const argv[], char *out, size_t cap)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
    const char *name = ptsname(m);
    cr_assert(name);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        setsid();
        int s = open(name, O_RDWR);
        int null = open("/dev/null", O_RDONLY);
        if (s < 0 || null < 0)
            _exit(127);
        dup2(null, 0);
        dup2(s, 1);
        dup2(s, 2);
        close(m);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    size_t n = 0;
    for (;;) {
        struct pollfd p = {m, POLLIN, 0};
        if (poll(&p, 1, 60000) <= 0)
            break;
        ssize_t k = read(m, out + n, cap - 1 - n);
        if (k <= 0)
            break;      /* EIO: the child closed the terminal */
        n += (size_t)k;
        if (n == cap - 1)
            break;
    }
    out[n] = '\0';
    close(m);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}


int harness_find_journal(const char *dir, char *path, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = -1;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".requests.jsonl")) {
            snprintf(path, cap, "%s/%s", dir, e->d_name);
            rc = 0;
        }
    if (d)
        closedir(d);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double harness_nearest_rank(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t rank = (size_t)ceil(p * (double)n / 100.0 - 1e-9);
    return v[(rank < 1 ? 1 : rank) - 1];
}

cJSON *harness_journal_record(const char *art_path, const cJSON *art, int idx)
{
    char path[512];
    journal_beside(art_path, art, path, sizeof path);
    char *text = harness_read_file(path, NULL);
    cr_assert(text, "cannot read the journal %s", path);
    cJSON *found = NULL;
    char *save = NULL;
    strtok_r(text, "\n", &save);     /* the header */
    for (char *line = strtok_r(NULL, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j, "%s: a line is not JSON", path);
        if (!cJSON_IsTrue(cJSON_GetObjectItem(j, "warmup")) && harness_num(j, "index") == idx)
            found = j;
        else
            cJSON_Delete(j);
    }
    free(text);
    return found;
}

/* A time of a record from its request's start, ms (NAN: not reached). */
static double since_start(const cJSON *rec, double t)
{
    double t0 = harness_num(rec, "t_start");
    return t > 0 ? (t - t0) / 1e6 : NAN;
}

/* The first time two records disagree on, in words ("" while none). */
struct time_check {
    double tol_ms;
    char why[300];
};

static void same_time(const char *what, const char *key, const cJSON *a, const cJSON *b, double ta, double tb,
                      struct time_check *tc)
{
    double x = since_start(a, ta), y = since_start(b, tb);
    cr_assert(isnan(x) == isnan(y), "%s: %s is reached on one transport only", what, key);
    if (!tc->why[0] && !isnan(x) && fabs(x - y) > tc->tol_ms)
        snprintf(tc->why, sizeof tc->why, "%s: %s is %.3f ms from the start on one transport, %.3f on the other "
                 "(tolerance %.1f)", what, key, x, y, tc->tol_ms);
}

static void same_chunks(const char *what, const cJSON *a, const cJSON *b, struct time_check *tc)
{
    const cJSON *ca = cJSON_GetObjectItem(a, "chunks"), *cb = cJSON_GetObjectItem(b, "chunks");
    int n = cJSON_GetArraySize(ca);
    cr_assert_eq(n, cJSON_GetArraySize(cb), "%s: %d chunks on one transport, %d on the other", what, n,
                 cJSON_GetArraySize(cb));
    for (int i = 0; i < n; i++) {
        const cJSON *x = cJSON_GetArrayItem(ca, i), *y = cJSON_GetArrayItem(cb, i);
        char key[32];
        snprintf(key, sizeof key, "chunks[%d]", i);
        same_time(what, key, a, b, cJSON_GetNumberValue(cJSON_GetArrayItem(x, 0)),
                  cJSON_GetNumberValue(cJSON_GetArrayItem(y, 0)), tc);
        for (int k = 1; k < cJSON_GetArraySize(x); k++)
            cr_assert(cJSON_Compare(cJSON_GetArrayItem(x, k), cJSON_GetArrayItem(y, k), true),
                      "%s: %s differs past its time", what, key);
    }
}

bool harness_same_record(const char *what, const cJSON *a, const cJSON *b, double tol_ms, char *why, size_t cap)
{
    cr_assert(a && b, "%s: a record is missing", what);
    cr_assert_eq(cJSON_GetArraySize(a), cJSON_GetArraySize(b), "%s: the records have different fields", what);
    const char *fail = cJSON_GetStringValue(cJSON_GetObjectItem(a, "fail"));
    static const char *const transports_words[] = {"truncated", "transport", "connect", "dns", "client",
                                                   "cancelled"};
    bool servers_words = true;
    for (size_t i = 0; fail && i < sizeof transports_words / sizeof *transports_words; i++)
        servers_words &= strcmp(fail, transports_words[i]) != 0;
    /* a loaded machine may delay either client's read past later writes:
     * its outputs are then dated by the newest (METHODOLOGY.md), on one
     * side only; the counts must still agree */
    bool merged = cJSON_IsTrue(cJSON_GetObjectItem(a, "first_output_merged")) ||
                  cJSON_IsTrue(cJSON_GetObjectItem(b, "first_output_merged"));
    struct time_check tc = {.tol_ms = merged ? INFINITY : tol_ms};
    const cJSON *x;
    cJSON_ArrayForEach(x, a) {
        const cJSON *y = cJSON_GetObjectItem(b, x->string);
        cr_assert(y, "%s: %s is in one record only", what, x->string);
        if (!strcmp(x->string, "t_start") || (!strcmp(x->string, "fail_msg") && !servers_words) ||
            (!strcmp(x->string, "first_output_merged") && merged))
            continue;
        if (!strcmp(x->string, "chunks"))
            same_chunks(what, a, b, &tc);
        else if (!strncmp(x->string, "t_", 2) && cJSON_IsNumber(x) && cJSON_IsNumber(y))
            same_time(what, x->string, a, b, x->valuedouble, y->valuedouble, &tc);
        else
            cr_assert(cJSON_Compare(x, y, true), "%s: %s differs: %s against %s", what, x->string,
                      cJSON_PrintUnformatted(x), cJSON_PrintUnformatted(y));
    }
    snprintf(why, cap, "%s", tc.why);
    return !tc.why[0];
}

void raw_server_start(struct raw_server *s, void (*serve)(int fd, const void *ud), const void *ud)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(ls, 64), 0);
    getsockname(ls, (struct sockaddr *)&a, &alen);
    snprintf(s->base_url, sizeof s->base_url, "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
    s->pid = fork();
    if (s->pid == 0) {
        signal(SIGCHLD, SIG_IGN);
        for (;;) {
            int fd = accept(ls, NULL, NULL);
            if (fd >= 0 && fork() == 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                serve(fd, ud);
                _exit(0);
            }
            if (fd >= 0)
                close(fd);
        }
    }
    close(ls);
}

void raw_server_stop(struct raw_server *s)
{
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = -1;
}
