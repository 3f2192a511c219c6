/* Board bring-up for the LM3S9B95 (and QEMU's lm3s6965evb): PLL clock,
 * UART0 console, the interrupt vectors; the Cortex-M3 run time (SysTick
 * time base, cycles, idle, console formatting) is ../cortex_m/core.c. */
#include "cortex_m.h"
#include "lm3s_port.h"
#include "lm3s_regs.h"
#include "platform/port.h"

#define CONSOLE_BAUD 115200u
#define PLL_LOCK_SPINS 200000u

#define IRQ_COUNT 54   /* LM3S9B95 peripheral interrupts */
#define IRQ_ETHERNET 42
void Ethernet_Handler(void);   /* stellaris_eth.c */

/* After the core's vectors (startup.c): every interrupt is unexpected but
 * the Ethernet MAC's. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
__attribute__((section(".isr_vector_irq"), used)) const cortex_m_vector lm3s_irq_vectors[IRQ_COUNT] = {
    [0 ... IRQ_COUNT - 1] = cortex_m_unexpected_irq,
    [IRQ_ETHERNET] = Ethernet_Handler,
};
#pragma GCC diagnostic pop

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
    cortex_m_systick_init(LM3S_CORE_HZ);
    uart_init();
}

void cortex_m_console_putc(char c)
{
    while (UART0_FR & UART_FR_TXFF)
        ;
    UART0_DR = (uint8_t)c;
}

/* --- port.h ------------------------------------------------------------- */

#ifdef LM3S_QEMU
const char *port_name(void) { return "lm3s6965evb-qemu"; }
#else
const char *port_name(void) { return "lm3s9b95"; }
#endif
