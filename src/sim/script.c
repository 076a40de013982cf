/* script.c — scripted replies: a parsed step list and its playback on
 * timers. Steps are scheduled from the reply's start (absolute times), so a
 * slow callback does not shift every later write. */
#include "sim/script.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>

#include "core/clock.h"
#include "core/file.h"
#include "sim/trace.h"

enum step_kind { STEP_WRITE, STEP_CLOSE, STEP_HOLD };

struct step {
    enum step_kind kind;
    int64_t at_ns;          /* from the start of the reply */
    unsigned char *bytes;   /* STEP_WRITE: owned */
    size_t len;
};

struct header {
    char *name, *value;
};

struct sim_script {
    int status;
    struct header *headers;
    size_t n_headers;
    struct step *steps;
    size_t n_steps;
};

/* One playback in progress. */
struct play {
    const struct sim_script *sc;
    struct evhttp_request *req;
    struct evhttp_connection *conn;
    struct event *timer;
    int64_t t0;
    size_t next;
    struct sim_trace *trace;         /* NULL: not traced */
    char *request_id;                /* X-Request-Id copy for the trace, or NULL */
    char *path;                      /* the request's path, copied for the trace */
    struct sim_trace_chunk *writes;  /* traced: each write's time, n_steps room */
    size_t n_writes;
    int64_t late_ns;                 /* the latest a step ran after its time */
    bool ended;                      /* the reply's end was sent */
};

static int b64_value(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes base64 (padding optional). Returns a malloc'd buffer, or NULL. */
static unsigned char *b64_decode(const char *s, size_t *len)
{
    size_t n = strlen(s);
    unsigned char *out = malloc(n * 3 / 4 + 3);
    if (!out)
        return NULL;
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n && s[i] != '='; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)v;
        if ((bits += 6) >= 8) {
            bits -= 8;
            out[k++] = (unsigned char)(acc >> bits);
        }
    }
    *len = k;
    return out;
}

static int parse_head(struct sim_script *sc, const cJSON *j, char *err, size_t errcap, long line)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(j, "headers"), *h;
    if (!cJSON_IsNumber(st) || st->valuedouble < 100 || st->valuedouble > 599) {
        snprintf(err, errcap, "line %ld: needs \"status\" (100..599)", line);
        return -1;
    }
    if (hs && !cJSON_IsObject(hs)) {
        snprintf(err, errcap, "line %ld: \"headers\" must be an object of strings", line);
        return -1;
    }
    sc->status = (int)st->valuedouble;
    sc->headers = calloc((size_t)cJSON_GetArraySize(hs) + 1, sizeof *sc->headers);
    if (!sc->headers)
        return -1;
    cJSON_ArrayForEach(h, hs) {
        if (!cJSON_IsString(h)) {
            snprintf(err, errcap, "line %ld: header %s is not a string", line, h->string);
            return -1;
        }
        struct header *x = &sc->headers[sc->n_headers++];
        x->name = strdup(h->string);
        x->value = strdup(h->valuestring);
    }
    return 0;
}

static int parse_step(struct sim_script *sc, const cJSON *j, long line, int64_t *at, char *err, size_t errcap)
{
    const cJSON *after = cJSON_GetObjectItemCaseSensitive(j, "after_ms");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "write");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "write_b64");
    double ms = cJSON_IsNumber(after) ? after->valuedouble : 0;
    if (!(ms >= 0) || isinf(ms)) {
        snprintf(err, errcap, "line %ld: after_ms must be a number ≥ 0", line);
        return -1;
    }
    *at += (int64_t)llround(ms * 1e6);
    struct step st = {.at_ns = *at};
    if (cJSON_IsString(w)) {
        st.kind = STEP_WRITE;
        st.len = strlen(w->valuestring);
        st.bytes = (unsigned char *)strdup(w->valuestring);
    } else if (cJSON_IsString(b)) {
        st.kind = STEP_WRITE;
        if (!(st.bytes = b64_decode(b->valuestring, &st.len))) {
            snprintf(err, errcap, "line %ld: write_b64 is not base64", line);
            return -1;
        }
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "close"))) {
        st.kind = STEP_CLOSE;
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "hold"))) {
        st.kind = STEP_HOLD;
    } else {
        snprintf(err, errcap, "line %ld: a step needs \"write\", \"write_b64\", \"close\" or \"hold\"", line);
        return -1;
    }
    sc->steps[sc->n_steps++] = st;
    return 0;
}

struct sim_script *sim_script_load(const char *path, char *err, size_t errcap)
{
    char *text = file_read_all(path, NULL);
    struct sim_script *sc = calloc(1, sizeof *sc);
    if (!text || !sc) {
        snprintf(err, errcap, "cannot read %s", path);
        free(text);
        free(sc);
        return NULL;
    }
    size_t lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    sc->steps = calloc(lines, sizeof *sc->steps);
    int64_t at = 0;
    long line = 0;
    bool have_head = false;
    int rc = sc->steps ? 0 : -1;
    for (char *l = text, *next; l && rc == 0; l = next) {
        next = strchr(l, '\n');        /* by hand: blank lines still count for the numbers */
        if (next)
            *next++ = '\0';
        line++;
        if (strspn(l, " \t\r") == strlen(l))
            continue;
        cJSON *j = cJSON_Parse(l);
        if (!cJSON_IsObject(j)) {
            snprintf(err, errcap, "line %ld: not a JSON object", line);
            rc = -1;
        } else if (!have_head) {
            rc = parse_head(sc, j, err, errcap, line);
            have_head = true;
        } else {
            rc = parse_step(sc, j, line, &at, err, errcap);
        }
        cJSON_Delete(j);
    }
    free(text);
    if (rc == 0 && !have_head) {
        snprintf(err, errcap, "the script is empty");
        rc = -1;
    }
    if (rc != 0) {
        char where[300];
        snprintf(where, sizeof where, "%s: %s", path, err);
        snprintf(err, errcap, "%s", where);
        sim_script_free(sc);
        return NULL;
    }
    return sc;
}

void sim_script_free(struct sim_script *sc)
{
    if (!sc)
        return;
    for (size_t i = 0; i < sc->n_headers; i++) {
        free(sc->headers[i].name);
        free(sc->headers[i].value);
    }
    for (size_t i = 0; i < sc->n_steps; i++)
        free(sc->steps[i].bytes);
    free(sc->headers);
    free(sc->steps);
    free(sc);
}

/* The request's trace line, as it leaves (sim/trace.h). */
static void trace_play(const struct play *p)
{
    struct sim_trace_rec r = {
        .request_id = p->request_id, .path = p->path, .status = p->sc->status,
        .received_ns = p->t0, .finished_ns = clock_now_ns(), .prompt_tokens = -1, .stream = true,
        .client_closed = !p->ended, .chunks = p->writes, .n_chunks = p->n_writes, .late_ns = p->late_ns,
    };
    sim_trace_write(p->trace, &r);
}

/* Frees p's memory (NULL-safe); play_free also traces it and lets go of
 * its connection. */
static void play_release(struct play *p)
{
    if (!p)
        return;
    if (p->timer)
        event_free(p->timer);
    free(p->writes);
    free(p->request_id);
    free(p->path);
    free(p);
}

static void play_free(struct play *p)
{
    if (p->trace)
        trace_play(p);
    if (p->conn)
        evhttp_connection_set_closecb(p->conn, NULL, NULL);
    play_release(p);
}

/* The client went away, the script closed, or the server is shutting
 * down. A request evhttp detached from its dying connection is ours to free
 * (as in gen.c); an attached one goes with the connection. */
static void on_conn_close(struct evhttp_connection *conn, void *arg)
{
    (void)conn;
    struct play *p = arg;
    if (evhttp_request_get_connection(p->req) == NULL)
        evhttp_request_free(p->req);
    p->conn = NULL;
    play_free(p);
}

static void arm(struct play *p)
{
    int64_t wait = p->t0 + p->sc->steps[p->next].at_ns - clock_now_ns();
    if (wait < 0)
        wait = 0;
    struct timeval tv = ns_to_timeval(wait);
    evtimer_add(p->timer, &tv);
}

/* Ends the reply and frees p first: ending it may free the connection at
 * once (an HTTP/1.0 client, nothing left to write), whose close callback
 * would free p under us. */
static void end_reply(struct play *p)
{
    struct evhttp_request *req = p->req;
    p->ended = true;
    play_free(p);
    evhttp_send_reply_end(req);
}

static void on_step(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct play *p = arg;
    while (p->next < p->sc->n_steps && p->t0 + p->sc->steps[p->next].at_ns <= clock_now_ns()) {
        const struct step *st = &p->sc->steps[p->next++];
        int64_t now = clock_now_ns();
        if (now - (p->t0 + st->at_ns) > p->late_ns)
            p->late_ns = now - (p->t0 + st->at_ns);
        if (st->kind == STEP_HOLD)
            return;     /* never finish: the client's idle timeout must act */
        if (st->kind == STEP_CLOSE) {
            /* shut the socket down: evhttp sees the error and frees the
             * request, and the close callback frees this playback */
            struct bufferevent *bev = evhttp_connection_get_bufferevent(p->conn);
            shutdown(bufferevent_getfd(bev), SHUT_RDWR);
            return;
        }
        struct evbuffer *b = evbuffer_new();
        if (p->writes)
            p->writes[p->n_writes++] = (struct sim_trace_chunk){.t_ns = now};
        if (b) {
            evbuffer_add(b, st->bytes, st->len);
            evhttp_send_reply_chunk(p->req, b);
            evbuffer_free(b);
        }
    }
    if (p->next < p->sc->n_steps) {
        arm(p);
        return;
    }
    end_reply(p);
}

/* Sets up p's trace state; false when memory runs out. */
static bool trace_init(struct play *p, struct sim_trace *trace)
{
    p->trace = trace;
    if (!trace)
        return true;
    const char *rid = evhttp_find_header(evhttp_request_get_input_headers(p->req), "X-Request-Id");
    p->writes = calloc(p->sc->n_steps ? p->sc->n_steps : 1, sizeof *p->writes);
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(p->req));
    p->request_id = rid ? strdup(rid) : NULL;
    p->path = strdup(path ? path : "");
    return p->writes && p->path && (!rid || p->request_id);
}

int sim_script_play(const struct sim_script *sc, struct event_base *base, struct evhttp_request *req,
                    int64_t t0_ns, struct sim_trace *trace)
{
    struct play *p = calloc(1, sizeof *p);
    if (p) {
        p->sc = sc;
        p->req = req;
    }
    if (!p || !(p->timer = evtimer_new(base, on_step, p)) || !trace_init(p, trace)) {
        play_release(p);
        evhttp_send_error(req, 500, "out of memory");
        return -1;
    }
    p->conn = evhttp_request_get_connection(req);
    p->t0 = t0_ns;
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    for (size_t i = 0; i < sc->n_headers; i++)
        evhttp_add_header(h, sc->headers[i].name, sc->headers[i].value);
    evhttp_connection_set_closecb(p->conn, on_conn_close, p);
    evhttp_send_reply_start(req, sc->status, sc->status < 400 ? "OK" : "Error");
    if (sc->n_steps == 0) {
        end_reply(p);
        return 0;
    }
    arm(p);
    return 0;
}
