/* Reading a memory-mapped flash window (the sim flash, LiteSPI's SPI flash):
 * both are uncached word loads, so whole aligned words go straight into an
 * aligned buffer (one load each) and ragged ends are picked out of words. */
#ifndef LITEDAV_FLASH_WINDOW_H
#define LITEDAV_FLASH_WINDOW_H

#include <stdint.h>

static inline void flash_window_copy(const volatile uint32_t *window, uint32_t addr, uint8_t *out,
                                     uint32_t len)
{
    if (((addr | (uintptr_t)out) & 3) == 0) {
        for (; len >= 4; addr += 4, out += 4, len -= 4)
            *(uint32_t *)out = window[addr / 4];
    }
    while (len) {
        uint32_t word = window[addr / 4], skip = addr & 3, n = 4 - skip, i;
        if (n > len)
            n = len;
        for (i = 0; i < n; i++)
            out[i] = (uint8_t)(word >> (8 * (skip + i)));
        addr += n;
        out += n;
        len -= n;
    }
}

#endif
