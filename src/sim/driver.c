/* driver.c — the engine's step timer (see driver.h).
 *
 * The timer has two meanings: while a step is in flight it fires at the
 * step's end (sim_engine_complete, then the next plan); otherwise it is a
 * kick to plan as soon as the loop has read what else arrived, or a wake-up
 * for a paused sequence. A step starts when its timer callback runs, so
 * loop lateness shows up in the trace as longer steps, as a busy GPU host
 * would show it. */
#include "sim/driver.h"

#include <event2/event.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/clock.h"

struct sim_driver {
    struct event *timer;
    struct sim_engine *eng;
    struct sim_engine_hooks hooks;
    bool in_step;   /* the timer marks the end of a planned step */
    int64_t frontend_ns;       /* per-request frontend time */
    int64_t frontend_free_ns;  /* when the frontend is next free */
};

/* Arms the timer delay_ns from now, rounded up to whole µs so that a step
 * never ends early. */
static void arm_in(struct sim_driver *d, int64_t delay_ns)
{
    if (delay_ns < 0)
        delay_ns = 0;
    int64_t us = delay_ns / 1000 + (delay_ns % 1000 != 0);
    struct timeval tv = {.tv_sec = (time_t)(us / 1000000), .tv_usec = (suseconds_t)(us % 1000000)};
    evtimer_add(d->timer, &tv);
}

/* Zero-length steps (all costs zero) happen at the same instant: run up to
 * this many back to back before yielding to the loop, so a stream's tokens
 * leave in one write() (hooks.flush) instead of one TCP segment each (as
 * fixed-latency mode batches SIM_EVENTS_PER_WAKEUP). */
#define SIM_INSTANT_STEPS 64

static void plan_next(struct sim_driver *d, int64_t now)
{
    int64_t wake;
    int64_t dur = sim_engine_plan(d->eng, now, &wake);
    for (int i = 1; dur == 0 && i < SIM_INSTANT_STEPS; i++) {
        sim_engine_complete(d->eng, now);
        dur = sim_engine_plan(d->eng, now, &wake);
    }
    if (dur >= 0) {
        d->in_step = true;
        arm_in(d, dur);
    } else if (wake > 0) {
        arm_in(d, wake - now);
    }
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct sim_driver *d = arg;
    if (d->in_step) {
        d->in_step = false;
        sim_engine_complete(d->eng, clock_now_ns());
    }
    plan_next(d, clock_now_ns());
    if (d->hooks.flush)
        d->hooks.flush(d->hooks.ctx);
}

struct sim_driver *sim_driver_new(struct event_base *base, const struct sim_engine_params *p,
                                  const struct sim_engine_hooks *hooks)
{
    struct sim_driver *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->hooks = *hooks;
    d->eng = sim_engine_new(p, hooks);
    d->frontend_ns = llround(p->frontend_ms * 1e6);
    d->timer = evtimer_new(base, on_timer, d);
    if (!d->eng || !d->timer) {
        sim_driver_free(d);
        return NULL;
    }
    return d;
}

void sim_driver_free(struct sim_driver *d)
{
    if (!d)
        return;
    if (d->timer)
        event_free(d->timer);
    sim_engine_free(d->eng);
    free(d);
}

void sim_driver_submit(struct sim_driver *d, struct sim_seq *s)
{
    sim_engine_submit(d->eng, s);
    if (!d->in_step)
        arm_in(d, 0);   /* idle, or only waiting for a paused sequence: plan now */
}

int64_t sim_driver_frontend_slot(struct sim_driver *d, int64_t now_ns)
{
    if (d->frontend_ns <= 0)
        return now_ns;
    int64_t start = now_ns > d->frontend_free_ns ? now_ns : d->frontend_free_ns;
    d->frontend_free_ns = start + d->frontend_ns;
    return d->frontend_free_ns;
}

void sim_driver_abort(struct sim_driver *d, struct sim_seq *s)
{
    sim_engine_abort(d->eng, s);
}

int64_t sim_driver_reset_prefix_cache(struct sim_driver *d)
{
    return sim_engine_reset_prefix_cache(d->eng);
}

const struct sim_engine *sim_driver_engine(const struct sim_driver *d)
{
    return d->eng;
}
