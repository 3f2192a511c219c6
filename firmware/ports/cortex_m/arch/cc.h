/* lwIP compiler/platform glue for the Cortex-M3 ports (arm-none-eabi, newlib-nano). */
#ifndef LITEDAV_ARCH_CC_H
#define LITEDAV_ARCH_CC_H

#include <stdlib.h>

#define LWIP_NO_CTYPE_H 0
#define LWIP_RAND() litedav_rand()
unsigned int litedav_rand(void);

void cortex_m_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define LWIP_PLATFORM_DIAG(x) do { cortex_m_printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) do { \
        cortex_m_printf("lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        litedav_halt(); \
    } while (0)
void litedav_halt(void) __attribute__((noreturn));

#endif
