/* metrics.c — per-request metric definitions. */
#include "stats/metrics.h"

#include <math.h>

#include "core/clock.h"

static double since_start_ms(const struct req_record *r, int64_t t)
{
    return t ? ns_to_ms(t - r->t_start) : NAN;
}

void metrics_derive(const struct req_record *r, struct req_metrics *m)
{
    m->ttft_ms = since_start_ms(r, r->t_first_content);
    m->time_to_first_output_ms = since_start_ms(r, r->t_first_output);
    m->e2e_ms = since_start_ms(r, r->t_end);
    m->headers_ms = since_start_ms(r, r->t_headers);
    m->first_byte_ms = since_start_ms(r, r->t_first_byte);
    m->first_event_ms = since_start_ms(r, r->t_first_event);
    double late = r->t_scheduled ? ns_to_ms(r->t_start - r->t_scheduled) : 0;
    m->send_lateness_ms = late;
    m->scheduled_ttft_ms = m->ttft_ms + late;
    m->scheduled_e2e_ms = m->e2e_ms + late;
    m->generation_ms = m->e2e_ms - m->time_to_first_output_ms;
    m->visible_generation_ms = m->e2e_ms - m->ttft_ms;
    m->time_to_second_output_ms =
        r->n_chunks >= 2 ? ns_to_ms(r->chunks[1].t_ns - r->chunks[0].t_ns) : NAN;

    m->output_tokens = tokens_of(r, &m->output_token_source);
    double n = (double)m->output_tokens;
    double gen_s = m->generation_ms / 1000.0;
    m->tpot_ms = n > 1 ? m->generation_ms / (n - 1) : NAN;
    m->decode_tok_s = n > 1 && gen_s > 0 ? (n - 1) / gen_s : NAN;
    m->generation_tps_per_user = gen_s > 0 ? n / gen_s : NAN;
    m->e2e_output_tps_per_user = m->e2e_ms > 0 ? n / (m->e2e_ms / 1000.0) : NAN;
    m->effective_prefill_tok_s = r->prompt_tokens >= 0 && m->time_to_first_output_ms > 0
        ? (double)r->prompt_tokens / (m->time_to_first_output_ms / 1000.0) : NAN;
}

double metrics_itl_per_token_ms(const struct req_record *r, size_t i, long output_tokens)
{
    double gap = ns_to_ms(r->chunks[i].t_ns - r->chunks[i - 1].t_ns);
    double tokens = r->chunks[i].tokens;
    if (tokens < 1)     /* unknown (or 0): spread the later tokens over the later chunks */
        tokens = r->n_chunks > 1 ? (double)(output_tokens - 1) / (double)(r->n_chunks - 1) : 1;
    return tokens > 0 ? gap / tokens : NAN;
}
