/* rand.h — splitmix64: a small, well-mixed generator for reproducible
 * choices that need no statistical pedigree (filler words, length draws).
 * Arrival schedules use GSL instead (load/arrivals.h). */
#ifndef ANVIL_CORE_RAND_H
#define ANVIL_CORE_RAND_H

#include <stdint.h>

/* Advances *state and returns the next 64-bit value (Steele, Lea and Flood,
 * "Fast splittable pseudorandom number generators", 2014). */
static inline uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
