/* driver.c — closed- and open-loop load on one event loop per thread.
 *
 * Each loop (struct loop) owns its event base, curl multi handle, slots and
 * records; the run's shared state (struct shared) is under one mutex taken
 * per request — to claim the next request of the plan, when its headers
 * arrive, when it ends — never per event. A loop that needs another to act
 * (the measured phase began, stop, the last request ended) writes its
 * eventfd; the woken loop reads the shared state and reacts. */
#include "load/driver.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/clock.h"
#include "core/rand.h"
#include "core/stop.h"
#include "core/vec.h"
#include "load/plan.h"
#include "load/progress.h"
#include "load/sampler.h"
#include "net/http.h"
#include "openai/stream.h"

struct loop;

/* One request in flight. */
struct slot {
    struct loop *l;
    struct http_xfer *x;        /* NULL when idle */
    struct req_record *rec;     /* not owned */
    struct req_record warm;     /* the record of a warm-up request */
    struct req_record own;      /* a measured request's record with driver_cfg.drop_records */
    struct stream st;
    struct curl_slist *headers; /* common headers + X-Request-Id */
    char *body;
    struct event *idle;         /* fires when the server may have been silent for idle_timeout_s */
    int64_t last_rx;            /* arrival time of the last byte (or the send) */
    long seq;                   /* the request it carries */
    long shown;                 /* output tokens of it counted into loop.streamed (progress line) */
};

/* Why sending stopped, in rising order of severity. */
enum stop {
    STOP_NONE,
    STOP_GRACE,     /* a signal or the server gone: in-flight requests get the grace period */
    STOP_CUT,       /* duration mode: the window closed, what runs is cut */
    STOP_CANCEL,    /* the grace period is over or a second signal: cancel what runs */
};

/* The run's state shared by the loops; every field under mu. */
struct shared {
    pthread_mutex_t mu;
    const struct driver_cfg *cfg;
    struct driver_result *out;
    struct load_plan plan;
    char **bodies;              /* prebuild_bodies: body of each seq until sent (then NULL) */
    long *planned, *max_tokens; /* prebuild_bodies: their planned prompt tokens and max_tokens */
    long n_prebuilt;            /* bodies[0 .. n_prebuilt) were built; later seqs are built when sent */
    struct loop *loops;
    int n_loops;
    long next_seq;              /* next request of the plan not yet claimed, warm-ups first */
    long arrived;               /* requests due so far (sendable), warm-ups included */
    long done;                  /* requests finished, warm-ups included */
    bool client_limit;          /* a request failed on this machine's own limit (FAIL_CLIENT) */
    long failed, out_tokens;    /* of them failed; output tokens they carried (progress line) */
    long in_flight;             /* claimed and not yet ended, over every loop */
    int streams_on;             /* closed loop with a ramp: streams started so far (plan.stream_start_ns) */
    /* With follows / waits_for (else all NULL): of the requests each (seq)
     * waits for, how many have not ended; when it may go (the last of them
     * ended, plus its think time); held requests that may go now, in the
     * order they became sendable; held requests whose think time runs, a
     * min-heap on go_ns. */
    int *pending;
    int64_t *go_ns;
    long *ready, ready_head, ready_tail;
    long *thinking, n_thinking;
    bool measuring;             /* the measured phase has begun (t_measure set) */
    enum stop stop;
    bool answered;              /* some reply's headers arrived: the server was there */
    struct server_gone streak;  /* connection failures since the last reply */
    /* The stall clock (driver_cfg.stall_timeout_s; silence_locked): when
     * requests last went in flight after none were; the silence of earlier
     * in-flight spans with no byte since, and the newest byte when it was
     * summed (a byte after it voids the sum). */
    int64_t busy_since, silent_before, silent_mark;
    int64_t first_measured_start;   /* t_start of the first measured send (0 = none yet) */
    _Atomic int64_t first_counted_start;   /* the one given to cfg->on_first_send (0 = none yet):
                                               read without the lock once set */
    int64_t last_measured_end;  /* when the last measured request to end ended */
    int64_t first_sent, last_sent;  /* the first and last start of a measured request sent (driver_result.sent) */
    int64_t t0, t_measure;      /* run start; start of the measured phase */
    uint64_t trace_key;         /* driver_cfg.traceparent: this run's key of the trace ids, from the kernel */
    /* the start: loops pre-warmed so far, and the go of thread 0 (t0 set) */
    pthread_cond_t cv;
    int n_ready;
    bool go;
};

/* One measuring loop and what it owns. */
struct loop {
    struct shared *sh;
    int id;
    pthread_t thread;
    bool thread_started;
    struct event_base *base;
    struct http_client *http;
    struct slot *slots;
    int n_slots;
    int *free_slots, n_free;    /* stack of idle slot indexes */
    struct req_record *records; /* this loop's measured records, in the order it sent them */
    long n_records;
    long cursor;                /* open loop: next plan entry this loop's arrival timer may wait for */
    bool armed;                 /* the measured phase's timers are set */
    bool stopping;              /* no new sends from this loop */
    bool window_opened;         /* thread 0: the window-start boundary was given to the samplers */
    bool window_ended;          /* thread 0: the window-end boundary was given */
    int wake_fd;
    struct event *wake, *sigint, *sigterm, *sighup, *grace, *progress, *arrival, *window, *window_open, *gate;
    struct event *think;        /* a held request's think time ends; NULL when none waits */
    struct event *stall;        /* thread 0, with stall_timeout_s: the stall check */
    /* When the newest byte (headers or body) of any of this loop's requests
     * arrived: written by this loop on every read, read by any loop's stall
     * check, so atomic (a plain store on the hot path). */
    _Atomic int64_t last_rx;
    /* Output tokens as they stream, for the progress line's tok/s: added
     * by this loop's reads, summed by thread 0's progress tick. */
    _Atomic long streamed;
    long shown_tokens;          /* thread 0: the sum at the last progress tick */
    int progress_len;           /* thread 0: the length of the line drawn last */
    int64_t shown_at;           /* thread 0: when that tick ran */
    struct event *more;         /* pump goes on after the loop looked at its sockets (DRIVER_SEND_BATCH) */
    /* the lag probe, first of the samplers; the runner with cfg's after it on thread 0 */
    struct sampler lag;
    double *lag_ms;
    size_t n_lag, lag_cap;
    struct sampler **sampler_list;
    struct sampler_runner *samplers;
    int prewarmed;
    /* SSE events read in 1-second bins of CLOCK_MONOTONIC ([k s, (k+1) s)): the end of the bin
     * being counted, its count so far, and the fullest bin closed (driver_loop_stat.peak_events_per_s) */
    int64_t ev_bin_end;
    long ev_count, ev_peak;
};

static long total(const struct shared *sh)
{
    return sh->plan.n;
}

static const struct driver_cfg *cfg_of(const struct loop *l)
{
    return l->sh->cfg;
}

static void lock(struct shared *sh) { pthread_mutex_lock(&sh->mu); }
static void unlock(struct shared *sh) { pthread_mutex_unlock(&sh->mu); }

/* Makes loop l run its reaction to the shared state (react) soon. */
static void wake(struct loop *l)
{
    uint64_t one = 1;
    ssize_t w = write(l->wake_fd, &one, sizeof one);
    (void)w;    /* a full counter already wakes it */
}

static void wake_all(struct shared *sh)
{
    for (int i = 0; i < sh->n_loops; i++)
        wake(&sh->loops[i]);
}

/* Raises the stop to `s` (under the lock) and wakes every loop. */
static void request_stop_locked(struct shared *sh, enum stop s)
{
    if (s > sh->stop)
        sh->stop = s;
    wake_all(sh);
}

static void arm_idle(struct slot *s, int64_t wait_ns)
{
    struct timeval tv = ns_to_timeval(wait_ns);
    evtimer_add(s->idle, &tv);
}

static void on_headers(void *ud, int64_t t, long status)
{
    struct slot *s = ud;
    struct shared *sh = s->l->sh;
    s->last_rx = t;
    atomic_store_explicit(&s->l->last_rx, t, memory_order_relaxed);
    lock(sh);
    sh->answered = true;
    sh->streak = (struct server_gone){0};
    unlock(sh);
    stream_headers(&s->st, t, status);
}

static void on_content_type(void *ud, const char *ct)
{
    struct slot *s = ud;
    stream_content_type(&s->st, ct);
}

/* After [DONE] the protocol says the reply is over: a transfer that has not
 * ended by itself this long after (a server that never closes the chunked
 * body) is ended, the request completed. */
#define DONE_LINGER_NS 200000000L

/* Adds the tokens s's request has streamed since the last read to its
 * loop's count: the server's running usage when it sends one, else chunks. */
static void count_streamed(struct slot *s)
{
    long now = s->rec->completion_tokens >= 0 ? s->rec->completion_tokens : (long)s->rec->n_chunks;
    if (now > s->shown) {
        atomic_fetch_add_explicit(&s->l->streamed, now - s->shown, memory_order_relaxed);
        s->shown = now;
    }
}

/* Counts k SSE events read at t into the loop's 1-second bins. A stamp
 * older than the bin being counted (another socket's read, stamped by the
 * kernel before it) counts into that bin. */
static void count_events(struct loop *l, int64_t t, int k)
{
    if (k <= 0)
        return;
    if (t >= l->ev_bin_end) {   /* a division only when a new second begins */
        if (l->ev_count > l->ev_peak)
            l->ev_peak = l->ev_count;
        l->ev_bin_end = (t / 1000000000 + 1) * 1000000000;
        l->ev_count = 0;
    }
    l->ev_count += k;
}

/* The hot path: one call per read. The idle timer is not re-armed here
 * (an event_add per read); it checks last_rx when it fires. */
static void on_body(void *ud, int64_t t, const char *p, size_t n)
{
    struct slot *s = ud;
    s->last_rx = t;
    atomic_store_explicit(&s->l->last_rx, t, memory_order_relaxed);
    s->st.now_unknown = http_arrival_unknown(s->l->http);   /* not s->x: set once http_start returns */
    s->st.now_shared = http_arrival_shared(s->l->http);
    bool done = s->rec->done_seen;
    int events = s->rec->events;
    stream_feed(&s->st, t, p, n);
    count_events(s->l, t, s->rec->events - events);
    if (s->l->sh->cfg->progress)
        count_streamed(s);
    if (!done && s->rec->done_seen && s->idle)
        arm_idle(s, DONE_LINGER_NS);
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
    case CURLE_OUT_OF_MEMORY:         return FAIL_CLIENT;   /* this machine's limit (net/http.h) */
    case CURLE_TOO_MANY_REDIRECTS:    return FAIL_HTTP;     /* a 3xx reply, not followed */
    case CURLE_BAD_CONTENT_ENCODING:  return FAIL_INVALID;  /* a coding anvil did not ask for */
    default:                          return FAIL_OTHER;
    }
}

static void begin_measured_locked(struct shared *sh);

/* The loop's end: every request ended, or stopping and none in flight
 * anywhere (so no loop ends while another may still hand it work). */
static bool maybe_stop_loop(struct loop *l)
{
    struct shared *sh = l->sh;
    lock(sh);
    bool end = sh->done == total(sh) || (sh->stop != STOP_NONE && sh->in_flight == 0);
    unlock(sh);
    if (end)
        event_base_loopbreak(l->base);
    return end;
}

/* Thread 0: the samplers' window-start boundary at t (once). */
static void open_window(struct loop *l, int64_t t)
{
    if (l->id != 0 || l->window_opened)
        return;
    l->window_opened = true;
    l->sh->out->phase_ns[SAMPLER_WINDOW_START] = t;
    sampler_runner_phase(l->samplers, SAMPLER_WINDOW_START, t);
}

/* Thread 0: the samplers' window-end boundary of duration mode (once). */
static void end_window(struct loop *l)
{
    struct driver_result *o = l->sh->out;
    if (l->id != 0 || l->window_ended)
        return;
    l->window_ended = true;
    lock(l->sh);
    int64_t ws = o->window_start, we = o->window_end;
    unlock(l->sh);
    open_window(l, ws);
    o->phase_ns[SAMPLER_WINDOW_END] = we;
    sampler_runner_phase(l->samplers, SAMPLER_WINDOW_END, we);
}

static void note_failure_locked(struct shared *sh, const struct req_record *r);

/* The think-time heap (sh->thinking, on go_ns): push and pop-min. */
static void think_push_locked(struct shared *sh, long seq)
{
    long i = sh->n_thinking++;
    for (; i > 0 && sh->go_ns[sh->thinking[(i - 1) / 2]] > sh->go_ns[seq]; i = (i - 1) / 2)
        sh->thinking[i] = sh->thinking[(i - 1) / 2];
    sh->thinking[i] = seq;
}

static long think_pop_locked(struct shared *sh)
{
    long top = sh->thinking[0], last = sh->thinking[--sh->n_thinking], i = 0, n = sh->n_thinking;
    for (long c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && sh->go_ns[sh->thinking[c + 1]] < sh->go_ns[sh->thinking[c]])
            c++;
        if (sh->go_ns[sh->thinking[c]] >= sh->go_ns[last])
            break;
        sh->thinking[i] = sh->thinking[c];
    }
    if (n)
        sh->thinking[i] = last;
    return top;
}

/* Under the lock: a held request (d < next_seq) whose waits are over goes
 * now (ready) or when its think time ends (thinking). */
static void hold_or_ready_locked(struct shared *sh, long d, int64_t now)
{
    if (sh->go_ns[d] > now) {
        think_push_locked(sh, d);
        if (sh->n_loops > 1)
            wake_all(sh);   /* every loop arms its think timer */
    } else {
        sh->ready[sh->ready_tail++] = d;
    }
}

/* Under the lock: request seq ended; the requests waiting for it count it,
 * and those held with nothing left to wait for go (now or after their
 * think time). */
static void release_waiters_locked(struct shared *sh, long seq)
{
    int64_t now = clock_now_ns();
    const struct load_plan *p = &sh->plan;
    for (long i = p->waiters_at[seq]; i < p->waiters_at[seq + 1]; i++) {
        long d = p->waiters[i];
        int64_t go = now + p->entries[d].think_ns;
        if (go > sh->go_ns[d])
            sh->go_ns[d] = go;
        if (--sh->pending[d] == 0 && d < sh->next_seq)
            hold_or_ready_locked(sh, d, now);
    }
}

/* The newest byte that arrived on any loop (CLOCK_MONOTONIC ns; 0 none). */
static int64_t newest_rx(const struct shared *sh)
{
    int64_t t = 0;
    for (int i = 0; i < sh->n_loops; i++) {
        int64_t v = atomic_load_explicit(&sh->loops[i].last_rx, memory_order_relaxed);
        if (v > t)
            t = v;
    }
    return t;
}

/* Under the lock: for how long, ns, requests have been in flight with no
 * byte from the server — since the newest byte, counting only time with
 * requests in flight (driver_cfg.stall_timeout_s). */
static int64_t silence_locked(const struct shared *sh, int64_t now)
{
    int64_t rx = newest_rx(sh);
    int64_t silent = rx > sh->silent_mark ? 0 : sh->silent_before;
    int64_t from = rx > sh->busy_since ? rx : sh->busy_since;
    if (sh->in_flight > 0 && now > from)
        silent += now - from;
    return silent;
}

/* Under the lock: the last request in flight ends; its span's silence is
 * kept until a byte arrives (a timed-out request and the next one sent to
 * a server that stopped add up). */
static void keep_silence_locked(struct shared *sh, int64_t now)
{
    sh->silent_before = silence_locked(sh, now);
    sh->silent_mark = newest_rx(sh);
}

/* Under the lock: a measured request that was sent, for the achieved rate. */
static void note_sent_locked(struct shared *sh, int64_t t_start)
{
    struct driver_result *o = sh->out;
    o->sent++;
    if (!sh->first_sent || t_start < sh->first_sent)
        sh->first_sent = t_start;
    if (t_start > sh->last_sent)
        sh->last_sent = t_start;
}

/* The shared half of a request's end (under the lock): counts, multi-turn
 * bookkeeping, the server-gone streak, and the start of the measured phase
 * after the last warm-up. */
static void ended_locked(struct shared *sh, struct slot *s, bool warm)
{
    const struct driver_cfg *c = sh->cfg;
    sh->done++;
    sh->failed += s->rec->fail != FAIL_NONE;
    sh->out_tokens += s->rec->completion_tokens >= 0 ? s->rec->completion_tokens : (long)s->rec->n_chunks;
    if (sh->in_flight == 1)
        keep_silence_locked(sh, clock_now_ns());
    sh->in_flight--;
    if (!warm && s->rec->t_end > sh->last_measured_end)
        sh->last_measured_end = s->rec->t_end;
    if (!warm && s->rec->t_start)
        note_sent_locked(sh, s->rec->t_start);
    if (sh->pending)
        release_waiters_locked(sh, s->seq);
    if (warm && s->rec->fail != FAIL_NONE)
        sh->out->warmup_failed++;
    note_failure_locked(sh, s->rec);
    if (warm && sh->done == c->warmup && sh->stop == STOP_NONE)
        begin_measured_locked(sh);
    if (sh->done == total(sh) || (sh->stop != STOP_NONE && sh->in_flight == 0))
        wake_all(sh);
}

/* Ends the slot's request: frees its transfer state, hands the record on
 * (the caller's on_record, on this loop's thread), returns the slot to the
 * pool. */
static void finish_slot(struct loop *l, struct slot *s)
{
    struct shared *sh = l->sh;
    if (s->idle)
        evtimer_del(s->idle);
    if (sh->cfg->secret)
        record_redact(s->rec, sh->cfg->secret);
    record_scrub(s->rec, sh->cfg->secrets);
    stream_free(&s->st);
    curl_slist_free_all(s->headers);
    free(s->body);
    s->headers = NULL;
    s->body = NULL;
    s->x = NULL;
    bool warm = s->rec == &s->warm;
    lock(sh);
    ended_locked(sh, s, warm);
    unlock(sh);
    if (sh->cfg->live && !s->rec->warmup)
        live_request_ended(sh->cfg->live, s->rec);
    /* the caller's log line is built off the lock: no other loop waits for it */
    if (sh->cfg->on_record)
        sh->cfg->on_record(sh->cfg->ud, l->id, s->rec);
    if (warm)
        record_free(&s->warm);
    else if (sh->cfg->drop_records)
        record_free(&s->own);
    l->free_slots[l->n_free++] = (int)(s - l->slots);
}

static const struct http_handlers handlers;

/* The caller's on_first_send, once: the first request counted as measured
 * (duration mode: the first sent inside the window), before it can end.
 * Later sends see it set without taking the lock. */
static void note_first_send(struct shared *sh, int64_t t)
{
    if (atomic_load_explicit(&sh->first_counted_start, memory_order_acquire))
        return;
    lock(sh);
    if (!atomic_load_explicit(&sh->first_counted_start, memory_order_relaxed)) {
        sh->cfg->on_first_send(sh->cfg->ud, t);
        atomic_store_explicit(&sh->first_counted_start, t, memory_order_release);
    }
    unlock(sh);
}

static void on_idle(evutil_socket_t fd, short what, void *arg);

/* The request's body, planned prompt tokens and max_tokens: prebuilt, or
 * built now. */
static char *take_body(struct shared *sh, long seq, long *planned, long *max_tokens)
{
    const struct driver_cfg *c = sh->cfg;
    if (!sh->bodies || seq >= sh->n_prebuilt)
        return c->make_body(c->ud, seq, planned, max_tokens);
    char *b = sh->bodies[seq];
    sh->bodies[seq] = NULL;     /* each seq is claimed once */
    *planned = sh->planned[seq];
    *max_tokens = sh->max_tokens[seq];
    return b;
}

/* W3C trace context (https://www.w3.org/TR/trace-context/): request seq's
 * trace id into trace_id (32 hex) and its header line into header (cap
 * bytes), "traceparent: 00-TRACE-SPAN-01". Each seq starts splitmix64 from
 * its own state (the run's key and seq, mixed), and splitmix64's first
 * output is a bijection of its state: no two seqs of a run share a trace id. */
static void trace_context(const struct shared *sh, long seq, char trace_id[33], char *header, size_t cap)
{
    uint64_t st = sh->trace_key ^ ((uint64_t)seq * 0xd1342543de82ef95ull);
    uint64_t hi = splitmix64_next(&st), lo = splitmix64_next(&st), span = splitmix64_next(&st);
    if (!hi && !lo)     /* all zero is invalid */
        lo = 1;
    if (!span)
        span = 1;
    snprintf(trace_id, 33, "%016" PRIx64 "%016" PRIx64, hi, lo);
    snprintf(header, cap, "traceparent: 00-%s-%016" PRIx64 "-01", trace_id, span);
}

static struct curl_slist *request_headers(const struct driver_cfg *c, long seq, bool warm, const char *extra)
{
    struct curl_slist *h = NULL;
    if (extra[0])
        h = curl_slist_append(h, extra);
    for (const struct curl_slist *p = c->headers; p; p = p->next)
        h = curl_slist_append(h, p->data);
    char id[64];
    snprintf(id, sizeof id, "X-Request-Id: anvil-%s-%ld", warm ? "warmup" : "req", warm ? seq : seq - c->warmup);
    h = curl_slist_append(h, id);
    h = curl_slist_append(h, "Content-Type: application/json");
    return curl_slist_append(h, "Expect:");
}

/* Sends request seq on slot s. after: when the request it follows ended
 * (-1 none). */
static void launch(struct loop *l, struct slot *s, long seq, int64_t after)
{
    struct shared *sh = l->sh;
    const struct driver_cfg *c = sh->cfg;
    s->l = l;
    s->seq = seq;
    s->shown = 0;
    if (!s->idle && c->idle_timeout_s > 0)
        s->idle = evtimer_new(l->base, on_idle, s);
    bool warm = seq < c->warmup;
    long planned = -1, max_tokens = -1;
    s->body = take_body(sh, seq, &planned, &max_tokens);
    if (warm) {
        s->rec = &s->warm;
        record_init(s->rec, (int)seq, true, planned, max_tokens);
    } else {
        s->rec = c->drop_records ? &s->own : &l->records[l->n_records];
        l->n_records++;
        /* duration mode: sent before the window opens = warm-up, kept for its tokens */
        bool early = c->duration_s > 0 && clock_now_ns() < sh->out->window_start;
        record_init(s->rec, (int)(seq - c->warmup), early, planned, max_tokens);
    }
    stream_init(&s->st, s->rec);
    s->st.keep_text = c->keep_text;
    char tp[96] = "";
    if (c->traceparent)
        trace_context(sh, seq, s->rec->trace_id, tp, sizeof tp);
    s->headers = request_headers(c, seq, warm, tp);
    struct http_request req = {
        .url = c->url, .headers = s->headers, .body = s->body,
        .body_len = s->body ? strlen(s->body) : 0, .connect_timeout_ms = c->connect_timeout_ms,
        .timeout_ms = c->timeout_ms,
    };
    if (s->body && s->headers)
        s->x = http_start(l->http, &req, &handlers, s, &s->rec->t_start);
    if (s->x && s->idle) {
        s->last_rx = s->rec->t_start;
        arm_idle(s, (int64_t)(c->idle_timeout_s * 1e9));
    }
    if (!s->x) {
        s->rec->t_start = s->rec->t_end = clock_now_ns();
        record_fail(s->rec, FAIL_OTHER, "could not start the request (out of memory?)");
    }
    bool scheduled = !warm && sh->plan.open_loop;
    /* a held turn was due no earlier than the end of the turn before it */
    int64_t due = scheduled ? sh->t_measure + sh->plan.entries[seq].send_ns : 0;
    s->rec->t_scheduled = scheduled ? (after > due ? after : due) : s->rec->t_start;
    if (c->live && !s->rec->warmup) {
        live_request_started(c->live);
        if (scheduled)
            live_observe(&c->live->send_lateness, s->rec->t_start - s->rec->t_scheduled);
    }
    if (!warm && c->duration_s <= 0) {  /* no window: it opens with the first measured send */
        lock(sh);
        bool first = !sh->first_measured_start;
        if (first)
            sh->first_measured_start = s->rec->t_start;
        unlock(sh);
        if (first && l->id == 0)
            open_window(l, s->rec->t_start);
        else if (first)
            wake(&sh->loops[0]);
    }
    if (!warm && !s->rec->warmup && c->on_first_send)
        note_first_send(sh, s->rec->t_start);
    if (!s->x)
        finish_slot(l, s);
}


/* Under the lock: the requests due by now (closed loop: every one, once
 * the measured phase's start has come). */
static void update_arrived_locked(struct shared *sh)
{
    if (!sh->measuring)
        return;
    int64_t now = clock_now_ns();
    if (!sh->plan.open_loop) {
        if (sh->t_measure <= now)
            sh->arrived = total(sh);
        return;
    }
    while (sh->arrived < total(sh) && sh->t_measure + sh->plan.entries[sh->arrived].send_ns <= now)
        sh->arrived++;
}

/* Under the lock: the next request to send, or -1 — first a held turn whose
 * waits (and think time) are over (in the order they became so), else the
 * next due request, held instead while a request it waits for is still
 * running or its think time runs. Warm-ups drain completely before the
 * measured phase begins. *after gets when it may go: the end of the last
 * request it waited for plus its think time (-1: it waits for none). */
static long next_sendable_locked(struct shared *sh, int64_t *after)
{
    int64_t now = sh->n_thinking || sh->pending ? clock_now_ns() : 0;
    while (sh->n_thinking && sh->go_ns[sh->thinking[0]] <= now)
        sh->ready[sh->ready_tail++] = think_pop_locked(sh);
    if (sh->ready_head < sh->ready_tail) {
        long seq = sh->ready[sh->ready_head++];
        *after = sh->go_ns[seq];
        return seq;
    }
    while (sh->next_seq < sh->arrived) {
        if (sh->next_seq == sh->cfg->warmup && !sh->measuring)
            return -1;
        long seq = sh->next_seq++;
        if (!sh->pending || sh->plan.entries[seq].n_waits == 0) {
            *after = -1;
            return seq;
        }
        if (sh->pending[seq] == 0 && sh->go_ns[seq] <= now) {
            *after = sh->go_ns[seq];
            return seq;
        }
        if (sh->pending[seq] == 0)
            think_push_locked(sh, seq);
    }
    return -1;
}

/* When the first held request's think time ends: 0 when none thinks, or
 * when the global cap leaves no room to send it then (a request ending
 * pumps again: no timer spins on a full cap). */
static int64_t next_think_end(struct shared *sh)
{
    lock(sh);
    int cap = sh->plan.open_loop ? sh->plan.concurrency : 0;
    int64_t t = sh->n_thinking && (cap <= 0 || sh->in_flight < cap) ? sh->go_ns[sh->thinking[0]] : 0;
    unlock(sh);
    return t;
}

/* Under the lock: closed loop with a ramp, the streams started by now
 * (each may hold one request; counted over every loop, so the steps are
 * the plan's whatever the threads); -1 when every one has, or none ramps. */
static int streams_on_locked(struct shared *sh, int64_t now)
{
    const struct load_plan *p = &sh->plan;
    if (p->open_loop || !p->stream_start_ns || sh->streams_on >= p->concurrency)
        return -1;
    if (!sh->measuring)
        return sh->next_seq < sh->cfg->warmup ? -1 : 0;     /* warm-ups run before the ramp */
    while (sh->streams_on < p->concurrency && sh->t_measure + p->stream_start_ns[sh->streams_on] <= now)
        sh->streams_on++;
    return sh->streams_on >= p->concurrency ? -1 : sh->streams_on;
}

/* Claims the next sendable request if this loop has a free slot and the
 * global cap allows one more; -1 when none. */
static long claim(struct loop *l, int64_t *after)
{
    struct shared *sh = l->sh;
    int cap = sh->plan.open_loop ? sh->plan.concurrency : 0;
    long seq = -1;
    lock(sh);
    update_arrived_locked(sh);
    int on = streams_on_locked(sh, clock_now_ns());
    if (sh->stop == STOP_NONE && l->n_free > 0 && (cap <= 0 || sh->in_flight < cap) &&
        (on < 0 || sh->in_flight < on) &&
        (seq = next_sendable_locked(sh, after)) >= 0 && sh->in_flight++ == 0)
        sh->busy_since = clock_now_ns();    /* the stall clock runs again */
    unlock(sh);
    return seq;
}

/* Sends every sendable request a free slot allows, DRIVER_SEND_BATCH at a
 * time: after each batch the loop reads what arrived (a zero timer runs
 * after the sockets the next epoll_wait finds ready) before it sends more.
 * Sending 10,000 at once held the loop 2.7 s, while the first replies'
 * tokens queued unread and the kernel merged them (bench/RESULTS.md). */
static void pump(struct loop *l)
{
    long seq;
    int64_t after = -1;
    int sent = 0;
    while (!l->stopping && sent < DRIVER_SEND_BATCH && (seq = claim(l, &after)) >= 0) {
        launch(l, &l->slots[l->free_slots[--l->n_free]], seq, after);
        sent++;
    }
    if (sent == DRIVER_SEND_BATCH && !l->stopping) {
        static const struct timeval now = {0, 0};
        evtimer_add(l->more, &now);
    }
    /* a think time ends later: a loop with a free slot sends it then (one
     * without will pump when a request of its own ends) */
    int64_t t = l->think && l->n_free > 0 && !l->stopping ? next_think_end(l->sh) : 0;
    if (t) {
        int64_t wait = t - clock_now_ns();
        struct timeval tv = ns_to_timeval(wait > 0 ? wait : 0);
        evtimer_add(l->think, &tv);
    }
}

/* Under the lock: the measured phase begins. Closed loop makes every
 * request due at once; open loop starts the arrival clock. Each loop sets
 * its own timers when it sees it (arm). */
static void begin_measured_locked(struct shared *sh)
{
    const struct driver_cfg *c = sh->cfg;
    int64_t now = clock_now_ns();
    /* an agreed start still to come (measure_at_ns): the phase and its clock begin then */
    sh->t_measure = sh->out->t_measure = c->measure_at_ns > now ? c->measure_at_ns : now;
    sh->measuring = true;
    if (c->duration_s > 0) {
        sh->out->window_start = sh->t_measure + (int64_t)(c->warmup_s * 1e9);
        sh->out->window_end = sh->t_measure + (int64_t)((c->warmup_s + c->duration_s) * 1e9);
    }
    sh->arrived = sh->plan.open_loop || sh->t_measure > now ? c->warmup : total(sh);
    wake_all(sh);
}

static void schedule_next_arrival(struct loop *l);

/* The loop's timers of the measured phase: the window's (duration mode,
 * every loop cuts its own requests; thread 0 gives the samplers their
 * boundaries) and the arrival timer. */
static void arm(struct loop *l)
{
    struct shared *sh = l->sh;
    const struct driver_cfg *c = sh->cfg;
    l->armed = true;
    lock(sh);
    int64_t ws = sh->out->window_start, we = sh->out->window_end;
    unlock(sh);
    if (c->duration_s > 0) {
        /* timers count from the loop pass's cached time: count from now */
        event_base_update_cache_time(l->base);
        int64_t now = clock_now_ns();
        struct timeval tv = ns_to_timeval(we > now ? we - now : 0);
        evtimer_add(l->window, &tv);
        if (l->id == 0 && c->warmup_s > 0 && c->window_ready) {
            struct timeval g = ns_to_timeval(DRIVER_GATE_NS);
            evtimer_add(l->gate, &g);
        }
        if (l->id == 0 && c->warmup_s > 0) {
            /* 2 µs more: the timer and libevent's clock are truncated to the
             * µs, and the window-start sample is never taken before its instant */
            tv = ns_to_timeval(ws > now ? ws - now + 2000 : 0);
            evtimer_add(l->window_open, &tv);
        } else {
            open_window(l, ws);
        }
    }
    schedule_next_arrival(l);
}

/* Open loop: the timer for the next request whose plan entry names this
 * loop and that is not due yet; closed loop: the agreed start of the
 * measured phase (driver_cfg.measure_at_ns) when it is still to come. */
static void schedule_next_arrival(struct loop *l)
{
    struct shared *sh = l->sh;
    if (l->stopping)
        return;
    lock(sh);
    long arrived = sh->arrived;
    int64_t t_measure = sh->t_measure;
    unlock(sh);
    if (!sh->plan.open_loop) {  /* closed loop: a timer for an agreed start or a stream still to come */
        int64_t now = clock_now_ns(), wait = t_measure - now;
        lock(sh);
        int on = streams_on_locked(sh, now);
        unlock(sh);
        if (on >= 0)
            wait = t_measure + sh->plan.stream_start_ns[on] - now;
        if ((arrived < total(sh) || on >= 0) && wait > 0) {
            struct timeval tv = ns_to_timeval(wait);
            evtimer_add(l->arrival, &tv);
        }
        return;
    }
    const struct plan_entry *e = sh->plan.entries;
    while (l->cursor < total(sh) && (l->cursor < arrived || e[l->cursor].thread != l->id))
        l->cursor++;
    if (l->cursor >= total(sh))
        return;
    int64_t wait = t_measure + e[l->cursor].send_ns - clock_now_ns();
    struct timeval tv = ns_to_timeval(wait > 0 ? wait : 0);
    evtimer_add(l->arrival, &tv);
}

static void on_arrival(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    pump(l);
    schedule_next_arrival(l);
    maybe_stop_loop(l);     /* a launch that failed at once may have ended the run */
}

static void on_more(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    pump(l);
    maybe_stop_loop(l);
}

static void on_think_over(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    pump(l);
    maybe_stop_loop(l);
}

/* The one rule for a stream that something other than its clean end
 * stopped (a timer, a cancel, a transport error, the window): a reply
 * that was over by what arrived (stream_reply_over) completed, at its last
 * arrival; any other is ended by that cause — failed with kind and msg, or
 * cut (kind FAIL_NONE: the window closed). t: now. */
static void end_stream(struct slot *s, int64_t t, enum fail_kind kind, const char *msg)
{
    if (stream_reply_over(&s->st)) {
        stream_finish(&s->st, s->st.now);
        return;
    }
    if (kind == FAIL_NONE)
        s->rec->cut = true;
    else
        record_fail(s->rec, kind, "%s", msg);
    s->rec->t_end = t;
}

static void on_done(void *ud, int64_t t, CURLcode rc, const char *err)
{
    struct slot *s = ud;
    struct loop *l = s->l;
    /* an HTTP error reply is judged on its body even when the transport failed afterwards */
    if (rc == CURLE_OK || s->rec->http_status >= 400)
        stream_finish(&s->st, t);
    else
        end_stream(s, t, fail_from_curl(rc), err);
    if (s->rec->fail != FAIL_NONE && !s->rec->t_end)
        s->rec->t_end = t;
    finish_slot(l, s);
    pump(l);
    maybe_stop_loop(l);
}

static const struct http_handlers handlers = {on_headers, on_body, on_done, on_content_type};

/* Under the lock: whether the server has stalled (requests in flight, none
 * with a byte for stall_timeout_s) and the run has not already been
 * stopped harder; fills *st with what the run saw. */
static bool stall_due_locked(struct shared *sh, int64_t now, struct server_stalled *st)
{
    const struct driver_cfg *c = sh->cfg;
    if (c->stall_timeout_s <= 0 || sh->in_flight == 0 || sh->stop >= STOP_CUT)
        return false;
    int64_t silent = silence_locked(sh, now);
    if (silent < (int64_t)(c->stall_timeout_s * 1e9))
        return false;
    *st = (struct server_stalled){true, now, silent, sh->in_flight, c->stall_timeout_s};
    return true;
}

/* Under the lock: the server stalled (st from stall_due_locked). Nothing
 * more is sent and what runs is ended now, without a grace period: a
 * stopped server would not answer within one. Says so once on stderr. */
static void declare_stall_locked(struct shared *sh, const struct server_stalled *st)
{
    if (sh->out->server_stalled.stalled || sh->stop >= STOP_CUT)
        return;
    sh->out->server_stalled = *st;
    fprintf(stderr, "%sanvil: server stalled: no byte on any of %ld in-flight requests for %.1f s "
            "(--stall-timeout-s %g); stopped, measured requests kept\n", sh->cfg->progress ? "\n" : "",
            st->in_flight, (double)st->silent_ns / 1e9, sh->cfg->stall_timeout_s);
    request_stop_locked(sh, STOP_CANCEL);
}

static void react(struct loop *l);

/* The idle timer: fails the request when the server has said nothing for
 * idle_timeout_s since the last byte, else waits for the rest of it. */
static void on_idle(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct slot *s = arg;
    struct loop *l = s->l;
    if (!s->x)
        return;
    int64_t limit = (int64_t)(cfg_of(l)->idle_timeout_s * 1e9), now = clock_now_ns();
    if (!s->rec->done_seen && now - s->last_rx < limit) {
        arm_idle(s, s->last_rx + limit - now);
        return;
    }
    /* the whole server silent as long as the stall timeout (the default
     * stall timeout is the idle timeout): this request ends as its own
     * timer says, and the run ends before another is sent */
    struct server_stalled st = {0};
    lock(l->sh);
    bool stalled = stall_due_locked(l->sh, now, &st);
    unlock(l->sh);
    http_cancel(l->http, s->x);
    char msg[160];
    snprintf(msg, sizeof msg, "idle timeout: no byte from the server for %g s (%s)", cfg_of(l)->idle_timeout_s,
             s->rec->t_headers ? "mid-stream" : "waiting for the response");
    end_stream(s, now, FAIL_TIMEOUT, msg);
    finish_slot(l, s);
    if (stalled) {
        lock(l->sh);
        declare_stall_locked(l->sh, &st);
        unlock(l->sh);
        react(l);
    }
    pump(l);
    maybe_stop_loop(l);
}

/* Thread 0, with stall_timeout_s: ends the run when the server has been
 * silent that long, else looks again when it would have been, were no
 * byte to arrive meanwhile — one timer, due about once per stall timeout
 * while bytes flow. */
static void on_stall_check(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    struct shared *sh = l->sh;
    int64_t now = clock_now_ns(), left = 0;
    struct server_stalled st = {0};
    lock(sh);
    bool stalled = stall_due_locked(sh, now, &st);
    if (stalled)
        declare_stall_locked(sh, &st);
    else
        left = (int64_t)(sh->cfg->stall_timeout_s * 1e9) - silence_locked(sh, now);
    unlock(sh);
    if (stalled) {
        react(l);
        maybe_stop_loop(l);
        return;
    }
    struct timeval tv = ns_to_timeval(left > 1000000 ? left : 1000000);
    evtimer_add(l->stall, &tv);
}

/* Ends every request in flight on this loop now and stops the loop: cut
 * (kept, marked incomplete) when the window closed, else cancelled. */
static void end_in_flight(struct loop *l, bool cut)
{
    struct shared *sh = l->sh;
    int64_t now = clock_now_ns();
    for (int i = 0; i < l->n_slots; i++) {
        struct slot *s = &l->slots[i];
        if (!s->x)
            continue;
        http_cancel(l->http, s->x);
        char msg[160];
        enum fail_kind kind = FAIL_CANCELLED;
        if (sh->out->server_stalled.stalled) {
            kind = FAIL_TIMEOUT;
            snprintf(msg, sizeof msg, "server stalled: no byte on any in-flight request for %g s "
                     "(--stall-timeout-s; %s)", sh->cfg->stall_timeout_s,
                     s->rec->t_headers ? "mid-stream" : "waiting for the response");
        } else if (sh->out->stop_signal)
            snprintf(msg, sizeof msg, "cancelled by signal %d before the stream ended", sh->out->stop_signal);
        else if (sh->client_limit)
            snprintf(msg, sizeof msg, "cancelled: this machine ran out of a resource (see the client failures) "
                     "before the stream ended");
        else
            snprintf(msg, sizeof msg, "cancelled: the server went away before the stream ended");
        end_stream(s, now, cut ? FAIL_NONE : kind, msg);
        finish_slot(l, s);
    }
    event_base_loopbreak(l->base);
}

/* No new requests from this loop; those in flight get the grace period. */
static void stop_sending(struct loop *l)
{
    l->stopping = true;
    evtimer_del(l->arrival);
    struct timeval tv = s_to_timeval(cfg_of(l)->grace_s);
    evtimer_add(l->grace, &tv);
}

/* The loop's answer to the shared state, when woken (or at its start). */
static void react(struct loop *l)
{
    struct shared *sh = l->sh;
    lock(sh);
    enum stop stop = sh->stop;
    bool measuring = sh->measuring;
    int64_t first = sh->first_measured_start;
    unlock(sh);
    if (measuring && !l->armed && stop == STOP_NONE)
        arm(l);
    if (first && cfg_of(l)->duration_s <= 0)
        open_window(l, first);
    if (stop == STOP_CUT)
        end_window(l);
    if (stop == STOP_GRACE && !l->stopping)
        stop_sending(l);
    if (stop >= STOP_CUT) {
        l->stopping = true;
        evtimer_del(l->arrival);
        end_in_flight(l, stop == STOP_CUT);
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct loop *l = arg;
    uint64_t n;
    ssize_t r = read(fd, &n, sizeof n);
    (void)r;
    react(l);
    pump(l);
    maybe_stop_loop(l);
}

/* Duration mode, thread 0: the window opened (the samplers' boundary;
 * requests judge it by their own send time). */
static void on_window_open(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    open_window(l, l->sh->out->window_start);
}

/* Duration mode with a readiness gate, thread 0: shows the gate the
 * streams in flight and opens the window now when it says so (the window
 * then ends duration_s from now); polled until the window opens. */
static void on_gate(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    struct shared *sh = l->sh;
    const struct driver_cfg *c = sh->cfg;
    if (l->window_opened || l->stopping)
        return;
    struct driver_gate g = {.now = clock_now_ns()};
    for (int i = 0; i < l->n_slots; i++) {
        const struct slot *s = &l->slots[i];
        if (!s->x || !s->rec || s->rec->t_end)
            continue;
        g.in_flight++;
        g.decoding += s->rec->t_first_output != 0;
    }
    if (!c->window_ready(c->gate_ud, &g)) {
        struct timeval tv = ns_to_timeval(DRIVER_GATE_NS);
        evtimer_add(l->gate, &tv);
        return;
    }
    int64_t now = clock_now_ns();
    lock(sh);
    sh->out->window_start = now;
    sh->out->window_end = now + (int64_t)(c->duration_s * 1e9);
    unlock(sh);
    evtimer_del(l->window_open);
    event_base_update_cache_time(l->base);
    struct timeval tv = ns_to_timeval((int64_t)(c->duration_s * 1e9));
    evtimer_add(l->window, &tv);
    open_window(l, now);
}

/* Duration mode: the window closed. Nothing more is sent; what still runs
 * is cut — kept, marked incomplete, its tokens so far counted by time. */
static void on_window_end(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    struct shared *sh = l->sh;
    int64_t now = clock_now_ns();
    lock(sh);
    if (sh->out->window_end > now)  /* the timer's µs rounding: the window ends when the load stops */
        sh->out->window_end = now;
    request_stop_locked(sh, STOP_CUT);
    unlock(sh);
    react(l);
}

static void on_grace_over(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    lock(l->sh);
    request_stop_locked(l->sh, STOP_CANCEL);
    unlock(l->sh);
    react(l);
}

/* Under the lock: counts a request's end towards the server-gone streak —
 * refused connections and cut streams since the last reply. */
static void note_failure_locked(struct shared *sh, const struct req_record *r)
{
    /* this machine's limit: every request sent after it would fail the same
     * way at once, and the load would not be the one asked for */
    if (r->fail == FAIL_CLIENT && !sh->client_limit) {
        sh->client_limit = sh->out->client_limit = true;
        fprintf(stderr, "%sanvil: %s; no new requests\n", sh->cfg->progress ? "\n" : "", r->fail_msg);
        request_stop_locked(sh, STOP_GRACE);
        return;
    }
    if (!sh->answered || (r->fail != FAIL_CONNECT && r->fail != FAIL_TRUNCATED) || sh->out->server_gone.gone)
        return;
    struct server_gone *g = &sh->streak;
    if (!g->connect_failures && !g->truncated)
        g->first_failure_ns = r->t_end;
    g->connect_failures += r->fail == FAIL_CONNECT;
    g->truncated += r->fail == FAIL_TRUNCATED;
    if (g->connect_failures < DRIVER_GONE_AFTER)
        return;
    g->gone = true;
    sh->out->server_gone = *g;
    fprintf(stderr, "%sanvil: the server went away: %d connections refused in a row (first failure "
            "%.3f s into the run); no new requests\n", sh->cfg->progress ? "\n" : "",
            g->connect_failures, (double)(g->first_failure_ns - sh->t0) / 1e9);
    request_stop_locked(sh, STOP_GRACE);
}

/* Thread 0: SIGINT / SIGTERM / SIGHUP (a closed terminal or ssh session). */
static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct loop *l = arg;
    struct shared *sh = l->sh;
    lock(sh);
    long n = sh->in_flight;
    if (sh->stop != STOP_NONE) {    /* a second Ctrl-C: stop waiting */
        fprintf(stderr, "anvil: signal %d again: cancelling %ld in flight\n", (int)sig, n);
        request_stop_locked(sh, STOP_CANCEL);
    } else {
        sh->out->stop_signal = (int)sig;
        fprintf(stderr, "%sanvil: signal %d: no new requests; waiting up to %.1f s for %ld in flight\n",
                sh->cfg->progress ? "\n" : "", (int)sig, sh->cfg->grace_s, n);
        request_stop_locked(sh, STOP_GRACE);
    }
    unlock(sh);
    react(l);
    maybe_stop_loop(l);
}

/* The progress line (thread 0, every 250 ms): redrawn in place, padded
 * over what the last one left. */
static void on_progress(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct loop *l = arg;
    struct shared *sh = l->sh;
    const struct driver_cfg *c = sh->cfg;
    int64_t now = clock_now_ns();
    struct progress_view v = {.elapsed_s = ns_to_ms(now - sh->t0) / 1000.0, .duration_s = c->duration_s,
                              .warmup_s = c->warmup_s, .window_s = -1, .tok_per_s = NAN};
    lock(sh);
    v.total = total(sh);
    v.done = sh->done;
    v.in_flight = sh->in_flight;
    v.failed = sh->failed;
    if (sh->measuring && sh->out->window_start > 0 && now >= sh->out->window_start)
        v.window_s = ns_to_ms(now - sh->out->window_start) / 1000.0;
    unlock(sh);
    long tokens = 0;
    for (int i = 0; i < sh->n_loops; i++)
        tokens += atomic_load_explicit(&sh->loops[i].streamed, memory_order_relaxed);
    if (l->shown_at > 0 && now > l->shown_at)
        v.tok_per_s = (double)(tokens - l->shown_tokens) / (ns_to_ms(now - l->shown_at) / 1000.0);
    l->shown_tokens = tokens;
    l->shown_at = now;
    struct winsize ws;
    int columns = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
    char line[512];
    int n = (int)progress_line(line, sizeof line, &v, columns);
    int last = columns > 1 && l->progress_len > columns - 1 ? columns - 1 : l->progress_len;  /* a narrowed terminal */
    fprintf(stderr, "\r%s%*s", line, last > n ? last - n : 0, "");
    l->progress_len = n;
}

/* The lag probe, an inline sampler due every DRIVER_LAG_PROBE_NS on each
 * loop: how late its timer runs is how long the loop was busy elsewhere —
 * time any byte arriving then waited for its timestamp. One sample per
 * periodic tick (boundaries are not timer slots). */
static void *lag_sample(void *ud, const struct sampler_tick *t)
{
    struct loop *l = ud;
    if (t->phase != SAMPLER_PERIODIC)
        return NULL;
    if (VEC_RESERVE(l->lag_ms, l->lag_cap, l->n_lag + 1, 1024) != 0)
        return NULL;        /* drop the sample rather than lose the run */
    l->lag_ms[l->n_lag++] = ns_to_ms(t->t_taken - t->t_due);
    if (cfg_of(l)->live)
        live_observe(&cfg_of(l)->live->loop_lag, t->t_taken - t->t_due);
    return NULL;
}

/* The runner: the lag probe, then (thread 0) cfg's samplers in their order. */
static int make_samplers(struct loop *l)
{
    const struct driver_cfg *c = cfg_of(l);
    l->lag = (struct sampler){.name = "loop_lag", .period_ns = DRIVER_LAG_PROBE_NS, .sample = lag_sample,
                              .ud = l};
    int n = 1 + (l->id == 0 && c->n_samplers > 0 ? c->n_samplers : 0);
    if (!(l->sampler_list = calloc((size_t)n, sizeof *l->sampler_list)))
        return -1;
    l->sampler_list[0] = &l->lag;
    for (int i = 1; i < n; i++)
        l->sampler_list[i] = c->samplers[i - 1];
    l->samplers = sampler_runner_new(l->base, l->sampler_list, n);
    return l->samplers ? 0 : -1;
}

/* Pre-warm: every GET of a loop shares one counter; its loop breaks when
 * all ended. */
struct prewarm {
    struct loop *l;
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
        pw->l->prewarmed++;
    if (--pw->left == 0)
        event_base_loopbreak(pw->l->base);
}

/* Opens this loop's connections: closed loop, one per slot, so every
 * stream of the first wave finds one open as later ones do (a cap of 1,024
 * over all loops left 3,072 of 4,096 first sends paying a TCP handshake,
 * and SYN retransmits of 1 and 2 s once the server's SYN queue overflowed:
 * bench/RESULTS.md); open loop, whose slots are only a bound (every
 * request, or the whole cap on each loop), its share of 1,024. */
static void prewarm(struct loop *l)
{
    static const struct http_handlers pw_handlers = {pw_headers, pw_body, pw_done};
    const struct driver_cfg *c = cfg_of(l);
    struct prewarm pw = {l, 0};
    struct http_request req = {
        .url = c->prewarm_url, .headers = c->headers,
        .connect_timeout_ms = c->connect_timeout_ms, .timeout_ms = 30000,
    };
    int most = l->sh->plan.open_loop ? (1024 + l->sh->n_loops - 1) / l->sh->n_loops : l->n_slots;
    int64_t t;
    for (int i = 0; i < l->n_slots && i < most; i++)
        if (http_start(l->http, &req, &pw_handlers, &pw, &t))
            pw.left++;
    if (pw.left)
        event_base_dispatch(l->base);
    while (http_in_flight(l->http))     /* stopped by a signal: drop the rest */
        http_cancel(l->http, http_first(l->http));
}

/* Slots a loop holds: the plan's; duration mode without a cap keeps 1024
 * (the run sends an unknown number). */
static int loop_slots(const struct shared *sh, int id)
{
    long n = sh->plan.slots[id];
    if (sh->plan.open_loop && sh->plan.concurrency <= 0 && sh->cfg->duration_s > 0 && n > 1024)
        n = 1024;
    return n < 1 ? 1 : (int)n;
}

static int setup_loop(struct shared *sh, struct loop *l, int id)
{
    const struct driver_cfg *c = sh->cfg;
    l->sh = sh;
    l->id = id;
    l->wake_fd = -1;
    l->n_slots = loop_slots(sh, id);
    l->cursor = c->warmup;
    /* arrivals are due to the µs: epoll's millisecond timeouts would make
     * every open-loop send up to 1 ms late, so ask for a timerfd */
    struct event_config *ec = event_config_new();
    if (ec) {
        event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
        l->base = event_base_new_with_config(ec);
        event_config_free(ec);
    }
    /* slots are set up as they are first used: untouched ones cost no memory */
    l->slots = calloc((size_t)l->n_slots, sizeof *l->slots);
    l->free_slots = calloc((size_t)l->n_slots, sizeof *l->free_slots);
    if (!c->drop_records)
        l->records = calloc((size_t)(c->num_prompts ? c->num_prompts : 1), sizeof *l->records);
    if (!l->base || !l->slots || !l->free_slots || (!l->records && !c->drop_records))
        return -1;
    for (int i = l->n_slots - 1; i >= 0; i--)
        l->free_slots[l->n_free++] = i;
    l->http = http_client_new(l->base, l->n_slots, c->transport);
    l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!l->http || l->wake_fd < 0)
        return -1;
    l->wake = event_new(l->base, l->wake_fd, EV_READ | EV_PERSIST, on_wake, l);
    l->grace = evtimer_new(l->base, on_grace_over, l);
    l->arrival = evtimer_new(l->base, on_arrival, l);
    l->window = evtimer_new(l->base, on_window_end, l);
    l->more = evtimer_new(l->base, on_more, l);
    if (sh->plan.any_follows && !(l->think = evtimer_new(l->base, on_think_over, l)))
        return -1;
    if (!l->wake || !l->grace || !l->arrival || !l->window || !l->more || make_samplers(l) != 0)
        return -1;
    event_add(l->wake, NULL);
    if (id != 0)
        return 0;
    /* thread 0: signals, the progress line, the window-start timer */
    l->sigint = evsignal_new(l->base, SIGINT, on_signal, l);
    l->sigterm = evsignal_new(l->base, SIGTERM, on_signal, l);
    /* a closed terminal stops the run as SIGTERM does, unless under nohup */
    l->sighup = stop_sighup_ignored() ? NULL : evsignal_new(l->base, SIGHUP, on_signal, l);
    l->progress = event_new(l->base, -1, EV_PERSIST, on_progress, l);
    l->window_open = evtimer_new(l->base, on_window_open, l);
    l->gate = evtimer_new(l->base, on_gate, l);
    if (!l->sigint || !l->sigterm || (!l->sighup && !stop_sighup_ignored()) || !l->progress || !l->window_open || !l->gate)
        return -1;
    if (c->stall_timeout_s > 0 && !(l->stall = evtimer_new(l->base, on_stall_check, l)))
        return -1;
    event_add(l->sigint, NULL);
    event_add(l->sigterm, NULL);
    if (l->sighup)
        event_add(l->sighup, NULL);
    if (c->progress) {
        struct timeval tv = {0, 250000};
        event_add(l->progress, &tv);
    }
    return 0;
}

static void teardown_loop(struct loop *l)
{
    sampler_runner_free(l->samplers);
    free(l->sampler_list);
    http_client_free(l->http);
    struct event *evs[] = {l->wake, l->sigint, l->sigterm, l->sighup, l->grace, l->arrival, l->progress,
                           l->window, l->window_open, l->think, l->gate, l->stall, l->more};
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        if (evs[i])
            event_free(evs[i]);
    for (int i = 0; l->slots && i < l->n_slots; i++)
        if (l->slots[i].idle)
            event_free(l->slots[i].idle);
    if (l->base)
        event_base_free(l->base);
    if (l->wake_fd >= 0)
        close(l->wake_fd);
    free(l->slots);
    free(l->free_slots);
    for (long i = 0; l->records && i < l->n_records; i++)
        record_free(&l->records[i]);
    free(l->records);
    free(l->lag_ms);
}

/* Every body built before the run starts (prebuild_bodies). In duration
 * mode the plan is only a cap (200,000 requests by default), not what the
 * window will send: the bodies are built in order until they hold
 * DRIVER_PREBUILD_DURATION_BYTES or took DRIVER_PREBUILD_DURATION_NS, and
 * the requests after those build theirs when sent. Building all of them
 * took 2 s of CPU for agent sessions and, with --images-per-request,
 * minutes and every image in memory (64×64: 12 s, 330 MB) before the
 * first request. */
static int prebuild(struct shared *sh)
{
    const struct driver_cfg *c = sh->cfg;
    size_t n = (size_t)(total(sh) ? total(sh) : 1), bytes = 0;
    sh->bodies = calloc(n, sizeof *sh->bodies);
    sh->planned = calloc(n, sizeof *sh->planned);
    sh->max_tokens = calloc(n, sizeof *sh->max_tokens);
    if (!sh->bodies || !sh->planned || !sh->max_tokens)
        return -1;
    long s = 0;
    int64_t until = clock_now_ns() + DRIVER_PREBUILD_DURATION_NS;
    for (; s < total(sh) && (c->duration_s <= 0 || (bytes < DRIVER_PREBUILD_DURATION_BYTES &&
                                                    (s % 64 || clock_now_ns() < until))); s++) {
        sh->planned[s] = sh->max_tokens[s] = -1;
        sh->bodies[s] = c->make_body(c->ud, s, &sh->planned[s], &sh->max_tokens[s]);
        bytes += sh->bodies[s] ? strlen(sh->bodies[s]) : 0;
    }
    sh->n_prebuilt = s;
    return 0;   /* a NULL body fails its request when sent, as one built late would */
}

static int setup_shared(struct shared *sh)
{
    const struct driver_cfg *c = sh->cfg;
    long n = (long)c->warmup + c->num_prompts;
    int threads = plan_threads(c->threads, sysconf(_SC_NPROCESSORS_ONLN), c->concurrency, n);
    struct plan_cfg pc = {
        .warmup = c->warmup, .num_prompts = c->num_prompts, .concurrency = c->concurrency,
        .request_rate = c->request_rate, .burstiness = c->burstiness, .seed = c->seed,
        .fixed_span = c->duration_s <= 0, .threads = threads, .follows = c->follows,
        .waits_for = c->waits_for, .think_ns = c->think_ns, .ud = c->ud,
        .ramp = c->ramp, .stream_start_ns = c->stream_start_ns,
    };
    char err[256];
    if (c->send_ns) {   /* open loop; the drawn times are replaced below */
        pc.request_rate = pc.burstiness = 1;
        pc.ramp.strategy = RAMP_NONE;
    }
    if (plan_build(&pc, &sh->plan, err, sizeof err) != 0) {
        fprintf(stderr, "anvil: the load plan: %s\n", err);
        return -1;
    }
    if (c->send_ns && plan_set_send_times(&sh->plan, c->send_ns) != 0) {
        fprintf(stderr, "anvil: the load plan: send times must be ≥ 0 and never decrease\n");
        return -1;
    }
    if (c->window_ready && threads != 1) {
        fprintf(stderr, "anvil: the readiness gate needs one measuring loop, not %d\n", threads);
        return -1;
    }
    sh->out->threads = threads;
    if (c->traceparent && getrandom(&sh->trace_key, sizeof sh->trace_key, 0) != (ssize_t)sizeof sh->trace_key)
        sh->trace_key = (uint64_t)clock_now_ns() ^ ((uint64_t)getpid() << 32);
    if (sh->plan.any_follows && (!(sh->pending = calloc((size_t)n, sizeof *sh->pending)) ||
                                 !(sh->go_ns = calloc((size_t)n, sizeof *sh->go_ns)) ||
                                 !(sh->thinking = calloc((size_t)n, sizeof *sh->thinking)) ||
                                 !(sh->ready = calloc((size_t)n, sizeof *sh->ready))))
        return -1;
    for (long s = 0; sh->pending && s < n; s++)
        sh->pending[s] = sh->plan.entries[s].n_waits;
    if (c->prebuild_bodies && prebuild(sh) != 0)
        return -1;
    if (!(sh->loops = calloc((size_t)threads, sizeof *sh->loops)))
        return -1;
    sh->n_loops = threads;
    for (int i = 0; i < threads; i++)
        if (setup_loop(sh, &sh->loops[i], i) != 0)
            return -1;
    return 0;
}

static void teardown_shared(struct shared *sh)
{
    for (int i = 0; sh->loops && i < sh->n_loops; i++)
        teardown_loop(&sh->loops[i]);
    free(sh->loops);
    for (long s = 0; sh->bodies && s < total(sh); s++)
        free(sh->bodies[s]);
    free(sh->bodies);
    free(sh->planned);
    free(sh->max_tokens);
    free(sh->pending);
    free(sh->go_ns);
    free(sh->thinking);
    free(sh->ready);
    plan_free(&sh->plan);
}

/* A loop from the start of the load to its end: react, send, run (a
 * loopbreak before event_base_dispatch would be lost: ask first). */
static void run_loop(struct loop *l)
{
    react(l);
    pump(l);
    if (!maybe_stop_loop(l))
        event_base_dispatch(l->base);
}

/* Threads 1..n−1: pre-warm, wait for the start, run, stop the lag probe. */
static void *worker(void *arg)
{
    struct loop *l = arg;
    struct shared *sh = l->sh;
    prewarm(l);
    lock(sh);
    sh->n_ready++;
    pthread_cond_broadcast(&sh->cv);
    while (!sh->go)     /* thread 0 sets t0 and the first requests due */
        pthread_cond_wait(&sh->cv, &sh->mu);
    int64_t t0 = sh->t0;
    unlock(sh);
    sampler_runner_start(l->samplers, t0);
    run_loop(l);
    sampler_runner_stop(l->samplers, clock_now_ns(), 0);
    return NULL;
}

/* Starts threads 1..n−1 with SIGINT, SIGTERM and SIGHUP blocked (they reach
 * thread 0). Returns 0 or pthread_create's error (some may have started). */
static int start_workers(struct shared *sh)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = 0;
    for (int i = 1; i < sh->n_loops && rc == 0; i++) {
        rc = pthread_create(&sh->loops[i].thread, NULL, worker, &sh->loops[i]);
        sh->loops[i].thread_started = rc == 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static double tv_diff_s(struct timeval a, struct timeval b)
{
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_usec - a.tv_usec) / 1e6;
}

static void achieved_rate(const struct shared *sh, struct driver_result *out)
{
    int64_t first = sh->first_sent, last = sh->last_sent;
    long n = out->sent;
    out->achieved_rate = n > 1 && last > first ? (double)(n - 1) / ((double)(last - first) / 1e9) : NAN;
}

/* The loop has stopped at end: the boundaries the run did not reach (a
 * window never opened: stopped during warm-up; a window without a timer:
 * it ends when the last measured request ended). */
static void end_phases(struct loop *l0, int64_t end)
{
    struct shared *sh = l0->sh;
    struct driver_result *o = sh->out;
    open_window(l0, sh->cfg->duration_s > 0 && o->window_start < end ? o->window_start : end);
    if (!l0->window_ended && sh->cfg->duration_s > 0 && sh->stop == STOP_CUT)
        end_window(l0);
    if (!o->phase_ns[SAMPLER_WINDOW_END]) {
        int64_t t = sh->cfg->duration_s > 0 ? o->window_end : sh->last_measured_end;
        if (t < o->phase_ns[SAMPLER_WINDOW_START])     /* none measured ended */
            t = o->phase_ns[SAMPLER_WINDOW_START];
        o->phase_ns[SAMPLER_WINDOW_END] = t;
        sampler_runner_phase(l0->samplers, SAMPLER_WINDOW_END, t);
    }
    o->phase_ns[SAMPLER_AFTER_LAST] = end;
}

/* After-last boundary, stop and bounded join; copies cfg's samplers'
 * reports into the result. */
static void stop_samplers(struct loop *l0, int64_t end)
{
    const struct driver_cfg *c = l0->sh->cfg;
    struct driver_result *o = l0->sh->out;
    int64_t wait = c->sampler_stop_s > 0 ? (int64_t)(c->sampler_stop_s * 1e9) : DRIVER_SAMPLER_STOP_NS;
    sampler_runner_stop(l0->samplers, end, wait);
    int n = c->n_samplers > 0 ? c->n_samplers : 0;
    if (!n || !(o->sampler_reports = calloc((size_t)n, sizeof *o->sampler_reports)))
        return;
    o->n_sampler_reports = n;
    for (int i = 0; i < n; i++)
        o->sampler_reports[i] = *sampler_runner_report(l0->samplers, i + 1);
}

/* Moves every loop's records to the result by request index, and gathers
 * the lag samples (thread 0's first), pre-warmed connections and stamp
 * counts. Returns 0 or -1 (memory). */
static int merge(struct shared *sh)
{
    struct driver_result *o = sh->out;
    size_t n_lag = 0;
    for (int i = 0; i < sh->n_loops; i++)
        n_lag += sh->loops[i].n_lag;
    if ((n_lag && !(o->loop_lag_ms = malloc(n_lag * sizeof *o->loop_lag_ms))) ||
        !(o->per_loop = calloc(sh->n_loops > 0 ? (size_t)sh->n_loops : 1, sizeof *o->per_loop)))
        return -1;
    for (int i = 0; i < sh->n_loops; i++) {
        struct loop *l = &sh->loops[i];
        o->per_loop[i] = (struct driver_loop_stat){.requests = l->n_records, .lag_first = o->n_loop_lag,
                                                   .n_lag = l->n_lag,
                                                   .peak_events_per_s = l->ev_count > l->ev_peak ? l->ev_count
                                                                                                  : l->ev_peak};
        if (o->per_loop[i].peak_events_per_s > o->peak_events_per_s)
            o->peak_events_per_s = o->per_loop[i].peak_events_per_s;
        for (long k = 0; l->records && k < l->n_records; k++)
            o->records[l->records[k].index] = l->records[k];
        l->n_records = 0;   /* moved: owned by the result */
        if (l->n_lag)
            memcpy(o->loop_lag_ms + o->n_loop_lag, l->lag_ms, l->n_lag * sizeof *l->lag_ms);
        o->n_loop_lag += l->n_lag;
        o->prewarmed += l->prewarmed;
        struct http_rx_counts rx = http_rx_counts(l->http);
        o->stamps_kernel += rx.kernel;
        o->stamps_clock += rx.clock;
    }
    return 0;
}

static void join_workers(struct shared *sh)
{
    for (int i = 1; i < sh->n_loops; i++)
        if (sh->loops[i].thread_started)
            pthread_join(sh->loops[i].thread, NULL);
}

/* Thread 0 from the pre-warm to the end of the load; the caller's thread. */
static void drive(struct shared *sh, struct rusage *ru0)
{
    struct loop *l0 = &sh->loops[0];
    const struct driver_cfg *c = sh->cfg;
    prewarm(l0);
    lock(sh);
    while (sh->n_ready < sh->n_loops - 1)   /* every loop pre-warmed */
        pthread_cond_wait(&sh->cv, &sh->mu);
    getrusage(RUSAGE_SELF, ru0);
    sh->t0 = sh->out->phase_ns[SAMPLER_BEFORE_WARMUP] = clock_now_ns();
    if (sh->stop == STOP_NONE) {
        if (c->warmup)
            sh->arrived = c->warmup;
        else
            begin_measured_locked(sh);
    }
    sh->go = true;
    pthread_cond_broadcast(&sh->cv);
    unlock(sh);
    sampler_runner_start(l0->samplers, sh->t0);
    if (l0->stall) {    /* after the pre-warm: its GETs are not the load */
        struct timeval tv = s_to_timeval(c->stall_timeout_s);
        evtimer_add(l0->stall, &tv);
    }
    run_loop(l0);
    join_workers(sh);
}

int driver_run(const struct driver_cfg *cfg, struct driver_result *out)
{
    memset(out, 0, sizeof *out);
    out->n_records = cfg->drop_records ? 0 : cfg->num_prompts;
    struct shared sh = {.cfg = cfg, .out = out};
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    int rc = -1;
    if (!cfg->drop_records)
        out->records = calloc((size_t)(cfg->num_prompts ? cfg->num_prompts : 1), sizeof *out->records);
    if ((!out->records && !cfg->drop_records) || setup_shared(&sh) != 0)
        goto done;
    if (start_workers(&sh) != 0) {
        /* those that started are let go into a run already cancelled */
        fprintf(stderr, "anvil: could not start %d measuring threads\n", sh.n_loops);
        lock(&sh);
        sh.stop = STOP_CANCEL;
        sh.go = true;
        pthread_cond_broadcast(&sh.cv);
        unlock(&sh);
        join_workers(&sh);
        goto done;
    }
    struct rusage ru0, ru1;
    drive(&sh, &ru0);
    int64_t end = clock_now_ns();
    /* a scrape of the stopped server would wait its timeout at each boundary still to give */
    if (out->server_stalled.stalled)
        sampler_runner_hurry(sh.loops[0].samplers);
    if (out->window_end > end)      /* stopped early (request cap or signal): the window ends here */
        out->window_end = end;
    end_phases(&sh.loops[0], end);
    getrusage(RUSAGE_SELF, &ru1);
    out->cpu_user_s = tv_diff_s(ru0.ru_utime, ru1.ru_utime);
    out->cpu_sys_s = tv_diff_s(ru0.ru_stime, ru1.ru_stime);
    stop_samplers(&sh.loops[0], end);
    rc = merge(&sh);
    achieved_rate(&sh, out);
    if (cfg->progress) {
        on_progress(-1, 0, &sh.loops[0]);
        fputc('\n', stderr);
    }
done:
    teardown_shared(&sh);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.mu);
    if (rc != 0)
        driver_result_free(out);
    return rc;
}

void driver_result_free(struct driver_result *r)
{
    for (int i = 0; r->records && i < r->n_records; i++)
        record_free(&r->records[i]);
    free(r->records);
    r->records = NULL;
    free(r->loop_lag_ms);
    r->loop_lag_ms = NULL;
    free(r->per_loop);
    r->per_loop = NULL;
    free(r->sampler_reports);
    r->sampler_reports = NULL;
}
