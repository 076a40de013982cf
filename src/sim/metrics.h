/* metrics.h — the simulator's counters and their Prometheus text form,
 * named as vLLM names them so clients scrape anvil-sim like a vLLM server. */
#ifndef ANVIL_SIM_METRICS_H
#define ANVIL_SIM_METRICS_H

#include <stdint.h>

#include "core/buf.h"

/* The true current state. Gauges are requests; counters are tokens or
 * requests since start. */
struct sim_metrics {
    int64_t running;              /* generation requests accepted, not yet finished */
    int64_t waiting;              /* always 0: fixed-latency mode has no queue */
    uint64_t prompt_tokens;       /* prompt tokens of accepted generation requests */
    uint64_t generation_tokens;   /* output tokens handed to clients (EOS included) */
    uint64_t success_stop;        /* finished with finish_reason "stop" */
    uint64_t success_length;      /* finished with finish_reason "length" */
    uint64_t success_abort;       /* ended early: client closed or server shut down */
    uint64_t client_closed;       /* subset of success_abort: the client went away */
    uint64_t rejected;            /* generation requests answered 4xx */
};

/* Counts a generation request accepted with prompt_tokens tokens: running + 1. */
void sim_metrics_on_start(struct sim_metrics *m, int64_t prompt_tokens);

/* Counts tokens output tokens sent to a client. */
void sim_metrics_on_tokens(struct sim_metrics *m, int64_t tokens);

/* Counts the end of an accepted request: running - 1 and one success
 * counter: finish "stop"/"length", or NULL for an abort (client_closed says
 * whether the client caused it). */
void sim_metrics_on_end(struct sim_metrics *m, const char *finish, int client_closed);

/* Appends the Prometheus text exposition (format 0.0.4) of m to out, each
 * series labelled model_name="<model>" (escaped). Values print as floats
 * ("12.0") like prometheus_client. Returns 0, or -1 when out is full. */
int sim_metrics_render(const struct sim_metrics *m, const char *model, struct buf *out);

#endif
