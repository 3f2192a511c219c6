/* lwIP compiler/platform glue for the LiteX SoC (VexRiscv, picolibc). */
#ifndef LITEDAV_ARCH_CC_H
#define LITEDAV_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define LWIP_NO_CTYPE_H 0
#define LWIP_RAND() litedav_rand()
unsigned int litedav_rand(void);

/* Byte swaps inline: lwIP's own are function calls on every header field. */
#define lwip_htons(x) ((u16_t)__builtin_bswap16((u16_t)(x)))
#define lwip_htonl(x) ((u32_t)__builtin_bswap32((u32_t)(x)))

#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) do { \
        printf("lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        litedav_halt(); \
    } while (0)
void litedav_halt(void) __attribute__((noreturn));

#endif
