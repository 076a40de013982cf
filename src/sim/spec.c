/* spec.c — speculative decoding acceptance draws (see spec.h). */
#include "sim/spec.h"

#include "sim/tokens.h"

/* A uniform double in [0, 1) from the top 53 bits of a hash. */
static double uniform(uint64_t h)
{
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

int sim_spec_accepted(const double accept[SIM_SPEC_MAX], int k, uint64_t key, uint64_t step)
{
    double prev = 1.0;
    uint64_t base = sim_mix64(key ^ sim_mix64(step + 0x5bd1e995u));
    for (int i = 0; i < k && i < SIM_SPEC_MAX; i++) {
        double p = prev > 0 ? accept[i] / prev : 0;
        if (uniform(sim_mix64(base + (uint64_t)i)) >= p)
            return i;
        prev = accept[i];
    }
    return k;
}
