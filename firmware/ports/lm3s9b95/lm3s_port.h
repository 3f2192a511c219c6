/* LM3S9B95 port internals shared by its files (the app sees only port.h). */
#ifndef LITEDAV_LM3S_PORT_H
#define LITEDAV_LM3S_PORT_H

#include <stdint.h>

#include "cortex_m.h"

/* Core clock the port sets up. On the LM3S9B95: 16 MHz crystal, PLL (400 MHz
 * with DIV400) / 5 = 80 MHz. QEMU's lm3s6965evb derives 200 MHz / (SYSDIV2+1)
 * and ignores DIV400, so the QEMU build asks for SYSDIV2 = 3: 50 MHz there. */
#ifdef LM3S_QEMU
#define LM3S_CORE_HZ 50000000u
#else
#define LM3S_CORE_HZ 80000000u
#endif

/* Clock, SysTick (1 ms) and UART0 (115200 8N1); call first thing in main().
 * Console, idle and halt: cortex_m.h. */
void lm3s_board_init(void);

#endif
