/* Board bring-up for the LM3S9B95 (and QEMU's lm3s6965evb): PLL clock,
 * SysTick time base, UART0 console, and the port.h hooks. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

#include "lwip/arch.h"

#include "lm3s_port.h"
#include "lm3s_regs.h"
#include "port.h"

#define CONSOLE_BAUD 115200u
#define SYSTICK_RELOAD (LM3S_CORE_HZ / 1000u - 1u)   /* 1 ms */
#define PLL_LOCK_SPINS 200000u

struct port_stats port_stats;
static volatile uint32_t millis;

void SysTick_Handler(void)
{
    millis++;
}

uint32_t lm3s_millis(void) { return millis; }

/* 80 MHz from the PLL, the data sheet's sequence: bypass the PLL, pick the
 * crystal and the main oscillator, power the PLL, set the divider, wait for
 * lock, then take the PLL output. */
static void clock_init(void)
{
    uint32_t rcc = SYSCTL_RCC, rcc2 = SYSCTL_RCC2, spins;

    rcc |= SYSCTL_RCC_BYPASS;
    rcc &= ~SYSCTL_RCC_USESYSDIV;
    rcc2 |= SYSCTL_RCC2_USERCC2 | SYSCTL_RCC2_BYPASS2;
    SYSCTL_RCC = rcc;
    SYSCTL_RCC2 = rcc2;

    rcc &= ~(SYSCTL_RCC_XTAL_M | SYSCTL_RCC_OSCSRC_M | SYSCTL_RCC_MOSCDIS | SYSCTL_RCC_PWRDN);
    rcc |= SYSCTL_RCC_XTAL_16MHZ;                      /* OSCSRC 0: main oscillator */
    rcc2 &= ~(SYSCTL_RCC2_OSCSRC2_M | SYSCTL_RCC2_PWRDN2);
    SYSCTL_RCC = rcc;
    SYSCTL_RCC2 = rcc2;

    rcc2 &= ~(SYSCTL_RCC2_SYSDIV2_M | SYSCTL_RCC2_SYSDIV2LSB);
#ifdef LM3S_QEMU
    rcc2 |= 3u << SYSCTL_RCC2_SYSDIV2_SHIFT;           /* QEMU: 200 MHz / 4 */
#else
    /* DIV400: 400 MHz / ({SYSDIV2, SYSDIV2LSB} + 1) = 400 / 5 */
    rcc2 |= SYSCTL_RCC2_DIV400 | (2u << SYSCTL_RCC2_SYSDIV2_SHIFT);
#endif
    rcc |= SYSCTL_RCC_USESYSDIV;
    SYSCTL_RCC = rcc;
    SYSCTL_RCC2 = rcc2;

    for (spins = 0; spins < PLL_LOCK_SPINS && !(SYSCTL_RIS & SYSCTL_RIS_PLLLRIS); spins++)
        ;
    SYSCTL_RCC2 = rcc2 & ~SYSCTL_RCC2_BYPASS2;
}

static void systick_init(void)
{
    SYST_RVR = SYSTICK_RELOAD;
    SYST_CVR = 0;
    /* CLKSOURCE = core clock: QEMU does not count the other source */
    SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
}

static void uart_init(void)
{
    /* baud divisor in 1/64ths: clock / (16 * baud), rounded */
    uint32_t div64 = (LM3S_CORE_HZ * 4u + CONSOLE_BAUD / 2u) / CONSOLE_BAUD;
    volatile uint32_t settle;

    SYSCTL_RCGC1 |= SYSCTL_RCGC1_UART0;
    SYSCTL_RCGC2 |= SYSCTL_RCGC2_GPIOA;
    for (settle = 0; settle < 8; settle++)   /* a few clocks before the blocks answer */
        ;
    GPIO_AFSEL(GPIOA_BASE) |= 0x3u;          /* PA0 U0RX, PA1 U0TX */
    GPIO_PCTL(GPIOA_BASE) = (GPIO_PCTL(GPIOA_BASE) & ~0xFFu) | 0x11u;
    GPIO_DEN(GPIOA_BASE) |= 0x3u;

    UART0_CTL = 0;
    UART0_IBRD = div64 >> 6;
    UART0_FBRD = div64 & 63u;
    UART0_LCRH = UART_LCRH_WLEN8 | UART_LCRH_FEN;
    UART0_CTL = UART_CTL_UARTEN | UART_CTL_TXE | UART_CTL_RXE;
}

void lm3s_board_init(void)
{
    clock_init();
    systick_init();
    uart_init();
}

static void console_putc(char c)
{
    while (UART0_FR & UART_FR_TXFF)
        ;
    UART0_DR = (uint8_t)c;
}

void lm3s_console_write(const char *s, unsigned len)
{
    while (len--) {
        if (*s == '\n')
            console_putc('\r');
        console_putc(*s++);
    }
}

void lm3s_console_printf(const char *fmt, ...)
{
    char line[256];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    lm3s_console_write(line, (unsigned)n < sizeof(line) ? (unsigned)n : sizeof(line) - 1);
}

void lm3s_idle(int (*work_pending)(void))
{
    __asm__ volatile("cpsid i" ::: "memory");
    if (!work_pending())
        __asm__ volatile("wfi");
    __asm__ volatile("cpsie i" ::: "memory");
}

void lm3s_fatal(const char *why)
{
    lm3s_console_printf("halted: %s\n", why);
    __asm__ volatile("cpsid i" ::: "memory");
    for (;;)
        __asm__ volatile("wfi");
}

void litedav_halt(void)
{
    lm3s_fatal("lwIP assertion");
}

/* --- port.h ------------------------------------------------------------- */

/* DWT CYCCNT is not emulated by QEMU, so cycles come from SysTick on both
 * builds: whole milliseconds plus the elapsed part of the current one. */
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
    if (pending && current > SYSTICK_RELOAD / 2u)
        before++;
    return (uint64_t)before * (SYSTICK_RELOAD + 1u) + (SYSTICK_RELOAD - current);
}

uint32_t port_cycles_hz(void) { return LM3S_CORE_HZ; }

#ifdef LM3S_QEMU
const char *port_name(void) { return "lm3s6965evb-qemu"; }
#else
const char *port_name(void) { return "lm3s9b95"; }
#endif

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
