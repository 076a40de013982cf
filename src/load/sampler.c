/* sampler.c — the sampler runner: inline samplers on the loop's timers,
 * blocking ones on threads that hand results back through a locked queue
 * and an eventfd the loop watches. */
#include "load/sampler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

/* A result waiting for the loop to collect it. */
struct result_node {
    struct sampler_tick tick;
    void *result;
    struct result_node *next;
};

/* A blocking sampler's shared state. Owned jointly by its thread and the
 * runner (refs); the last to let go frees it, so a thread left running past
 * the end of the run never touches freed memory. Every field below mu is
 * guarded by it; the lock is never held while a hook runs. */
struct worker {
    pthread_mutex_t mu;
    pthread_cond_t wake;        /* a boundary or the stop came (CLOCK_MONOTONIC) */
    pthread_cond_t finished_cv; /* the thread is done (CLOCK_MONOTONIC) */
    struct sampler s;           /* a copy: the thread never reads the caller's struct */
    pthread_t th;
    bool have_thread;           /* set and read by the runner only */
    int refs;
    /* boundaries forwarded by the loop, taken in order */
    struct sampler_tick boundary[SAMPLER_N_BOUNDARIES];
    int n_boundary, next_boundary;
    int64_t next_slot;          /* the oldest periodic slot not yet taken or skipped */
    bool stop;                  /* the after-last boundary is queued: no more periodic samples */
    bool finished;              /* the thread returned from its last hook */
    bool abandoned;             /* the runner stopped waiting: discard results, do not wake it */
    bool hurry;                 /* sampler_runner_hurry: every tick from now on has hurry set */
    struct result_node *head, **tail;
    int wake_fd;                /* the runner's eventfd */
    struct sampler_report rep;  /* the thread's counts (collected is the runner's) */
};

/* One sampler in the runner. */
struct entry {
    struct sampler *s;          /* the caller's */
    struct sampler_report rep;  /* inline: live; blocking: copied from w at each collection */
    struct worker *w;           /* blocking samplers only; NULL once released */
    struct event *timer;        /* inline samplers with a period */
    int64_t next_slot;          /* inline: the slot the timer is armed for */
    long collected;             /* blocking: results collected on the loop */
    bool late;                  /* blocking: did not stop in time */
    bool hurry;                 /* inline: sampler_runner_hurry was called */
};

enum runner_state { R_NEW, R_RUNNING, R_STOPPED };

struct sampler_runner {
    struct event_base *base;
    struct entry *e;
    int n;
    int efd;                    /* eventfd the threads write when a result is queued; -1 when none */
    struct event *wake;
    enum runner_state state;
    int next_phase;             /* the next boundary to take */
    int64_t last_t;             /* the instant of the last boundary taken */
};

const char *sampler_phase_name(enum sampler_phase p)
{
    static const char *const names[] = {"before_warmup", "window_start", "window_end", "after_last",
                                        "periodic"};
    return (unsigned)p < sizeof names / sizeof *names ? names[p] : "?";
}

const char *sampler_state_name(enum sampler_state s)
{
    static const char *const names[] = {"not_started", "running", "stopped", "start_failed",
                                        "stop_timed_out"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

static struct timespec ns_to_timespec(int64_t ns)
{
    return (struct timespec){(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
}

static void discard(const struct sampler *s, void *result)
{
    if (s->discard)
        s->discard(s->ud, result);
    else
        free(result);
}

static void account(struct sampler_report *rep, const struct sampler_tick *t)
{
    rep->samples++;
    if (t->t_taken - t->t_due > rep->max_late_ns)
        rep->max_late_ns = t->t_taken - t->t_due;
}

/* ---- inline samplers: on the loop ---- */

static bool inline_running(const struct entry *e)
{
    return !e->s->may_block && e->rep.state == SAMPLER_RUNNING;
}

/* A blocking sampler whose thread the runner still waits for. */
static bool has_thread(const struct entry *e)
{
    return e->w && e->w->have_thread;
}

/* Calls the sample hook now for (phase, t_due) and hands its result over.
 * O(1) plus the hooks. */
static void inline_take(struct entry *e, enum sampler_phase phase, int64_t t_due, int64_t now)
{
    struct sampler *s = e->s;
    struct sampler_tick t = {phase, t_due, now, e->hurry};
    void *res = s->sample(s->ud, &t);
    account(&e->rep, &t);
    if (!res)
        return;
    if (s->collect) {
        s->collect(s->ud, &t, res);
        e->rep.collected++;
    }
    else {
        discard(s, res);
        e->rep.discarded++;
    }
}

/* Arms e's timer for its next slot, never early: libevent counts a timer
 * from the loop pass's cached time — a whole pass of callbacks old by now,
 * and it would fire that much early — so the cache is refreshed first; both
 * it and the timeval are truncated to the µs, hence 2 µs more. */
static void arm_slot(struct entry *e, int64_t now)
{
    event_base_update_cache_time(event_get_base(e->timer));
    int64_t wait = e->next_slot - now;
    struct timeval tv = ns_to_timeval((wait > 0 ? wait : 0) + 2000);
    evtimer_add(e->timer, &tv);
}

/* An inline sampler's timer: the sample is for the slot it was armed for
 * (so t_taken − t_due is how late the loop ran it); slots the loop ran past
 * are skipped. */
static void on_inline_slot(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct entry *e = arg;
    int64_t now = clock_now_ns(), p = e->s->period_ns;
    inline_take(e, SAMPLER_PERIODIC, e->next_slot, now);
    e->next_slot += p;
    if (e->next_slot <= now) {
        int64_t k = (now - e->next_slot) / p + 1;
        e->next_slot += k * p;
        e->rep.periodic_skipped += (long)k;
    }
    arm_slot(e, clock_now_ns());
}

/* At the stop: a slot that came due by t_end but whose timer the loop never
 * ran (it was busy until the run ended, or ended first) is taken now, for
 * that slot — a stall at a run's very end is lag like any other — and
 * before the after-last boundary, in order of t_due. Slots it ran past are
 * skipped, as on_inline_slot skips them. */
static void inline_overdue(struct entry *e, int64_t t_end)
{
    if (!e->timer || !inline_running(e) || e->next_slot > t_end)
        return;
    int64_t now = clock_now_ns(), p = e->s->period_ns;
    int64_t newest = e->next_slot + (t_end - e->next_slot) / p * p;
    e->rep.periodic_skipped += (long)((newest - e->next_slot) / p);
    inline_take(e, SAMPLER_PERIODIC, e->next_slot, now);
    e->next_slot = newest + p;
}

static void inline_start(struct entry *e, int64_t t)
{
    struct sampler *s = e->s;
    struct sampler_tick st = {SAMPLER_BEFORE_WARMUP, t, clock_now_ns()};
    if (s->start && s->start(s->ud, &st) != 0) {
        e->rep.state = SAMPLER_START_FAILED;
        return;
    }
    e->rep.state = SAMPLER_RUNNING;
    inline_take(e, SAMPLER_BEFORE_WARMUP, t, clock_now_ns());
    if (e->timer) {
        e->next_slot = t + s->period_ns;
        arm_slot(e, clock_now_ns());
    }
}

static void inline_stop(struct entry *e, int64_t t)
{
    if (e->timer)
        evtimer_del(e->timer);
    if (!inline_running(e))
        return;
    struct sampler_tick st = {SAMPLER_AFTER_LAST, t, clock_now_ns()};
    if (e->s->stop)
        e->s->stop(e->s->ud, &st);
    e->rep.state = SAMPLER_STOPPED;
}

/* ---- blocking samplers: on their own thread ---- */

static void worker_free(struct worker *w)
{
    while (w->head) {
        struct result_node *n = w->head;
        w->head = n->next;
        discard(&w->s, n->result);
        free(n);
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->finished_cv);
    free(w);
}

/* Drops one reference (mu not held); frees w with the last. */
static void worker_release(struct worker *w)
{
    pthread_mutex_lock(&w->mu);
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (last)
        worker_free(w);
}

static struct worker *worker_new(const struct sampler *s, int wake_fd)
{
    struct worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&w->mu, NULL);
    if (rc == 0 && (rc = pthread_cond_init(&w->wake, &ca)) != 0)
        pthread_mutex_destroy(&w->mu);
    if (rc == 0 && (rc = pthread_cond_init(&w->finished_cv, &ca)) != 0) {
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->mu);
    }
    pthread_condattr_destroy(&ca);
    if (rc != 0) {
        free(w);
        return NULL;
    }
    w->s = *s;
    w->refs = 1;
    w->tail = &w->head;
    w->wake_fd = wake_fd;
    w->rep.name = s->name;
    return w;
}

/* With mu held: waits for the next thing to sample and fills *t (t_taken
 * unset). Boundaries and periodic slots go in order of t_due; a periodic
 * sample is for the newest slot come due. Returns false once the after-last
 * boundary has been taken. */
static bool next_tick(struct worker *w, struct sampler_tick *t)
{
    int64_t p = w->s.period_ns;
    for (;;) {
        int64_t now = clock_now_ns(), slot = 0;
        bool slot_due = p > 0 && !w->stop && w->next_slot <= now;
        if (slot_due)
            slot = w->next_slot + (now - w->next_slot) / p * p;
        bool boundary = w->next_boundary < w->n_boundary;
        if (boundary && !(slot_due && slot < w->boundary[w->next_boundary].t_due)) {
            *t = w->boundary[w->next_boundary++];
            t->hurry = w->hurry;
            return true;
        }
        if (slot_due) {
            *t = (struct sampler_tick){SAMPLER_PERIODIC, slot, 0, w->hurry};
            w->rep.periodic_skipped += (long)((slot - w->next_slot) / p);
            w->next_slot = slot + p;
            return true;
        }
        if (w->stop)
            return false;
        if (p > 0) {
            struct timespec ts = ns_to_timespec(w->next_slot);
            pthread_cond_timedwait(&w->wake, &w->mu, &ts);
        }
        else {
            pthread_cond_wait(&w->wake, &w->mu);
        }
    }
}

/* With mu held: queues a result for the loop and wakes it, or discards the
 * result (mu released meanwhile) when nobody will collect it. */
static void worker_hand_over(struct worker *w, const struct sampler_tick *t, void *res)
{
    struct result_node *n = w->s.collect && !w->abandoned ? malloc(sizeof *n) : NULL;
    if (!n) {
        w->rep.discarded++;
        pthread_mutex_unlock(&w->mu);
        discard(&w->s, res);
        pthread_mutex_lock(&w->mu);
        return;
    }
    *n = (struct result_node){*t, res, NULL};
    *w->tail = n;
    w->tail = &n->next;
    uint64_t one = 1;
    ssize_t rc = write(w->wake_fd, &one, sizeof one);   /* EAGAIN: the loop has a wake-up pending anyway */
    (void)rc;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct sampler_tick t = w->boundary[0];
    t.t_taken = clock_now_ns();
    bool ok = !w->s.start || w->s.start(w->s.ud, &t) == 0;
    pthread_mutex_lock(&w->mu);
    w->rep.state = ok ? SAMPLER_RUNNING : SAMPLER_START_FAILED;
    while (ok && next_tick(w, &t)) {
        pthread_mutex_unlock(&w->mu);
        t.t_taken = clock_now_ns();
        void *res = w->s.sample(w->s.ud, &t);
        pthread_mutex_lock(&w->mu);
        account(&w->rep, &t);
        if (res)
            worker_hand_over(w, &t, res);
    }
    pthread_mutex_unlock(&w->mu);
    if (ok && w->s.stop) {
        t.t_taken = clock_now_ns();     /* t is the after-last boundary's tick */
        w->s.stop(w->s.ud, &t);
    }
    pthread_mutex_lock(&w->mu);
    if (ok)
        w->rep.state = SAMPLER_STOPPED;
    w->finished = true;
    pthread_cond_broadcast(&w->finished_cv);
    pthread_mutex_unlock(&w->mu);
    worker_release(w);
    return NULL;
}

static void worker_forward(struct worker *w, enum sampler_phase phase, int64_t t)
{
    pthread_mutex_lock(&w->mu);
    if (w->n_boundary < SAMPLER_N_BOUNDARIES)
        w->boundary[w->n_boundary++] = (struct sampler_tick){phase, t, 0};
    if (phase == SAMPLER_AFTER_LAST)
        w->stop = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mu);
}

/* Creates e's thread with every signal blocked (signals belong to the
 * loop's thread). */
static void worker_start(struct entry *e, int64_t t)
{
    struct worker *w = e->w;
    w->boundary[0] = (struct sampler_tick){SAMPLER_BEFORE_WARMUP, t, 0};
    w->n_boundary = 1;
    w->next_slot = t + w->s.period_ns;
    w->refs = 2;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    w->have_thread = pthread_create(&w->th, NULL, worker_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!w->have_thread) {
        w->refs = 1;
        e->rep.state = SAMPLER_START_FAILED;
        return;
    }
    e->rep.state = SAMPLER_RUNNING;
}

/* On the loop: takes every result the threads queued and hands each to its
 * sampler's collect; refreshes the reports. O(results). */
static void collect_all(struct sampler_runner *r)
{
    for (int i = 0; i < r->n; i++) {
        struct entry *e = &r->e[i];
        if (!has_thread(e))
            continue;
        pthread_mutex_lock(&e->w->mu);
        struct result_node *n = e->w->head;
        e->w->head = NULL;
        e->w->tail = &e->w->head;
        e->rep = e->w->rep;
        pthread_mutex_unlock(&e->w->mu);
        while (n) {
            struct result_node *next = n->next;
            e->s->collect(e->s->ud, &n->tick, n->result);
            e->collected++;
            free(n);
            n = next;
        }
        e->rep.collected = e->collected;
    }
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    uint64_t v;
    ssize_t rc = read(fd, &v, sizeof v);    /* resets the count; EAGAIN when already read */
    (void)rc;
    collect_all(arg);
}

/* ---- the runner ---- */

struct sampler_runner *sampler_runner_new(struct event_base *base, struct sampler *const *samplers, int n)
{
    if (n < 0 || (n > 0 && !samplers))
        return NULL;
    for (int i = 0; i < n; i++)
        if (!samplers[i] || !samplers[i]->sample || samplers[i]->period_ns < 0)
            return NULL;
    struct sampler_runner *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->base = base;
    r->efd = -1;
    r->n = n;
    if (n && !(r->e = calloc((size_t)n, sizeof *r->e)))
        goto fail;
    bool any_blocking = false;
    for (int i = 0; i < n; i++)
        any_blocking |= samplers[i]->may_block;
    if (any_blocking) {
        if ((r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
            !(r->wake = event_new(base, r->efd, EV_READ | EV_PERSIST, on_wake, r)))
            goto fail;
    }
    for (int i = 0; i < n; i++) {
        struct entry *e = &r->e[i];
        e->s = samplers[i];
        e->rep.name = e->s->name;
        if (e->s->may_block ? !(e->w = worker_new(e->s, r->efd))
                            : e->s->period_ns > 0 && !(e->timer = evtimer_new(base, on_inline_slot, e)))
            goto fail;
    }
    return r;
fail:
    sampler_runner_free(r);
    return NULL;
}

int sampler_runner_start(struct sampler_runner *r, int64_t t_ns)
{
    if (r->state != R_NEW)
        return -1;
    r->state = R_RUNNING;
    r->next_phase = SAMPLER_WINDOW_START;
    r->last_t = t_ns;
    if (r->wake)
        event_add(r->wake, NULL);
    for (int i = 0; i < r->n; i++)      /* threads first: their start hooks overlap the rest */
        if (r->e[i].s->may_block)
            worker_start(&r->e[i], t_ns);
    for (int i = 0; i < r->n; i++)
        if (!r->e[i].s->may_block)
            inline_start(&r->e[i], t_ns);
    return 0;
}

/* Takes the boundaries from the next one through phase, all at t. */
static void take_through(struct sampler_runner *r, enum sampler_phase phase, int64_t t)
{
    if (t < r->last_t)
        t = r->last_t;
    for (; r->next_phase <= (int)phase; r->next_phase++) {
        for (int i = 0; i < r->n; i++)
            if (has_thread(&r->e[i]))
                worker_forward(r->e[i].w, (enum sampler_phase)r->next_phase, t);
        for (int i = 0; i < r->n; i++)
            if (inline_running(&r->e[i]))
                inline_take(&r->e[i], (enum sampler_phase)r->next_phase, t, clock_now_ns());
    }
    r->last_t = t;
}

int sampler_runner_phase(struct sampler_runner *r, enum sampler_phase phase, int64_t t_ns)
{
    if (r->state != R_RUNNING || (phase != SAMPLER_WINDOW_START && phase != SAMPLER_WINDOW_END) ||
        (int)phase < r->next_phase)
        return -1;
    take_through(r, phase, t_ns);
    return 0;
}

/* Waits until deadline for e's thread: joins it, or leaves it running and
 * marks it abandoned (it then discards what it returns). Returns true when
 * it stopped in time. */
static bool worker_wait(struct entry *e, int64_t deadline)
{
    struct worker *w = e->w;
    struct timespec ts = ns_to_timespec(deadline);
    pthread_mutex_lock(&w->mu);
    while (!w->finished && pthread_cond_timedwait(&w->finished_cv, &w->mu, &ts) != ETIMEDOUT)
        ;
    bool finished = w->finished;
    if (!finished)
        w->abandoned = true;
    pthread_mutex_unlock(&w->mu);
    if (finished)
        pthread_join(w->th, NULL);
    else
        pthread_detach(w->th);
    return finished;
}

int sampler_runner_stop(struct sampler_runner *r, int64_t t_ns, int64_t wait_ns)
{
    if (r->state != R_RUNNING)
        return -1;
    for (int i = 0; i < r->n; i++)
        inline_overdue(&r->e[i], t_ns);
    take_through(r, SAMPLER_AFTER_LAST, t_ns);
    for (int i = 0; i < r->n; i++)
        if (!r->e[i].s->may_block)
            inline_stop(&r->e[i], r->last_t);
    int64_t deadline = clock_now_ns() + (wait_ns > 0 ? wait_ns : 0);
    for (int i = 0; i < r->n; i++)
        r->e[i].late = has_thread(&r->e[i]) && !worker_wait(&r->e[i], deadline);
    collect_all(r);     /* everything queued, including by threads left running */
    int late = 0;
    for (int i = 0; i < r->n; i++) {
        if (!r->e[i].late)
            continue;
        late++;
        r->e[i].rep.state = SAMPLER_STOP_TIMED_OUT;
        worker_release(r->e[i].w);      /* the thread frees it when it ends */
        r->e[i].w = NULL;
    }
    if (r->wake)
        event_del(r->wake);
    r->state = R_STOPPED;
    return late;
}

void sampler_runner_hurry(struct sampler_runner *r)
{
    for (int i = 0; r && i < r->n; i++) {
        struct entry *e = &r->e[i];
        e->hurry = true;
        if (!e->w)
            continue;
        pthread_mutex_lock(&e->w->mu);
        e->w->hurry = true;
        pthread_mutex_unlock(&e->w->mu);
    }
}

const struct sampler_report *sampler_runner_report(const struct sampler_runner *r, int i)
{
    return i >= 0 && i < r->n ? &r->e[i].rep : NULL;
}

void sampler_runner_free(struct sampler_runner *r)
{
    if (!r)
        return;
    if (r->state == R_RUNNING)
        sampler_runner_stop(r, clock_now_ns(), 0);
    for (int i = 0; r->e && i < r->n; i++) {
        if (r->e[i].w)
            worker_release(r->e[i].w);
        if (r->e[i].timer)
            event_free(r->e[i].timer);
    }
    if (r->wake)
        event_free(r->wake);
    if (r->efd >= 0)
        close(r->efd);
    free(r->e);
    free(r);
}
