/* ceiling.c — `anvil ceiling`'s measurement and its file (ceiling.h). */
#include "run/ceiling.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "artifact/json.h"
#include "core/child.h"
#include "core/clock.h"
#include "core/file.h"
#include "core/host.h"
#include "core/stop.h"
#include "core/version.h"
#include "core/yamljson.h"
#include "run/run.h"
#include "stats/dist.h"

/* How long the simulator may take to say where it listens, ms. */
#define SIM_START_MS 15000
/* The most JSON values a ceiling file may hold (it holds tens). */
#define CEILING_MAX_NODES 100000

void ceiling_cfg_defaults(struct ceiling_cfg *c)
{
    *c = (struct ceiling_cfg){.max_s = 60, .start_concurrency = 64, .max_concurrency = 8192, .itl_ms = 10,
                              .ttft_ms = 20, .output_len = 100, .rounds = 3};
}

void ceiling_result_free(struct ceiling_result *r)
{
    free(r->steps);
    r->steps = NULL;
    r->n_steps = 0;
}

/* ---- the simulator, a child process ---- */

struct sim {
    pid_t pid;
    int out;                    /* read end of its stdout, open until it stops */
    char base_url[160];
};

/* Starts `bin sim --port 0 ...` writing its trace to trace, and reads its
 * "listening on http://HOST:PORT" line. Returns 0, or -1 with err. */
static int sim_start(const struct ceiling_cfg *c, const char *trace, struct sim *s, char *err, size_t errlen)
{
    *s = (struct sim){.pid = -1, .out = -1};
    char ttft[32], itl[32];
    snprintf(ttft, sizeof ttft, "%g", c->ttft_ms);
    snprintf(itl, sizeof itl, "%g", c->itl_ms);
    const char *bin = c->sim_bin ? c->sim_bin : "/proc/self/exe";
    char *argv[] = {(char *)bin, "sim", "--host", "127.0.0.1", "--port", "0", "--ttft-ms", ttft, "--itl-ms", itl,
                    "--trace", (char *)trace, NULL};
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    struct child_opts o = {.in = -1, .out = p[1], .err = STDERR_FILENO, .keep_fd = -1, .new_group = true};
    s->pid = child_spawn(argv, &o, err, errlen);
    close(p[1]);
    s->out = p[0];
    if (s->pid < 0) {
        close(p[0]);
        s->out = -1;
        return -1;
    }
    char line[256];
    size_t n = 0;
    int64_t until = clock_now_ns() + (int64_t)SIM_START_MS * 1000000;
    while (n + 1 < sizeof line && !memchr(line, '\n', n)) {
        int64_t left = until - clock_now_ns();
        struct pollfd pfd = {.fd = s->out, .events = POLLIN};
        if (left <= 0 || (poll(&pfd, 1, (int)(left / 1000000) + 1) < 0 && errno != EINTR))
            break;
        ssize_t k = pfd.revents ? read(s->out, line + n, sizeof line - 1 - n) : 0;
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0 && pfd.revents)
            break;
        n += k > 0 ? (size_t)k : 0;
    }
    line[n] = '\0';
    char host[64];
    int port;
    if (sscanf(line, "listening on http://%63[^:]:%d", host, &port) != 2) {
        snprintf(err, errlen, "the simulator (%s sim) did not say where it listens within %d s", bin,
                 SIM_START_MS / 1000);
        kill(s->pid, SIGKILL);
        child_wait(s->pid);
        close(s->out);
        *s = (struct sim){.pid = -1, .out = -1};
        return -1;
    }
    snprintf(s->base_url, sizeof s->base_url, "http://%s:%d/v1", host, port);
    return 0;
}

/* Stops the simulator (SIGTERM: it writes the rest of its trace and exits)
 * and waits for it. Returns its exit status. */
static int sim_stop(struct sim *s)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    int st = child_wait(s->pid);
    close(s->out);
    *s = (struct sim){.pid = -1, .out = -1};
    return st;
}

/* The simulator on the last CPU and this thread on the others, when there
 * are two or more: a reader woken on its writer's CPU, both on one CPU,
 * stall each other for milliseconds (tests/e2e/test_truth.c) — the
 * machine's noise, not the client's. */
static void split_cpus(pid_t sim)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2 || n > CPU_SETSIZE)
        return;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET((int)n - 1, &s);
    if (sched_setaffinity(sim, sizeof s, &s) != 0)
        return;
    CPU_ZERO(&s);
    for (int i = 0; i < n - 1; i++)
        CPU_SET(i, &s);
    sched_setaffinity(0, sizeof s, &s);
}

/* ---- one step ---- */

/* The first output write of each request in the trace at path, by request
 * index (its "anvil-req-N" id), into first[0..n) (NaN = not traced).
 * Returns 0, or -1 when the file cannot be read. */
static int read_trace(const char *path, double *first, long n)
{
    for (long i = 0; i < n; i++)
        first[i] = NAN;
    char *text = file_read_all(path, NULL);
    if (!text)
        return -1;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(j, "request_id"));
        const cJSON *t = cJSON_GetObjectItem(j, "first_token_ns");
        long idx;
        if (id && sscanf(id, "anvil-req-%ld", &idx) == 1 && idx >= 0 && idx < n && cJSON_IsNumber(t))
            first[idx] = t->valuedouble;
        cJSON_Delete(j);
    }
    free(text);
    return 0;
}

/* Judges the step's records against the trace: failures, the stamp errors
 * and how many are late. */
static void judge(const struct run_result *res, const double *first, struct ceiling_step *s)
{
    double *err = malloc((size_t)(res->n_records > 0 ? res->n_records : 1) * sizeof *err);
    size_t n = 0;
    for (int i = 0; i < res->n_records; i++) {
        const struct req_record *r = &res->records[i];
        if (!r->t_start)
            continue;
        s->requests++;
        if (r->fail != FAIL_NONE) {
            s->failed++;
            continue;
        }
        double e = r->t_first_output && !isnan(first[i]) ? fabs((double)r->t_first_output - first[i]) / 1e6 : INFINITY;
        if (!(e <= CEILING_TOLERANCE_MS))
            s->late++;
        if (err && isfinite(e))
            err[n++] = e;
    }
    if (err && n) {
        struct dist d;
        dist_compute(err, n, PCT_NEAREST, &d);
        s->err_p99_ms = d.p99;
        s->err_max_ms = d.max;
    }
    free(err);
    s->pass = s->requests > 0 && s->failed == 0 && s->late == 0;
}

/* The run stage's settings for a step at concurrency conc against url. */
static void step_config(const struct ceiling_cfg *c, long conc, const char *url, const char *dir, FILE *devnull,
                        struct run_config *rc)
{
    run_config_defaults(rc);
    rc->name = "anvil ceiling";
    rc->log = devnull;
    rc->transport.base_url = url;
    rc->transport.model = "anvil-sim";
    rc->transport.kind = c->transport;
    rc->load.concurrency = conc;
    rc->load.threads = 1;
    rc->load.num_prompts = conc * c->rounds;
    rc->load.warmup = 0;
    /* streams started over one request's length: their writes spread over the ITL, as a server's
     * streams are, not every stream's token at the same instant */
    double req_s = (c->ttft_ms + (double)c->output_len * c->itl_ms) / 1000;
    if (conc > 1)
        rc->load.ramp.ramp_up_s = req_s < 1 ? req_s : 1;
    rc->workload.input_len = 16;
    rc->workload.output_len = c->output_len;
    rc->workload.calib = CALIB_NONE;
    rc->observe.server_metrics = "off";
    rc->observe.telemetry = OBS_MODE_OFF;
    rc->out.dir = dir;
    rc->out.ceiling_file = "";      /* the measurement does not judge itself */
    rc->out.max_request_rows = 1;
    rc->keep_records = true;
}

/* Removes the files a step left in dir. */
static void clean_step(const struct run_result *res, const char *trace)
{
    if (res->artifact_path[0])
        unlink(res->artifact_path);
    if (res->journal_path[0])
        unlink(res->journal_path);
    unlink(trace);
}

/* Runs one step at concurrency conc. Returns 0 (the step is in *s), or -1
 * with err when the simulator or the run could not start. */
static int run_step(const struct ceiling_cfg *c, long conc, const char *dir, FILE *devnull, struct ceiling_step *s,
                    char *err, size_t errlen)
{
    *s = (struct ceiling_step){.concurrency = conc, .err_p99_ms = NAN, .err_max_ms = NAN,
                               .events_per_s = NAN, .mean_events_per_s = NAN};
    char trace[4200];
    snprintf(trace, sizeof trace, "%s/trace.jsonl", dir);
    int64_t t0 = clock_now_ns();
    struct sim sim;
    if (sim_start(c, trace, &sim, err, errlen) != 0)
        return -1;
    split_cpus(sim.pid);
    struct run_config rc;
    step_config(c, conc, sim.base_url, dir, devnull, &rc);
    struct run_result res;
    int rc_ok = run_config_check(&rc, err, errlen);
    if (rc_ok == 0)
        run_execute(&rc, &res);
    sim_stop(&sim);
    s->wall_s = (double)(clock_now_ns() - t0) / 1e9;
    if (rc_ok != 0) {
        unlink(trace);
        return -1;
    }
    if (res.status == RUN_FAILED) {
        snprintf(err, errlen, "the run at concurrency %ld: %.900s", conc, res.error);
        clean_step(&res, trace);
        run_result_free(&res);
        return -1;
    }
    s->events_per_s = res.peak_events_per_s >= 0 ? (double)res.peak_events_per_s : NAN;
    if (res.summarized && res.summary.duration_ms > 0)
        s->mean_events_per_s = (double)res.summary.events / (res.summary.duration_ms / 1000);
    double *first = malloc((size_t)(res.n_records > 0 ? res.n_records : 1) * sizeof *first);
    if (!first || read_trace(trace, first, res.n_records) != 0) {
        snprintf(err, errlen, "cannot read the simulator's trace %.900s", trace);
        free(first);
        clean_step(&res, trace);
        run_result_free(&res);
        return -1;
    }
    judge(&res, first, s);
    free(first);
    clean_step(&res, trace);
    run_result_free(&res);
    return 0;
}

void ceiling_print_header(FILE *out)
{
    fprintf(out, "%11s %10s %12s %12s %9s %12s %12s %6s %7s\n", "concurrency", "requests", "peak ev/s",
            "mean ev/s", "failed", "p99 err ms", "max err ms", "late", "within");
}

void ceiling_print_step(FILE *out, const struct ceiling_step *s)
{
    fprintf(out, "%11ld %10ld %12.0f %12.0f %9ld %12.3f %12.3f %6ld %7s\n", s->concurrency, s->requests,
            s->events_per_s, s->mean_events_per_s, s->failed, s->err_p99_ms, s->err_max_ms, s->late,
            s->pass ? "yes" : "no");
    fflush(out);
}

int ceiling_measure(const struct ceiling_cfg *c, struct ceiling_result *out)
{
    *out = (struct ceiling_result){.best = -1};
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/anvil-ceiling-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(out->error, sizeof out->error, "cannot make a temporary directory %.300s: %s", dir, strerror(errno));
        return -1;
    }
    FILE *devnull = fopen("/dev/null", "w");
    cpu_set_t mask;
    bool masked = sched_getaffinity(0, sizeof mask, &mask) == 0;
    int cap = 0;
    for (long k = c->start_concurrency; k <= c->max_concurrency; k *= 2)
        cap++;
    cap++;      /* the step between */
    out->steps = calloc((size_t)cap, sizeof *out->steps);
    int64_t start = clock_now_ns();
    long conc = c->start_concurrency;
    double last_wall = 0;
    bool refining = false;      /* the step between the last within and the first not */
    char first_miss[256] = "";
    int rc = -1;
    if (!devnull || !out->steps) {
        snprintf(out->error, sizeof out->error, "out of memory");
        goto done;
    }
    if (c->log)
        ceiling_print_header(c->log);
    for (;;) {
        double elapsed = (double)(clock_now_ns() - start) / 1e9;
        char err[1024] = "";
        if (conc > c->max_concurrency || out->n_steps >= cap) {
            snprintf(out->stopped, sizeof out->stopped, "the concurrency cap (%ld)", c->max_concurrency);
            break;
        }
        /* a step at twice the streams costs up to about twice as long */
        if (out->n_steps > 0 && elapsed + 2 * last_wall > c->max_s) {
            snprintf(out->stopped, sizeof out->stopped, "the time budget (%g s; the next step would end after it)",
                     c->max_s);
            break;
        }
        if (run_check_fd_limit(conc, err, sizeof err) != 0) {
            snprintf(out->stopped, sizeof out->stopped, "the open-file limit at concurrency %ld", conc);
            break;
        }
        if (stop_requested()) {
            snprintf(out->stopped, sizeof out->stopped, "a signal");
            break;
        }
        struct ceiling_step *s = &out->steps[out->n_steps];
        if (run_step(c, conc, dir, devnull, s, err, sizeof err) != 0) {
            if (out->n_steps == 0) {
                snprintf(out->error, sizeof out->error, "%.500s", err);
                goto done;
            }
            snprintf(out->stopped, sizeof out->stopped, "%.250s", err);
            break;
        }
        out->n_steps++;
        last_wall = s->wall_s;
        if (c->log)
            ceiling_print_step(c->log, s);
        if (!s->pass) {
            if (!refining)
                snprintf(first_miss, sizeof first_miss, "concurrency %ld: %s", conc,
                         s->failed ? "requests failed" : "first-token stamps off by more than 1 ms");
            snprintf(out->stopped, sizeof out->stopped, "%s", first_miss);
            /* once, the streams halfway between the last step within and this one */
            long last = out->best >= 0 ? out->steps[out->best].concurrency : 0, mid = last + last / 2;
            if (refining || last == 0 || mid <= last || mid >= conc)
                break;
            refining = true;
            conc = mid;
            continue;
        }
        if (out->best < 0 || s->events_per_s > out->steps[out->best].events_per_s)
            out->best = out->n_steps - 1;
        if (refining)
            break;
        /* twice the streams, under 10 % more events: something (the client or the simulator) is
         * saturated, and more streams only queue */
        if (out->n_steps > 1 && s->events_per_s < 1.1 * out->steps[out->n_steps - 2].events_per_s) {
            snprintf(out->stopped, sizeof out->stopped, "saturation: twice the streams gave under 10 %% more "
                     "events/s (the client or the simulator is at its limit)");
            break;
        }
        conc *= 2;
    }
    rc = 0;
    if (out->best >= 0) {
        struct host_facts h;
        host_facts_get(&h);
        struct ceiling *ce = &out->ceiling;
        ce->events_per_s = out->steps[out->best].events_per_s;
        clock_utc_iso8601(ce->measured_at);
        snprintf(ce->host, sizeof ce->host, "%s", h.host);
        snprintf(ce->version, sizeof ce->version, "%s", anvil_version());
        ce->threads = 1;
        enum http_transport t;
        char err[200];
        if (http_transport_resolve(c->transport, "http://127.0.0.1/v1", &t, err, sizeof err) == 0)
            snprintf(ce->transport, sizeof ce->transport, "%s", http_transport_name(t));
    }
done:
    if (masked)
        sched_setaffinity(0, sizeof mask, &mask);
    if (devnull)
        fclose(devnull);
    rmdir(dir);
    if (rc != 0)
        ceiling_result_free(out);
    return rc;
}

/* ---- the file ---- */

int ceiling_default_path(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(out, cap, "%s/anvil/ceiling.json", xdg);
    else if (home && home[0])
        n = snprintf(out, cap, "%s/.cache/anvil/ceiling.json", home);
    else
        return -1;
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static void copy_str(const cJSON *o, const char *k, char *out, size_t cap)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
    snprintf(out, cap, "%s", v ? v : "");
}

int ceiling_read(const char *path, struct ceiling *c, char *err, size_t errlen)
{
    *c = (struct ceiling){0};
    size_t len;
    char *text = file_read_all(path, &len);
    if (!text) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char why[256];
    cJSON *j = json_parse_capped(text, len, CEILING_MAX_NODES, NULL, why, sizeof why);
    free(text);
    if (!j) {
        snprintf(err, errlen, "%s: not JSON (%s)", path, why);
        return -1;
    }
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItem(j, "schema"));
    const cJSON *ev = cJSON_GetObjectItem(j, "events_per_s"), *th = cJSON_GetObjectItem(j, "threads");
    int rc = -1;
    if (!schema || strcmp(schema, CEILING_SCHEMA))
        snprintf(err, errlen, "%s: not an anvil ceiling file (schema %s)", path, CEILING_SCHEMA);
    else if (!cJSON_IsNumber(ev) || !(ev->valuedouble > 0) || !isfinite(ev->valuedouble))
        snprintf(err, errlen, "%s: events_per_s is not a positive number", path);
    else {
        c->events_per_s = ev->valuedouble;
        c->threads = cJSON_IsNumber(th) ? (long)th->valuedouble : 1;
        copy_str(j, "measured_at", c->measured_at, sizeof c->measured_at);
        copy_str(j, "host", c->host, sizeof c->host);
        copy_str(j, "anvil_version", c->version, sizeof c->version);
        copy_str(j, "transport", c->transport, sizeof c->transport);
        rc = 0;
    }
    cJSON_Delete(j);
    return rc;
}

/* n as a JSON number, or null when NaN. */
static cJSON *num_or_null(double n)
{
    return isfinite(n) ? cJSON_CreateNumber(n) : cJSON_CreateNull();
}

int ceiling_write(const char *path, const struct ceiling_result *r, const struct ceiling_cfg *c, char *err,
                  size_t errlen)
{
    const struct ceiling *ce = &r->ceiling;
    cJSON *j = cJSON_CreateObject(), *steps = cJSON_CreateArray(), *load = cJSON_CreateObject();
    bool ok = j && steps && load;
    if (ok) {
        cJSON_AddStringToObject(j, "schema", CEILING_SCHEMA);
        cJSON_AddNumberToObject(j, "events_per_s", round(ce->events_per_s));
        cJSON_AddNumberToObject(j, "concurrency", (double)r->steps[r->best].concurrency);
        cJSON_AddStringToObject(j, "measured_at", ce->measured_at);
        cJSON_AddStringToObject(j, "host", ce->host);
        cJSON_AddStringToObject(j, "anvil_version", ce->version);
        cJSON_AddNumberToObject(j, "threads", (double)ce->threads);
        if (ce->transport[0])
            cJSON_AddStringToObject(j, "transport", ce->transport);
        else
            cJSON_AddNullToObject(j, "transport");
        cJSON_AddStringToObject(j, "criterion", "every first-token stamp within 1 ms of the simulator's write");
        cJSON_AddNumberToObject(j, "tolerance_ms", CEILING_TOLERANCE_MS);
        cJSON_AddNumberToObject(load, "itl_ms", c->itl_ms);
        cJSON_AddNumberToObject(load, "ttft_ms", c->ttft_ms);
        cJSON_AddNumberToObject(load, "output_len", (double)c->output_len);
        cJSON_AddNumberToObject(load, "rounds", (double)c->rounds);
        cJSON_AddItemToObject(j, "load", load);
        load = NULL;
        cJSON_AddStringToObject(j, "stopped", r->stopped);
        for (int i = 0; i < r->n_steps; i++) {
            const struct ceiling_step *s = &r->steps[i];
            cJSON *o = cJSON_CreateObject();
            if (!o) {
                ok = false;
                break;
            }
            cJSON_AddNumberToObject(o, "concurrency", (double)s->concurrency);
            cJSON_AddNumberToObject(o, "requests", (double)s->requests);
            cJSON_AddNumberToObject(o, "failed", (double)s->failed);
            cJSON_AddItemToObject(o, "events_per_s", num_or_null(s->events_per_s));
            cJSON_AddItemToObject(o, "mean_events_per_s", num_or_null(round(s->mean_events_per_s)));
            cJSON_AddItemToObject(o, "first_token_error_p99_ms", num_or_null(s->err_p99_ms));
            cJSON_AddItemToObject(o, "first_token_error_max_ms", num_or_null(s->err_max_ms));
            cJSON_AddNumberToObject(o, "late", (double)s->late);
            cJSON_AddBoolToObject(o, "within", s->pass);
            cJSON_AddItemToArray(steps, o);
        }
        cJSON_AddItemToObject(j, "steps", steps);
        steps = NULL;
    }
    char *text = ok ? artifact_print(j) : NULL;
    int rc = -1;
    if (!text)
        snprintf(err, errlen, "out of memory");
    else
        rc = artifact_place_text(path, text, err, errlen);
    free(text);
    cJSON_Delete(j);
    cJSON_Delete(steps);
    cJSON_Delete(load);
    return rc;
}
