/* test_reliability.c — what anvil does when things go wrong around it: a
 * sweep killed with its round in flight, a hung-up terminal, a second
 * measurement of a directory being measured, a stop during preparation
 * against a server that never answers (docs/RELIABILITY.md has the table of
 * faults and the test of each). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "harness.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void tmpdir(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/anvil-rel-XXXXXX");
    cr_assert(mkdtemp(out));
}

static void rmtree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Whether pid is a live process (a zombie nobody reaps counts as gone). */
static bool alive(pid_t pid)
{
    char path[64], stat[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *end = strrchr(stat, ')');
    return end && end[1] == ' ' && end[2] != 'Z' && end[2] != 'X';
}

/* The pid of a live child of parent whose command line holds word, or 0. */
static pid_t child_of(pid_t parent, const char *word)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && !found && (e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        char path[300], stat[512] = "", cmd[4096] = "";
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        const char *end = strrchr(stat, ')');
        int ppid = 0;
        if (!end || sscanf(end + 2, "%*c %d", &ppid) != 1 || ppid != parent)
            continue;
        snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
        if ((f = fopen(path, "r"))) {
            n = fread(cmd, 1, sizeof cmd - 1, f);
            fclose(f);
            for (size_t i = 0; i < n; i++)
                cmd[i] = cmd[i] ? cmd[i] : ' ';
            cmd[n] = '\0';
        }
        if (strstr(cmd, word))
            found = pid;
    }
    if (d)
        closedir(d);
    return found;
}

/* Waits up to max_s for pid to be gone; returns the seconds it took, or a
 * negative number when it still runs. */
static double wait_gone(pid_t pid, double max_s)
{
    double t0 = now_s();
    while (alive(pid)) {
        if (now_s() - t0 > max_s)
            return -1;
        harness_sleep_ms(20);
    }
    return now_s() - t0;
}

/* The artifact of the sweep's one round in dir, read; fails the test when
 * there is none. */
static cJSON *the_round(const char *dir)
{
    char pattern[200];
    snprintf(pattern, sizeof pattern, "%s/rounds/target/*/round-1.json", dir);
    glob_t g;
    cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no round artifact in %s", dir);
    cJSON *a = harness_load_json(g.gl_pathv[0]);
    globfree(&g);
    return a;
}

/* A sweep of one long round (concurrency 1, 200 requests of 20 tokens at
 * 25 ms each: about 100 s) into dir, in the background. Returns its pid
 * once its round is running (*round gets the round's pid). */
static pid_t start_long_sweep(const struct sim_proc *sim, const char *dir, pid_t *round)
{
    const char *argv[] = {harness_anvil_bin(), "sweep", "--base-url", sim->base_url, "--concurrency", "1",
                          "--input-len", "16", "--output-len", "20", "--rounds", "1", "--num-prompts", "200",
                          "--out-dir", dir, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    *round = 0;
    for (int i = 0; i < 1500 && !*round; i++) {     /* planning and its target check first */
        harness_sleep_ms(20);
        *round = child_of(pid, " run ");
    }
    cr_assert_gt(*round, 0, "the sweep started no round");
    harness_sleep_ms(2500);     /* the round calibrated and is sending */
    return pid;
}

/* kill -9 of a sweep: its round gets SIGTERM from the kernel (the parent-
 * death signal), stops sending, writes its artifact marked incomplete and
 * ends within the grace period, where it went on loading the server for
 * the rest of its ~100 s before. */
Test(reliability, killed_sweep_takes_its_round_with_it, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "25", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    pid_t round;
    pid_t pid = start_long_sweep(&sim, dir, &round);
    kill(pid, SIGKILL);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    double took = wait_gone(round, 15);
    if (took < 0)
        kill(round, SIGKILL);
    cr_assert_geq(took, 0, "the round (pid %d) still runs 15 s after its sweep was killed", (int)round);
    cJSON *a = the_round(dir);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "incomplete")), "the stopped round is marked incomplete");
    cr_assert_gt(harness_num(a, "completed"), 0, "what it measured is kept");
    cr_assert_lt(harness_num(a, "completed"), 200);
    cJSON_Delete(a);
    cr_assert_eq(sim_stop(&sim), 0);
    rmtree(dir);
}

/* A second `anvil sweep --resume` of a directory whose round is running is
 * refused (exit 2) naming the processes, rather than measuring the same
 * round again beside it; once the first has ended it resumes. */
Test(reliability, resume_of_a_directory_being_measured_is_refused, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "25", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    pid_t round;
    pid_t pid = start_long_sweep(&sim, dir, &round);
    const char *again[] = {harness_anvil_bin(), "sweep", "--resume", dir, NULL};
    static char out[8192], err[8192];
    int status;
    double t0 = now_s();
    cr_assert_eq(run_cmd_err(again, out, sizeof out, err, sizeof err, &status), 0);
    double took = now_s() - t0;
    kill(pid, SIGTERM);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_eq(status, 2, "a second sweep of a directory being measured is refused; stderr: %s", err);
    cr_assert_lt(took, 10, "refused at once");
    char sweep_pid[32], round_pid[32];
    snprintf(sweep_pid, sizeof sweep_pid, "pid %d", (int)pid);
    snprintf(round_pid, sizeof round_pid, "pid %d", (int)round);
    cr_assert(strstr(err, "anvil sweep") && strstr(err, sweep_pid) && strstr(err, round_pid) &&
              strstr(err, "still running"), "the message names the processes: %s", err);
    cr_assert_eq(wait_gone(round, 15) >= 0, true, "the round ends with its sweep");
    cr_assert_eq(sim_stop(&sim), 0);
    rmtree(dir);
}

/* SIGHUP (a closed terminal, an ssh session dropped) stops `anvil run` as
 * SIGTERM does: what was measured is kept in an artifact marked incomplete
 * (it died with status 129 and no artifact before). */
Test(reliability, sighup_stops_a_run_and_keeps_its_artifact, .timeout = 60)
{
    char art[64];
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    unlink(art);
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "20", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--concurrency", "4",
                          "--num-prompts", "40", "--input-len", "32", "--output-len", "20", "--grace-s", "0.1",
                          "--out", art, NULL};
    pid_t pid = harness_spawn(argv, 1);
    cr_assert_gt(pid, 0);
    harness_sleep_ms(2500);     /* calibration, then a few requests finish (each ≈ 0.4 s) */
    kill(pid, SIGHUP);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    cJSON *a = harness_load_json(art);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "incomplete")));
    cr_assert_gt(harness_num(a, "completed"), 0, "what was measured is kept");
    cr_assert(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(a, "incomplete_reason")), "signal"), "%s",
              cJSON_GetStringValue(cJSON_GetObjectItem(a, "incomplete_reason")));
    cJSON_Delete(a);
    unlink(art);
}

/* SIGHUP of a sweep: passed to its round, which keeps what it measured in
 * its artifact (incomplete); the sweep ends (1), and no round goes on. */
Test(reliability, sighup_stops_a_sweep_and_its_round, .timeout = 120)
{
    const char *sim_args[] = {"--ttft-ms", "5", "--itl-ms", "25", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char dir[64];
    tmpdir(dir, sizeof dir);
    pid_t round;
    pid_t pid = start_long_sweep(&sim, dir, &round);
    kill(pid, SIGHUP);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "an interrupted sweep exits 1 (status %d)", st);
    cr_assert_geq(wait_gone(round, 5), 0, "the round ended with the sweep");
    cJSON *a = the_round(dir);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(a, "incomplete")));
    cr_assert_gt(harness_num(a, "completed"), 0, "what the round measured is kept");
    cJSON_Delete(a);
    cr_assert_eq(sim_stop(&sim), 0);
    rmtree(dir);
}

/* ---- a stop during preparation ---- */

/* A server on a loopback port that accepts connections and never answers
 * (the kernel's backlog accepts them; nothing reads), or, with models_ok,
 * answers GET /v1/models and holds every other request. */
struct silent {
    pid_t pid;
    char base_url[64];
};

static void silent_serve(int ls, bool models_ok, pid_t test)
{
    /* gone with the test, also when an assertion ends it first */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != test)
        _exit(0);
    signal(SIGCHLD, SIG_IGN);
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        pid_t server = getpid();
        if (fd < 0 || fork() != 0) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != server)
            _exit(0);
        for (;;) {
            char req[8192];
            ssize_t n = read(fd, req, sizeof req - 1);
            if (n <= 0)
                _exit(0);
            req[n] = '\0';
            if (models_ok && !strncmp(req, "GET /v1/models", 14)) {
                const char *body = "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"owned_by\":\"x\"}]}";
                char head[256];
                int h = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 "Content-Length: %zu\r\n\r\n", strlen(body));
                (void)!write(fd, head, (size_t)h);
                (void)!write(fd, body, strlen(body));
            }
        }
    }
}

static void silent_start(struct silent *s, bool models_ok)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(ls, 64), 0);
    getsockname(ls, (struct sockaddr *)&a, &alen);
    snprintf(s->base_url, sizeof s->base_url, "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
    pid_t test = getpid();
    s->pid = fork();
    if (s->pid == 0)
        silent_serve(ls, models_ok, test);
    close(ls);
}

static void silent_stop(struct silent *s)
{
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
}

/* A port nothing listens on (bound, then closed). */
static void closed_port_url(char *out, size_t cap)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    getsockname(ls, (struct sockaddr *)&a, &alen);
    close(ls);
    snprintf(out, cap, "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
}

/* Starts argv, signals it after 1 s, and returns how long it took to end
 * after the signal (s); *status gets its exit status, err its stderr. With
 * sigint_ignored, it starts with SIGINT ignored, as `anvil ... &` in a
 * script does (a stop must still reach it: SIGINT is how such a job is
 * stopped, and the load already takes it). */
static double stop_after_1s(const char *const argv[], int sig, bool sigint_ignored, int *status, char *err,
                            size_t errcap)
{
    char errpath[64];
    cr_assert_eq(harness_tmpfile(errpath, sizeof errpath), 0);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = freopen(errpath, "w", stderr);
        (void)f;
        FILE *g = freopen("/dev/null", "w", stdout);
        (void)g;
        signal(SIGINT, sigint_ignored ? SIG_IGN : SIG_DFL);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    cr_assert_gt(pid, 0);
    harness_sleep_ms(1000);
    double t0 = now_s();
    kill(pid, sig);
    int st = 0;
    pid_t w;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0 && now_s() - t0 < 60)
        harness_sleep_ms(5);
    double took = now_s() - t0;
    if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    char *text = harness_read_file(errpath, NULL);
    snprintf(err, errcap, "%s", text ? text : "");
    free(text);
    unlink(errpath);
    return took;
}

/* Ctrl-C while `GET /models` hangs, anvil started with SIGINT ignored (a
 * script's background job): it ends within 1 s (it waited for the fetch's
 * 30 s timeout before), exit status 1, saying it was stopped. */
Test(reliability, ctrl_c_ends_a_hung_model_discovery_within_1s, .timeout = 90)
{
    struct silent s;
    silent_start(&s, false);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", s.base_url, "--num-prompts", "1",
                          "--out", "/tmp/anvil-never-written.json", NULL};
    int status;
    char err[4096];
    double took = stop_after_1s(argv, SIGINT, true, &status, err, sizeof err);
    silent_stop(&s);
    cr_assert_lt(took, 1.0, "anvil took %.2f s to end after Ctrl-C; stderr: %s", took, err);
    cr_assert_eq(status, 1, "stderr: %s", err);
    cr_assert(strstr(err, "stopped by SIGINT") && strstr(err, "nothing was measured"), "%s", err);
    cr_assert_neq(access("/tmp/anvil-never-written.json", F_OK), 0, "no artifact of nothing");
}

/* SIGTERM while waiting for a server whose port is closed
 * (--ready-check-timeout-sec 60): ends within 1 s, not after the minute. */
Test(reliability, sigterm_ends_a_readiness_wait_within_1s, .timeout = 90)
{
    char url[64];
    closed_port_url(url, sizeof url);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", url, "--num-prompts", "1",
                          "--ready-check-timeout-sec", "60", "--out", "/tmp/anvil-never-written.json", NULL};
    int status;
    char err[4096];
    double took = stop_after_1s(argv, SIGTERM, false, &status, err, sizeof err);
    cr_assert_lt(took, 1.0, "anvil took %.2f s to end after SIGTERM; stderr: %s", took, err);
    cr_assert_eq(status, 1, "stderr: %s", err);
    cr_assert(strstr(err, "stopped by SIGTERM"), "%s", err);
}

/* Ctrl-C during calibration (the server lists its model, then never
 * answers a tokenize or probe request): ends within 1 s. */
Test(reliability, ctrl_c_ends_a_hung_calibration_within_1s, .timeout = 90)
{
    struct silent s;
    silent_start(&s, true);
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", s.base_url, "--num-prompts", "1",
                          "--input-len", "64", "--out", "/tmp/anvil-never-written.json", NULL};
    int status;
    char err[4096];
    double took = stop_after_1s(argv, SIGINT, false, &status, err, sizeof err);
    silent_stop(&s);
    cr_assert_lt(took, 1.0, "anvil took %.2f s to end after Ctrl-C; stderr: %s", took, err);
    cr_assert_eq(status, 1, "stderr: %s", err);
    cr_assert(strstr(err, "stopped by SIGINT"), "%s", err);
}

/* SIGTERM while the first scrape of --server-metrics hangs (it waited for
 * the scrape's 2 s timeout, then started the load): ends within 1 s. */
Test(reliability, sigterm_ends_a_hung_metrics_probe_within_1s, .timeout = 90)
{
    struct silent s;
    silent_start(&s, false);
    const char *sim_args[] = {"--ttft-ms", "1", "--itl-ms", "1", NULL};
    struct sim_proc sim;
    cr_assert_eq(sim_start(&sim, sim_args), 0);
    char metrics[128];
    snprintf(metrics, sizeof metrics, "%s", s.base_url);
    strcpy(strstr(metrics, "/v1"), "/metrics");
    const char *argv[] = {harness_anvil_bin(), "run", "--base-url", sim.base_url, "--server-metrics", metrics,
                          "--calibration", "none", "--num-prompts", "1", "--out", "/tmp/anvil-never-written.json",
                          NULL};
    int status;
    char err[4096];
    double took = stop_after_1s(argv, SIGTERM, false, &status, err, sizeof err);
    silent_stop(&s);
    cr_assert_eq(sim_stop(&sim), 0);
    cr_assert_lt(took, 1.0, "anvil took %.2f s to end after SIGTERM; stderr: %s", took, err);
    cr_assert_eq(status, 1, "stderr: %s", err);
    cr_assert(strstr(err, "stopped by SIGTERM"), "%s", err);
}

/* The same for a sweep checking its target and for the decode matrix's
 * start-up: each ends within 1 s of Ctrl-C against a hung /models. */
Test(reliability, ctrl_c_ends_sweep_and_decode_preparation_within_1s, .timeout = 120)
{
    struct silent s;
    silent_start(&s, false);
    char dir[64];
    tmpdir(dir, sizeof dir);
    char sweep_dir[128], decode_dir[128];
    snprintf(sweep_dir, sizeof sweep_dir, "%s/sweep", dir);
    snprintf(decode_dir, sizeof decode_dir, "%s/decode", dir);
    const char *sweep[] = {harness_anvil_bin(), "sweep", "--base-url", s.base_url, "--concurrency", "1",
                           "--num-prompts", "1", "--out-dir", sweep_dir, NULL};
    const char *decode[] = {harness_anvil_bin(), "decode", "--base-url", s.base_url, "--concurrency", "1",
                            "--contexts", "1k", "--out-dir", decode_dir, NULL};
    const char *const *cmds[] = {sweep, decode};
    for (int i = 0; i < 2; i++) {
        int status;
        char err[4096];
        double took = stop_after_1s(cmds[i], SIGINT, false, &status, err, sizeof err);
        cr_assert_lt(took, 1.0, "anvil %s took %.2f s to end after Ctrl-C; stderr: %s", cmds[i][1], took, err);
        cr_assert(status == 1 || status == 2, "anvil %s: status %d; stderr: %s", cmds[i][1], status, err);
    }
    silent_stop(&s);
    rmtree(dir);
}

/* ---- credentials echoed back ---- */

/* A server that sends back every request's header lines: GET /v1/models
 * lists model "m"; POST .../completions answers 401 with the headers in its
 * error body, POST .../chat/completions a 200 stream whose one event is an
 * error object quoting them. Per connection, in a process of its own. */
static void echo_serve(int fd)
{
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
    char *end = strstr(req, "\r\n\r\n");
    if (end)
        *end = '\0';
    char heard[8192];   /* the head, JSON-escaped: CR LF as "; " */
    size_t k = 0;
    for (const char *p = req; *p && k < sizeof heard - 3; p++) {
        if (*p == '\r')
            continue;
        if (*p == '"' || *p == '\\')
            heard[k++] = '\\';
        heard[k++] = *p == '\n' ? ';' : *p;
    }
    heard[k] = '\0';
    static char body[16384], head[512];
    const char *status = "200 OK", *type = "application/json";
    if (!strncmp(req, "GET /v1/models", 14)) {
        snprintf(body, sizeof body, "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"owned_by\":\"x\"}]}");
    } else if (strstr(req, "/chat/completions")) {
        type = "text/event-stream";
        snprintf(body, sizeof body, "data: {\"error\":{\"message\":\"you sent: %s\",\"code\":400}}\n\n", heard);
    } else if (!strncmp(req, "POST ", 5)) {
        status = "401 Unauthorized";
        snprintf(body, sizeof body, "{\"error\":{\"message\":\"not allowed: %s\"}}", heard);
    } else {
        status = "404 Not Found";
        snprintf(body, sizeof body, "{\"detail\":\"Not Found: %s\"}", heard);
    }
    int h = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n", status, type, strlen(body));
    (void)!write(fd, head, (size_t)h);
    (void)!write(fd, body, strlen(body));
    close(fd);
}

static void echo_start(struct silent *s)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    cr_assert_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(ls, 64), 0);
    getsockname(ls, (struct sockaddr *)&a, &alen);
    snprintf(s->base_url, sizeof s->base_url, "127.0.0.1:%d/v1", ntohs(a.sin_port));
    pid_t test = getpid();
    s->pid = fork();
    if (s->pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != test)
            _exit(0);
        signal(SIGCHLD, SIG_IGN);
        for (;;) {
            int fd = accept(ls, NULL, NULL);
            if (fd >= 0 && fork() == 0) {
                echo_serve(fd);
                _exit(0);
            }
            if (fd >= 0)
                close(fd);
        }
    }
    close(ls);
}

/* Every credential form the tests give, and base64("user:urlSECRETpw"),
 * which an HTTP client sends for the URL's credentials. */
static const char *const secrets[] = {"urlSECRETpw", "sk-keySECRET", "hdrSECRET", "envSECRET", "authSECRET",
                                      "dXNlcjp1cmxTRUNSRVRwdw"};
#define N_SECRETS (sizeof secrets / sizeof *secrets)

/* Fails the test when text (what a command printed, or a file) holds a
 * secret. */
static void no_secret_in(const char *text, const char *what)
{
    for (size_t i = 0; text && i < N_SECRETS; i++)
        cr_assert_null(strstr(text, secrets[i]), "%s holds %s:\n%.3000s", what, secrets[i], text);
}

/* The same for every file under dir (recursively). Returns how many were read. */
static int no_secret_under(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR) {
            files += no_secret_under(path);
            continue;
        }
        char *text = harness_read_file(path, NULL);
        no_secret_in(text, path);
        free(text);
        files++;
    }
    closedir(d);
    return files;
}

/* Runs argv; its stdout and stderr must hold no secret. Returns its status. */
static int run_clean(const char *const argv[], char *err, size_t errcap)
{
    static char out[1 << 16];
    int status;
    cr_assert_eq(run_cmd_err(argv, out, sizeof out, err, errcap, &status), 0);
    no_secret_in(out, argv[1]);
    no_secret_in(err, argv[1]);
    return status;
}

/* A server that echoes what it received, in an error body (401) and in a
 * stream's error event: no configured credential — the --api-key-env key,
 * --header and --header-env values, the URL's user:password and its Basic
 * encoding — reaches the artifact, the journal, --requests-out, a sweep's or
 * decode matrix's directory, what recover, aggregate, report, show and
 * compare write, or the terminal. Only the key was scrubbed before. */
Test(reliability, echoed_credentials_reach_no_file_and_no_terminal, .timeout = 240)
{
    struct silent s;
    echo_start(&s);
    char dir[64];
    tmpdir(dir, sizeof dir);
    setenv("ANVIL_TEST_KEY", "sk-keySECRET", 1);
    setenv("ANVIL_TEST_HDR", "Bearer envSECRET", 1);
    char url[160], plain[160], art[160], reqs[160], sweep_dir[160], decode_dir[160];
    snprintf(url, sizeof url, "http://user:urlSECRETpw@%s", s.base_url);
    snprintf(plain, sizeof plain, "http://%s", s.base_url);
    snprintf(reqs, sizeof reqs, "%s/requests.jsonl", dir);
    snprintf(sweep_dir, sizeof sweep_dir, "%s/sweep", dir);
    snprintf(decode_dir, sizeof decode_dir, "%s/decode", dir);
    static char err[1 << 16];
    /* every kind at once, to both endpoints (error body and error event) */
    const char *endpoints[] = {"completions", "chat"};
    for (int i = 0; i < 2; i++) {
        snprintf(art, sizeof art, "%s/run-%d.json", dir, i);
        const char *run[] = {harness_anvil_bin(), "run", "--base-url", url, "--api-key-env", "ANVIL_TEST_KEY",
                             "--header", "X-Token: hdrSECRET", "--header-env", "X-Other=ANVIL_TEST_HDR",
                             "--endpoint", endpoints[i], "--num-prompts", "2", "--calibration", "none",
                             "--input-len", "8", "--output-len", "4", "--requests-out", reqs, "--out", art, NULL};
        cr_assert_eq(run_clean(run, err, sizeof err), 1, "every request fails; stderr: %s", err);
        cJSON *a = harness_load_json(art);
        const char *msg = cJSON_GetStringValue(harness_json_path(a, "failures.0.message"));
        cr_assert(msg && strstr(msg, "[redacted]"), "the echo is in the artifact, scrubbed: %s", msg);
        cJSON_Delete(a);
    }
    /* the URL's credentials alone: sent as Basic, echoed in base64 */
    snprintf(art, sizeof art, "%s/run-basic.json", dir);
    const char *basic[] = {harness_anvil_bin(), "run", "--base-url", url, "--num-prompts", "1", "--calibration",
                           "none", "--input-len", "8", "--output-len", "4", "--endpoint", "completions", "--out",
                           art, NULL};
    cr_assert_eq(run_clean(basic, err, sizeof err), 1, "%s", err);
    cJSON *a = harness_load_json(art);
    const char *msg = cJSON_GetStringValue(harness_json_path(a, "failures.0.message"));
    cr_assert(msg && strstr(msg, "Basic [redacted]"), "the server saw Basic credentials: %s", msg);
    cJSON_Delete(a);
    /* the journals: what recover rebuilds from them, and what the readers write */
    glob_t g;
    char pattern[200];
    snprintf(pattern, sizeof pattern, "%s/*.requests.jsonl", dir);
    cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no journal in %s", dir);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char rec[200];
        snprintf(rec, sizeof rec, "%s/recovered-%zu.json", dir, i);
        const char *recover[] = {harness_anvil_bin(), "recover", g.gl_pathv[i], "--out", rec, NULL};
        run_clean(recover, err, sizeof err);
    }
    globfree(&g);
    snprintf(art, sizeof art, "%s/run-0.json", dir);
    char matrix[200], html[200];
    snprintf(matrix, sizeof matrix, "%s/matrix.json", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    const char *agg[] = {harness_anvil_bin(), "aggregate", art, "--out", matrix, NULL};
    const char *rep[] = {harness_anvil_bin(), "report", art, "-o", html, NULL};
    const char *show[] = {harness_anvil_bin(), "show", art, "--format", "json", NULL};
    char art1[200];
    snprintf(art1, sizeof art1, "%s/run-1.json", dir);
    const char *compare[] = {harness_anvil_bin(), "compare", art, art1, NULL};
    cr_assert_eq(run_clean(agg, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_clean(rep, err, sizeof err), 0, "%s", err);
    cr_assert_eq(run_clean(show, err, sizeof err), 0, "%s", err);
    run_clean(compare, err, sizeof err);
    /* a sweep (credentials reach its rounds after --) and a decode matrix */
    const char *sweep[] = {harness_anvil_bin(), "sweep", "--base-url", plain, "--concurrency", "1",
                           "--num-prompts", "1", "--input-len", "8", "--output-len", "4", "--out-dir", sweep_dir,
                           "--", "--api-key-env", "ANVIL_TEST_KEY", "--header-env", "X-Other=ANVIL_TEST_HDR",
                           "--header", "X-Token: hdrSECRET", "--calibration", "none", "--endpoint", "completions",
                           NULL};
    cr_assert_eq(run_clean(sweep, err, sizeof err), 1, "its rounds failed (401); stderr: %s", err);
    const char *decode[] = {harness_anvil_bin(), "decode", "--base-url", url, "--api-key-env", "ANVIL_TEST_KEY",
                            "--header", "X-Token: hdrSECRET", "--concurrency", "1", "--contexts", "0",
                            "--duration", "1", "--server-metrics", "off", "--out-dir", decode_dir, NULL};
    cr_assert_eq(run_clean(decode, err, sizeof err), 1, "its calibration failed (401); stderr: %s", err);
    cr_assert(strstr(err, "[redacted]"), "decode printed the echo, scrubbed: %s", err);
    silent_stop(&s);
    cr_assert_gt(no_secret_under(dir), 8, "the files of every command were read");
    rmtree(dir);
}

/* --header 'Authorization: ...' with --api-key-env: one Authorization
 * header is sent (the explicit one; two were sent before, without a word),
 * and one note says the key is not. */
Test(reliability, an_explicit_authorization_header_replaces_the_key, .timeout = 60)
{
    struct silent s;
    echo_start(&s);
    char url[160], art[64];
    snprintf(url, sizeof url, "http://%s", s.base_url);
    cr_assert_eq(harness_tmpfile(art, sizeof art), 0);
    setenv("ANVIL_TEST_KEY", "sk-keySECRET", 1);
    const char *run[] = {harness_anvil_bin(), "run", "--base-url", url, "--api-key-env", "ANVIL_TEST_KEY",
                         "--header", "Authorization: Bearer authSECRET", "--endpoint", "completions",
                         "--num-prompts", "1", "--calibration", "none", "--input-len", "8", "--output-len", "4",
                         "--out", art, NULL};
    static char err[1 << 16];
    cr_assert_eq(run_clean(run, err, sizeof err), 1, "%s", err);
    silent_stop(&s);
    cJSON *a = harness_load_json(art);
    const char *msg = cJSON_GetStringValue(harness_json_path(a, "failures.0.message"));
    cr_assert(msg, "no failure message");
    int auth = 0;
    for (const char *p = msg; (p = strcasestr(p, "authorization:")); p++)
        auth++;
    cr_assert_eq(auth, 1, "the server received %d Authorization headers: %s", auth, msg);
    int notes = 0;
    for (const char *p = err; (p = strstr(p, "--api-key-env ANVIL_TEST_KEY key is not")); p++)
        notes++;
    cr_assert_eq(notes, 1, "one note: %s", err);
    cJSON_Delete(a);
    unlink(art);
}
