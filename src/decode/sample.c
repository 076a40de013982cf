/* sample.c — per-request figures and the window's tokens of a decode cell. */
#include "decode/sample.h"

#include <math.h>
#include <stdlib.h>

#include "stats/dist.h"
#include "stats/tokens.h"

static double s_between(int64_t a, int64_t b)
{
    return a && b ? (double)(b - a) / 1e9 : NAN;
}

double decode_output_tps_per_user(long n, double first_s, double last_s)
{
    double span = last_s - first_s;
    return n >= 2 && span > 0 ? (double)(n - 1) / span : NAN;
}

double decode_inter_token_latency(long n, double first_s, double last_s)
{
    double span = last_s - first_s;
    return n >= 2 && span > 0 ? span / (double)(n - 1) : NAN;
}

void decode_sample_of(const struct req_record *r, struct decode_request_sample *out)
{
    bool done = r->fail == FAIL_NONE && !r->cut && r->t_end;
    long n = tokens_of(r, NULL);
    double ttft = s_between(r->t_start, r->t_first_content);
    double last = NAN;
    if (done)
        last = s_between(r->t_start, r->t_end);
    else if (r->n_chunks)
        last = s_between(r->t_start, r->chunks[r->n_chunks - 1].t_ns);
    double first = r->n_chunks ? s_between(r->t_start, r->chunks[0].t_ns) : NAN;
    /* decode runs from the first output token, as n counts reasoning tokens
     * too; without reasoning that is the first content token, where the seed
     * measures from */
    double from = isfinite(first) ? first : ttft;
    *out = (struct decode_request_sample){
        .ttft = ttft,
        .time_to_second_token = r->n_chunks >= 2 ? s_between(r->chunks[0].t_ns, r->chunks[1].t_ns) : NAN,
        .latency = done ? last : 0,
        .inter_token_latency_avg = decode_inter_token_latency(n, from, last),
        .chunk_inter_token_latency_avg = r->n_chunks >= 2
            ? s_between(r->chunks[0].t_ns, r->chunks[r->n_chunks - 1].t_ns) / (double)(r->n_chunks - 1) : NAN,
        .input_tokens = r->prompt_tokens >= 0 ? r->prompt_tokens : r->planned_prompt_tokens,
        .output_tokens = n,
        .output_tps_per_user = decode_output_tps_per_user(n, from, last),
        .e2e_output_tps_per_user = done && last > 0 ? (double)n / last : 0,
        .completed = done,
    };
}

bool decode_in_window(const struct req_record *r, int64_t ws, int64_t we)
{
    return r->t_start && r->t_start < we && (!r->t_end || r->t_end > ws);
}

void decode_window_count(const struct req_record *recs, int n, int64_t ws, int64_t we,
                         struct decode_window *out)
{
    *out = (struct decode_window){0};
    for (int i = 0; i < n; i++) {
        const struct req_record *r = &recs[i];
        if (!decode_in_window(r, ws, we))
            continue;
        out->requests++;
        bool done = r->fail == FAIL_NONE && !r->cut && r->t_end;
        out->completed += done;
        out->completed_inside += done && r->t_end <= we;
        out->errors += r->fail != FAIL_NONE && r->fail != FAIL_CANCELLED && !r->cut;
    }
    tokens_in_window(recs, n, ws, we, &out->tokens);
}

void decode_stat4_of(double *v, size_t n, struct decode_stat4 *out)
{
    struct dist d;
    dist_compute(v, n, PCT_LINEAR, &d);
    *out = (struct decode_stat4){d.mean, d.p50, d.p90, d.p99};
}

/* Sample s's figure k in decode_sample_stats' order (input tokens last);
 * NaN when s does not count for it. */
static double figure(const struct decode_request_sample *s, int k)
{
    switch (k) {
    case 0: return s->ttft;
    case 1: return s->time_to_second_token;
    case 2: return s->completed ? s->latency : NAN;
    case 3: return s->inter_token_latency_avg;
    case 4: return s->output_tps_per_user;
    case 5: return s->completed ? s->e2e_output_tps_per_user : NAN;
    case 6: return s->chunk_inter_token_latency_avg;
    case 7: return s->completed ? (double)s->output_tokens : NAN;
    default: return s->input_tokens >= 0 ? (double)s->input_tokens : NAN;
    }
}

int decode_sample_stats_of(const struct decode_request_sample *s, size_t n, struct decode_sample_stats *out)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    struct decode_stat4 *st[] = {&out->ttft, &out->time_to_second_token, &out->request_latency,
                                 &out->inter_token_latency, &out->output_tps_per_user,
                                 &out->e2e_output_tps_per_user, &out->chunk_inter_token_latency,
                                 &out->output_seq_len};
    struct decode_stat4 input;
    for (int k = 0; k < 9; k++) {
        for (size_t i = 0; i < n; i++)
            v[i] = figure(&s[i], k);
        decode_stat4_of(v, n, k < 8 ? st[k] : &input);    /* NaNs: samples that do not count */
    }
    out->input_seq_len_avg = input.avg;
    free(v);
    return 0;
}

void decode_sample_stats_put(const struct decode_sample_stats *st, struct decode_cell *o)
{
    o->ttft = st->ttft;
    o->time_to_second_token = st->time_to_second_token;
    o->request_latency = st->request_latency;
    o->inter_token_latency = st->inter_token_latency;
    o->output_tps_per_user = st->output_tps_per_user;
    o->e2e_output_tps_per_user = st->e2e_output_tps_per_user;
    o->chunk_inter_token_latency = st->chunk_inter_token_latency;
    o->output_seq_len = st->output_seq_len;
    o->input_seq_len_avg = st->input_seq_len_avg;
}
