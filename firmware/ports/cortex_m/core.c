/* The Cortex-M3 ports' shared run time: SysTick time base and cycle count,
 * console formatting, idle, halt, lwIP's clock and random number, and the
 * newlib-nano system call that must not hand out a heap. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "lwip/arch.h"

#include "cortex_m.h"
#include "platform/port.h"

struct port_stats port_stats;
static volatile uint32_t millis;
static uint32_t core_hz, systick_reload;

void SysTick_Handler(void)
{
    millis++;
}

void cortex_m_systick_init(uint32_t hz)
{
    core_hz = hz;
    systick_reload = hz / 1000u - 1u;
    SYST_RVR = systick_reload;
    SYST_CVR = 0;
    /* CLKSOURCE = core clock: QEMU does not count the other source */
    SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
}

uint32_t cortex_m_millis(void) { return millis; }

void cortex_m_console_write(const char *s, unsigned len)
{
    while (len--) {
        if (*s == '\n')
            cortex_m_console_putc('\r');
        cortex_m_console_putc(*s++);
    }
}

void cortex_m_printf(const char *fmt, ...)
{
    char line[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    cortex_m_console_write(line, (unsigned)n < sizeof(line) ? (unsigned)n : sizeof(line) - 1);
}

void cortex_m_idle(int (*work_pending)(void))
{
    __asm__ volatile("cpsid i" ::: "memory");
    if (!work_pending())
        __asm__ volatile("wfi");
    __asm__ volatile("cpsie i" ::: "memory");
}

void cortex_m_fatal(const char *why)
{
    cortex_m_printf("halted: %s\n", why);
    __asm__ volatile("cpsid i" ::: "memory");
    for (;;)
        __asm__ volatile("wfi");
}

void cortex_m_unexpected_irq(void)
{
    cortex_m_fatal("unexpected interrupt");
}

void litedav_halt(void)
{
    cortex_m_fatal("lwIP assertion");
}

/* --- port.h ------------------------------------------------------------- */

/* DWT CYCCNT is not emulated by QEMU, so cycles come from SysTick on every
 * build: whole milliseconds plus the elapsed part of the current one. */
uint64_t port_cycles(void)
{
    uint32_t before, after, current, pending;
    do {
        before = millis;
        current = SYST_CVR;
        pending = SCB_ICSR & SCB_ICSR_PENDSTSET;
        after = millis;
    } while (before != after);
    /* the counter wrapped but its interrupt has not run yet (QEMU takes
     * interrupts only between translated blocks): that millisecond is over */
    if (pending && current > systick_reload / 2u)
        before++;
    return (uint64_t)before * (systick_reload + 1u) + (systick_reload - current);
}

uint32_t port_cycles_hz(void) { return core_hz; }

u32_t sys_now(void) { return millis; }

unsigned int litedav_rand(void)
{
    static uint32_t state;
    if (!state)
        state = (uint32_t)port_cycles() | 1u;
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

/* --- newlib-nano system calls ------------------------------------------------
 * Nothing here allocates: there is no heap (lwIP has its own fixed one), so a
 * library call that wants malloc gets ENOMEM instead of RAM it cannot have. */
void *_sbrk(ptrdiff_t increment);
void *_sbrk(ptrdiff_t increment)
{
    (void)increment;
    errno = ENOMEM;
    return (void *)-1;
}
