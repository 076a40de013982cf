/* driver.h — runs the engine model (engine.h) on the simulator's libevent
 * loop: one timer, armed for the end of the current step (or at once when
 * a request arrives at an idle engine). No thread ever sleeps. */
#ifndef ANVIL_SIM_DRIVER_H
#define ANVIL_SIM_DRIVER_H

#include "sim/engine.h"

struct event_base;
struct sim_driver;

/* Creates a driver and its engine (parameters *p, tokens to *hooks) on
 * base. NULL when out of memory. */
struct sim_driver *sim_driver_new(struct event_base *base, const struct sim_engine_params *p,
                                  const struct sim_engine_hooks *hooks);

/* Stops the timer and frees the engine. Sequences still inside are only
 * forgotten. NULL-safe. */
void sim_driver_free(struct sim_driver *d);

/* Queues s in the engine; an idle engine plans a step on the next loop
 * pass, so requests that arrive in the same pass share it. */
void sim_driver_submit(struct sim_driver *d, struct sim_seq *s);

/* When a request arriving at now_ns reaches the scheduler: the frontend
 * (one API-server process, as SGLang's TokenizerManager and vLLM's API
 * server are) handles requests one after another, frontend_ms each, so a
 * burst of arrivals trickles into the engine. Reserves that slot. Returns
 * now_ns when frontend_ms is 0. */
int64_t sim_driver_frontend_slot(struct sim_driver *d, int64_t now_ns);

/* Takes s out of the engine (client gone, fault, shutdown). */
void sim_driver_abort(struct sim_driver *d, struct sim_seq *s);

/* Empties the engine's prefix cache; returns the blocks it forgot. */
int64_t sim_driver_reset_prefix_cache(struct sim_driver *d);

/* The engine, for gauges and counters. */
const struct sim_engine *sim_driver_engine(const struct sim_driver *d);

#endif
