/* What the Cortex-M3 ports (lm3s9b95, gowin_emcu) share: the core's
 * registers, a 1 ms SysTick time base, the console's formatting, idle and
 * halt. A port provides cortex_m_console_putc() and its chip's set-up, and
 * its interrupt vectors in section .isr_vector_irq (startup.c). */
#ifndef LITEDAV_CORTEX_M_H
#define LITEDAV_CORTEX_M_H

#include <stdint.h>

#define CORTEX_M_REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* ARMv7-M system control space */
#define SYST_CSR          CORTEX_M_REG32(0xE000E010u)
#define SYST_CSR_ENABLE     (1u << 0)
#define SYST_CSR_TICKINT    (1u << 1)
#define SYST_CSR_CLKSOURCE  (1u << 2)                  /* core clock (QEMU counts only this) */
#define SYST_CSR_COUNTFLAG  (1u << 16)
#define SYST_RVR          CORTEX_M_REG32(0xE000E014u)
#define SYST_CVR          CORTEX_M_REG32(0xE000E018u)
#define SCB_ICSR          CORTEX_M_REG32(0xE000ED04u)
#define SCB_ICSR_PENDSTSET  (1u << 26)                 /* SysTick exception pending */
#define SCB_VTOR          CORTEX_M_REG32(0xE000ED08u)
#define SCB_AIRCR         CORTEX_M_REG32(0xE000ED0Cu)
#define SCB_AIRCR_SYSRESETREQ (0x05FA0000u | (1u << 2))
#define NVIC_ISER(n)      CORTEX_M_REG32(0xE000E100u + 4u * (n))

typedef void (*cortex_m_vector)(void);

/* SysTick interrupt every millisecond of a core_hz clock. */
void cortex_m_systick_init(uint32_t core_hz);
/* Milliseconds since cortex_m_systick_init(). */
uint32_t cortex_m_millis(void);
/* Console output (\n becomes \r\n); at most 255 characters per printf. */
void cortex_m_console_write(const char *s, unsigned len);
void cortex_m_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sleep until an interrupt unless `work_pending` says otherwise, checked
 * with interrupts masked so no wake-up is lost. */
void cortex_m_idle(int (*work_pending)(void));
/* Print why and stop (no watchdog: a halted board stays visible). */
void cortex_m_fatal(const char *why) __attribute__((noreturn));
/* Default handler for interrupts a port does not expect. */
void cortex_m_unexpected_irq(void);

/* Provided by the port: one character to the console, blocking. */
void cortex_m_console_putc(char c);

/* The Internet checksum for lwIP's LWIP_CHKSUM (chksum.c). */
uint16_t cortex_m_chksum(const void *data, int len);

#endif
