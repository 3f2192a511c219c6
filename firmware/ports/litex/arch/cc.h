/* lwIP compiler/platform glue for the LiteX SoC (VexRiscv, picolibc). */
#ifndef LITEDAV_ARCH_CC_H
#define LITEDAV_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define LWIP_NO_CTYPE_H 0
#define LWIP_RAND() litedav_rand()
unsigned int litedav_rand(void);

/* Byte swaps inline: lwIP's own are function calls on every header field
 * (and rv32im has no byte-swap instruction, so __builtin_bswap32 is a libgcc
 * call too). */
#include <stdint.h>
static inline uint16_t litedav_bswap16(uint16_t x) { return (uint16_t)(x << 8 | x >> 8); }
static inline uint32_t litedav_bswap32(uint32_t x)
{
    return x << 24 | (x & 0xff00u) << 8 | (x >> 8 & 0xff00u) | x >> 24;
}
#define lwip_htons(x) litedav_bswap16((uint16_t)(x))
#define lwip_htonl(x) litedav_bswap32((uint32_t)(x))

#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) do { \
        printf("lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        litedav_halt(); \
    } while (0)
void litedav_halt(void) __attribute__((noreturn));

#endif
