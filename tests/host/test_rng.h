/* Seeded pseudo-random numbers for the host tests and fuzz loops: xorshift64*
 * seeded through splitmix64, so a seed names one exact run on every machine.
 * Each test program includes this once (static state). */
#ifndef LITEDAV_TEST_RNG_H
#define LITEDAV_TEST_RNG_H

#include <stddef.h>
#include <stdint.h>

static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    rng_state = (z ^ (z >> 31)) | 1;
}

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* Uniform enough in [0, n) for test purposes; n > 0. */
static inline size_t rnd(size_t n) { return (size_t)((rng_next() >> 11) % n); }
static inline int chance(unsigned percent) { return rnd(100) < percent; }
#define PICK(arr) ((arr)[rnd(sizeof(arr) / sizeof((arr)[0]))])

#endif
