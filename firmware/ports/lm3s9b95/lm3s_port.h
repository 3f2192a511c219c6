/* LM3S9B95 port internals shared by its files (the app sees only port.h). */
#ifndef LITEDAV_LM3S_PORT_H
#define LITEDAV_LM3S_PORT_H

#include <stdint.h>

/* Core clock the port sets up. On the LM3S9B95: 16 MHz crystal, PLL (400 MHz
 * with DIV400) / 5 = 80 MHz. QEMU's lm3s6965evb derives 200 MHz / (SYSDIV2+1)
 * and ignores DIV400, so the QEMU build asks for SYSDIV2 = 3: 50 MHz there. */
#ifdef LM3S_QEMU
#define LM3S_CORE_HZ 50000000u
#else
#define LM3S_CORE_HZ 80000000u
#endif

/* Clock, SysTick (1 ms) and UART0 (115200 8N1); call first thing in main(). */
void lm3s_board_init(void);
/* Milliseconds since lm3s_board_init(). */
uint32_t lm3s_millis(void);
/* Console output on UART0 (\n becomes \r\n); at most 255 characters per call. */
void lm3s_console_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void lm3s_console_write(const char *s, unsigned len);
/* Sleep until an interrupt (SysTick or Ethernet RX) unless `work_pending`
 * says otherwise, checked with interrupts masked so no wake-up is lost. */
void lm3s_idle(int (*work_pending)(void));
/* Print why and stop (the watchdog is not used: a halted board stays visible). */
void lm3s_fatal(const char *why) __attribute__((noreturn));

#endif
