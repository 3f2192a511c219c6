/*
 * PC-sampling profiler (firmware built with PROFILE=1, see bench/README.md).
 *
 * timer0 interrupts every PROFILE_PERIOD cycles (a prime, so sampling does not
 * lock onto a loop's period); the handler counts the interrupted PC in a
 * histogram of 16-byte code buckets, which GET /profile returns (addr2line
 * maps them to functions: bench/README.md). Sampling costs one interrupt
 * (about a hundred cycles) per period, under 1 %.
 */
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <irq.h>
#include <system.h>

#include "platform/profile.h"

#define PROFILE_PERIOD 10007u
#define BUCKET_SHIFT 4
#define BUCKETS (512u * 1024u >> BUCKET_SHIFT) /* the first 512 KiB of main RAM: the code */

static uint32_t histogram[BUCKETS];
static uint32_t outside; /* samples beyond the histogram's range */
/* Set while GET /profile formats the histogram, so the profile it returns
 * does not count its own formatting (snprintf's divisions were ~12 %). */
static volatile uint8_t paused;

__attribute__((interrupt("machine"))) static void profile_trap(void)
{
    uintptr_t pc;
    __asm__ volatile("csrr %0, mepc" : "=r"(pc));
    uintptr_t bucket = (pc - (uintptr_t)MAIN_RAM_BASE) >> BUCKET_SHIFT;
    if (!paused) {
        if (bucket < BUCKETS)
            histogram[bucket]++;
        else
            outside++;
    }
    timer0_ev_pending_write(1);
}

void profile_start(void)
{
    __asm__ volatile("csrw mtvec, %0" ::"r"(profile_trap));
    timer0_en_write(0);
    timer0_reload_write(PROFILE_PERIOD);
    timer0_load_write(PROFILE_PERIOD);
    timer0_ev_pending_write(1);
    timer0_ev_enable_write(1);
    timer0_en_write(1);
    irq_setmask(irq_getmask() | (1u << TIMER0_INTERRUPT));
    __asm__ volatile("csrs mie, %0" ::"r"(1u << 11)); /* machine external interrupts */
    irq_setie(1);
}

int profile_sample(unsigned index, uint32_t *pc, uint32_t *count)
{
    for (; index < BUCKETS; index++) {
        if (histogram[index]) {
            *pc = (uint32_t)(uintptr_t)MAIN_RAM_BASE + (index << BUCKET_SHIFT);
            *count = histogram[index];
            return (int)index;
        }
    }
    if (index == BUCKETS && outside) {
        *pc = 0;
        *count = outside;
        return (int)index;
    }
    return -1;
}

void profile_pause(void) { paused = 1; }

void profile_reset(void)
{
    for (unsigned i = 0; i < BUCKETS; i++)
        histogram[i] = 0;
    outside = 0;
    paused = 0;
}
