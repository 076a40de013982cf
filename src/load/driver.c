/* driver.c — closed- and open-loop load on one event loop. */
#include "load/driver.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/clock.h"
#include "load/arrivals.h"
#include "load/sampler.h"
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
    struct event *idle;         /* fires when the server has been silent for idle_timeout_s */
    long seq;                   /* the request it carries */
};

struct driver {
    const struct driver_cfg *cfg;
    struct driver_result *out;
    struct event_base *base;
    struct http_client *http;
    struct slot *slots;
    int n_slots;
    int *free_slots, n_free;    /* stack of idle slot indexes */
    int64_t *due;               /* open loop: offset of measured request i from t_measure */
    long next_seq;              /* next request to send, warm-ups first */
    long arrived;               /* requests due so far (sendable), warm-ups included */
    long done;                  /* requests finished, warm-ups included */
    long failed, out_tokens;    /* of them failed; output tokens they carried (progress line) */
    /* With cfg->follows: when each request (seq) ended (0 = not yet); the
     * request held back until it ends (follower + 1, 0 = none); held
     * requests whose request ended, in the order they became sendable. */
    int64_t *ended_ns;
    long *follower;
    long *ready, ready_head, ready_tail;
    bool stopping;
    bool answered;              /* some reply's headers arrived: the server was there */
    struct server_gone streak;  /* connection failures since the last reply */
    struct event *sigint, *sigterm, *grace, *progress, *arrival, *window, *window_open;
    /* the lag probe, first of the samplers; the runner with cfg's after it */
    struct sampler lag;
    size_t lag_cap;
    struct sampler **sampler_list;
    struct sampler_runner *samplers;
    bool window_opened;         /* the window-start boundary was given to the samplers */
    int64_t last_measured_end;  /* when the last measured request to end ended */
    int64_t t0, t_measure;      /* loop start; start of the measured phase */
};

static long total(const struct driver *d)
{
    return d->cfg->warmup + d->cfg->num_prompts;
}

static bool open_loop(const struct driver *d)
{
    return !isinf(d->cfg->request_rate);
}

/* Re-arms the slot's idle timer: any byte from the server resets it. */
static void touch(struct slot *s)
{
    double t = s->d->cfg->idle_timeout_s;
    if (t <= 0)
        return;
    struct timeval tv = s_to_timeval(t);
    evtimer_add(s->idle, &tv);
}

static void on_headers(void *ud, int64_t t, long status)
{
    struct slot *s = ud;
    touch(s);
    s->d->answered = true;
    s->d->streak = (struct server_gone){0};
    stream_headers(&s->st, t, status);
}

static void on_content_type(void *ud, const char *ct)
{
    struct slot *s = ud;
    stream_content_type(&s->st, ct);
}

static void on_body(void *ud, int64_t t, const char *p, size_t n)
{
    struct slot *s = ud;
    touch(s);
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

static void begin_measured(struct driver *d);

static void maybe_stop_loop(struct driver *d)
{
    if (d->done == total(d) || (d->stopping && http_in_flight(d->http) == 0))
        event_base_loopbreak(d->base);
}

/* The samplers' window-start boundary at t (once). */
static void open_window(struct driver *d, int64_t t)
{
    if (d->window_opened)
        return;
    d->window_opened = true;
    d->out->phase_ns[SAMPLER_WINDOW_START] = t;
    sampler_runner_phase(d->samplers, SAMPLER_WINDOW_START, t);
}

static void note_failure(struct driver *d, const struct req_record *r);

/* Ends the slot's request: frees its transfer state, hands the record on,
 * returns the slot to the pool. */
static void finish_slot(struct driver *d, struct slot *s)
{
    evtimer_del(s->idle);
    if (d->cfg->secret)
        record_redact(s->rec, d->cfg->secret);
    stream_free(&s->st);
    curl_slist_free_all(s->headers);
    free(s->body);
    s->headers = NULL;
    s->body = NULL;
    s->x = NULL;
    d->done++;
    d->failed += s->rec->fail != FAIL_NONE;
    d->out_tokens += s->rec->completion_tokens >= 0 ? s->rec->completion_tokens : (long)s->rec->n_chunks;
    if (s->rec != &s->warm && s->rec->t_end > d->last_measured_end)
        d->last_measured_end = s->rec->t_end;
    if (d->ended_ns) {
        d->ended_ns[s->seq] = clock_now_ns();
        if (d->follower[s->seq])
            d->ready[d->ready_tail++] = d->follower[s->seq] - 1;
    }
    if (s->rec == &s->warm && s->rec->fail != FAIL_NONE)    /* a --warmup request */
        d->out->warmup_failed++;
    note_failure(d, s->rec);
    if (d->cfg->on_record)
        d->cfg->on_record(d->cfg->ud, s->rec);
    bool warm = s->rec == &s->warm;
    if (warm)
        record_free(&s->warm);
    d->free_slots[d->n_free++] = (int)(s - d->slots);
    if (warm && d->done == d->cfg->warmup && !d->stopping)
        begin_measured(d);
}

static const struct http_handlers handlers;

/* When the request seq follows ended (0 = not yet), or -1 when it follows
 * none; *p gets the one it follows. */
static int64_t followed_end(const struct driver *d, long seq, long *p)
{
    *p = d->cfg->follows ? d->cfg->follows(d->cfg->ud, seq) : -1;
    return *p >= 0 ? d->ended_ns[*p] : -1;
}

static void launch(struct driver *d, struct slot *s, long seq)
{
    const struct driver_cfg *c = d->cfg;
    s->seq = seq;
    bool warm = seq < c->warmup;
    long planned = -1, max_tokens = -1;
    s->body = c->make_body(c->ud, seq, &planned, &max_tokens);
    if (warm) {
        s->rec = &s->warm;
        record_init(s->rec, (int)seq, true, planned, max_tokens);
    } else {
        s->rec = &d->out->records[seq - c->warmup];
        /* duration mode: sent before the window opens = warm-up, kept for its tokens */
        bool early = c->duration_s > 0 && clock_now_ns() < d->out->window_start;
        record_init(s->rec, (int)(seq - c->warmup), early, planned, max_tokens);
    }
    stream_init(&s->st, s->rec);
    for (const struct curl_slist *h = c->headers; h; h = h->next)
        s->headers = curl_slist_append(s->headers, h->data);
    char id[64];
    snprintf(id, sizeof id, "X-Request-Id: anvil-%s-%ld", warm ? "warmup" : "req", warm ? seq : seq - c->warmup);
    s->headers = curl_slist_append(s->headers, id);
    s->headers = curl_slist_append(s->headers, "Content-Type: application/json");
    s->headers = curl_slist_append(s->headers, "Expect:");
    struct http_request req = {
        .url = c->url, .headers = s->headers, .body = s->body,
        .body_len = s->body ? strlen(s->body) : 0, .connect_timeout_ms = c->connect_timeout_ms,
        .timeout_ms = c->timeout_ms,
    };
    if (s->body && s->headers)
        s->x = http_start(d->http, &req, &handlers, s, &s->rec->t_start);
    if (s->x)
        touch(s);
    if (!s->x) {
        s->rec->t_start = s->rec->t_end = clock_now_ns();
        record_fail(s->rec, FAIL_OTHER, "could not start the request (out of memory?)");
    }
    if (!warm && c->duration_s <= 0)    /* no window: it opens with the first measured send */
        open_window(d, s->rec->t_start);
    bool scheduled = !warm && open_loop(d);
    /* a held turn was due no earlier than the end of the turn before it */
    long p;
    int64_t after = followed_end(d, seq, &p), due = scheduled ? d->t_measure + d->due[seq - c->warmup] : 0;
    s->rec->t_scheduled = scheduled ? (after > due ? after : due) : s->rec->t_start;
    if (!s->x)
        finish_slot(d, s);
}

/* The next request to send, or -1: first a held turn whose previous turn
 * has ended (in the order they ended), else the next due request — held
 * instead when the turn before it is still running. Warm-ups drain
 * completely before the measured phase begins. */
static long next_sendable(struct driver *d)
{
    if (d->ready_head < d->ready_tail)
        return d->ready[d->ready_head++];
    while (d->next_seq < d->arrived) {
        if (d->next_seq == d->cfg->warmup && d->done < d->cfg->warmup)
            return -1;
        long seq = d->next_seq++, p;
        if (followed_end(d, seq, &p) != 0)
            return seq;
        d->follower[p] = seq + 1;
    }
    return -1;
}

/* Sends every sendable request a free slot allows. */
static void pump(struct driver *d)
{
    long seq;
    while (!d->stopping && d->n_free > 0 && (seq = next_sendable(d)) >= 0)
        launch(d, &d->slots[d->free_slots[--d->n_free]], seq);
}

static void schedule_next_arrival(struct driver *d);

/* The measured phase begins: closed loop makes every request due at once,
 * open loop starts the arrival clock. */
static void begin_measured(struct driver *d)
{
    d->t_measure = clock_now_ns();
    if (d->cfg->duration_s > 0) {
        double until = d->cfg->warmup_s + d->cfg->duration_s;
        d->out->window_start = d->t_measure + (int64_t)(d->cfg->warmup_s * 1e9);
        d->out->window_end = d->t_measure + (int64_t)(until * 1e9);
        /* timers count from the loop pass's cached time, which may be a
         * whole pass of callbacks before t_measure: count from now */
        event_base_update_cache_time(d->base);
        struct timeval tv = s_to_timeval(until);
        evtimer_add(d->window, &tv);
        if (d->cfg->warmup_s > 0) {
            /* 2 µs more: the timer and libevent's clock are truncated to the
             * µs, and the window-start sample is never taken before its instant */
            tv = ns_to_timeval(d->out->window_start - d->t_measure + 2000);
            evtimer_add(d->window_open, &tv);
        }
        else {
            open_window(d, d->out->window_start);
        }
    }
    if (!open_loop(d)) {
        d->arrived = total(d);
        return;
    }
    schedule_next_arrival(d);
}

static void on_arrival(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct driver *d = arg;
    int64_t now = clock_now_ns();
    while (d->arrived < total(d) && d->t_measure + d->due[d->arrived - d->cfg->warmup] <= now)
        d->arrived++;
    pump(d);
    schedule_next_arrival(d);
    maybe_stop_loop(d);     /* a launch that failed at once may have ended the run */
}

static void schedule_next_arrival(struct driver *d)
{
    if (d->arrived >= total(d) || d->stopping)
        return;
    int64_t wait = d->t_measure + d->due[d->arrived - d->cfg->warmup] - clock_now_ns();
    if (wait < 0)
        wait = 0;
    struct timeval tv = ns_to_timeval(wait);
    evtimer_add(d->arrival, &tv);
}

static void on_done(void *ud, int64_t t, CURLcode rc, const char *err)
{
    struct slot *s = ud;
    struct driver *d = s->d;
    /* a stream that reached [DONE], or an HTTP error reply, is judged on what
     * arrived even when the transport failed afterwards (e.g. a reset) */
    if (rc == CURLE_OK || s->rec->done_seen || s->rec->http_status >= 400)
        stream_finish(&s->st, t);
    else
        record_fail(s->rec, fail_from_curl(rc), "%s", err);
    if (s->rec->fail != FAIL_NONE && !s->rec->t_end)
        s->rec->t_end = t;
    finish_slot(d, s);
    pump(d);
    maybe_stop_loop(d);
}

static const struct http_handlers handlers = {on_headers, on_body, on_done, on_content_type};

/* The server said nothing for idle_timeout_s: fail the request. */
static void on_idle(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct slot *s = arg;
    struct driver *d = s->d;
    if (!s->x)
        return;
    http_cancel(d->http, s->x);
    record_fail(s->rec, FAIL_TIMEOUT, "idle timeout: no byte from the server for %g s (%s)",
                d->cfg->idle_timeout_s, s->rec->t_headers ? "mid-stream" : "waiting for the response");
    s->rec->t_end = clock_now_ns();
    finish_slot(d, s);
    pump(d);
    maybe_stop_loop(d);
}

/* Ends every request still in flight now and stops the loop: cut (kept,
 * marked incomplete) when the window closed, else cancelled by a signal. */
static void end_in_flight(struct driver *d, bool cut)
{
    int64_t now = clock_now_ns();
    for (int i = 0; i < d->n_slots; i++) {
        struct slot *s = &d->slots[i];
        if (!s->x)
            continue;
        http_cancel(d->http, s->x);
        if (cut)
            s->rec->cut = true;
        else if (d->out->stop_signal)
            record_fail(s->rec, FAIL_CANCELLED, "cancelled by signal %d before the stream ended",
                        d->out->stop_signal);
        else
            record_fail(s->rec, FAIL_CANCELLED, "cancelled: the server went away before the stream ended");
        s->rec->t_end = now;
        finish_slot(d, s);
    }
    event_base_loopbreak(d->base);
}

/* Duration mode: the window opened (the samplers' boundary; requests judge
 * it by their own send time). */
static void on_window_open(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct driver *d = arg;
    open_window(d, d->out->window_start);
}

/* Duration mode: the window closed. Nothing more is sent; what still runs
 * is cut — kept, marked incomplete, its tokens so far counted by time. */
static void on_window_end(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct driver *d = arg;
    struct driver_result *o = d->out;
    int64_t now = clock_now_ns();
    if (o->window_end > now)    /* the timer's µs rounding: the window ends when the load stops */
        o->window_end = now;
    open_window(d, o->window_start);
    o->phase_ns[SAMPLER_WINDOW_END] = o->window_end;
    sampler_runner_phase(d->samplers, SAMPLER_WINDOW_END, o->window_end);
    d->stopping = true;
    evtimer_del(d->arrival);
    end_in_flight(d, true);
}

static void on_grace_over(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    end_in_flight(arg, false);
}

/* No new requests; those in flight get the grace period to end. */
static void stop_sending(struct driver *d)
{
    d->stopping = true;
    evtimer_del(d->arrival);
    struct timeval tv = s_to_timeval(d->cfg->grace_s);
    evtimer_add(d->grace, &tv);
}

/* Counts a request's end towards the server-gone streak: refused
 * connections and cut streams since the last reply. */
static void note_failure(struct driver *d, const struct req_record *r)
{
    if (!d->answered || (r->fail != FAIL_CONNECT && r->fail != FAIL_TRUNCATED) || d->out->server_gone.gone)
        return;
    struct server_gone *g = &d->streak;
    if (!g->connect_failures && !g->truncated)
        g->first_failure_ns = r->t_end;
    g->connect_failures += r->fail == FAIL_CONNECT;
    g->truncated += r->fail == FAIL_TRUNCATED;
    if (g->connect_failures < DRIVER_GONE_AFTER)
        return;
    g->gone = true;
    d->out->server_gone = *g;
    fprintf(stderr, "%sanvil: the server went away: %d connections refused in a row (first failure "
            "%.3f s into the run); no new requests\n", d->cfg->progress ? "\n" : "",
            g->connect_failures, (double)(g->first_failure_ns - d->t0) / 1e9);
    if (!d->stopping)
        stop_sending(d);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct driver *d = arg;
    if (d->stopping) {              /* a second Ctrl-C: stop waiting */
        fprintf(stderr, "anvil: signal %d again: cancelling %zu in flight\n", (int)sig, http_in_flight(d->http));
        on_grace_over(-1, 0, d);
        return;
    }
    d->out->stop_signal = (int)sig;
    fprintf(stderr, "%sanvil: signal %d: no new requests; waiting up to %.1f s for %zu in flight\n",
            d->cfg->progress ? "\n" : "",
            (int)sig, d->cfg->grace_s, http_in_flight(d->http));
    stop_sending(d);
    maybe_stop_loop(d);
}

static void on_progress(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct driver *d = arg;
    long n = total(d), done = d->done;
    int width = 30, fill = n ? (int)(width * done / n) : width;
    double s = ns_to_ms(clock_now_ns() - d->t0) / 1000.0;
    fprintf(stderr, "\r[%.*s%*s] %ld/%ld done, %ld failed, %zu in flight, %.0f tok/s, %.1f s ", fill,
            "##############################", width - fill, "", done, n, d->failed,
            http_in_flight(d->http), s > 0 ? (double)d->out_tokens / s : 0, s);
}

/* The lag probe, an inline sampler due every DRIVER_LAG_PROBE_NS: how late
 * its timer runs is how long the loop was busy elsewhere — time any byte
 * arriving then waited for its timestamp. One sample per periodic tick
 * (boundaries are not timer slots), appended to driver_result.loop_lag_ms. */
static void *lag_sample(void *ud, const struct sampler_tick *t)
{
    struct driver *d = ud;
    struct driver_result *o = d->out;
    if (t->phase != SAMPLER_PERIODIC)
        return NULL;
    if (o->n_loop_lag == d->lag_cap) {
        size_t cap = d->lag_cap ? d->lag_cap * 2 : 1024;
        double *p = realloc(o->loop_lag_ms, cap * sizeof *p);
        if (!p)
            return NULL;    /* drop the sample rather than lose the run */
        o->loop_lag_ms = p;
        d->lag_cap = cap;
    }
    o->loop_lag_ms[o->n_loop_lag++] = ns_to_ms(t->t_taken - t->t_due);
    return NULL;
}

/* The runner: the lag probe, then cfg's samplers in their order. */
static int make_samplers(struct driver *d)
{
    const struct driver_cfg *c = d->cfg;
    d->lag = (struct sampler){.name = "loop_lag", .period_ns = DRIVER_LAG_PROBE_NS, .sample = lag_sample,
                              .ud = d};
    int n = 1 + (c->n_samplers > 0 ? c->n_samplers : 0);
    if (!(d->sampler_list = calloc((size_t)n, sizeof *d->sampler_list)))
        return -1;
    d->sampler_list[0] = &d->lag;
    for (int i = 1; i < n; i++)
        d->sampler_list[i] = c->samplers[i - 1];
    d->samplers = sampler_runner_new(d->base, d->sampler_list, n);
    return d->samplers ? 0 : -1;
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
    for (int i = 0; i < d->n_slots && i < 1024; i++)
        if (http_start(d->http, &req, &pw_handlers, &pw, &t))
            pw.left++;
    if (pw.left)
        event_base_dispatch(d->base);
    while (http_in_flight(d->http))     /* stopped by a signal: drop the rest */
        http_cancel(d->http, http_first(d->http));
}

static int alloc_state(struct driver *d)
{
    const struct driver_cfg *c = d->cfg;
    long cap = c->concurrency > 0 ? c->concurrency : c->duration_s > 0 ? 1024 : total(d);
    d->n_slots = (int)(cap < total(d) ? cap : total(d));
    if (d->n_slots < 1)
        d->n_slots = 1;
    d->slots = calloc((size_t)d->n_slots, sizeof *d->slots);
    d->free_slots = calloc((size_t)d->n_slots, sizeof *d->free_slots);
    d->out->records = calloc((size_t)(c->num_prompts ? c->num_prompts : 1), sizeof *d->out->records);
    d->due = calloc((size_t)(c->num_prompts ? c->num_prompts : 1), sizeof *d->due);
    if (!d->slots || !d->free_slots || !d->out->records || !d->due)
        return -1;
    if (c->follows && (!(d->ended_ns = calloc((size_t)total(d), sizeof *d->ended_ns)) ||
                       !(d->follower = calloc((size_t)total(d), sizeof *d->follower)) ||
                       !(d->ready = calloc((size_t)total(d), sizeof *d->ready))))
        return -1;
    if (open_loop(d) && arrivals_schedule(c->request_rate, c->burstiness, c->seed, c->duration_s <= 0,
                                          d->due, (size_t)c->num_prompts) != 0)
        return -1;
    for (int i = d->n_slots - 1; i >= 0; i--) {
        d->slots[i].d = d;
        d->free_slots[d->n_free++] = i;
    }
    return 0;   /* records are initialized as they are sent (duration mode sends an unknown number) */
}

static int make_idle_timers(struct driver *d)
{
    for (int i = 0; i < d->n_slots; i++)
        if (!(d->slots[i].idle = evtimer_new(d->base, on_idle, &d->slots[i])))
            return -1;
    return 0;
}

static int setup(struct driver *d)
{
    /* arrivals are due to the µs: epoll's millisecond timeouts would make
     * every open-loop send up to 1 ms late, so ask for a timerfd */
    struct event_config *ec = event_config_new();
    if (ec) {
        event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
        d->base = event_base_new_with_config(ec);
        event_config_free(ec);
    }
    if (!d->base || alloc_state(d) != 0 || make_idle_timers(d) != 0)
        return -1;
    d->http = http_client_new(d->base, d->n_slots);
    d->sigint = evsignal_new(d->base, SIGINT, on_signal, d);
    d->sigterm = evsignal_new(d->base, SIGTERM, on_signal, d);
    d->grace = evtimer_new(d->base, on_grace_over, d);
    d->arrival = evtimer_new(d->base, on_arrival, d);
    d->progress = event_new(d->base, -1, EV_PERSIST, on_progress, d);
    d->window = evtimer_new(d->base, on_window_end, d);
    d->window_open = evtimer_new(d->base, on_window_open, d);
    if (!d->http || !d->sigint || !d->sigterm || !d->grace || !d->arrival || !d->progress || !d->window ||
        !d->window_open || make_samplers(d) != 0)
        return -1;
    event_add(d->sigint, NULL);
    event_add(d->sigterm, NULL);
    if (d->cfg->progress) {
        struct timeval tv = {0, 250000};
        event_add(d->progress, &tv);
    }
    return 0;
}

static void teardown(struct driver *d)
{
    sampler_runner_free(d->samplers);
    free(d->sampler_list);
    http_client_free(d->http);
    struct event *evs[] = {d->sigint, d->sigterm, d->grace, d->arrival, d->progress, d->window,
                           d->window_open};
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        if (evs[i])
            event_free(evs[i]);
    for (int i = 0; d->slots && i < d->n_slots; i++)
        if (d->slots[i].idle)
            event_free(d->slots[i].idle);
    if (d->base)
        event_base_free(d->base);
    free(d->slots);
    free(d->free_slots);
    free(d->due);
    free(d->ended_ns);
    free(d->follower);
    free(d->ready);
}

static double tv_diff_s(struct timeval a, struct timeval b)
{
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_usec - a.tv_usec) / 1e6;
}

static void achieved_rate(struct driver_result *out)
{
    int64_t first = 0, last = 0;
    int n = 0;
    for (int i = 0; i < out->n_records; i++) {
        int64_t t = out->records[i].t_start;
        if (!t)
            continue;
        n++;
        if (!first || t < first)
            first = t;
        if (t > last)
            last = t;
    }
    out->achieved_rate = n > 1 && last > first ? (n - 1) / ((double)(last - first) / 1e9) : NAN;
}

/* The loop has stopped at end: the boundaries the run did not reach (a
 * window never opened: stopped during warm-up; a window without a timer:
 * it ends when the last measured request ended). */
static void end_phases(struct driver *d, int64_t end)
{
    struct driver_result *o = d->out;
    open_window(d, d->cfg->duration_s > 0 && o->window_start < end ? o->window_start : end);
    if (!o->phase_ns[SAMPLER_WINDOW_END]) {
        int64_t t = d->cfg->duration_s > 0 ? o->window_end : d->last_measured_end;
        if (t < o->phase_ns[SAMPLER_WINDOW_START])     /* none measured ended */
            t = o->phase_ns[SAMPLER_WINDOW_START];
        o->phase_ns[SAMPLER_WINDOW_END] = t;
        sampler_runner_phase(d->samplers, SAMPLER_WINDOW_END, t);
    }
    o->phase_ns[SAMPLER_AFTER_LAST] = end;
}

/* After-last boundary, stop and bounded join; copies cfg's samplers'
 * reports into the result. */
static void stop_samplers(struct driver *d, int64_t end)
{
    const struct driver_cfg *c = d->cfg;
    int64_t wait = c->sampler_stop_s > 0 ? (int64_t)(c->sampler_stop_s * 1e9) : DRIVER_SAMPLER_STOP_NS;
    sampler_runner_stop(d->samplers, end, wait);
    int n = c->n_samplers > 0 ? c->n_samplers : 0;
    if (!n || !(d->out->sampler_reports = calloc((size_t)n, sizeof *d->out->sampler_reports)))
        return;
    d->out->n_sampler_reports = n;
    for (int i = 0; i < n; i++)
        d->out->sampler_reports[i] = *sampler_runner_report(d->samplers, i + 1);
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
    d.t0 = out->phase_ns[SAMPLER_BEFORE_WARMUP] = clock_now_ns();
    sampler_runner_start(d.samplers, d.t0);
    if (!d.stopping) {
        if (cfg->warmup)
            d.arrived = cfg->warmup;
        else
            begin_measured(&d);
        pump(&d);
        if (d.done < total(&d))
            event_base_dispatch(d.base);
    }
    int64_t end = clock_now_ns();
    if (out->window_end > end)      /* stopped early (request cap or signal): the window ends here */
        out->window_end = end;
    end_phases(&d, end);
    getrusage(RUSAGE_SELF, &ru1);
    out->cpu_user_s = tv_diff_s(ru0.ru_utime, ru1.ru_utime);
    out->cpu_sys_s = tv_diff_s(ru0.ru_stime, ru1.ru_stime);
    stop_samplers(&d, end);
    struct http_rx_counts rx = http_rx_counts(d.http);
    out->stamps_kernel = rx.kernel;
    out->stamps_clock = rx.clock;
    achieved_rate(out);
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
    free(r->loop_lag_ms);
    r->loop_lag_ms = NULL;
    free(r->sampler_reports);
    r->sampler_reports = NULL;
}
