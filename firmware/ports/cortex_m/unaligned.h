/* Word loads and stores at any byte address. The Cortex-M3 allows unaligned
 * LDR/STR to normal memory (SRAM and flash) with CCR.UNALIGN_TRP clear, its
 * reset value, and gcc compiles these 4-byte memcpy calls to one of each. */
#ifndef LITEDAV_CORTEX_M_UNALIGNED_H
#define LITEDAV_CORTEX_M_UNALIGNED_H

#include <stdint.h>
#include <string.h>

static inline uint32_t unaligned_load32(const void *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

static inline void unaligned_store32(void *p, uint32_t w)
{
    memcpy(p, &w, 4);
}

#endif
