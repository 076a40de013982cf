/* metrics.c — counters and Prometheus text (see metrics.h). */
#include "sim/metrics.h"

#include <inttypes.h>
#include <string.h>

void sim_metrics_on_start(struct sim_metrics *m, int64_t prompt_tokens)
{
    m->running++;
    m->prompt_tokens += (uint64_t)prompt_tokens;
}

void sim_metrics_on_tokens(struct sim_metrics *m, int64_t tokens)
{
    m->generation_tokens += (uint64_t)tokens;
}

void sim_metrics_on_end(struct sim_metrics *m, const char *finish, int client_closed)
{
    m->running--;
    if (!finish)
        m->success_abort++;
    else if (strcmp(finish, "stop") == 0)
        m->success_stop++;
    else
        m->success_length++;
    if (client_closed)
        m->client_closed++;
}

/* Escapes a label value: backslash, double quote and newline (exposition format). */
static int put_label_value(struct buf *out, const char *v)
{
    int rc = 0;
    for (; *v && rc == 0; v++) {
        if (*v == '\\')
            rc = buf_append(out, "\\\\", 2);
        else if (*v == '"')
            rc = buf_append(out, "\\\"", 2);
        else if (*v == '\n')
            rc = buf_append(out, "\\n", 2);
        else
            rc = buf_append(out, v, 1);
    }
    return rc;
}

static int put_family(struct buf *out, const char *name, const char *type, const char *help)
{
    return buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample: name{[extra,]model_name="model"} value. Labels sorted by name,
 * as prometheus_client prints them. */
static int put_sample(struct buf *out, const char *name, const char *extra, const char *model,
                      double value)
{
    int rc = buf_printf(out, "%s{%s%smodel_name=\"", name, extra ? extra : "", extra ? "," : "");
    rc |= put_label_value(out, model);
    rc |= buf_printf(out, "\"} %.1f\n", value);
    return rc;
}

static int put_simple(struct buf *out, const char *name, const char *type, const char *help,
                      const char *model, double value)
{
    return put_family(out, name, type, help) | put_sample(out, name, NULL, model, value);
}

int sim_metrics_render(const struct sim_metrics *m, const char *model, struct buf *out)
{
    int rc = 0;
    rc |= put_simple(out, "vllm:num_requests_running", "gauge",
                     "Number of requests in model execution batches.", model, (double)m->running);
    rc |= put_simple(out, "vllm:num_requests_waiting", "gauge",
                     "Number of requests waiting to be processed.", model, (double)m->waiting);
    rc |= put_simple(out, "vllm:prompt_tokens_total", "counter",
                     "Number of prefill tokens processed.", model, (double)m->prompt_tokens);
    rc |= put_simple(out, "vllm:generation_tokens_total", "counter",
                     "Number of generation tokens processed.", model, (double)m->generation_tokens);
    rc |= put_family(out, "vllm:request_success_total", "counter",
                     "Count of successfully processed requests.");
    rc |= put_sample(out, "vllm:request_success_total", "finished_reason=\"stop\"", model,
                     (double)m->success_stop);
    rc |= put_sample(out, "vllm:request_success_total", "finished_reason=\"length\"", model,
                     (double)m->success_length);
    rc |= put_sample(out, "vllm:request_success_total", "finished_reason=\"abort\"", model,
                     (double)m->success_abort);
    rc |= put_simple(out, "anvil_sim:client_closed_total", "counter",
                     "Requests whose client closed the connection before the reply ended.",
                     model, (double)m->client_closed);
    rc |= put_simple(out, "anvil_sim:requests_rejected_total", "counter",
                     "Generation requests answered with a 4xx error.", model, (double)m->rejected);
    return rc ? -1 : 0;
}
