/* driver.c — closed-loop load on one event loop. */
#include "load/driver.h"

#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/clock.h"
#include "net/http.h"
#include "openai/stream.h"

struct driver;

/* One request in flight. */
struct slot {
    struct driver *d;
    struct http_xfer *x;        /* NULL when idle */
    struct req_record *rec;     /* not owned */
    struct req_record warm;     /* the record of a warm-up request */
    struct stream st;
    struct curl_slist *headers; /* common headers + X-Request-Id */
    char *body;
};

struct driver {
    const struct driver_cfg *cfg;
    struct driver_result *out;
    struct event_base *base;
    struct http_client *http;
    struct slot *slots;
    long next_seq;              /* next request to send, warm-ups first */
    long done;                  /* requests finished, warm-ups included */
    bool stopping;
    struct event *sigint, *sigterm, *grace, *progress;
    int64_t t0;
};

static long total(const struct driver *d)
{
    return d->cfg->warmup + d->cfg->num_prompts;
}

static void on_headers(void *ud, int64_t t, long status)
{
    struct slot *s = ud;
    stream_headers(&s->st, t, status);
}

static void on_body(void *ud, int64_t t, const char *p, size_t n)
{
    struct slot *s = ud;
    stream_feed(&s->st, t, p, n);
}

static enum fail_kind fail_from_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:       return FAIL_CONNECT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return FAIL_DNS;
    case CURLE_OPERATION_TIMEDOUT:    return FAIL_TIMEOUT;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:           return FAIL_TRUNCATED;
    default:                          return FAIL_OTHER;
    }
}

static void launch(struct driver *d, struct slot *s);

/* Ends the slot's request: frees its transfer state, hands the record on. */
static void finish_slot(struct driver *d, struct slot *s)
{
    stream_free(&s->st);
    curl_slist_free_all(s->headers);
    free(s->body);
    s->headers = NULL;
    s->body = NULL;
    s->x = NULL;
    d->done++;
    if (s->rec->warmup && s->rec->fail != FAIL_NONE)
        d->out->warmup_failed++;
    if (d->cfg->on_record)
        d->cfg->on_record(d->cfg->ud, s->rec);
    if (s->rec->warmup)
        record_free(&s->warm);
}

static void maybe_stop_loop(struct driver *d)
{
    if (d->done == total(d) || (d->stopping && http_in_flight(d->http) == 0))
        event_base_loopbreak(d->base);
}

static void on_done(void *ud, int64_t t, CURLcode rc, const char *err)
{
    struct slot *s = ud;
    struct driver *d = s->d;
    if (rc == CURLE_OK)
        stream_finish(&s->st, t);
    else if (s->rec->fail == FAIL_NONE && !s->rec->done_seen)
        record_fail(s->rec, fail_from_curl(rc), "%s", err);
    if (s->rec->fail != FAIL_NONE && !s->rec->t_end)
        s->rec->t_end = t;
    finish_slot(d, s);
    /* warm-ups drain completely before the first measured request is sent */
    bool warm_left = d->next_seq <= d->cfg->warmup && d->done < d->cfg->warmup;
    if (!d->stopping && d->next_seq < total(d) && !warm_left) {
        if (d->next_seq == d->cfg->warmup)  /* start the measured phase at full concurrency */
            for (int i = 0; i < d->cfg->concurrency && d->next_seq < total(d); i++)
                if (!d->slots[i].x)
                    launch(d, &d->slots[i]);
        if (!s->x && d->next_seq < total(d))
            launch(d, s);
    }
    maybe_stop_loop(d);
}

static const struct http_handlers handlers = {on_headers, on_body, on_done};

static void launch(struct driver *d, struct slot *s)
{
    const struct driver_cfg *c = d->cfg;
    long seq = d->next_seq++;
    bool warm = seq < c->warmup;
    if (warm) {
        s->rec = &s->warm;
        record_init(s->rec, (int)seq, true, c->planned_prompt_tokens, c->max_tokens);
    } else {
        s->rec = &d->out->records[seq - c->warmup];
        d->out->n_started++;
    }
    stream_init(&s->st, s->rec);
    for (const struct curl_slist *h = c->headers; h; h = h->next)
        s->headers = curl_slist_append(s->headers, h->data);
    char id[64];
    snprintf(id, sizeof id, "X-Request-Id: anvil-%s-%ld", warm ? "warmup" : "req", warm ? seq : seq - c->warmup);
    s->headers = curl_slist_append(s->headers, id);
    s->headers = curl_slist_append(s->headers, "Content-Type: application/json");
    s->headers = curl_slist_append(s->headers, "Expect:");
    s->body = c->make_body(c->ud, seq);
    struct http_request req = {
        .url = c->url, .headers = s->headers, .body = s->body,
        .body_len = s->body ? strlen(s->body) : 0, .connect_timeout_ms = c->connect_timeout_ms,
        .timeout_ms = c->timeout_ms, .idle_timeout_s = c->idle_timeout_s,
    };
    if (s->body && s->headers)
        s->x = http_start(d->http, &req, &handlers, s, &s->rec->t_start);
    if (!s->x) {
        s->rec->t_start = s->rec->t_end = clock_now_ns();
        record_fail(s->rec, FAIL_OTHER, "could not start the request (out of memory?)");
        finish_slot(d, s);
    }
}

static void on_grace_over(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct driver *d = arg;
    int64_t now = clock_now_ns();
    for (int i = 0; i < d->cfg->concurrency; i++) {
        struct slot *s = &d->slots[i];
        if (!s->x)
            continue;
        http_cancel(d->http, s->x);
        record_fail(s->rec, FAIL_CANCELLED, "cancelled by signal %d before the stream ended", d->out->stop_signal);
        s->rec->t_end = now;
        finish_slot(d, s);
    }
    event_base_loopbreak(d->base);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct driver *d = arg;
    if (d->stopping) {              /* a second Ctrl-C: stop waiting */
        on_grace_over(-1, 0, d);
        return;
    }
    d->stopping = true;
    d->out->stop_signal = (int)sig;
    fprintf(stderr, "\nanvil: signal %d: no new requests; waiting up to %.1f s for %zu in flight\n",
            (int)sig, d->cfg->grace_s, http_in_flight(d->http));
    struct timeval tv = {(time_t)d->cfg->grace_s, (long)((d->cfg->grace_s - (long)d->cfg->grace_s) * 1e6)};
    evtimer_add(d->grace, &tv);
    maybe_stop_loop(d);
}

static void on_progress(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct driver *d = arg;
    long n = total(d), done = d->done;
    int width = 30, fill = n ? (int)(width * done / n) : width;
    fprintf(stderr, "\r[%.*s%*s] %ld/%ld done, %zu in flight, %.1f s ", fill,
            "##############################", width - fill, "", done, n,
            http_in_flight(d->http), ns_to_ms(clock_now_ns() - d->t0) / 1000.0);
}

/* Pre-warm: every GET shares one counter; the loop breaks when all ended. */
struct prewarm {
    struct driver *d;
    int left;
};

static void pw_headers(void *ud, int64_t t, long status) { (void)ud; (void)t; (void)status; }
static void pw_body(void *ud, int64_t t, const char *p, size_t n) { (void)ud; (void)t; (void)p; (void)n; }

static void pw_done(void *ud, int64_t t, CURLcode rc, const char *err)
{
    (void)t;
    (void)err;
    struct prewarm *pw = ud;
    if (rc == CURLE_OK)
        pw->d->out->prewarmed++;
    if (--pw->left == 0)
        event_base_loopbreak(pw->d->base);
}

static void prewarm(struct driver *d)
{
    static const struct http_handlers pw_handlers = {pw_headers, pw_body, pw_done};
    struct prewarm pw = {d, 0};
    struct http_request req = {
        .url = d->cfg->prewarm_url, .headers = d->cfg->headers,
        .connect_timeout_ms = d->cfg->connect_timeout_ms, .timeout_ms = 30000,
    };
    int64_t t;
    for (int i = 0; i < d->cfg->concurrency; i++)
        if (http_start(d->http, &req, &pw_handlers, &pw, &t))
            pw.left++;
    if (pw.left)
        event_base_dispatch(d->base);
    while (http_in_flight(d->http))     /* stopped by a signal: drop the rest */
        http_cancel(d->http, http_first(d->http));
}

static int setup(struct driver *d)
{
    const struct driver_cfg *c = d->cfg;
    d->base = event_base_new();
    d->slots = calloc((size_t)c->concurrency, sizeof *d->slots);
    d->out->records = calloc((size_t)(c->num_prompts ? c->num_prompts : 1), sizeof *d->out->records);
    if (!d->base || !d->slots || !d->out->records)
        return -1;
    d->http = http_client_new(d->base, c->concurrency);
    d->sigint = evsignal_new(d->base, SIGINT, on_signal, d);
    d->sigterm = evsignal_new(d->base, SIGTERM, on_signal, d);
    d->grace = evtimer_new(d->base, on_grace_over, d);
    d->progress = event_new(d->base, -1, EV_PERSIST, on_progress, d);
    if (!d->http || !d->sigint || !d->sigterm || !d->grace || !d->progress)
        return -1;
    event_add(d->sigint, NULL);
    event_add(d->sigterm, NULL);
    if (c->progress) {
        struct timeval tv = {0, 250000};
        event_add(d->progress, &tv);
    }
    for (int i = 0; i < c->num_prompts; i++)
        record_init(&d->out->records[i], i, false, c->planned_prompt_tokens, c->max_tokens);
    for (int i = 0; i < c->concurrency; i++)
        d->slots[i].d = d;
    return 0;
}

static void teardown(struct driver *d)
{
    http_client_free(d->http);
    if (d->sigint) event_free(d->sigint);
    if (d->sigterm) event_free(d->sigterm);
    if (d->grace) event_free(d->grace);
    if (d->progress) event_free(d->progress);
    if (d->base) event_base_free(d->base);
    free(d->slots);
}

static double tv_diff_s(struct timeval a, struct timeval b)
{
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_usec - a.tv_usec) / 1e6;
}

int driver_run(const struct driver_cfg *cfg, struct driver_result *out)
{
    memset(out, 0, sizeof *out);
    out->n_records = cfg->num_prompts;
    struct driver d = {.cfg = cfg, .out = out};
    if (setup(&d) != 0) {
        teardown(&d);
        driver_result_free(out);
        return -1;
    }
    if (cfg->prewarm_url)
        prewarm(&d);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    d.t0 = clock_now_ns();
    long first = cfg->warmup ? cfg->warmup : total(&d);
    for (int i = 0; i < cfg->concurrency && d.next_seq < first && !d.stopping; i++)
        launch(&d, &d.slots[i]);
    if (d.done < total(&d) && !d.stopping)
        event_base_dispatch(d.base);
    getrusage(RUSAGE_SELF, &ru1);
    out->cpu_user_s = tv_diff_s(ru0.ru_utime, ru1.ru_utime);
    out->cpu_sys_s = tv_diff_s(ru0.ru_stime, ru1.ru_stime);
    if (cfg->progress) {
        on_progress(-1, 0, &d);
        fputc('\n', stderr);
    }
    teardown(&d);
    return 0;
}

void driver_result_free(struct driver_result *r)
{
    for (int i = 0; r->records && i < r->n_records; i++)
        record_free(&r->records[i]);
    free(r->records);
    r->records = NULL;
}
