/* faults.c — deterministic fault decisions (see faults.h). */
#include "sim/faults.h"

#include <math.h>
#include <string.h>

#include "sim/tokens.h"

static double uniform(uint64_t h)
{
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* An independent draw per fault kind from one request key. */
static uint64_t draw(uint64_t key, enum sim_fault_kind k)
{
    return sim_mix64(key ^ sim_mix64(0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1)));
}

/* Tokens sent before a mid-stream fault: at least one when the reply has
 * two or more, never all of them. */
static int64_t cut_point(uint64_t h, int64_t output_tokens)
{
    return output_tokens < 2 ? 0 : 1 + (int64_t)((h >> 20) % (uint64_t)(output_tokens - 1));
}

uint64_t sim_faults_key(uint64_t seed, const char *request_id, uint64_t arrival_index)
{
    uint64_t id = request_id ? sim_hash_bytes(SIM_HASH_INIT, request_id, strlen(request_id))
                             : sim_mix64(arrival_index + 1);
    return sim_mix64(sim_mix64(seed) ^ id);
}

struct sim_fault_plan sim_faults_plan(const struct sim_faults *f, uint64_t key,
                                      int64_t output_tokens)
{
    struct sim_fault_plan p = {.disconnect_after = -1, .error_after = -1, .stall_after = -1,
                               .slow_headers_ns = f->slow_headers_ns};
    uint64_t h = draw(key, SIM_FAULT_FAIL);
    if (f->fail_rate > 0 && uniform(h) < f->fail_rate) {
        p.fail_status = f->fail_status;
        return p;
    }
    h = draw(key, SIM_FAULT_DISCONNECT);
    if (f->disconnect_rate > 0 && uniform(h) < f->disconnect_rate)
        p.disconnect_after = cut_point(h, output_tokens);
    h = draw(key, SIM_FAULT_STREAM_ERROR);
    if (p.disconnect_after < 0 && f->stream_error_rate > 0 && uniform(h) < f->stream_error_rate)
        p.error_after = cut_point(h, output_tokens);
    if (f->stall_ns > 0 && output_tokens >= 2) {
        p.stall_after = output_tokens / 2;
        p.stall_ns = f->stall_ns;
    }
    return p;
}

const char *sim_fault_name(enum sim_fault_kind k)
{
    static const char *const names[SIM_FAULT_KINDS] = {"fail", "disconnect", "stream_error",
                                                       "stall", "slow_headers"};
    return k < SIM_FAULT_KINDS ? names[k] : "?";
}

bool sim_faults_metrics_fail(double rate, uint64_t n)
{
    return rate > 0 && floor((double)(n + 1) * rate) > floor((double)n * rate);
}
