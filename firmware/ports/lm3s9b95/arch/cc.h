/* lwIP compiler/platform glue for the LM3S9B95 port (arm-none-eabi, newlib-nano). */
#ifndef LITEDAV_ARCH_CC_H
#define LITEDAV_ARCH_CC_H

#include <stdlib.h>

#define LWIP_NO_CTYPE_H 0
#define LWIP_RAND() litedav_rand()
unsigned int litedav_rand(void);

void lm3s_console_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define LWIP_PLATFORM_DIAG(x) do { lm3s_console_printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) do { \
        lm3s_console_printf("lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        litedav_halt(); \
    } while (0)
void litedav_halt(void) __attribute__((noreturn));

#endif
