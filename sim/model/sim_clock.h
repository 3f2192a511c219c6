/* A clock pad of the sim loop (sim_main.c): 1 for the first half of each period after the phase
 * shift, as LiteX's clocker module drives it, pad = ((t - shift) mod period) < period / 2 at the
 * step's time t in ps, with period = 10^12 / freq_hz and shift = period * phase_deg / 360 in
 * integer ps. The clocker divides twice per step; clock_step carries the phase from the last
 * step instead, and falls back to the division whenever that would not give the same value.
 * tests/test_sim_clock.py checks the two against each other. */
#ifndef LITEDAV_SIM_CLOCK_H
#define LITEDAV_SIM_CLOCK_H

#include <stdint.h>

struct clock {
    char *pad;
    uint64_t period_ps, half_ps, shift_ps;
    uint64_t phase_ps;  /* (last_ps - shift_ps) mod period_ps */
    uint64_t last_ps;
    int started;
};

static inline void clock_init(struct clock *c, uint64_t freq_hz, uint64_t phase_deg)
{
    c->period_ps = 1000000000000ull / freq_hz;
    c->half_ps = c->period_ps / 2;
    c->shift_ps = c->period_ps * phase_deg / 360;
    c->started = 0;
}

static inline void clock_step(struct clock *c, uint64_t t)
{
    /* From the last phase while that is the modulo's value: both times at or past the shift
     * (no unsigned wrap), time moving forward by less than a period (one subtraction). */
    if (c->started && c->last_ps >= c->shift_ps && t >= c->last_ps && t - c->last_ps < c->period_ps) {
        c->phase_ps += t - c->last_ps;
        if (c->phase_ps >= c->period_ps)
            c->phase_ps -= c->period_ps;
    } else {
        c->phase_ps = (t - c->shift_ps) % c->period_ps;
        c->started = 1;
    }
    c->last_ps = t;
    *c->pad = c->phase_ps < c->half_ps;
}

#endif
