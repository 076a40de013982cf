/* test_sampler.c — the sampler runner on a real libevent loop: every phase
 * once and in order with non-decreasing times, periodic samples on their
 * grid, blocking samplers off the loop with their results collected on it,
 * and a stop that joins — or gives up on a thread that does not finish and
 * says so. Time bounds are generous (tens of ms): the machine is shared. */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <event2/event.h>

#include "core/clock.h"
#include "load/sampler.h"

#define MAXC 1024
#define MS 1000000LL

enum hook { H_START, H_SAMPLE, H_STOP };

struct call {
    enum hook hook;
    struct sampler_tick t;
    bool on_main;           /* ran on the test's (the loop's) thread */
};

/* What a test sampler does, and everything it saw. */
struct recorder {
    pthread_mutex_t mu;
    struct call calls[MAXC];
    int n;
    int sleep_ms;           /* each sample takes this long */
    int start_rc;
    bool results;           /* each sample returns a result */
    sem_t *hold_stop;       /* the stop hook waits for it */
    sem_t *hold_after_last; /* the after-last sample waits for it */
    sem_t *finished;        /* posted as the stop hook or the held sample returns */
    struct call got[MAXC];  /* results collected, with their ticks */
    int n_got;
    int discarded;
};

static pthread_t main_thread;

static bool tick_eq(const struct sampler_tick *a, const struct sampler_tick *b)
{
    return a->phase == b->phase && a->t_due == b->t_due && a->t_taken == b->t_taken;
}

/* A loop like the driver's: precise (timerfd, CLOCK_MONOTONIC) timers; the
 * default coarse clock lags by up to a jiffy and fires timers that early. */
static struct event_base *precise_base(void)
{
    struct event_config *ec = event_config_new();
    cr_assert(ec);
    event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
    struct event_base *b = event_base_new_with_config(ec);
    event_config_free(ec);
    cr_assert(b);
    return b;
}

static void recorder_init(struct recorder *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    main_thread = pthread_self();
}

static void note(struct recorder *r, enum hook h, const struct sampler_tick *t)
{
    pthread_mutex_lock(&r->mu);
    if (r->n < MAXC)
        r->calls[r->n++] = (struct call){h, *t, pthread_equal(pthread_self(), main_thread)};
    pthread_mutex_unlock(&r->mu);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int rec_start(void *ud, const struct sampler_tick *t)
{
    struct recorder *r = ud;
    note(r, H_START, t);
    return r->start_rc;
}

static void *rec_sample(void *ud, const struct sampler_tick *t)
{
    struct recorder *r = ud;
    note(r, H_SAMPLE, t);
    if (r->hold_after_last && t->phase == SAMPLER_AFTER_LAST) {
        sem_wait(r->hold_after_last);
        sem_post(r->finished);
    }
    if (r->sleep_ms)
        sleep_ms(r->sleep_ms);
    if (!r->results)
        return NULL;
    struct call *c = malloc(sizeof *c);
    cr_assert(c);
    *c = (struct call){H_SAMPLE, *t, pthread_equal(pthread_self(), main_thread)};
    return c;
}

static void rec_stop(void *ud, const struct sampler_tick *t)
{
    struct recorder *r = ud;
    note(r, H_STOP, t);
    if (r->hold_stop) {
        sem_wait(r->hold_stop);
        sem_post(r->finished);
    }
}

static void rec_collect(void *ud, const struct sampler_tick *t, void *result)
{
    struct recorder *r = ud;
    struct call *c = result;
    cr_assert(pthread_equal(pthread_self(), main_thread), "collect runs on the loop's thread");
    cr_assert(tick_eq(&c->t, t), "the result comes with the tick it was taken for");
    if (r->n_got < MAXC)
        r->got[r->n_got++] = *c;
    free(c);
}

static void rec_discard(void *ud, void *result)
{
    struct recorder *r = ud;
    pthread_mutex_lock(&r->mu);
    r->discarded++;
    pthread_mutex_unlock(&r->mu);
    free(result);
}

static struct sampler make_sampler(struct recorder *r, const char *name, int64_t period_ns, bool may_block)
{
    return (struct sampler){.name = name, .period_ns = period_ns, .may_block = may_block, .start = rec_start,
                            .sample = rec_sample, .stop = rec_stop, .collect = rec_collect,
                            .discard = rec_discard, .ud = r};
}

/* A scripted run: the boundaries at the given offsets from the start (ms),
 * then the loop ends at end_ms and the runner is stopped. */
struct script {
    struct event_base *base;
    struct sampler_runner *runner;
    int64_t t0;
    int64_t phase_t[SAMPLER_N_BOUNDARIES];      /* when each was given */
    int64_t longest_call_ns;                    /* the slowest sampler_runner_phase call */
};

struct step {
    struct script *s;
    enum sampler_phase phase;
};

static void on_step(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct step *st = arg;
    int64_t t = clock_now_ns();
    cr_assert_eq(sampler_runner_phase(st->s->runner, st->phase, t), 0);
    int64_t took = clock_now_ns() - t;
    if (took > st->s->longest_call_ns)
        st->s->longest_call_ns = took;
    st->s->phase_t[st->phase] = t;
}

static void at_ms(struct script *s, int ms, event_callback_fn fn, void *arg)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    cr_assert_eq(event_base_once(s->base, -1, EV_TIMEOUT, fn, arg, &tv), 0);
}

/* Runs samplers through before-warm-up, window start at ws_ms, window end
 * at we_ms, after-last at end_ms; stops with wait_ms. Returns stop's value. */
static int run_script(struct script *s, struct sampler *const *list, int n, int ws_ms, int we_ms, int end_ms,
                      int wait_ms)
{
    memset(s, 0, sizeof *s);
    s->base = precise_base();
    cr_assert(s->base);
    s->runner = sampler_runner_new(s->base, list, n);
    cr_assert(s->runner);
    static struct step ws, we;
    ws = (struct step){s, SAMPLER_WINDOW_START};
    we = (struct step){s, SAMPLER_WINDOW_END};
    s->t0 = s->phase_t[SAMPLER_BEFORE_WARMUP] = clock_now_ns();
    cr_assert_eq(sampler_runner_start(s->runner, s->t0), 0);
    at_ms(s, ws_ms, on_step, &ws);
    at_ms(s, we_ms, on_step, &we);
    struct timeval tv = {end_ms / 1000, (end_ms % 1000) * 1000};
    event_base_loopexit(s->base, &tv);
    event_base_dispatch(s->base);
    s->phase_t[SAMPLER_AFTER_LAST] = clock_now_ns();
    return sampler_runner_stop(s->runner, s->phase_t[SAMPLER_AFTER_LAST], (int64_t)wait_ms * MS);
}

static void script_free(struct script *s)
{
    sampler_runner_free(s->runner);
    event_base_free(s->base);
}

/* The calls a recorder saw: start first, stop last, each boundary sampled
 * exactly once in order at the instant it was given, t_taken never
 * decreasing, boundaries' t_due never decreasing, periodic slots on the
 * grid t0 + k × period. Returns the periodic samples. */
static int check_sequence(const struct recorder *r, const struct script *s, int64_t period, bool on_main)
{
    cr_assert_gt(r->n, 2);
    cr_assert_eq(r->calls[0].hook, H_START);
    cr_assert_eq(r->calls[0].t.phase, SAMPLER_BEFORE_WARMUP);
    cr_assert_eq(r->calls[r->n - 1].hook, H_STOP);
    cr_assert_eq(r->calls[r->n - 1].t.phase, SAMPLER_AFTER_LAST);
    int next = 0, periodic = 0;
    int64_t last_slot = s->t0;
    for (int i = 0; i < r->n; i++) {
        const struct call *c = &r->calls[i];
        cr_assert_eq(c->on_main, on_main, "call %d ran on the %s thread", i, c->on_main ? "loop's" : "other");
        if (i > 0)
            cr_assert_geq(c->t.t_taken, r->calls[i - 1].t.t_taken, "call %d taken before call %d", i, i - 1);
        if (c->hook != H_SAMPLE) {
            cr_assert(i == 0 || i == r->n - 1, "start or stop at call %d", i);
            continue;
        }
        if (c->t.phase == SAMPLER_PERIODIC) {
            cr_assert_gt(c->t.t_due, last_slot, "periodic slots go forward");
            cr_assert_eq((c->t.t_due - s->t0) % period, 0, "slot %lld ns off the grid",
                         (long long)(c->t.t_due - s->t0));
            cr_assert_lt(c->t.t_due, s->phase_t[SAMPLER_AFTER_LAST], "no slot after the last boundary");
            last_slot = c->t.t_due;
            periodic++;
            continue;
        }
        cr_assert_eq(c->t.phase, next, "boundary %s came where %s was due", sampler_phase_name(c->t.phase),
                     sampler_phase_name(next));
        cr_assert_eq(c->t.t_due, s->phase_t[next], "%s at the instant it was given", sampler_phase_name(next));
        cr_assert_geq(c->t.t_taken, c->t.t_due);
        next++;
    }
    cr_assert_eq(next, SAMPLER_N_BOUNDARIES, "every boundary sampled once");
    return periodic;
}

Test(sampler, inline_sees_every_phase_once_in_order_and_periodic_slots_on_time)
{
    static struct recorder r;
    recorder_init(&r);
    struct sampler s = make_sampler(&r, "inline", 10 * MS, false);
    struct sampler *list[] = {&s};
    struct script sc;
    cr_assert_eq(run_script(&sc, list, 1, 50, 150, 300, 1000), 0);
    int periodic = check_sequence(&r, &sc, 10 * MS, true);
    /* 300 ms at 10 ms: 29 slots; generous for a loaded machine */
    cr_assert(periodic >= 15 && periodic <= 30, "%d periodic samples in 300 ms at 10 ms", periodic);
    for (int i = 0; i < r.n; i++)
        if (r.calls[i].t.phase == SAMPLER_PERIODIC && r.calls[i].hook == H_SAMPLE)
            cr_assert_lt(r.calls[i].t.t_taken - r.calls[i].t.t_due, 50 * MS, "a slot taken %lld ms late",
                         (long long)((r.calls[i].t.t_taken - r.calls[i].t.t_due) / MS));
    const struct sampler_report *rep = sampler_runner_report(sc.runner, 0);
    cr_assert_eq(rep->state, SAMPLER_STOPPED);
    cr_assert_eq(rep->samples, r.n - 2);
    cr_assert_eq(rep->collected, 0);
    cr_assert_str_eq(rep->name, "inline");
    script_free(&sc);
}

/* A loop callback that hogs the loop for 60 ms. */
static void on_hog(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    sleep_ms(60);
}

Test(sampler, inline_slot_late_by_a_busy_loop_shows_the_lag_and_skips_what_it_ran_past)
{
    static struct recorder r;
    recorder_init(&r);
    struct sampler s = make_sampler(&r, "lag", 10 * MS, false);
    struct sampler *list[] = {&s};
    struct script sc;
    memset(&sc, 0, sizeof sc);
    sc.base = precise_base();
    sc.runner = sampler_runner_new(sc.base, list, 1);
    cr_assert(sc.runner);
    sc.t0 = clock_now_ns();
    cr_assert_eq(sampler_runner_start(sc.runner, sc.t0), 0);
    at_ms(&sc, 35, on_hog, NULL);
    struct timeval tv = {0, 200000};
    event_base_loopexit(sc.base, &tv);
    event_base_dispatch(sc.base);
    cr_assert_eq(sampler_runner_stop(sc.runner, clock_now_ns(), 0), 0);
    int64_t worst = 0;
    for (int i = 0; i < r.n; i++)
        if (r.calls[i].t.phase == SAMPLER_PERIODIC && r.calls[i].t.t_taken - r.calls[i].t.t_due > worst)
            worst = r.calls[i].t.t_taken - r.calls[i].t.t_due;
    cr_assert_geq(worst, 45 * MS, "the 60 ms stall shows as lag (worst %lld ms)", (long long)(worst / MS));
    const struct sampler_report *rep = sampler_runner_report(sc.runner, 0);
    cr_assert_geq(rep->periodic_skipped, 4, "the slots the stall ran past are skipped, not taken in a burst");
    cr_assert_eq(rep->max_late_ns, worst);
    script_free(&sc);
}

/* The run's last callback: the loop is busy 40 ms, then the run ends. */
static void on_last_stall(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    sleep_ms(40);
    event_base_loopbreak(arg);
}

/* A stall at the very end of a run: the 10 ms slot comes due during it and
 * the loop stops before its timer can run. The stop takes that overdue
 * slot, so the lag probe shows the stall (before, it took no sample). */
Test(sampler, an_overdue_slot_is_taken_at_stop)
{
    static struct recorder r;
    recorder_init(&r);
    struct sampler s = make_sampler(&r, "lag", 10 * MS, false);
    struct sampler *list[] = {&s};
    struct script sc;
    memset(&sc, 0, sizeof sc);
    sc.base = precise_base();
    sc.runner = sampler_runner_new(sc.base, list, 1);
    cr_assert(sc.runner);
    sc.t0 = clock_now_ns();
    cr_assert_eq(sampler_runner_start(sc.runner, sc.t0), 0);
    at_ms(&sc, 2, on_last_stall, sc.base);
    event_base_dispatch(sc.base);
    int64_t end = clock_now_ns();
    cr_assert_eq(sampler_runner_stop(sc.runner, end, 0), 0);
    int periodic = 0, after_last = -1, slot = -1;
    for (int i = 0; i < r.n; i++) {
        if (r.calls[i].hook != H_SAMPLE)
            continue;
        if (r.calls[i].t.phase == SAMPLER_PERIODIC) {
            periodic++;
            slot = i;
        } else if (r.calls[i].t.phase == SAMPLER_AFTER_LAST) {
            after_last = i;
        }
    }
    cr_assert_eq(periodic, 1, "the overdue slot is taken once (%d periodic samples)", periodic);
    const struct sampler_tick *t = &r.calls[slot].t;
    cr_assert_eq(t->t_due, sc.t0 + 10 * MS, "it is the 10 ms slot");
    cr_assert_geq(t->t_taken - t->t_due, 25 * MS, "the stall shows as lag (%lld ms)",
                  (long long)((t->t_taken - t->t_due) / MS));
    cr_assert_lt(slot, after_last, "in order of t_due: before the after-last boundary");
    cr_assert_eq(sampler_runner_report(sc.runner, 0)->max_late_ns, t->t_taken - t->t_due);
    script_free(&sc);
}

static void on_hog_5ms(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    sleep_ms(5);
}

static void on_stall_6ms(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    sleep_ms(6);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

/* A stall at 5 ms makes the next loop pass (at 11 ms) find a 5 ms hog (due
 * at 9 ms) and the 10 ms slot both expired; the slot runs after the hog, at
 * 16 ms, and arms the 20 ms slot. Counted from the pass's cached time (11
 * ms) that timer is due at 15 ms, and the next pass a 1 ms ticker causes
 * would take the sample 4–5 ms before its slot. */
Test(sampler, inline_slots_are_never_taken_before_they_are_due)
{
    static struct recorder r;
    recorder_init(&r);
    struct sampler s = make_sampler(&r, "lag", 10 * MS, false);
    struct sampler *list[] = {&s};
    struct script sc;
    memset(&sc, 0, sizeof sc);
    sc.base = precise_base();
    sc.runner = sampler_runner_new(sc.base, list, 1);
    cr_assert(sc.runner);
    sc.t0 = clock_now_ns();
    cr_assert_eq(sampler_runner_start(sc.runner, sc.t0), 0);
    at_ms(&sc, 5, on_stall_6ms, NULL);
    at_ms(&sc, 9, on_hog_5ms, NULL);
    struct event *ticker = event_new(sc.base, -1, EV_PERSIST, on_tick, NULL);
    struct timeval ms1 = {0, 1000};
    event_add(ticker, &ms1);
    struct timeval tv = {0, 100000};
    event_base_loopexit(sc.base, &tv);
    event_base_dispatch(sc.base);
    event_free(ticker);
    cr_assert_eq(sampler_runner_stop(sc.runner, clock_now_ns(), 0), 0);
    int periodic = 0;
    for (int i = 0; i < r.n; i++) {
        const struct sampler_tick *t = &r.calls[i].t;
        if (t->phase != SAMPLER_PERIODIC)
            continue;
        periodic++;
        cr_assert_geq(t->t_taken, t->t_due, "slot %d taken %.3f ms before it was due", periodic,
                      (double)(t->t_due - t->t_taken) / 1e6);
    }
    cr_assert_geq(periodic, 5);
    script_free(&sc);
}

Test(sampler, blocking_sampler_runs_off_the_loop_and_its_results_reach_the_loop)
{
    static struct recorder slow, probe;
    recorder_init(&slow);
    recorder_init(&probe);
    slow.sleep_ms = 150;
    slow.results = true;
    struct sampler b = make_sampler(&slow, "slow", 20 * MS, true);
    struct sampler p = make_sampler(&probe, "probe", 5 * MS, false);
    struct sampler *list[] = {&b, &p};
    struct script sc;
    cr_assert_eq(run_script(&sc, list, 2, 100, 400, 600, 2000), 0);
    check_sequence(&slow, &sc, 20 * MS, false);
    check_sequence(&probe, &sc, 5 * MS, true);
    /* the loop never waited for the 150 ms samples */
    cr_assert_lt(sc.longest_call_ns, 50 * MS, "a boundary call took %lld ms",
                 (long long)(sc.longest_call_ns / MS));
    const struct sampler_report *pr = sampler_runner_report(sc.runner, 1);
    cr_assert_lt(pr->max_late_ns, 100 * MS, "the inline probe was held up %lld ms",
                 (long long)(pr->max_late_ns / MS));
    /* every sample's result arrived, on the loop, in order, boundaries at their instants */
    const struct sampler_report *br = sampler_runner_report(sc.runner, 0);
    cr_assert_eq(br->state, SAMPLER_STOPPED);
    cr_assert_eq(slow.n_got, slow.n - 2, "%d results for %d samples", slow.n_got, slow.n - 2);
    cr_assert_eq(br->collected, slow.n_got);
    cr_assert_eq(br->samples, slow.n - 2);
    int boundaries = 0;
    for (int i = 0; i < slow.n_got; i++) {
        cr_assert(tick_eq(&slow.got[i].t, &slow.calls[i + 1].t), "result %d", i);
        cr_assert(!slow.got[i].on_main, "result %d was taken on the loop's thread", i);
        boundaries += slow.got[i].t.phase != SAMPLER_PERIODIC;
    }
    cr_assert_eq(boundaries, SAMPLER_N_BOUNDARIES);
    /* a boundary forwarded while a sample ran is taken late, attributed to its instant */
    cr_assert_gt(br->max_late_ns, 0);
    cr_assert_gt(br->periodic_skipped, 0, "20 ms slots with 150 ms samples: older slots are skipped");
    cr_assert_eq(slow.discarded, 0);
    script_free(&sc);
}

/* The loop's collections during the run, before stop. */
struct midway {
    struct recorder *r;
    int seen;
};

static void on_midway(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct midway *m = arg;
    m->seen = m->r->n_got;
}

Test(sampler, blocking_results_are_collected_while_the_loop_runs)
{
    static struct recorder r;
    recorder_init(&r);
    r.results = true;
    r.sleep_ms = 5;
    struct sampler b = make_sampler(&r, "b", 20 * MS, true);
    struct sampler *list[] = {&b};
    struct script sc;
    memset(&sc, 0, sizeof sc);
    sc.base = precise_base();
    sc.runner = sampler_runner_new(sc.base, list, 1);
    cr_assert(sc.runner);
    cr_assert_eq(sampler_runner_start(sc.runner, clock_now_ns()), 0);
    struct midway m = {&r, 0};
    at_ms(&sc, 200, on_midway, &m);
    struct timeval tv = {0, 250000};
    event_base_loopexit(sc.base, &tv);
    event_base_dispatch(sc.base);
    cr_assert_gt(m.seen, 3, "only %d results had reached the loop after 200 ms", m.seen);
    cr_assert_eq(sampler_runner_stop(sc.runner, clock_now_ns(), 1000 * MS), 0);
    cr_assert_gt(r.n_got, m.seen);
    script_free(&sc);
}

Test(sampler, stop_joins_the_thread_after_its_stop_hook)
{
    static struct recorder r;
    recorder_init(&r);
    r.sleep_ms = 30;
    struct sampler b = make_sampler(&r, "b", 0, true);
    struct sampler *list[] = {&b};
    struct script sc;
    cr_assert_eq(run_script(&sc, list, 1, 10, 20, 50, 5000), 0);
    /* joined: the thread's calls are all in, stop last */
    cr_assert_eq(r.n, 2 + SAMPLER_N_BOUNDARIES, "boundaries only (period 0): %d calls", r.n);
    check_sequence(&r, &sc, 1, false);
    const struct sampler_report *rep = sampler_runner_report(sc.runner, 0);
    cr_assert_eq(rep->state, SAMPLER_STOPPED);
    cr_assert_eq(rep->samples, SAMPLER_N_BOUNDARIES);
    cr_assert_eq(rep->collected, 0);
    script_free(&sc);
}

/* A thread stuck in its stop hook or in its after-last sample: stop gives
 * up after the wait, reports it, and the runner can be freed while the
 * thread still runs; when the thread ends it frees its own state (ASan
 * would see a use after free) and discards its late result. */
static void stuck(bool in_stop)
{
    static struct recorder r;
    static sem_t hold, finished;
    recorder_init(&r);
    sem_init(&hold, 0, 0);
    sem_init(&finished, 0, 0);
    r.results = true;
    r.finished = &finished;
    if (in_stop)
        r.hold_stop = &hold;
    else
        r.hold_after_last = &hold;
    struct sampler b = make_sampler(&r, "stuck", 0, true);
    struct sampler *list[] = {&b};
    struct script sc;
    int64_t t = clock_now_ns();
    cr_assert_eq(run_script(&sc, list, 1, 10, 20, 40, 100), 1, "one sampler did not stop in time");
    int64_t took = clock_now_ns() - t;
    cr_assert_lt(took, 2000 * MS, "stop waited %lld ms for a stuck thread", (long long)(took / MS));
    const struct sampler_report *rep = sampler_runner_report(sc.runner, 0);
    cr_assert_eq(rep->state, SAMPLER_STOP_TIMED_OUT);
    cr_assert_str_eq(sampler_state_name(rep->state), "stop_timed_out");
    int before = r.n_got;
    cr_assert_eq(before, in_stop ? SAMPLER_N_BOUNDARIES : SAMPLER_N_BOUNDARIES - 1,
                 "the results returned before stop gave up are collected");
    script_free(&sc);
    sem_post(&hold);
    sem_wait(&finished);
    sleep_ms(100);      /* the thread returns and frees its state */
    cr_assert_eq(r.n_got, before);
    pthread_mutex_lock(&r.mu);
    int discarded = r.discarded;
    pthread_mutex_unlock(&r.mu);
    cr_assert_eq(discarded, in_stop ? 0 : 1, "the late after-last result is discarded");
}

Test(sampler, stop_gives_up_on_a_thread_stuck_in_its_stop_hook)
{
    stuck(true);
}

Test(sampler, stop_gives_up_on_a_thread_stuck_in_a_sample_and_discards_its_result)
{
    stuck(false);
}

Test(sampler, failed_start_is_reported_and_never_sampled)
{
    static struct recorder a, b;
    recorder_init(&a);
    recorder_init(&b);
    a.start_rc = b.start_rc = -1;
    struct sampler si = make_sampler(&a, "inline", 10 * MS, false);
    struct sampler sb = make_sampler(&b, "blocking", 10 * MS, true);
    struct sampler *list[] = {&si, &sb};
    struct script sc;
    cr_assert_eq(run_script(&sc, list, 2, 10, 20, 50, 1000), 0);
    cr_assert_eq(a.n, 1);
    cr_assert_eq(b.n, 1);
    cr_assert_eq(a.calls[0].hook, H_START);
    cr_assert_eq(b.calls[0].hook, H_START);
    cr_assert_eq(sampler_runner_report(sc.runner, 0)->state, SAMPLER_START_FAILED);
    cr_assert_eq(sampler_runner_report(sc.runner, 1)->state, SAMPLER_START_FAILED);
    cr_assert_eq(sampler_runner_report(sc.runner, 0)->samples, 0);
    script_free(&sc);
}

Test(sampler, boundaries_are_taken_once_in_order_whatever_the_caller_skips_or_repeats)
{
    static struct recorder a, b;
    recorder_init(&a);
    recorder_init(&b);
    struct sampler si = make_sampler(&a, "inline", 0, false);
    struct sampler sb = make_sampler(&b, "blocking", 0, true);
    struct sampler *list[] = {&si, &sb};
    struct event_base *base = precise_base();
    struct sampler_runner *r = sampler_runner_new(base, list, 2);
    cr_assert(r);
    cr_assert_eq(sampler_runner_phase(r, SAMPLER_WINDOW_START, 1), -1, "not started");
    cr_assert_eq(sampler_runner_start(r, 1000), 0);
    cr_assert_eq(sampler_runner_start(r, 1000), -1, "started twice");
    cr_assert_eq(sampler_runner_phase(r, SAMPLER_AFTER_LAST, 2000), -1, "after-last is stop's");
    cr_assert_eq(sampler_runner_phase(r, SAMPLER_WINDOW_END, 2000), 0);     /* window start skipped */
    cr_assert_eq(sampler_runner_phase(r, SAMPLER_WINDOW_START, 2500), -1, "already passed");
    cr_assert_eq(sampler_runner_stop(r, 1500, 1000 * MS), 0);              /* earlier than the last */
    cr_assert_eq(sampler_runner_stop(r, 3000, 0), -1, "stopped twice");
    const int64_t want[] = {1000, 2000, 2000, 2000};
    for (int k = 0; k < 2; k++) {
        const struct recorder *rec = k ? &b : &a;
        cr_assert_eq(rec->n, 2 + SAMPLER_N_BOUNDARIES);
        for (int i = 0; i < SAMPLER_N_BOUNDARIES; i++) {
            cr_assert_eq(rec->calls[i + 1].t.phase, i);
            cr_assert_eq(rec->calls[i + 1].t.t_due, want[i], "%s: %s at %lld", k ? "blocking" : "inline",
                         sampler_phase_name(i), (long long)rec->calls[i + 1].t.t_due);
        }
        cr_assert_eq(rec->calls[5].hook, H_STOP);
        cr_assert_eq(rec->calls[5].t.t_due, 2000);
    }
    sampler_runner_free(r);
    event_base_free(base);
}

Test(sampler, a_runner_never_started_or_never_stopped_frees_cleanly)
{
    static struct recorder a;
    recorder_init(&a);
    struct sampler sb = make_sampler(&a, "blocking", 10 * MS, true);
    struct sampler *list[] = {&sb};
    struct event_base *base = precise_base();
    struct sampler_runner *r = sampler_runner_new(base, list, 1);
    cr_assert(r);
    cr_assert_eq(sampler_runner_report(r, 0)->state, SAMPLER_NOT_STARTED);
    cr_assert_null(sampler_runner_report(r, 1));
    sampler_runner_free(r);
    cr_assert_eq(a.n, 0);
    r = sampler_runner_new(base, list, 1);
    cr_assert_eq(sampler_runner_start(r, clock_now_ns()), 0);
    sampler_runner_free(r);     /* stops with no wait: joined when quick, else left to free itself */
    sleep_ms(50);
    event_base_free(base);
}

Test(sampler, rejects_a_sampler_without_a_sample_hook_or_with_a_negative_period)
{
    struct event_base *base = precise_base();
    struct sampler bad = {.name = "bad"};
    struct sampler *list[] = {&bad};
    cr_assert_null(sampler_runner_new(base, list, 1));
    bad.sample = rec_sample;
    bad.period_ns = -1;
    cr_assert_null(sampler_runner_new(base, list, 1));
    struct sampler_runner *r = sampler_runner_new(base, NULL, 0);
    cr_assert(r, "no samplers is fine");
    sampler_runner_free(r);
    event_base_free(base);
}

Test(sampler, names)
{
    cr_assert_str_eq(sampler_phase_name(SAMPLER_BEFORE_WARMUP), "before_warmup");
    cr_assert_str_eq(sampler_phase_name(SAMPLER_AFTER_LAST), "after_last");
    cr_assert_str_eq(sampler_phase_name(SAMPLER_PERIODIC), "periodic");
    cr_assert_str_eq(sampler_phase_name((enum sampler_phase)9), "?");
    cr_assert_str_eq(sampler_state_name(SAMPLER_START_FAILED), "start_failed");
}

/* sampler_runner_hurry: the ticks given after it (boundaries and periodic
 * slots, blocking and inline samplers alike) say hurry, those before do
 * not — a scrape of a server that stopped answering is skipped instead of
 * waiting its timeout at every boundary still to come. */
Test(sampler, ticks_after_hurry_say_so)
{
    static struct recorder rb, ri;
    recorder_init(&rb);
    recorder_init(&ri);
    struct sampler b = make_sampler(&rb, "b", 0, true), i = make_sampler(&ri, "i", 0, false);
    struct sampler *list[] = {&b, &i};
    struct event_base *base = precise_base();
    struct sampler_runner *run = sampler_runner_new(base, list, 2);
    cr_assert(run);
    int64_t t0 = clock_now_ns();
    cr_assert_eq(sampler_runner_start(run, t0), 0);
    cr_assert_eq(sampler_runner_phase(run, SAMPLER_WINDOW_START, t0 + MS), 0);
    for (int k = 0; k < 500; k++) {     /* the thread has taken both boundaries */
        pthread_mutex_lock(&rb.mu);
        int n = rb.n;
        pthread_mutex_unlock(&rb.mu);
        if (n >= 3)
            break;
        sleep_ms(2);
    }
    sampler_runner_hurry(run);
    cr_assert_eq(sampler_runner_phase(run, SAMPLER_WINDOW_END, t0 + 2 * MS), 0);
    cr_assert_eq(sampler_runner_stop(run, t0 + 3 * MS, 5000 * MS), 0);
    const struct recorder *rs[] = {&rb, &ri};
    for (int k = 0; k < 2; k++) {
        int samples = 0;
        for (int c = 0; c < rs[k]->n; c++) {
            const struct call *call = &rs[k]->calls[c];
            if (call->hook != H_SAMPLE)
                continue;
            samples++;
            bool after = call->t.phase == SAMPLER_WINDOW_END || call->t.phase == SAMPLER_AFTER_LAST;
            cr_assert_eq(call->t.hurry, after, "%s: %s tick hurry %d", k ? "inline" : "blocking",
                         sampler_phase_name(call->t.phase), call->t.hurry);
        }
        cr_assert_eq(samples, SAMPLER_N_BOUNDARIES);
    }
    sampler_runner_free(run);
    event_base_free(base);
}
