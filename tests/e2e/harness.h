/* harness.h — helpers for end-to-end tests: run `anvil sim` as a child
 * process, run other commands, and make blocking HTTP requests (libcurl easy).
 * Every function is safe to call from a Criterion test (each test runs in its
 * own process). */
#ifndef ANVIL_TESTS_E2E_HARNESS_H
#define ANVIL_TESTS_E2E_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include <stdbool.h>

#include <cjson/cJSON.h>

/* A running simulator. */
struct sim_proc {
    pid_t pid;              /* child's pid; 0 when not running */
    int port;               /* the port it listens on (from its first stdout line) */
    int stdout_fd;          /* read end of its stdout pipe, kept open until sim_stop */
    char host[64];          /* HOST from "listening on http://HOST:PORT" */
    char root_url[128];     /* "http://HOST:PORT" (for /health, /metrics, /tokenize, ...) */
    char base_url[128];     /* "http://HOST:PORT/v1" (OpenAI base URL) */
};

/* The anvil binary under test: $ANVIL_BIN, or "build/anvil" when unset or
 * empty. Returns a string owned by the environment (do not free). */
const char *harness_anvil_bin(void);

/* Starts `$ANVIL_BIN sim --port 0 <extra_args...>` (extra_args is a
 * NULL-terminated array, or NULL for none; later flags override --port 0).
 * Waits up to 15 s for the first stdout line, which must be exactly
 * "listening on http://HOST:PORT", and fills *p. The child's stderr is
 * inherited (sanitizer reports show up in the test output). Returns 0, or -1
 * when the child could not start, exited, or printed something else (the
 * child is then reaped and *p zeroed). */
int sim_start(struct sim_proc *p, const char *const extra_args[]);

/* The simulator that serves as ground truth in timing tests: $ANVIL_SIM_BIN
 * (make test points it at the optimized build, so the reference's own
 * sanitizer overhead is not charged to the client under test), else
 * harness_anvil_bin(). */
const char *harness_reference_sim_bin(void);

/* As sim_start, with harness_reference_sim_bin(). */
int sim_start_reference(struct sim_proc *p, const char *const extra_args[]);

/* Sends SIGTERM, waits up to 15 s for the child (then SIGKILLs it), closes
 * the pipe and zeroes p->pid. Returns the exit status (0..255), 128 + signal
 * when it died of a signal, or -1 when p was not running. A sanitizer build
 * that finds a leak at exit returns non-zero here. */
int sim_stop(struct sim_proc *p);

/* Runs argv (argv[0] a path) with stdout and stderr on a new
 * pseudo-terminal, as a user at a terminal sees it, reading all it writes
 * into out (cap bytes, NUL-terminated; at most 60 s of silence). Returns
 * the exit status (0..255, 128 + signal). */
int harness_run_on_pty(const char *const argv[], char *out, size_t cap);

/* Runs argv (argv[0] is looked up in PATH; NULL-terminated) with stdin from
 * /dev/null, waits for it, and copies its stdout into out (outcap bytes,
 * always NUL-terminated, truncated if longer; out may be NULL when outcap is
 * 0). When err is not NULL, stderr is captured into err (errcap bytes, same
 * rules); otherwise it is inherited. Sets *status to the exit status (0..255)
 * or 128 + signal. Returns 0, or -1 when the command could not be started. */
int run_cmd_err(const char *const argv[], char *out, size_t outcap, char *err, size_t errcap,
                int *status);

/* Starts argv (argv[0] looked up in PATH; NULL-terminated) in the
 * background with stdin and stdout on /dev/null, and stderr too when quiet
 * (else inherited), for tests that signal it. Returns its pid (the caller
 * waits for it), or -1. */
pid_t harness_spawn(const char *const argv[], int quiet);

/* As harness_spawn (stderr inherited), with stdout written to the file
 * out_path (created or truncated) for the caller to read once it waited. */
pid_t harness_spawn_to(const char *const argv[], const char *out_path);

/* run_cmd_err with stderr inherited. */
int run_cmd(const char *const argv[], char *out, size_t outcap, int *status);

/* A completed HTTP exchange. */
struct http_reply {
    long status;               /* HTTP status, 0 when no response arrived */
    char *body;                /* malloc'd, NUL-terminated (free with http_reply_free) */
    size_t len;                /* body bytes, excluding the NUL */
    char content_type[128];    /* Content-Type header value, "" when absent */
    char *headers;             /* the raw response header lines, malloc'd, NUL-terminated (or NULL) */
    double ttfb_s;             /* request start to the first response byte, s (CURLINFO_STARTTRANSFER_TIME) */
    int curl_code;             /* CURLcode of the transfer (0 = complete) */
};

/* Makes one blocking request: method "GET" or "POST" (body sent as
 * application/json; NULL means none), to url, with an optional extra header
 * line ("Name: value", or NULL). When abort_after > 0 the transfer is cut
 * (the client closes the connection) once that many body bytes arrived.
 * Fills *r (release with http_reply_free). Returns 0 when a response was
 * received (or cut on purpose), -1 on a transport error or out of memory. */
int http_do(const char *method, const char *url, const char *body, const char *header,
            size_t abort_after, struct http_reply *r);

/* http_do GET without extra header or abort. */
int http_get(const char *url, struct http_reply *r);

/* http_do POST of a JSON body without extra header or abort. */
int http_post(const char *url, const char *json, struct http_reply *r);

/* Frees r->body and r->headers; r may be reused. */
void http_reply_free(struct http_reply *r);

/* POSTs the n JSON bodies to url all at once (one connection each, libcurl
 * multi), each with the extra header line headers[i] (or none when headers
 * or headers[i] is NULL), and fills replies[i] (free each with
 * http_reply_free). Calls tick(arg) about every 5 ms while transfers run
 * (may be NULL): tests sample /metrics from it. Returns 0 when every
 * transfer got a response, else -1 (replies are filled either way; see
 * curl_code). */
int http_post_many(const char *url, const char *const bodies[], const char *const headers[], int n,
                   struct http_reply replies[], void (*tick)(void *arg), void *arg);

/* The value of the Prometheus sample whose name and labels are exactly
 * series (e.g. "vllm:num_requests_running{model_name=\"m\"}") in a GET of
 * root_url/metrics, or NAN when absent or on error. */
double harness_metric(const char *root_url, const char *series);

/* The JSON value at path ("a.b.0.c": object keys and array indexes) under
 * o, or NULL. */
struct cJSON *harness_json_path(const struct cJSON *o, const char *path);

/* Reads a JSON-lines file into up to cap parsed objects (caller
 * cJSON_Deletes each). Returns the count, or -1 when unreadable or a line
 * is not JSON. */
int harness_read_jsonl(const char *path, struct cJSON **lines, int cap);

/* The one "*.requests.jsonl" (a run's journal) in directory dir, its path
 * into path (cap bytes). Returns 0, or -1 when there is none. */
int harness_find_journal(const char *dir, char *path, size_t cap);

/* The p-th percentile (0 < p ≤ 100) of v[0..n) by nearest rank: element
 * ceil(p·n/100) of the sorted values (docs/METHODOLOGY.md); sorts v in
 * place. n ≥ 1. */
double harness_nearest_rank(double *v, size_t n, double p);

/* Creates an empty temporary file "DIR/anvil-XXXXXX" into path (cap ≥ 48
 * bytes), DIR being the test run's own folder (removed with what it holds,
 * journals beside artifacts included, after the last test), else /tmp.
 * Returns 0 or -1. The caller unlinks it. */
int harness_tmpfile(char *path, size_t cap);

/* Reads the whole file at path into a malloc'd NUL-terminated string
 * (caller frees); *len gets its length when len is not NULL. NULL on error. */
char *harness_read_file(const char *path, size_t *len);

/* Reads and parses the JSON file at path; fails the calling test, naming
 * the path, when it cannot be read or is not JSON. Caller deletes. */
cJSON *harness_load_json(const char *path);

/* The number at key k of o; fails the calling test when it is missing or
 * not a number. */
double harness_num(const cJSON *o, const char *k);

/* Gives the simulator `sim` the last CPU and this process (so the commands
 * it starts) the others, when there are two or more: on this VM a woken
 * reader is placed on its writer's CPU, and two processes sharing one stall
 * each other for milliseconds — the machine's noise, not the client's. */
void harness_split_cpus(pid_t sim);

/* What the simulator's trace (--trace) says of one request
 * ("anvil-req-N"): when it received it and wrote the first token, each
 * content chunk and the end (CLOCK_MONOTONIC ns; NAN when not traced). */
#define HARNESS_TRACE_CHUNKS 64
struct harness_traced {
    double received, first, finished;
    double chunk[HARNESS_TRACE_CHUNKS];
    int n_chunks;       /* chunks kept (at most HARNESS_TRACE_CHUNKS) */
};

/* Reads the trace at path into t[0..cap) by request index; requests not
 * in it keep received = first = finished = NAN and no chunks. Fails the calling test
 * when the file cannot be read. */
void harness_read_trace(const char *path, struct harness_traced *t, int cap);

/* From the journal next to the artifact at art_path (<dir>/<run_id>.
 * requests.jsonl, run_id from art): per request index, how many of its
 * first outputs the client dated with the first one's stamp (one read
 * holding them all), into k[0..cap) (0: no output). Fails the calling test
 * when the journal cannot be read. */
void harness_first_shared(const char *art_path, const cJSON *art, int *k, int cap);

/* Checks a first-token stamp (ns) against the server's writes in t: within
 * 1 ms of the first chunk's write, or — when the request is flagged
 * first_output_merged (merged: the client dated its first k ≥ 2 outputs by
 * one buffer or read; the kernel merged the segments that arrived while it
 * was off the CPU and keeps the newest one's stamp, METHODOLOGY.md) —
 * within 1 ms of the write of the k-th (or of the reply's end, when the
 * read held every output), or, flagged with k = 1 (dated by the clock at a
 * late read), after the write. (k ≥ 2 unflagged is a server's one write
 * of several outputs: then exact.) Fails the calling test naming what and the
 * error. Returns true when the stamp was off and flagged (callers bound
 * how often: a client that dated the first token by a later one on every
 * request would pass one by one). */
bool harness_check_first_stamp(const struct harness_traced *t, double stamp_ns, int k, bool merged,
                               const char *what);

/* The journal line of measured request idx of the run whose artifact art
 * was written at art_path (<dir>/<run_id>.requests.jsonl): the request's
 * whole record. Caller deletes; NULL when the journal has no such line.
 * Fails the calling test when the journal cannot be read. */
struct cJSON *harness_journal_record(const char *art_path, const struct cJSON *art, int idx);

/* Checks that a and b, the journal records of one request measured twice
 * (over two transports), agree field for field: the same keys; counts,
 * flags, strings and statuses equal; every time (t_*, and each chunk's)
 * within tol_ms of the other's, both taken from the request's own start;
 * each chunk's tokens, kind and bytes equal. A failure's message is
 * compared unless the failure is the connection's (truncated, transport,
 * connect, dns, client, cancelled): each transport words those its own way.
 * Fails the calling test naming what and the field, but for a time off by
 * more than tol_ms: returns false then, with the first such in why (cap
 * bytes), true when every time agrees. A loaded machine can delay one
 * client's read by more than any fixed bound: callers measure the pair
 * again (HARNESS_SAME_TRIES in all) before they fail, so that a real
 * difference, which repeats, still fails. */
#define HARNESS_SAME_TRIES 3
bool harness_same_record(const char *what, const struct cJSON *a, const struct cJSON *b, double tol_ms, char *why,
                         size_t cap);

/* A scripted server for tests: listens on 127.0.0.1 (an ephemeral port)
 * and serves every connection in a process of its own with serve(fd, ud),
 * which owns fd (TCP_NODELAY set). */
struct raw_server {
    pid_t pid;
    char base_url[64];      /* http://127.0.0.1:PORT/v1 */
};

/* Starts one (fails the calling test when it cannot listen). */
void raw_server_start(struct raw_server *s, void (*serve)(int fd, const void *ud), const void *ud);

/* Kills it and every connection it serves. */
void raw_server_stop(struct raw_server *s);

/* Sleeps ms milliseconds (tests only: the simulator itself never sleeps). */
void harness_sleep_ms(long ms);

#endif
